"""The rows the record table and the gallery show: every record, or a filter's matches, one window at a time.

:class:`FilteredTableModel` is a thin proxy over
:class:`~app.models.record_table_model.RecordTableModel`. The *matching records* are
every record, or, filtered, the sorted array of record numbers
:func:`codec.query.filter.filter_iter` found: 8 bytes per match and no Python object
per row (a ``QSortFilterProxyModel`` keeps a mapping entry per source row and
re-filters on every change, which millions of rows cannot afford).

The view shows a *window* of at most :attr:`FilteredTableModel.window_rows`
consecutive matching records, starting at match ``window_start``: Qt keeps a
view's pixel positions in 32-bit ints, so rows × row height must stay under
2^31 px (about 97 million rows of 22 px). Files with fewer matching records
than the window see no difference. Larger ones are paged: :meth:`reveal` moves
the window to a record, and the page bar steps it. View row ``r`` is matching
record ``window_start + r``. Use :meth:`record_at` / :meth:`row_for_record`
(or ``mapToSource`` / ``mapFromSource``) between view rows and records, and
:meth:`matching_count` / :meth:`matches` for "all the records shown", never
``rowCount()`` (that is the window).

Sorted (:meth:`set_order`), the matching records are shown in a given order:
position ``p`` is the ``p``-th matching record of that order (the order's
array, restricted to the matches, and made once needed its inverse: 4 bytes
per record each below 2^31 records; :class:`~app.models.sort_order.SortOrder`
keeps them). Records added, removed or moved (a reset of the source) return
the view to file order (their keys are not known).
"""
from __future__ import annotations

from array import array
from typing import Any, Sequence

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from app.models.record_table_model import RecordTableModel
from app.models.sort_order import SortOrder
from codec.editing.document import sorted_unique

_Index = QModelIndex | QPersistentModelIndex

MAX_VIEW_PIXELS = 2**31 - 1  # QHeaderView's pixel positions are ints
DEFAULT_WINDOW_ROWS = 50_000_000
# What QAbstractTableModel.flags gives a valid cell (the record table keeps it).
_CELL_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren


