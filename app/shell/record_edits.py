"""The edits a tab can make, each one undoable command on its session's stack.

:class:`RecordEdits` turns "set this value", "delete these records", "set
feature X on the selection" into commands of :mod:`app.models.commands` over
the session's document. An edit of a record goes through
:class:`codec.editing.record_editor.RecordEditor`; an edit of many records is built on a
worker thread (with progress and Cancel) past ``INLINE_EDIT_ROWS``.
"""
from __future__ import annotations

from typing import Callable, Iterator, Sequence

from PySide6.QtCore import QObject, Signal

from app.dialogs.edit_dialogs import BatchEdit
from app.models.commands import DeleteRecords, DuplicateRecords, InsertRecords, MoveRecords, ReplaceRecords
from app.shell.progress_worker import ProgressWorker
from app.shell.row_selection import RowSelection
from app.shell.session import TabSession
from codec.decode.decoder import RecordKind, decode_record, feature_values
from codec.editing.edited import EditedFile
from codec.editing.record_editor import RecordEditor, empty_example
from codec.errors import UsageError
from codec.index.scan import IndexProgress

INLINE_EDIT_ROWS = 2000  # edits of more records are built on a worker thread, with progress


class _Skip(Exception):
    """A record the edit does not apply to (raw, or without the feature): left as it is."""


_EDITABLE = (RecordKind.EXAMPLE, RecordKind.SEQUENCE_EXAMPLE)  # what has features to edit; others are skipped


