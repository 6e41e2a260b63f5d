"""An editable view of a TFRecord file: edits are an overlay, never a copy.

The record list is a piece table: a short list of pieces, each either a run
of the original file's records (by index) or a run of new records kept in an
append-only store. Replacing one record of a 10 GB file costs that record's
bytes and a few pieces, not a copy of the file. Every edit returns nothing and
changes the pieces; :meth:`snapshot`/:meth:`restore` give undo/redo for free,
because the store only grows and a snapshot is just the (small) piece list.
"""
from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np

from codec.errors import CorruptRecordError, FileChangedError, RecordIndexError, TargetChangedError, UsageError
from codec.format.crc import masked_crc
from codec.format.framing import CRC, HEADER, HEADER_SIZE, OVERHEAD, Compression, RecordInfo, RecordStatus
from codec.index.scan import IndexProgress
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.file_identity import FileIdentity, describe_change, identity_at
from codec.storage.writer import TFRecordWriter, same_file


@dataclass(frozen=True)
class Piece:
    """``stop - start`` records: original records [start, stop) or store items."""

    new: bool
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


KEPT_BYTES_MAX = 256 << 20  # records only the undo history still names, kept in memory across a save; past it, no history


@dataclass(frozen=True)
class _Cover:
    """Records (or store items) [start, stop) are now saved-file records from ``at`` (``saved``), or store items."""

    start: int
    stop: int
    saved: bool
    at: int


@dataclass(frozen=True)
class HistoryPlan:
    """How the snapshots of an undo history name the same records once a save has written the file
    (:meth:`Document.plan_history` before the save, :meth:`Document.translate` and
    :meth:`Document.rebase` after it)."""

    old: tuple[_Cover, ...]  # every source record the history names: where it is now (disjoint, sorted)
    store: tuple[_Cover, ...]  # store items the save wrote: their records in the saved file
    kept: tuple[bytes, ...]  # source records the history names but the save left out: stored from ``base``
    base: int  # the store's length when planned
    count: int  # the records the saved file holds


@dataclass(frozen=True)
class SaveReport:
    path: str
    records: int
    copied: int  # untouched records copied verbatim
    written: int  # new or changed records
    dropped_truncated: int  # truncated records that cannot be written without breaking the file


