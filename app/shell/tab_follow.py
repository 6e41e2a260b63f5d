"""Follow mode of one tab (View > Follow): the table grows with a file that is still being written.

A :class:`TabFollow` is made by the tab with its
:class:`~app.shell.session.TabSession`. While it is on, a timer looks at the
file's size (one ``os.stat``) every ``POLL_MS``; when it grew, the index pass
over what was appended (:meth:`codec.sources.tfrecord_file.TFRecordFile.grow_iter`) runs on a
worker, and ``grown()`` tells the tab to add the rows. The last record, when
not all its bytes have arrived, has the status "being written": no damage.
Editing is off while the file is followed (a document over a moving file);
turning Follow off reads the end once more as an ordinary open does, and
editing comes back.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator

from PySide6.QtCore import QObject, QTimer, Signal

from app.models.record_format import FOLLOW_REASON, container_of
from app.shell.session import TabSession
from app.workers.worker import GeneratorWorker
from codec.format.problem_text import TFRECORD

POLL_MS = 200  # how often a followed file's size is looked at


class TabFollow(QObject):
    """The follow part of one tab (see the module docstring).

    Signals: ``grown()`` records were added or changed status (sync the table);
    ``changed(bool)`` following started or stopped; ``message(str)`` a one-line
    note (why following stopped, or cannot start).
    """

    grown = Signal()
    changed = Signal(bool)
    message = Signal(str)

    def __init__(self, session: TabSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.active = False
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self._poll)
        self._worker: GeneratorWorker | None = None
        self._stopping = False
        self._last: GeneratorWorker | None = None  # the pass that ends following (stop_follow)
        session.about_to_reopen.connect(self._dropped)  # another file (or the same, reopened) comes

    def why_not(self) -> str | None:
        """Why this tab cannot follow its file now (None: it can)."""
        session, source = self.session, self.session.source
        if container_of(source) != TFRECORD:
            return FOLLOW_REASON
        if source.is_set or session.edit_block:
            return "only a single file can be followed, not a set of shards"
        if source.is_remote:
            return "only a local file can be followed, not a URL"
        if session.modified:
            return "the tab has unsaved edits: save or discard them first"
        if session.is_running() or not source.indexed:
            return "wait for indexing to finish"
        return None

    def start(self) -> bool:
        """Follow the file from now on; False (with a message) when it cannot be."""
        if self.active:
            return True
        reason = self.why_not()
        if reason is not None:
            self.message.emit(f"cannot follow: {reason}")
            return False
        self.session.stop_editing()
        self.active = True
        source = self.session.source

        def first() -> Iterator:
            source.start_follow()  # (a compressed file loaded from the cache is inflated once here)
            yield from source.grow_iter()

        self._run(first)
        self.timer.start()
        self.changed.emit(True)
        return True

    def stop(self) -> None:
        """Stop following: the end is read as an ordinary open reads it (on a worker), editing comes back."""
        if not self.active or self._stopping:
            return
        self.timer.stop()
        self._stopping = True
        if self._worker is not None:
            self._worker.stop()
        self._run(self.session.source.stop_follow)
        self._last = self._worker  # only its end ends following: a grow pass may still end after stop()

    def _poll(self) -> None:
        """Has the file changed size or time? Then index what was appended, on a worker."""
        if self._worker is not None or not self.active:
            return
        source = self.session.source
        try:
            st = os.stat(source.path)
            changed = (st.st_size, st.st_mtime_ns) != (source.file_size, source.mtime_ns)
        except OSError:
            changed = True  # gone: the pass says so
        if changed:
            self._run(source.grow_iter)

    def _run(self, make: Callable[[], Iterator]) -> None:
        worker = self._worker = GeneratorWorker(make, self)
        worker.progress.connect(lambda _: self.grown.emit())
        worker.finished.connect(lambda _: self._ended(worker, None))
        worker.failed.connect(lambda text: self._ended(worker, text))
        worker.start()

    def _ended(self, worker: GeneratorWorker, error: str | None) -> None:
        worker.wait()
        worker.deleteLater()
        if self._worker is worker:
            self._worker = None
        if self._stopping and worker is self._last and not worker.cancelled:  # the last pass (stop_follow) ended
            self._finish(None)
        elif error is not None and not self._stopping:
            self._finish(error)
        self.grown.emit()

    def _finish(self, error: str | None) -> None:
        self.timer.stop()
        self.active = self._stopping = False
        if error is not None:
            self.session.source.end_follow()  # (a pass that failed otherwise than the file changing)
            self.message.emit(error)
            self.session.file_changed.emit(error)  # the tab offers to open it again as it is now
        else:
            self.session.start_editing()
        self.changed.emit(False)

    def _dropped(self) -> None:
        """The tab shows another source from now on: following the old one ends, quietly."""
        if not self.active:
            return
        self.close()
        self.session.source.end_follow()
        self._stopping = False
        self.changed.emit(False)

    def close(self) -> None:
        """Stop polling and any pass (the tab is closing)."""
        self.timer.stop()
        self.active = False
        if self._worker is not None:
            self._worker.stop()
