"""The 1024×700 and 1600×1000 layout of the panels and dialogs, through the real main window.

The Shards panel's counts are never cut, the status message elides in its own
label, the Problems panel opens with room for its rows and says the current
problem's sentence under them, Decode As keeps its width as types are chosen,
and Qt's own file dialog opens at a sensible size with its dates in full.
"""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QDate, QDateTime, QLocale, Qt, QTime
from PySide6.QtWidgets import QApplication, QFileDialog, QStyle, QTreeView

from app.dialogs.decode_as_dialog import DIALOG_SIZE
from app.models.problem_list_model import ProblemColumn
from app.models.settings import Settings
from app.models.shard_list_model import NAME, RECORDS, SPLIT, STATE
from app.shell.file_dialogs import DATE_COLUMN, fit_file_dialog
from app.shell.main_window import MainWindow
from app.views.problems_panel import DETAIL_HINT
from codec.storage.writer import write_records
from tests.builders import FIXTURES
from tests.gui_helpers import open_done, wait_done

pytestmark = pytest.mark.gui

TIMEOUT = 30000
TFDS = FIXTURES / "payloads" / "tfds" / "lens_tfds_demo" / "1.2.0"
LONG_MESSAGE = ("wrote /data/a/very/long/folder/of/datasets/imagenet2012_subset/validation/with/more/folders/"
                "below/it/than/anyone/would/like/to/type/again/and/again/imagenet2012_subset-validation."
                "tfrecord-00003-of-00016: 12,345 records, 3 problems found")


def fits(view, text: str, width: int) -> bool:
    """Would ``text`` show whole in a cell ``width`` pixels wide?"""
    margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    return view.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, width - 2 * margin) == text


@pytest.mark.parametrize("paths", [[FIXTURES / "shards"], [TFDS]], ids=["shards", "tfds"])
def test_shards_panel_shows_records_and_state_whole(sized_window, qtbot, paths):
    tab = sized_window.open_set([os.fspath(p) for p in paths])
    assert tab is not None, sized_window.message_bar.text()
    wait_done(qtbot, tab, TIMEOUT)
    panel = tab.shards_panel
    view, model, header = panel.view, panel.model, panel.view.horizontalHeader()
    qtbot.waitUntil(lambda: view.viewport().width() > 0)
    total = sum(header.sectionSize(c) for c in range(model.columnCount()))
    assert total <= view.viewport().width(), "columns run off the panel"
    assert view.horizontalScrollBar().maximum() == 0
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    columns = [RECORDS, STATE] + ([SPLIT] if model.section(SPLIT) >= 0 else [])
    for col in columns:
        section = model.section(col)
        title = model.headerData(section, Qt.Orientation.Horizontal)
        assert header.sectionSize(section) >= header.fontMetrics().horizontalAdvance(title) + 2 * margin, title
        for row in range(model.rowCount()):
            text = model.index(row, section).data()
            assert fits(view, text, header.sectionSize(section)), (title, text)
    if sized_window.width() >= 1600:  # room for everything: the names too
        name = model.section(NAME)
        for row in range(model.rowCount()):
            assert fits(view, model.index(row, name).data(), header.sectionSize(name))


def test_tree_names_get_a_share_of_a_narrow_detail(sized_window, qtbot):
    tab = sized_window.open_set([os.fspath(TFDS)])
    wait_done(qtbot, tab, TIMEOUT)
    if tab.detail.loaded() is None:
        qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT).wait()
    tree, model = tab.detail.tree, tab.detail.tree_model
    root = model.root_index()
    names = [model.index(r, 0, root) for r in range(model.rowCount(root))]
    assert "embedding" in {i.data() for i in names}
    for index in names:
        rect = tree.visualRect(index)
        assert rect.width() > 0 and fits(tree, index.data(), rect.width()), f"{index.data()} is cut"


def test_a_long_status_message_is_elided_beside_the_fields_with_the_whole_in_its_tooltip(sized_window, qtbot):
    window = sized_window
    open_done(window, qtbot, "detection.tfrecord")
    label = window.status.message_label
    window.statusBar().showMessage(LONG_MESSAGE)
    qtbot.waitUntil(lambda: label.text() == LONG_MESSAGE)
    assert label.toolTip() == LONG_MESSAGE
    shown = label.shown_text()
    assert "…" in shown and shown.startswith("wrote /data/") and shown.endswith("problems found")
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    fields = [w for w in window.status.widgets if w.isVisible()]
    assert fields and all(label.geometry().right() < w.geometry().left() for w in fields)
    window.statusBar().clearMessage()
    assert label.text() == "" and label.toolTip() == ""


