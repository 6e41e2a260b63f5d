"""The damage the codec found in the open file, as a table model, and the words for each problem.

:class:`ProblemListModel` adapts the problems of the records a tab shows
(``owner.records.problems``: a list the index and verify passes grow, and
sometimes replace, on a worker thread) to a table; :meth:`ProblemListModel.sync`
is called on progress and turns what changed into row inserts or a reset.
"""
from __future__ import annotations

import os
from collections import Counter
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from app.models.record_format import container_of
from app.models.records_owner import RecordsOwner
from app.style import icons, palette
from codec.format.framing import HEADER_SIZE, Compression, Problem, ProblemKind
from codec.format.problem_text import TFRECORD, explain_problem, kind_words
from codec.sources.protocol import RecordSource

PROBLEM_ROLE = Qt.ItemDataRole.UserRole  # the codec Problem of a row


class ProblemColumn(IntEnum):
    RECORD = 0
    OFFSET = 1
    COMPRESSED = 2
    KIND = 3
    EXPECTED = 4
    FOUND = 5
    DETAIL = 6


HEADERS = ("Record", "Offset", "Compressed at", "Problem", "Expected", "Found", "Detail")
HEADER_TIPS = (
    "The damaged record's number; — when no record is left there (skipped bytes)",
    "Where the damage starts (the damaged record's header, or the first skipped byte)",
    "Where in the compressed file the GZIP/ZLIB stream broke",
    "What is wrong",
    "Stored CRC, or the length the header claims",
    "Computed CRC, or the bytes actually left",
    "The codec's full description",
)
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


def is_recovered(p: Problem) -> bool:
    """A bad length CRC whose data CRC proved the length: the record itself is fine."""
    return p.kind is ProblemKind.LENGTH_CRC and p.index is not None


def problem_title(p: Problem, container: str = TFRECORD) -> str:
    """The kind in a few words (as ``container``'s damage reads), with the size of a run of skipped bytes."""
    word = kind_words(p.kind, container)
    if is_recovered(p):
        return f"{word} (recovered)"
    if container != TFRECORD:
        return word  # (an ArrayRecord problem names its chunk in its detail)
    if p.kind is ProblemKind.GARBAGE:
        return f"garbage run of {p.size:,} bytes"
    if p.kind is ProblemKind.LENGTH_CRC and p.size:
        return f"{word}, {p.size:,} bytes skipped"
    if p.kind is ProblemKind.TRUNCATED and p.index is None and p.size:
        return f"{word}: {p.size:,} bytes of a header"
    return word


def expected_found(p: Problem) -> tuple[str, str]:
    """(expected, found): stored vs computed CRC, claimed length vs bytes left."""
    if p.kind in (ProblemKind.LENGTH_CRC, ProblemKind.DATA_CRC) and p.expected is not None:
        found = f"computed {p.found:#010x}" if p.found is not None else ""
        return f"stored {p.expected:#010x}", found
    if p.kind is ProblemKind.TRUNCATED:
        if p.expected is not None:
            left = f"{p.found:,} bytes left" if p.found is not None else ""
            return f"{p.expected + 4:,} bytes ({p.expected:,} data + CRC)", left
        return f"{HEADER_SIZE}-byte header", f"{p.size:,} bytes left"
    return "", ""


def problems_summary(problems: list[Problem], container: str = TFRECORD) -> str:
    """"2 problems: 1 length CRC, 1 data CRC" (grouped by kind, in order of first appearance)."""
    if not problems:
        return "no problems"
    kinds = Counter(kind_words(p.kind, container) for p in problems)
    n = len(problems)
    return f"{n:,} problem{'' if n == 1 else 's'}: " + ", ".join(f"{c:,} {k}" for k, c in kinds.items())


def record_before(records, p: Problem) -> int:
    """The last record starting at or before problem ``p`` (for a shard set: in the problem's own shard)."""
    return records.record_before(p)


