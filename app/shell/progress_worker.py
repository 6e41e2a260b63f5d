"""One long edit task of a tab at a time (saving, a large edit), with a progress dialog and Cancel.

The task is a codec generator run on a :class:`~app.workers.worker.GeneratorWorker`;
while it runs the tab is busy (:attr:`ProgressWorker.busy` says with what)
and editing waits.
"""
from __future__ import annotations

from typing import Callable, Iterator

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QProgressDialog, QWidget

from app.workers.worker import GeneratorWorker

PROGRESS_DELAY_MS = 400


def _dispose(worker: GeneratorWorker) -> None:
    """Delete a worker whose generator has ended, once its thread has (a running QThread must not die)."""
    worker.wait()
    worker.deleteLater()


class ProgressWorker(QObject):
    """Runs one task at a time; ``busy_changed()`` when it starts or ends, ``failed(str)`` when one fails."""

    busy_changed = Signal()
    failed = Signal(str)

    def __init__(self, dialog_parent: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._dialog_parent = dialog_parent
        self._worker: GeneratorWorker | None = None
        self._progress: QProgressDialog | None = None
        self.busy = ""  # what the worker does ("saving", "editing"), or ""

    @property
    def cancelled(self) -> bool:
        """The running task was cancelled (asked in its ``done``)."""
        return self._worker is not None and self._worker.cancelled

    def run(self, make: Callable[[], Iterator], busy: str, label: str, done: Callable[[], None],
            failed: Callable[[str], None] | None = None, cancelled: Callable[[], None] | None = None) -> None:
        """Run ``make()``'s generator with a progress dialog; then ``done()``, ``cancelled()`` or ``failed(msg)``.

        Without ``cancelled``, a cancelled task calls ``done()`` (which may ask :attr:`cancelled`);
        without ``failed``, a failure is an ``error``.
        """
        self._set_busy(busy)
        progress = QProgressDialog(label, "Cancel", 0, 1000, self._dialog_parent)
        progress.setWindowTitle(busy.capitalize())
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(PROGRESS_DELAY_MS)
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        worker = GeneratorWorker(make, self)
        progress.canceled.connect(worker.cancel)
        worker.progress.connect(lambda p: progress.setValue(int(p.fraction * 1000)))
        self._worker, self._progress = worker, progress

        def end() -> None:
            progress.hide()
            progress.deleteLater()
            self._progress = None
            self._set_busy("")

        def on_finished(_last) -> None:
            end()
            if worker.cancelled and cancelled is not None:
                cancelled()
            else:
                done()
            self._worker = None
            _dispose(worker)

        def on_failed(message: str) -> None:
            end()
            if failed is not None:
                failed(message)
            else:
                self.failed.emit(message)
            self._worker = None
            _dispose(worker)

        worker.finished.connect(on_finished)
        worker.failed.connect(on_failed)
        worker.start()

    def _set_busy(self, what: str) -> None:
        self.busy = what
        self.busy_changed.emit()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def wait(self) -> None:
        """Block until a running task has ended (tests, shutdown)."""
        if self._worker is not None:
            self._worker.wait()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
