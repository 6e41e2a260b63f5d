"""Saving a tab to a URL (``s3://``, ``gs://``...): ask first when an object is there already.

Whether the object exists is a network round trip, asked on a worker
(:func:`codec.storage.writer.output_exists`); the user is then asked before it is
replaced, and only then does the tab's save start (the codec writes a local
temporary file and uploads it whole once complete).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid as shiboken_valid

from app.dialogs import url_dialogs
from app.workers.worker import GeneratorWorker, call_on_worker
from codec.storage.writer import output_exists

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab


class RemoteSaves(QObject):
    """Save a tab to a URL after asking about an object already there.

    Signals: ``message(str)`` for the status bar, ``failed(str)`` one line for
    the message bar (the store could not be asked).
    """

    message = Signal(str)
    failed = Signal(str)

    def __init__(self, dialog_parent: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._dialog_parent = dialog_parent
        self._worker: GeneratorWorker | None = None

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def save(self, tab: FileTab, url: str, compression: str,
             on_done: Callable[[bool], None] | None = None) -> bool:
        """Ask the store whether ``url`` exists (on a worker), the user whether to replace it, then save."""
        if self._worker is not None:
            self.message.emit("busy: still asking the store about the last URL")
            return False
        self.message.emit(f"asking whether {url} exists…")

        def answered(exists: bool) -> None:
            self._worker = None
            if not shiboken_valid(tab) or tab.session.target is None:  # the tab closed meanwhile
                self._not_saved(on_done)
            elif exists and not url_dialogs.ask_replace_remote(self._dialog_parent, url):
                self.message.emit(f"not saved: {os.path.basename(url) or url} is unchanged")
                self._not_saved(on_done)
            elif not tab.editing.save(url, compression, on_done, existed=exists):
                self._not_saved(on_done)

        def failed(text: str) -> None:
            self._worker = None
            self.failed.emit(text if url in text else f"cannot save to {url}: {text}")
            self._not_saved(on_done)

        self._worker = call_on_worker(lambda: output_exists(url), self, answered, failed)
        return True

    @staticmethod
    def _not_saved(on_done: Callable[[bool], None] | None) -> None:
        if on_done is not None:
            on_done(False)

    def close(self) -> None:
        """Wait for a question under way (the window is closing)."""
        if self._worker is not None:
            self._worker.stop()
