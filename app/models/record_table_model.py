"""The record table: a Qt model over a TFRecordFile's offset index.

One row per indexed record. Rows are appended (``beginInsertRows``) when
:meth:`RecordTableModel.sync` is called on index progress, so a view shows
the first rows while the rest of the file is still being indexed. Only rows
a view asks for are read and decoded, and what is shown of them is kept in a
small LRU cache: nothing here ever walks the whole file.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont

from codec.decode import RecordKind, decode_record, feature_cell, feature_keys, feature_values, record_features
from codec.errors import FileChangedError
from codec.framing import RecordStatus
from codec.reader import TFRecordFile

from app.models.labels import KIND_TEXT, STATUS_TEXT
from app.style import icons
from app.style.palette import ACCENT_TEXT, DAMAGED_TEXT, RECOVERED_TEXT


def renumbered_note(i: int) -> str:
    """What a row after skipped bytes means for record numbers."""
    return (f"records from {i:,} on are numbered as found: records lost in the damaged bytes are not "
            f"counted, so this may not be record {i:,} as the file's writer numbered it")


class Column(IntEnum):
    """The fixed columns; feature columns follow them."""

    INDEX = 0
    OFFSET = 1
    SIZE = 2
    KIND = 3
    STATUS = 4


BASE_HEADERS = ("#", "Offset", "Size", "Kind", "Status")
BASE_COLUMNS = len(BASE_HEADERS)

RECORD_ROLE = Qt.ItemDataRole.UserRole  # the record number (int)
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1  # RecordStatus
KIND_ROLE = Qt.ItemDataRole.UserRole + 2  # RecordKind, or None when unreadable/truncated

# Translucent tints read on light and dark palettes alike.
DAMAGED_TINT = QColor(229, 57, 53, 56)
RECOVERED_TINT = QColor(251, 140, 0, 48)
GAP_TINT = QColor(251, 192, 45, 40)  # the first record found after skipped bytes (numbered as found)

# Larger records are not read or decoded for a table row (the detail view does it).
MAX_DECODE_BYTES = 16 << 20
DEFAULT_FEATURE_COLUMNS = 4
SAMPLE_RECORDS = 16
MAX_NAMED_IDS = 8  # a cell names the classes of at most this many ids (longer lists stay numbers)
_ROW_ROLES = frozenset({STATUS_ROLE, KIND_ROLE, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                        Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole})
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


@dataclass
class _Row:
    """What the table shows of one record, besides its live status."""

    length: int | None
    kind: RecordKind | None
    cells: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    note: str | None = None


class RecordTableModel(QAbstractTableModel):
    """Rows = records indexed so far; columns = #, offset, size, kind, status, features.

    ``error(str)`` reports a record that could not be read (one line), and
    ``file_changed(str)`` a read that found the file changed on disk; the
    widget showing the model decides how to tell the user.
    """

    error = Signal(str)
    file_changed = Signal(str)  # a read found the file changed on disk (codec.errors.FileChangedError)

    def __init__(self, tfile: TFRecordFile, parent=None, *, cache_size: int = 256) -> None:
        super().__init__(parent)
        self._tfile = tfile
        self._rows = 0
        self._features: list[str] = []
        self._cache: OrderedDict[int, _Row] = OrderedDict()
        self._cache_size = cache_size
        self._sampled: tuple[int, list[str]] | None = None
        self._samples: list | None = None  # the first rows decoded (see _sample_records)
        self._payload = tfile.payload  # what the cached rows were decoded with
        self._facts: tuple | None = None  # the last painted row's status, offset and gap (see fill_cell)
        self._problem_details: dict[int, str] = {}
        self._gaps: dict[int, str] = {}  # record -> what was skipped just before it
        self._problems_seen: tuple = ()
        self._edited_font = QFont()
        self._edited_font.setItalic(True)

    # -- the file ---------------------------------------------------------
    @property
    def tfile(self) -> TFRecordFile:
        return self._tfile

    def sync(self) -> int:
        """Add rows for records indexed since the last call; return how many.

        A file's records are appended. A shard set's shards join where they
        belong (one indexed out of order lands before others): the set numbers
        them only now, on this thread, so rows and numbers change together.
        """
        self._facts = None
        # The one probe of a record source left: only a shard set numbers its records out of order
        # (codec.records.RecordSource); a file's and a document's rows only grow at their end.
        publish = getattr(self._tfile, "publish", None)
        if publish is not None:
            added = 0
            for first, count in publish():
                if first < self._rows:
                    self._cache.clear()  # rows are cached by record number, and those after ``first`` moved
                self.beginInsertRows(QModelIndex(), first, first + count - 1)
                self._rows += count
                self.endInsertRows()
                added += count
            return added
        n = len(self._tfile)
        if n < self._rows:  # the index was rebuilt from scratch
            self.beginResetModel()
            self._rows = n
            self._cache.clear()
            self._sampled = None
            self._samples = None
            self.endResetModel()
            return 0
        added = n - self._rows
        if added:
            self.beginInsertRows(QModelIndex(), self._rows, n - 1)
            self._rows = n
            self.endInsertRows()
        return added

    def refresh_status(self, first: int = 0, last: int | None = None) -> None:
        """Tell views that statuses of rows ``first..last`` may have changed."""
        self._facts = None
        last = self._rows - 1 if last is None else min(last, self._rows - 1)
        if self._rows and first <= last:
            self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1),
                                  [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole,
                                   Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                                   STATUS_ROLE])

    # -- editing (codec.edited.EditedFile stands in for the file) -----------
    def set_file(self, tfile) -> None:
        """Read rows from ``tfile`` from now on: a TFRecordFile, or the edited view of one."""
        self._facts = None
        same = len(tfile) == self._rows
        if not same:
            self.beginResetModel()
        self._tfile = tfile
        self._payload = tfile.payload
        self._rows = len(tfile)
        self._cache.clear()
        self._sampled = None
        self._samples = None
        self._problems_seen = ()
        if same:
            self.refresh_status()
        else:
            self.endResetModel()

    def records_changed(self, rows=None) -> None:
        """Edits happened: ``rows`` changed in place, or (None) rows came, went or moved."""
        self._problems_seen = ()
        self._facts = None
        if rows is None or len(self._tfile) != self._rows:
            self.beginResetModel()
            self._rows = len(self._tfile)
            self._cache.clear()
            self._sampled = None
            self._samples = None
            self.endResetModel()
            return
        for i in rows:
            self._cache.pop(i, None)
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))

    def is_edited(self, i: int) -> bool:
        """True for a row that is new or changed and not saved yet (it has no offset in the file)."""
        return self._tfile.index.offset(i) < 0

    # -- feature columns --------------------------------------------------
    def _sample_records(self, limit: int = SAMPLE_RECORDS) -> list:
        """The first ``limit`` rows decoded (None for those that cannot be), kept until rows change."""
        self._check_payload()
        n = min(limit, self._rows)
        if self._samples is None or len(self._samples) != n:
            self._samples = [self._decoded(i) for i in range(n)]
        return self._samples

    def sample_keys(self, limit: int = SAMPLE_RECORDS) -> list[str]:
        """Feature keys of the first ``limit`` rows, in order of first appearance."""
        self._check_payload()
        n = min(limit, self._rows)
        if self._sampled is not None and self._sampled[0] == n:
            return list(self._sampled[1])
        keys: dict[str, None] = {}
        for decoded in self._sample_records(limit):
            if decoded is None:
                continue
            for key in feature_keys(decoded):
                keys.setdefault(key)
            lists = decoded.message.feature_lists.feature_list if decoded.kind is RecordKind.SEQUENCE_EXAMPLE \
                else ()
            for key in sorted(lists):
                keys.setdefault(key)
        self._sampled = (n, list(keys))
        return list(keys)

    def sample_kinds(self) -> list[str]:
        """The kinds (as the Kind column words them) of the first rows: for sizing the column."""
        return sorted({KIND_TEXT[d.kind] for d in self._sample_records() if d is not None})

    def sample_cells(self, key: str) -> list[str]:
        """What the first rows show in feature ``key``'s column: for sizing it."""
        return [self._cell(d, key) for d in self._sample_records() if d is not None]

    def default_feature_columns(self) -> list[str]:
        return self.sample_keys()[:DEFAULT_FEATURE_COLUMNS]

    def feature_columns(self) -> list[str]:
        return list(self._features)

    def set_feature_columns(self, keys: list[str]) -> None:
        """Show these feature keys as columns after the fixed ones."""
        keys = list(dict.fromkeys(keys))
        if keys == self._features:
            return
        if self._features:
            self.beginRemoveColumns(QModelIndex(), BASE_COLUMNS, BASE_COLUMNS + len(self._features) - 1)
            self._features = []
            self._cache.clear()
            self.endRemoveColumns()
        if keys:
            self.beginInsertColumns(QModelIndex(), BASE_COLUMNS, BASE_COLUMNS + len(keys) - 1)
            self._features = keys
            self._cache.clear()
            self.endInsertColumns()

    # -- Qt model ---------------------------------------------------------
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else BASE_COLUMNS + len(self._features)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Vertical:
            return str(section) if role == Qt.ItemDataRole.DisplayRole else None
        if not 0 <= section < self.columnCount():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section < BASE_COLUMNS:
                return BASE_HEADERS[section]
            return self.short_key(self._features[section - BASE_COLUMNS])
        if role == Qt.ItemDataRole.ToolTipRole:
            if section < BASE_COLUMNS:
                return None
            return f"feature {self._features[section - BASE_COLUMNS]!r} (right-click to choose columns)"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if section in (Column.INDEX, Column.OFFSET, Column.SIZE) else _LEFT
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self._rows:
            return None
        return self._value(index.row(), index.column(), role)

    def multiData(self, index: QModelIndex, roleDataSpan) -> None:
        """All the roles a delegate asks for in one call (one Python call per painted cell).

        Each call from Qt into Python has to take the GIL, which a busy
        worker thread holds; fewer calls keep painting fast while indexing.
        """
        if index.isValid() and 0 <= index.row() < self._rows:
            self.fill_cell(index.row(), index.column(), roleDataSpan)
        else:
            for role_data in roleDataSpan:
                role_data.clearData()

    def fill_cell(self, i: int, col: int, roleDataSpan) -> None:
        """``multiData`` for record ``i`` (a valid row).

        What every cell of a row asks (status, offset, a gap before it) is
        looked up once per row: views paint a row's cells one after another.
        """
        facts = self._facts
        if facts is None or facts[1] != i or facts[0] is not self._tfile:
            index = self._tfile.index
            facts = self._facts = (self._tfile, i, index.status(i), index.offset(i), self._gap_before(i))
        status = facts[2]
        for role_data in roleDataSpan:
            value = self._value(i, col, role_data.role(), status)
            if value is None:
                role_data.clearData()
            else:
                role_data.setData(value)

    def _value(self, i: int, col: int, role: int, status: RecordStatus | None = None) -> Any:
        """One role of one cell; the row facts fill_cell looked up save looking the row up again."""
        facts = self._facts
        if facts is not None and (facts[1] != i or facts[0] is not self._tfile):
            facts = None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(i, col, facts)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if col in (Column.INDEX, Column.OFFSET, Column.SIZE) else _LEFT
        if role == RECORD_ROLE:
            return i
        edited = facts[3] < 0 if facts is not None else None
        if role == Qt.ItemDataRole.FontRole:
            return self._edited_font if (self.is_edited(i) if edited is None else edited) else None
        if role not in _ROW_ROLES:
            return None
        if status is None:
            status = self._tfile.index.status(i)
        gap = facts[4] if facts is not None else self._gap_before(i)
        if role == STATUS_ROLE:
            return status
        if role == Qt.ItemDataRole.BackgroundRole:
            if not status.damaged:
                return GAP_TINT if gap else None
            return RECOVERED_TINT if status is RecordStatus.LENGTH_CRC else DAMAGED_TINT
        if role == Qt.ItemDataRole.ForegroundRole:
            if col != Column.STATUS:
                return None
            if self.is_edited(i) if edited is None else edited:
                return ACCENT_TEXT
            if status.damaged:
                return RECOVERED_TEXT if status is RecordStatus.LENGTH_CRC else DAMAGED_TEXT
            return RECOVERED_TEXT if gap else None
        if role == Qt.ItemDataRole.DecorationRole:
            if col == Column.INDEX:  # the numbering jumps here: records lost in the damage are not counted
                return icons.icon("warning") if gap else None
            if col != Column.STATUS:
                return None
            if not status.damaged:
                return icons.icon("warning" if gap else "ok")
            return icons.icon("warning" if status is RecordStatus.LENGTH_CRC else "damaged")
        row = self._row(i)
        if role == KIND_ROLE:
            return row.kind
        return self._tooltip(i, col, row, status)  # ToolTipRole

    # -- rows -------------------------------------------------------------
    def _display(self, i: int, col: int, facts: tuple | None = None) -> str:
        if col == Column.INDEX:
            return f"{i:,}"
        if col == Column.OFFSET:
            offset = facts[3] if facts is not None else self._tfile.index.offset(i)
            return "—" if offset < 0 else f"{offset:,}"
        row = self._row(i)
        if col == Column.SIZE:
            return "?" if row.length is None else f"{row.length:,}"
        if col == Column.KIND:
            if row.error:
                return "unreadable"
            if row.note:
                return "large"
            return "—" if row.kind is None else KIND_TEXT[row.kind]
        if col == Column.STATUS:
            if self.is_edited(i):
                return "edited"
            status = self._tfile.index.status(i)
            if not status.damaged and self._gap_before(i):
                return "ok, after skipped bytes"
            return STATUS_TEXT[status]
        return row.cells.get(self._features[col - BASE_COLUMNS], "")

    def _tooltip(self, i: int, col: int, row: _Row, status: RecordStatus) -> str | None:
        if col == Column.OFFSET or (col == Column.STATUS and self.is_edited(i)):
            offset = self._tfile.index.offset(i)
            if offset < 0:
                return f"record {i} is new or changed: not saved yet (File > Save writes it)"
            return f"record {i} starts at byte {offset:,} ({offset:#x})"
        gap = self._gap_before(i)
        if col in (Column.INDEX, Column.STATUS) or status.damaged or gap:
            notes = [self._problem_detail(i) or STATUS_TEXT[status]]
            if gap:
                notes[:0] = [f"before this record: {gap}", renumbered_note(i)]
            return "\n".join(notes)
        if row.error or row.note:
            return row.error or row.note
        if col >= BASE_COLUMNS:
            key = self._features[col - BASE_COLUMNS]
            return f"{key}: {row.cells.get(key, '')}"
        return None

    def _problem_detail(self, i: int) -> str | None:
        self._map_problems()
        return self._problem_details.get(i)

    def flagged_rows(self) -> np.ndarray:
        """Rows to look at: damaged records and records right after skipped bytes (sorted)."""
        statuses = self._tfile.index.statuses()[: self._rows]
        damaged = np.flatnonzero(statuses >= int(RecordStatus.LENGTH_CRC))
        self._map_problems()
        gaps = np.fromiter((i for i in self._gaps if i < self._rows), dtype=np.int64)
        return np.union1d(damaged, gaps).astype(np.int64)

    def _gap_before(self, i: int) -> str | None:
        """The damage skipped just before record ``i`` (garbage, a lost header...), if any."""
        self._map_problems()
        return self._gaps.get(i)

    def _map_problems(self) -> None:
        """Map the file's problems to rows: their own record, or the record after the gap."""
        problems = self._tfile.problems
        key = (id(problems), len(problems), len(self._tfile))
        if key == self._problems_seen:
            return
        self._problem_details = {p.index: f"{p.kind.value}: {p.detail}" for p in problems if p.index is not None}
        self._gaps = {}
        for p in problems:
            if p.index is None:
                nxt = self._tfile.find_record(p.offset) + 1
                if nxt < len(self._tfile):
                    self._gaps[nxt] = f"{p.kind.value} at byte {p.offset:,}: {p.detail}"
        self._problems_seen = key

    def _cannot_read(self, i: int, exc: Exception) -> None:
        if isinstance(exc, FileChangedError):
            self.file_changed.emit(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        self.error.emit(f"cannot read record {i:,}: {exc}")

    def _read(self, i: int):
        try:
            return self._tfile.read(i)
        except (OSError, ValueError, IndexError) as exc:
            self._cannot_read(i, exc)
            return None

    def _decoded(self, i: int):
        """Record ``i`` decoded, or None when unreadable, truncated or too large for the table."""
        try:
            info = self._tfile.record_info(i)
        except (OSError, ValueError, IndexError):
            return None
        if info.status is RecordStatus.TRUNCATED or info.length > MAX_DECODE_BYTES:
            return None
        rec = self._read(i)
        return None if rec is None else decode_record(rec.data, self._tfile.payload)

    def _check_payload(self) -> None:
        """Another payload (Decode As) decodes the rows differently: forget what was read with the old one."""
        if self._tfile.payload is not self._payload:
            self._payload = self._tfile.payload
            self._cache.clear()
            self._samples = None
            self._sampled = None

    def _cell(self, decoded, key: str) -> str:
        """Feature ``key``'s cell: ids of a label feature with their names (``1 (cat)``) when known."""
        text = feature_cell(decoded, key)
        labels = self._tfile.labels
        if labels is None or not text:
            return text
        features = record_features(decoded)
        dtype, values = feature_values(features[key]) if features is not None and key in features else (None, [])
        if dtype != "int64" or not values or len(values) > MAX_NAMED_IDS:
            return text
        parts = []
        for v in values:
            name = labels.name(key, v)
            parts.append(f"{v} ({name})" if name else str(v))
        return parts[0] if len(parts) == 1 else f"[{', '.join(parts)}]"

    def _row(self, i: int) -> _Row:
        """The shown data of record ``i``: read and decoded once, then cached."""
        self._check_payload()
        row = self._cache.get(i)
        if row is not None:
            self._cache.move_to_end(i)
            return row
        try:
            info = self._tfile.record_info(i)
        except (OSError, ValueError, IndexError) as exc:
            self._cannot_read(i, exc)
            info = None
        if info is None:
            row = _Row(None, None, error="this record could not be read")
        elif info.status is RecordStatus.TRUNCATED:
            row = _Row(info.length, None)
        elif info.length > MAX_DECODE_BYTES:
            row = _Row(info.length, None, note=f"{info.length:,} bytes: decoded in the detail view only")
        else:
            rec = self._read(i)
            if rec is None:
                row = _Row(info.length, None, error="this record could not be read")
            else:
                decoded = decode_record(rec.data, self._tfile.payload)
                cells = {key: self._cell(decoded, key) for key in self._features}
                row = _Row(info.length, decoded.kind, cells)
        self._cache[i] = row
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return row

    @property
    def cached_rows(self) -> int:
        """How many rows are decoded and cached (for tests: never the whole file)."""
        return len(self._cache)

    @staticmethod
    def short_key(key: str) -> str:
        """``image/object/class/text`` -> ``…/class/text`` for a narrow header."""
        parts = key.split("/")
        return key if len(parts) <= 2 else "…/" + "/".join(parts[-2:])
