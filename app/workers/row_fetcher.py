"""A remote source's table rows: asked in batches, read on a :class:`~app.workers.row_loader.RowLoader`.

The table asks for each row it paints and has not got; the rows asked in one
turn of the event loop go to the loader as one batch. Each batch carries an
epoch: after :meth:`RowFetcher.drop_answers` (the rows changed) answers to
older batches come back as ``late`` (ask again, if shown). A row the network
failed is shown failed for RETRY_AFTER seconds before it is asked again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app.models.table_rows import UNREADABLE, TableRow
from app.workers.row_loader import RowLoader

RETRY_AFTER = 10.0  # seconds a remote row that could not be read shows so before it is asked again


@dataclass
class Arrival:
    """Rows read for the current epoch: ``rows`` all of them (to repaint), ``kept`` those to cache
    as ``(row number, TableRow, decoded or None)``, ``failure`` the first new error of the batch."""

    rows: list[int]
    kept: list[tuple[int, TableRow, Any]] = field(default_factory=list)
    failure: tuple[int, Exception] | None = None


class RowFetcher(QObject):
    """What a table asked of its loader and what came back (see the module docstring).

    ``job()`` gives the function that reads one row (``RowJob``), taken when
    a batch is sent. Signals: ``arrived(Arrival)``, ``late(list[int])``.
    """

    arrived = Signal(object)
    late = Signal(object)

    def __init__(self, job: Callable[[], Callable[[int], Any]], parent: QObject | None = None, *,
                 capacity: int = 4096, clock: Callable[[], float] = time.monotonic,
                 make_loader: Callable[[QObject], Any] = RowLoader) -> None:
        super().__init__(parent)
        self._job = job
        self._capacity = capacity  # failed rows remembered at most
        self._clock = clock
        self._make_loader = make_loader
        self.loader: Any = None  # made when the first batch is sent
        self._epoch = 0  # grows when answers on their way are not wanted: they are dropped
        self._asked: set[int] = set()  # rows queued or being read
        self._wanted: list[int] = []  # rows asked since the last batch was sent
        self._failed: dict[int, tuple[TableRow, float]] = {}  # rows the network failed: when
        self._reported: Exception | None = None  # the last failure told (the rows after it in a batch share it)
        self._closed = False
        self._send_timer = QTimer(self)
        self._send_timer.setSingleShot(True)
        self._send_timer.setInterval(0)
        self._send_timer.timeout.connect(self._send_wanted)

    def failed_row(self, i: int) -> TableRow | None:
        """Row ``i`` as shown after the network failed it, while it is not to be asked again yet."""
        failed = self._failed.get(i)
        if failed is not None and self._clock() - failed[1] < RETRY_AFTER:
            return failed[0]
        return None

    def ask(self, i: int) -> None:
        """Queue row ``i``; the rows asked in one turn of the event loop go as one batch."""
        if i in self._asked or self._closed:
            return
        self._asked.add(i)
        self._wanted.append(i)
        if not self._send_timer.isActive():
            self._send_timer.start()

    def pending(self) -> int:
        """Rows asked and not back yet."""
        return len(self._asked)

    def forget(self) -> None:
        """The rows are not what they were: drop answers on their way, and failures remembered."""
        self._failed.clear()
        self.drop_answers()

    def drop_answers(self) -> None:
        """Rows asked so far are not wanted: their answers are dropped when they come."""
        if self._asked or self._wanted or self.loader is not None:
            self._epoch += 1
            self._asked.clear()
            self._wanted.clear()
            if self.loader is not None:
                self.loader.forget(self._epoch)

    def close(self) -> None:
        """Ask nothing more: queued rows are dropped, the one being read is waited for."""
        self._closed = True
        self._send_timer.stop()
        self._asked.clear()
        self._wanted.clear()
        if self.loader is not None:
            self.loader.close()

    def _send_wanted(self) -> None:
        rows, self._wanted = sorted(self._wanted), []
        if not rows or self._closed:
            return
        if self.loader is None:
            self.loader = self._make_loader(self)
            self.loader.loaded.connect(self._loaded)
        dropped = self.loader.want(self._epoch, rows, self._job())
        self._asked.difference_update(dropped)

    def _loaded(self, epoch: int, results: list) -> None:
        """Rows read by the loader: sorted into kept and failed (an older epoch's: ``late``)."""
        if self._closed or not results:
            return
        if epoch != self._epoch:
            self.late.emit([i for i, _ in results])
            return
        arrival = Arrival([i for i, _ in results])
        for i, out in results:
            self._asked.discard(i)
            if isinstance(out, Exception):  # the row job itself failed (it says why in a row)
                out = TableRow(None, None, error=UNREADABLE), out, None
            row, exc, decoded = out
            if exc is not None and arrival.failure is None and exc is not self._reported:  # a batch's rows share one
                arrival.failure = (i, exc)
            if isinstance(exc, OSError):  # the network or the server: shown so for a while, then read again
                self._failed[i] = row, self._clock()
                if len(self._failed) > self._capacity:
                    del self._failed[next(iter(self._failed))]
            else:
                self._failed.pop(i, None)
                arrival.kept.append((i, row, decoded))
        if arrival.failure is not None:
            self._reported = arrival.failure[1]
        self.arrived.emit(arrival)
