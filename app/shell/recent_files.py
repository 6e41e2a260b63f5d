"""Recent files: the File menu's Open Recent, the start page's list, and the folders this app wrote to.

The settings keep the list; :class:`RecentFiles` keeps its two views in step
and opens a chosen file through the ``open_file`` callable the window gives
it. The folders written to (outputs, and those of recent files, since Save
writes beside them) are where a killed save may have left temporaries:
:func:`sweep_stale_temps_in` removes them at start.
"""
from __future__ import annotations

import os
import threading
from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu

from app.models.settings import Settings
from app.style import icons
from app.views.start_page import StartPage, display_name
from codec.storage.remote import is_url
from codec.storage.temp_files import sweep_stale_temps


def sweep_stale_temps_in(folders: list[str]) -> threading.Thread:
    """Remove temporary files a killed save or export of ours left in ``folders``, off the GUI thread.

    A folder on a slow or gone network share must not hold up the start.
    """
    def sweep() -> None:
        for folder in folders:
            try:
                sweep_stale_temps(folder)
            except OSError:
                pass  # nothing to do about it at start; the next write there sweeps again

    thread = threading.Thread(target=sweep, name="sweep-stale-temps", daemon=True)
    thread.start()
    return thread


class RecentFiles(QObject):
    """The recent files list shown in ``menu`` (filled when it opens) and on ``start_page``."""

    def __init__(self, settings: Settings, menu: QMenu, start_page: StartPage,
                 open_file: Callable[[str], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.menu = menu
        self.start_page = start_page
        self._open_file = open_file
        menu.aboutToShow.connect(self.fill_menu)
        self.refresh()

    def add(self, path: str) -> None:
        """``path`` was opened or saved: it goes first in the list."""
        self.settings.add_recent(path)
        self.refresh()

    def refresh(self) -> None:
        self.start_page.set_recent(self.settings.recent_files())

    def fill_menu(self) -> None:
        self.menu.clear()
        files = self.settings.recent_files()
        for path in files:
            action = self.menu.addAction(icons.icon("file"), display_name(path))
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self._open_file(p))
        if not files:
            self.menu.addAction("No Recent Files").setEnabled(False)
        self.menu.addSeparator()
        clear = self.menu.addAction("Clear Recent Files", self.clear)
        clear.setEnabled(bool(files))

    def clear(self) -> None:
        self.settings.clear_recent()
        self.refresh()

    def written_folders(self) -> list[str]:
        """Folders this app wrote to: output folders, and those of recent local files (Save writes beside
        them). A URL's upload leaves no temporary under its name (see codec.storage.writer), and no local folder."""
        recent = [os.path.dirname(p) for p in self.settings.recent_files() if not is_url(p)]
        folders = [f for f in self.settings.output_directories() if not is_url(f)] + recent
        return list(dict.fromkeys(folders))
