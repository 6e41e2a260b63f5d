"""Reading a log's scalar and histogram points on a worker, and more of them as a followed file grows.

A :class:`ScalarsLoader` reads the tab's records (its event files) with
:func:`codec.ops.scalar_series.log_points_iter` once the file's own pass has
ended (:class:`~app.workers.pass_runner.PassRunner`), and keeps them in a
:class:`codec.ops.scalar_series.LogSeries`, which only the GUI thread touches: the
worker hands its points over through a queue, drained at each progress and at its end.
:meth:`ScalarsLoader.read_more` reads the records appended since (Follow).
"""
from __future__ import annotations

from collections import deque
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.workers.pass_runner import PassRunner
from codec.ops.scalar_series import EventPoints, LogSeries, PointsBatch, log_points_iter
from codec.sources.protocol import RecordSource


class _Pass:
    """One reading pass: where it starts, its reader, the points it found and not yet handed over."""

    def __init__(self, start: int, reader: EventPoints) -> None:
        self.start = start
        self.reader = reader
        self.queue: deque[PointsBatch] = deque()
        self.records = 0  # records gone through (set by the last batch handed over)


class ScalarsLoader(QObject):
    """``points_added()``: the series has new points; ``progress(float)``; ``finished(bool cancelled)``;
    ``failed(str)``; ``waiting()``: the file's own pass runs first."""

    points_added = Signal()
    progress = Signal(float)
    finished = Signal(bool)
    failed = Signal(str)
    waiting = Signal()
    started = Signal()

    def __init__(self, source: Callable[[], RecordSource], busy: Callable[[], bool],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self.series = LogSeries()
        self.read_to = 0  # the records read so far (the next pass starts there)
        self._reader = EventPoints()
        self._more = False  # records were appended while a pass ran: read them after it
        self._run: _Pass | None = None  # the latest pass started
        self.runner = PassRunner(busy, self)
        self.runner.waiting.connect(self.waiting)
        self.runner.started.connect(self.started)
        self.runner.progress.connect(self._progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)

    @property
    def not_events(self) -> int:
        """Intact records read so far that are not Events (left out)."""
        return self._reader.not_events

    def source(self) -> RecordSource:
        return self._source()

    def is_active(self) -> bool:
        return self.runner.is_active()

    def load(self) -> None:
        """Read every record again, from the first (a new series)."""
        self.series = LogSeries()
        self._reader = EventPoints()
        self.read_to = 0
        self._more = False
        self._start(0)

    def read_more(self) -> None:
        """Read the records appended since the last pass (after the running one, if any)."""
        if self.runner.is_active():
            self._more = True
            return
        if _complete(self._source()) > self.read_to:
            self._start(self.read_to)

    def cancel(self) -> None:
        self.runner.cancel()

    def stop(self) -> None:
        self.runner.stop()

    def _start(self, start: int) -> None:
        run = self._run = _Pass(start, self._reader)

        def steps():  # (the source is looked at when the pass starts: after its own pass, which may still run)
            source = self._source()
            stop = _complete(source)
            for batch in log_points_iter(source, run.reader, start, None if start == 0 and stop == len(source)
                                         else stop):
                run.queue.append(batch)
                yield batch

        self.runner.start(steps, run)

    def _drain(self, run: _Pass) -> None:
        added = False
        while run.queue:
            batch = run.queue.popleft()
            run.records = batch.records
            if len(batch.found):
                self.series.merge(batch.found)
                added = True
        if added:
            self.points_added.emit()

    def _progress(self, batch: PointsBatch) -> None:
        self.progress.emit(batch.fraction)
        if self._run is not None:
            self._drain(self._run)

    def _finished(self, run: _Pass, _last, cancelled: bool) -> None:
        self._drain(run)
        self.read_to = run.start + run.records
        self.finished.emit(cancelled)
        if self._more and not cancelled:
            self._more = False
            self.read_more()

    def _failed(self, error: str) -> None:
        self.failed.emit(error)


def _complete(source: RecordSource) -> int:
    """The records whose bytes are all there (a followed file's last one may still be being written)."""
    return source.complete_records
