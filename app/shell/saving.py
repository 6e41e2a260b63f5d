"""Saving a tab's document: :meth:`codec.editing.document.Document.save_iter` on a worker, then the saved file reopened.

The document is written to a new file next to the target and renamed over
it (the codec's job; a URL's is uploaded whole once written); the session then
shows the saved file, with a fresh index and an empty history. A saved URL is
opened again on the worker too: that is a network round trip.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator

from PySide6.QtCore import QObject, Signal

from app.shell.progress_worker import ProgressWorker
from app.shell.session import TabSession
from app.workers.worker import one_line
from codec.editing.document import SaveReport
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.remote import is_url


def _unchanged(name: str, existed: bool) -> str:
    return f"{name} is unchanged" if existed else f"{name} was not written"


class DocumentSaver(QObject):
    """Saves ``session``'s document on ``worker``.

    Signals: ``message(str)`` for the status bar, ``failed(str)`` for the
    message bar, ``saved(str)`` the path written (the session shows it now).
    """

    message = Signal(str)
    failed = Signal(str)
    saved = Signal(str)

    def __init__(self, session: TabSession, worker: ProgressWorker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.worker = worker

    def save(self, path: str | None, compression: str | None, on_done: Callable[[bool], None] | None,
             existed: bool | None = None, *, overwrite_changed: bool = False) -> bool:
        """Write the document (to ``path``, default over the file) on the worker; then reopen it.

        Returns False at once (with a message) when saving cannot start.
        ``on_done(ok)`` is called when the save has ended. ``existed``: whether
        the target was there before (a URL's was asked already), else looked up.
        Over a file that changed on disk since it was opened the codec refuses
        (the save fails with its one line) unless ``overwrite_changed``.
        """
        session = self.session
        if self.worker.busy or session.is_running():
            self.message.emit("busy: wait until the current task has finished, or stop it")
            return False
        target = path or session.source.path
        remote = is_url(target)
        if not remote:
            target = os.path.abspath(target)
        if existed is None:
            existed = not remote and os.path.exists(target)
        document = session.document
        result: list[SaveReport] = []
        reopened: list[TFRecordFile | str] = []  # a URL's new source, or why it cannot be opened
        name = os.path.basename(target)

        def end(ok: bool) -> None:
            if on_done is not None:
                on_done(ok)

        def finished() -> None:
            if not result:  # cancelled before the file was complete: nothing was written
                self.message.emit(f"save cancelled: {_unchanged(name, existed)}")
                end(False)
                return
            report = result[0]
            note = f"; {report.dropped_truncated} truncated record(s) left out" if report.dropped_truncated else ""
            try:
                if remote and reopened and isinstance(reopened[0], str):
                    raise OSError(reopened[0])
                if remote and reopened:
                    session.replace_source(reopened[0])
                else:  # a local file; a URL's when Cancel came between its upload and its reopening
                    session.reopen(target)
            except Exception as exc:  # noqa: BLE001 - the file is saved; say why it cannot be shown
                session.stop_editing()
                self.failed.emit(f"saved {target}, but cannot open it again: {one_line(exc)}")
                end(True)
                return
            self.message.emit(f"saved {report.records:,} records to {target}{note}")
            self.saved.emit(target)
            end(True)

        def failed(message: str) -> None:
            self.failed.emit(f"save failed: {message}. {_unchanged(name, existed)}")
            end(False)

        def passes() -> Iterator:
            yield from self._watched(document.save_iter(target, compression, result,
                                                        overwrite_changed=overwrite_changed))
            if remote:
                try:
                    reopened.append(TFRecordFile(target))
                except Exception as exc:  # noqa: BLE001 - saved all the same: said after
                    reopened.append(one_line(exc))

        self.worker.run(passes, "saving", f"Saving {name}…", finished, failed)
        return True

    def _watched(self, passes: Iterator) -> Iterator:
        """``passes``, telling the session when the file it reads changed on disk."""
        with self.session.watching_changes():
            yield from passes
