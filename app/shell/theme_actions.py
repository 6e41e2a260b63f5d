"""View > Theme (System, Light, Dark): the choice, remembered, applied to the whole app at once.

System follows the platform's colour scheme (Qt 6.5+ ``QStyleHints.colorScheme``)
and changes with it. Dark uses the Fusion style with the palette's dark roles, which
looks the same on every platform; Light is the platform's own style and palette.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QStyleFactory, QWidget

from app.models.settings import Settings
from app.style import palette

SYSTEM = "system"
CHOICES = ((SYSTEM, "&System"), (palette.LIGHT, "&Light"), (palette.DARK, "&Dark"))


def system_theme() -> str:
    """What the platform asks for: dark only when it says so."""
    scheme = QGuiApplication.styleHints().colorScheme()
    return palette.DARK if scheme == Qt.ColorScheme.Dark else palette.LIGHT


class ThemeActions(QObject):
    """The View > Theme submenu; ``choose`` is what its items do."""

    def __init__(self, window: QWidget, settings: Settings, view_menu: QMenu, *,
                 refresh: Callable[[], None]) -> None:
        super().__init__(window)
        self.window, self.settings, self._refresh = window, settings, refresh
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self.app = app
        # the platform's look, for Light: read once, before this app changes it
        if app.property("tfrlens_light_style") is None:
            app.setProperty("tfrlens_light_style", app.style().name())
            light = app.palette() if system_theme() == palette.LIGHT else app.style().standardPalette()
            app.setProperty("tfrlens_light_palette", QPalette(light))
        self._light_style = str(app.property("tfrlens_light_style"))
        self._light_palette = QPalette(app.property("tfrlens_light_palette"))
        self.menu = view_menu.addMenu("&Theme")
        group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        for key, text in CHOICES:
            action = QAction(text, self)
            action.setCheckable(True)
            action.triggered.connect(lambda _checked=False, k=key: self.choose(k))
            group.addAction(action)
            self.menu.addAction(action)
            self.actions[key] = action
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_changed)
        palette.changes.changed.connect(self._theme_changed)
        self.choose(settings.theme(), remember=False)

    def chosen(self) -> str:
        """The menu's choice: ``SYSTEM``, ``palette.LIGHT`` or ``palette.DARK``."""
        return next((k for k, a in self.actions.items() if a.isChecked()), SYSTEM)

    def choose(self, key: str, *, remember: bool = True) -> None:
        """Use theme ``key`` (System, Light or Dark) now, in every open view."""
        self.actions[key].setChecked(True)
        if remember:
            self.settings.set_theme(key)
        self.apply(system_theme() if key == SYSTEM else key)

    def apply(self, which: str) -> None:
        """Switch the Qt style and palette and the app's own colours to ``which``; repaint."""
        style = self._style_for(which)
        if self.app.style().name().lower() != style.lower():
            self.app.setStyle(QStyleFactory.create(style))
        self.app.setPalette(palette.qt_palette(which, self._light_palette))
        palette.use(which)  # the app's colours, then the views that rebuild text told
        for widget in QApplication.allWidgets():
            widget.update()

    def _style_for(self, which: str) -> str:
        return "Fusion" if which == palette.DARK else self._light_style

    def _theme_changed(self, _theme: str) -> None:
        self._refresh()  # the status bar's chips hold their colours in style sheets

    def _system_changed(self, *_) -> None:
        if self.chosen() == SYSTEM:
            self.apply(system_theme())
