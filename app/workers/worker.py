"""Run a codec generator on a QThread and report its progress by signals.

The codec's long operations (index, verify, export...) are generators whose
``yield``\\ s are progress objects. :class:`GeneratorWorker` runs one on its
own thread, relays the yielded objects as ``progress``, the last one as
``finished``, and any exception as a one-line ``failed`` message. ``cancel``
stops it at the next ``yield``.
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from PySide6.QtCore import QObject, QThread, Signal, Slot

# Progress is relayed at most this often; the last value always arrives.
PROGRESS_INTERVAL = 0.05
# While a worker runs Python code it holds the GIL, and every call Qt makes
# into Python on the GUI thread (each painted cell, each event) waits for it
# up to the interpreter's switch interval: 5 ms by default, which turns a
# repaint into hundreds of milliseconds. 0.5 ms keeps the GUI fluid.
GUI_SWITCH_INTERVAL = 0.0005
# The longest a worker waits for a repaint to end (a safety valve, not a pace).
PAINT_WAIT_MAX = 0.25


class PaintGate:
    """Workers pause at their next ``yield`` while a Python-heavy view paints.

    A shorter switch interval is not enough: a table repaint makes about a
    thousand calls into Python, and each waits for the worker's current C
    call (a numpy batch, a mapped read) to end, so a 7 ms repaint took 50-80 ms
    while a 10M-record file was indexed. Views wrap their ``paintEvent`` in
    :meth:`painting`; the worker finishes the step it is in, then waits.
    """

    def __init__(self) -> None:
        self._busy = 0
        self._cond = threading.Condition()

    @contextmanager
    def painting(self):
        with self._cond:
            self._busy += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                if not self._busy:
                    self._cond.notify_all()

    def wait_open(self, stop: threading.Event) -> None:
        """Block while a paint is running (at most PAINT_WAIT_MAX s, or until ``stop``)."""
        deadline = time.monotonic() + PAINT_WAIT_MAX
        with self._cond:
            while self._busy and not stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(min(left, 0.02))


PAINT_GATE = PaintGate()


def one_line(exc: BaseException) -> str:
    """An exception as one line for a person: its message, or its type's name."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Runner(QObject):
    """Lives on the worker thread and drives the generator."""

    progress = Signal(object)
    finished = Signal(object, bool)  # last progress value, cancelled
    failed = Signal(str)

    def __init__(self, make: Callable[[], Iterator[Any]], stop: threading.Event) -> None:
        super().__init__()
        self._make = make
        self._stop = stop

    @Slot()
    def run(self) -> None:
        last: Any = None
        sent = 0.0
        try:
            gen = self._make()
            try:
                for last in gen:
                    if self._stop.is_set():
                        break
                    now = time.monotonic()
                    if now - sent >= PROGRESS_INTERVAL:
                        sent = now
                        self.progress.emit(last)
                    # Give the GIL to the GUI thread between batches, and let a repaint finish.
                    PAINT_GATE.wait_open(self._stop)
                    time.sleep(0)
            finally:
                close = getattr(gen, "close", None)
                if close is not None:
                    close()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            self.failed.emit(one_line(exc))
        else:
            self.finished.emit(last, self._stop.is_set())
        finally:
            self.thread().quit()


class GeneratorWorker(QObject):
    """Run ``make()`` (a generator factory) on a new QThread.

    Signals (delivered on the thread that created the worker):
    ``progress(obj)`` for yielded values (throttled), ``finished(obj)`` with the
    last value when the generator ends or is cancelled, ``failed(str)`` with a
    one-line message when it raises.
    """

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, make: Callable[[], Iterator[Any]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stop = threading.Event()
        self._thread = QThread()
        self._runner = _Runner(make, self._stop)
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        self._runner.progress.connect(self.progress)
        self._runner.finished.connect(self._on_done)
        self._runner.failed.connect(self.failed)
        self.cancelled = False

    def start(self) -> None:
        if sys.getswitchinterval() > GUI_SWITCH_INTERVAL:
            sys.setswitchinterval(GUI_SWITCH_INTERVAL)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the generator to stop at its next yield."""
        self._stop.set()

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def wait(self, msecs: int | None = None) -> bool:
        """Block until the thread has ended (True) or ``msecs`` passed (False)."""
        if msecs is None:
            return self._thread.wait()
        return self._thread.wait(msecs)

    def stop(self) -> None:
        """Cancel and wait: call before closing what the generator reads."""
        self.cancel()
        self.wait()

    @Slot(object, bool)
    def _on_done(self, last: Any, cancelled: bool) -> None:
        self.cancelled = cancelled
        self.finished.emit(last)


def call_on_worker(fn: Callable[[], Any], parent: QObject, done: Callable[[Any], None],
                   failed: Callable[[str], None]) -> GeneratorWorker:
    """Call ``fn()`` on a new thread (a network round trip, say); then ``done(result)`` or
    ``failed(one line)`` on this one. The worker is deleted once its thread has ended;
    ``cancel()`` on it does not interrupt ``fn``, whose result still comes."""
    worker = GeneratorWorker(lambda: iter([fn()]), parent)  # called on the worker's thread

    def end(callback: Callable[[Any], None], value: Any) -> None:
        worker.wait()
        worker.deleteLater()
        callback(value)

    worker.finished.connect(lambda value: end(done, value))
    worker.failed.connect(lambda text: end(failed, text))
    worker.start()
    return worker
