"""The record table's view: fixed row height, Home/End to the first/last record, keys that page, Ctrl+C,
a right-click that asks its tab for the row menu, and a header whose clicks ask for a sort (its
indicator shows the order the rows are in)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.models.filtered_table_model import FilteredTableModel
from app.workers.worker import PAINT_GATE
from codec.editing.document import sorted_unique

COPY_ROWS_MAX = 10_000  # rows Ctrl+C puts on the clipboard (more: File > Export)


class RecordTableView(QTableView):
    """The record table: fixed row height, Home/End jump to the first/last record.

    Over a paged :class:`FilteredTableModel` the keys cross page edges: Home /
    End, Up at the first row and Down at the last ask for another matching
    position with ``position_requested(int)`` (the tab moves the window there).
    A right-click on a row emits ``customContextMenuRequested`` (viewport
    coordinates); the tab shows its row menu.
    A click on a column header asks for a sort by it with ``sort_requested(int)``;
    the header's indicator follows the model's order (``sort_changed``), not the click.
    """

    copied = Signal(str)
    message = Signal(str)  # a one-line note for the status bar
    position_requested = Signal(int)
    resized = Signal()  # the viewport's size changed (the tab fits its default columns again)
    sort_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        vh = self.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 8)
        vh.hide()
        hh = self.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.setHighlightSections(False)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.setSectionsClickable(True)
        hh.setSortIndicatorShown(True)
        hh.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        hh.sectionClicked.connect(self._header_clicked)

    def setModel(self, model) -> None:  # type: ignore[override]
        old = self.model()
        if isinstance(old, FilteredTableModel):
            old.sort_changed.disconnect(self.show_sort)
        super().setModel(model)
        if isinstance(model, FilteredTableModel):
            model.sort_changed.connect(self.show_sort)
        self.show_sort()

    def show_sort(self) -> None:
        """Show the model's order on the header: its column's indicator, or none in file order."""
        rows = self.model()
        column = rows.sort_column if isinstance(rows, FilteredTableModel) else -1
        descending = isinstance(rows, FilteredTableModel) and rows.sort_descending
        self.horizontalHeader().setSortIndicator(
            column, Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder)

    def _header_clicked(self, column: int) -> None:
        self.show_sort()  # (Qt flipped the indicator on the click: it shows the order the rows are in)
        self.sort_requested.emit(column)

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        model = self.model()
        if model is not None and model.rowCount() and action in (
                QAbstractItemView.CursorAction.MoveHome, QAbstractItemView.CursorAction.MoveEnd):
            row = 0 if action == QAbstractItemView.CursorAction.MoveHome else model.rowCount() - 1
            column = max(0, self.currentIndex().column())
            return model.index(row, column)
        return super().moveCursor(action, modifiers)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.resized.emit()

    def paintEvent(self, event) -> None:
        with PAINT_GATE.painting():
            super().paintEvent(event)

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_rows()
            event.accept()
            return
        position = self._position_beyond_window(event)
        if position >= 0:
            event.accept()
            self.position_requested.emit(position)
            return
        super().keyPressEvent(event)

    def _position_beyond_window(self, event) -> int:
        """The matching position a key asks for outside a paged window (-1: the key stays in the window)."""
        rows = self.model()
        if not isinstance(rows, FilteredTableModel) or not rows.is_paged() or \
                event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            return -1
        key, current = event.key(), self.currentIndex()
        start, count = rows.window_start, rows.rowCount()
        row = current.row() if current.isValid() else -1
        if key == Qt.Key.Key_Home:
            return 0
        if key == Qt.Key.Key_End:
            return rows.matching_count() - 1
        if key in (Qt.Key.Key_Down, Qt.Key.Key_PageDown) and row == count - 1 and \
                start + count < rows.matching_count():
            return start + count
        if key in (Qt.Key.Key_Up, Qt.Key.Key_PageUp) and row == 0 and start > 0:
            return start - 1
        return -1

    def selectAll(self) -> None:
        super().selectAll()
        rows = self.model()
        if isinstance(rows, FilteredTableModel) and rows.is_paged():
            self.message.emit(f"selected the {rows.rowCount():,} rows of this page, not all {rows.matching_count():,} "
                           "records (File > Export can export all records or the filtered ones)")

    def copy_rows(self) -> str:
        """Copy the selected rows as tab-separated text (header line first)."""
        model = self.model()
        # From the selection's ranges (selectedRows() would ask Qt about every cell of millions)
        ranges = [np.arange(r.top(), r.bottom() + 1) for r in self.selectionModel().selection()] if model else []
        rows = sorted_unique(ranges)
        if not rows.shape[0]:
            return ""
        cols = range(model.columnCount())
        lines = ["\t".join(str(model.headerData(c, Qt.Orientation.Horizontal)) for c in cols)]
        for r in rows[:COPY_ROWS_MAX].tolist():
            lines.append("\t".join(str(model.index(r, c).data() or "") for c in cols))
        text = "\n".join(lines)
        QGuiApplication.clipboard().setText(text)
        n = rows.shape[0]
        self.copied.emit(f"copied {n:,} row(s)" if n <= COPY_ROWS_MAX else
                         f"copied the first {COPY_ROWS_MAX:,} of {n:,} selected rows (File > Export writes them all)")
        return text

    def copy_cell(self, index: QModelIndex) -> str:
        """Copy one cell's text as the table shows it (never elided)."""
        text = str(index.data() or "") if index.isValid() else ""
        QGuiApplication.clipboard().setText(text)
        header = str(self.model().headerData(index.column(), Qt.Orientation.Horizontal)) if index.isValid() else ""
        self.copied.emit(f"copied the {header} cell" if header else "copied the cell")
        return text
