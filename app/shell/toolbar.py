"""The main toolbar: the actions used most, the menus' own QActions (so each is enabled, checked
and shortcut the same in both places). View > Toolbar shows or hides it; the window state keeps that."""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QToolBar

from app.style import icons
from app.views.action_state import own_status_tip, retip

ICON_SIZE = 20


def make_toolbar(window: QMainWindow, groups: Sequence[Sequence[tuple[QAction, str]]]) -> QToolBar:
    """A toolbar over ``window`` with ``groups`` of (action, icon name), separated; an action without an
    icon gets the named one. Its tooltips say the action's name, shortcut and what it does."""
    bar = QToolBar("Toolbar", window)
    bar.setObjectName("mainToolbar")  # the window state (saveState) keeps it by this name
    bar.setIconSize(QSize(ICON_SIZE, ICON_SIZE))
    bar.setFloatable(False)
    for n, group in enumerate(groups):
        if n:
            bar.addSeparator()
        for action, icon in group:
            if action.icon().isNull():
                action.setIcon(icons.icon(icon))
            retip(action, tool_tip(action))
            bar.addAction(action)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    toggle = bar.toggleViewAction()
    toggle.setText("&Toolbar")
    toggle.setStatusTip("Show or hide the toolbar")
    return bar


def tool_tip(action: QAction) -> str:
    """``Open (Ctrl+O)`` over the action's status tip."""
    name = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")
    key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    first = f"{name} ({key})" if key else name
    tip = own_status_tip(action)
    return f"{first}\n{tip}" if tip and tip != first else first
