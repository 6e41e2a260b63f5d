"""The verify pass over an indexed file: every data CRC (and, for a plain file, every length CRC).

A :class:`Verifier` is made for one pass over a :class:`codec.sources.tfrecord_file.TFRecordFile`
and reads it through its public side only (:class:`Verifiable`): a plain
file's records are checked in windows of many records at once
(:func:`codec.format.header_search.verify_spans`), large records one by one,
and with ``fork_halves`` the second half by a forked child. A compressed file
is read record by record through its checkpoints.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ContextManager, Iterator, Protocol

import google_crc32c
import numpy as np

from codec.errors import FileChangedError
from codec.format.crc import mask, masked_crc
from codec.format.framing import (
    CRC,
    HEADER,
    HEADER_SIZE,
    LENGTH,
    OVERHEAD,
    Compression,
    Problem,
    ProblemKind,
    RecordStatus,
)
from codec.format.header_search import verify_spans
from codec.index.halves import SPLIT_BYTES
from codec.index.record_index import RecordIndex
from codec.index.scan import IndexProgress, Scanner, data_crc_problem
from codec.index.scan_sources import PlainSource
from codec.parallel.forked import beside

VERIFY_WINDOW = 16 << 20  # bytes of a plain file the verify pass reads at a time
LARGE_RECORD = 64 << 10  # the verify pass reads a record at least this large by itself
LARGE_RUN = 32 << 20  # bytes of large records the verify pass checks between two progress steps
CRC_PIECE = 16 << 20  # a record read by itself is checked in pieces of at most this size


if TYPE_CHECKING:
    from codec.sources.byte_sources import ByteSource
    from codec.sources.protocol import RecordData


class Verifiable(Protocol):
    """What the verify pass reads and sets of a file: a :class:`codec.sources.tfrecord_file.TFRecordFile`."""

    path: str
    compression: Compression
    index: RecordIndex
    problems: list[Problem]
    check_crc: bool
    indexed: bool
    verified: bool
    use_cache: bool
    fork_halves: bool
    byte_source: ByteSource

    @property
    def file_size(self) -> int: ...

    @property
    def data_end(self) -> int: ...

    def index_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]: ...

    def read(self, i: int) -> RecordData: ...

    def read_bytes(self, offset: int, size: int) -> bytes: ...

    def holding(self) -> ContextManager[Any]: ...

    def streaming(self) -> ContextManager[Any]: ...

    def save_index(self) -> None: ...

    def replace_index(self, index: RecordIndex, problems: list[Problem]) -> None: ...

    def add_problems(self, found: list[Problem]) -> None: ...


class Verifier:
    """One verify pass over ``f`` (see :meth:`run`)."""

    def __init__(self, f: Verifiable) -> None:
        self.f = f
        self._read_at = f.byte_source.read_at  # the (plain) file's bytes

    def run(self, every: int = 1 << 14, *, keep_rows: bool = False) -> Iterator[IndexProgress]:
        """Check every record's data CRC (indexing first if needed).

        After an index pass that did not verify: if a record failing its data
        CRC hides intact records in its span, the file is indexed again,
        verifying, and the new index replaces the old one at the end (unless
        ``keep_rows``: a document's rows or a shard set's numbering stay).
        """
        if not self.f.indexed:
            yield from self.f.index_iter(verify=True)
            return
        self.f.problems = [p for p in self.f.problems if p.kind is not ProblemKind.DATA_CRC]
        check, self.f.check_crc = self.f.check_crc, True
        n = len(self.f.index)
        if self.f.compression is Compression.NONE and self.f.file_size:
            with self.f.holding(), self.f.streaming():  # (a remote file: chunks fetched ahead)
                yield from self._verify_plain(n, every)
                if not keep_rows and self._hidden_in_damage():
                    yield from self._index_again()
            n = 0  # done: skip the per-record loop below
        for i in range(n):
            status = self.f.index.status(i)
            if status in (RecordStatus.UNCHECKED, RecordStatus.OK, RecordStatus.DATA_CRC):
                self.f.index.set_status(i, RecordStatus.UNCHECKED)
                self.f.read(i)  # checks it again (it is unchecked now); records a data_crc problem if it fails
            if i % every == every - 1:
                yield IndexProgress(i + 1, self.f.index.offset(i), self.f.data_end, len(self.f.problems))
        if n and not keep_rows and self._hidden_in_damage():
            yield from self._index_again()
        self.f.check_crc = check
        self.f.verified = True
        if self.f.use_cache:
            self.f.save_index()
        yield IndexProgress(len(self.f.index), self.f.data_end, self.f.data_end, len(self.f.problems), True)

    def _hidden_in_damage(self) -> bool:
        """Does a record failing its data CRC hide an intact record inside the span its header
        claims? (Bytes deleted or inserted in it can put its claimed end on the next header
        exactly: an index pass that does not verify steps over it by that header.)"""
        bad = np.flatnonzero(self.f.index.statuses() == RecordStatus.DATA_CRC)
        if not bad.shape[0]:
            return False
        source = self._records_source()
        scanner = Scanner(source, RecordIndex(), [], source.size)
        for i in bad.tolist():
            start = self.f.index.offset(i)
            (length,) = LENGTH.unpack(source.read(start, LENGTH.size))
            if scanner.intact_record_in(start + 1, min(start + OVERHEAD + length, source.size)):
                return True
        return False

    def _records_source(self) -> PlainSource:
        """The records' bytes (a compressed file's through its checkpoints) for a scan by random reads."""
        if self.f.compression is Compression.NONE:
            return PlainSource(self._read_at, self.f.file_size)
        return PlainSource(self.f.read_bytes, self.f.data_end)

    def _index_again(self) -> Iterator[IndexProgress]:
        """A verifying index pass into a new index, which replaces the old one when it is done.
        The compressed stream's own damage stays as it was found (it names where the stream broke)."""
        index: RecordIndex = RecordIndex()
        problems: list[Problem] = []
        source = self._records_source()
        yield from Scanner(source, index, problems, self.f.file_size, verify=True).run()
        broken = [p for p in self.f.problems if p.compressed_offset is not None]
        problems = [p for p in problems if not any(b.offset == p.offset for b in broken)] + broken
        self.f.replace_index(index, problems)

    def _verify_plain(self, n: int, every: int) -> Iterator[IndexProgress]:
        """Batch verification of a plain file (records whose data CRC is checkable).

        Small records: windows of up to VERIFY_WINDOW bytes (and ``every``
        records), checked at once by :func:`verify_spans`. Large ones: each
        record's data read by itself, so that it is copied once, not twice.
        The length CRCs are checked too (a cached index was made without
        reading them again).
        """
        offsets = self.f.index.offsets().astype(np.int64)
        statuses = self.f.index.statuses()
        # No checkable record reaches past the start of the next one (or the end of the file).
        bounds = np.append(offsets[1:], np.int64(self.f.file_size))
        checkable = np.flatnonzero(statuses <= RecordStatus.DATA_CRC)
        checkable = checkable[statuses[checkable] != RecordStatus.LENGTH_CRC]
        starts, ends = offsets[checkable], bounds[checkable]
        is_large = ends - starts >= LARGE_RECORD
        large = np.flatnonzero(is_large)
        found: list[Problem] = []

        def windows(a: int, m: int) -> Iterator[IndexProgress]:
            """Check the records checkable[a:m], setting their statuses and adding to ``found``."""
            while a < m:
                k = int(np.searchsorted(large, a))
                next_large = int(large[k]) if k < large.shape[0] else m
                if next_large > a:  # small records up to the next large one
                    b = min(a + every, next_large, int(np.searchsorted(ends, starts[a] + VERIFY_WINDOW, side="right")))
                    b = min(max(b, a + 1), m)
                    idx = checkable[a:b]
                    window = int(starts[a]), int(ends[b - 1])
                    ok, stored, computed, length_ok = self._verify_window(idx, offsets, *window)
                else:  # a run of large records, as many as a window holds
                    b = a + 1
                    while b < m and is_large[b] and b - a < every and ends[b] - starts[a] <= LARGE_RUN:
                        b += 1
                    idx = checkable[a:b]
                    ok, stored, computed, length_ok = self._verify_each(idx, offsets)
                status = np.where(ok, np.uint8(RecordStatus.OK), np.uint8(RecordStatus.DATA_CRC))
                if not length_ok.all():
                    status[ok & ~length_ok] = RecordStatus.LENGTH_CRC
                    for j in np.flatnonzero(~length_ok).tolist():
                        found.append(self._length_problem(int(idx[j]), int(offsets[idx[j]]), bool(ok[j])))
                self.f.index.set_statuses(idx, status)
                for j in np.flatnonzero(~ok).tolist():
                    i = int(idx[j])
                    found.append(data_crc_problem(i, int(offsets[i]), int(stored[j]), int(computed[j])))
                last = int(idx[-1])
                yield IndexProgress(last + 1, int(offsets[last]), self.f.file_size, len(self.f.problems) + len(found))
                a = b

        m = checkable.shape[0]
        half = m // 2 if self.f.fork_halves and self.f.file_size >= SPLIT_BYTES else m
        child = beside(_second_half, windows, half, m, self.f.index, checkable, found) if half < m else None
        try:
            yield from windows(0, half if child is not None else m)
        except BaseException:
            if child is not None:
                child.cancel()
            raise
        if child is not None:
            done, rest = child.result()
            if done:
                self.f.index.set_statuses(checkable[half:], rest[0])
                found += rest[1]
            else:  # the child failed (the file changed?): check its half here, which says why
                yield from windows(half, m)
        self.f.add_problems(found)

    def _length_problem(self, i: int, offset: int, data_ok: bool) -> Problem:
        head = self._read_at(offset, HEADER_SIZE)
        n, stored = HEADER.unpack(head)
        computed = masked_crc(head[:8])
        outcome = f"the data CRC proves the length ({n}): recovered" if data_ok else "the data CRC fails too"
        return Problem(i, offset, ProblemKind.LENGTH_CRC,
                       f"length CRC stored {stored:#010x}, computed {computed:#010x}; {outcome}",
                       size=HEADER_SIZE, expected=stored, found=computed)

    def _verify_window(self, idx: np.ndarray, offsets: np.ndarray, start: int, stop: int):
        """verify_spans over the records ``idx``, all inside the file's bytes [start, stop)."""
        buf = self._read_at(start, stop - start)
        try:
            return verify_spans(buf, offsets[idx] - start, length_crcs=True)
        except IndexError:  # a length reaching past the window: the file no longer matches its index
            return self._verify_each(idx, offsets)

    def _verify_each(self, idx: np.ndarray, offsets: np.ndarray):
        """(ok, stored, computed, length ok) arrays for the records ``idx``, each read by itself."""
        stored = np.zeros(idx.shape[0], dtype=np.uint32)
        computed = np.zeros(idx.shape[0], dtype=np.uint32)
        length_ok = np.ones(idx.shape[0], dtype=bool)
        head, at = b"", -1  # the header read after the previous record, and where it starts
        for j, i in enumerate(idx.tolist()):
            offset = int(offsets[i])
            stored[j], computed[j], length_ok[j], head, at = self._check_one(i, offset, head if at == offset else b"")
        return stored == computed, stored, computed, length_ok

    def _check_one(self, i: int, offset: int, head: bytes = b"") -> tuple[int, int, bool, bytes, int]:
        """(stored, computed) data CRC of one record, its data read in pieces of at most CRC_PIECE
        (each straight into the bytes its CRC is computed over), whether its length CRC holds,
        and the header after it with its offset (its CRC and that header are read at once).
        ``head``: this record's header, if already read."""
        if len(head) < HEADER_SIZE:
            head = self._read_at(offset, HEADER_SIZE)
        length, length_crc = HEADER.unpack(head.ljust(HEADER_SIZE, b"\0"))
        start = offset + HEADER_SIZE
        if start + length + 4 > self.f.file_size:
            raise FileChangedError(f"the file changed while reading: {self.f.path}: "
                                   f"record {i} at offset {offset} no longer fits in it")
        if length <= CRC_PIECE:
            crc = google_crc32c.value(self._read_at(start, length))
        else:
            crc = 0
            for k in range(0, length, CRC_PIECE):
                crc = google_crc32c.extend(crc, self._read_at(start + k, min(CRC_PIECE, length - k)))
        tail = self._read_at(start + length, 4 + HEADER_SIZE)
        (stored,) = CRC.unpack_from(tail)
        return stored, mask(crc), masked_crc(head[:8]) == length_crc, tail[4:], start + length + 4


def _second_half(windows, a: int, m: int, index: RecordIndex, checkable: np.ndarray, found: list) -> tuple:
    """A forked child's share of :meth:`TFRecordFile._verify_plain`: the statuses and problems it found."""
    for _ in windows(a, m):
        pass
    return index.statuses()[checkable[a:m]], found
