"""The "Stretch contrast" choice for high-depth images, shared by every preview and gallery, and remembered."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.models.settings import Settings
from codec.decode.image_display import STRETCH_DTYPE, STRETCH_MINMAX


def stretch_mode(on: bool) -> str:
    """The codec's ``stretch`` argument for the "Stretch contrast" choice."""
    return STRETCH_MINMAX if on else STRETCH_DTYPE


class StretchPreference(QObject):
    """The "Stretch contrast" choice: kept in the settings, ``changed(bool)`` to every view showing images."""

    changed = Signal(bool)

    def value(self) -> bool:
        return Settings().stretch_contrast()

    def set_value(self, on: bool) -> None:
        if on != self.value():
            Settings().set_stretch_contrast(on)
            self.changed.emit(on)


_preference: StretchPreference | None = None


def stretch_preference() -> StretchPreference:
    """The one shared :class:`StretchPreference` (made on first use, on the GUI thread)."""
    global _preference
    if _preference is None:
        _preference = StretchPreference()
    return _preference
