"""The window's watch over every open file: a sign that one changed, and each tab checks its own.

One QFileSystemWatcher holds every tab's local file and the folder it is in
(a file renamed over, as rsync and editors save, is dropped from the watch:
its folder's change brings the new one in). Whatever fires, and whenever the
application becomes active again (changes made while the watch could not
see, on a network drive for instance), each tab concerned compares the file
on disk with the one it opened (:meth:`~app.shell.disk_changes.DiskChanges.check`).
"""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt
from PySide6.QtGui import QGuiApplication

from app.shell.file_tab import FileTab


class DiskWatch(QObject):
    """Watches the files of ``tabs()`` (call :meth:`refresh` when tabs open, close or change files)."""

    def __init__(self, tabs: Callable[[], list[FileTab]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tabs = tabs
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._file_changed)
        self.watcher.directoryChanged.connect(self._folder_changed)
        app = QGuiApplication.instance()
        if app is not None:
            app.applicationStateChanged.connect(self._application_state)

    def _watched_tabs(self) -> list[tuple[str, FileTab]]:
        """(absolute path, tab) of every tab over one local file."""
        found = []
        for tab in self._tabs():
            path = tab.disk.path
            if path is not None:
                found.append((os.path.abspath(path), tab))
        return found

    def refresh(self) -> None:
        """Watch exactly the open files that exist and their folders (again after a replace dropped one)."""
        files = {path for path, _ in self._watched_tabs()}
        wanted = {p for p in files if os.path.exists(p)} | {os.path.dirname(p) for p in files}
        watched = set(self.watcher.files()) | set(self.watcher.directories())
        if watched - wanted:
            self.watcher.removePaths(sorted(watched - wanted))
        if wanted - watched:
            self.watcher.addPaths(sorted(wanted - watched))

    def check_all(self) -> None:
        """Every tab looks at its file on disk now."""
        self._check(lambda path: True)

    def _check(self, concerned: Callable[[str], bool]) -> None:
        self.refresh()
        for path, tab in self._watched_tabs():
            if concerned(path):
                tab.disk.check()

    def _file_changed(self, path: str) -> None:
        self._check(lambda p: p == path)

    def _folder_changed(self, folder: str) -> None:
        self._check(lambda p: os.path.dirname(p) == folder)

    def _application_state(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.check_all()
