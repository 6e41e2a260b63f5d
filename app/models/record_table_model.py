"""The record table: a Qt model over a TFRecordFile's offset index.

One row per indexed record. Rows are appended (``beginInsertRows``) when
:meth:`RecordTableModel.sync` is called on index progress, so a view shows
the first rows while the rest of the file is still being indexed. Only rows
a view asks for are read and decoded, and what is shown of them is kept in a
small LRU cache: nothing here ever walks the whole file.

A remote source's rows (a URL, a shard set of URLs) are never read on the
GUI thread: a row not cached yet shows a placeholder, and is read by a
:class:`~app.workers.row_loader.RowLoader` that sends it back to be cached
and repainted. A local file's rows are read and decoded when asked.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from enum import IntEnum
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont

from codec.decode.decoder import RecordKind, decode_record, feature_keys
from codec.errors import FileChangedError
from codec.format.framing import RecordStatus
from codec.sources.tfrecord_file import TFRecordFile

from app.models.labels import KIND_TEXT, STATUS_TEXT
from app.models.table_rows import LOADING_ROW, MAX_DECODE_BYTES, UNREADABLE, RowJob, TableRow, build_row, cell_text
from app.style import icons
from app.style.palette import ACCENT_TEXT, DAMAGED_TEXT, MUTED_TEXT, RECOVERED_TEXT
from app.workers.row_loader import RowLoader


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

DEFAULT_FEATURE_COLUMNS = 4
SAMPLE_RECORDS = 16
REMOTE_CACHE_ROWS = 4096  # a remote source's rows cost a round trip each: more of them are kept
LOADING_TEXT = "…"
RETRY_AFTER = 10.0  # seconds a remote row that could not be read shows so before it is asked again
_ROW_ROLES = frozenset({STATUS_ROLE, KIND_ROLE, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                        Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole})
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


class RecordTableModel(QAbstractTableModel):
    """Rows = records indexed so far; columns = #, offset, size, kind, status, features.

    ``error(str)`` reports a record that could not be read (one line), and
    ``file_changed(str)`` a read that found the file changed on disk; the
    widget showing the model decides how to tell the user. A remote source's
    ``samples_ready()``: its first rows came from the background, so the
    sample_* answers are complete now (feature columns can be chosen).
    """

    error = Signal(str)
    file_changed = Signal(str)  # a read found the file changed on disk (codec.errors.FileChangedError)
    samples_ready = Signal()

    def __init__(self, tfile: TFRecordFile, parent=None, *, cache_size: int = 256) -> None:
        super().__init__(parent)
        self._tfile = tfile
        self._index = tfile.index  # a verify pass may replace it with a new one
        self._rows = 0
        self._features: list[str] = []
        self._cache: OrderedDict[int, TableRow] = OrderedDict()
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
        # a remote source's rows: read by a loader, asked in batches of one event-loop turn
        self._remote = False
        self._local_cache_size = cache_size
        self._loader: RowLoader | None = None
        self._epoch = 0  # grows when cached rows are forgotten: older answers are dropped
        self._asked: set[int] = set()  # rows queued or being read
        self._wanted: list[int] = []  # rows asked since the last batch was sent
        self._failed: dict[int, tuple[TableRow, float]] = {}  # rows the network failed: when
        self._reported: Exception | None = None  # the last failure told (the rows after it in a batch share it)
        self._sample_rows: dict[int, Any] = {}  # the first rows decoded, as they came (None: not decodable)
        self._samples_announced = False
        self._closed = False
        self._send_timer = QTimer(self)
        self._send_timer.setSingleShot(True)
        self._send_timer.setInterval(0)
        self._send_timer.timeout.connect(self._send_wanted)
        self._use_source(tfile)

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
        if self._tfile.numbered_out_of_order:  # (a shard set; a file's and a document's rows grow at their end)
            added = 0
            for first, count in self._tfile.publish():
                if first < self._rows:
                    self._forget_rows()  # rows are cached by record number, and those after ``first`` moved
                self.beginInsertRows(QModelIndex(), first, first + count - 1)
                self._rows += count
                self.endInsertRows()
                added += count
            return added
        n = len(self._tfile)
        index, self._index = self._index, self._tfile.index
        if n < self._rows or (self._rows and index is not self._index):  # the index was rebuilt from scratch
            self.beginResetModel()
            self._rows = n
            self._forget_rows(samples=True)
            self.endResetModel()
            return 0
        added = n - self._rows
        if added and self._cache.pop(self._rows - 1, None) is not None:
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
    def set_file(self, tfile) -> None:
        """Read rows from ``tfile`` from now on: a TFRecordFile, or the edited view of one."""
        self._facts = None
        same = len(tfile) == self._rows
        if not same:
            self.beginResetModel()
        self._tfile = tfile
        self._index = tfile.index
        self._payload = tfile.payload
        self._rows = len(tfile)
        self._use_source(tfile)
        self._forget_rows(samples=True)
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
            self._forget_rows(samples=True)
            self.endResetModel()
            return
        if self._remote:  # a row being read now may have been read before the edit: its answer is dropped
            self._drop_answers()
        for i in rows:
            self._cache.pop(i, None)
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))

    def is_edited(self, i: int) -> bool:
        """True for a row that is new or changed and not saved yet (it has no offset in the file)."""
        return self._tfile.is_edited(i)

    # -- feature columns --------------------------------------------------
    def _sample_records(self, limit: int = SAMPLE_RECORDS) -> list:
        """The first ``limit`` rows decoded (None for those that cannot be), kept until rows change.

        A remote source's come from the loader: until all have come, those
        that have (not kept; ``samples_ready`` says when the rest are here).
        """
        self._check_payload()
        n = min(limit, self._rows)
        if self._remote:
            n = min(n, SAMPLE_RECORDS)
            if self._samples is None or len(self._samples) != n:
                missing = [i for i in range(n) if i not in self._sample_rows]
                for i in missing:
                    self._ask(i)
                got = [self._sample_rows[i] for i in range(n) if i in self._sample_rows]
                if missing:
                    self._samples = None
                    return got
                self._samples = got
            return self._samples
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
        samples = self._sample_records(limit)
        for decoded in samples:
            if decoded is None:
                continue
            for key in feature_keys(decoded):
                keys.setdefault(key)
            lists = decoded.message.feature_lists.feature_list if decoded.kind is RecordKind.SEQUENCE_EXAMPLE \
                else ()
            for key in sorted(lists):
                keys.setdefault(key)
        if samples is self._samples:  # all of them (a remote source's may not all have come)
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
            if status is RecordStatus.WRITING:
                return MUTED_TEXT
            return RECOVERED_TEXT if gap else None
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
            offset = facts[3] if facts is not None else self._tfile.index.offset(i)
            return "—" if self._tfile.is_edited(i) else f"{offset:,}"
        row = self._row(i)
        if row.loading and col != Column.STATUS:
            return LOADING_TEXT
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

    def _tooltip(self, i: int, col: int, row: TableRow, status: RecordStatus) -> str | None:
        if col == Column.OFFSET or (col == Column.STATUS and self.is_edited(i)):
            offset = self._tfile.index.offset(i)
            if self._tfile.is_edited(i):
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
        damaged = np.flatnonzero((statuses >= int(RecordStatus.LENGTH_CRC)) & (statuses <= int(RecordStatus.TRUNCATED)))
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
            self._forget_rows(samples=True)

    def _cell(self, decoded, key: str) -> str:
        """Feature ``key``'s cell: ids of a label feature with their names (``1 (cat)``) when known."""
        return cell_text(decoded, key, self._tfile.labels)

    def _row(self, i: int) -> TableRow:
        """The shown data of record ``i``: read and decoded once, then cached.

        A remote source's row not cached yet is asked of the loader, and a
        placeholder shown meanwhile: nothing is read here.
        """
        self._check_payload()
        row = self._cache.get(i)
        if row is not None:
            self._cache.move_to_end(i)
            return row
        if self._remote:
            failed = self._failed.get(i)
            if failed is not None and time.monotonic() - failed[1] < RETRY_AFTER:
                return failed[0]
            self._ask(i)
            return LOADING_ROW
        row, exc, _ = build_row(self._tfile, i, self._features, self._tfile.payload, self._tfile.labels,
                                MAX_DECODE_BYTES)
        if exc is not None:
            self._cannot_read(i, exc)
        self._store(i, row)
        return row

    def _store(self, i: int, row: TableRow) -> None:
        self._cache[i] = row
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    # -- a remote source's rows, from the loader ------------------------------
    def _use_source(self, source) -> None:
        self._remote = source.is_remote
        self._cache_size = max(self._local_cache_size, REMOTE_CACHE_ROWS) if self._remote \
            else self._local_cache_size

    def _forget_rows(self, *, samples: bool = False) -> None:
        """Drop the cached rows (and with ``samples`` the first rows decoded); answers on their way are late."""
        self._cache.clear()
        self._failed.clear()
        if samples:
            self._samples = None
            self._sampled = None
            self._sample_rows.clear()
            self._samples_announced = False
        self._drop_answers()

    def _drop_answers(self) -> None:
        """Rows asked of the loader so far are not wanted: their answers are dropped when they come."""
        if self._asked or self._wanted or self._loader is not None:
            self._epoch += 1
            self._asked.clear()
            self._wanted.clear()
            if self._loader is not None:
                self._loader.forget(self._epoch)

    def _ask(self, i: int) -> None:
        """Queue row ``i`` for the loader; the rows asked in one turn of the event loop go as one batch."""
        if i in self._asked or self._closed:
            return
        self._asked.add(i)
        self._wanted.append(i)
        if not self._send_timer.isActive():
            self._send_timer.start()

    def _send_wanted(self) -> None:
        rows, self._wanted = sorted(self._wanted), []
        if not rows or self._closed:
            return
        if self._loader is None:
            self._loader = RowLoader(self)
            self._loader.loaded.connect(self._loaded)
        dropped = self._loader.want(self._epoch, rows, RowJob(self._tfile, self._features, MAX_DECODE_BYTES))
        self._asked.difference_update(dropped)

    def _loaded(self, epoch: int, results: list) -> None:
        """Rows read by the loader: cache them and repaint them (an older epoch's: ask again, if shown)."""
        if self._closed or not results:
            return
        rows = [i for i, _ in results if i < self._rows]
        if epoch != self._epoch:
            if rows:  # still placeholders where shown: views ask again, for the rows as they are now
                self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))
            return
        failed = None
        for i, out in results:
            self._asked.discard(i)
            if isinstance(out, Exception):  # the row job itself failed (it says why in a row)
                out = TableRow(None, None, error=UNREADABLE), out, None
            row, exc, decoded = out
            if exc is not None and failed is None and exc is not self._reported:  # a batch's rows share one
                failed = (i, exc)
            if isinstance(exc, OSError):  # the network or the server: shown so for a while, then read again
                self._failed[i] = row, time.monotonic()
                if len(self._failed) > self._cache_size:
                    del self._failed[next(iter(self._failed))]
            elif i < self._rows:
                self._failed.pop(i, None)
                self._store(i, row)
                if i < SAMPLE_RECORDS and row.error is None:  # one that failed is asked again when sampled
                    self._sample_rows[i] = decoded
        if failed is not None:
            self._reported = failed[1]
            self._cannot_read(*failed)
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), self.columnCount() - 1))
        n = min(SAMPLE_RECORDS, self._rows)
        if not self._samples_announced and n and all(i in self._sample_rows for i in range(n)):
            self._samples_announced = True
            self.samples_ready.emit()

    def loading_rows(self) -> int:
        """Rows asked of the loader and not back yet (0 for a local source)."""
        return len(self._asked)

    def close(self) -> None:
        """Read no more rows (the tab is closing): queued ones are dropped, the one being read is waited for."""
        self._closed = True
        self._send_timer.stop()
        self._asked.clear()
        self._wanted.clear()
        if self._loader is not None:
            self._loader.close()

    @property
    def cached_rows(self) -> int:
        """How many rows are decoded and cached (for tests: never the whole file)."""
        return len(self._cache)

    @staticmethod
    def short_key(key: str) -> str:
        """``image/object/class/text`` -> ``…/class/text`` for a narrow header."""
        parts = key.split("/")
        return key if len(parts) <= 2 else "…/" + "/".join(parts[-2:])
