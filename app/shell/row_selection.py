"""Record numbers <-> the table's rows: what is current and selected, and selecting records.

The record table shows a :class:`~app.models.filtered_table_model.FilteredTableModel`
(all records or a filter's, a window of them at a time) over the
:class:`~app.models.record_table_model.RecordTableModel`; its rows are not
record numbers. A :class:`RowSelection` answers in record numbers and moves
the window to a record before selecting it.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex
from PySide6.QtWidgets import QAbstractItemView, QTableView

from app.models.filtered_table_model import FilteredTableModel
from app.models.record_table_model import RecordTableModel
from codec.editing.document import sorted_unique

SELECT_ROWS_MAX = 100_000  # at most this many rows are selected again after an edit


class RowSelection:
    """The current and selected records of ``table`` (which shows ``proxy`` over ``model``)."""

    def __init__(self, table: QTableView, proxy: FilteredTableModel, model: RecordTableModel) -> None:
        self.table = table
        self.proxy = proxy
        self.model = model

    def current_record(self) -> int:
        """The current row's record number (-1 when none is current)."""
        index = self.table.currentIndex()
        return self.proxy.record_at(index.row()) if index.isValid() else -1

    def selected_records(self) -> list[int]:
        """The selected rows' record numbers (sorted), or the current record when none is selected."""
        selection = self.table.selectionModel().selection()
        rows = sorted_unique([self.proxy.records_of_rows(rng.top(), rng.bottom()) for rng in selection])
        rows = rows[rows >= 0]
        if not rows.shape[0]:
            current = self.current_record()
            return [current] if current >= 0 else []
        return rows.tolist()

    def has_rows(self) -> bool:
        """True when there are rows to act on (cheap: for enabling actions)."""
        return self.table.selectionModel().hasSelection() or self.current_record() >= 0

    def select_record(self, i: int) -> None:
        """Make record ``i`` current, selected and visible (a detail view shows it).

        Filtered, the nearest matching record; paged, the window moves to it first.
        """
        column = max(0, self.table.currentIndex().column())
        index = self.proxy.index(self.proxy.reveal(i, nearest=True), column)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def select_records(self, records: Sequence[int]) -> None:
        """Select these records; the first becomes current and is shown.

        A paged table moves its window to the first (those outside it stay unselected).
        """
        n = self.model.rowCount()
        records = [r for r in records if 0 <= r < n][:SELECT_ROWS_MAX]
        if not records:
            return
        self.proxy.reveal(records[0])
        last = self.proxy.columnCount() - 1
        selection = QItemSelection()
        for r in records:
            index = self._view_index(r)
            if index.isValid():
                selection.select(index, index.siblingAtColumn(last))
        first = self._view_index(records[0])
        if not first.isValid():
            return
        column = max(0, self.table.currentIndex().column())
        flags = QItemSelectionModel.SelectionFlag
        self.table.selectionModel().setCurrentIndex(first.siblingAtColumn(column), flags.NoUpdate)
        self.table.selectionModel().select(selection, flags.ClearAndSelect | flags.Rows)
        self.table.scrollTo(first)

    def _view_index(self, record: int) -> QModelIndex:
        return self.proxy.mapFromSource(self.model.index(record, 0))
