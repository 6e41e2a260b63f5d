"""The main window's share of dataset QA: Statistics and Feature Spec docks, View menu actions.

Each dock holds a stack with one panel per open file (made when first
shown, see :class:`~app.shell.qa_views.QaViews`) and shows the current tab's.
The actions switch the current tab between its table and gallery, focus
the filter bar, and show or hide the docks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMenu, QStackedWidget, QWidget
from app.style.palette import MUTED_COLOR

if TYPE_CHECKING:
    from app.shell.main_window import MainWindow

DOCK_SHARE = 0.35  # of the window's height, when a dock first opens


class _PanelDock(QDockWidget):
    """A dock whose content is the current file's panel (or a hint when no file is open)."""

    def __init__(self, title: str, name: str, hint: str, parent: QWidget) -> None:
        super().__init__(title, parent)
        self.setObjectName(name)
        self.setAllowedAreas(Qt.DockWidgetArea.AllDockWidgetAreas)
        self.stack = QStackedWidget(self)
        self.hint = QLabel(hint, self.stack)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setStyleSheet(f"color: {MUTED_COLOR};")
        self.stack.addWidget(self.hint)
        self.setWidget(self.stack)

    def show_panel(self, panel: QWidget | None) -> None:
        if panel is None:
            self.stack.setCurrentWidget(self.hint)
            return
        if self.stack.indexOf(panel) < 0:
            self.stack.addWidget(panel)
        self.stack.setCurrentWidget(panel)


class QaDocks(QObject):
    """Docks and actions of the gallery, filter, statistics and feature spec."""

    def __init__(self, window: MainWindow, view_menu: QMenu) -> None:
        super().__init__(window)
        self.window = window
        self.stats_dock = _PanelDock("Statistics", "statisticsDock", "Open a file to see its statistics.", window)
        self.spec_dock = _PanelDock("Feature Spec", "featureSpecDock", "Open a file to see its feature spec.", window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.stats_dock)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.spec_dock)
        window.tabifyDockWidget(self.stats_dock, self.spec_dock)
        self.stats_dock.hide()
        self.spec_dock.hide()
        self._sized = False

        self.table_action = self._action("&Table", "Ctrl+1", lambda: self._tab_call("show_table"),
                                         "Show the records as a table")
        self.gallery_action = self._action("&Gallery", "Ctrl+2", lambda: self._tab_call("show_gallery"),
                                           "Show the records' images as a grid of thumbnails")
        self.filter_action = self._action("&Filter Records…", QKeySequence.StandardKey.Find,
                                          lambda: self._tab_call("focus_filter"),
                                          "Show only the records matching an expression")
        self.stats_action = self._dock_action(self.stats_dock, "&Statistics", "Ctrl+Shift+I",
                                              "Per-feature statistics with histograms")
        self.spec_action = self._dock_action(self.spec_dock, "Feature S&pec", "Ctrl+Shift+K",
                                             "The inferred tf.io feature spec, as Python and JSON")
        view_menu.addSeparator()
        for action in (self.table_action, self.gallery_action, self.filter_action):
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(self.stats_action)
        view_menu.addAction(self.spec_action)
        self.actions = [self.table_action, self.gallery_action, self.filter_action]

        window.tabs.currentChanged.connect(self.refresh)
        for dock in (self.stats_dock, self.spec_dock):
            dock.visibilityChanged.connect(lambda _visible: self.refresh())
        self.refresh()

    def _action(self, text: str, shortcut, slot, tip: str) -> QAction:
        action = QAction(text, self.window)
        action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.window.addAction(action)
        return action

    def _dock_action(self, dock: QDockWidget, text: str, shortcut: str, tip: str) -> QAction:
        action = self._action(text, shortcut, lambda on: self.show_dock(dock, on), tip)
        action.setCheckable(True)
        dock.visibilityChanged.connect(lambda _v: action.setChecked(not dock.isHidden()))
        return action

    def _tab_call(self, name: str) -> None:
        tab = self.window.current_tab()
        if tab is not None:
            getattr(tab.qa, name)()

    # -- public -----------------------------------------------------------
    def show_dock(self, dock: QDockWidget, on: bool = True) -> None:
        """Show (and raise) or hide a dock; the first time, give it a fair share of the height."""
        if not on:
            dock.hide()
            return
        dock.show()
        dock.raise_()
        if not self._sized and not dock.isFloating():
            self._sized = True
            self.window.resizeDocks([dock], [int(self.window.height() * DOCK_SHARE)], Qt.Orientation.Vertical)
        self.refresh()

    def show_statistics(self) -> None:
        self.show_dock(self.stats_dock)

    def show_feature_spec(self) -> None:
        self.show_dock(self.spec_dock)

    def refresh(self, *_) -> None:
        """Show the current tab's panels in the docks (making them when a dock is visible)."""
        tab = self.window.current_tab()
        for action in self.actions:
            action.setEnabled(tab is not None)
        if tab is None:
            self.stats_dock.show_panel(None)
            self.spec_dock.show_panel(None)
            return
        if self.stats_dock.isVisible():
            self.stats_dock.show_panel(tab.qa.stats_panel())
        if self.spec_dock.isVisible():
            self.spec_dock.show_panel(tab.qa.schema_view())
