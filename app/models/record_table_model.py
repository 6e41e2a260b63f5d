"""The record table: a Qt model over the offset index of the records a tab shows.

One row per indexed record of ``owner.records`` (the tab's session says which
records those are; the model keeps no copy). Rows are appended
(``beginInsertRows``) when :meth:`RecordTableModel.sync` is called on index
progress, so a view shows the first rows while the rest of the file is still
being indexed. Only rows a view asks for are read and decoded, and what is
shown of them is kept in a :class:`~app.models.row_cache.RowCache`: nothing
here ever walks the whole file. The first rows choose the feature columns
(:mod:`app.models.column_choice`); damage is worded by
:mod:`app.models.problem_notes`.

A remote source's rows (a URL, a shard set of URLs) are never read on the
GUI thread: given a fetcher (:meth:`RecordTableModel.fetch_with`, an
``app.workers.row_fetcher.RowFetcher``), a row not cached yet shows a
placeholder and is read in the background, then cached and repainted. A
local file's rows are read and decoded when asked.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, SignalInstance
from PySide6.QtGui import QFont

from app.models.column_choice import SAMPLE_RECORDS, FeatureFacts, SampleRows, ranked_keys
from app.models.labels import (
    EDITED_STATUS,
    GAP_STATUS,
    KIND_TEXT,
    LARGE_KIND,
    NO_KIND,
    UNREADABLE_KIND,
    status_words,
)
from app.models.problem_notes import ProblemNotes, renumbered_note
from app.models.record_format import container_of
from app.models.records_owner import RecordsOwner
from app.models.row_cache import RowCache
from app.models.table_rows import LOADING_ROW, MAX_DECODE_BYTES, RowJob, TableRow, build_row, cell_text
from app.style import icons, palette
from codec.decode.decoder import decode_record
from codec.errors import FileChangedError
from codec.format.framing import RecordStatus
from codec.sources.protocol import RecordSource


class RowFetching(Protocol):
    """What the table needs of a remote source's fetcher (``app.workers.row_fetcher.RowFetcher``)."""

    arrived: SignalInstance
    late: SignalInstance

    def failed_row(self, i: int) -> TableRow | None: ...
    def ask(self, i: int) -> None: ...
    def pending(self) -> int: ...
    def forget(self) -> None: ...
    def drop_answers(self) -> None: ...
    def close(self) -> None: ...


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
DAMAGED_TINT = palette.DAMAGED_TINT  # the palette's QColors: they follow the theme in place
RECOVERED_TINT = palette.RECOVERED_TINT
GAP_TINT = palette.GAP_TINT  # the first record found after skipped bytes (numbered as found)

REMOTE_CACHE_ROWS = 4096  # a remote source's rows cost a round trip each: more of them are kept
LOADING_TEXT = "…"
_ROW_ROLES = frozenset({STATUS_ROLE, KIND_ROLE, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                        Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole})
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


