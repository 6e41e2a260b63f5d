"""The main window's share of dataset QA: Statistics, Feature Spec and Embedding Projection docks, View menu actions.

Each dock holds a stack with one panel per open file (made when first
shown, see :class:`~app.shell.qa_views.QaViews`) and shows the current tab's.
The actions switch the current tab between its table and gallery, focus
the filter bar, and show or hide the docks. The part knows a tab only by its
QA views (:class:`TabQa`), reached through a "current tab's QA" callable; the
window calls :meth:`QaDocks.refresh` when the current tab changes.
"""
from __future__ import annotations

from typing import Callable, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMenu, QStackedWidget, QWidget

from app.style import palette
from app.views.action_state import set_enabled

DOCK_SHARE = 0.35  # of the window's height, when a dock first opens
SCALARS_SHARE = 0.6  # the Scalars dock's, shown for a log


class PanelDock(QDockWidget):
    """A dock whose content is the current file's panel (or a hint when no file is open)."""

    def __init__(self, title: str, name: str, hint: str, parent: QWidget) -> None:
        super().__init__(title, parent)
        self.setObjectName(name)
        self.setAllowedAreas(Qt.DockWidgetArea.AllDockWidgetAreas)
        self.stack = QStackedWidget(self)
        self.hint = QLabel(hint, self.stack)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        palette.follow(self.hint, lambda: palette.HINT_STYLE)
        self.stack.addWidget(self.hint)
        self.setWidget(self.stack)

    def show_panel(self, panel: QWidget | None) -> None:
        if panel is None:
            self.stack.setCurrentWidget(self.hint)
            return
        if self.stack.indexOf(panel) < 0:
            self.stack.addWidget(panel)
        self.stack.setCurrentWidget(panel)


class TabQa(Protocol):
    """What the docks and actions need of a tab: its QA views (see :class:`~app.shell.qa_views.QaViews`)."""

    def show_table(self) -> None: ...

    def show_gallery(self) -> None: ...

    def focus_filter(self) -> None: ...

    def stats_panel(self) -> QWidget: ...

    def schema_view(self) -> QWidget: ...

    def projection_view(self) -> QWidget: ...

    def scalars_view(self) -> QWidget: ...


class QaDocks(QObject):
    """Docks and actions of the gallery, filter, statistics and feature spec.

    ``current_qa()`` gives the current tab's QA views, or None when no file is open.
    """

    def __init__(self, window: QMainWindow, view_menu: QMenu, current_qa: Callable[[], TabQa | None],
                 page_shown: Callable[[], bool] = lambda: False) -> None:
        super().__init__(window)
        self.window = window
        self._current_qa = current_qa
        self._page_shown = page_shown  # a tab that is no file (a report, an opening) is current
        self._stepped_aside: list[QDockWidget] = []  # docks hidden for such a tab, shown again after it
        self.stats_dock = PanelDock("Statistics", "statisticsDock", "Open a file to see its statistics.", window)
        self.spec_dock = PanelDock("Feature Spec", "featureSpecDock", "Open a file to see its feature spec.", window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.stats_dock)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.spec_dock)
        self.projection_dock = PanelDock("Embedding Projection", "projectionDock",
                                         "Open a file to project its embeddings.", window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.projection_dock)
        window.tabifyDockWidget(self.stats_dock, self.spec_dock)
        window.tabifyDockWidget(self.spec_dock, self.projection_dock)
        self.scalars_dock = PanelDock("Scalars", "scalarsDock", "Open a TensorBoard log to plot its scalars.", window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.scalars_dock)
        window.tabifyDockWidget(self.projection_dock, self.scalars_dock)
        self.scalars_dock.hide()
        self.stats_dock.hide()
        self.spec_dock.hide()
        self.projection_dock.hide()
        self._sized = False

        self.table_action = self._action("&Table", "Ctrl+1", lambda: self._qa_call(lambda qa: qa.show_table()),
                                         "Show the records as a table")
        self.gallery_action = self._action("&Gallery", "Ctrl+2", lambda: self._qa_call(lambda qa: qa.show_gallery()),
                                           "Show the records' images as a grid of thumbnails")
        self.filter_action = self._action("&Filter Records…", QKeySequence.StandardKey.Find,
                                          lambda: self._qa_call(lambda qa: qa.focus_filter()),
                                          "Show only the records matching an expression")
        self.stats_action = self._dock_action(self.stats_dock, "&Statistics", "Ctrl+Shift+I",
                                              "Per-feature statistics with histograms")
        self.spec_action = self._dock_action(self.spec_dock, "Feature S&pec", "Ctrl+Shift+K",
                                             "The inferred tf.io feature spec, as Python and JSON")
        self.projection_action = self._dock_action(self.projection_dock, "&Embedding Projection", "Ctrl+Shift+J",
                                                   "An embedding's records in 2-D (PCA), coloured by label")
        view_menu.addSeparator()
        for action in (self.table_action, self.gallery_action, self.filter_action):
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(self.stats_action)
        view_menu.addAction(self.spec_action)
        view_menu.addAction(self.projection_action)
        self.scalars_action = self._dock_action(self.scalars_dock, "Sca&lars", "Ctrl+Shift+L",
                                                "A TensorBoard log's scalars and histograms, plotted per tag")
        view_menu.addAction(self.scalars_action)
        self.actions = [self.table_action, self.gallery_action, self.filter_action]

        for dock in self.docks():
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

    def _qa_call(self, fn: Callable[[TabQa], None]) -> None:
        qa = self._current_qa()
        if qa is not None:
            fn(qa)

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

    def docks(self) -> tuple[PanelDock, ...]:
        return self.stats_dock, self.spec_dock, self.projection_dock, self.scalars_dock

    def show_projection(self) -> None:
        self.show_dock(self.projection_dock)

    def show_scalars(self) -> None:
        """Show the Scalars dock with a log's plots, taller than the other docks start (the plots need room)."""
        first = self.scalars_dock.isHidden()
        self.show_dock(self.scalars_dock)
        if first and not self.scalars_dock.isFloating():
            self.window.resizeDocks([self.scalars_dock], [int(self.window.height() * SCALARS_SHARE)],
                                    Qt.Orientation.Vertical)

    def show_statistics(self) -> None:
        self.show_dock(self.stats_dock)

    def show_feature_spec(self) -> None:
        self.show_dock(self.spec_dock)

    def refresh(self, *_) -> None:
        """Show the current tab's panels in the docks (making them when a dock is visible)."""
        qa = self._current_qa()
        why = "a report or a URL still opening is shown, not a file" if self._page_shown() else "open a file first"
        for action in (*self.actions, self.stats_action, self.spec_action, self.projection_action,
                       self.scalars_action):
            set_enabled(action, qa is not None, why)
        if qa is None:
            for dock in self.docks():
                dock.show_panel(None)
            if self._page_shown():  # the file docks step aside: the page gets the whole window
                for dock in self.docks():
                    if dock.isVisible():
                        self._stepped_aside.append(dock)
                        dock.hide()
            return
        for dock in self._stepped_aside:
            dock.show()
        self._stepped_aside.clear()
        if self.stats_dock.isVisible():
            self.stats_dock.show_panel(qa.stats_panel())
        if self.spec_dock.isVisible():
            self.spec_dock.show_panel(qa.schema_view())
        if self.projection_dock.isVisible():
            self.projection_dock.show_panel(qa.projection_view())
        if self.scalars_dock.isVisible():
            self.scalars_dock.show_panel(qa.scalars_view())
