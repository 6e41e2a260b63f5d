"""Several TFRecord files (a dataset's shards) seen as one sequence of records.

Records are numbered across shards in shard order. Shards are opened only
when needed (so opening 10,000 shards reads nothing), indexed in the
background (with :meth:`ShardSet.index_iter`, each shard's index coming from
the cache when it has one), and at most ``max_open`` of them hold an open
file at any time: the least recently used are released (their index stays).

Indexing goes in shard order unless someone asks for a shard first
(:meth:`ShardSet.prioritize`, e.g. the shard a person clicked). A shard
indexed out of order joins the numbering at its place, so the numbers of
the records after it grow: numbers are final once every shard before is
indexed. A shard joins the numbering when it is *published*: at once by
default, or, with ``index_iter(publish=False)``, when the consumer calls
:meth:`ShardSet.publish` (the GUI does, on its own thread, so the numbers a
view shows never change between two of its repaints).
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from codec.errors import FileAccessError, RecordIndexError, TFRecordError, UsageError
from codec.format.framing import Compression, Problem, RecordInfo, RecordStatus
from codec.format.names import shard_pattern
from codec.format.problem_text import TFRECORD
from codec.index.record_index import RecordIndex
from codec.index.scan import IndexProgress
from codec.index.small_files import SMALL_BYTES
from codec.sources.indexed_files import walked_file
from codec.sources.pinned import PinnedRecord
from codec.sources.protocol import RecordData
from codec.sources.record_file import RecordFile, open_record_file
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.listing import expand_entries

if TYPE_CHECKING:
    from codec.format.array_record import ArrayRecordLayout

MAX_OPEN = 64


@dataclass
class Shard:
    path: str
    size: int
    file: RecordFile | None = None
    count: int | None = None  # records, once indexed
    error: str | None = None  # why the shard could not be read
    info: dict | None = None  # a remote shard's listing entry (size, ETag...): opened without asking again


def _is_url(path: str) -> bool:
    if "://" not in path:  # codec.storage.remote is not imported for local paths
        return False
    from codec.storage.remote import is_url

    return is_url(path)


class _SetIndex:
    """The per-record view the codec's passes use (``status`` etc.) across shards."""

    def __init__(self, owner: ShardSet) -> None:
        self._owner = owner

    def __len__(self) -> int:
        return len(self._owner)

    def status(self, i: int) -> RecordStatus:
        index, j = self._owner.locate_index(i)
        return index.status(j)

    def set_status(self, i: int, status: RecordStatus) -> None:
        index, j = self._owner.locate_index(i)
        index.set_status(j, status)

    def offset(self, i: int) -> int:
        index, j = self._owner.locate_index(i)
        return index.offset(j)

    def statuses(self) -> np.ndarray:
        """Every numbered record's status (uint8), in the set's order."""
        owner = self._owner
        parts = [owner.shard_index(k).statuses()[:int(owner._counts[k])] for k in owner.numbered_shards()]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)


class ShardRecord(PinnedRecord):
    """Record ``row`` of a set, read from its shard: a hex view shows the shard's real offsets."""

    def __init__(self, shard: RecordFile, row: int, local: int, payload=None, labels=None) -> None:
        super().__init__(shard, row, local, None)
        self.payload, self.labels = payload, labels  # the set's: its shards decode alike
        self.note = (f"record {local:,} of {os.path.basename(shard.path)}, "
                     f"at offset {shard.index.offset(local):,}")


