"""Editing one open file: the Document over it, its undo stack, and saving.

A :class:`TabEditing` belongs to a :class:`~app.shell.file_tab.FileTab`. Once the
whole file is indexed it puts a :class:`codec.document.Document` over the
file and shows it (through :class:`~codec.edited.EditedFile`) in the
table and the detail. Every user action becomes one command of
:mod:`app.models.commands` on the tab's QUndoStack; what a command did comes back
through :attr:`EditTarget.changed`, and only then do the views follow.
Saving runs :meth:`codec.document.Document.save_iter` on a worker thread and
reopens the saved file.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QItemSelection, QItemSelectionModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QProgressDialog

from codec.decode import RecordKind, decode_record, feature_values, record_features
from codec.document import Document, SaveReport, index_runs, sorted_unique
from codec.edit import RecordEditor, empty_example
from codec.edited import EditedFile
from codec.errors import UsageError
from codec.scan import IndexProgress

from app.dialogs import edit_dialogs
from app.models.commands import (DeleteRecords, DocumentChange, DuplicateRecords, EditTarget, InsertRecords,
                                 MoveRecords, ReplaceRecords)
from app.workers.worker import GeneratorWorker

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab

INLINE_EDIT_ROWS = 2000  # edits of more records are built on a worker thread, with progress
SELECT_ROWS_MAX = 100_000  # after an edit, at most this many rows are selected again
PROGRESS_DELAY_MS = 400


def _dispose(worker: GeneratorWorker) -> None:
    """Delete a worker whose generator has ended, once its thread has (a running QThread must not die)."""
    worker.wait()
    worker.deleteLater()


class _Skip(Exception):
    """A record the edit does not apply to (raw, or without the feature): left as it is."""


def change_iter(records: EditedFile, rows: Sequence[int], edit: Callable[[RecordEditor], None],
                changes: dict[int, bytes], skipped: list[int], *, skip_raw: bool) -> Iterator[IndexProgress]:
    """Apply ``edit`` to each row's record, collecting the new bytes in ``changes``.

    A UsageError from the codec stops everything (nothing is pushed); a
    :class:`_Skip` (or a raw record with ``skip_raw``) leaves that record alone.
    """
    total = len(rows)
    for k, row in enumerate(rows):
        data = records.data(row)
        try:
            editor = RecordEditor(data)
            edit(editor)
        except _Skip:
            skipped.append(row)
            continue
        except UsageError:
            if skip_raw and decode_record(data).kind is RecordKind.RAW:
                skipped.append(row)
                continue
            raise
        new = editor.to_bytes()
        if new != data:
            changes[row] = new
        if k % 512 == 0:
            yield IndexProgress(k, k, total, 0)
    yield IndexProgress(total, total, total, 0, done=True)


def _scope_of(editor: RecordEditor, key: str | None = None) -> str:
    """Where a record keeps its plain features: "features" (Example) or "context"."""
    if editor.kind is RecordKind.SEQUENCE_EXAMPLE:
        if key is not None and key not in editor.message.context.feature \
                and key in editor.message.feature_lists.feature_list:
            return "feature_lists"
        return "context"
    return "features"


def batch_edit_function(edit: edit_dialogs.BatchEdit) -> Callable[[RecordEditor], None]:
    """The per-record function of "set feature = values" / "delete feature" on many records."""
    def apply(editor: RecordEditor) -> None:
        scope = _scope_of(editor, edit.key)
        if edit.action == "delete":
            try:
                editor.delete_feature((scope, edit.key))
            except UsageError:
                raise _Skip() from None
            return
        scope = "context" if scope == "feature_lists" else scope
        try:
            editor.delete_feature((scope, edit.key))
        except UsageError:
            pass  # not there yet: added below
        editor.add_feature(scope, edit.key, edit.dtype, list(edit.values))
    return apply


def _name(path: Sequence) -> str:
    """``label`` / ``frames[2]`` / ``label[0]`` for undo texts."""
    if len(path) >= 3 and path[0] == "feature_lists":
        return f"{path[1]}[{path[2]}]"
    return str(path[1]) if len(path) > 1 else str(path[0])


class TabEditing(QObject):
    """The edit session of one tab (see the module docstring).

    Signals: ``changed()`` after any change of the document or of what can be
    done; ``modified_changed(bool)``; ``error(str)`` a one-line message for the
    message bar; ``saved(str)`` the path a save wrote (the tab shows it now).
    """

    changed = Signal()
    modified_changed = Signal(bool)
    error = Signal(str)
    saved = Signal(str)

    def __init__(self, tab: FileTab) -> None:
        super().__init__(tab)
        self.tab = tab
        self.stack = QUndoStack(self)
        self.stack.cleanChanged.connect(self._clean_changed)
        self.stack.indexChanged.connect(self._index_changed)
        self.target: EditTarget | None = None
        self.records: EditedFile | None = None
        self._worker: GeneratorWorker | None = None
        self._progress: QProgressDialog | None = None
        self._busy = ""  # what the worker does ("saving", "editing"), or ""
        self._tree_path: tuple[int, tuple] | None = None  # (row, tree path) to go back to once re-shown
        tree_model = tab.detail.tree_model
        tree_model.value_edited.connect(self._value_edited)
        tree_model.error.connect(self.error)
        tab.detail.tree.edit_requested.connect(self._tree_request)
        tab.detail.record_shown.connect(self._restore_tree_position)

    def _clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    def _index_changed(self, _index: int) -> None:
        self.changed.emit()

    # -- state --------------------------------------------------------------
    @property
    def document(self) -> Document | None:
        return None if self.target is None else self.target.document

    @property
    def modified(self) -> bool:
        return not self.stack.isClean()

    @property
    def busy(self) -> bool:
        return bool(self._busy)

    @property
    def editable(self) -> bool:
        return self.target is not None and not self._busy

    def read_only_reason(self) -> str:
        """Why editing is off right now (one line for the status bar); "" when it is on."""
        if self.tab.edit_block:
            return self.tab.edit_block
        if self._busy:
            return f"{self._busy}: editing resumes when it has finished"
        if self.target is not None:
            return ""
        phase = self.tab.state().phase
        if phase == "index":
            return "read-only while indexing: editing starts when the whole file is indexed"
        if phase == "verify":
            return "read-only while checking CRCs: editing starts when the check has finished"
        return "read-only: indexing stopped before the end of the file (reopen it to edit)"

    def _refuse(self) -> bool:
        """True (and a message) when an edit cannot be made now."""
        reason = self.read_only_reason()
        if reason:
            self.tab.message.emit(reason)
        return bool(reason)

    # -- attaching to the file ------------------------------------------------
    def attach(self) -> bool:
        """Put a Document over the tab's file once it is fully indexed; True when editing is on."""
        tfile = self.tab.tfile
        if self.target is not None:
            return True
        if self.tab.edit_block:
            self._set_tree_editable()
            return False
        if not tfile.indexed:
            self._set_tree_editable()
            return False
        document = Document(tfile)
        self.records = EditedFile(document)
        self.target = EditTarget(document, self)
        self.target.changed.connect(self._document_changed)
        self.tab.model.set_file(self.records)
        self._set_tree_editable()
        self.changed.emit()
        return True

    def detach(self) -> None:
        """Forget the document and its history (the file is about to be replaced)."""
        self.stack.clear()
        self.stack.setClean()
        if self.target is not None:
            self.target.changed.disconnect(self._document_changed)
            self.target.deleteLater()
        self.target = None
        self.records = None
        self._set_tree_editable()
        self.changed.emit()

    def discard(self) -> None:
        """Drop every unsaved edit: the table shows the file as it is on disk."""
        if self.target is None:
            return
        self.stack.clear()
        self.target.document.reset()
        self.stack.setClean()
        self._document_changed(DocumentChange(None, (max(0, self.tab.current_record()),)))

    def _set_tree_editable(self) -> None:
        self.tab.detail.tree_model.set_editable(self.editable)

    def _set_busy(self, what: str) -> None:
        self._busy = what
        self._set_tree_editable()
        self.changed.emit()

    # -- rows and selection ---------------------------------------------------
    def _view_model(self):
        return self.tab.table.model()

    def _record_of_view_row(self, row: int) -> int:
        model = self._view_model()
        if isinstance(model, QAbstractProxyModel):
            return model.mapToSource(model.index(row, 0)).row()
        return row

    def _view_index(self, record: int) -> QModelIndex:
        model = self._view_model()
        if isinstance(model, QAbstractProxyModel):
            return model.mapFromSource(self.tab.model.index(record, 0))
        return model.index(record, 0)

    def selected_records(self) -> list[int]:
        """The selected rows' record numbers (sorted), or the current record when none is selected."""
        selection = self.tab.table.selectionModel().selection()
        model = self._view_model()
        of_rows = getattr(model, "records_of_rows", None)  # the table's proxy: whole ranges at once
        parts = [of_rows(rng.top(), rng.bottom()) if of_rows is not None else
                 np.array([self._record_of_view_row(r) for r in range(rng.top(), rng.bottom() + 1)], dtype=np.int64)
                 for rng in selection]
        rows = sorted_unique(parts)
        rows = rows[rows >= 0]
        if not rows.shape[0]:
            current = self.current_row()
            return [current] if current >= 0 else []
        return rows.tolist()

    def has_rows(self) -> bool:
        """True when a table edit has rows to act on (cheap: for enabling actions)."""
        return self.tab.table.selectionModel().hasSelection() or self.current_row() >= 0

    def current_row(self) -> int:
        index = self.tab.table.currentIndex()
        return self._record_of_view_row(index.row()) if index.isValid() else -1

    def select_records(self, records: Sequence[int]) -> None:
        """Select these records in the table; the first becomes current and is shown."""
        n = self.tab.model.rowCount()
        records = [r for r in records if 0 <= r < n][:SELECT_ROWS_MAX]
        if not records:
            return
        reveal = getattr(self.tab.proxy, "reveal", None)
        if reveal is not None:
            reveal(records[0])  # a paged table moves its window to the first (those outside stay unselected)
        table = self.tab.table
        model = self._view_model()
        last = model.columnCount() - 1
        selection = QItemSelection()
        if isinstance(model, QAbstractProxyModel):
            for r in records:
                index = self._view_index(r)
                if index.isValid():
                    selection.select(index, index.siblingAtColumn(last))
        else:
            for a, b in index_runs(records):
                selection.select(model.index(a, 0), model.index(b - 1, last))
        first = self._view_index(records[0])
        if not first.isValid():
            return
        column = max(0, table.currentIndex().column())
        flags = QItemSelectionModel.SelectionFlag
        table.selectionModel().setCurrentIndex(first.siblingAtColumn(column), flags.NoUpdate)
        table.selectionModel().select(selection, flags.ClearAndSelect | flags.Rows)
        table.scrollTo(first)

    # -- what a command did ---------------------------------------------------
    def _document_changed(self, change: DocumentChange) -> None:
        detail = self.tab.detail
        shown_row, shown = detail.current_record(), detail.loaded()
        path = detail.tree.current_path()
        self.tab.model.records_changed(change.rows)
        self.select_records(change.select)
        row = self.current_row()
        if row >= 0 and detail.loaded() is shown and detail.current_record() == shown_row:
            # the same row with new content (the table did not announce it): show it, keep the tree's place
            self._tree_path = (row, path) if path is not None else None
            self.show_current()
        self.tab.state_changed.emit()  # the record count in the status bar
        self.changed.emit()

    def source_for(self, record: int):
        """What the detail reads record ``record`` from: the edited view, or the file itself."""
        return self.records.pinned(record) if self.records is not None else self.tab.tfile

    def show_current(self) -> None:
        """Show the current row's record (as edited) in the detail."""
        row = self.current_row()
        if row < 0:
            self.tab.detail.clear()
            return
        self.tab.detail.show_record(self.source_for(row), row)

    def _restore_tree_position(self, row: int) -> None:
        pending, self._tree_path = self._tree_path, None
        if pending is not None and pending[0] == row:
            self.tab.detail.tree.select_path(pending[1])

    # -- pushing --------------------------------------------------------------
    def _push(self, command) -> None:
        self.stack.push(command)

    def edit_rows(self, rows: Sequence[int], edit: Callable[[RecordEditor], None], text: str, *,
                  many: bool = False) -> bool:
        """Apply ``edit`` to each of ``rows`` as one undoable step; False with a message when it fails.

        ``many``: an edit of a selection (raw records and records it does not
        apply to are skipped and counted). Selections over
        ``INLINE_EDIT_ROWS`` records are built on a worker thread.
        """
        if self._refuse():
            return False
        rows = sorted(set(rows))
        if not rows:
            return False
        changes: dict[int, bytes] = {}
        skipped: list[int] = []
        make = lambda: change_iter(self.records, rows, edit, changes, skipped, skip_raw=many)  # noqa: E731
        if len(rows) > INLINE_EDIT_ROWS:
            self._run(make, "editing", f"Editing {len(rows):,} records…",
                      lambda: self._push_changes(changes, skipped, text))
            return True
        try:
            for _ in make():
                pass
        except UsageError as exc:
            self.error.emit(str(exc))
            return False
        return self._push_changes(changes, skipped, text)

    def _push_changes(self, changes: dict[int, bytes], skipped: list[int], text: str) -> bool:
        note = f" ({len(skipped):,} record{'s' if len(skipped) != 1 else ''} skipped: not applicable)" \
            if skipped else ""
        if not changes:
            self.tab.message.emit("nothing changed" + note)
            return False
        self._push(ReplaceRecords(self.target, changes, text))
        if note:
            self.tab.message.emit(f"{text}: {len(changes):,} changed{note}")
        return True

    def edit_current(self, edit: Callable[[RecordEditor], None], text: str) -> bool:
        row = self.current_row()
        if row < 0:
            self.tab.message.emit("select a record first")
            return False
        return self.edit_rows([row], edit, f"{text} (record {row:,})")

    # -- record edits (tree) --------------------------------------------------
    def set_value(self, path: tuple, index: int, value) -> bool:
        return self.edit_current(lambda e: e.set_value(path, index, value), f"Set {_name(path)}[{index}]")

    def set_values(self, path: tuple, values: list) -> bool:
        return self.edit_current(lambda e: e.set_values(path, values), f"Set {_name(path)}")

    def insert_value(self, path: tuple, index: int, value) -> bool:
        return self.edit_current(lambda e: e.insert_value(path, index, value), f"Add a value to {_name(path)}")

    def remove_value(self, path: tuple, index: int) -> bool:
        return self.edit_current(lambda e: e.remove_value(path, index), f"Remove {_name(path)}[{index}]")

    def add_feature(self, scope: str, key: str, dtype: str, values: list) -> bool:
        return self.edit_current(lambda e: e.add_feature(scope, key, dtype, values), f"Add feature {key}")

    def delete_feature(self, path: tuple) -> bool:
        return self.edit_current(lambda e: e.delete_feature(path), f"Delete feature {_name(path)}")

    def rename_feature(self, path: tuple, new_key: str) -> bool:
        return self.edit_current(lambda e: e.rename_feature(path, new_key.strip()),
                                 f"Rename {_name(path)} to {new_key.strip()}")

    def change_type(self, path: tuple, dtype: str) -> bool:
        return self.edit_current(lambda e: e.change_type(path, dtype), f"Change {_name(path)} to {dtype}")

    def insert_step(self, key: str, index: int, dtype: str, values: list) -> bool:
        return self.edit_current(lambda e: e.insert_step(key, index, dtype, values), f"Insert step {key}[{index}]")

    def remove_step(self, key: str, index: int) -> bool:
        return self.edit_current(lambda e: e.remove_step(key, index), f"Remove step {key}[{index}]")

    def replace_record(self, row: int, data: bytes) -> bool:
        """Replace a whole record's bytes (raw records, or any record by hex or a file)."""
        if self._refuse():
            return False
        if self.records.data(row) == data:
            self.tab.message.emit("nothing changed")
            return False
        self._push(ReplaceRecords(self.target, {row: bytes(data)}, f"Replace record {row:,} bytes"))
        return True

    def apply_batch(self, rows: Sequence[int], edit: edit_dialogs.BatchEdit) -> bool:
        """Set (or delete) one feature on every record of ``rows``: one undoable step."""
        what = f"Set {edit.key}" if edit.action == "set" else f"Delete {edit.key}"
        return self.edit_rows(rows, batch_edit_function(edit), f"{what} on {len(set(rows)):,} records", many=True)

    def _value_edited(self, path: tuple, index: int, value) -> None:
        self.set_value(path, index, value)

    def _current_values(self, path: tuple) -> tuple[str | None, list]:
        return feature_values(RecordEditor(self.records.data(self.current_row())).feature(path))

    def _tree_request(self, action: str, info: dict) -> None:
        """Ask what an edit from the tree needs (a dialog), then make it."""
        if action == "read_only" or self._refuse():
            if action == "read_only":
                self.tab.message.emit(self.read_only_reason() or "this cannot be edited")
            return
        parent = self.tab
        try:
            if action == "edit_value":
                path, i, dtype = info["path"], info["index"], info["dtype"]
                current = self._current_values(path)[1][i]
                value = edit_dialogs.ask_value(parent, f"Edit {_name(path)}[{i}]", dtype, current)
                if value is not None:
                    self.set_value(path, i, value)
            elif action == "edit_values":
                path = info["path"]
                dtype, values = self._current_values(path)
                if len(values) > edit_dialogs.LIST_EDIT_MAX:
                    self.error.emit(f"{_name(path)} has {len(values):,} values: too many to edit as text")
                    return
                answer = edit_dialogs.ask_values(parent, f"Edit {_name(path)}", dtype, values)
                if answer is not None:
                    self.set_values(path, answer[1])
            elif action == "insert_value":
                path, i, dtype = info["path"], info["index"], info["dtype"]
                value = edit_dialogs.ask_value(parent, f"Add a Value to {_name(path)}", dtype)
                if value is not None:
                    self.insert_value(path, i, value)
            elif action == "remove_value":
                self.remove_value(info["path"], info["index"])
            elif action == "add_feature":
                answer = edit_dialogs.ask_new_feature(parent, info["scope"])
                if answer is not None:
                    self.add_feature(info["scope"], *answer)
            elif action == "delete_feature":
                self.delete_feature(info["path"])
            elif action == "rename_feature":
                path = info["path"]
                name = edit_dialogs.ask_text(parent, "Rename Feature", "New name:", str(path[1]))
                if name is not None:
                    self.rename_feature(path, name)
            elif action == "change_type":
                self.change_type(info["path"], info["dtype"])
            elif action == "insert_step":
                dtype = info.get("dtype")
                answer = edit_dialogs.ask_values(parent, f"New Step of {info['key']}", dtype,
                                                 choose_type=dtype is None)
                if answer is not None:
                    self.insert_step(info["key"], info["index"], answer[0], answer[1])
            elif action == "remove_step":
                self.remove_step(info["key"], info["index"])
            elif action == "replace_record":
                self.ask_replace_record()
        except UsageError as exc:
            self.error.emit(str(exc))

    # -- table edits ----------------------------------------------------------
    def delete_selected(self) -> bool:
        rows = self.selected_records()
        if self._refuse() or not rows:
            return False
        self._push(DeleteRecords(self.target, rows))
        return True

    def duplicate_selected(self) -> bool:
        rows = self.selected_records()
        if self._refuse() or not rows:
            return False
        self._push(DuplicateRecords(self.target, rows))
        return True

    def insert_example(self) -> bool:
        """Insert an empty Example after the current record (at the end when none is)."""
        if self._refuse():
            return False
        row = self.current_row()
        at = row + 1 if row >= 0 else len(self.records)
        self._push(InsertRecords(self.target, at, [empty_example()], "Insert an empty Example"))
        return True

    def move_selected(self, step: int) -> bool:
        rows = self.selected_records()
        if self._refuse() or not rows:
            return False
        if not MoveRecords.can_move(rows, step, len(self.records)):
            self.tab.message.emit("already at the " + ("top" if step < 0 else "bottom"))
            return False
        self._push(MoveRecords(self.target, rows, step))
        return True

    def ask_replace_record(self) -> bool:
        row = self.current_row()
        if self._refuse() or row < 0:
            return False
        data = edit_dialogs.ask_record_bytes(self.tab, self.records.data(row))
        return data is not None and self.replace_record(row, data)

    def ask_batch_edit(self) -> bool:
        rows = self.selected_records()
        if self._refuse() or not rows:
            return False
        keys: dict[str, str | None] = {}  # feature -> its type, from the first selected records
        for row in rows[:64]:
            features = record_features(decode_record(self.records.data(row))) or {}
            for key in sorted(features):
                keys.setdefault(key, feature_values(features[key])[0])
        edit = edit_dialogs.ask_batch_edit(self.tab, len(rows), keys)
        return edit is not None and self.apply_batch(rows, edit)

    def ask_add_feature(self) -> bool:
        row = self.current_row()
        if self._refuse() or row < 0:
            return False
        kind = decode_record(self.records.data(row)).kind
        if kind is RecordKind.RAW:
            self.error.emit(f"record {row:,} is raw bytes, not an Example: it has no features")
            return False
        self._tree_request("add_feature", {"scope": "features" if kind is RecordKind.EXAMPLE else "context"})
        return True

    # -- saving ---------------------------------------------------------------
    def save(self, path: str | None = None, compression: str | None = None,
             on_done: Callable[[bool], None] | None = None) -> bool:
        """Write the document (to ``path``, default over the file) on a worker; then reopen it.

        Returns False at once (with a message) when saving cannot start.
        ``on_done(ok)`` is called when the save has ended.
        """
        if self.target is None:
            self.tab.message.emit(self.read_only_reason() or "nothing to save")
            return False
        if self._busy or self.tab.is_running():
            self.tab.message.emit("busy: wait until the current task has finished, or stop it")
            return False
        target = os.path.abspath(path or self.tab.path)
        existed = os.path.exists(target)
        document = self.target.document
        result: list[SaveReport] = []
        name = os.path.basename(target)

        def finished() -> None:
            if self._worker is not None and self._worker.cancelled:
                self.tab.message.emit(f"save cancelled: {self._unchanged(name, existed)}")
                self._end(on_done, False)
                return
            report = result[0]
            note = ""
            if report.dropped_truncated:
                note = f"; {report.dropped_truncated} truncated record(s) left out"
            self.detach()
            try:
                self.tab.reopen(target)
            except Exception as exc:  # noqa: BLE001 - the file is saved; say why it cannot be shown
                self.error.emit(f"saved {target}, but cannot open it again: {exc}")
                self._end(on_done, True)
                return
            self.tab.message.emit(f"saved {report.records:,} records to {target}{note}")
            self.saved.emit(target)
            self._end(on_done, True)

        def failed(message: str) -> None:
            self.error.emit(f"save failed: {message}. {self._unchanged(name, existed)}")
            self._end(on_done, False)

        self._run(lambda: self._watched(document.save_iter(target, compression, result)), "saving",
                  f"Saving {name}…", finished, failed)
        return True

    def _watched(self, passes: Iterator) -> Iterator:
        """``passes``, telling the tab when the file it reads changed on disk."""
        with self.tab.watching_changes():
            yield from passes

    @staticmethod
    def _unchanged(name: str, existed: bool) -> str:
        return f"{name} is unchanged" if existed else f"{name} was not written"

    def _end(self, on_done: Callable[[bool], None] | None, ok: bool) -> None:
        if on_done is not None:
            on_done(ok)

    # -- the worker -----------------------------------------------------------
    def _run(self, make, busy: str, label: str, done: Callable[[], None],
             failed: Callable[[str], None] | None = None) -> None:
        """Run a codec generator on a worker with a progress dialog and Cancel."""
        self._set_busy(busy)
        progress = QProgressDialog(label, "Cancel", 0, 1000, self.tab)
        progress.setWindowTitle(busy.capitalize())
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(PROGRESS_DELAY_MS)
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        worker = GeneratorWorker(make, self)
        progress.canceled.connect(worker.cancel)
        worker.progress.connect(lambda p: progress.setValue(int(p.fraction * 1000)))
        self._worker, self._progress = worker, progress

        def end() -> None:
            progress.hide()
            progress.deleteLater()
            self._progress = None
            self._set_busy("")

        def on_finished(_last) -> None:
            end()
            if worker.cancelled and busy == "editing":
                self.tab.message.emit("edit cancelled: nothing changed")
            else:
                done()
            self._worker = None
            _dispose(worker)

        def on_failed(message: str) -> None:
            end()
            if failed is not None:
                failed(message)
            else:
                self.error.emit(message)
            self._worker = None
            _dispose(worker)

        worker.finished.connect(on_finished)
        worker.failed.connect(on_failed)
        worker.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def wait(self) -> None:
        """Block until a running save or edit has ended (tests, shutdown)."""
        if self._worker is not None:
            self._worker.wait()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
