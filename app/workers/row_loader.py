"""Table rows of a remote source, read on one background thread.

Reading a record of a URL is a network round trip (tens of milliseconds, up
to a timeout on a bad network): too slow to make while a view paints. The
record table asks :class:`RowLoader` for the rows it has not got; the loader
reads them on its own thread, newest batch first (the rows on screen now),
and hands the results back as ``loaded(epoch, results)`` on the GUI thread.
Each batch carries the asker's epoch: a batch from an older one is dropped
unread, and the asker drops answers from an older one.
:attr:`codec.sources.protocol.RecordSource.is_remote` says which sources need this.
"""
from __future__ import annotations

import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.workers.worker import GUI_SWITCH_INTERVAL

MAX_QUEUED_ROWS = 2048  # rows asked longest ago are dropped past this (scrolled away long since)
FLUSH_INTERVAL = 0.05  # results go back at least this often while a batch is read


@dataclass
class _Batch:
    epoch: int
    rows: deque[int]
    load: Callable[[int], Any]


class _Drain(QRunnable):
    """Reads queued rows until the queue is empty, sending results back in groups."""

    def __init__(self, loader: RowLoader) -> None:
        super().__init__()
        self._loader = loader

    def run(self) -> None:
        loader = self._loader
        out: list[tuple[int, Any]] = []
        epoch = None
        sent = time.monotonic()
        while True:
            taken = loader._take()
            if taken is None or (out and taken[0].epoch != epoch):
                if out:
                    loader._send(epoch, out)
                    out, sent = [], time.monotonic()
                if taken is None:
                    return
            batch, i = taken
            epoch = batch.epoch
            try:
                result = batch.load(i)
            except Exception as exc:  # noqa: BLE001 - the asker turns it into a row that says why
                result = exc
            out.append((i, result))
            if time.monotonic() - sent >= FLUSH_INTERVAL:
                loader._send(epoch, out)
                out, sent = [], time.monotonic()


class RowLoader(QObject):
    """Reads rows on one private thread: ``loaded(epoch, [(row, load(row)), ...])``.

    ``load`` is given with each batch and must not touch Qt; an exception it
    raises comes back as the row's result.
    """

    loaded = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._batches: deque[_Batch] = deque()  # newest first
        self._queued = 0
        self._epoch = 0
        self._draining = False
        self._closed = False
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)

    def want(self, epoch: int, rows: Iterable[int], load: Callable[[int], Any]) -> list[int]:
        """Read ``rows`` with ``load`` before anything queued earlier.

        Returns the rows dropped unread to keep the queue bounded (the ones
        asked longest ago, or ``rows`` themselves once closed).
        """
        batch = _Batch(epoch, deque(rows), load)
        dropped: list[int] = []
        with self._lock:
            if self._closed:
                return list(batch.rows)
            if epoch != self._epoch:
                self._clear(epoch)
            self._batches.appendleft(batch)
            self._queued += len(batch.rows)
            while self._queued > MAX_QUEUED_ROWS and len(self._batches) > 1:
                old = self._batches.pop()
                self._queued -= len(old.rows)
                dropped.extend(old.rows)
            start = not self._draining
            self._draining = True
        if start:
            if sys.getswitchinterval() > GUI_SWITCH_INTERVAL:
                sys.setswitchinterval(GUI_SWITCH_INTERVAL)  # painting waits less for the GIL (app.workers.worker)
            self.pool.start(_Drain(self))
        return dropped

    def forget(self, epoch: int) -> None:
        """Rows asked before ``epoch`` are not wanted: drop them (a row being read ends, its answer is late)."""
        with self._lock:
            self._clear(epoch)

    def pending(self) -> int:
        """Rows queued, not read yet."""
        with self._lock:
            return self._queued

    def is_busy(self) -> bool:
        """Rows are queued or being read."""
        with self._lock:
            return self._draining

    def close(self) -> None:
        """Read nothing more and send nothing more; waits for the row being read (its store's timeouts bound it)."""
        with self._lock:
            self._closed = True
            self._clear(self._epoch)
        self.pool.waitForDone()

    def _clear(self, epoch: int) -> None:
        self._epoch = epoch
        self._batches.clear()
        self._queued = 0

    # -- on the loader's thread ---------------------------------------------
    def _take(self) -> tuple[_Batch, int] | None:
        with self._lock:
            while self._batches and not self._closed:
                batch = self._batches[0]
                if batch.rows and batch.epoch == self._epoch:
                    self._queued -= 1
                    return batch, batch.rows.popleft()
                self._queued -= len(batch.rows)
                self._batches.popleft()
            self._draining = False
            return None

    def _send(self, epoch: int, results: list[tuple[int, Any]]) -> None:
        with self._lock:
            if self._closed:
                return
        try:
            self.loaded.emit(epoch, results)
        except RuntimeError:
            pass  # the loader was deleted while a row was read
