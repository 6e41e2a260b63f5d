"""Editing one tab: its edits, their dialogs and saving, wired to the table and the record detail.

A :class:`TabEditing` is made by the tab with its :class:`~app.shell.session.TabSession`
(the document, its undo stack, the records shown), the
:class:`~app.shell.row_selection.RowSelection` of its table, its table model
and its record detail. Its parts: :class:`~app.shell.record_edits.RecordEdits`
(every edit as a command), :class:`~app.shell.edit_prompts.EditPrompts` (the
dialogs, and the tree's typed requests), :class:`~app.shell.saving.DocumentSaver`
on a :class:`~app.shell.progress_worker.ProgressWorker`. What a command did
comes back as the session's ``records_changed``, and only then do the views
follow: the table's rows, the selection, the record shown.
"""
from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from app.dialogs.edit_dialogs import BatchEdit
from app.models.commands import DocumentChange, EditTarget
from app.models.record_table_model import RecordTableModel
from app.shell.edit_prompts import EditPrompts
from app.shell.progress_worker import ProgressWorker
from app.shell.record_edits import RecordEdits
from app.shell.row_selection import RowSelection
from app.shell.saving import DocumentSaver
from app.shell.session import TabSession
from app.views.record_detail import RecordDetail
from codec.editing.document import Document
from codec.editing.edited import EditedFile