class ProblemListModel(QAbstractTableModel):
    """One row per problem of ``owner.records``, in the codec's order (by offset)."""

    def __init__(self, owner: RecordsOwner, parent=None) -> None:
        super().__init__(parent)
        self._owner = owner
        self._problems: list[Problem] = []
        self._seen: tuple[int, int] | None = (0, 0)  # (id, len) of the codec's list at the last sync

    @property
    def records(self) -> RecordSource:
        """The records (a file, a shard set, or the edited view of one) whose problems are shown."""
        return self._owner.records

    def records_replaced(self) -> None:
        """The owner's records are another object (an edited view, or the file reopened after a save):
        the rows go, and the next :meth:`sync` shows theirs and says the rows changed."""
        self.beginResetModel()
        self._problems = []
        self._seen = None
        self.endResetModel()

    @property
    def compressed(self) -> bool:
        return self.records.compression is not Compression.NONE

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def problem(self, row: int) -> Problem:
        return self._problems[row]

    def row_of(self, problem: Problem) -> int:
        """The row showing ``problem`` (the same object, else an equal one); -1 if none."""
        for row, p in enumerate(self._problems):
            if p is problem:
                return row
        return self._problems.index(problem) if problem in self._problems else -1

    def sync(self, *, force: bool = False) -> bool:
        """Catch up with the codec's problem list; True when rows changed.

        Appended problems become inserted rows; anything else (the list was
        replaced, sorted or had a problem inserted) resets the model.
        ``force`` compares even when the list looks unchanged (after a pass
        ends: the codec sorts its list in place).
        """
        current = self.records.problems
        new = list(current)  # one atomic copy: the worker may append meanwhile
        key = (id(current), len(new))
        if self._seen is None:  # other records since the last sync
            self._seen = key
            self.beginResetModel()
            self._problems = new
            self.endResetModel()
            return True
        if key == self._seen and not force:
            return False
        self._seen = key
        old = self._problems
        same_prefix = len(new) >= len(old) and all(a is b for a, b in zip(old, new))
        if same_prefix and len(new) == len(old):
            return False
        if same_prefix:
            self.beginInsertRows(QModelIndex(), len(old), len(new) - 1)
            self._problems = new
            self.endInsertRows()
        else:
            self.beginResetModel()
            self._problems = new
            self.endResetModel()
        return True

    # -- Qt ---------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._problems)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if section in (ProblemColumn.RECORD, ProblemColumn.OFFSET, ProblemColumn.COMPRESSED) \
                else _LEFT
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._problems):
            return None
        p = self._problems[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(p, col)
        if role == PROBLEM_ROLE:
            return p
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(p, col)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if col in (ProblemColumn.RECORD, ProblemColumn.OFFSET, ProblemColumn.COMPRESSED) else _LEFT
        if role == Qt.ItemDataRole.ForegroundRole and col == ProblemColumn.KIND:
            return palette.RECOVERED_TEXT if is_recovered(p) else palette.DAMAGED_TEXT
        if role == Qt.ItemDataRole.DecorationRole and col == ProblemColumn.KIND:
            return icons.icon("warning" if is_recovered(p) else "damaged")
        return None

    def _display(self, p: Problem, col: int) -> str:
        if col == ProblemColumn.RECORD:
            return f"{p.index:,}" if p.index is not None else "—"
        if col == ProblemColumn.OFFSET:
            return f"{p.offset:,}"
        if col == ProblemColumn.COMPRESSED:
            return f"{p.compressed_offset:,}" if p.compressed_offset is not None else ""
        if col == ProblemColumn.KIND:
            return problem_title(p, container_of(self.records))
        if col == ProblemColumn.EXPECTED:
            return expected_found(p)[0]
        if col == ProblemColumn.FOUND:
            return expected_found(p)[1]
        note = self.renumbering_note(p)
        return f"{note} · {p.detail}" if note else p.detail

    def renumbering_note(self, p: Problem) -> str | None:
        """For damage between records: the record numbering goes on as found after it."""
        if p.index is not None:
            return None
        after = record_before(self.records, p) + 1
        if not 0 <= after < len(self.records):
            return None
        skipped = f"{p.size:,} bytes skipped" if p.size else "bytes skipped"
        return f"{skipped} before record {after:,}: records after this point are numbered as found"

    def _tooltip(self, p: Problem, col: int) -> str:
        where = "the decompressed stream" if self.compressed else "the file"
        if p.path is not None:  # a shard of a set
            where = os.path.basename(p.path)
        container = container_of(self.records)
        lines = [f"{problem_title(p, container)} at byte {p.offset:,} ({p.offset:#x}) of {where}"]
        if p.size:
            lines.append(f"{p.size:,} damaged bytes: {p.offset:,}–{p.offset + p.size - 1:,}")
        if p.compressed_offset is not None:
            lines.append(f"the compressed stream broke at byte {p.compressed_offset:,} of the file")
        note = self.renumbering_note(p)
        if note:
            lines.append(note)
        if p.index is None:
            before = record_before(self.records, p)
            after = before + 1
            if after < len(self.records):
                lines.append(f"no record left here: the next record found is #{after:,}"
                             + (f" (after #{before:,})" if before >= 0 else ""))
            elif before >= 0:
                lines.append(f"no record left here: the last record before it is #{before:,}")
        lines.append(p.detail)
        lines.append(explain_problem(p, p.index if p.index is not None else record_before(self.records, p) + 1,
                                     self._first_stop(), container))
        return "\n".join(lines)

    def _first_stop(self) -> int | None:
        """The record where TensorFlow stops: the first problem's (the problems are in file order)."""
        if not self._problems:
            return None
        p = self._problems[0]
        return p.index if p.index is not None else record_before(self.records, p) + 1
