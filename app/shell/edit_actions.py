"""The window's part of editing: actions and menus, the undo group, the history dock, unsaved prompts.

The main window creates one :class:`EditActions`, hands it the host window (for
actions, docks, the status bar and dialogs), the tab widget, the settings and a
"current tab" callable, and tells it when a tab is opened, becomes current, or
is about to close; it reports back through signals (an error, an error no
longer current, a file saved). Everything else about an edit lives in the tab's
:class:`~app.shell.tab_editing.TabEditing`. Undo/redo act on the current tab's
stack through a QUndoGroup.
"""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import QLabel, QMainWindow, QMenu, QTabWidget
from shiboken6 import isValid as shiboken_valid

from app.dialogs import edit_dialogs
from app.dialogs.export_dialog import ExportDialog
from app.dialogs.save_names import proposed_copy
from app.models.settings import Settings, full_path
from app.shell.file_tab import FileTab
from app.shell.remote_saving import RemoteSaves
from app.style import palette
from app.views.action_state import set_enabled
from app.views.undo_history import UndoHistoryDock
from codec.errors import TFRecordError
from codec.storage.remote import is_url


class EditActions(QObject):
    """Save, Save As, Export, Undo/Redo and the record edits, for the current tab.

    ``ask_unsaved(parent, name) -> "save" | "discard" | "cancel"`` is the
    unsaved-changes prompt; tests replace it. The File menu's save actions go
    before ``before`` (at its end when None).
    """

    failed = Signal(str)  # something went wrong: for the window's message bar
    message = Signal(str)  # a note for the status bar (about the current tab)
    error_cleared = Signal()  # an edit or a save went right: an earlier error no longer applies
    saved = Signal(str)  # a tab was written to this path (now a recent file)

    def __init__(self, window: QMainWindow, tabs: QTabWidget, settings: Settings,
                 current_tab: Callable[[], FileTab | None], file_menu: QMenu, edit_menu: QMenu, view_menu: QMenu,
                 *, before: QAction | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.tabs = tabs
        self.settings = settings
        self._tab = current_tab
        self.ask_unsaved: Callable[[object, str], str] = edit_dialogs.ask_unsaved
        self.export_dialog: ExportDialog | None = None
        self.remote_saves = RemoteSaves(window, self)  # Save As to a URL: asks before replacing an object
        self.remote_saves.message.connect(self._message)
        self.remote_saves.failed.connect(self.failed)
        self.group = QUndoGroup(self)
        self.group.cleanChanged.connect(lambda *_: self._update_marks())
        self._make_actions()
        self._fill_menus(file_menu, edit_menu, view_menu, before)
        self.history = UndoHistoryDock(self.group, window)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.history)
        self.history.hide()
        self.history_action = history_action = self.history.toggleViewAction()
        history_action.setText("Undo &History")
        history_action.setShortcut(QKeySequence("Ctrl+Shift+H"))
        history_action.setStatusTip("The current file's edits, in order: click one to go back to it")
        view_menu.addSeparator()
        view_menu.addAction(history_action)
        self.mode_label = QLabel()
        palette.follow(self.mode_label, lambda: palette.HINT_STYLE)
        window.statusBar().addPermanentWidget(self.mode_label)
        self.refresh()  # no file yet: the actions are off, saying why

    # -- building ---------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, tip: str = "", *, table: bool = False) -> QAction:
        """A window action; ``table``: its shortcut works while the record table has focus."""
        action = QAction(text, self.window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        if table:
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            self._table_actions.append(action)
        else:
            self.window.addAction(action)
        return action

    def _make_actions(self) -> None:
        self._table_actions: list[QAction] = []
        a = self._action
        self.undo_action = self.group.createUndoAction(self.window, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.group.createRedoAction(self.window, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.window.addAction(self.undo_action)
        self.window.addAction(self.redo_action)
        self.save_action = a("&Save", self.save_current, QKeySequence.StandardKey.Save,
                             "Write the edits over the file (safely: a new file is renamed over it)")
        self.save_as_action = a("Save &As…", self.save_as_current, "Ctrl+Shift+S",
                                "Write the records to another file, with a choice of compression")
        self.export_action = a("&Export…", self.export_current, "Ctrl+E",
                               "Export all or the selected records as TFRecord, JSON Lines, CSV or images; "
                               "or the index")
        self.delete_action = a("&Delete Records", lambda: self._call(lambda e: e.delete_selected()), "Del",
                               "Delete the selected records", table=True)
        self.duplicate_action = a("D&uplicate Records", lambda: self._call(lambda e: e.duplicate_selected()),
                                  "Ctrl+D", "Insert a copy of each selected record after it", table=True)
        self.insert_action = a("&Insert Empty Example", lambda: self._call(lambda e: e.insert_example()), "Ins",
                               "Insert a new, empty Example after the current record", table=True)
        self.move_up_action = a("Move &Up", lambda: self._call(lambda e: e.move_selected(-1)), "Alt+Up",
                                "Move the selected records one place up", table=True)
        self.move_down_action = a("Move Do&wn", lambda: self._call(lambda e: e.move_selected(1)), "Alt+Down",
                                  "Move the selected records one place down", table=True)
        self.batch_action = a("Edit &Selected Records…", lambda: self._call(lambda e: e.ask_batch_edit()),
                              "Ctrl+Shift+E", "Set or delete one feature on every selected record, in one step")
        self.add_feature_action = a("Add &Feature…", lambda: self._call(lambda e: e.ask_add_feature()), None,
                                    "Add a feature to the current record")
        self.replace_action = a("&Replace Record Bytes…", lambda: self._call(lambda e: e.ask_replace_record()),
                                None, "Replace the current record's bytes by hex, text or a file's content")
        self._edit_actions = [self.delete_action, self.duplicate_action, self.insert_action, self.move_up_action,
                              self.move_down_action, self.batch_action, self.add_feature_action,
                              self.replace_action]

    def _fill_menus(self, file_menu: QMenu, edit_menu: QMenu, view_menu: QMenu, before: QAction | None) -> None:
        if before not in file_menu.actions():
            before = None
        for action in (self.save_action, self.save_as_action, self.export_action):
            file_menu.insertAction(before, action)
        file_menu.insertSeparator(before)
        first = edit_menu.actions()[0] if edit_menu.actions() else None
        edit_menu.insertAction(first, self.undo_action)
        edit_menu.insertAction(first, self.redo_action)
        edit_menu.insertSeparator(first)
        edit_menu.addSeparator()
        for action in self._edit_actions[:5]:
            edit_menu.addAction(action)
        edit_menu.addSeparator()
        for action in self._edit_actions[5:]:
            edit_menu.addAction(action)

    # -- tabs -------------------------------------------------------------
    def tab_opened(self, tab: FileTab) -> None:
        editing = tab.editing
        self.group.addStack(editing.stack)
        editing.changed.connect(self.refresh)
        editing.modified_changed.connect(lambda *_: self._update_marks())
        editing.failed.connect(self.failed)
        editing.saved.connect(lambda path, t=tab: self._saved(t, path))
        # an edit made, undone or redone, or a save: an earlier error message no longer applies
        editing.stack.indexChanged.connect(lambda *_, t=tab: t is self._tab() and self.error_cleared.emit())
        tab.state_changed.connect(self.refresh)
        tab.table.selectionModel().selectionChanged.connect(lambda *_: self.refresh())
        table = tab.table  # its actions end the tab's row menu (FileTab.row_menu)
        for action in self._table_actions:
            table.addAction(action)
        separator = QAction(table)
        separator.setSeparator(True)
        table.addActions([separator, self.batch_action, self.replace_action, self.export_action])

    def current_changed(self, tab: FileTab | None) -> None:
        self.group.setActiveStack(tab.editing.stack if tab is not None else None)
        self._update_marks()
        self.refresh()

    def _file_tabs(self) -> list[FileTab]:
        """The files' tabs (not a URL's page while it opens, nor a run report's tab)."""
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, FileTab)]

    def _call(self, fn) -> None:
        tab = self._tab()
        if tab is not None:
            fn(tab.editing)

    def refresh(self) -> None:
        """Enable what the current tab allows; say why editing is off."""
        tab = self._tab()
        editing = tab.editing if tab is not None else None
        editable = editing is not None and editing.editable
        rows = editing.has_rows() if editable else False
        reason = editing.read_only_reason() if editing is not None else ""
        why = "open a file first" if tab is None else reason
        for action in self._edit_actions:
            set_enabled(action, editable and (rows or action is self.insert_action), why or "select records first")
        running = tab is not None and tab.is_running()
        set_enabled(self.save_action, editable and editing.modified and not running,
                    why or ("wait until indexing or checking has finished" if running else "no unsaved edits"))
        set_enabled(self.save_as_action, editable and not running,
                    why or "wait until indexing or checking has finished")
        indexed = tab is not None and tab.session.source.indexed
        set_enabled(self.export_action, indexed and not (editing and editing.busy),
                    "open a file first" if tab is None else "wait until indexing has finished" if not indexed
                    else reason or "wait until the edit under way has finished")
        set_enabled(self.history_action, tab is not None, "open a file first")  # an open dock stays, empty
        self.mode_label.setText("read-only" if reason else "")
        self.mode_label.setToolTip(reason)
        self.mode_label.setVisible(bool(reason))

    def _update_marks(self) -> None:
        """The title bar's [*], and a * on each modified tab."""
        if not shiboken_valid(self.tabs):
            return  # the window is being destroyed: its undo stacks leave the group one by one
        for tab in self._file_tabs():
            i = self.tabs.indexOf(tab)
            modified = tab.editing.modified
            text = tab.title + (" *" if modified else "")
            if self.tabs.tabText(i) != text:
                self.tabs.setTabText(i, text)
        tab = self._tab()
        self.window.setWindowModified(tab is not None and tab.editing.modified)
        self.refresh()

    def _saved(self, tab: FileTab, path: str) -> None:
        if tab is self._tab():
            self.error_cleared.emit()
        self.settings.add_output_directory(os.path.dirname(path))
        index = self.tabs.indexOf(tab)
        if index >= 0:
            self.tabs.setTabToolTip(index, path)
        self.saved.emit(path)

    # -- saving -------------------------------------------------------------
    def _message(self, text: str) -> None:
        self.message.emit(text)

    def save_current(self) -> bool:
        tab = self._tab()
        return tab is not None and self.save_tab(tab)

    def save_tab(self, tab: FileTab, on_done: Callable[[bool], None] | None = None) -> bool:
        """Save over the tab's file; a URL's goes through Save As: a remote original is replaced only when asked.

        A file that changed, was replaced or deleted on disk since the tab opened it is
        never written over silently: Overwrite · Save As… · Cancel.
        """
        if is_url(tab.path) and tab.session.target is not None:
            return self.save_as(tab, on_done, proposed=tab.path)  # Save: the object itself, asked before replacing
        why = self._changed_on_disk(tab)
        if why is None:
            return tab.editing.save(on_done=on_done)
        self.tabs.setCurrentWidget(tab)
        answer = edit_dialogs.ask_save_over_changed(self.window, tab.title, why)
        if answer == "overwrite":
            return tab.editing.save(on_done=on_done, overwrite_changed=True)
        if answer == "save_as":
            return self.save_as(tab, on_done)
        self._message(f"not saved: {tab.title} on disk is left as it is")
        return False

    @staticmethod
    def _changed_on_disk(tab: FileTab) -> str | None:
        """Why the file at the tab's path is not the one it opened (one line), or None; the tab's bar says so too."""
        document = tab.session.document
        if document is None:
            return None
        tab.disk.check()
        try:
            return document.changed_on_disk()
        except TFRecordError as exc:
            return str(exc)

    def save_as_current(self) -> bool:
        tab = self._tab()
        return tab is not None and self.save_as(tab)

    def save_as(self, tab: FileTab, on_done: Callable[[bool], None] | None = None, *,
                proposed: str | None = None) -> bool:
        """Ask where to (and how compressed), then save; to a URL, after asking about an object there.

        The name proposed is a new one beside the file (``NAME-edited.tfrecord``), unless ``proposed``.
        """
        proposed = proposed or proposed_copy(tab.path)
        answer = edit_dialogs.ask_save_as(self.window, proposed, tab.session.source.compression.value)
        if answer is None:
            return False
        path, compression = answer
        for other in self._file_tabs():
            if other is not tab and full_path(other.path) == path:
                self.failed.emit(f"{os.path.basename(path)} is open in another tab: close it first")
                return False
        if is_url(path):
            return self.remote_saves.save(tab, path, compression, on_done)
        return tab.editing.save(path, compression, on_done)

    def export_current(self) -> ExportDialog | None:
        """Open the export dialog for the current tab (records as shown, edits included)."""
        tab = self._tab()
        if tab is None:
            return None
        editing = tab.editing
        records = tab.session.records
        if not tab.session.source.indexed:
            self._message("export needs the whole file indexed: wait for indexing to finish")
            return None
        selected = editing.selected_records() if tab.table.selectionModel().hasSelection() else []
        if self.export_dialog is not None:
            self.export_dialog.deleteLater()
        shown = tab.proxy.matches()  # the filter's records (None: no filter)
        filtered = None if shown is None else shown.tolist()
        dialog = ExportDialog(records, tab.path, selected, self.window, modified=editing.modified, filtered=filtered)
        dialog.export_finished.connect(lambda result: self._exported(dialog, result))
        self.export_dialog = dialog
        dialog.show()
        return dialog

    def _exported(self, dialog: ExportDialog, result) -> None:
        self._message(dialog.message)
        if result is not None:
            out = getattr(result, "path", None) or (result if isinstance(result, str) else None)
            if out:
                out = os.path.abspath(out)
                self.settings.add_output_directory(out if os.path.isdir(out) else os.path.dirname(out))

    # -- unsaved changes ----------------------------------------------------
    def confirm_close(self, tab: FileTab, close: Callable[[], None]) -> bool:
        """True when ``tab`` may close now; on "Save" it saves and calls ``close()`` after."""
        editing = tab.editing
        if editing.busy:
            self._message(f"{tab.title}: wait until saving has finished")
            return False
        if not editing.modified:
            return True
        self.tabs.setCurrentWidget(tab)
        answer = self.ask_unsaved(self.window, tab.title)
        if answer == "discard":
            return True
        if answer == "save":
            self.save_tab(tab, on_done=lambda ok: ok and close())
        return False

    def confirm_quit(self) -> bool:
        """True when the window may close now; on "Save" it saves each and closes it after."""
        answers: list[tuple[FileTab, str]] = []
        for tab in self._file_tabs():
            if tab.editing.busy:
                self._message(f"{tab.title}: wait until saving has finished")
                return False
            if tab.editing.modified:
                self.tabs.setCurrentWidget(tab)
                answer = self.ask_unsaved(self.window, tab.title)
                if answer not in ("save", "discard"):
                    return False
                answers.append((tab, answer))
        for tab, answer in answers:
            if answer == "discard":
                tab.editing.discard()
        to_save = [tab for tab, answer in answers if answer == "save"]
        if not to_save:
            return True
        self._save_then_quit(to_save)
        return False

    def _save_then_quit(self, tabs: list[FileTab]) -> None:
        if not tabs:
            self.window.close()
            return
        tab, rest = tabs[0], tabs[1:]
        if not self.save_tab(tab, on_done=lambda ok: ok and self._save_then_quit(rest)):
            return
