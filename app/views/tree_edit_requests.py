"""What the record tree asks its owner to do: one small frozen dataclass per edit.

The tree view knows which row was acted on, not the record or its document:
it emits one of these (``RecordTreeView.edit_requested``), and the owner asks
for any details in a dialog and pushes the undo command. Paths are the tree's
node paths (``("features", key)``, ``("feature_lists", key, step)``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReadOnly:
    """An edit was tried while the tree is not editable."""


@dataclass(frozen=True)
class EditValue:
    """Ask for a new value of ``path``'s value ``index`` (too long to edit in place)."""

    path: tuple
    index: int
    dtype: str


@dataclass(frozen=True)
class EditValues:
    """Ask for all of ``path``'s values at once, as text."""

    path: tuple
    dtype: str


@dataclass(frozen=True)
class InsertValue:
    """Ask for a value to insert at ``index`` of ``path``'s values."""

    path: tuple
    index: int
    dtype: str


@dataclass(frozen=True)
class RemoveValue:
    path: tuple
    index: int


@dataclass(frozen=True)
class AddFeature:
    """Ask for a new feature's name, type and values in ``scope`` ("features", "context", "feature_lists")."""

    scope: str


@dataclass(frozen=True)
class DeleteFeature:
    path: tuple


@dataclass(frozen=True)
class RenameFeature:
    """Ask for a new name of the feature (or feature list) at ``path``."""

    path: tuple


@dataclass(frozen=True)
class ChangeType:
    path: tuple
    dtype: str


@dataclass(frozen=True)
class InsertStep:
    """Ask for the values of a new step ``index`` of feature list ``key`` (``dtype`` None: any type)."""

    key: str
    index: int
    dtype: str | None = None


@dataclass(frozen=True)
class RemoveStep:
    key: str
    index: int


@dataclass(frozen=True)
class ReplaceRecord:
    """Ask for the whole record's new bytes (a raw record)."""


TreeEditRequest = (ReadOnly | EditValue | EditValues | InsertValue | RemoveValue | AddFeature | DeleteFeature
                   | RenameFeature | ChangeType | InsertStep | RemoveStep | ReplaceRecord)