class ShardSet:
    """Shards as one record sequence: a :class:`codec.sources.protocol.RecordSource` like a
    :class:`TFRecordFile`, for reading, verifying, filtering, statistics and export.
    Its shards finish indexing in any order; :meth:`publish` numbers their records."""

    note = None
    unsaved = False
    modified = False
    following = False  # (only a single file is followed as it is written)
    statuses_stored = True
    mtime_ns = None  # several files
    identity = None  # each shard has its own
    payload = None  # how its records decode (codec.decode.payloads); None: by the kind rule
    labels = None  # class names of label ids (codec.datasets.label_maps.LabelNames), when known

    def __init__(self, paths: Sequence[str], *, check_crc: bool = True, use_cache: bool = True,
                 max_open: int = MAX_OPEN, name: str | None = None,
                 infos: Mapping[str, dict] | None = None) -> None:
        """``infos``: listing entries of remote shards by URL (see :func:`codec.storage.remote_list.expand_remote`);
        a URL without one is asked for its size now (one request)."""
        if not paths:
            raise UsageError("a shard set needs at least one file")
        self.check_crc = check_crc
        self.use_cache = use_cache
        self.max_open = max(1, max_open)
        self.shards: list[Shard] = []
        infos = infos or {}
        for p in paths:
            p = os.fspath(p)
            info = infos.get(p)
            if info is None and _is_url(p):
                from codec.storage.remote_list import remote_info

                info = remote_info(p)
            if info is not None:
                self.shards.append(Shard(p, int(info.get("size") or 0), info=info))
                continue
            try:
                size = os.path.getsize(p)
            except OSError as exc:
                raise FileAccessError(f"cannot read {p}: {exc.strerror or exc}") from None
            self.shards.append(Shard(p, size))
        self.path = name or (shard_pattern(self.shards[0].path) if len(self.shards) > 1 else self.shards[0].path)
        self.file_size = sum(s.size for s in self.shards)
        self.index = _SetIndex(self)
        # Numbering: records of each published shard (0 until then) and their running sums.
        self._counts = np.zeros(len(self.shards), dtype=np.int64)
        self._starts_array = np.zeros(len(self.shards) + 1, dtype=np.int64)
        self._starts_stale = False
        self._total = 0  # records numbered
        self._prefix = self._prefix_records = 0  # shards at the front all numbered, and their records
        self._numbered = np.zeros(len(self.shards), dtype=bool)
        self._numbered_count = 0
        self._finished: list[int] = []  # shards indexed, not yet published
        self._wanted: list[int] = []  # shards asked for first (the last asked, first)
        self.insertions: list[tuple[int, int]] = []  # (first record, count) of each shard as it was published
        self.current: int | None = None  # the shard being indexed
        self._in_order = 0  # every shard before this one is indexed
        self._files: list[RecordFile] = []  # every shard file made so far (open or released)
        self._version = 0  # grows when numbering or a shard's problems may have changed in place
        self._problems_cache: tuple[tuple[int, int], list[Problem]] | None = None
        self._open: OrderedDict[int, RecordFile] = OrderedDict()
        self._lock = threading.RLock()
        self.indexed = False
        self.verified = False

    @classmethod
    def from_args(cls, args: Sequence[str], **kwargs) -> ShardSet:
        """Files, folders, globs and URLs of them (see :func:`codec.storage.listing.expand_entries`) as one set."""
        entries, notes = expand_entries(list(args))
        if not entries:
            raise UsageError("; ".join(notes) or "no TFRecord files to open")
        name = kwargs.pop("name", None) or (args[0] if len(args) == 1 else None)
        infos = {path: info for path, info in entries if info is not None}
        return cls([path for path, _ in entries], name=name, infos=infos, **kwargs)

    # -- shards -------------------------------------------------------------
    def __len__(self) -> int:
        return self._total

    @property
    def indexed_shards(self) -> int:
        """How many shards are indexed and numbered."""
        return self._numbered_count

    def is_numbered(self, k: int) -> bool:
        """True once shard ``k``'s records are part of the set's numbering."""
        return bool(self._numbered[k])

    def numbered_shards(self) -> list[int]:
        """The shards whose records are numbered, in shard order."""
        return np.flatnonzero(self._numbered).tolist()

    def prioritize(self, k: int) -> None:
        """Index shard ``k`` next (if it is not indexed yet); safe from any thread."""
        with self._lock:
            if not self._numbered[k] and k not in self._finished:
                if k in self._wanted:
                    self._wanted.remove(k)
                self._wanted.append(k)

    def publish(self) -> list[tuple[int, int]]:
        """Number the shards indexed since the last call: their (first record, count), in the
        order they were indexed, each with the place it takes at its turn.

        ``index_iter()`` publishes by itself unless told not to. Publishing costs the shards
        published, not the whole set: the running sums are rebuilt when next read (a set of
        100,000 shards published one at a time would otherwise sum them 100,000 times).
        """
        with self._lock:
            done, self._finished = self._finished, []
            if not done:
                return []
            self._starts_stale = True  # first: a reader seeing the new total waits here for the new sums
            counts, numbered = self._counts, self._numbered
            added = []
            for k in done:
                self._advance_prefix(k)
                start = self._prefix_records  # shards not numbered count 0 records
                if self._prefix < k:
                    start += int(counts[self._prefix:k].sum())
                count = self.shards[k].count or 0
                counts[k] = count
                numbered[k] = True
                self._total += count
                if count:
                    added.append((start, count))
            self._advance_prefix(len(self.shards))
            self._numbered_count += len(done)
            self._version += 1
            self.insertions.extend(added)
            if self._numbered_count == len(self.shards):
                self.indexed = True
            return added

    def _advance_prefix(self, limit: int) -> None:
        """Move past the numbered shards at the front of the set (up to ``limit``), summing their records."""
        numbered, counts = self._numbered, self._counts
        while self._prefix < min(limit, len(numbered)) and numbered[self._prefix]:
            self._prefix_records += int(counts[self._prefix])
            self._prefix += 1

    @property
    def _starts(self) -> np.ndarray:
        """Each shard's first record number (and the total at the end), rebuilt after a publish."""
        if self._starts_stale:
            with self._lock:
                if self._starts_stale:
                    starts = np.zeros(len(self.shards) + 1, dtype=np.int64)
                    np.cumsum(self._counts, out=starts[1:])
                    self._starts_array = starts  # replaced whole: readers on other threads see old or new
                    self._starts_stale = False
        return self._starts_array

    def _next_shard(self) -> int | None:
        """The shard to index next: the last one asked for, else the first waiting."""
        with self._lock:
            while self._wanted:
                k = self._wanted.pop()
                if self.shards[k].count is None:
                    return k
            while self._in_order < len(self.shards) and self.shards[self._in_order].count is not None:
                self._in_order += 1  # shards before it are all indexed: no need to look there again
            return self._in_order if self._in_order < len(self.shards) else None

    @property
    def compression(self) -> Compression:
        """The first shard's compression (shards may differ; each is read its own way)."""
        f = self._file(0)
        return f.compression if f is not None else Compression.NONE

    def shard_file(self, k: int) -> RecordFile:
        f = self._file(k)
        if f is None:
            raise FileAccessError(self.shards[k].error or f"cannot open {self.shards[k].path}")
        return f

    def _file(self, k: int) -> RecordFile | None:
        """The shard's TFRecordFile, opened on demand; the LRU ones beyond max_open released."""
        shard = self.shards[k]
        with self._lock:
            if shard.error is not None:
                return None
            if k not in self._open:
                self._make_room(self.max_open - 1)  # before opening, so the count never passes max_open
            if shard.file is None:
                try:
                    extra: dict[str, Any] = {} if shard.info is None else {"info": shard.info}
                    shard.file = open_record_file(shard.path, check_crc=self.check_crc, use_cache=self.use_cache,
                                                  **extra)
                    self._files.append(shard.file)
                except TFRecordError as exc:
                    shard.error = str(exc)
                    return None
            else:
                shard.file.byte_source.acquire()
            self._open[k] = shard.file
            self._open.move_to_end(k)
            return shard.file

    def _make_room(self, keep: int) -> None:
        """Release least recently used files until at most ``keep`` are open; a file a
        pass is still using refuses and stays counted, so the next one goes instead."""
        for old, f in list(self._open.items()):
            if len(self._open) <= keep:
                break
            if f.release():
                del self._open[old]

    @property
    def bytes_fetched(self) -> int | None:
        """Bytes read from remote storage by all shards so far (a released shard keeps its
        count); None for a set of local files."""
        remote = [s.file.remote for s in self.shards if s.file is not None and s.file.remote is not None]
        if not remote and not any(_is_url(s.path) for s in self.shards[:1]):
            return None
        return sum(r.bytes_fetched for r in remote)

    @property
    def open_files(self) -> int:
        return sum(1 for s in self.shards if s.file is not None and s.file.is_open)

    def _split(self, i: int) -> tuple[int, int]:
        """(shard, record number inside it) of record ``i`` of the set."""
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise RecordIndexError(f"record {i} out of range: {self.path} has {n} records indexed")
        starts = self._starts
        k = int(np.searchsorted(starts, j, side="right")) - 1  # shards with no records share a start
        return k, j - int(starts[k])

    def locate(self, i: int) -> tuple[RecordFile, int]:
        """(shard file, record number inside it) of record ``i`` of the set, the shard opened."""
        k, j = self._split(i)
        return self.shard_file(k), j

    def locate_index(self, i: int) -> tuple[RecordIndex, int]:
        """(shard's record index, record number inside it) of record ``i``: no file opened."""
        k, j = self._split(i)
        return self.shard_index(k), j

    def shard_index(self, k: int) -> RecordIndex:
        """Shard ``k``'s record index (the shard is numbered: its file was opened and indexed)."""
        f = self.shards[k].file
        if f is None:
            raise RecordIndexError(f"shard {k} of {self.path} is not indexed")
        return f.index

    def record_start(self, k: int) -> int:
        """The set's record number of shard ``k``'s first record (shard must be numbered)."""
        return int(self._starts[k])

    def shard_of(self, i: int) -> int:
        return self._split(i)[0]

    def location(self, i: int) -> tuple[str, int]:
        """(shard file, offset in it) of record ``i``."""
        index, j = self.locate_index(i)
        return self.shards[self.shard_of(i)].path, index.offset(j)

    def record_before(self, problem: Problem) -> int:
        """The last record starting at or before ``problem`` in the problem's own shard (-1 if none)."""
        k = next((k for k, s in enumerate(self.shards) if s.path == problem.path), len(self.shards))
        if k >= len(self.shards) or not self.is_numbered(k):
            return -1
        return self.record_start(k) + self.shard_file(k).find_record(problem.offset)

    # -- facts of a record source (codec.sources.protocol.RecordSource) ----------
    is_set = True
    numbered_out_of_order = True  # a shard indexed early joins in the middle (publish)

    @property
    def is_remote(self) -> bool:
        return any(_is_url(s.path) for s in self.shards)

    @property
    def files(self) -> list[str]:
        return [s.path for s in self.shards]

    def file_row(self, k: int, j: int) -> int | None:
        """The set's row of record ``j`` of shard ``k``; None until the shard is numbered."""
        if not self.is_numbered(k) or not 0 <= j < (self.shards[k].count or 0):
            return None
        return self.record_start(k) + j

    def is_edited(self, i: int) -> bool:
        return False  # (a set is read-only)

    @property
    def complete_records(self) -> int:
        return len(self)  # (only a single file is followed as it is written)

    def _first_opened(self) -> RecordFile | None:
        """The first shard's file if the set opened it (asking for it otherwise is I/O)."""
        return self.shards[0].file if self.shards else None

    @property
    def container(self) -> str:
        first = self._first_opened()
        return first.container if first is not None else TFRECORD

    def info_lines(self) -> list[str]:
        first = self._first_opened()
        return first.info_lines() if first is not None else []

    @property
    def layout(self) -> ArrayRecordLayout | None:
        first = self._first_opened()
        return first.layout if first is not None else None

    @property
    def hashes_checked(self) -> bool:
        first = self._first_opened()
        return first is not None and first.hashes_checked

    def group_size_warning(self) -> str | None:
        first = self._first_opened()
        return first.group_size_warning() if first is not None else None

    def pinned(self, i: int) -> ShardRecord:
        """Record ``i`` for a detail view, read from its shard."""
        shard, local = self.locate(i)
        return ShardRecord(shard, i, local, self.payload, self.labels)

    # -- passes ---------------------------------------------------------------
    def resume_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]:
        """Go on with a stopped index pass: the shards indexed already are not read again."""
        return self.index_iter(verify=verify)

    def index_iter(self, *, verify: bool = False, publish: bool = True) -> Iterator[IndexProgress]:
        """Index the shards, in order except those :meth:`prioritize` asks for first.

        Each shard's records join the numbering when it is done (or, with
        ``publish=False``, when the caller calls :meth:`publish`).
        """
        done_bytes = sum(s.size for s in self.shards if s.count is not None)
        records = sum(s.count for s in self.shards if s.count)
        problems = self.problem_count()
        try:
            while (k := self._next_shard()) is not None:
                shard = self.shards[k]
                self.current = k
                with self._indexing(k, verify) as f:
                    if f is not None:
                        before = len(f.problems)
                        for p in f.index_iter(verify=verify):
                            yield IndexProgress(records + p.records, done_bytes + p.position, self.file_size,
                                                problems + p.problems)
                        problems += len(f.problems) - before
                    with self._lock:
                        shard.count = len(f) if f is not None else 0
                        self._finished.append(k)
                        self._version += 1  # its problems were sorted and merged in place
                if publish:
                    self.publish()
                records += shard.count
                done_bytes += shard.size
                yield IndexProgress(records, done_bytes, self.file_size, problems)
        finally:
            self.current = None
        if publish:
            self.publish()
        self.verified = verify or self.verified
        yield IndexProgress(records, self.file_size, self.file_size, problems, True)

    def build_index(self, *, verify: bool = False) -> ShardSet:
        for _ in self.index_iter(verify=verify):
            pass
        return self

    def verify_iter(self, *, publish: bool = True, keep_rows: bool = True) -> Iterator[IndexProgress]:
        """Check every record's data CRC (indexing first what is not indexed yet). The set's
        numbering always stays (``keep_rows`` is :meth:`TFRecordFile.verify_iter`'s, for callers of either)."""
        if any(shard.count is None for shard in self.shards):
            yield from self.index_iter(verify=True, publish=publish)
            return
        base = done = 0
        problems = self.problem_count()
        for k, shard in enumerate(self.shards):
            with self.using(k) as f:
                if f is not None:
                    before = len(f.problems)
                    for p in f.verify_iter(keep_rows=True):  # the set numbered the shard's records
                        yield IndexProgress(done + p.records, base + p.position, self.file_size,
                                            problems + len(f.problems) - before)
                    problems += len(f.problems) - before
            done += shard.count or 0
            base += shard.size
            self._version += 1
        self.verified = True
        yield IndexProgress(done, self.file_size, self.file_size, problems, True)

    def verify(self) -> list[Problem]:
        for _ in self.verify_iter():
            pass
        return self.problems

    # -- what the passes and views read -----------------------------------------
    def problem_count(self) -> int:
        """How many problems the shards have (without building the list)."""
        return sum([len(f.problems) for f in self._files])

    @property
    def unusable(self) -> list[tuple[str, str]]:
        """(path, reason) of shards that could not be read at all (not a TFRecord, unreadable)."""
        return [(s.path, s.error) for s in self.shards if s.error is not None]

    @property
    def problems(self) -> list[Problem]:
        """Every shard's problems, with record numbers of the set (None until the shard is numbered)
        and the shard's path. Built again only when something changed: the GUI asks on every
        progress step, and a set can have 10,000 shards. The same list comes back while
        nothing changed: do not modify it."""
        key = (self._version, self.problem_count())
        cached = self._problems_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        out = []
        starts, numbered = self._starts, self._numbered
        for k, s in enumerate(self.shards):
            f = s.file
            if f is None or not f.problems:
                continue
            base = int(starts[k]) if numbered[k] else None
            for p in f.problems:
                index = p.index + base if (p.index is not None and base is not None) else None
                out.append(replace(p, index=index, path=s.path))
        self._problems_cache = (key, out)
        return out

    @contextmanager
    def using(self, k: int) -> Iterator[RecordFile | None]:
        """Shard ``k``'s file (None if unusable), pinned open until the block ends, so
        another thread opening shards cannot release it half-way (it would reopen
        outside the count of open files)."""
        with self._lock:
            f = self._file(k)
            pin = f.holding() if f is not None else None
            if pin is not None:
                pin.__enter__()
        try:
            yield f
        finally:
            if pin is not None:
                pin.__exit__(None, None, None)

    @contextmanager
    def _indexing(self, k: int, verify: bool) -> Iterator[RecordFile | None]:
        """Shard ``k``'s file for its index pass: a small plain local shard read whole and
        indexed at once (:mod:`codec.index.small_files`; no file left open), else :meth:`using`."""
        walked = self._walked(k, verify)
        if walked is not None:
            yield walked
            return
        with self.using(k) as f:
            yield f

    def _walked(self, k: int, verify: bool) -> TFRecordFile | None:
        shard = self.shards[k]
        if shard.file is not None or shard.info is not None or shard.size > SMALL_BYTES:
            return None
        f = walked_file(shard.path, check_crc=self.check_crc, use_cache=self.use_cache, verify=verify)
        if f is None:
            return None
        with self._lock:
            if shard.file is None:
                shard.file = f
                self._files.append(f)
            return shard.file

    @contextmanager
    def _located(self, i: int) -> Iterator[tuple[RecordFile, int]]:
        """:meth:`locate` with the shard pinned open while the block runs."""
        k, j = self._split(i)
        with self.using(k) as f:
            if f is None:
                raise FileAccessError(self.shards[k].error or f"cannot open {self.shards[k].path}")
            yield f, j

    def read(self, i: int) -> RecordData:
        with self._located(i) as (f, j):
            rec = f.read(j)
        return RecordData(RecordInfo(i, rec.info.offset, rec.info.length, rec.info.status), rec.data,
                          rec.stored_crc, rec.computed_crc)

    def record_info(self, i: int) -> RecordInfo:
        with self._located(i) as (f, j):
            info = f.record_info(j)
        return RecordInfo(i, info.offset, info.length, info.status)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(len(self)))]
        with self._located(key) as (f, j):
            return f[j]

    def __iter__(self) -> Iterator[bytes]:
        for i in range(len(self)):
            yield self[i]

    def intact(self) -> Iterator[tuple[int, bytes]]:
        for k in self.numbered_shards():
            with self.using(k) as f:
                if f is None:
                    continue
                base = self.record_start(k)
                for j, data in f.intact():
                    yield base + j, data

    def close(self) -> None:
        with self._lock:
            for s in self.shards:
                if s.file is not None:
                    s.file.close()
            self._open.clear()

    def __enter__(self) -> ShardSet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ShardSet {self.path!r} shards={len(self.shards)} records={len(self)}>"


__all__ = ["ShardSet", "Shard", "MAX_OPEN"]
