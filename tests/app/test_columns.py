"""The record table's columns through the real window: which features show by default (labels first, as
many as fit, the same for the same schema), remembered per schema, fixed columns whole and first, control
characters escaped, and the row menu's Copy."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QStyle

from app.models.labels import EDITED_STATUS, STATUS_TEXT
from app.models.record_table_model import BASE_COLUMNS, Column
from app.models.settings import Settings
from app.shell.main_window import MainWindow
from app.shell.qa_views import GALLERY_VIEW
from app.shell.shard_set_tab import ShardSetTab
from codec.format.framing import RecordStatus
from codec.storage.writer import write_records
from tests.builders import FIXTURES, example
from tests.gui_helpers import open_done, wait_done

pytestmark = pytest.mark.gui

TIMEOUT = 30000


def shown_window(qtbot, width: int = 1600, height: int = 1000) -> MainWindow:
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def wide_window(qtbot) -> MainWindow:
    return shown_window(qtbot)


def header_margin(header) -> int:
    return header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)


def visual_headers(tab) -> list[str]:
    """The table's headers as shown, left to right."""
    header, model = tab.table.horizontalHeader(), tab.model
    return [str(model.headerData(header.logicalIndex(v), Qt.Orientation.Horizontal)) for v in range(header.count())]


def write(path, records: list[bytes]) -> str:
    write_records(str(path), records)
    return str(path)


def test_detection_shows_class_names_and_labels_first_and_fills_the_width(wide_window, qtbot):
    tab = open_done(wide_window, qtbot, "detection.tfrecord")
    table, header = tab.table, tab.table.horizontalHeader()
    shown = tab.model.feature_columns()
    assert shown[:2] == ["image/object/class/text", "image/object/class/label"]
    assert len(shown) >= 4 and "image/encoded" not in shown  # more than before, never the image
    assert shown == tab.model.default_feature_columns()[:len(shown)]
    last = tab.model.columnCount() - 1
    right = header.sectionViewportPosition(last) + header.sectionSize(last)
    assert right == table.viewport().width()  # the last column reaches the right edge: nothing left empty
    assert table.horizontalScrollBar().maximum() == 0  # and nothing hidden off to the right
    # the next column would not have fitted beside these at its natural width
    ranked = tab.model.default_feature_columns()
    if len(ranked) > len(shown):
        natural = sum(tab.sizing.fitted_widths.values()) + tab.sizing.cell_width(tab.model.short_key(ranked[len(shown)]))
        assert natural > tab.sizing.available_width() or len(shown) == len(ranked)


def test_columns_are_fitted_again_when_the_table_is_resized_until_chosen(qtbot):
    w = shown_window(qtbot, 1024, 700)
    tab = open_done(w, qtbot, "detection.tfrecord")
    narrow = tab.model.feature_columns()
    assert narrow[0] == "image/object/class/text"
    w.resize(1900, 1000)
    qtbot.waitUntil(lambda: len(tab.model.feature_columns()) > len(narrow), timeout=TIMEOUT)
    assert tab.model.feature_columns()[:len(narrow)] == narrow
    tab.toggle_column("image/encoded", True)  # the user chose: a resize no longer changes the columns
    chosen = tab.model.feature_columns()
    w.resize(1024, 700)
    qtbot.waitUntil(lambda: tab.table.viewport().width() < 700, timeout=TIMEOUT)
    assert tab.model.feature_columns() == chosen


def test_same_schema_in_another_key_order_with_other_values_gets_the_same_columns(wide_window, qtbot, tmp_path):
    a = write(tmp_path / "a.tfrecord", [example({"n": i, "s": f"s{i}", "v": 0.5 * i, "label": i % 3,
                                                 "blob": bytes(range(256)) * 4}) for i in range(5)])
    b = write(tmp_path / "b.tfrecord", [example({"blob": bytes(300), "v": 123456.75 + i, "label": 2,
                                                 "s": "a much longer text value " * 3, "n": 10**12 + i})
                                        for i in range(7)])
    first = open_done(wide_window, qtbot, a)
    second = open_done(wide_window, qtbot, b)
    assert first.model.sample_keys() == second.model.sample_keys() == ["blob", "label", "n", "s", "v"]
    assert first.model.feature_columns() == second.model.feature_columns()
    assert first.model.feature_columns()[0] == "label" and "blob" not in first.model.feature_columns()
    assert first._schema_signature() == second._schema_signature()


def test_chosen_columns_are_remembered_per_schema_across_tabs_and_windows(wide_window, qtbot, tmp_path):
    a = write(tmp_path / "a.tfrecord", [example({"label": 1, "n": 2, "s": "x"})])
    b = write(tmp_path / "b.tfrecord", [example({"s": "y", "n": 5, "label": 0})])
    other = write(tmp_path / "c.tfrecord", [example({"label": 1, "n": 2.5, "s": "x"})])  # n is a float here
    tab = open_done(wide_window, qtbot, a)
    defaults = tab.model.feature_columns()
    assert defaults == ["label", "s", "n"]
    tab.toggle_column("label", False)  # the header menu: hide a column
    assert tab.model.feature_columns() == ["s", "n"]
    assert open_done(wide_window, qtbot, b).model.feature_columns() == ["s", "n"]  # same schema, another tab
    assert open_done(wide_window, qtbot, other).model.feature_columns() == defaults  # another schema
    again = shown_window(qtbot)  # a new window reads the same settings
    reopened = open_done(again, qtbot, b)
    assert reopened.model.feature_columns() == ["s", "n"]
    reopened.toggle_column("label", True)
    assert reopened.model.feature_columns() == ["label", "s", "n"]  # back in its place, not at the end
    reopened.default_columns()  # Default Columns: forgotten, chosen to fit again
    assert Settings().feature_columns(reopened._schema_signature()) is None
    assert reopened.model.feature_columns() == defaults


