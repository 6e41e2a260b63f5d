"""The window's tabs: a strip that keeps every tab reachable, and the Window menu that lists them.

Tab names are elided in the middle past :data:`TAB_MAX_WIDTH` (the tooltip has
the full path); many tabs keep their width and the strip scrolls with its arrow buttons. The Window menu lists
every tab (a check on the current one, remote ones marked), with Next and
Previous Tab (Ctrl+Tab, Ctrl+Shift+Tab) and Alt+1…9 for the first nine.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QTabBar, QTabWidget, QWidget

from app.style import icons

TAB_MAX_WIDTH = 260  # px: a tab's name elides in the middle past this (a shard's whole name fits)
NUMBERED_TABS = 9  # Alt+1 … Alt+9
REMOTE_SUFFIX = " (remote)"


class TabStrip(QTabBar):
    """A tab bar whose tabs are never wider than :data:`TAB_MAX_WIDTH` (their text elides), nor squeezed
    when many are open (Qt's squeezing leaves "train-0…frecord" on every shard's tab): the strip scrolls."""

    def tabSizeHint(self, index: int) -> QSize:
        size = super().tabSizeHint(index)
        return QSize(min(size.width(), TAB_MAX_WIDTH), size.height())

    def minimumTabSizeHint(self, index: int) -> QSize:
        return self.tabSizeHint(index)


class WindowTabs(QTabWidget):
    """The window's tab widget: closable, movable tabs on a :class:`TabStrip` with scroll buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabBar(TabStrip(self))
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setDocumentMode(True)
        self.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.setUsesScrollButtons(True)
        self.tabBar().setExpanding(False)


class WindowMenu(QObject):
    """The Window menu of ``tabs``: next, previous, and one entry per tab.

    ``select(index)`` shows a tab (the window's: switching is an action of the
    user's); ``is_remote(widget)`` says whether a tab reads from the network.
    """

    def __init__(self, window: QMainWindow, menu: QMenu, tabs: QTabWidget, select: Callable[[int], None],
                 is_remote: Callable[[QWidget], bool]) -> None:
        super().__init__(window)
        self.menu, self.tabs = menu, tabs
        self._select, self._is_remote = select, is_remote
        self.next_action = self._action(window, "&Next Tab", lambda: self._step(1), ["Ctrl+Tab", "Ctrl+PgDown"])
        self.previous_action = self._action(window, "&Previous Tab", lambda: self._step(-1),
                                            ["Ctrl+Shift+Tab", "Ctrl+PgUp"])
        self.numbered = [self._action(window, "", lambda _=False, i=i: self._show(i), [f"Alt+{i + 1}"])
                         for i in range(NUMBERED_TABS)]
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        menu.aboutToShow.connect(self.refresh)
        self.refresh()

    @staticmethod
    def _action(window: QMainWindow, text: str, slot: Callable[[], None], keys: list[str]) -> QAction:
        action = QAction(text, window)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.triggered.connect(slot)
        window.addAction(action)  # its shortcut works while the menu is closed
        return action

    def refresh(self) -> None:
        """List the tabs as they are now."""
        for action in self.group.actions():
            self.group.removeAction(action)
        self.menu.clear()  # deletes the entries past the ninth: their parent is the menu
        self.menu.addAction(self.next_action)
        self.menu.addAction(self.previous_action)
        if self.tabs.count():
            self.menu.addSeparator()
        for i in range(self.tabs.count()):
            action = self.numbered[i] if i < NUMBERED_TABS else \
                QAction(self.menu, triggered=lambda _=False, i=i: self._show(i))
            action.setText(self.entry_text(i))
            remote = self._is_remote(self.tabs.widget(i))
            action.setIcon(icons.icon("remote" if remote else "file"))
            action.setCheckable(True)
            action.setChecked(i == self.tabs.currentIndex())
            self.group.addAction(action)
            self.menu.addAction(action)

    def entry_text(self, index: int) -> str:
        """The Window menu's text for tab ``index``: its number, its name, "(remote)" for a URL's."""
        name = self.tabs.tabText(index).replace("&", "&&")
        if self._is_remote(self.tabs.widget(index)):
            name += REMOTE_SUFFIX
        return f"&{index + 1}  {name}" if index < NUMBERED_TABS else name

    def _show(self, index: int) -> None:
        if 0 <= index < self.tabs.count():
            self._select(index)

    def _step(self, step: int) -> None:
        count = self.tabs.count()
        if count > 1:
            self._select((self.tabs.currentIndex() + step) % count)
