"""Files with more rows than a view can lay out (issue 7): the table is a window over the records, paged.

Qt's views keep pixel positions in ints, so the table shows at most
``FilteredTableModel.window_rows`` rows at once. These tests lower that to
1,000 over a 2,500-record file and check, through the real main window, that
every record stays reachable and that counts, filters, selection and export
still mean all the records they meant before.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QPersistentModelIndex, Qt  # noqa: E402
from PySide6.QtGui import QStandardItem, QStandardItemModel  # noqa: E402

from app.models.filtered_table_model import DEFAULT_WINDOW_ROWS, FilteredTableModel, window_rows_for  # noqa: E402
from app.models.record_table_model import RecordTableModel  # noqa: E402
from app.models.records_owner import HeldRecords  # noqa: E402
from app.shell.file_tab import FileTab  # noqa: E402
from app.views.page_bar import PageBar  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import example  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000
WINDOW = 1000
RECORDS = 2500




@pytest.fixture
def small_window(monkeypatch) -> int:
    monkeypatch.setattr(FilteredTableModel, "window_rows", WINDOW)
    return WINDOW


@pytest.fixture
def big_file(tmp_path) -> str:
    path = tmp_path / "big.tfrecord"
    write_records(path, (example(n=i) for i in range(RECORDS)))
    return str(path)


def select(qtbot, tab: FileTab, action) -> int:
    """Run ``action`` (which selects a record) and wait until the detail shows it; return that record."""
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT) as blocker:
        action()
    shown = blocker.args[0]
    assert tab.detail.loaded().info.index == shown == tab.current_record()
    return shown


def n_of(tab: FileTab) -> int:
    """The feature ``n`` of the record the detail shows (the record's own number in these files)."""
    features = tab.detail.loaded().decoded.message.features.feature
    return features["n"].int64_list.value[0]


def key(qtbot, tab: FileTab, k: Qt.Key) -> int:
    return select(qtbot, tab, lambda: qtbot.keyClick(tab.table, k))


def window_of(tab: FileTab) -> tuple[int, int]:
    return tab.proxy.window_start, tab.proxy.rowCount()


# -- through the window ----------------------------------------------------------
def test_the_table_holds_one_window_and_every_record_is_reachable(window, qtbot, small_window, big_file):
    tab = open_done(window, qtbot, big_file)
    bar = tab.page_bar
    assert tab.model.rowCount() == RECORDS and tab.proxy.matching_count() == RECORDS
    assert tab.table.model().rowCount() == WINDOW and window_of(tab) == (0, WINDOW)
    assert bar.isVisible() and bar.text() == "Records 0 – 999 of 2,500"
    assert not bar.previous_button.isEnabled() and bar.next_button.isEnabled()
    assert tab.qa.filter_bar.count_text() == "2,500 records"  # the count is the file's, not the window's
    assert window.records_label.text().startswith("2,500 records")

    # Go to Record reaches the last record: the window moves to its page
    assert select(qtbot, tab, lambda: window.go_to("-1")) == RECORDS - 1
    assert n_of(tab) == RECORDS - 1
    assert window_of(tab) == (2000, 500) and tab.table.currentIndex().row() == 499
    assert bar.text() == "Records 2,000 – 2,499 of 2,500"
    assert bar.previous_button.isEnabled() and not bar.next_button.isEnabled()

    # Previous / Next step a page and select its first record
    assert select(qtbot, tab, bar.previous_button.click) == 1000 and window_of(tab) == (1000, WINDOW)
    assert select(qtbot, tab, bar.previous_button.click) == 0 and window_of(tab) == (0, WINDOW)
    assert select(qtbot, tab, bar.next_button.click) == 1000
    assert select(qtbot, tab, bar.next_button.click) == 2000 and window_of(tab) == (2000, 500)
    assert n_of(tab) == 2000

    # select_record (as the Problems panel and the gallery call it) pages too
    assert select(qtbot, tab, lambda: tab.select_record(1234)) == 1234 and window_of(tab) == (1000, WINDOW)
    assert tab.table.currentIndex().row() == 234 and tab.proxy.record_at(234) == 1234
    assert tab.proxy.row_for_record(2100) == -1  # not in this window...
    assert not tab.proxy.mapFromSource(tab.model.index(2100, 0)).isValid()
    assert tab.proxy.mapToSource(tab.proxy.index(999, 0)).row() == 1999
    assert select(qtbot, tab, window.last_action.trigger) == RECORDS - 1  # ... Last Record (Ctrl+End) is
    assert select(qtbot, tab, window.first_action.trigger) == 0 and window_of(tab) == (0, WINDOW)


def test_keys_cross_page_edges_and_the_bottom_of_a_window_is_safe(window, qtbot, small_window, big_file):
    tab = open_done(window, qtbot, big_file)
    tab.table.setFocus()
    assert select(qtbot, tab, lambda: tab.select_record(998)) == 998
    assert key(qtbot, tab, Qt.Key.Key_Down) == 999 and window_of(tab) == (0, WINDOW)  # within the page
    assert key(qtbot, tab, Qt.Key.Key_Down) == 1000 and window_of(tab) == (1000, WINDOW)  # onto the next
    assert key(qtbot, tab, Qt.Key.Key_Up) == 999 and window_of(tab) == (0, WINDOW)
    assert key(qtbot, tab, Qt.Key.Key_End) == RECORDS - 1 and window_of(tab) == (2000, 500)
    assert key(qtbot, tab, Qt.Key.Key_Home) == 0 and window_of(tab) == (0, WINDOW)

    # the bottom of a full window: scrolled there, the last row is row 999 and nothing else is asked for
    tab.table.scrollToBottom()
    qtbot.waitUntil(lambda: tab.table.rowAt(tab.table.viewport().height() - 2) == WINDOW - 1, timeout=TIMEOUT)
    assert tab.table.verticalScrollBar().value() == tab.table.verticalScrollBar().maximum() > 0
    assert tab.table.model().rowCount() == WINDOW
    # Shift+End extends the selection to the end of the page only (a selection lives in one window)
    qtbot.keyClick(tab.table, Qt.Key.Key_End, Qt.KeyboardModifier.ShiftModifier)
    assert window_of(tab) == (0, WINDOW)
    assert len(tab.table.selectionModel().selectedRows()) == WINDOW


def test_a_filter_with_more_matches_than_the_window_pages_over_the_matches(window, qtbot, small_window, big_file,
                                                                          tmp_path):
    tab = open_done(window, qtbot, big_file)
    bar, page = tab.qa.filter_bar, tab.page_bar
    assert select(qtbot, tab, lambda: tab.select_record(2100)) == 2100 and window_of(tab) == (2000, 500)
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("n >= 300")
    matches = RECORDS - 300
    assert bar.count_text() == "2,200 of 2,500 records match"  # the full count, not the window's
    assert tab.proxy.matching_count() == tab.proxy.shown() == matches and tab.proxy.matches().size == matches
    # the record shown before still matches: the window went to its page (match 1,800 = record 2,100)
    assert tab.current_record() == 2100 and window_of(tab) == (1000, WINDOW)
    assert page.text() == "Matches 1,000 – 1,999 of 2,200 · records 1,300 – 2,299"
    assert select(qtbot, tab, page.previous_button.click) == 300 and window_of(tab) == (0, WINDOW)
    assert [tab.proxy.record_at(r) for r in (0, 999)] == [300, 1299] and tab.proxy.record_at(1000) == -1
    assert select(qtbot, tab, page.next_button.click) == 1300
    assert select(qtbot, tab, page.next_button.click) == 2300 and window_of(tab) == (2000, 200)
    assert not page.next_button.isEnabled()
    assert select(qtbot, tab, lambda: window.go_to("2499")) == 2499 and tab.table.currentIndex().row() == 199
    # a record the filter hides: the nearest match, paged to
    assert select(qtbot, tab, lambda: tab.select_record(10)) == 300 and window_of(tab) == (0, WINDOW)

    # statistics and export of "filtered rows" cover every match, not the window
    scope, words = tab.qa.stats_panel().bar.describe_scope(tab.proxy)
    assert len(scope) == matches and words.startswith("2,200 filtered records")
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.filtered == list(range(300, RECORDS))
    dialog.scope_filtered.setChecked(True)
    out = tmp_path / "filtered.jsonl"
    export(qtbot, dialog, "jsonl", str(out))
    assert [json.loads(line)["index"] for line in out.read_text().splitlines()] == list(range(300, RECORDS))

    # cleared, the record shown stays shown, on its page of all records
    assert select(qtbot, tab, lambda: tab.select_record(1500)) == 1500 and window_of(tab) == (1000, WINDOW)
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        bar.clear()
    assert tab.current_record() == 1500 and window_of(tab) == (1000, WINDOW)
    assert page.text() == "Records 1,000 – 1,999 of 2,500"


def export(qtbot, dialog, fmt: str, out: str) -> None:
    dialog.set_format(fmt)
    dialog.output.setText(out)
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message


def test_select_all_and_export_the_selection(window, qtbot, small_window, big_file, tmp_path):
    tab = open_done(window, qtbot, big_file)
    bar = tab.qa.filter_bar
    # a filter within the window: nothing is paged, select-all selects every match as before
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("n < 600")
    assert not tab.proxy.is_paged() and not tab.page_bar.isVisible()
    tab.table.setFocus()
    qtbot.keyClick(tab.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_selected.isChecked() and dialog.indices() == list(range(600))
    out = tmp_path / "selection.jsonl"
    export(qtbot, dialog, "jsonl", str(out))
    assert [json.loads(line)["index"] for line in out.read_text().splitlines()] == list(range(600))

    # paged: select-all selects the page shown and says so; "All records" still exports every record
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        bar.clear()
    assert tab.page_bar.isVisible()
    select(qtbot, tab, tab.page_bar.next_button.click)
    with qtbot.waitSignal(tab.message, timeout=TIMEOUT) as note:
        qtbot.keyClick(tab.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert "1,000 rows of this page" in note.args[0] and "2,500" in note.args[0]
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_selected.isChecked() and dialog.indices() == list(range(1000, 2000))
    assert tab.editing.selected_records() == list(range(1000, 2000))
    # the column headers keep an empty selection of their own: asking them whether a column is
    # selected would otherwise check every row at each header paint (minutes after Select All on 10M)
    assert not tab.table.horizontalHeader().selectionModel().hasSelection()
    assert tab.table.selectionModel().hasSelection()
    dialog.scope_all.setChecked(True)
    out = tmp_path / "all.jsonl"
    export(qtbot, dialog, "jsonl", str(out))
    assert len(out.read_text().splitlines()) == RECORDS


def test_rows_indexed_past_the_window_only_grow_the_count(window, qtbot, small_window, big_file):
    inserted: list[tuple[int, int]] = []
    sizes: list[int] = []

    def opened(tab) -> None:
        tab.proxy.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
        tab.proxy.counts_changed.connect(lambda: sizes.append(tab.proxy.rowCount()))

    window.tabs.currentChanged.connect(lambda i: opened(window.tabs.widget(i)) if i >= 0 else None)
    tab = open_done(window, qtbot, big_file)
    assert inserted and all(0 <= first <= last < WINDOW for first, last in inserted)
    assert max(sizes) == WINDOW and tab.proxy.rowCount() == WINDOW
    assert tab.page_bar.text() == "Records 0 – 999 of 2,500"


# -- the model on its own ----------------------------------------------------------
def test_indexing_fills_the_window_then_grows_the_count(qtbot, small_window, big_file):
    """The index pass yields after its first batch (1,024 records): rows up to the window, then only the count."""
    f = TFRecordFile(big_file, use_cache=False)
    try:
        source = RecordTableModel(HeldRecords(f))
        rows = FilteredTableModel(source)
        bar = PageBar(rows)
        qtbot.addWidget(bar)
        seen = []
        for _ in f.index_iter():
            source.sync()
            seen.append((source.rowCount(), rows.rowCount(), bar.text()))
        assert seen[0] == (1024, WINDOW, "Records 0 – 999 of 1,024")
        assert seen[-1] == (RECORDS, WINDOW, "Records 0 – 999 of 2,500")
        assert [rows.record_at(r) for r in (0, 999, 1000)] == [0, 999, -1]
    finally:
        f.close()


def numbers(rows: FilteredTableModel) -> list[int]:
    return [int(rows.index(r, 0).data()) for r in range(rows.rowCount())]


def list_model(values) -> QStandardItemModel:
    model = QStandardItemModel(0, 1)
    for v in values:
        model.appendRow(QStandardItem(str(v)))
    return model


def insert(model: QStandardItemModel, at: int, values) -> None:
    for k, v in enumerate(values):
        model.insertRow(at + k, QStandardItem(str(v)))


class QPersistentIndexProbe:
    """Where a view's selection would be: a persistent index on a row, read back after changes."""

    def __init__(self, model, row: int) -> None:
        self.index = QPersistentModelIndex(model.index(row, 0))

    def value(self) -> str:
        return self.index.data()


def test_rows_inserted_before_in_and_after_the_window(qtbot, monkeypatch):
    """A shard indexed before an earlier one inserts records mid-way: the window keeps showing what it showed."""
    monkeypatch.setattr(FilteredTableModel, "window_rows", 4)
    source = list_model(range(10))
    rows = FilteredTableModel(source)
    assert numbers(rows) == [0, 1, 2, 3] and rows.is_paged()
    rows.set_window_start(4)
    assert numbers(rows) == [4, 5, 6, 7]
    current = QPersistentIndexProbe(rows, 1)  # record 5 on screen

    insert(source, 1, [100, 101])  # before the window: it moves along, the same records stay
    assert numbers(rows) == [4, 5, 6, 7] and rows.window_start == 6 and current.value() == "5"
    insert(source, 7, [200])  # inside: pushes record 7 out of the window
    assert numbers(rows) == [4, 200, 5, 6] and current.value() == "5"
    insert(source, 13, [300])  # past the end of a full window: only the count
    assert numbers(rows) == [4, 200, 5, 6] and rows.matching_count() == 14

    source.removeRows(0, 7)  # across the window's start: what is left slides in from after it
    assert rows.window_start == 0 and numbers(rows) == [200, 5, 6, 7] and current.value() == "5"
    source.removeRows(4, 3)  # the rows after the window
    assert rows.matching_count() == 4 and numbers(rows) == [200, 5, 6, 7] and not rows.is_paged()

    rows.set_window_rows(2)  # a smaller window keeps its start
    assert numbers(rows) == [200, 5] and rows.is_paged()
    assert rows.reveal(3) == 1 and rows.window_start == 2 and numbers(rows) == [6, 7]  # source row 3 holds 7
    source.removeRows(2, 2)  # the last page emptied: the one before it is shown
    assert rows.window_start == 0 and numbers(rows) == [200, 5]


def test_filtered_rows_in_a_window_follow_removals(qtbot, monkeypatch):
    monkeypatch.setattr(FilteredTableModel, "window_rows", 3)
    source = list_model(range(20))
    rows = FilteredTableModel(source)
    rows.set_matches([1, 3, 5, 7, 9, 11, 13], "odd")
    assert numbers(rows) == [1, 3, 5] and rows.matching_count() == 7
    assert rows.reveal(9) == 1 and rows.window_start == 3 and numbers(rows) == [7, 9, 11]
    assert rows.row_for_record(9) == 1 and rows.row_for_record(3) == -1 and rows.row_for_record(8) == -1
    assert rows.row_for_record(3, nearest=True) == 0 and rows.position_of(8, nearest=True) == 3

    # (the source's cells hold each record's original number: renumbered records keep their text)
    source.removeRows(2, 2)  # removes record 3 (a match before the window): the window moves back one
    assert rows.window_start == 2 and rows.matching_count() == 6
    assert numbers(rows) == [7, 9, 11] and [rows.record_at(r) for r in range(3)] == [5, 7, 9]
    source.removeRows(5, 1)  # the first row of the window: the next match slides in at the end
    assert numbers(rows) == [9, 11, 13] and rows.matching_count() == 5
    source.removeRows(0, 1)  # no match, before every match: all are renumbered
    assert numbers(rows) == [9, 11, 13] and rows.matches().tolist() == [0, 2, 5, 7, 9]
    assert [rows.record_at(r) for r in range(3)] == [5, 7, 9]


def test_the_default_window_fits_qt_pixel_positions():
    assert window_rows_for(22) == DEFAULT_WINDOW_ROWS
    for height in (22, 40, 100, 1000):
        assert window_rows_for(height) * height < 2**31
    assert window_rows_for(100) == int((2**31 - 1) * 0.9) // 100


def test_the_gallery_pages_sooner_than_the_table(window, qtbot, big_file, monkeypatch):
    # Tiles are taller than rows and a narrow gallery holds one per row: its window is
    # sized for that, and the record shown stays selected when the window changes.
    import app.shell.qa_views as qa_views

    monkeypatch.setattr(qa_views, "window_rows_for", lambda height, cap: 2000 if height < 40 else 700)
    tab = open_done(window, qtbot, big_file)
    assert tab.proxy.rowCount() == RECORDS and not tab.page_bar.isVisible()  # the table holds them all
    assert select(qtbot, tab, lambda: tab.select_record(1500)) == 1500
    tab.qa.show_gallery()
    assert tab.proxy.rowCount() == 700 and tab.page_bar.isVisible()
    assert tab.current_record() == 1500 and tab.proxy.window_start <= 1500 < tab.proxy.window_start + 700
    gallery = tab.qa.gallery
    assert gallery.model.record_at(gallery.view.currentIndex().row()) == 1500  # its tile is the current one
    tab.qa.show_table()  # the table's larger window again, around the same record
    start, rows = window_of(tab)
    assert rows > 700 and start <= 1500 < start + rows and tab.current_record() == 1500
    monkeypatch.setattr(qa_views, "GALLERY_WINDOW_MAX", 600)  # Qt lays out every tile: the gallery holds fewer
    tab.qa.show_gallery()
    assert tab.proxy.rowCount() == 600 and tab.current_record() == 1500


def test_an_edit_selects_its_result_on_another_page(window, qtbot, small_window, big_file):
    tab = window.open_file(big_file)
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    assert select(qtbot, tab, lambda: tab.select_record(WINDOW - 1)) == WINDOW - 1
    assert window_of(tab) == (0, WINDOW)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        window.edit_actions.duplicate_action.trigger()  # the copy lands at 1000: the next page
    assert tab.model.rowCount() == RECORDS + 1
    assert tab.current_record() == WINDOW and tab.editing.selected_records() == [WINDOW]
    start, rows = window_of(tab)
    assert start <= WINDOW < start + rows and n_of(tab) == WINDOW - 1  # the copy of record 999