def change_iter(records: EditedFile, rows: Sequence[int], edit: Callable[[RecordEditor], None],
                changes: dict[int, bytes], skipped: list[int], *, skip_raw: bool) -> Iterator[IndexProgress]:
    """Apply ``edit`` to each row's record, collecting the new bytes in ``changes``.

    A UsageError from the codec stops everything (nothing is pushed); a
    :class:`_Skip` (or, with ``skip_raw``, a record that is not an Example or
    SequenceExample: raw bytes, a tensor, protobuf) leaves that record alone.
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
            if skip_raw and decode_record(data).kind not in _EDITABLE:
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


def batch_edit_function(edit: BatchEdit) -> Callable[[RecordEditor], None]:
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


def value_name(path: Sequence) -> str:
    """``label`` / ``frames[2]`` / ``label[0]`` for undo texts."""
    if len(path) >= 3 and path[0] == "feature_lists":
        return f"{path[1]}[{path[2]}]"
    return str(path[1]) if len(path) > 1 else str(path[0])


class RecordEdits(QObject):
    """Every edit of ``session``'s document, on the records ``selection`` names.

    Signals: ``message(str)`` a note for the status bar (why nothing was
    done); ``failed(str)`` an edit failed (for the message bar);
    ``feature_added(str)`` a record gained a feature of this key (the table may show it).
    """

    message = Signal(str)
    failed = Signal(str)
    feature_added = Signal(str)

    def __init__(self, session: TabSession, selection: RowSelection, worker: ProgressWorker,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.selection = selection
        self.worker = worker

    # -- whether an edit can be made now -----------------------------------------
    @property
    def editable(self) -> bool:
        return self.session.target is not None and not self.worker.busy

    def read_only_reason(self) -> str:
        """Why editing is off right now (one line for the status bar); "" when it is on."""
        session = self.session
        if session.edit_block:
            return session.edit_block
        if self.worker.busy:
            return f"{self.worker.busy}: editing resumes when it has finished"
        if session.target is not None:
            return ""
        if session.phase == "index":
            return "read-only while indexing: editing starts when the whole file is indexed"
        if session.phase == "verify":
            return "read-only while checking CRCs: editing starts when the check has finished"
        return "read-only: indexing stopped before the end of the file (reopen it to edit)"

    def refuse(self) -> bool:
        """True (and a message) when an edit cannot be made now."""
        reason = self.read_only_reason()
        if reason:
            self.message.emit(reason)
        return bool(reason)

    def data(self, row: int) -> bytes:
        """Row ``row``'s bytes as edited (editing must be on)."""
        return self.session.edited.data(row)

    def current_values(self, path: tuple) -> tuple[str | None, list]:
        """(type, values) of the feature at ``path`` in the current record."""
        return feature_values(RecordEditor(self.data(self.selection.current_record())).feature(path))

    # -- pushing ------------------------------------------------------------------
    def edit_rows(self, rows: Sequence[int], edit: Callable[[RecordEditor], None], text: str, *,
                  many: bool = False) -> bool:
        """Apply ``edit`` to each of ``rows`` as one undoable step; False with a message when it fails.

        ``many``: an edit of a selection (raw records and records it does not
        apply to are skipped and counted). Selections over
        ``INLINE_EDIT_ROWS`` records are built on a worker thread.
        """
        if self.refuse():
            return False
        rows = sorted(set(rows))
        if not rows:
            return False
        changes: dict[int, bytes] = {}
        skipped: list[int] = []
        records = self.session.edited
        make = lambda: change_iter(records, rows, edit, changes, skipped, skip_raw=many)  # noqa: E731
        if len(rows) > INLINE_EDIT_ROWS:
            self.worker.run(make, "editing", f"Editing {len(rows):,} records…",
                            lambda: self._push_changes(changes, skipped, text),
                            cancelled=lambda: self.message.emit("edit cancelled: nothing changed"))
            return True
        try:
            for _ in make():
                pass
        except UsageError as exc:
            self.failed.emit(str(exc))
            return False
        return self._push_changes(changes, skipped, text)

    def _push_changes(self, changes: dict[int, bytes], skipped: list[int], text: str) -> bool:
        note = f" ({len(skipped):,} record{'s' if len(skipped) != 1 else ''} skipped: not applicable)" \
            if skipped else ""
        if not changes:
            self.message.emit("nothing changed" + note)
            return False
        self.session.stack.push(ReplaceRecords(self.session.target, changes, text))
        if note:
            self.message.emit(f"{text}: {len(changes):,} changed{note}")
        return True

    def edit_current(self, edit: Callable[[RecordEditor], None], text: str) -> bool:
        row = self.selection.current_record()
        if row < 0:
            self.message.emit("select a record first")
            return False
        return self.edit_rows([row], edit, f"{text} (record {row:,})")

    # -- one record's features ------------------------------------------------------
    def set_value(self, path: tuple, index: int, value) -> bool:
        return self.edit_current(lambda e: e.set_value(path, index, value), f"Set {value_name(path)}[{index}]")

    def set_values(self, path: tuple, values: list) -> bool:
        return self.edit_current(lambda e: e.set_values(path, values), f"Set {value_name(path)}")

    def insert_value(self, path: tuple, index: int, value) -> bool:
        return self.edit_current(lambda e: e.insert_value(path, index, value), f"Add a value to {value_name(path)}")

    def remove_value(self, path: tuple, index: int) -> bool:
        return self.edit_current(lambda e: e.remove_value(path, index), f"Remove {value_name(path)}[{index}]")

    def add_feature(self, scope: str, key: str, dtype: str, values: list) -> bool:
        added = self.edit_current(lambda e: e.add_feature(scope, key, dtype, values), f"Add feature {key}")
        if added and scope != "feature_lists":
            self.feature_added.emit(key)
        return added

    def delete_feature(self, path: tuple) -> bool:
        return self.edit_current(lambda e: e.delete_feature(path), f"Delete feature {value_name(path)}")

    def rename_feature(self, path: tuple, new_key: str) -> bool:
        return self.edit_current(lambda e: e.rename_feature(path, new_key.strip()),
                                 f"Rename {value_name(path)} to {new_key.strip()}")

    def change_type(self, path: tuple, dtype: str) -> bool:
        return self.edit_current(lambda e: e.change_type(path, dtype), f"Change {value_name(path)} to {dtype}")

    def insert_step(self, key: str, index: int, dtype: str, values: list) -> bool:
        return self.edit_current(lambda e: e.insert_step(key, index, dtype, values), f"Insert step {key}[{index}]")

    def remove_step(self, key: str, index: int) -> bool:
        return self.edit_current(lambda e: e.remove_step(key, index), f"Remove step {key}[{index}]")

    def replace_record(self, row: int, data: bytes) -> bool:
        """Replace a whole record's bytes (raw records, or any record by hex or a file)."""
        if self.refuse():
            return False
        if self.data(row) == data:
            self.message.emit("nothing changed")
            return False
        self.session.stack.push(ReplaceRecords(self.session.target, {row: bytes(data)},
                                               f"Replace record {row:,} bytes"))
        return True

    def apply_batch(self, rows: Sequence[int], edit: BatchEdit) -> bool:
        """Set (or delete) one feature on every record of ``rows``: one undoable step."""
        what = f"Set {edit.key}" if edit.action == "set" else f"Delete {edit.key}"
        return self.edit_rows(rows, batch_edit_function(edit), f"{what} on {len(set(rows)):,} records", many=True)

    # -- whole records ----------------------------------------------------------------
    def delete_selected(self) -> bool:
        rows = self.selection.selected_records()
        if self.refuse() or not rows:
            return False
        self.session.stack.push(DeleteRecords(self.session.target, rows))
        return True

    def duplicate_selected(self) -> bool:
        rows = self.selection.selected_records()
        if self.refuse() or not rows:
            return False
        self.session.stack.push(DuplicateRecords(self.session.target, rows))
        return True

    def insert_example(self) -> bool:
        """Insert an empty Example after the current record (at the end when none is)."""
        if self.refuse():
            return False
        row = self.selection.current_record()
        at = row + 1 if row >= 0 else len(self.session.records)
        self.session.stack.push(InsertRecords(self.session.target, at, [empty_example()], "Insert an empty Example"))
        return True

    def move_selected(self, step: int) -> bool:
        rows = self.selection.selected_records()
        if self.refuse() or not rows:
            return False
        if not MoveRecords.can_move(rows, step, len(self.session.records)):
            self.message.emit("already at the " + ("top" if step < 0 else "bottom"))
            return False
        self.session.stack.push(MoveRecords(self.session.target, rows, step))
        return True
