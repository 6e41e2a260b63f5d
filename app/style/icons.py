"""The app's icons, drawn as SVG in ``resources/icons``."""
from __future__ import annotations

from functools import cache

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon, QPixmap

from resources import icon_path


@cache
def icon(name: str) -> QIcon:
    """The icon ``name`` (``resources/icons/NAME.svg``); an empty icon if its file is missing."""
    return QIcon(icon_path(name))


def pixmap(name: str, size: int) -> QPixmap:
    """The icon rendered at ``size`` x ``size`` device-independent pixels."""
    return icon(name).pixmap(QSize(size, size))
