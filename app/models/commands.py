"""Every edit of a file's records, as a QUndoCommand over a :class:`codec.editing.document.Document`.

``redo``/``undo`` change the document and nothing else: the first ``redo``
applies the edit, later ones and every ``undo`` restore a snapshot of the
document (a short piece list, see codec/editing/document.py). An edit of many
records is one command, so one Ctrl+Z takes all of it back. Widgets only
build commands and push them; they learn what changed from
:attr:`EditTarget.changed`.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand

from codec.editing.document import Document, index_runs, sorted_unique
from codec.errors import UsageError


class DocumentChange(NamedTuple):
    """What an edit (or its undo) did, for the views to follow.

    ``rows``: the rows whose content changed while the row count stayed, or
    None when rows came, went or moved. ``select``: the rows to select next.
    """

    rows: tuple[int, ...] | None
    select: tuple[int, ...]


class EditTarget(QObject):
    """One tab's Document and the signal that it changed (the codec has no Qt)."""

    changed = Signal(object)  # DocumentChange

    def __init__(self, document: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document


def sorted_rows(rows: Sequence[int]) -> tuple[int, ...]:
    """``rows`` sorted, once each (numpy: a Select All hands over millions)."""
    return tuple(sorted_unique([rows]).tolist())


def _edited_rows(rows: Sequence[int]) -> tuple[int, ...]:
    """``rows`` sorted, once each; refused when empty: a command must change something
    (an empty one would fail inside the undo stack's redo, where an error cannot be reported)."""
    rows = sorted_rows(rows)
    if not rows:
        raise UsageError("no records to edit: select at least one")
    return rows


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


class DocumentCommand(QUndoCommand):
    """Apply an edit once; afterwards flip between the snapshots before and after it."""

    def __init__(self, target: EditTarget, text: str) -> None:
        super().__init__(text)
        self.target = target
        self._before: tuple | None = None
        self._after: tuple | None = None
        self._done: DocumentChange = DocumentChange(None, ())
        self._undone: DocumentChange = DocumentChange(None, ())

    @property
    def document(self) -> Document:
        return self.target.document

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        """Make the edit; return what redo and undo change (override)."""
        raise NotImplementedError

    def redo(self) -> None:
        doc = self.document
        if self._after is None:
            self._before = doc.snapshot()
            self._done, self._undone = self.apply(doc)
            self._after = doc.snapshot()
        else:
            doc.restore(self._after)
        self.target.changed.emit(self._done)

    def undo(self) -> None:
        self.document.restore(self._before)
        self.target.changed.emit(self._undone)

    def snapshots(self) -> list[tuple]:
        """The document states this command flips between (for a save to keep them valid)."""
        return [s for s in (self._before, self._after) if s is not None]

    def rebase(self, translate: Callable[[tuple], tuple]) -> None:
        """Name the same records in the file a save wrote (see Document.plan_history)."""
        if self._before is not None:
            self._before = translate(self._before)
        if self._after is not None:
            self._after = translate(self._after)


class ReplaceRecords(DocumentCommand):
    """New bytes for some records (a changed value, feature, or raw bytes), as one step."""

    def __init__(self, target: EditTarget, changes: dict[int, bytes], text: str) -> None:
        super().__init__(target, text)
        self.changes = dict(changes)

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        document.replace_many(self.changes)
        rows = tuple(sorted(self.changes))
        return DocumentChange(rows, rows), DocumentChange(rows, rows)


class DeleteRecords(DocumentCommand):
    def __init__(self, target: EditTarget, rows: Sequence[int]) -> None:
        self.rows = _edited_rows(rows)
        super().__init__(target, f"Delete {_plural(len(self.rows), 'record')}")

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        document.delete(self.rows)
        after = min(self.rows[0], len(document) - 1)
        return DocumentChange(None, (after,) if after >= 0 else ()), DocumentChange(None, self.rows)


class DuplicateRecords(DocumentCommand):
    def __init__(self, target: EditTarget, rows: Sequence[int]) -> None:
        self.rows = _edited_rows(rows)
        super().__init__(target, f"Duplicate {_plural(len(self.rows), 'record')}")

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        placed = document.duplicate(self.rows)
        return DocumentChange(None, tuple(placed)), DocumentChange(None, self.rows)


class InsertRecords(DocumentCommand):
    def __init__(self, target: EditTarget, at: int, records: Sequence[bytes], text: str | None = None) -> None:
        self.at = at
        self.records = [bytes(r) for r in records]
        super().__init__(target, text or f"Insert {_plural(len(self.records), 'record')}")

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        document.insert(self.at, self.records)
        new = tuple(range(self.at, self.at + len(self.records)))
        before = min(self.at, len(document) - len(self.records) - 1)
        return DocumentChange(None, new), DocumentChange(None, (before,) if before >= 0 else ())


class MoveRecords(DocumentCommand):
    """Move each run of selected rows one place up (``step=-1``) or down (``step=1``)."""

    def __init__(self, target: EditTarget, rows: Sequence[int], step: int) -> None:
        self.rows = _edited_rows(rows)
        self.step = -1 if step < 0 else 1
        super().__init__(target, f"Move {_plural(len(self.rows), 'record')} {'up' if self.step < 0 else 'down'}")

    @staticmethod
    def can_move(rows: Sequence[int], step: int, count: int) -> bool:
        """False when every selected row is already at the top (or bottom) edge."""
        spans = index_runs(rows)
        if not spans:
            return False
        if step < 0:
            return not (len(spans) == 1 and spans[0][0] == 0)
        return not (len(spans) == 1 and spans[0][1] == count)

    def apply(self, document: Document) -> tuple[DocumentChange, DocumentChange]:
        spans = index_runs(self.rows)
        moved: list[int] = []
        n = len(document)
        order = spans if self.step < 0 else list(reversed(spans))
        for a, b in order:
            if (self.step < 0 and a == 0) or (self.step > 0 and b == n):
                moved.extend(range(a, b))  # a run at the edge stays
                continue
            moved.extend(document.move(range(a, b), a + self.step))
        lo = max(0, self.rows[0] - 1)
        hi = min(n - 1, self.rows[-1] + 1)
        touched = tuple(range(lo, hi + 1))
        return DocumentChange(touched, tuple(sorted(moved))), DocumentChange(touched, self.rows)
