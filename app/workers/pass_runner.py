"""One codec pass at a time over a file, started once the file's own pass has ended.

The filter, the statistics and the feature spec each read the whole file
on a :class:`~app.workers.worker.GeneratorWorker`. While the file is still being
indexed (or its CRCs verified) a requested pass waits, and starts when the
owner says that pass ended (:meth:`PassRunner.source_idle`, on the session's
``idle``); a new request replaces one that is waiting or running.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from PySide6.QtCore import QObject, Signal

from app.workers.worker import GeneratorWorker


class PassRunner(QObject):
    """``waiting()``, ``started()``, ``progress(obj)``, ``finished(payload, last, cancelled)``, ``failed(str)``.

    ``payload`` is whatever :meth:`start` was given with the pass (its
    result object, the expression...), handed back with the outcome.
    """

    waiting = Signal()
    started = Signal()
    progress = Signal(object)
    finished = Signal(object, object, bool)
    failed = Signal(str)

    def __init__(self, busy: Callable[[], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._busy = busy
        self._worker: GeneratorWorker | None = None
        self._payload: Any = None
        self._queued: tuple[Callable[[], Iterator], Any] | None = None
        self._closed = False
        self._waiting = False  # ``waiting`` was sent for the queued pass: the file's pass runs

    def is_running(self) -> bool:
        return self._worker is not None

    def is_active(self) -> bool:
        return self._worker is not None or self._queued is not None

    def start(self, make: Callable[[], Iterator], payload: Any = None) -> None:
        """Run ``make()`` (a generator factory) as soon as the file is free; replaces any other pass."""
        if self._closed:
            return
        self._queued = (make, payload)
        if self._worker is not None:
            self._worker.cancel()  # its end starts the queued pass
            return
        self._start_queued()

    def cancel(self) -> None:
        """Forget a waiting pass; stop a running one (``finished`` reports it cancelled)."""
        if self._queued is not None and self._worker is None:
            payload = self._queued[1]
            self._queued = None
            self._waiting = False
            self.finished.emit(payload, None, True)
        self._queued = None
        if self._worker is not None:
            self._worker.cancel()

    def source_idle(self) -> None:
        """The file's own pass ended: start a waiting pass now."""
        self._start_queued(force=True)

    def stop(self) -> None:
        """Cancel and wait for the thread (before the file closes)."""
        self._closed = True
        self._queued = None
        self._waiting = False
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def _start_queued(self, force: bool = False) -> None:
        if self._queued is None or self._worker is not None or self._closed:
            self._waiting = False
            return
        if not force and self._busy():
            if not self._waiting:  # source_idle starts it
                self._waiting = True
                self.waiting.emit()
            return
        self._waiting = False
        make, payload = self._queued
        self._queued = None
        self._payload = payload
        worker = GeneratorWorker(make, self)
        worker.progress.connect(self.progress)
        worker.finished.connect(self._finished)
        worker.failed.connect(self._failed)
        self._worker = worker
        worker.start()
        self.started.emit()

    def _finished(self, last: Any) -> None:
        if self._closed:
            return
        worker, self._worker = self._worker, None
        payload, self._payload = self._payload, None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        if self._queued is not None:  # replaced while running: the new pass's turn
            self._start_queued()
            return
        self.finished.emit(payload, last, worker is not None and worker.cancelled)

    def _failed(self, error: str) -> None:
        if self._closed:
            return
        worker, self._worker = self._worker, None
        self._payload = None
        if worker is not None:
            worker.wait()
            worker.deleteLater()
        if self._queued is not None:
            self._start_queued()
            return
        self.failed.emit(error)


class RecomputesWhenShown:
    """Mixin for a panel that goes over records on a worker (``self.runner``).

    Edits, a new filter or another scope only mark it stale (``_stale``); it
    goes over the records again when it is visible, or as soon as it is shown.
    The panel provides ``compute()``, ``_filter_applies()`` and ``_rows`` (the table's rows): a filter
    whose matches are still coming makes it stale only, to go over them once they are all there.
    """

    _stale = True

    def ensure(self) -> None:
        """Compute when there is nothing current to show (called when the panel is shown)."""
        if self._stale and not self.runner.is_active():
            self.compute()

    def source_idle(self) -> None:
        self.runner.source_idle()

    def mark_stale(self) -> None:
        """The records changed: go over them again when next shown (now, if shown)."""
        self._stale = True
        if self.isVisible():
            self.compute()

    def stop(self) -> None:
        self.runner.stop()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.ensure()

    def _scope_changed(self) -> None:
        self.mark_stale()

    def _filter_changed(self) -> None:
        if not self._filter_applies():
            return
        if self._rows.matches_complete:
            self.mark_stale()
        else:
            self._stale = True
