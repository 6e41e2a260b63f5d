"""The Help menu: the user guide (offline), the filter language's page, the keyboard shortcut sheet and About."""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from app.dialogs.help_dialogs import APP_NAME, AboutDialog, GuideDialog, ShortcutsDialog, guide_folder, menu_shortcuts


class HelpActions(QObject):
    """Fills ``menu``; each window is made when first asked for and shown without blocking the window."""

    def __init__(self, window: QMainWindow, menu: QMenu) -> None:
        super().__init__(window)
        self._window = window
        self.guide: GuideDialog | None = None
        self.shortcuts: ShortcutsDialog | None = None
        self.about: AboutDialog | None = None
        folder = guide_folder()
        self.guide_action = self._action("&User Guide", lambda: self.show_guide("index.md"), "F1",
                                         "The documentation, read offline inside the app")
        self.filters_action = self._action("&Filter Expressions", lambda: self.show_guide("filters.md"), None,
                                           "The filter language with examples (in is membership, ~ a regex)")
        self.shortcuts_action = self._action("&Keyboard Shortcuts", self.show_shortcuts, "Ctrl+/",
                                             "Every action that has a keyboard shortcut, by menu")
        self.about_action = self._action(f"&About {APP_NAME}", self.show_about, None, "The version, and what it runs on")
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        for action in (self.guide_action, self.filters_action):
            action.setEnabled(folder is not None)
            if folder is None:
                action.setToolTip(f"{action.text().replace('&', '')}: the docs pages were not installed with this copy")
        menu.addAction(self.guide_action)
        menu.addAction(self.filters_action)
        menu.addAction(self.shortcuts_action)
        menu.addSeparator()
        menu.addAction(self.about_action)

    def _action(self, text: str, slot, shortcut: str | None, tip: str) -> QAction:
        action = QAction(text, self._window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self._window.addAction(action)
        return action

    def show_guide(self, page: str = "index.md") -> GuideDialog | None:
        """The user guide at ``page`` (``filters.md``); None when the pages are not installed."""
        folder = guide_folder()
        if folder is None:
            return None
        if self.guide is None or self.guide.folder != folder:
            self.guide = GuideDialog(folder, self._window)
        self.guide.show_page(page)
        self.guide.show()
        self.guide.raise_()
        self.guide.activateWindow()
        return self.guide

    def show_shortcuts(self) -> ShortcutsDialog:
        """The shortcut sheet, read from the window's actions now (actions added since are listed)."""
        if self.shortcuts is not None:
            self.shortcuts.close()
        self.shortcuts = ShortcutsDialog(menu_shortcuts(self._window.menuBar(), self._window.actions()), self._window)
        self.shortcuts.show()
        return self.shortcuts

    def show_about(self) -> AboutDialog:
        if self.about is None:
            self.about = AboutDialog(guide_folder(), self._window)
            self.about.guide_page.connect(self.show_guide)
        self.about.show()
        self.about.raise_()
        return self.about
