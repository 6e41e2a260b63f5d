"""The window's part of damage handling: the Problems Panel action and the Salvage dialog.

The main window creates one :class:`DamageActions`, gives it the host window
(for actions, messages and the dialog's parent), the settings, a "current tab"
callable and a way to open a file (the salvaged copy), and tells it when a tab
is opened or becomes current. The panel itself belongs to each tab's
:class:`~app.shell.corruption_tools.CorruptionTools`.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from app.dialogs.salvage_dialog import SalvageDialog
from app.models.record_format import SALVAGE_REASON, container_of
from app.models.settings import Settings
from codec.format.problem_text import TFRECORD

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab


class DamageActions(QObject):
    """Salvage Intact Records… (File menu, after ``after``) and Problems Panel (first in the View menu).

    ``message(str)``: a note for the status bar.
    """

    message = Signal(str)

    def __init__(self, window: QMainWindow, settings: Settings, current_tab: Callable[[], FileTab | None],
                 open_file: Callable[[str], object], file_menu: QMenu, view_menu: QMenu, after: QAction) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._tab = current_tab
        self._open_file = open_file
        self._dialog: SalvageDialog | None = None
        self.salvage_action = self._action("Sal&vage Intact Records…", self.salvage_current, None,
                                           "Write a clean copy with every record that can be trusted")
        self.problems_action = self._action("&Problems Panel", self._toggle_panel, "Ctrl+Shift+P",
                                            "Show or hide the list of damage found in this file")
        self.problems_action.setCheckable(True)
        after_index = file_menu.actions().index(after) + 1
        file_menu.insertAction(file_menu.actions()[after_index], self.salvage_action)
        view_menu.insertAction(view_menu.actions()[0], self.problems_action)
        self.actions = [self.salvage_action, self.problems_action]

    def _action(self, text: str, slot, shortcut: str | None, tip: str) -> QAction:
        action = QAction(text, self.window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.window.addAction(action)
        return action

    def tab_opened(self, tab: FileTab) -> None:
        tab.corruption.salvage_requested.connect(self.salvage_current)
        tab.corruption.panel_visibility_changed.connect(self.current_changed)

    def current_changed(self, *_) -> None:
        """The Problems Panel action shows whether the current tab's panel is open."""
        tab = self._tab()
        self.problems_action.setChecked(tab is not None and tab.corruption.panel_visible())

    def _toggle_panel(self, on: bool) -> None:
        tab = self._tab()
        if tab is not None:
            tab.corruption.set_panel_visible(on)

    def _message(self, text: str) -> None:
        self.message.emit(text)

    def salvage_current(self) -> SalvageDialog | None:
        """Open the Salvage dialog for the current tab's file (non-modal: the window stays usable)."""
        tab = self._tab()
        if tab is None:
            return None
        if tab.is_set:
            self._message("salvage works on one file: open the damaged shard on its own")
            return None
        if container_of(tab.session.source) != TFRECORD:
            self._message(f"cannot salvage: {SALVAGE_REASON}")
            return None
        dialog = self._dialog
        if dialog is not None and (dialog.is_running() or dialog.source == tab.path) and dialog.isVisible():
            dialog.raise_()
            dialog.activateWindow()
            return dialog
        if dialog is not None:
            dialog.deleteLater()
        dialog = SalvageDialog(tab.path, tab.session.source.compression, len(tab.session.source.problems), self.window,
                               folder=self.settings.last_output_directory())
        dialog.open_requested.connect(self._open_file)
        dialog.salvage_finished.connect(self._salvage_finished)
        self._dialog = dialog
        dialog.show()
        return dialog

    def _salvage_finished(self, result) -> None:
        if result is not None:
            self.settings.add_output_directory(os.path.dirname(result.report.output))
            self._message(f"salvaged {os.path.basename(result.report.source)}: {result.report.summary()}")
