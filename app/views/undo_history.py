"""The undo history: a dock with the current tab's edits, newest last; clicking one goes back to it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoGroup
from PySide6.QtWidgets import QDockWidget, QUndoView, QWidget


class UndoHistoryDock(QDockWidget):
    """A QUndoView over the window's undo group (it follows the active tab's stack)."""

    def __init__(self, group: QUndoGroup, parent: QWidget | None = None) -> None:
        super().__init__("Undo History", parent)
        self.setObjectName("UndoHistoryDock")  # saveState/restoreState key
        self.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.view = QUndoView(group, self)
        self.view.setEmptyLabel("<as opened>")
        self.view.setAlternatingRowColors(True)
        self.setWidget(self.view)
