"""The rows the record table and the gallery show: every record, or a filter's matches.

:class:`FilteredTableModel` is a thin proxy over
:class:`~app.record_table_model.RecordTableModel`. Unfiltered it passes rows
through one to one and follows rows appended while indexing. Filtered, view
row ``r`` is record ``matches[r]``, where ``matches`` is the sorted array of
record numbers :func:`codec.query.filter_iter` found: 8 bytes per match and
no Python object per row (a ``QSortFilterProxyModel`` keeps a mapping entry
per source row and re-filters on every change, which millions of rows cannot
afford). Use :meth:`record_at` / :meth:`row_for_record` (or the standard
``mapToSource`` / ``mapFromSource``) to go between view rows and records.
"""
from __future__ import annotations

from array import array
from typing import Any, Sequence

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QPersistentModelIndex, Qt, Signal

_Index = QModelIndex | QPersistentModelIndex


class FilteredTableModel(QAbstractProxyModel):
    """Rows = all records of the source, or only the records of a filter.

    Signals: ``filterChanged()`` when a filter is set or cleared;
    ``countsChanged()`` when :meth:`shown` or :meth:`total` may read
    differently (rows appended while indexing, edits).
    """

    filterChanged = Signal()
    countsChanged = Signal()

    def __init__(self, source, parent=None) -> None:
        super().__init__(parent)
        self._matches: np.ndarray | None = None  # sorted int64 record numbers, or None: every record
        self._expression = ""
        self._removing: tuple[int, int, int, int] | None = None  # (first, last, row0, row1) of a removal
        self.setSourceModel(source)

    # -- the filter -------------------------------------------------------
    def set_matches(self, matches: Sequence[int] | array | np.ndarray | None, expression: str = "") -> None:
        """Show only these records (sorted record numbers), or every record with None."""
        self.beginResetModel()
        if matches is None:
            self._matches = None
            self._expression = ""
        else:
            if isinstance(matches, array) and matches.typecode == "Q":
                values = np.frombuffer(matches, dtype=np.uint64).astype(np.int64) if len(matches) else \
                    np.zeros(0, dtype=np.int64)
            else:
                values = np.asarray(matches, dtype=np.int64).copy()
            values = np.unique(values)  # sorted, once each
            self._matches = values[(values >= 0) & (values < self._source_rows())]
            self._expression = expression
        self.endResetModel()
        self.filterChanged.emit()
        self.countsChanged.emit()

    def clear_filter(self) -> None:
        if self._matches is not None:
            self.set_matches(None)

    @property
    def is_filtered(self) -> bool:
        return self._matches is not None

    @property
    def expression(self) -> str:
        """The expression of the filter shown ("" when unfiltered)."""
        return self._expression

    def matches(self) -> np.ndarray | None:
        """The record numbers shown (a read-only view), or None when unfiltered."""
        if self._matches is None:
            return None
        view = self._matches.view()
        view.flags.writeable = False
        return view

    def shown(self) -> int:
        """How many records the view shows."""
        return self.rowCount()

    def total(self) -> int:
        """How many records the file has (indexed so far)."""
        return self._source_rows()

    def record_at(self, row: int) -> int:
        """The record number of view row ``row`` (-1 when out of range)."""
        if row < 0:
            return -1
        if self._matches is None:
            return row if row < self._source_rows() else -1
        return int(self._matches[row]) if row < self._matches.shape[0] else -1

    def row_for_record(self, record: int, nearest: bool = False) -> int:
        """The view row showing ``record``; -1 when filtered out (or the nearest shown row with ``nearest``)."""
        n = self.rowCount()
        if record < 0 or not n:
            return -1
        if self._matches is None:
            return record if record < n else (n - 1 if nearest else -1)
        k = int(np.searchsorted(self._matches, record))
        if k < n and self._matches[k] == record:
            return k
        if not nearest:
            return -1
        if k == 0:
            return 0
        if k >= n:
            return n - 1
        return k if self._matches[k] - record < record - self._matches[k - 1] else k - 1

    # -- Qt proxy ---------------------------------------------------------
    def setSourceModel(self, source) -> None:  # type: ignore[override]
        old = self.sourceModel()
        if old is not None:
            for signal, slot in self._connections(old):
                signal.disconnect(slot)
        self.beginResetModel()
        super().setSourceModel(source)
        self._matches = None
        self._expression = ""
        self.endResetModel()
        if source is not None:
            for signal, slot in self._connections(source):
                signal.connect(slot)

    def _connections(self, source) -> list:
        return [
            (source.rowsAboutToBeInserted, self._rows_about_to_be_inserted),
            (source.rowsInserted, self._rows_inserted),
            (source.rowsAboutToBeRemoved, self._rows_about_to_be_removed),
            (source.rowsRemoved, self._rows_removed),
            (source.rowsAboutToBeMoved, self._begin_reset),
            (source.rowsMoved, self._end_reset),
            (source.columnsAboutToBeInserted, self._columns_about_to_be_inserted),
            (source.columnsInserted, self.endInsertColumns),
            (source.columnsAboutToBeRemoved, self._columns_about_to_be_removed),
            (source.columnsRemoved, self.endRemoveColumns),
            (source.columnsAboutToBeMoved, self._begin_reset),
            (source.columnsMoved, self._end_reset),
            (source.modelAboutToBeReset, self._begin_reset),
            (source.modelReset, self._end_reset),
            (source.layoutAboutToBeChanged, self._begin_reset),
            (source.layoutChanged, self._end_reset),
            (source.dataChanged, self._data_changed),
            (source.headerDataChanged, self.headerDataChanged),
        ]

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        if parent.isValid() or not (0 <= row < self.rowCount() and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        return QModelIndex()

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:
        return not parent.isValid() and self.rowCount() > 0

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if parent.isValid():
            return 0
        return self._source_rows() if self._matches is None else int(self._matches.shape[0])

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        source = self.sourceModel()
        return 0 if parent.isValid() or source is None else source.columnCount()

    def mapToSource(self, proxy_index: _Index) -> QModelIndex:
        source = self.sourceModel()
        if source is None or not proxy_index.isValid():
            return QModelIndex()
        record = self.record_at(proxy_index.row())
        return source.index(record, proxy_index.column()) if record >= 0 else QModelIndex()

    def mapFromSource(self, source_index: _Index) -> QModelIndex:
        if not source_index.isValid():
            return QModelIndex()
        row = self.row_for_record(source_index.row())
        return self.index(row, source_index.column()) if row >= 0 else QModelIndex()

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        source = self.sourceModel()
        if source is None or not index.isValid():
            return None
        record = self.record_at(index.row())
        return source.data(source.index(record, index.column()), role) if record >= 0 else None

    def multiData(self, index: _Index, roleDataSpan) -> None:
        """All roles of a cell in one call, passed on to the source's own ``multiData``."""
        source = self.sourceModel()
        record = self.record_at(index.row()) if index.isValid() else -1
        if source is None or record < 0:
            for role_data in roleDataSpan:
                role_data.clearData()
            return
        source.multiData(source.index(record, index.column()), roleDataSpan)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        source = self.sourceModel()
        if source is None:
            return None
        if orientation == Qt.Orientation.Vertical:
            record = self.record_at(section)
            return source.headerData(record, orientation, role) if record >= 0 else None
        return source.headerData(section, orientation, role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        source = self.sourceModel()
        if source is None or not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return source.flags(self.mapToSource(index))

    # -- following the source ---------------------------------------------
    def _source_rows(self) -> int:
        source = self.sourceModel()
        return source.rowCount() if source is not None else 0

    def _begin_reset(self, *_) -> None:
        self.beginResetModel()

    def _end_reset(self, *_) -> None:
        if self._matches is not None:
            self._matches = self._matches[self._matches < self._source_rows()]
        self.endResetModel()
        self.countsChanged.emit()

    def _rows_about_to_be_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._matches is None:
            self.beginInsertRows(QModelIndex(), first, last)

    def _rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._matches is None:
            self.endInsertRows()
        else:
            # records inserted before matches move them down; the new records are not among the matches
            k = int(np.searchsorted(self._matches, first))
            if k < self._matches.shape[0]:
                self._matches[k:] += last - first + 1
                self._changed_rows(k, self._matches.shape[0] - 1)
        self.countsChanged.emit()

    def _rows_about_to_be_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._matches is None:
            self.beginRemoveRows(QModelIndex(), first, last)
            return
        row0 = int(np.searchsorted(self._matches, first, side="left"))
        row1 = int(np.searchsorted(self._matches, last, side="right"))
        self._removing = (first, last, row0, row1)
        if row1 > row0:
            self.beginRemoveRows(QModelIndex(), row0, row1 - 1)

    def _rows_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._matches is None:
            self.endRemoveRows()
            self.countsChanged.emit()
            return
        _, _, row0, row1 = self._removing or (first, last, 0, 0)
        self._removing = None
        kept = np.concatenate([self._matches[:row0], self._matches[row1:] - (last - first + 1)])
        self._matches = kept
        if row1 > row0:
            self.endRemoveRows()
        if row0 < kept.shape[0]:
            self._changed_rows(row0, kept.shape[0] - 1)
        self.countsChanged.emit()

    def _columns_about_to_be_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        self.beginInsertColumns(QModelIndex(), first, last)

    def _columns_about_to_be_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        self.beginRemoveColumns(QModelIndex(), first, last)

    def _data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list = ()) -> None:
        first, last = top_left.row(), bottom_right.row()
        if self._matches is None:
            row0, row1 = first, last
        else:
            row0 = int(np.searchsorted(self._matches, first, side="left"))
            row1 = int(np.searchsorted(self._matches, last, side="right")) - 1
        if 0 <= row0 <= row1:
            self.dataChanged.emit(self.index(row0, top_left.column()), self.index(row1, bottom_right.column()),
                                  list(roles))

    def _changed_rows(self, row0: int, row1: int) -> None:
        columns = self.columnCount()
        if columns and row0 <= row1:
            self.dataChanged.emit(self.index(row0, 0), self.index(row1, columns - 1))
