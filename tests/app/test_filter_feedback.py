"""The filter bar tells a misspelt feature name from an empty result, through the real main window."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.views.filter_bar import EmptyState
from codec.decode.example_proto import Example
from codec.stats.pool import SMALL_INPUT
from codec.storage.writer import write_records
from tests.gui_helpers import open_done

TIMEOUT = 20000


def type_and_run(qtbot, bar, text: str) -> None:
    """Type ``text`` into the filter box as a user would, press Enter, wait for the result."""
    bar.edit.setFocus()
    bar.edit.clear()
    qtbot.keyClicks(bar.edit, text)
    assert bar.text() == text
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)


def test_a_misspelt_key_is_named_with_the_closest_key(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    messages = []
    bar.message.connect(messages.append)
    type_and_run(qtbot, bar, "image/object/clas/label == 3")
    assert bar.count_text() == "0 of 12 records match"
    note = bar.error_text()
    assert "no record has feature 'image/object/clas/label' \N{EM DASH} did you mean " \
           "'image/object/class/label'?" in note
    assert note.splitlines()[0] == "image/object/clas/label == 3"
    assert note.splitlines()[1].startswith("^ no record has")  # the caret under the name, at position 0
    assert messages[-1].startswith("filter: no record has feature 'image/object/clas/label'")
    # fixed and run again: the note goes, the matches come
    type_and_run(qtbot, bar, "image/object/class/label == 1")
    assert bar.error_text() == ""
    shown = tab.table.model().rowCount()
    assert 0 < shown < 12 and bar.count_text() == f"{shown} of 12 records match"


def test_the_caret_points_at_the_unknown_name_not_the_known_one(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    type_and_run(qtbot, bar, "image/width > 0 and xmin < 0.5")
    note = bar.error_text().splitlines()
    assert note[1] == " " * 20 + "^ no record has feature 'xmin' \N{EM DASH} did you mean 'image/object/bbox/xmin'?"
    assert bar.count_text() == "0 of 12 records match"


def test_no_note_for_a_key_only_the_last_record_has(window, qtbot, tmp_path):
    """The note comes from the whole pass, so a rare key past any sample is no misspelling."""
    records = []
    for i in range(1200):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(i % 3)
        if i == 1199:
            ex.features.feature["rare"].int64_list.value.append(7)
        records.append(ex.SerializeToString())
    path = tmp_path / "rare.tfrecord"
    write_records(str(path), records)
    tab = open_done(window, qtbot, str(path))
    bar = tab.qa.filter_bar
    type_and_run(qtbot, bar, "rare == 7")
    assert bar.count_text() == "1 of 1,200 records match" and bar.error_text() == ""
    type_and_run(qtbot, bar, "raer == 7")
    assert "no record has feature 'raer'" in bar.error_text()
    # a missing feature the expression is right to ask about still gets the note, and its matches
    type_and_run(qtbot, bar, "not has(lable) and label == 1")
    assert "no record has feature 'lable' \N{EM DASH} did you mean 'label'?" in bar.error_text()
    assert bar.count_text() == "400 of 1,200 records match"


# -- matches as they come ----------------------------------------------------
N_BIG = 30_000  # filtered in this process, read 1 MB at a time: the first part's matches come first


@pytest.fixture
def first_step_held(monkeypatch):
    """An Event the filter pass waits for after its first step: set it to let the pass go on."""
    import threading

    import codec.query.filter as filter_module

    go_on = threading.Event()
    relay = filter_module.streamed

    def held(steps, matches, stream):
        go_on.used = True  # the pass ran here, where it can be held (not on the pool)
        for n, step in enumerate(relay(steps, matches, stream)):
            yield step
            if n == 0:
                go_on.wait(TIMEOUT / 1000)

    go_on.used = False
    monkeypatch.setattr(filter_module, "streamed", held)
    yield go_on
    assert go_on.used


def test_matches_show_as_they_are_found(window, qtbot, big_file, first_step_held):
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    seen = []  # (rows shown, still running, the bar's text) at each batch
    bar.matches_found.connect(lambda n: seen.append((tab.proxy.matching_count(), bar.is_running(), bar.count_text())))
    bar.matches_found.connect(lambda n: first_step_held.set())  # the first matches are shown: the pass goes on
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("label == 3")
    final = N_BIG // 5
    assert tab.proxy.matching_count() == tab.table.model().rowCount() == final
    during = [s for s in seen if s[1] and s[0] < final]
    assert during, seen  # some matches were shown before the pass ended
    rows, _, text = during[0]
    assert text.startswith(f"{rows:,} matches so far · ") and text.endswith("% scanned")
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)  # rows only ever added
    assert bar.count_text() == f"{final:,} of {N_BIG:,} records match"
    assert [tab.proxy.record_at(r) for r in range(3)] == [3, 8, 13]


def test_no_match_yet_then_an_empty_state_with_a_clear_link(window, qtbot, big_file, first_step_held):
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    texts = []
    bar.runner.progress.connect(lambda _p: texts.append((bar.count_text(), bar.empty_text())))
    bar.runner.progress.connect(lambda _p: first_step_held.set())  # the text during the pass is read: go on
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("label == 7")
    assert any(t.startswith("no matches yet · ") and t.endswith("% scanned") and e.startswith("No matches yet · ")
               for t, e in texts), texts
    assert bar.count_text() == f"0 of {N_BIG:,} records match"
    over_table = tab.table.viewport().findChildren(EmptyState)
    over_gallery = tab.qa.gallery.view.viewport().findChildren(EmptyState)
    assert len(over_table) == len(over_gallery) == 1
    assert over_table[0].isVisible()
    assert bar.empty_text().startswith("No records match label == 7")
    assert "Show all records" in bar.empty_text()
    over_table[0].linkActivated.emit("clear")
    assert not tab.proxy.is_filtered and tab.table.model().rowCount() == N_BIG
    assert not over_table[0].isVisible() and bar.empty_text() == ""


@pytest.fixture
def big_file(tmp_path):
    """A file whose filter pass reads several 1 MB steps (3.7 MiB; labels 0..4, one record in 5 has each),
    under SMALL_INPUT: filtered in this process, where ``first_step_held`` can hold the pass."""
    from tests.builders import example

    proto = [example(label=[k], pad=[b"x" * 80]) for k in range(5)]
    path = tmp_path / "big.tfrecord"
    write_records(str(path), [proto[k % 5] for k in range(N_BIG)])
    assert 3 << 20 < path.stat().st_size < SMALL_INPUT
    return str(path)


def test_cancel_keeps_the_matches_found_so_far(window, qtbot, big_file, first_step_held):
    # however loaded the machine, the first matches are shown and the rest is still to read when Cancel comes
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.matches_found, timeout=TIMEOUT):
        assert bar.run("label == 1")
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        bar.cancel()
        first_step_held.set()
    shown = tab.proxy.matching_count()
    assert 0 < shown < N_BIG // 5 and tab.proxy.is_filtered
    assert bar.count_text().startswith(f"stopped: {shown:,} matches in the first ") and bar.count_text().endswith("%")
    assert bar.history()[0] == "label == 1"  # it ran: stopped after starting


def test_history_keeps_only_expressions_that_ran(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    assert not bar.run("image/object/class/label ==")  # a parse error: never runs
    assert bar.history() == []
    type_and_run(qtbot, bar, "image/object/clas/label == 3")  # ran, but names a key no record has
    assert "no record has feature" in bar.error_text() and bar.history() == []
    type_and_run(qtbot, bar, "image/object/class/label == 1")
    assert bar.history() == ["image/object/class/label == 1"]
    assert not bar.run("label ~ \"(a\"")  # a bad regular expression
    assert bar.history() == ["image/object/class/label == 1"]


def test_go_to_a_filtered_out_record_says_so(window, qtbot):
    tab = open_done(window, qtbot, "structured.tfrecord")
    bar = tab.qa.filter_bar
    type_and_run(qtbot, bar, "int_col >= 50")
    note = window.go_to("10")
    assert note == ("record 10 does not match the filter `int_col >= 50`; showing the nearest match, 50 "
                    "(Show All clears the filter)")
    assert tab.current_record() == 50 and window.statusBar().currentMessage() == note
    assert window.go_to("60") is None and tab.current_record() == 60  # a match: no note
    type_and_run(qtbot, bar, "int_col > 1000")
    assert window.go_to("10").endswith("and no record does yet: Show All clears the filter")


def test_the_help_menu_puts_an_example_in_the_box(window, qtbot):
    from PySide6.QtCore import QUrl

    from app.views.filter_help import all_examples, show_reference
    from codec.query.filter import compile_filter

    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    examples = [a for a in bar.help_menu.actions() if a.data() == "label in [1, 2]"]
    assert len(examples) == 1 and examples[0].text() == "label in [1, 2]\tmembership: label has 1 or 2"
    examples[0].trigger()
    assert bar.text() == "label in [1, 2]"
    sections = [a.text() for a in bar.help_menu.actions() if a.isSeparator() and a.text()]
    assert "Membership: in, not in" in sections and "Regular expression: ~" in sections
    dialog = show_reference(bar, bar.insert_example)
    dialog.browser.anchorClicked.emit(QUrl("example:0"))
    assert bar.text() == all_examples()[0]
    dialog.close()
    for text in all_examples():  # every example is the language as it is
        compile_filter(text)


@pytest.fixture
def structured_rows(qtbot):
    """A FilteredTableModel over structured.tfrecord's table model, without a window."""
    from app.models.filtered_table_model import FilteredTableModel
    from app.models.record_table_model import RecordTableModel
    from app.models.records_owner import HeldRecords
    from codec.sources.tfrecord_file import TFRecordFile
    from tests.builders import FIXTURES

    with TFRecordFile(str(FIXTURES / "structured.tfrecord")) as f:
        f.build_index()
        source = RecordTableModel(HeldRecords(f))
        source.sync()
        yield FilteredTableModel(source)