def window_rows_for(row_height: int, cap: int = DEFAULT_WINDOW_ROWS) -> int:
    """The most rows a view with rows ``row_height`` px high can show, with a 10 % margin, at most ``cap``."""
    return max(1, min(cap, int(MAX_VIEW_PIXELS * 0.9) // max(1, row_height)))


class FilteredTableModel(QAbstractProxyModel):
    """Rows = a window over all records of the source, or over the records of a filter.

    Signals: ``filter_changed()`` when a filter is set or cleared;
    ``counts_changed()`` when :meth:`matching_count` or :meth:`total` may read
    differently (rows appended while indexing, edits); ``window_changed()``
    when the window's start or length may have changed; ``sort_changed()`` when the
    order shown (:attr:`sort_column`, :attr:`sort_descending`) changed.
    """

    filter_changed = Signal()
    counts_changed = Signal()
    window_changed = Signal()
    sort_changed = Signal()

    window_rows: int = DEFAULT_WINDOW_ROWS  # the most rows shown at once (tests lower it on the class)

    def __init__(self, source, parent=None) -> None:
        super().__init__(parent)
        self._matches: np.ndarray | None = None  # sorted int64 record numbers, or None: every record
        self.matches_complete = True  # False while a running filter's matches are still coming
        self._expression = ""
        self._start = 0  # the matching record (position) shown in view row 0
        self._rows = 0  # view rows, as announced to views
        self._removing: tuple[int, int, int, int] | None = None  # (first, last, p, q) of a removal
        self._inserting = 0  # view rows a source insertion adds (between its begin and end)
        self._shift = 0  # records inserted before the window (its start moves by as many)
        self._sort = SortOrder()
        self._unsorting = False  # a source insertion or removal returns to file order (a reset)
        self.setSourceModel(source)

    # -- the filter -------------------------------------------------------
    def set_matches(self, matches: Sequence[int] | array | np.ndarray | None, expression: str = "",
                    complete: bool = True) -> None:
        """Show only these records (sorted record numbers), or every record with None; the window goes to the start.
        ``complete`` False: a running filter's matches are still coming (:meth:`append_matches`), until it sets
        them again complete (:attr:`matches_complete`)."""
        self.matches_complete = complete or matches is None
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
            values = sorted_unique([values])  # sorted, once each (np.unique: 0.7 s for 1M matches)
            self._matches = values[(values >= 0) & (values < self._source_rows())]
            self._expression = expression
        self._reshow()
        self._start = 0
        self._rows = self._window_length()
        self.endResetModel()
        self.filter_changed.emit()
        self.counts_changed.emit()
        self.window_changed.emit()

    def append_matches(self, records: np.ndarray) -> None:
        """Add a running filter's next matches (sorted record numbers after those shown) at the end.

        Rows are inserted (no reset: the selection and scroll stay) while the window has room;
        the matches are kept in a buffer that doubles as it fills, so a pass's many batches
        cost no more than one array.
        """
        if self._matches is None:
            return
        n = int(self._matches.shape[0])
        values = np.asarray(records, dtype=np.int64)
        low = int(self._matches[-1]) + 1 if n else 0
        values = values[(values >= low) & (values < self._source_rows())]
        if not values.size:
            return
        buffer = getattr(self, "_growing", None)  # the matches are its start while only appends change them
        if buffer is None or self._matches.base is not buffer or buffer.shape[0] < n + values.size:
            buffer = np.empty(max(1024, 2 * (n + values.size)), dtype=np.int64)
            buffer[:n] = self._matches
            self._growing = buffer
        before = (self._sorted(), self._start, self._rows) if self._sort.order is not None else None
        buffer[n:n + values.size] = values
        self._matches = buffer[:n + values.size]
        length = self._window_length()
        if length > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, length - 1)
            self._rows = length
            self.endInsertRows()
        if before is not None:  # sorted: the new matches take their places among the rows, which move
            self._move_persistent(*before)
        self.counts_changed.emit()
        self.window_changed.emit()

    def _move_persistent(self, shown: np.ndarray, start: int, rows: int) -> None:
        """A layout change: each persistent index (selection, current row) follows the record it showed
        (row ``r`` < ``rows`` showed ``shown[start + r]``) to its row now, or goes when it left the window."""
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        after = []
        for index in before:
            row = self.row_for_record(int(shown[start + index.row()])) if 0 <= index.row() < rows else -1
            after.append(self.index(row, index.column()) if row >= 0 else QModelIndex())
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def clear_filter(self) -> None:
        if self._matches is not None:
            self.set_matches(None)

    # -- the order ------------------------------------------------------
    def set_order(self, order: np.ndarray | None, column: int = -1, descending: bool = False) -> None:
        """Show the matching records in ``order`` (every record number once), or in file order with
        None; ``column`` and ``descending`` are what the header's indicator shows (-1: none). The
        window goes to the start."""
        if order is not None and order.shape[0] != self._source_rows():
            order = None  # (records came or went since the order was made)
            column = -1
        self.beginResetModel()
        self._sort.order = order
        self._sort.column, self._sort.descending = column, descending
        self._reshow()
        self._start = 0
        self._rows = self._window_length()
        self.endResetModel()
        self.sort_changed.emit()
        self.window_changed.emit()

    def set_sort_column(self, column: int) -> None:
        """The sorted column moved to ``column`` (columns were shown or hidden): the order stays."""
        if self._sort.order is not None or self._sort.column >= 0:
            self._sort.column = column
            self.sort_changed.emit()

    @property
    def sort_column(self) -> int:
        """The column the rows are sorted by (-1: file order)."""
        return self._sort.column

    @property
    def sort_descending(self) -> bool:
        return self._sort.descending

    def _reshow(self) -> None:
        self._sort.reshow(self._matches, self._source_rows())

    def _sorted(self) -> np.ndarray | None:
        return self._sort.sorted(self._matches, self._source_rows())

    @property
    def is_filtered(self) -> bool:
        return self._matches is not None

    @property
    def expression(self) -> str:
        """The expression of the filter shown ("" when unfiltered)."""
        return self._expression

    def matches(self) -> np.ndarray | None:
        """Every matching record number (a read-only view, not only the window), or None when unfiltered."""
        if self._matches is None:
            return None
        view = self._matches.view()
        view.flags.writeable = False
        return view

    def matching_count(self) -> int:
        """How many records match: the filter's matches, or every record (all pages, not only the window)."""
        shown = self._sorted()
        if shown is not None:
            return int(shown.shape[0])
        return self._source_rows() if self._matches is None else int(self._matches.shape[0])

    def shown(self) -> int:
        """How many records the view shows over all its pages (:meth:`matching_count`)."""
        return self.matching_count()

    def total(self) -> int:
        """How many records the file has (indexed so far)."""
        return self._source_rows()

    def matching_record(self, position: int) -> int:
        """The record number of the ``position``-th matching record (-1 when out of range)."""
        if position < 0:
            return -1
        shown = self._sorted()
        if shown is not None:
            return int(shown[position]) if position < shown.shape[0] else -1
        if self._matches is None:
            return position if position < self._source_rows() else -1
        return int(self._matches[position]) if position < self._matches.shape[0] else -1

    def records_of_rows(self, first: int, last: int) -> np.ndarray:
        """The record numbers of view rows ``first``..``last`` (inclusive), as one int64 array."""
        lo = self._start + max(0, first)
        hi = self._start + min(last, self._rows - 1) + 1
        if hi <= lo:
            return np.zeros(0, dtype=np.int64)
        shown = self._sorted()
        if shown is not None:
            return shown[lo:hi].astype(np.int64)
        if self._matches is None:
            return np.arange(lo, min(hi, self._source_rows()), dtype=np.int64)
        return self._matches[lo:hi].astype(np.int64, copy=False)

    def position_of(self, record: int, nearest: bool = False) -> int:
        """Where ``record`` is among the matching records; -1 when it is not one (or the nearest with ``nearest``)."""
        n = self.matching_count()
        if record < 0 or not n:
            return -1
        if self._sorted() is not None:
            return self._sort.position(record, nearest, self._matches, self._source_rows())
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

    # -- the window -------------------------------------------------------
    @property
    def window_start(self) -> int:
        """The position (among the matching records) of view row 0."""
        return self._start

    def is_paged(self) -> bool:
        """True when the window does not hold every matching record."""
        return self._start > 0 or self._start + self._rows < self.matching_count()

    def set_window_rows(self, rows: int) -> bool:
        """Show at most ``rows`` rows at once (all from the first when they fit, else the
        window keeps its start where it can).

        True when the rows shown changed (a model reset: the caller restores the selection).
        """
        rows = max(1, int(rows))
        if rows == self.window_rows:
            return False
        if self._start == 0 and self.matching_count() <= min(rows, self.window_rows):
            self.window_rows = rows  # every record shown before and after: nothing moves
            return False
        self.beginResetModel()
        self.window_rows = rows
        self._start = 0 if self.matching_count() <= rows else self._clamped_start(self._start)
        self._rows = self._window_length()
        self.endResetModel()
        self.window_changed.emit()
        return True

    def set_window_start(self, start: int) -> None:
        """Show the matching records from position ``start`` on (a model reset when it moves)."""
        start = self._clamped_start(start)
        if start == self._start and self._rows == self._window_length():
            return
        self.beginResetModel()
        self._start = start
        self._rows = self._window_length()
        self.endResetModel()
        self.window_changed.emit()

    def page_start(self, position: int) -> int:
        """The start of the page holding ``position``: pages are ``window_rows`` long from the window's start."""
        w = self.window_rows
        return max(0, self._start + ((position - self._start) // w) * w)

    def show_position(self, position: int) -> int:
        """Move the window (if needed) so it holds matching position ``position``; return its view row (-1 if none)."""
        if not 0 <= position < self.matching_count():
            return -1
        if not self._start <= position < self._start + self._rows:
            self.set_window_start(self.page_start(position))
        return position - self._start

    def reveal(self, record: int, nearest: bool = False) -> int:
        """The view row showing ``record`` after moving the window to it; -1 when it does not match.

        With ``nearest``, the nearest matching record's row instead.
        """
        return self.show_position(self.position_of(record, nearest))

    def record_at(self, row: int) -> int:
        """The record number of view row ``row`` (-1 when out of range)."""
        if not 0 <= row < self._rows:
            return -1
        return self.matching_record(self._start + row)

    def row_for_record(self, record: int, nearest: bool = False) -> int:
        """The view row showing ``record``; -1 when filtered out or outside the window.

        With ``nearest``, the row of the nearest matching record, clamped to the
        window (see :meth:`reveal` to move the window there instead).
        """
        k = self.position_of(record, nearest)
        if k < 0 or not self._rows:
            return -1
        row = k - self._start
        if 0 <= row < self._rows:
            return row
        return min(max(row, 0), self._rows - 1) if nearest else -1

    def _window_length(self) -> int:
        return max(0, min(self.window_rows, self.matching_count() - self._start))

    def _clamped_start(self, start: int) -> int:
        n = self.matching_count()
        start = max(0, start)
        if start < n:
            return start
        return self.page_start(n - 1) if n else 0

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
        self._sort.drop()
        self._start = 0
        self._rows = self._window_length()
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
        if parent.isValid() or not (0 <= row < self._rows and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        return QModelIndex()

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:
        return not parent.isValid() and self._rows > 0

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        """The rows of the window (see :meth:`matching_count` for all of them)."""
        return 0 if parent.isValid() else self._rows

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
        table = self.sourceModel()
        record = self.record_at(index.row()) if index.isValid() else -1
        if table is None or record < 0:
            for role_data in roleDataSpan:
                role_data.clearData()
            return
        if isinstance(table, RecordTableModel):  # straight to the record, no source index made
            table.fill_cell(record, index.column(), roleDataSpan)
        else:
            table.multiData(table.index(record, index.column()), roleDataSpan)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        source = self.sourceModel()
        if source is None:
            return None
        if orientation == Qt.Orientation.Vertical:
            record = self.record_at(section)
            return source.headerData(record, orientation, role) if record >= 0 else None
        return source.headerData(section, orientation, role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        # Asked for every painted cell: the records' rows are all alike (the source keeps
        # QAbstractTableModel's flags), so no mapping and no call into the source.
        if not index.isValid() or self.sourceModel() is None:
            return Qt.ItemFlag.NoItemFlags
        return _CELL_FLAGS

    # -- following the source ---------------------------------------------
    def _source_rows(self) -> int:
        source = self.sourceModel()
        return source.rowCount() if source is not None else 0

    def _begin_reset(self, *_) -> None:
        self.beginResetModel()

    def _end_reset(self, *_) -> None:
        if self._matches is not None:
            self._matches = self._matches[self._matches < self._source_rows()]
        unsorted = self._sort.order is not None  # the records may have moved: their order is not known
        if unsorted:
            self._sort.drop()
        self._reshow()
        self._start = self._clamped_start(self._start)
        self._rows = self._window_length()
        self.endResetModel()
        self.counts_changed.emit()
        self.window_changed.emit()
        if unsorted:
            self.sort_changed.emit()

    def _begin_unsort(self) -> None:
        """Records are added or removed while sorted: back to file order, by a reset."""
        self._unsorting = True
        self.beginResetModel()
        self._sort.drop()

    def _end_unsort(self) -> None:
        self._unsorting = False
        self._start = self._clamped_start(self._start)
        self._rows = self._window_length()
        self.endResetModel()
        self.counts_changed.emit()
        self.window_changed.emit()
        self.sort_changed.emit()

    def _rows_about_to_be_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        """Unfiltered, new records are new matching positions: in the window, before it, or past its end.

        Records inserted before the window move its start along (the same
        records stay on screen); inside it they are inserted, and rows pushed
        past the window's end leave it first; past the end of a full window
        they only add to the count.
        """
        self._inserting = self._shift = 0
        if self._sort.order is not None:
            self._begin_unsort()
            return
        if self._matches is not None:
            return
        n = last - first + 1
        start, rows, w = self._start, self._rows, self.window_rows
        if first < start:
            self._shift = n
            return
        at = first - start
        if at > rows:
            return
        added = min(n, w - at)
        if added <= 0:
            return
        overflow = rows + added - w
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), rows - overflow, rows - 1)
            self._rows -= overflow
            self.endRemoveRows()
        self.beginInsertRows(QModelIndex(), at, at + added - 1)
        self._inserting = added

    def _rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._unsorting:
            if self._matches is not None:
                self._matches[self._matches >= first] += last - first + 1
            self._end_unsort()
            return
        if self._matches is None:
            if self._inserting:
                self._rows += self._inserting
                self._inserting = 0
                self.endInsertRows()
            self._start += self._shift
            self._shift = 0
        else:
            # records inserted before matches move them down; the new records are not among the matches
            k = int(np.searchsorted(self._matches, first))
            if k < self._matches.shape[0]:
                self._matches[k:] += last - first + 1
                self._changed_rows(k - self._start, self._rows - 1)
        self.counts_changed.emit()
        self.window_changed.emit()

    def _rows_about_to_be_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._sort.order is not None:
            self._begin_unsort()
            return
        if self._matches is None:
            p, q = first, last + 1
        else:
            p = int(np.searchsorted(self._matches, first, side="left"))
            q = int(np.searchsorted(self._matches, last, side="right"))
        self._removing = (first, last, p, q)
        a, b = max(p, self._start), min(q, self._start + self._rows)
        if a < b:
            self.beginRemoveRows(QModelIndex(), a - self._start, b - self._start - 1)

    def _rows_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        """Removed matching records leave the window; records before it move its start back; it fills up again."""
        if self._unsorting:
            if self._matches is not None:
                kept = self._matches[(self._matches < first) | (self._matches > last)]
                self._matches = np.where(kept > last, kept - (last - first + 1), kept)
            self._end_unsort()
            return
        _, _, p, q = self._removing or (first, last, 0, 0)
        self._removing = None
        start, rows = self._start, self._rows
        if self._matches is not None:
            self._matches = np.concatenate([self._matches[:p], self._matches[q:] - (last - first + 1)])
        inside = max(0, min(q, start + rows) - max(p, start))
        self._start -= max(0, min(q, start) - p)
        if inside:
            self._rows -= inside
            self.endRemoveRows()
        if self._matches is not None:
            self._changed_rows(p - self._start, self._rows - 1)  # the records after the removed ones have new numbers
        length = self._window_length()
        if length > self._rows:  # records after the window move into it
            self.beginInsertRows(QModelIndex(), self._rows, length - 1)
            self._rows = length
            self.endInsertRows()
        if not self._rows and self.matching_count():  # the last page emptied: show the one before
            self.set_window_start(self._start)
        self.counts_changed.emit()
        self.window_changed.emit()

    def _columns_about_to_be_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        self.beginInsertColumns(QModelIndex(), first, last)

    def _columns_about_to_be_removed(self, parent: QModelIndex, first: int, last: int) -> None:
        self.beginRemoveColumns(QModelIndex(), first, last)

    def _data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list = ()) -> None:
        first, last = top_left.row(), bottom_right.row()
        if self._sort.order is not None:  # the records changed may be on any row: the window's rows
            if self._rows:
                self.dataChanged.emit(self.index(0, top_left.column()),
                                      self.index(self._rows - 1, bottom_right.column()), list(roles))
            return
        if self._matches is None:
            p, q = first, last + 1
        else:
            p = int(np.searchsorted(self._matches, first, side="left"))
            q = int(np.searchsorted(self._matches, last, side="right"))
        row0, row1 = max(p, self._start) - self._start, min(q, self._start + self._rows) - self._start - 1
        if 0 <= row0 <= row1:
            self.dataChanged.emit(self.index(row0, top_left.column()), self.index(row1, bottom_right.column()),
                                  list(roles))

    def _changed_rows(self, row0: int, row1: int) -> None:
        columns = self.columnCount()
        row0 = max(0, row0)
        if columns and row0 <= row1:
            self.dataChanged.emit(self.index(row0, 0), self.index(row1, columns - 1))