class TabEditing(QObject):
    """The edit part of one tab (see the module docstring).

    Signals: ``changed()`` after any change of the document or of what can be
    done; ``modified_changed(bool)``; ``failed(str)`` a one-line message for the
    message bar; ``message(str)`` a note for the status bar; ``saved(str)`` the
    path a save wrote (the tab shows it now); ``feature_added(str)`` the key of a feature just added.
    """

    changed = Signal()
    modified_changed = Signal(bool)
    failed = Signal(str)
    message = Signal(str)
    saved = Signal(str)
    feature_added = Signal(str)

    def __init__(self, session: TabSession, selection: RowSelection, model: RecordTableModel,
                 detail: RecordDetail, dialog_parent: QWidget) -> None:
        super().__init__(dialog_parent)
        self.session = session
        self.selection = selection
        self.model = model
        self.detail = detail
        self.worker = ProgressWorker(dialog_parent, self)
        self.edits = RecordEdits(session, selection, self.worker, self)
        self.prompts = EditPrompts(self.edits, selection, dialog_parent, self)
        self.saver = DocumentSaver(session, self.worker, self)
        self._tree_path: tuple[int, tuple] | None = None  # (row, tree path) to go back to once re-shown
        for part in (self.edits, self.saver):
            part.message.connect(self.message)
            part.failed.connect(self.failed)
        self.worker.failed.connect(self.failed)
        self.saver.saved.connect(self.saved)
        self.edits.feature_added.connect(self.feature_added)
        self.worker.busy_changed.connect(self._busy_changed)
        session.stack.cleanChanged.connect(lambda clean: self.modified_changed.emit(not clean))
        session.stack.indexChanged.connect(lambda _index: self.changed.emit())
        session.source_changed.connect(self._source_changed)
        session.records_changed.connect(self._records_changed)
        detail.tree_model.value_edited.connect(self.edits.set_value)
        detail.tree_model.failed.connect(self.failed)
        detail.tree.edit_requested.connect(self.prompts.request)
        detail.record_shown.connect(self._restore_tree_position)
        self._set_tree_editable()

    # -- state --------------------------------------------------------------
    @property
    def stack(self) -> QUndoStack:
        return self.session.stack

    @property
    def target(self) -> EditTarget | None:
        return self.session.target

    @property
    def document(self) -> Document | None:
        return self.session.document

    @property
    def records(self) -> EditedFile | None:
        """The edited records (None until editing starts)."""
        return self.session.edited

    @property
    def modified(self) -> bool:
        return self.session.modified

    @property
    def busy(self) -> bool:
        return bool(self.worker.busy)

    @property
    def editable(self) -> bool:
        return self.edits.editable

    def read_only_reason(self) -> str:
        """Why editing is off right now (one line for the status bar); "" when it is on."""
        return self.edits.read_only_reason()

    def discard(self) -> None:
        """Drop every unsaved edit: the table shows the file as it is on disk."""
        self.session.discard(self.selection.current_record())

    def _set_tree_editable(self) -> None:
        self.detail.tree_model.set_editable(self.editable)

    def _busy_changed(self) -> None:
        self._set_tree_editable()
        self.changed.emit()

    def _source_changed(self) -> None:
        self._set_tree_editable()
        self.changed.emit()

    # -- rows and selection ---------------------------------------------------
    def selected_records(self) -> list[int]:
        """The selected rows' record numbers (sorted), or the current record when none is selected."""
        return self.selection.selected_records()

    def has_rows(self) -> bool:
        """True when a table edit has rows to act on (cheap: for enabling actions)."""
        return self.selection.has_rows()

    def select_records(self, records: Sequence[int]) -> None:
        """Select these records in the table; the first becomes current and is shown."""
        self.selection.select_records(records)

    # -- what a command did ---------------------------------------------------
    def _records_changed(self, change: DocumentChange) -> None:
        detail = self.detail
        shown_row, shown = detail.current_record(), detail.loaded()
        path = detail.tree.current_path()
        self.model.records_changed(change.rows)
        self.selection.select_records(change.select)
        row = self.selection.current_record()
        if row >= 0 and detail.loaded() is shown and detail.current_record() == shown_row:
            # the same row with new content (the table did not announce it): show it, keep the tree's place
            self._tree_path = (row, path) if path is not None else None
            self.show_current()
        self.changed.emit()

    def show_current(self) -> None:
        """Show the current row's record (as edited) in the detail."""
        row = self.selection.current_record()
        if row < 0:
            self.detail.clear()
            return
        self.detail.show_record(self.session.records.pinned(row), row)

    def _restore_tree_position(self, row: int) -> None:
        pending, self._tree_path = self._tree_path, None
        if pending is not None and pending[0] == row:
            self.detail.tree.select_path(pending[1])

    # -- edits (see RecordEdits and EditPrompts) ------------------------------
    def replace_record(self, row: int, data: bytes) -> bool:
        return self.edits.replace_record(row, data)

    def apply_batch(self, rows: Sequence[int], edit: BatchEdit) -> bool:
        return self.edits.apply_batch(rows, edit)

    def delete_selected(self) -> bool:
        return self.edits.delete_selected()

    def duplicate_selected(self) -> bool:
        return self.edits.duplicate_selected()

    def insert_example(self) -> bool:
        return self.edits.insert_example()

    def move_selected(self, step: int) -> bool:
        return self.edits.move_selected(step)

    def ask_replace_record(self) -> bool:
        return self.prompts.ask_replace_record()

    def ask_batch_edit(self) -> bool:
        return self.prompts.ask_batch_edit()

    def ask_add_feature(self) -> bool:
        return self.prompts.ask_add_feature()

    # -- saving -----------------------------------------------------------------
    def save(self, path: str | None = None, compression: str | None = None,
             on_done: Callable[[bool], None] | None = None, *, existed: bool | None = None,
             overwrite_changed: bool = False) -> bool:
        """Write the document (to ``path``, default over the file) on a worker; then reopen it.

        Returns False at once (with a message) when saving cannot start.
        ``on_done(ok)`` is called when the save has ended. ``existed``: a URL
        target's object was there before (asked already). ``overwrite_changed``:
        replace the file even though it changed on disk since it was opened (asked already).
        """
        if self.session.target is None:
            self.message.emit(self.read_only_reason() or "nothing to save")
            return False
        return self.saver.save(path, compression, on_done, existed, overwrite_changed=overwrite_changed)

    def cancel(self) -> None:
        self.worker.cancel()

    def wait(self) -> None:
        """Block until a running save or edit has ended (tests, shutdown)."""
        self.worker.wait()

    def close(self) -> None:
        self.worker.close()