def test_append_matches_inserts_rows_at_the_end_of_the_window(structured_rows):
    import numpy as np

    rows = structured_rows
    rows.set_window_rows(4)
    rows.set_matches([], "x")
    inserted, resets = [], []
    rows.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    rows.modelReset.connect(lambda: resets.append(1))
    rows.append_matches(np.array([3, 10, 50]))
    rows.append_matches(np.array([10, 60, 70, 200]))  # one already shown, and past the file: dropped
    assert inserted == [(0, 2), (3, 3)] and not resets  # the window (4 rows) is full: 70 only counts
    assert rows.matching_count() == 5 and rows.rowCount() == 4 and rows.is_paged()
    assert rows.matches().tolist() == [3, 10, 50, 60, 70] and rows.expression == "x"
    assert rows.row_for_record(60) == 3 and rows.position_of(70) == 4
    for k in range(80, 100):  # many batches grow one buffer, and keep every match
        rows.append_matches(np.array([k]))
    assert rows.matches().tolist() == [3, 10, 50, 60, 70, *range(80, 100)]
    rows.clear_filter()
    rows.append_matches(np.array([1]))  # unfiltered: nothing to append to
    assert rows.matches() is None


def test_appended_matches_take_their_place_in_a_sort_order_and_the_selection_follows_its_record(structured_rows):
    import numpy as np
    from PySide6.QtCore import QItemSelectionModel

    rows = structured_rows
    n = rows.matching_count()
    rows.set_order(np.arange(n, dtype=np.uint32)[::-1].copy(), column=0, descending=True)  # newest first
    rows.set_matches([], "x")
    rows.append_matches(np.array([3, 10]))
    assert [rows.record_at(r) for r in range(rows.rowCount())] == [10, 3]
    selection = QItemSelectionModel(rows)
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    selection.setCurrentIndex(rows.index(1, 0), flags)  # record 3
    rows.append_matches(np.array([12, 20]))  # both come before record 3 in the order
    assert [rows.record_at(r) for r in range(rows.rowCount())] == [20, 12, 10, 3]
    assert selection.currentIndex().row() == 3 and rows.record_at(selection.currentIndex().row()) == 3
    assert [i.row() for i in selection.selectedRows()] == [3]


