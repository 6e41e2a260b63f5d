"""What a file tab builds its parts from, without the window: a session over a real file, the table's
model and view, the row selection and the record detail, wired as the tab wires them.

For unit tests of one part (TabEditing, CorruptionTools, QaViews, ...) with its real collaborators.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.models.filtered_table_model import FilteredTableModel
from app.models.hex_model import HIGHLIGHT_BG
from app.models.record_table_model import RecordTableModel
from app.shell.row_selection import RowSelection
from app.shell.session import TabSession
from app.views.record_detail import RecordDetail
from app.views.record_table_view import RecordTableView
from codec.sources.tfrecord_file import TFRecordFile

TIMEOUT = 20000


class TabParts:
    """A session over ``path`` (indexed unless not ``start``, verified when ``verify``, editing when
    ``editing``), and the views a tab hands its parts."""

    def __init__(self, qtbot, path: str, *, start: bool = True, verify: bool = False, editing: bool = False) -> None:
        self.qtbot = qtbot
        self._closers: list = []
        self.host = QWidget()
        qtbot.addWidget(self.host)
        self.session = TabSession(TFRecordFile(path), self.host, auto_verify=verify)
        if start:
            self.session.start()
            self.wait_passes()
        if editing:
            assert self.session.start_editing()
        self.model = RecordTableModel(self.session, self.host)
        self.session.source_changed.connect(self.model.records_replaced)
        self.model.sync()
        self.rows = FilteredTableModel(self.model, self.host)
        self.table = RecordTableView(self.host)
        self.table.setModel(self.rows)
        self.selection = RowSelection(self.table, self.rows, self.model)
        self.detail = RecordDetail(self.host)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)

    def wait_passes(self) -> None:
        """Until the session's passes have ended."""
        session = self.session
        self.qtbot.waitUntil(lambda: not session.is_running() and session.phase in ("done", "failed", "cancelled"),
                             timeout=TIMEOUT)

    def _show_current(self, current, _previous) -> None:
        if current.isValid():
            record = self.rows.record_at(current.row())
            self.detail.show_record(self.session.records.pinned(record), record)

    def select(self, record: int) -> None:
        """Select ``record`` and wait until the detail shows it."""
        self.selection.select_record(record)
        detail = self.detail
        self.qtbot.waitUntil(lambda: detail.current_record() == record and detail.loaded() is not None,
                             timeout=TIMEOUT)

    def closing(self, close) -> None:
        """Call ``close`` (a part's) before the session closes."""
        self._closers.append(close)

    def close(self) -> None:
        for close in reversed(self._closers):
            close()
        self.session.close()
        self.session.close_source()


def highlighted(detail: RecordDetail) -> list[int]:
    """Absolute offsets of the bytes highlighted in the detail's hex view."""
    model = detail.hex.model
    out = []
    for row in range(model.rowCount()):
        for col in range(1, 17):
            if model.index(row, col).data(Qt.ItemDataRole.BackgroundRole) == HIGHLIGHT_BG:
                out.append(model.record.offset + row * 16 + col - 1)
    return out
