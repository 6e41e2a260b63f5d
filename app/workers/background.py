"""Run one short function on a QThreadPool and hand its result back to the GUI thread.

For bounded jobs (read and decode one large record, decode one large image);
long generator passes use :mod:`app.workers.worker` instead. Results and errors arrive
as signals of a :class:`PoolJobs` that lives on the GUI thread, tagged with the
caller's ticket so stale answers (the user moved on) can be dropped.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.workers.worker import one_line


class _Job(QRunnable):
    def __init__(self, owner: PoolJobs, ticket: Any, fn: Callable[[], Any]) -> None:
        super().__init__()
        self._owner = owner
        self._ticket = ticket
        self._fn = fn

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a one-line message
            self._emit(self._owner.failed, one_line(exc))
        else:
            self._emit(self._owner.finished, result)

    def _emit(self, signal: Any, payload: Any) -> None:
        try:
            signal.emit(self._ticket, payload)
        except RuntimeError:
            pass  # the owner was deleted while the job ran: nobody is waiting


class PoolJobs(QObject):
    """A private thread pool; ``finished(ticket, result)`` / ``failed(ticket, message)``.

    The pool is waited for when this object is destroyed, so no job outlives
    the widget that started it.
    """

    finished = Signal(object, object)
    failed = Signal(object, str)

    def __init__(self, parent: QObject | None = None, max_threads: int = 2) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)

    def submit(self, ticket: Any, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` on the pool; its result comes back tagged with ``ticket``."""
        self.pool.start(_Job(self, ticket, fn))

    def wait(self, msecs: int = -1) -> bool:
        """Block until every submitted job has finished (for tests and shutdown)."""
        return self.pool.waitForDone(msecs)
