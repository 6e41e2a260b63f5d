"""Qt's own file dialog (where the platform has none) at a sensible size, its dates in full.

Every Open, Save and Choose Folder dialog goes through QFileDialog's static
functions; where they show Qt's dialog it opens small, with a Date Modified
column too narrow for a date ("27 11 2…6 09:55"). :class:`FileDialogSizer`
fits each such dialog once, when its window takes the focus.
"""
from __future__ import annotations

from PySide6.QtCore import QDate, QDateTime, QLocale, QObject, QTime
from PySide6.QtGui import QGuiApplication, QWindow
from PySide6.QtWidgets import QApplication, QFileDialog, QHeaderView, QTreeView, QWidget

SCREEN_SHARE = 0.6  # of the screen's width and height...
MIN_SIZE = (900, 560)  # ...but at least this, within the screen
SIZE_COLUMN, TYPE_COLUMN, DATE_COLUMN = 1, 2, 3  # QFileSystemModel's columns after the name


def fit_file_dialog(dialog: QFileDialog) -> None:
    """Resize a non-native ``dialog`` to a share of its screen and size its detail columns to their text."""
    if dialog.property("tfrlens_fitted"):
        return
    dialog.setProperty("tfrlens_fitted", True)
    screen = dialog.screen() or QGuiApplication.primaryScreen()
    if screen is not None:
        room = screen.availableGeometry()
        width = min(max(dialog.width(), int(room.width() * SCREEN_SHARE), MIN_SIZE[0]), room.width())
        height = min(max(dialog.height(), int(room.height() * SCREEN_SHARE), MIN_SIZE[1]), room.height())
        centre = dialog.geometry().center()
        dialog.resize(width, height)
        frame = dialog.frameGeometry()
        frame.moveCenter(centre)
        frame.moveTop(max(frame.top(), room.top()))
        frame.moveLeft(max(room.left(), min(frame.left(), room.right() - frame.width())))
        dialog.move(frame.topLeft())
    tree = dialog.findChild(QTreeView, "treeView")
    if tree is None:
        return
    header = tree.header()
    fm = tree.fontMetrics()
    pad = 2 * fm.averageCharWidth() + 8
    date = QLocale().toString(QDateTime(QDate(2026, 12, 28), QTime(23, 59, 59)), QLocale.FormatType.ShortFormat)
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the name takes what is left
    for column, sample in ((SIZE_COLUMN, "999.9 MiB"), (TYPE_COLUMN, "Markdown document"), (DATE_COLUMN, date)):
        if column < header.count():
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, max(fm.horizontalAdvance(sample) + pad, header.sectionSizeHint(column)))


class FileDialogSizer(QObject):
    """Fits every Qt file dialog of the app once, when it first takes the focus."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        app = QApplication.instance()
        if isinstance(app, QGuiApplication):
            app.focusWindowChanged.connect(self._focus_changed)

    def _focus_changed(self, _window: QWindow | None) -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog) and not dialog.property("tfrlens_fitted"):
            fit_file_dialog(dialog)
