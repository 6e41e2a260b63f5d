"""The dialogs in front of an edit: what the record tree or a menu asks for, asked of the user, then made.

The record tree emits typed requests (:mod:`app.views.tree_edit_requests`);
:meth:`EditPrompts.request` dispatches each by its type to a handler that
asks what is missing (a value, a name, the bytes of a record) and makes the
edit through :class:`~app.shell.record_edits.RecordEdits`.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from app.dialogs import edit_dialogs
from app.shell.record_edits import RecordEdits, value_name
from app.shell.row_selection import RowSelection
from app.views.tree_edit_requests import (
    AddFeature,
    ChangeType,
    DeleteFeature,
    EditValue,
    EditValues,
    InsertStep,
    InsertValue,
    ReadOnly,
    RemoveStep,
    RemoveValue,
    RenameFeature,
    ReplaceRecord,
    TreeEditRequest,
)
from codec.decode.decoder import RecordKind, decode_record, feature_values, record_features
from codec.errors import UsageError


class EditPrompts(QObject):
    """Asks for an edit's details in dialogs over ``dialog_parent``, then makes it with ``edits``."""

    def __init__(self, edits: RecordEdits, selection: RowSelection, dialog_parent: QWidget,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edits = edits
        self.selection = selection
        self._parent = dialog_parent
        self._handlers: dict[type, Callable] = {
            EditValue: self._edit_value, EditValues: self._edit_values, InsertValue: self._insert_value,
            RemoveValue: lambda r: edits.remove_value(r.path, r.index),
            AddFeature: self._add_feature,
            DeleteFeature: lambda r: edits.delete_feature(r.path),
            RenameFeature: self._rename_feature,
            ChangeType: lambda r: edits.change_type(r.path, r.dtype),
            InsertStep: self._insert_step,
            RemoveStep: lambda r: edits.remove_step(r.key, r.index),
            ReplaceRecord: lambda r: self.ask_replace_record(),
        }

    # -- from the record tree ---------------------------------------------------
    def request(self, request: TreeEditRequest) -> None:
        """Ask what an edit from the tree needs (a dialog), then make it."""
        if isinstance(request, ReadOnly):
            self.edits.message.emit(self.edits.read_only_reason() or "this cannot be edited")
            return
        if self.edits.refuse():
            return
        try:
            self._handlers[type(request)](request)
        except UsageError as exc:
            self.edits.failed.emit(str(exc))

    def _edit_value(self, r: EditValue) -> None:
        current = self.edits.current_values(r.path)[1][r.index]
        value = edit_dialogs.ask_value(self._parent, f"Edit {value_name(r.path)}[{r.index}]", r.dtype, current)
        if value is not None:
            self.edits.set_value(r.path, r.index, value)

    def _edit_values(self, r: EditValues) -> None:
        dtype, values = self.edits.current_values(r.path)
        if len(values) > edit_dialogs.LIST_EDIT_MAX:
            self.edits.failed.emit(f"{value_name(r.path)} has {len(values):,} values: too many to edit as text")
            return
        answer = edit_dialogs.ask_values(self._parent, f"Edit {value_name(r.path)}", dtype, values)
        if answer is not None:
            self.edits.set_values(r.path, answer[1])

    def _insert_value(self, r: InsertValue) -> None:
        value = edit_dialogs.ask_value(self._parent, f"Add a Value to {value_name(r.path)}", r.dtype)
        if value is not None:
            self.edits.insert_value(r.path, r.index, value)

    def _add_feature(self, r: AddFeature) -> None:
        answer = edit_dialogs.ask_new_feature(self._parent, r.scope)
        if answer is not None:
            self.edits.add_feature(r.scope, *answer)

    def _rename_feature(self, r: RenameFeature) -> None:
        name = edit_dialogs.ask_text(self._parent, "Rename Feature", "New name:", str(r.path[1]))
        if name is not None:
            self.edits.rename_feature(r.path, name)

    def _insert_step(self, r: InsertStep) -> None:
        answer = edit_dialogs.ask_values(self._parent, f"New Step of {r.key}", r.dtype, choose_type=r.dtype is None)
        if answer is not None:
            self.edits.insert_step(r.key, r.index, answer[0], answer[1])

    # -- from the menus ------------------------------------------------------------
    def ask_replace_record(self) -> bool:
        row = self.selection.current_record()
        if self.edits.refuse() or row < 0:
            return False
        data = edit_dialogs.ask_record_bytes(self._parent, self.edits.data(row))
        return data is not None and self.edits.replace_record(row, data)

    def ask_batch_edit(self) -> bool:
        rows = self.selection.selected_records()
        if self.edits.refuse() or not rows:
            return False
        keys: dict[str, str | None] = {}  # feature -> its type, from the first selected records
        for row in rows[:64]:
            features = record_features(decode_record(self.edits.data(row))) or {}
            for key in sorted(features):
                keys.setdefault(key, feature_values(features[key])[0])
        edit = edit_dialogs.ask_batch_edit(self._parent, len(rows), keys)
        return edit is not None and self.edits.apply_batch(rows, edit)

    def ask_add_feature(self) -> bool:
        row = self.selection.current_record()
        if self.edits.refuse() or row < 0:
            return False
        kind = decode_record(self.edits.data(row)).kind
        if kind is RecordKind.RAW:
            self.edits.failed.emit(f"record {row:,} is raw bytes, not an Example: it has no features")
            return False
        if kind not in (RecordKind.EXAMPLE, RecordKind.SEQUENCE_EXAMPLE):
            self.edits.failed.emit(f"record {row:,} is a {kind.value}, not an Example: features cannot be added")
            return False
        self.request(AddFeature("features" if kind is RecordKind.EXAMPLE else "context"))
        return True
