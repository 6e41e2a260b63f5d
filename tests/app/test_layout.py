"""Layout through the real main window at 1024×700 and 1600×1000: what a person sees must fit.

Each check measures with the views' own font metrics: a header that fits,
names shown in full, columns inside the viewport, rows left for the table
when panels and docks open. Also how the table marks records found after
skipped bytes, and which detail tab a damaged record opens on.
"""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle

from app.models.problem_list_model import ProblemColumn
from app.models.record_table_model import BASE_COLUMNS, GAP_TINT, Column
from app.models.settings import Settings
from app.shell.main_window import MainWindow
from app.shell.shard_set_tab import ShardSetTab
from app.views.record_detail import HEX_TAB, TREE_TAB
from codec.format.framing import RecordStatus
from codec.storage.writer import write_records
from tests.builders import FIXTURES
from tests.gui_helpers import wait_done

pytestmark = pytest.mark.gui

TIMEOUT = 30000


def open_done(window: MainWindow, qtbot, path) -> object:
    tab = window.open_file(str(path))
    assert tab is not None, window.message_bar.text()
    return wait_done(qtbot, tab, TIMEOUT)


def text_margin(view) -> int:
    """The space an item view leaves on each side of a cell's text."""
    return view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1


def shows_in_full(view, text: str, width: int, mode=Qt.TextElideMode.ElideRight) -> bool:
    """Would ``text`` be drawn whole in a cell ``width`` pixels wide (nothing elided)?"""
    return view.fontMetrics().elidedText(text, mode, width - 2 * text_margin(view)) == text


def test_table_headers_and_columns_fit_on_first_open(sized_window, qtbot):
    tab = open_done(sized_window, qtbot, FIXTURES / "detection.tfrecord")
    table, header = tab.table, tab.table.horizontalHeader()
    hfm = header.fontMetrics()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    for col in range(BASE_COLUMNS):
        text = tab.model.headerData(col, Qt.Orientation.Horizontal)
        assert header.sectionSize(col) >= hfm.horizontalAdvance(text) + 2 * margin, text  # never "Statu"
    assert tab.model.feature_columns(), "the feature columns are left out"
    assert tab.model.feature_columns() == tab.model.default_feature_columns()[:len(tab.model.feature_columns())]
    last = tab.model.columnCount() - 1
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width()
    assert table.horizontalScrollBar().maximum() == 0  # nothing off-screen to the right
    for row in range(tab.model.rowCount()):  # numbers, offsets and sizes in full
        for col in (Column.INDEX, Column.OFFSET, Column.SIZE, Column.KIND):
            assert shows_in_full(table, tab.model.index(row, col).data(), header.sectionSize(col))


def test_tree_shows_full_feature_names(sized_window, qtbot):
    tab = open_done(sized_window, qtbot, FIXTURES / "detection.tfrecord")
    tree, model = tab.detail.tree, tab.detail.tree_model
    if tab.detail.loaded() is None:
        qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT).wait()
    root = model.root_index()
    names = [model.index(r, 0, root) for r in range(model.rowCount(root))]
    assert {"image/object/bbox/xmin", "image/object/bbox/xmax", "image/object/class/label"} <= \
        {i.data() for i in names}
    for index in names:
        rect = tree.visualRect(index)
        assert rect.width() > 0 and shows_in_full(tree, index.data(), rect.width(), Qt.TextElideMode.ElideMiddle), \
            f"{index.data()} is cut in a {rect.width()} px cell"


def test_shard_numbers_show_in_the_shards_list(sized_window, qtbot):
    tab = sized_window.open_set([str(FIXTURES / "shards")])
    assert isinstance(tab, ShardSetTab)
    wait_done(qtbot, tab, TIMEOUT)
    panel = tab.shards_panel
    view, model = panel.view, panel.model
    header = view.horizontalHeader()
    assert model.rowCount() == 4
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    assert header.sectionSize(0) >= header.fontMetrics().horizontalAdvance("Shard") + 2 * margin
    for row in range(model.rowCount()):
        name = model.index(row, 0).data()
        assert name == f"{row:05d}"
        assert shows_in_full(view, name, view.columnWidth(0), Qt.TextElideMode.ElideMiddle)
        assert view.columnViewportPosition(0) >= 0 and view.columnWidth(0) <= view.viewport().width()
    records = model.index(0, 1).data()
    assert records == "25" and shows_in_full(view, records, view.columnWidth(1))