def test_the_running_count_takes_a_line_of_its_own_when_the_bar_is_narrow(window, qtbot, big_file, first_step_held):
    from PySide6.QtWidgets import QApplication

    window.resize(1024, 700)
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.runner.progress, timeout=TIMEOUT):
        assert bar.run("label == 1")
    try:
        for width in (420, 1400):  # narrow: under the buttons; wide: beside them
            bar.resize(width, bar.height())
            QApplication.processEvents()
            label = bar.count_label
            assert label.text().endswith("% scanned")
            below = label.geometry().top() >= bar.combo.geometry().bottom()
            assert below == (width == 420)
            assert label.width() >= label.sizeHint().width()  # the whole text, never cut
    finally:
        with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
            first_step_held.set()


def test_under_way_the_detail_leaves_a_record_the_filter_passed_over_for_the_first_match(
        window, qtbot, big_file, first_step_held):
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    tab.select_record(0)  # label 0: not a match of label == 3
    assert tab.qa.detail.current_record() == 0
    with qtbot.waitSignal(bar.matches_found, timeout=TIMEOUT):
        assert bar.run("label == 3")
    try:
        assert bar.is_running()  # still scanning: the first match (record 3) is shown already, not record 0
        assert tab.qa.detail.current_record() == 3
    finally:
        with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
            first_step_held.set()
