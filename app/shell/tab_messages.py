"""Where the window's notes and errors show: each tab's own, only while that tab is current.

A tab's status message and error (the message bar over the tabs) are stored with
the tab and shown when it becomes current again. An error that belongs to no tab
(a file or URL that failed to open) shows over every tab until the next action.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QStatusBar, QTabWidget, QWidget
from shiboken6 import isValid as shiboken_valid

from app.views.message_bar import MessageBar

MESSAGE_MS = 10000  # how long a status message shows (time its tab is current)
RESTORE_MIN_MS = 500  # a message wiped (a status tip came and went) with this much time left comes back


@dataclass
class Said:
    """What one tab (or the window) has to say: a status message and an error."""

    text: str = ""  # the status bar's message
    left_ms: int = 0  # how much longer it shows
    error: str = ""  # the message bar's text, one line per problem


class TabMessages(QObject):
    """Each tab's last status message and error, and the window's own error.

    ``tab=None`` means the current tab (the window's own when no tab is open). A
    status message shows for :data:`MESSAGE_MS` of its tab being current; an
    error shows until something clears it: the next action on its tab
    (:meth:`action_started`), a success (:meth:`clear_error`) or the bar's cross.
    """

    def __init__(self, bar: QStatusBar, message_bar: MessageBar, tabs: QTabWidget, parent: QObject) -> None:
        super().__init__(parent)
        self._bar, self._message_bar, self._tabs = bar, message_bar, tabs
        self._said: dict[QWidget, Said] = {}
        self._window = Said()  # not tied to a tab: an open that failed
        self._showing: Said | None = None  # whose status message the bar shows
        self._since = time.monotonic()
        message_bar.close_button.clicked.connect(self.dismiss)
        bar.messageChanged.connect(self._bar_changed)

    # -- saying -------------------------------------------------------------
    def say(self, text: str, tab: QWidget | None = None, ms: int = MESSAGE_MS) -> None:
        """A note for the status bar, from or about ``tab``."""
        self._settle()
        entry = self._entry(tab)
        entry.text, entry.left_ms = text, ms
        self._show()

    def error(self, text: str, tab: QWidget | None = None) -> None:
        """An error of ``tab``'s: the message bar, and its first line in the status bar."""
        self._settle()
        self._set_error(self._entry(tab), text)
        self._show()

    def window_error(self, text: str) -> None:
        """An error tied to no tab (an open that failed): shown until the next action."""
        self._settle()
        self._set_error(self._window, text)
        self._show()

    # -- clearing -------------------------------------------------------------
    def clear_error(self, tab: QWidget | None = None) -> None:
        """Something done on ``tab`` went right (an edit, a save): its error and the window's no longer apply."""
        self._settle()
        self._clear_error(self._entry(tab))
        self._window = Said()
        self._show()

    def action_started(self, tab: QWidget | None = None) -> None:
        """A new action starts (an open; a filter, verify or go to on ``tab``): the window's error goes,
        and so does everything ``tab`` said before."""
        self._settle()
        self._window = Said()
        if tab is not None:
            self._said.pop(tab, None)
        self._show()

    def dismiss(self) -> None:
        """The message bar's cross: the errors it showed go."""
        self._settle()
        self._clear_error(self._window)
        current = self._tabs.currentWidget()
        if current in self._said:
            self._clear_error(self._said[current])
        self._show()

    def current_changed(self) -> None:
        """Another tab is current: show what it said; forget closed tabs."""
        self._settle()
        for tab in [t for t in self._said if not shiboken_valid(t) or self._tabs.indexOf(t) < 0]:
            del self._said[tab]
        self._show()

    # -- inside -------------------------------------------------------------
    def _entry(self, tab: QWidget | None) -> Said:
        key = tab if tab is not None else self._tabs.currentWidget()
        return self._window if key is None else self._said.setdefault(key, Said())

    @staticmethod
    def _set_error(entry: Said, text: str) -> None:
        entry.error = text
        entry.text, entry.left_ms = (text.splitlines() or [""])[0], MESSAGE_MS

    @staticmethod
    def _clear_error(entry: Said) -> None:
        if entry.error and entry.text == entry.error.splitlines()[0]:
            entry.text = ""
        entry.error = ""

    def _settle(self) -> None:
        """Count the time the message shown has been up."""
        now = time.monotonic()
        if self._showing is not None:
            self._showing.left_ms -= int((now - self._since) * 1000)
        self._since = now

    def _bar_changed(self, text: str) -> None:
        """Hovering a menu or toolbar entry shows its status tip, then clears the bar: the message comes back."""
        if text or self._showing is None:
            return
        self._settle()
        if self._showing.left_ms >= RESTORE_MIN_MS:
            self._bar.showMessage(self._showing.text, self._showing.left_ms)

    def _show(self) -> None:
        """The current tab's message (else the window's) in the status bar; both errors in the message bar."""
        current = self._tabs.currentWidget()
        entry = self._said.get(current) if current is not None else None
        shown = next((e for e in (entry, self._window) if e is not None and e.text and e.left_ms > 0), None)
        self._showing = shown
        if shown is None:
            if self._bar.currentMessage():
                self._bar.clearMessage()
        else:
            self._bar.showMessage(shown.text, shown.left_ms)
        errors = [e.error for e in (self._window, entry) if e is not None and e.error]
        if errors:
            self._message_bar.show_message("\n".join(errors))
        else:
            self._message_bar.hide()
