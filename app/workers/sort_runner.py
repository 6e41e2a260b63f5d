"""Sorting the record table by a column: the key pass on a worker, then the rows in the new order.

A click on a header sorts ascending, a second click on it descending (the
ascending order reversed, no pass), a third returns to file order. ``#``,
``Offset`` and a shard set's ``Shard`` are file order (no pass), ``Status``
comes from the index (no pass); ``Size``, ``Kind`` and a feature read every
record (:func:`codec.stats.sort_keys.sort_iter`, on the pool where it pays).
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app.models.filtered_table_model import FilteredTableModel
from app.models.record_table_model import BASE_COLUMNS, Column
from app.workers.pass_runner import PassRunner
from codec.index.scan import IndexProgress
from codec.sources.protocol import RecordSource
from codec.stats.sort_keys import SortKey, SortOrder, file_order, sort_iter

_BASE_KEYS = {Column.INDEX: "number", Column.OFFSET: "offset", Column.SIZE: "size", Column.KIND: "kind",
              Column.STATUS: "status"}


class TableSorter(QObject):
    """Sorts ``rows`` by the column a header click names.

    Signals: ``state_changed()`` when :meth:`is_running` or :attr:`fraction` may read
    differently, ``message(str)`` a one-line note for the status bar.
    ``source()`` is what the pass reads (the records the table shows),
    ``busy()`` whether the file's own pass still runs (the sort then waits for
    ``runner.source_idle()``; ``runner.cancel()`` stops it); ``current()`` / ``select(record)`` keep the current
    record selected across a sort.
    """

    state_changed = Signal()
    message = Signal(str)

    def __init__(self, rows: FilteredTableModel, source: Callable[[], RecordSource], busy: Callable[[], bool],
                 current: Callable[[], int], select: Callable[[int], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows, self._source = rows, source
        self._current, self._select = current, select
        self.fraction = 0.0
        self._ascending: SortOrder | None = None  # the shown column's ascending order (for its reverse)
        self._key: SortKey | None = None  # what the order shown sorts by
        self._following = False  # a check of where the sorted column went is due
        self.runner = PassRunner(busy, self)
        self.runner.started.connect(self.state_changed)
        self.runner.progress.connect(self._progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        rows.sort_changed.connect(self._sort_changed)
        rows.columnsInserted.connect(self._columns_changed)
        rows.columnsRemoved.connect(self._columns_changed)

    def is_running(self) -> bool:
        return self.runner.is_active()

    def key_of(self, column: int) -> SortKey:
        """What sorting by ``column`` compares (a shard set's Shard column: file order)."""
        if column < BASE_COLUMNS:
            return SortKey(_BASE_KEYS[Column(column)])
        table = self.rows.sourceModel()
        features = table.feature_columns()
        if column - BASE_COLUMNS < len(features):
            return SortKey("feature", features[column - BASE_COLUMNS])
        return SortKey("number")

    def header_clicked(self, column: int) -> None:
        """Sort ascending by ``column``; sorted so already: descending; descending: file order."""
        rows = self.rows
        if rows.sort_column == column and rows.sort_descending:
            self.runner.cancel()
            self._show(None, -1, False, None)
            self.message.emit("rows in file order")
            return
        key = self.key_of(column)
        if rows.sort_column == column and self._ascending is not None:
            ascending = self._ascending
            self._start(lambda: _reversing(ascending), (column, key, True))
            return
        if key.what in ("number", "offset"):
            self.runner.cancel()
            self._ascending = file_order(rows.total())
            self._show(self._ascending, column, False, key)
            return
        source = self._source()
        self._start(lambda: _sorting(source, key), (column, key, False))

    def _start(self, make, payload) -> None:
        self.fraction = 0.0
        self.runner.start(make, payload)
        self.message.emit(f"sorting by {payload[1]}…")
        self.state_changed.emit()

    def _progress(self, p) -> None:
        if isinstance(p, IndexProgress):
            self.fraction = p.fraction
            self.state_changed.emit()

    def _finished(self, payload, last, cancelled: bool) -> None:
        self.state_changed.emit()
        column, key, descending = payload
        if cancelled or not isinstance(last, _Done):
            self.message.emit(f"sort by {key} stopped: the rows stay as they were")
            return
        order = last.order
        if len(order) != self.rows.total():
            self.message.emit(f"the records changed while they were sorted by {key}: click again to sort them")
            return
        if not descending:
            self._ascending = order
        self._show(order, column, descending, key)
        keyless = f" ({order.empty:,} without a value, last)" if order.empty else ""
        self.message.emit(f"sorted {len(order):,} records by {key}, {'descending' if descending else 'ascending'}"
                          f"{keyless}")

    def _failed(self, error: str) -> None:
        self.state_changed.emit()
        self.message.emit(f"sort failed: {error}")

    def _show(self, order: SortOrder | None, column: int, descending: bool, key: SortKey | None) -> None:
        self._key = key
        record = self._current()
        self.rows.set_order(None if order is None else order.order, column, descending)
        if record >= 0:
            self._select(record)

    def _sort_changed(self) -> None:
        if self.rows.sort_column < 0:  # file order again (asked for, or records came or went)
            self._ascending = self._key = None

    def _columns_changed(self, *_) -> None:
        """Feature columns were shown or hidden: once they settle, the indicator follows the sorted column."""
        if not self._following:
            self._following = True
            QTimer.singleShot(0, self, self._follow_column)

    def _follow_column(self) -> None:
        self._following = False
        old, key = self.rows.sort_column, self._key
        if old < BASE_COLUMNS or key is None:  # (the fixed columns stay where they are)
            return
        moved = [c for c in range(BASE_COLUMNS, self.rows.columnCount()) if self.key_of(c) == key]
        if moved:
            self.rows.set_sort_column(moved[0])
            return
        self._show(None, -1, False, None)
        self.message.emit(f"the rows are in file order again: {key} is no longer shown")


class _Done:
    """What a sort yields last: its order."""

    def __init__(self, order: SortOrder) -> None:
        self.order = order


def _sorting(source: RecordSource, key: SortKey):
    """The key pass over ``source``, ending with the order (a :class:`_Done`)."""
    into: list[SortOrder] = []
    for p in sort_iter(source, key, into):
        if not p.done:
            yield p
    yield _Done(into[0])


def _reversing(ascending: SortOrder):
    yield _Done(ascending.reversed())


__all__ = ["TableSorter"]