class Document:
    """The records of ``source`` as the user has edited them."""

    def __init__(self, source: TFRecordFile) -> None:
        self.source = source
        # What the source's path held when it was opened, or when this document last saved over it:
        # a save over the path refuses to replace anything else (a FileIdentity, a URL's version).
        self.expected: FileIdentity | dict | None = source.identity
        if source.remote is not None:
            self.expected = source.remote.version
        self._store: list[bytes] = []
        self._pieces: list[Piece] = []
        self._starts: list[int] = []
        self._length = 0
        self.reset()

    # -- state --------------------------------------------------------------
    def reset(self) -> None:
        """Forget every edit: the document is the source's indexed records."""
        self._store = []
        self._set([Piece(False, 0, len(self.source))] if len(self.source) else [])

    def _set(self, pieces: list[Piece]) -> None:
        merged = _merged_pieces(pieces)
        self._pieces = merged
        self._starts = []
        total = 0
        for p in merged:
            self._starts.append(total)
            total += len(p)
        self._length = total

    def snapshot(self) -> tuple[Piece, ...]:
        return tuple(self._pieces)

    # -- an undo history across a save --------------------------------------------
    def plan_history(self, snapshots: Iterable[Sequence[Piece]]) -> HistoryPlan | None:
        """What keeps ``snapshots`` (an undo history) valid once the document is saved as it is now;
        None when it cannot be kept (a truncated record is dropped by the save, a record the
        history needs is damaged, or those records pass KEPT_BYTES_MAX).

        Call it before the save: the records a save leaves out (deleted ones that undo brings
        back) are read now, while the file that holds them is still there.
        """
        statuses = self.source.index.statuses() if len(self.source) else np.zeros(0, dtype=np.uint8)
        old: list[_Cover] = []
        store: list[_Cover] = []
        at = 0
        for p in self._pieces:
            if p.new:
                store.append(_Cover(p.start, p.stop, True, at))
            elif bool(np.any(statuses[p.start:p.stop] == RecordStatus.TRUNCATED)):
                return None  # the save drops it: the saved file is not the document record for record
            else:
                old.append(_Cover(p.start, p.stop, True, at))
            at += len(p)
        old, store = _disjoint(old), _disjoint(store)
        missing = _merged(gap for snap in snapshots for p in snap if not p.new
                          for gap in _gaps(p.start, p.stop, old))
        kept: list[bytes] = []
        size = 0
        for a, b in missing:
            old.append(_Cover(a, b, False, len(self._store) + len(kept)))
            for j in range(a, b):
                rec = self.source.read(j)
                size += len(rec.data)
                if not rec.info.status.data_intact or size > KEPT_BYTES_MAX:
                    return None
                kept.append(rec.data)
        return HistoryPlan(tuple(sorted(old, key=lambda c: c.start)), tuple(store), tuple(kept), len(self._store), at)

    @staticmethod
    def translate(snapshot: Sequence[Piece], plan: HistoryPlan) -> tuple[Piece, ...]:
        """``snapshot``, taken before the save ``plan`` was made for, as pieces over the saved file."""
        pieces: list[Piece] = []
        for p in snapshot:
            if p.new:
                pieces += _mapped(p.start, p.stop, plan.store, lambda a, b: Piece(True, a, b))
            else:
                pieces += _mapped(p.start, p.stop, plan.old, _unplanned)
        return tuple(_merged_pieces(pieces))

    def rebase(self, source: TFRecordFile, plan: HistoryPlan) -> None:
        """Make the saved file (``source``, indexed) the document's source, keeping the store, so
        that snapshots translated with ``plan`` (:meth:`translate`) restore what they did; no edit is pending."""
        if len(source) != plan.count or len(self._store) != plan.base:
            raise UsageError(f"{source.path} holds {len(source):,} records, not the {plan.count:,} saved: "
                             "the undo history cannot follow it")
        self.source = source
        self.expected = source.remote.version if source.remote is not None else source.identity
        self._store.extend(plan.kept)
        self._set([Piece(False, 0, len(source))] if len(source) else [])

    def restore(self, snapshot: Sequence[Piece]) -> None:
        self._set(list(snapshot))

    @property
    def modified(self) -> bool:
        n = len(self.source)
        return self._pieces != ([Piece(False, 0, n)] if n else [])

    def __len__(self) -> int:
        return self._length

    # -- lookup -------------------------------------------------------------
    def _locate(self, i: int) -> tuple[Piece, int]:
        n = i + self._length if i < 0 else i
        if not 0 <= n < self._length:
            raise RecordIndexError(f"record {i} out of range: the document has {self._length} records")
        k = bisect.bisect_right(self._starts, n) - 1
        piece = self._pieces[k]
        return piece, piece.start + (n - self._starts[k])

    def origin(self, i: int) -> int | None:
        """The source record index behind record ``i``, or None for a new/changed one."""
        piece, j = self._locate(i)
        return None if piece.new else j

    def is_modified(self, i: int) -> bool:
        return self.origin(i) is None

    def data(self, i: int) -> bytes:
        piece, j = self._locate(i)
        return self._store[j] if piece.new else self.source.read(j).data

    def status(self, i: int) -> RecordStatus:
        piece, j = self._locate(i)
        return RecordStatus.OK if piece.new else self.source.index.status(j)

    def __iter__(self) -> Iterator[bytes]:
        for i in range(self._length):
            yield self.data(i)

    # -- edits --------------------------------------------------------------
    def _split(self, i: int) -> int:
        """Make ``i`` a piece boundary; return the index of the piece starting at i."""
        if i == self._length:
            return len(self._pieces)
        k = bisect.bisect_right(self._starts, i) - 1
        piece = self._pieces[k]
        cut = piece.start + (i - self._starts[k])
        if cut == piece.start:
            return k
        self._pieces[k:k + 1] = [Piece(piece.new, piece.start, cut), Piece(piece.new, cut, piece.stop)]
        self._starts.insert(k + 1, i)
        return k + 1

    def _take(self, a: int, b: int) -> list[Piece]:
        """The pieces covering records [a, b) (after splitting at both ends)."""
        ka = self._split(a)
        kb = self._split(b)
        return self._pieces[ka:kb]

    def _add(self, records: Iterable[bytes]) -> Piece:
        start = len(self._store)
        self._store.extend(bytes(r) for r in records)
        return Piece(True, start, len(self._store))

    def replace(self, i: int, data: bytes) -> None:
        self.replace_many({i: data})

    def replace_many(self, changes: dict[int, bytes]) -> None:
        """Replace several records at once (one step for undo)."""
        for i in sorted(changes):
            self._check(i)
        for i in sorted(changes):
            ka = self._split(i)
            self._split(i + 1)
            self._pieces[ka] = self._add([changes[i]])
        self._set(self._pieces)

    def insert(self, i: int, records: Sequence[bytes]) -> None:
        if not 0 <= i <= self._length:
            raise UsageError(f"cannot insert at {i}: the document has {self._length} records")
        k = self._split(i)
        self._pieces[k:k] = [self._add(records)]
        self._set(self._pieces)

    def delete(self, indices: Iterable[int]) -> None:
        for a, b in reversed(index_runs(indices)):
            self._check(a)
            self._check(b - 1)
            ka = self._split(a)
            kb = self._split(b)
            del self._pieces[ka:kb]
            self._set(self._pieces)

    def duplicate(self, indices: Iterable[int]) -> list[int]:
        """Insert a copy after each run of ``indices``; return the copies' new indices."""
        runs = index_runs(indices)
        placed: list[int] = []
        shift = 0
        for a, b in runs:
            a, b = a + shift, b + shift
            pieces = [Piece(p.new, p.start, p.stop) for p in self._take(a, b)]
            k = self._split(b)
            self._pieces[k:k] = pieces
            self._set(self._pieces)
            placed.extend(range(b, b + (b - a)))
            shift += b - a
        return placed

    def move(self, indices: Iterable[int], to: int) -> list[int]:
        """Move the records ``indices`` (in order) so the first lands at ``to`` among the rest.

        ``to`` counts positions in the document without the moved records.
        Returns the moved records' new indices.
        """
        chosen = sorted(set(indices))
        for i in chosen:
            self._check(i)
        moved: list[Piece] = []
        for a, b in index_runs(chosen):
            moved.extend(Piece(p.new, p.start, p.stop) for p in self._take(a, b))
        self.delete(chosen)
        if not 0 <= to <= self._length:
            raise UsageError(f"cannot move to {to}: {self._length} records remain")
        k = self._split(to)
        self._pieces[k:k] = moved
        self._set(self._pieces)
        return list(range(to, to + len(chosen)))

    def _check(self, i: int) -> None:
        if not 0 <= i < self._length:
            raise RecordIndexError(f"record {i} out of range: the document has {self._length} records")

    # -- saving -------------------------------------------------------------
    def save_iter(self, path: str | os.PathLike | None = None, compression: Compression | str | None = None,
                  result: list | None = None, *, overwrite_changed: bool = False) -> Iterator[IndexProgress]:
        """Write the document to ``path`` (default: over the source), atomically.

        Untouched records are copied as their original framed bytes (a record
        whose data CRC proved a damaged length gets a fresh header); truncated
        ones are dropped (written back they would break every record after
        them). The target is replaced only after everything was written,
        flushed and synced; on any failure it is left exactly as it was.
        ``result`` (a list), when given, receives the :class:`SaveReport`.
        ``compression`` None keeps the source's over the source, and follows
        the name (``.gz``, ``.zz``/``.zlib``) for another file. A symlink's
        target is replaced; a device or FIFO is written directly.

        Over the source's path, the file there must still be the one opened
        (or last saved by this document): one changed, replaced or deleted
        since raises :class:`TargetChangedError`, checked before writing and
        again just before the rename, unless ``overwrite_changed``. Records
        copied verbatim have their CRCs checked (unless the source was opened
        with ``check_crc=False``); one that fails stops the save with
        :class:`CorruptRecordError` (a record known damaged is copied as it is).
        """
        target = os.fspath(path) if path is not None else self.source.path
        over_source = path is None or self._names_source(target)
        if compression is not None:
            comp = Compression.parse(compression)
        elif over_source:
            comp = self.source.compression
        else:
            comp = Compression.for_name(target)
        check = self._check_source_path if over_source and not overwrite_changed else None
        if check is not None:
            check()
        copied = written = dropped = 0
        n = self._length
        with TFRecordWriter(target, comp, before_replace=check) as w:
            for k, piece in enumerate(self._pieces):
                base = self._starts[k]
                for j in range(piece.start, piece.stop):
                    if piece.new:
                        w.write(self._store[j])
                        written += 1
                    else:
                        info = self.source.record_info(j)
                        if info.status is RecordStatus.TRUNCATED:
                            dropped += 1
                            continue
                        if info.status is RecordStatus.LENGTH_CRC:  # data proven good: give it a fresh header
                            w.write(self._checked_data(j, info))
                            written += 1
                        else:
                            w.write_framed(self._checked_frame(j, info))
                            copied += 1
                    done = base + (j - piece.start) + 1
                    if done % 4096 == 0:
                        yield IndexProgress(done, done, n, 0)
        if over_source:
            self.expected = self._path_version()  # saved over it: this is the file to expect there now
        if result is not None:
            result.append(SaveReport(target, copied + written, copied, written, dropped))
        yield IndexProgress(n, n, n, 0, done=True)

    def save(self, path: str | os.PathLike | None = None, compression: Compression | str | None = None, *,
             overwrite_changed: bool = False) -> SaveReport:
        """:meth:`save_iter` to the end; the :class:`SaveReport`."""
        result: list[SaveReport] = []
        for _ in self.save_iter(path, compression, result, overwrite_changed=overwrite_changed):
            pass
        return result[0]

    # -- what a save replaces and copies ------------------------------------------
    def _names_source(self, target: str) -> bool:
        """Whether ``target`` is the source's path (also when the file there was deleted or replaced)."""
        source = self.source.path
        if same_file(target, source):
            return True
        if self.source.remote is not None or "://" in target:
            return target == source
        return os.path.realpath(target) == os.path.realpath(source)

    def _path_version(self) -> FileIdentity | dict | None:
        """What the source's path holds now: a local file's identity (None: nothing), a URL's version."""
        if self.source.remote is not None:
            return self.source.remote.current_version()
        return identity_at(self.source.path)

    def changed_on_disk(self) -> str | None:
        """Why a save over the source's path would be refused (one line), or None when it would not."""
        if self.expected is None:
            return None
        now = self._path_version()
        if isinstance(self.expected, dict):
            same = _same_version(self.expected, now)
            return None if same else f"{self.source.path} changed on the server since it was opened"
        return None if now == self.expected else describe_change(self.source.path, self.expected, now)

    def _check_source_path(self) -> None:
        """Raise TargetChangedError when the source's path no longer holds the file expected there."""
        why = self.changed_on_disk()
        if why is None:
            return
        change = "changed" if isinstance(self.expected, dict) else self.expected.change_to(self._path_version()).value
        raise TargetChangedError(f"{why}: not saved over it (save as another file, or overwrite it on purpose)",
                                 path=self.source.path, change=change)

    def _where(self, j: int, info: RecordInfo) -> str:
        return f"save stopped: {self.source.path}: record {j} at offset {info.offset}"

    def _checked_frame(self, j: int, info: RecordInfo) -> bytes:
        """Record ``j``'s framed bytes as the file holds them now, its CRCs checked: a file changed
        in place (or bit rot) must not be copied silently. A record known damaged keeps its data."""
        frame = self.source.read_bytes(info.offset, OVERHEAD + info.length)
        if not self.source.check_crc:
            return frame
        length, length_crc = HEADER.unpack_from(frame.ljust(HEADER_SIZE, b"\0"))
        if masked_crc(frame[:8]) != length_crc:
            raise CorruptRecordError(f"{self._where(j, info)}: its length CRC fails now (the file changed on disk "
                                     "since it was read, or is damaged); nothing was written",
                                     offset=info.offset, index=j)
        if len(frame) < OVERHEAD + info.length:
            raise FileChangedError(f"{self._where(j, info)}: it no longer fits in the file; nothing was written")
        if info.status is not RecordStatus.DATA_CRC:
            end = HEADER_SIZE + length
            self._check_data(j, info, frame[HEADER_SIZE:end], CRC.unpack_from(frame, end)[0])
        return frame

    def _checked_data(self, j: int, info: RecordInfo) -> bytes:
        """Record ``j``'s data (its length CRC is known bad), its data CRC checked."""
        rec = self.source.read(j)
        if self.source.check_crc:
            self._check_data(j, info, rec.data, rec.stored_crc)
        return rec.data

    def _check_data(self, j: int, info: RecordInfo, data: bytes, stored: int) -> None:
        computed = masked_crc(data)
        if computed != stored:
            raise CorruptRecordError(f"{self._where(j, info)}: data CRC stored {stored:#010x}, computed "
                                     f"{computed:#010x} (the file changed on disk since it was read, or is "
                                     "damaged: verifying it marks damaged records); nothing was written",
                                     offset=info.offset, index=j)


