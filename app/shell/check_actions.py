"""The main window's part of the Dataset Check: View > Dataset Check… and its dock.

The dock shows the current tab's :class:`~app.views.check_panel.CheckPanel`
(each tab has its own :class:`~app.shell.tab_check.TabCheck`, made when the
dock first shows that tab). The action shows the dock and, when the tab has
no findings yet, starts its check. The window calls :meth:`CheckActions.refresh`
when the current tab changes and :meth:`CheckActions.tab_closed` before a
tab's file closes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from app.models.settings import Settings
from app.shell.qa_docks import PanelDock
from app.shell.tab_check import TabCheck

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab

DOCK_SHARE = 0.5  # of the window's height, when the dock first opens: images side by side need room


class CheckActions(QObject):
    """View > Dataset Check… (Ctrl+Shift+D) and the Dataset Check dock, for the current tab.

    ``message(str, FileTab)`` a note for the status bar; ``failed(str, FileTab)`` for the message bar;
    each about the tab whose check said it (not always the current one: a check runs on).
    """

    message = Signal(str, object)
    failed = Signal(str, object)

    def __init__(self, window: QMainWindow, view_menu: QMenu, current_tab: Callable[[], FileTab | None],
                 settings: Settings, beside: QDockWidget | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._tab = current_tab
        self._checks: dict[int, TabCheck] = {}  # id(tab) -> its check
        self._sized = False
        self.dock = PanelDock("Dataset Check", "datasetCheckDock", "Open a file or a dataset to check it.", window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        if beside is not None:
            window.tabifyDockWidget(beside, self.dock)
        self.dock.hide()
        self.dock.visibilityChanged.connect(lambda _visible: self.refresh())
        self.action = QAction("Dataset &Check…", window)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+D"))
        self.action.setStatusTip("Look for duplicates, leaks between splits, bad boxes and images, unknown labels, "
                                 "missing features and unshuffled shards")
        self.action.triggered.connect(self.show_check)
        window.addAction(self.action)
        view_menu.addAction(self.action)
        self.actions = [self.action]

    def check_for(self, tab: FileTab) -> TabCheck:
        """The tab's check (made on first use)."""
        check = self._checks.get(id(tab))
        if check is None:
            check = TabCheck(tab, self.settings, self.window)
            check.message.connect(lambda text, t=tab: self.message.emit(text, t))
            check.failed.connect(lambda text, t=tab: self.failed.emit(text, t))
            self._checks[id(tab)] = check
        return check

    def current_check(self) -> TabCheck | None:
        tab = self._tab()
        return self._checks.get(id(tab)) if tab is not None else None

    def show_check(self) -> TabCheck | None:
        """Show the dock with the current tab's panel; start its check when it has no findings yet."""
        tab = self._tab()
        if tab is None:
            return None
        check = self.check_for(tab)
        self.dock.show()
        self.dock.raise_()
        if not self._sized and not self.dock.isFloating():
            self._sized = True
            self.window.resizeDocks([self.dock], [int(self.window.height() * DOCK_SHARE)], Qt.Orientation.Vertical)
        self.refresh()
        if check.report is None and not check.is_running():
            check.run()
        return check

    def refresh(self, *_) -> None:
        """Show the current tab's panel in the dock (making its check when the dock is visible)."""
        tab = self._tab()
        if tab is None:
            self.dock.show_panel(None)
            return
        if self.dock.isVisible():
            self.dock.show_panel(self.check_for(tab).panel)

    def tab_closed(self, tab: FileTab) -> None:
        """Stop the tab's check and drop its panel (before its file closes)."""
        check = self._checks.pop(id(tab), None)
        if check is not None:
            check.close()