def fixed_widths_hold(tab, texts: dict[int, list[str]]) -> None:
    header = tab.table.horizontalHeader()
    fm, icon = tab.table.fontMetrics(), tab.table.iconSize().width() or 16
    for col, words in texts.items():
        room = header.sectionSize(col) - 2 * header_margin(header) - (icon if col == Column.STATUS else 0)
        for word in words:
            assert fm.horizontalAdvance(word) <= room, f"{word!r} is cut in the {col.name} column"


def test_status_and_kind_are_never_cut(wide_window, qtbot):
    tab = open_done(wide_window, qtbot, "sequence_examples.tfrecord")
    fixed_widths_hold(tab, {Column.KIND: ["SequenceExample", "Protobuf (no schema)", "unreadable"],
                            Column.STATUS: ["ok", EDITED_STATUS]})
    damaged = open_done(wide_window, qtbot, "corrupt_length.tfrecord")
    fixed_widths_hold(damaged, {Column.STATUS: [STATUS_TEXT[RecordStatus.LENGTH_CRC], "ok, after skipped bytes",
                                                STATUS_TEXT[RecordStatus.DATA_CRC]]})


def test_a_shard_sets_fixed_columns_come_first_whatever_columns_are_chosen(wide_window, qtbot):
    tab = wide_window.open_set([str(FIXTURES / "shards")])
    assert isinstance(tab, ShardSetTab)
    wait_done(qtbot, tab, TIMEOUT)
    fixed = ["#", "Shard", "Offset", "Size", "Kind", "Status"]
    assert visual_headers(tab)[:6] == fixed
    keys = tab.model.sample_keys()
    tab._set_columns([], save=False)  # as a remote set's are before its first rows come
    assert visual_headers(tab) == fixed
    tab._set_columns(keys, save=False)  # then they come: columns inserted before the moved Shard column
    assert visual_headers(tab) == fixed + [tab.model.short_key(k) for k in keys]
    tab.toggle_column(keys[0], False)
    tab.toggle_column(keys[0], True)
    assert visual_headers(tab)[:6] == fixed and len(visual_headers(tab)) == 6 + len(keys)


def test_control_characters_are_escaped_in_the_table_the_tree_and_tooltips(wide_window, qtbot, tmp_path):
    text = "a\x1cb\x1dc\td\re\u2028f"
    path = write(tmp_path / "ctl.tfrecord", [example({"text": text, "n": 1})])
    tab = open_done(wide_window, qtbot, path)
    escaped = '"a\\x1cb\\x1dc\\td\\re\\u2028f"'
    col = BASE_COLUMNS + tab.model.feature_columns().index("text")
    cell = tab.model.index(0, col)
    assert cell.data() == escaped and cell.data(Qt.ItemDataRole.ToolTipRole) == f"text: {escaped}"
    tree = tab.detail.tree_model
    if tab.detail.loaded() is None:
        qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT).wait()
    root = tree.root_index()
    row = next(tree.index(r, 0, root) for r in range(tree.rowCount(root)) if tree.index(r, 0, root).data() == "text")
    value = row.siblingAtColumn(2)
    assert value.data() == escaped and value.data(Qt.ItemDataRole.ToolTipRole) == escaped
    assert tree.copy_text(value) == text  # a copy is the exact text


def test_the_row_menu_copies_rows_a_cell_the_record_and_its_offset(wide_window, qtbot):
    tab = open_done(wide_window, qtbot, "detection.tfrecord")
    table = tab.table
    assert table.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
    tab.select_record(2)
    index = tab.proxy.index(2, Column.SIZE)
    menu = tab.row_menu(index)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert list(actions)[:5] == ["Copy", "Copy Cell", "Copy Record as JSON", "Copy Offset", "Show in Gallery"]
    assert table.actions() and set(table.actions()) <= set(menu.actions())  # then the window's row edits
    clipboard = QApplication.clipboard()
    actions["Copy"].trigger()
    header, row = clipboard.text().split("\n")
    assert header.split("\t")[:BASE_COLUMNS] == ["#", "Offset", "Size", "Kind", "Status"]
    assert row.split("\t")[:3] == ["2", f"{tab.session.source.index.offset(2):,}", index.data()]
    actions["Copy Cell"].trigger()
    assert clipboard.text() == index.data() == f"{tab.session.source.record_info(2).length:,}"
    actions["Copy Record as JSON"].trigger()
    assert "image/object/class/text" in json.loads(clipboard.text())["features"]["feature"]
    actions["Copy Offset"].trigger()
    assert clipboard.text() == str(tab.session.source.index.offset(2))
    actions["Show in Gallery"].trigger()
    assert tab.qa.views.currentIndex() == GALLERY_VIEW
    menu.deleteLater()