def _disjoint(covers: list[_Cover]) -> list[_Cover]:
    """``covers`` sorted, each record once (a duplicated run keeps its first place)."""
    out: list[_Cover] = []
    reached = 0
    for c in sorted(covers, key=lambda c: c.start):
        if c.stop <= reached:
            continue
        start = max(c.start, reached)
        out.append(_Cover(start, c.stop, c.saved, c.at + start - c.start))
        reached = c.stop
    return out


def _walk(start: int, stop: int, covers: Sequence[_Cover]) -> Iterator[tuple[int, int, _Cover | None]]:
    """[start, stop) cut along ``covers`` (disjoint, sorted): (a, b, the cover or None for a gap)."""
    k = max(bisect.bisect_right([c.start for c in covers], start) - 1, 0)
    pos = start
    while pos < stop:
        while k < len(covers) and covers[k].stop <= pos:
            k += 1
        if k < len(covers) and covers[k].start <= pos:
            end = min(stop, covers[k].stop)
            yield pos, end, covers[k]
        else:
            end = min(stop, covers[k].start) if k < len(covers) else stop
            yield pos, end, None
        pos = end


def _gaps(start: int, stop: int, covers: Sequence[_Cover]) -> list[tuple[int, int]]:
    return [(a, b) for a, b, c in _walk(start, stop, covers) if c is None]