def test_table_keeps_ten_rows_with_problems_and_statistics_open(sized_window, qtbot):
    window = sized_window
    tab = open_done(window, qtbot, FIXTURES / "garbage_middle.tfrecord")
    tab.corruption.set_panel_visible(True)
    window.qa.show_statistics()
    qtbot.waitUntil(lambda: window.qa.stats_dock.isVisible() and tab.corruption.panel.isVisible(), timeout=TIMEOUT)
    table = tab.table

    def rows() -> int:
        return table.viewport().height() // table.verticalHeader().defaultSectionSize()

    qtbot.waitUntil(lambda: window.qa.stats_dock.height() > 120, timeout=5000)  # the dock has its share
    assert rows() >= 10, f"the table shows {rows()} rows"
    assert tab.corruption.panel.table.viewport().height() > 0


# -- how rows are marked ----------------------------------------------------------------
def test_record_numbers_have_thousands_separators(window, qtbot, tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(str(path), (b"r%d" % i for i in range(1500)))
    tab = open_done(window, qtbot, path)
    model = tab.model
    assert [model.index(r, Column.INDEX).data() for r in (0, 999, 1000, 1234, 1499)] == \
        ["0", "999", "1,000", "1,234", "1,499"]
    assert model.index(1234, Column.OFFSET).data() == f"{tab.session.source.index.offset(1234):,}"


def test_first_record_after_skipped_bytes_is_marked_and_explained(window, qtbot):
    tab = open_done(window, qtbot, FIXTURES / "garbage_middle.tfrecord")
    model = tab.model
    background, decoration = Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.DecorationRole
    assert model.index(10, Column.STATUS).data() == "ok, after skipped bytes"
    assert model.index(10, Column.SIZE).data(background) == GAP_TINT  # the whole row looks different
    assert model.index(10, Column.INDEX).data(decoration) is not None  # a mark beside the number
    for row in (9, 11):
        assert model.index(row, Column.SIZE).data(background) is None
        assert model.index(row, Column.INDEX).data(decoration) is None
    for col in (Column.INDEX, Column.KIND, BASE_COLUMNS):
        tip = model.index(10, col).data(Qt.ItemDataRole.ToolTipRole)
        assert "numbered as found" in tip and "237" in tip, tip
    panel = tab.corruption.model
    detail = panel.index(0, ProblemColumn.DETAIL).data()
    assert detail.startswith("237 bytes skipped before record 10: records after this point are numbered as found")
    assert "numbered as found" in panel.index(0, ProblemColumn.RECORD).data(Qt.ItemDataRole.ToolTipRole)


def test_damaged_records_open_on_hex_and_good_ones_on_the_tree(window, qtbot):
    tab = open_done(window, qtbot, FIXTURES / "corrupt_data_crc.tfrecord")
    assert tab.session.source.index.status(5) is RecordStatus.DATA_CRC
    detail = tab.detail
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        tab.select_record(5)
    assert detail.tabs.currentIndex() == HEX_TAB
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        tab.select_record(6)
    assert detail.tabs.currentIndex() == TREE_TAB  # the user's tab, not the one chosen for damage


def test_binary_raw_records_open_on_hex_and_text_ones_on_text(window, qtbot, tmp_path):
    path = tmp_path / "raw.tfrecord"
    write_records(str(path), [b"\x00\xff\x10binary\x01\x02", b"plain words"])
    tab = open_done(window, qtbot, path)
    detail = tab.detail
    if detail.current_record() != 0 or detail.loaded() is None:
        with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
            tab.select_record(0)
    assert detail.tabs.currentIndex() == HEX_TAB
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        tab.select_record(1)
    assert detail.tabs.tabText(detail.tabs.currentIndex()) == "Text"


def test_window_fits_a_small_screen(qtbot):
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    room = w.screen().availableGeometry()
    assert w.width() <= room.width() and w.height() <= room.height()
