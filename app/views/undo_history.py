"""The undo history: a dock with the current tab's edits, newest last; clicking one goes back to it.

The state the file on disk holds (as opened, or as last saved) is marked "saved": undo and redo
go on across a save, and the marker says where the file stands among them.
"""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QUndoGroup
from PySide6.QtWidgets import QDockWidget, QStyledItemDelegate, QStyleOptionViewItem, QUndoView, QWidget

from app.style import icons

SAVED_MARK = " · saved"


class _SavedMark(QStyledItemDelegate):
    """Adds SAVED_MARK to the row of the active stack's clean state (row 0 is the state as opened)."""

    def __init__(self, group: QUndoGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.group = group

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        stack = self.group.activeStack()
        if stack is not None and stack.count() and index.row() == stack.cleanIndex():
            option.text += SAVED_MARK


class UndoHistoryDock(QDockWidget):
    """A QUndoView over the window's undo group (it follows the active tab's stack)."""

    def __init__(self, group: QUndoGroup, parent: QWidget | None = None) -> None:
        super().__init__("Undo History", parent)
        self.setObjectName("UndoHistoryDock")  # saveState/restoreState key
        self.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.view = QUndoView(group, self)
        self.view.setEmptyLabel("<as opened>")
        self.view.setCleanIcon(icons.icon("file"))
        self.view.setItemDelegate(_SavedMark(group, self.view))
        group.cleanChanged.connect(lambda *_: self.view.viewport().update())
        self.view.setAlternatingRowColors(True)
        self.setWidget(self.view)

    def row_text(self, row: int) -> str:
        """What row ``row`` shows (the saved marker included)."""
        option = QStyleOptionViewItem()
        self.view.itemDelegate().initStyleOption(option, self.view.model().index(row, 0))
        return option.text