def _merged(runs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _mapped(start: int, stop: int, covers: Sequence[_Cover], gap) -> list[Piece]:
    """Records [start, stop) as pieces of where ``covers`` put them; ``gap(a, b)`` for the rest."""
    return [gap(a, b) if c is None else Piece(not c.saved, c.at + a - c.start, c.at + b - c.start)
            for a, b, c in _walk(start, stop, covers)]


def _unplanned(a: int, b: int) -> Piece:
    raise UsageError(f"records {a}-{b - 1} are not in the history's plan")


def _merged_pieces(pieces: Iterable[Piece]) -> list[Piece]:
    """Adjacent runs of the same kind joined (as :meth:`Document._set` keeps them)."""
    merged: list[Piece] = []
    for p in pieces:
        if not len(p):
            continue
        if merged and merged[-1].new == p.new and merged[-1].stop == p.start:
            merged[-1] = Piece(p.new, merged[-1].start, p.stop)
        else:
            merged.append(p)
    return merged


def _same_version(a: dict, b: dict) -> bool:
    """Whether two of a remote object's versions (:func:`codec.storage.remote.version_of`) are one: every field
    both name agrees (a listing and a metadata request do not name the same ones)."""
    keys = [k for k in ("size", "generation", "etag", "version_id", "md5", "mtime")
            if a.get(k) is not None and b.get(k) is not None]
    return all(a[k] == b[k] for k in keys)


def sorted_unique(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The values of ``parts`` (int arrays) once each, in order; one sorted part comes back as it is.

    Not ``np.unique``: its hashing path took 7.6 s for the 10M rows of a Select All.
    """
    parts = [np.asarray(p, dtype=np.int64) for p in parts]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    if len(parts) == 1 and bool(np.all(parts[0][1:] > parts[0][:-1])):
        return parts[0]
    values = np.sort(np.concatenate(parts))
    keep = np.ones(values.shape[0], dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def index_runs(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated indices as half-open runs [a, b) (numpy: a Select All is 10M indices)."""
    values = np.fromiter(indices, dtype=np.int64) if not isinstance(indices, np.ndarray) else indices
    if not values.shape[0]:
        return []
    values = np.sort(values)
    breaks = np.flatnonzero(np.diff(values) > 1)  # a gap after these positions (equal values stay in a run)
    starts = np.concatenate(([values[0]], values[breaks + 1]))
    stops = np.concatenate((values[breaks], [values[-1]])) + 1
    return list(zip(starts.tolist(), stops.tolist()))


__all__ = ["Document", "HistoryPlan", "Piece", "SaveReport", "index_runs", "sorted_unique"]
