"""A tab's file changing on disk while it is open: the bar that says so, and what it offers.

:meth:`DiskChanges.check` compares the file at the tab's path with the one
the tab opened (:class:`codec.storage.file_identity.FileIdentity`); the window calls
it when its file watcher fires and when the application becomes active
again. A changed or replaced file shows "changed on disk" with Reload and
Keep mine; a deleted one "deleted on disk" with Keep mine; a grown one
"grew on disk" with Follow, Reload and Keep mine. Keep mine hides the bar
until the file changes again; a Save over the path still asks (the window's
:class:`~app.shell.edit_actions.EditActions`). A URL and a shard set are not
watched: their reads find a change and the tab's bar says so.
"""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.shell.session import TabSession
from app.views.message_bar import MessageBar
from codec.errors import TFRecordError
from codec.storage.file_identity import Change, FileIdentity, describe_change, identity_at


class DiskChanges(QObject):
    """Shows ``bar`` when ``session``'s file changed on disk; ``busy()`` True while the tab writes it.

    Signals: ``changed(str)`` the bar shows a new change (a
    :class:`~codec.storage.file_identity.Change` value); ``follow_requested()`` Follow
    was pressed on a grown file; ``reload_requested()`` Reload was pressed.
    """

    changed = Signal(str)
    follow_requested = Signal()
    reload_requested = Signal()

    def __init__(self, session: TabSession, bar: MessageBar, busy: Callable[[], bool],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.bar = bar
        self._busy = busy
        self.can_reload = True  # False: the tab cannot open its source again (a shard set)
        self.acknowledged: FileIdentity | None = session.source.identity  # Keep mine: no bar for this one (None: gone)
        self._shown: FileIdentity | None = None  # the file the bar speaks of (None: deleted), while change is set
        self.change: Change | None = None  # what the bar says
        self._read_failed = False  # the bar says a read failed because the file changed
        self.follow_button = bar.add_button("Follow", before_action=True)
        self.follow_button.setToolTip("Show the records added at the end as they come")
        self.keep_button = bar.add_button("Keep mine")
        self.keep_button.setToolTip("Go on showing the file as it was opened (a Save over it still asks)")
        self.follow_button.clicked.connect(self.follow_requested)
        self.keep_button.clicked.connect(self.keep_mine)
        bar.action_button.clicked.connect(self.reload_requested)
        self.follow_button.hide()
        self.keep_button.hide()
        self._source = session.source
        session.reopened.connect(self._reopened)

    @property
    def path(self) -> str | None:
        """The local file watched for this tab (None for a URL or a shard set)."""
        return self.session.source.path if self.session.source.identity is not None else None

    def check(self) -> Change | None:
        """Look at the file on disk now; show (or update, or hide) the bar. None when not watched or busy."""
        opened = self.session.source.identity
        if opened is None or self._busy():
            return None
        if self.session.source.following:
            self._hide()  # growing is what a followed file does: its rows are the news
            return None
        try:
            now = identity_at(self.session.source.path)
        except TFRecordError:
            return None  # cannot even stat it: its next read says why
        change = opened.change_to(now)
        if self._read_failed and not self.bar.isHidden():
            return change  # reads fail already: that bar stays until the file is reloaded
        if change is Change.SAME or now == self.acknowledged:
            self._hide()
            return change
        if self.change is not None and now == self._shown and not self.bar.isHidden():
            return change
        self._shown, self.change = now, change
        self.bar.show_message(self._text(change, opened, now))
        self._set_buttons(change)
        self.changed.emit(change.value)
        return change

    def _text(self, change: Change, opened: FileIdentity, now: FileIdentity | None) -> str:
        name = os.path.basename(self.session.source.path)
        edits = " Your unsaved edits are kept until you reload." if self.session.modified else ""
        if change is Change.DELETED:
            return f"Deleted on disk: {name} was deleted since it was opened.{edits}"
        if change is Change.GREW:
            return f"Grew on disk ({now.size - opened.size:,} bytes more): {name}.{edits}"
        return f"Changed on disk: {describe_change(name, opened, now)}.{edits}"

    def _set_buttons(self, change: Change | None) -> None:
        """Follow for a grown file, Reload for anything there is to read, Keep mine for every change."""
        self.follow_button.setVisible(change is Change.GREW)
        self.bar.action_button.setVisible(self.can_reload and change is not Change.DELETED)
        self.keep_button.setVisible(change is not None)

    def keep_mine(self) -> None:
        """Hide the bar and take the file as it is now as seen: no bar again until it changes again."""
        if self.change is not None:
            self.acknowledged = self._shown
        self._hide()

    def show_read_failure(self, text: str) -> None:
        """A read found the file changed under it: the bar with Reload alone (reads fail until then)."""
        self._shown, self.change, self._read_failed = None, None, True
        self._set_buttons(None)
        self.bar.show_message(text)

    def _hide(self) -> None:
        if self.change is not None:
            self.bar.hide()
        self._shown, self.change = None, None

    def _reopened(self) -> None:
        """The tab shows another file now (reloaded or saved): that one is what to compare with."""
        if self.session.source is self._source:
            return  # the same file decoding another way (Decode As)
        self._source = self.session.source
        self.acknowledged = self._source.identity
        self._read_failed = False
        self._hide()
        self._set_buttons(None)
