"""The app through its real main window: what a person sees after opening files."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu

from app.__main__ import build_window, parse_args
from app.models.record_table_model import STATUS_ROLE, Column
from app.models.settings import Settings
from app.shell.file_tab import FileTab
from app.shell.main_window import MainWindow
from app.shell.tab_state import parse_goto
from app.views.record_detail import RecordDetail
from codec.storage.writer import write_records
from resources import demo_path
from tests.gui_helpers import open_done, wait_done

pytestmark = pytest.mark.gui

# Rows a careful reader shows for the damaged fixtures (every readable record,
# plus a row for a damaged record that is still framed).
DAMAGED_ROWS = {
    "corrupt_data_crc.tfrecord": 30,  # record 5's data CRC fails
    "corrupt_length.tfrecord": 29,  # record 3's header is lost; 4..29 found again
    "garbage_middle.tfrecord": 27,  # records 10..12 overwritten
    "truncated.tfrecord": 21,  # the last row is the truncated record 20
    "truncated.tfrecord.gz": 62,
}
GOOD_FILES = ["my_example.tfrecords", "detection.tfrecord", "flowers_jpeg.tfrecord", "raw_pixels_32x32x3.tfrecord",
              "raw_strings.tfrecord", "sequence_examples.tfrecord", "structured.tfrecord", "structured.tfrecord.gz",
              "structured.zlib.tfrecord", "zero_length_record.tfrecord", "empty.tfrecord",
              "shards/train-00002-of-00004.tfrecord"]


def column(tab: FileTab, col: int) -> list[str]:
    return [tab.model.index(r, col).data() for r in range(tab.model.rowCount())]


# -- opening ---------------------------------------------------------------
def test_starts_on_the_start_page(window):
    assert window.stack.currentWidget() is window.start_page
    assert window.windowTitle() == "TFRecord Lens"
    assert window.tabs.count() == 0
    assert not window.goto_action.isEnabled()
    assert window.start_page.open_button.isVisible() and window.start_page.demo_button.isVisible()


@pytest.mark.parametrize("name", GOOD_FILES)
def test_good_fixtures_show_every_record(window, qtbot, fixture_file, manifest, name):
    tab = open_done(window, qtbot, fixture_file(name))
    records = manifest[name]["records"]
    assert tab.model.rowCount() == len(records) == manifest[name]["tf_records_read"]
    expected = {"example": "Example", "sequence_example": "SequenceExample", "raw": "raw"}
    assert column(tab, Column.KIND) == [expected[r["kind"]] for r in records]
    assert set(column(tab, Column.STATUS)) <= {"ok"}
    assert window.stack.currentWidget() is window.tabs
    assert window.windowTitle().replace("[*]", "") == f"{os.path.basename(name)} — TFRecord Lens"
    assert window.records_label.text().startswith(f"{len(records):,} record")
    assert window.problems_label.text() == "✓ all CRCs ok"


@pytest.mark.parametrize("name", sorted(DAMAGED_ROWS))
def test_damaged_fixtures_open_with_every_readable_record(window, qtbot, fixture_file, name):
    tab = open_done(window, qtbot, fixture_file(name))
    assert tab.model.rowCount() == DAMAGED_ROWS[name]
    assert tab.state().phase == "done"
    problems = tab.state().problems
    assert problems >= 1
    assert window.problems_label.text() == f"⚠ {problems} problem" + ("" if problems == 1 else "s")


def test_data_crc_damage_is_marked_in_the_table(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    statuses = column(tab, Column.STATUS)
    assert statuses[5] == "data CRC bad"
    assert statuses.count("ok") == 29
    index = tab.model.index(5, Column.STATUS)
    assert index.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert not index.data(Qt.ItemDataRole.DecorationRole).isNull()
    assert window.problems_label.text() == "⚠ 1 problem"
    tab.select_record(0)
    assert tab.next_damaged() == 5 and tab.current_record() == 5  # F8
    window.next_bad_action.trigger()
    assert tab.current_record() == 5  # no other damaged record
    assert "no damaged record after" in window.statusBar().currentMessage()


def test_truncated_tail_row(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("truncated.tfrecord"))
    assert column(tab, Column.STATUS)[-1] == "truncated"
    assert column(tab, Column.STATUS)[:-1] == ["ok"] * 20


def test_compressed_file_status_bar(window, qtbot, fixture_file):
    open_done(window, qtbot, fixture_file("structured.tfrecord.gz"))
    assert window.compression_label.text() == "GZIP"
    assert window.size_label.text() == "1.4 KB"
    assert window.records_label.text() == "100 records"
    assert not window.cancel_button.isVisible() and not window.progress.isVisible()


@pytest.mark.parametrize("name, message", [
    ("not_a_tfrecord.jpg", "not a TFRecord file"),
    ("no_such_file.tfrecord", "no such file"),
    ("no_match-*-of-00004.tfrecord", "no files match"),  # a glob opens as a dataset (a folder too: test_shard_sets)
])
def test_bad_input_gives_a_one_line_message(window, fixture_file, name, message):
    assert window.open_file(fixture_file(name)) is None
    text = window.message_bar.text()
    assert message in text and "\n" not in text and "Traceback" not in text
    assert message in window.statusBar().currentMessage()
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.start_page


def test_failures_do_not_stop_the_other_files(window, qtbot, fixture_file):
    tabs = window.open_files([fixture_file("not_a_tfrecord.jpg"), fixture_file("structured.tfrecord"),
                              fixture_file("missing.tfrecord")])
    assert [t.title for t in tabs] == ["structured.tfrecord"]
    lines = window.message_bar.text().splitlines()
    assert len(lines) == 2 and "not a TFRecord" in lines[0] and "no such file" in lines[1]
    wait_done(qtbot, tabs[0])


# -- the demo and the command line -----------------------------------------
def test_demo_opens_from_the_start_page(window, qtbot):
    window.start_page.demo_button.click()
    tab = window.current_tab()
    assert tab is not None and tab.path == demo_path()
    wait_done(qtbot, tab)
    assert window.windowTitle().replace("[*]", "") == "demo.tfrecord — TFRecord Lens"
    assert column(tab, Column.KIND) == ["Example"] * 24 + ["SequenceExample"] * 3
    assert set(column(tab, Column.STATUS)) == {"ok"}
    shown = tab.model.feature_columns()
    assert shown and shown == tab.model.default_feature_columns()[:len(shown)]
    assert shown[0] == "caption" and "image/encoded" not in shown  # a class name first, never the image
    assert "image/object/bbox/xmin" in tab.model.sample_keys()
    assert tab.current_record() == 0  # the first record is shown straight away


def test_command_line_opens_each_file_in_a_tab(qtbot, fixture_file):
    args = parse_args([fixture_file("structured.tfrecord"), fixture_file("detection.tfrecord"), "--demo"])
    w = build_window(args)
    qtbot.addWidget(w)
    assert [t.title for t in w.file_tabs()] == ["structured.tfrecord", "detection.tfrecord", "demo.tfrecord"]
    for tab in w.file_tabs():
        wait_done(qtbot, tab)
    assert [t.model.rowCount() for t in w.file_tabs()] == [100, 12, 27]


def test_command_line_without_files_shows_the_start_page(qtbot):
    w = build_window(parse_args([]))
    qtbot.addWidget(w)
    assert w.tabs.count() == 0 and w.stack.currentWidget() is w.start_page


# -- tabs, recent files, drag and drop ---------------------------------------
def test_tabs_are_independent_and_closable(window, qtbot, fixture_file):
    a = open_done(window, qtbot, fixture_file("structured.tfrecord"))
    b = open_done(window, qtbot, fixture_file("sequence_examples.tfrecord"))
    assert window.tabs.count() == 2 and window.current_tab() is b
    assert window.windowTitle().startswith("sequence_examples.tfrecord")
    a.select_record(42)
    b.select_record(3)
    window.tabs.setCurrentWidget(a)
    assert window.windowTitle().startswith("structured.tfrecord")
    assert window.records_label.text() == "100 records"
    assert (a.current_record(), b.current_record()) == (42, 3)
    assert window.open_file(fixture_file("sequence_examples.tfrecord")) is b  # already open: switch
    assert window.tabs.count() == 2
    window.close_current()
    window.close_tab(0)
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.start_page
    assert window.windowTitle() == "TFRecord Lens"


def test_recent_files_are_remembered(window, qtbot, fixture_file):
    path = fixture_file("detection.tfrecord")
    open_done(window, qtbot, path)
    window.close_current()
    assert window.settings.recent_files()[0] == os.path.abspath(path)
    item = window.start_page.recent_list.item(0)
    assert item.data(Qt.ItemDataRole.UserRole) == os.path.abspath(path)
    window.start_page.recent_list.itemActivated.emit(item)
    assert window.current_tab().path == os.path.abspath(path)
    wait_done(qtbot, window.current_tab())
    window.recent.fill_menu()
    assert window.recent_menu.actions()[0].text() == "detection.tfrecord"
    # a new window (next run) sees the same list
    other = MainWindow(Settings())
    qtbot.addWidget(other)
    assert other.start_page.recent_list.count() >= 1


def test_dropping_files_opens_them(window, qtbot, fixture_file):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(fixture_file("flowers_jpeg.tfrecord")),
                  QUrl.fromLocalFile(fixture_file("raw_strings.tfrecord"))])
    event = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert [t.title for t in window.file_tabs()] == ["flowers_jpeg.tfrecord", "raw_strings.tfrecord"]
    for tab in window.file_tabs():
        wait_done(qtbot, tab)


# -- moving through records ----------------------------------------------------
def test_keyboard_moves_through_records_and_shows_each(window, qtbot, fixture_file, monkeypatch):
    tab = open_done(window, qtbot, fixture_file("structured.tfrecord"))
    shown: list[int] = []
    real = tab.detail.show_record
    monkeypatch.setattr(tab.detail, "show_record", lambda f, i: (shown.append(i), real(f, i)))
    tab.table.setFocus()
    assert tab.current_record() == 0
    qtbot.keyClick(tab.table, Qt.Key.Key_Down)
    qtbot.keyClick(tab.table, Qt.Key.Key_Down)
    assert tab.current_record() == 2
    qtbot.keyClick(tab.table, Qt.Key.Key_End)
    assert tab.current_record() == 99
    qtbot.keyClick(tab.table, Qt.Key.Key_Up)
    assert tab.current_record() == 98
    qtbot.keyClick(tab.table, Qt.Key.Key_Home)
    assert tab.current_record() == 0
    assert shown == [1, 2, 99, 98, 0]


def test_copy_selected_rows(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("my_example.tfrecords"))
    tab.table.setFocus()
    qtbot.keyClick(tab.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    lines = QApplication.clipboard().text().splitlines()
    assert lines[0].startswith("#\tOffset\tSize\tKind\tStatus")
    assert lines[1].startswith("0\t0\t") and "\tExample\tok" in lines[1]
    assert '"my_bytes"' in tab.copying.record_json()


def test_copy_of_more_rows_than_the_clipboard_takes(window, qtbot, tmp_path, monkeypatch):
    import app.views.record_table_view as record_table_view

    monkeypatch.setattr(record_table_view, "COPY_ROWS_MAX", 5)
    path = tmp_path / "twelve.tfrecord"
    write_records(path, [b"raw %d" % i for i in range(12)])
    tab = open_done(window, qtbot, str(path))
    tab.table.setFocus()
    tab.table.selectAll()
    with qtbot.waitSignal(tab.message, timeout=5000) as note:
        qtbot.keyClick(tab.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == 1 + 5 and [line.split("\t")[0] for line in lines[1:]] == ["0", "1", "2", "3", "4"]
    assert note.args[0] == "copied the first 5 of 12 selected rows (File > Export writes them all)"


@pytest.mark.parametrize("text, target", [
    ("17", ("record", 17)), ("-1", ("record", -1)), ("1,234", ("record", 1234)),
    ("@350", ("offset", 350)), ("0x15e", ("offset", 350)), ("@0x15E", ("offset", 350)),
])
def test_parse_goto(text, target):
    assert tuple(parse_goto(text)) == target


@pytest.mark.parametrize("text", ["abc", "@-5", "", "12.5"])
def test_parse_goto_rejects(text):
    with pytest.raises(ValueError):
        parse_goto(text)


def test_go_to_record_or_byte_offset(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    assert window.go_to("17") is None and tab.current_record() == 17
    assert isinstance(tab.detail, RecordDetail) and tab.detail.current_record() == 17
    assert window.go_to("-1") is None and tab.current_record() == 29
    note = window.go_to("@350")  # record 5 starts at byte 350
    assert tab.current_record() == 5 and "record 5" in note
    window.go_to("0x160")  # inside record 5
    assert tab.current_record() == 5
    assert window.go_to("@0") is not None and tab.current_record() == 0
    assert "no record 999" in window.go_to("999") and tab.current_record() == 0
    assert "not a record number" in window.go_to("five")
    assert "not a record number" in window.statusBar().currentMessage()


def test_go_to_dialog(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("structured.tfrecord"))

    def answer():
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("64")
        dialog.accept()

    QTimer.singleShot(0, answer)
    window.goto_action.trigger()  # Ctrl+G
    assert tab.current_record() == 64
    assert window.goto_action.shortcut().toString() == "Ctrl+G"


# -- big files -----------------------------------------------------------------
BIG_RECORDS = 1_000_000  # a pass of ~0.7 s: longer than the gap that counts as blocked


@pytest.fixture(scope="module")
def big_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("big") / "big.tfrecord"
    write_records(path, (b"rec%07d" % i for i in range(BIG_RECORDS)))
    return str(path)


@pytest.mark.slow
def test_window_stays_responsive_while_indexing(window, qtbot, big_file):
    """While a big file is indexed (and verified), the event loop keeps running: a 10 ms timer
    fires again and again while rows are still arriving, so the rows it sees grow in small steps
    (the gaps themselves, ≤ 50 ms on 10M records, are measured by benchmarks/bench_gui.py; this
    test only catches a GUI thread that blocks)."""
    seen: list[int] = []  # the row count at each tick of the timer
    tab_box: list[FileTab] = []

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: seen.append(tab_box[0].model.rowCount() if tab_box else 0))
    timer.start()
    qtbot.waitUntil(lambda: len(seen) >= 3, timeout=2000)
    tab = window.open_file(big_file)  # builds the tab's widgets, then the worker starts
    tab_box.append(tab)
    opened = len(seen)
    wait_done(qtbot, tab, timeout=120000)
    timer.stop()
    during = [0, *seen[opened:]]
    assert tab.model.rowCount() == BIG_RECORDS and tab.state().phase == "done" and tab.session.source.verified
    partial = {rows for rows in during if 0 < rows < BIG_RECORDS}
    assert len(partial) >= 3, f"rows should appear while indexing, seen at {sorted(partial)}"
    jumps = [b - a for a, b in zip(during, during[1:])]
    assert max(jumps) <= BIG_RECORDS // 4, max(jumps)  # ticks all through the pass, not only at its ends


@pytest.mark.slow
def test_cancel_keeps_the_rows_found_so_far(window, qtbot, big_file):
    tab = window.open_file(big_file)
    assert tab.is_running() and window.cancel_button.isVisible()
    window.cancel_button.click()  # stops at the index pass's next yield
    wait_done(qtbot, tab)
    assert tab.state().phase == "cancelled"
    assert 0 < tab.model.rowCount() < BIG_RECORDS
    assert window.records_label.text().endswith("records (stopped)")
    assert not window.cancel_button.isVisible()
    assert "stopped" in window.statusBar().currentMessage()


@pytest.mark.slow
def test_go_to_a_record_not_indexed_yet(window, qtbot, big_file):
    tab = window.open_file(big_file)
    note = window.go_to(str(BIG_RECORDS - 10))
    if tab.is_running():
        assert note is None or "not indexed yet" in note
    wait_done(qtbot, tab, timeout=120000)
    assert tab.current_record() == BIG_RECORDS - 10
    assert tab.model.index(BIG_RECORDS - 10, Column.STATUS).data(STATUS_ROLE) is not None


# -- columns and settings ---------------------------------------------------------
def test_chosen_columns_are_remembered_for_the_same_schema(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("shards/train-00000-of-00004.tfrecord"))
    keys = tab.model.sample_keys()
    assert tab.model.feature_columns() == keys[:4]
    menu = QMenu()
    tab.fill_column_menu(menu)
    by_text = {a.text(): a for a in menu.actions()}
    assert [by_text[k].isChecked() for k in keys] == [k in keys[:4] for k in keys]
    by_text[keys[0]].trigger()  # the header's context menu: hide the first column
    assert tab.model.feature_columns() == keys[1:4]
    # another shard of the same dataset opens with the same choice
    other = open_done(window, qtbot, fixture_file("shards/train-00001-of-00004.tfrecord"))
    assert other.model.feature_columns() == keys[1:4]
    other.toggle_column(keys[0], True)
    assert other.model.feature_columns() == keys[:4]  # back in its place, not at the end


def test_window_geometry_is_saved_on_close(qtbot):
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.resize(700, 500)
    w.show()
    w.close()
    again = MainWindow(Settings())
    qtbot.addWidget(again)
    assert (again.size().width(), again.size().height()) == (700, 500)


def test_verify_checksums_on_request(window, qtbot, fixture_file):
    tab = window.open_file(fixture_file("corrupt_data_crc.tfrecord"))
    wait_done(qtbot, tab)
    with qtbot.waitSignal(tab.indexing_finished, timeout=10000):
        window.verify_action.trigger()
    assert tab.state().verified and tab.state().problems == 1
    assert column(tab, Column.STATUS)[5] == "data CRC bad"


def test_large_records_are_not_decoded_for_the_table(window, qtbot, tmp_path, monkeypatch):
    import app.models.record_table_model as table_model

    monkeypatch.setattr(table_model, "MAX_DECODE_BYTES", 1000)
    path = tmp_path / "large.tfrecord"
    write_records(path, [b"small", b"x" * 5000, b"small again"])
    tab = open_done(window, qtbot, str(path))
    assert column(tab, Column.KIND) == ["raw", "large", "raw"]
    assert column(tab, Column.SIZE)[1] == "5,000"


def test_next_problem_also_stops_after_skipped_bytes(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("garbage_middle.tfrecord"))
    assert tab.current_record() == 0
    window.next_bad_action.trigger()  # F8
    assert tab.current_record() == 10  # the first record found again after the garbage
    window.prev_bad_action.trigger()  # Shift+F8
    assert tab.current_record() == 10 and "no damaged record before" in window.statusBar().currentMessage()
