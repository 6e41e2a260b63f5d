"""A read-only Qt table over a 1-D or 2-D tensor (a numpy array), capped at ``MAX_CELLS`` cells.

A 1-D tensor is one column, a 2-D tensor rows × columns. Cells are formatted
when a view asks for them, so a large array costs nothing beyond the cells
on screen; past the cap, only the first rows (and columns) are shown.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase

from app.models.value_text import show_value

if TYPE_CHECKING:
    import numpy as np

MAX_CELLS = 10_000
_Index = QModelIndex | QPersistentModelIndex
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def grid_shaped(array: Any) -> bool:
    """Is ``array`` a tensor the grid shows: 1-D or 2-D with at least one value?"""
    return getattr(array, "ndim", 0) in (1, 2) and array.size > 0


class TensorTableModel(QAbstractTableModel):
    """Cells of a 1-D or 2-D array; :meth:`set_array` replaces it (None or another shape empties)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._array: np.ndarray | None = None
        self._dtype: str | None = None
        self._rows = 0
        self._cols = 0
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_array(self, array: np.ndarray | None) -> None:
        self.beginResetModel()
        if array is None or not grid_shaped(array):
            self._array, self._dtype, self._rows, self._cols = None, None, 0, 0
        else:
            grid = array.reshape(-1, 1) if array.ndim == 1 else array
            self._array = grid
            self._dtype = "string" if array.dtype.kind == "O" else array.dtype.name
            self._cols = min(grid.shape[1], MAX_CELLS)
            self._rows = min(grid.shape[0], MAX_CELLS // self._cols)
        self.endResetModel()

    @property
    def total_cells(self) -> int:
        """How many values the array holds."""
        return 0 if self._array is None else int(self._array.size)

    @property
    def shown_cells(self) -> int:
        """How many of them the grid shows (at most ``MAX_CELLS``)."""
        return self._rows * self._cols

    def value(self, row: int, column: int) -> Any:
        """The Python value at a cell (bytes for strings)."""
        item = self._array[row, column]
        return bytes(item) if self._dtype == "string" else item.item()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._cols

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole:
            return str(section)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._array is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            max_len = 40 if role == Qt.ItemDataRole.DisplayRole else 600
            return show_value(self.value(index.row(), index.column()), self._dtype, max_len)
        if role == Qt.ItemDataRole.FontRole:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and self._dtype != "string":
            return _RIGHT
        return None
