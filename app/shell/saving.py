"""Saving a tab's document: :meth:`codec.editing.document.Document.save_iter` on a worker, then the saved file reopened.

The document is written to a new file next to the target and renamed over
it (the codec's job; a URL's is uploaded whole once written). A local file is
then opened and indexed on the same worker, and the session shows it with the
undo history going on over it (:meth:`codec.editing.document.Document.plan_history`:
undo after a save brings the saved-over records back); when the history cannot
follow (a truncated record dropped, too many deleted bytes to keep) it starts
afresh. A saved URL is opened again on the worker (a network round trip) and
its history starts afresh.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator

from PySide6.QtCore import QObject, Signal

from app.shell.progress_worker import ProgressWorker
from app.shell.session import TabSession
from app.workers.worker import one_line
from codec.editing.document import HistoryPlan, SaveReport
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
        history = [] if remote else session.history()  # (gathered here: the commands are the GUI thread's)
        plans: list[HistoryPlan | None] = []
        result: list[SaveReport] = []
        reopened: list[TFRecordFile | str] = []  # the saved file opened (a local one indexed), or why it cannot be
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
            if history and session.stack.count() and not (plans and plans[0] is not None and reopened
                                                          and not isinstance(reopened[0], str)):
                note += "; the undo history starts afresh (it names records this save could not keep)"
            try:
                if remote and reopened and isinstance(reopened[0], str):
                    raise OSError(reopened[0])
                if reopened and not isinstance(reopened[0], str):
                    session.replace_source(reopened[0], plans[0] if plans else None)
                else:  # Cancel came between the write and the reopening: opened (and indexed) afresh
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
            if history:
                plans.append(document.plan_history(history))  # before the save replaces what it reads
            yield from self._watched(document.save_iter(target, compression, result,
                                                        overwrite_changed=overwrite_changed))
            try:
                saved = TFRecordFile(target)
            except Exception as exc:  # noqa: BLE001 - saved all the same: said after
                reopened.append(one_line(exc))
                return
            if not remote:
                try:
                    yield from saved.index_iter()
                except Exception as exc:  # noqa: BLE001 - saved all the same: opened again after, and said
                    saved.close()
                    reopened.append(one_line(exc))
                    return
                except BaseException:  # Cancel: the saved file is opened afresh after
                    saved.close()
                    raise
            reopened.append(saved)

        self.worker.run(passes, "saving", f"Saving {name}…", finished, failed)
        return True

    def _watched(self, passes: Iterator) -> Iterator:
        """``passes``, telling the session when the file it reads changed on disk."""
        with self.session.watching_changes():
            yield from passes