class RecordTableModel(QAbstractTableModel):
    """Rows = records indexed so far; columns = #, offset, size, kind, status, features.

    ``failed(str)`` reports a record that could not be read (one line), and
    ``file_changed(str)`` a read that found the file changed on disk; the
    widget showing the model decides how to tell the user. A remote source's
    ``samples_ready()``: its first rows came from the background, so the
    sample_* answers are complete now (feature columns can be chosen).
    """

    failed = Signal(str)
    file_changed = Signal(str)  # a read found the file changed on disk (codec.errors.FileChangedError)
    samples_ready = Signal()

    def __init__(self, owner: RecordsOwner, parent=None, *, cache_size: int = 256) -> None:
        super().__init__(parent)
        self._owner = owner
        records = owner.records
        self._index = records.index  # a verify pass may replace it with a new one
        self._rows = 0
        self._features: list[str] = []
        self._cache = RowCache(cache_size)
        self._local_cache_size = cache_size
        self._samples = SampleRows()
        self._notes = self._make_notes()
        self._payload = records.payload  # what the cached rows were decoded with
        self._facts: tuple | None = None  # the last painted row's records, number, status, offset and gap (fill_cell)
        self._edited_font = QFont()
        self._edited_font.setItalic(True)
        self._fetcher: RowFetching | None = None  # a remote source's rows come from it (fetch_with)
        self._closed = False

    def _make_notes(self) -> ProblemNotes:
        return ProblemNotes(lambda: self._owner.records)

    # -- the records --------------------------------------------------------
    @property
    def records(self) -> RecordSource:
        """The records shown: the owner's (the file, a shard set, or the edited view of one)."""
        return self._owner.records

    @property
    def fetcher(self) -> RowFetching | None:
        """What reads a remote source's rows in the background; None for a local source's."""
        return self._fetcher

    def fetch_with(self, fetcher: RowFetching) -> None:
        """Read rows through ``fetcher`` in the background from now on (a remote source's): never here."""
        self._fetcher = fetcher
        self._cache.capacity = max(self._local_cache_size, REMOTE_CACHE_ROWS)
        fetcher.arrived.connect(self._arrived)
        fetcher.late.connect(self._late)

    def row_job(self) -> RowJob:
        """What reads one row on a fetcher's thread, for the records and columns shown now."""
        return RowJob(self.records, self._features, MAX_DECODE_BYTES)

    def sync(self) -> int:
        """Add rows for records indexed since the last call; return how many.

        A file's records are appended. A shard set's shards join where they
        belong (one indexed out of order lands before others): the set numbers
        them only now, on this thread, so rows and numbers change together.
        """
        self._facts = None
        records = self.records
        if records.numbered_out_of_order:  # (a shard set; a file's and a document's rows grow at their end)
            added = 0
            for first, count in records.publish():
                if first < self._rows:
                    self._forget_rows()  # rows are cached by record number, and those after ``first`` moved
                self.beginInsertRows(QModelIndex(), first, first + count - 1)
                self._rows += count
                self.endInsertRows()
                added += count
            return added
        n = len(records)
        index, self._index = self._index, records.index
        if n < self._rows or (self._rows and index is not self._index):  # the index was rebuilt from scratch
            self.beginResetModel()
            self._rows = n
            self._forget_rows(samples=True)
            self.endResetModel()
            return 0
        added = n - self._rows
        if added and self._cache.pop(self._rows - 1) is not None:
            self.refresh_status(self._rows - 1, self._rows - 1)  # a file followed: it was being written
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

    # -- editing (codec.editing.edited.EditedFile stands in for the file) -----------
    def records_replaced(self) -> None:
        """The owner's records are another object now (editing began or stopped, a save reopened
        the file), or decode differently: read everything from them again."""
        records = self.records
        self._facts = None
        same = len(records) == self._rows
        if not same:
            self.beginResetModel()
        self._index = records.index
        self._payload = records.payload
        self._rows = len(records)
        self._forget_rows(samples=True)
        self._notes.forget()
        if same:
            self.refresh_status()
        else:
            self.endResetModel()

    def records_changed(self, rows=None) -> None:
        """Edits happened: ``rows`` changed in place, or (None) rows came, went or moved."""
        self._notes.forget()
        self._facts = None
        if rows is None or len(self.records) != self._rows:
            self.beginResetModel()
            self._rows = len(self.records)
            self._forget_rows(samples=True)
            self.endResetModel()
            return
        if self._fetcher is not None:  # a row being read now may have been read before the edit: its answer is dropped
            self._fetcher.drop_answers()
        for i in rows:
            self._cache.pop(i)
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))

    def is_edited(self, i: int) -> bool:
        """True for a row that is new or changed and not saved yet (it has no offset in the file)."""
        return self.records.is_edited(i)

    # -- feature columns --------------------------------------------------
    def _sample_records(self, limit: int = SAMPLE_RECORDS) -> list:
        """The first ``limit`` rows decoded (None for those that cannot be), kept until rows change.

        A remote source's come from the fetcher: until all have come, those
        that have (not kept; ``samples_ready`` says when the rest are here).
        """
        self._check_payload()
        n = min(limit, self._rows)
        if self._fetcher is not None:
            return self._samples.fetched(n, self._ask)
        return self._samples.read(n, self._decoded)

    def sample_schema(self, limit: int = SAMPLE_RECORDS) -> dict[str, FeatureFacts]:
        """Each feature of the first ``limit`` rows with its facts, sorted by key (see :mod:`column_choice`)."""
        self._check_payload()
        n = min(limit, self._rows)
        known = self._samples.known_schema(n)
        if known is not None:
            return known
        return self._samples.schema(n, self._sample_records(limit))

    def sample_keys(self, limit: int = SAMPLE_RECORDS) -> list[str]:
        """Feature keys of the first ``limit`` rows, sorted."""
        return list(self.sample_schema(limit))

    def sample_kinds(self) -> list[str]:
        """The kinds (as the Kind column words them) of the first rows: for sizing the column."""
        return sorted({KIND_TEXT[d.kind] for d in self._sample_records() if d is not None})

    def sample_cells(self, key: str) -> list[str]:
        """What the first rows show in feature ``key``'s column: for sizing it."""
        return [self._cell(d, key) for d in self._sample_records() if d is not None]

    def default_feature_columns(self) -> list[str]:
        """The features worth a column, best first (labels and class names, then single values, then short
        lists); the tab shows as many as fit."""
        return ranked_keys(self.sample_schema())

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
            self._forget_rows()
            self.endRemoveColumns()
        if keys:
            self.beginInsertColumns(QModelIndex(), BASE_COLUMNS, BASE_COLUMNS + len(keys) - 1)
            self._features = keys
            self._forget_rows()
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
        if facts is None or facts[1] != i or facts[0] is not self.records:
            index = self.records.index
            facts = self._facts = (self.records, i, index.status(i), index.offset(i), self._gap_before(i))
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
        if facts is not None and (facts[1] != i or facts[0] is not self.records):
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
            status = self.records.index.status(i)
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
                return palette.ACCENT_TEXT
            if status.damaged:
                return palette.RECOVERED_TEXT if status is RecordStatus.LENGTH_CRC else palette.DAMAGED_TEXT
            if status is RecordStatus.WRITING:
                return palette.MUTED_TEXT
            return palette.RECOVERED_TEXT if gap else None
        if role == Qt.ItemDataRole.DecorationRole:
            if col == Column.INDEX:  # the numbering jumps here: records lost in the damage are not counted
                return icons.icon("warning") if gap else None
            if col != Column.STATUS:
                return None
            if status is RecordStatus.WRITING:
                return None  # not damage, not checked yet: its bytes are still arriving
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
            if self.is_edited(i):
                return "—"
            return f"{facts[3] if facts is not None else self.records.index.offset(i):,}"
        row = self._row(i)
        if row.loading and col != Column.STATUS:
            return LOADING_TEXT
        if col == Column.SIZE:
            return "?" if row.length is None else f"{row.length:,}"
        if col == Column.KIND:
            if row.error:
                return UNREADABLE_KIND
            if row.note:
                return LARGE_KIND
            return NO_KIND if row.kind is None else KIND_TEXT[row.kind]
        if col == Column.STATUS:
            if self.is_edited(i):
                return EDITED_STATUS
            status = self.records.index.status(i)
            if not status.damaged and self._gap_before(i):
                return GAP_STATUS
            return self.status_text(status)
        return row.cells.get(self._features[col - BASE_COLUMNS], "")

    def status_text(self, status: RecordStatus) -> str:
        """A status in words, as the records' container has it (an ArrayRecord file's chunks carry no CRCs)."""
        return status_words(status, container_of(self.records))

    def _tooltip(self, i: int, col: int, row: TableRow, status: RecordStatus) -> str | None:
        if col == Column.OFFSET or (col == Column.STATUS and self.is_edited(i)):
            if self.is_edited(i):
                return f"record {i} is new or changed: not saved yet (File > Save writes it)"
            offset = self.records.index.offset(i)
            return f"record {i} starts at byte {offset:,} ({offset:#x})"
        gap = self._gap_before(i)
        if col in (Column.INDEX, Column.STATUS) or status.damaged or gap:
            notes = [self._problem_detail(i) or self.status_text(status)]
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
        return self._notes.detail(i)

    def problem_line(self, i: int) -> str | None:
        """Record ``i``'s damage (or the damage just before it) in plain words, for the status bar; None if sound."""
        if not 0 <= i < self._rows or self.is_edited(i):
            return None
        return self._notes.status_line(i, self.records.index.status(i))

    def flagged_rows(self) -> np.ndarray:
        """Rows to look at: damaged records and records right after skipped bytes (sorted)."""
        return self._notes.flagged(self._rows)

    def _gap_before(self, i: int) -> str | None:
        """The damage skipped just before record ``i`` (garbage, a lost header...), if any."""
        return self._notes.gap_before(i)

    def _cannot_read(self, i: int, exc: Exception) -> None:
        if isinstance(exc, FileChangedError):
            self.file_changed.emit(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        self.failed.emit(f"cannot read record {i:,}: {exc}")

    def _read(self, i: int):
        try:
            return self.records.read(i)
        except (OSError, ValueError, IndexError) as exc:
            self._cannot_read(i, exc)
            return None

    def _decoded(self, i: int):
        """Record ``i`` decoded, or None when unreadable, truncated or too large for the table."""
        records = self.records
        try:
            info = records.record_info(i)
        except (OSError, ValueError, IndexError):
            return None
        if info.status is RecordStatus.TRUNCATED or info.length > MAX_DECODE_BYTES:
            return None
        rec = self._read(i)
        return None if rec is None else decode_record(rec.data, records.payload)

    def _check_payload(self) -> None:
        """Another payload (Decode As) decodes the rows differently: forget what was read with the old one."""
        payload = self.records.payload
        if payload is not self._payload:
            self._payload = payload
            self._forget_rows(samples=True)

    def _cell(self, decoded, key: str) -> str:
        """Feature ``key``'s cell: ids of a label feature with their names (``1 (cat)``) when known."""
        return cell_text(decoded, key, self.records.labels)

    def _row(self, i: int) -> TableRow:
        """The shown data of record ``i``: read and decoded once, then cached.

        A remote source's row not cached yet is asked of the fetcher, and a
        placeholder shown meanwhile: nothing is read here.
        """
        self._check_payload()
        row = self._cache.get(i)
        if row is not None:
            return row
        if self._fetcher is not None:
            failed = self._fetcher.failed_row(i)
            if failed is not None:
                return failed
            self._ask(i)
            return LOADING_ROW
        records = self.records
        row, exc, _ = build_row(records, i, self._features, records.payload, records.labels, MAX_DECODE_BYTES)
        if exc is not None:
            self._cannot_read(i, exc)
        self._cache.put(i, row)
        return row

    def _forget_rows(self, *, samples: bool = False) -> None:
        """Drop the cached rows (and with ``samples`` the first rows decoded); answers on their way are late."""
        self._cache.clear()
        if samples:
            self._samples.forget()
        if self._fetcher is not None:
            self._fetcher.forget()

    # -- a remote source's rows, from the fetcher ------------------------------
    def _ask(self, i: int) -> None:
        if not self._closed:
            self._fetcher.ask(i)

    def _late(self, rows: list[int]) -> None:
        """Answers asked before the rows changed: still placeholders where shown, so views ask again."""
        rows = [i for i in rows if i < self._rows]
        if rows and not self._closed:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))

    def _arrived(self, arrival) -> None:
        """Rows read in the background: cache them and repaint them."""
        if self._closed:
            return
        for i, row, decoded in arrival.kept:
            if i < self._rows:
                self._cache.put(i, row)
                if row.error is None:  # one that failed is asked again when sampled
                    self._samples.came(i, decoded)
        if arrival.failure is not None:
            self._cannot_read(*arrival.failure)
        rows = [i for i in arrival.rows if i < self._rows]
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))
        if not self._samples.announced and self._samples.all_came(self._rows):
            self._samples.announced = True
            self.samples_ready.emit()

    def loading_rows(self) -> int:
        """Rows asked of the fetcher and not back yet (0 for a local source)."""
        return 0 if self._fetcher is None else self._fetcher.pending()

    def close(self) -> None:
        """Read no more rows (the tab is closing): queued ones are dropped, the one being read is waited for."""
        self._closed = True
        if self._fetcher is not None:
            self._fetcher.close()

    @property
    def cached_rows(self) -> int:
        """How many rows are decoded and cached (for tests: never the whole file)."""
        return len(self._cache)

    @staticmethod
    def short_key(key: str) -> str:
        """``image/object/class/text`` -> ``…/class/text`` for a narrow header."""
        parts = key.split("/")
        return key if len(parts) <= 2 else "…/" + "/".join(parts[-2:])