def many_problems(path, records: int = 40) -> str:
    """A file whose every other record fails its data CRC."""
    write_records(os.fspath(path), (b"record %03d " % i * 4 for i in range(records)))
    data = bytearray(path.read_bytes())
    offset = 0
    for i in range(records):
        length = int.from_bytes(data[offset:offset + 8], "little")
        if i % 2:
            data[offset + 12] ^= 0xFF  # the first data byte: the data CRC fails
        offset += 12 + length + 4
    path.write_bytes(bytes(data))
    return os.fspath(path)


def test_problems_panel_opens_with_rows_and_says_the_current_problem_below(qtbot, tmp_path):
    window = MainWindow(Settings())
    qtbot.addWidget(window)
    window.resize(1600, 1000)
    window.show()
    tab = open_done(window, qtbot, many_problems(tmp_path / "damaged.tfrecord"))
    tools = tab.corruption
    qtbot.waitUntil(lambda: tools.model.rowCount() == 20, timeout=TIMEOUT)
    tools.set_panel_visible(True)
    panel = tools.panel
    table = panel.table
    qtbot.waitUntil(lambda: table.viewport().height() > 0)
    rows = table.viewport().height() // table.verticalHeader().defaultSectionSize()
    assert rows >= 8, f"the panel shows {rows} rows"
    assert table.isColumnHidden(ProblemColumn.DETAIL)  # Expected and Found are columns; the sentence is below
    assert not table.isColumnHidden(ProblemColumn.EXPECTED) and not table.isColumnHidden(ProblemColumn.FOUND)
    assert panel.detail.isVisibleTo(panel) and panel.detail.text() == DETAIL_HINT
    table.selectRow(3)
    sentence = tools.model.index(3, ProblemColumn.DETAIL).data()
    assert sentence and panel.detail.text() == sentence and panel.detail.isVisibleTo(panel)


def test_decode_as_keeps_its_width_when_a_type_is_chosen(window, qtbot, tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    messages = FIXTURES / "payloads" / "messages"
    for name in ("frames.tfrecord", "frames.desc"):
        shutil.copy(messages / name, frames / name)
    open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    window.payloads.decode_as_action.trigger()
    dialog = window.payloads.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitExposed(dialog)
    width = dialog.width()
    assert width == DIALOG_SIZE[0]
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    ok_at = ok.mapTo(dialog, ok.rect().center())
    assert dialog.load_schema(os.fspath(frames / "frames.desc"))
    assert dialog.select_type("lens.demo.Frame")
    dialog.preview_title.setText("Message lens.demo.Frame · " + "a very long note " * 30)
    dialog.type_list.addItem("lens.demo." + "VeryLongNestedMessageName." * 8 + "Frame")
    QApplication.processEvents()
    dialog.layout().activate()
    assert dialog.width() == width and dialog.minimumSizeHint().width() <= width
    assert ok.mapTo(dialog, ok.rect().center()) == ok_at  # OK stays under the pointer
    assert dialog.preview_title.toolTip().startswith("Message lens.demo.Frame")
    assert "…" in dialog.preview_title.shown_text()
    assert dialog.type_list.horizontalScrollBar().maximum() == 0
    dialog.reject()


def test_qt_file_dialog_opens_sized_with_dates_in_full(window, qtbot, tmp_path):
    dialog = QFileDialog(window, "Open", os.fspath(FIXTURES))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    dialog.setViewMode(QFileDialog.ViewMode.Detail)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    small = dialog.size()
    window.file_dialogs._focus_changed(None)  # what its window taking the focus does
    room = dialog.screen().availableGeometry()
    assert dialog.width() >= min(900, room.width()) and dialog.height() >= min(560, room.height())
    assert dialog.width() >= small.width()
    tree = dialog.findChild(QTreeView, "treeView")
    date = QLocale().toString(QDateTime(QDate(2026, 11, 27), QTime(9, 55)), QLocale.FormatType.ShortFormat)
    assert fits(tree, date, tree.header().sectionSize(DATE_COLUMN))
    fit_file_dialog(dialog)  # once only: a user's resize afterwards stays
    dialog.reject()
