"""A tensor's values as a small read-only grid, under the record tree (1-D and 2-D tensors)."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from app.models.tensor_table_model import MAX_CELLS, TensorTableModel, grid_shaped
from app.style import palette
from codec.decode.tensor_view import tensor_label


class TensorGrid(QWidget):
    """A caption (``float32 [2, 3] · 6 values``, or how many are shown) over a table of the values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TensorTableModel(self)
        self.caption = QLabel(self)
        palette.follow(self.caption, lambda: palette.HINT_STYLE)
        self.caption.setContentsMargins(6, 4, 6, 2)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setDefaultSectionSize(96)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 1)

    def set_array(self, array: Any) -> bool:
        """Show ``array`` when it is 1-D or 2-D (True); anything else empties the grid (False)."""
        shown = array is not None and grid_shaped(array)
        self.model.set_array(array if shown else None)
        if not shown:
            self.caption.clear()
            return False
        total, cells = self.model.total_cells, self.model.shown_cells
        count = f"{total:,} value{'s' if total != 1 else ''}"
        if cells < total:
            count = f"first {cells:,} of {total:,} values shown (the grid holds at most {MAX_CELLS:,})"
        self.caption.setText(f"{tensor_label(array)} · {count}")
        return True

    def clear(self) -> None:
        self.set_array(None)
