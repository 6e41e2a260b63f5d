"""An ArrayRecord file as a record source.

:class:`ArrayRecordFile` reads the postscript and footer (:mod:`codec.format.array_record`) as its
index pass, then reads record N as one read of its chunk (:mod:`codec.format.riegeli`), the last
chunks read kept decoded. A record's offset is Riegeli's record position: its chunk's offset plus
its place in the chunk. :mod:`codec.sources.record_file` chooses between it and a TFRecord file by
content.
"""
from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from typing import Iterator

import numpy as np

from codec.errors import CorruptRecordError, UsageError
from codec.format.array_record import POSTSCRIPT_SPAN, ArrayRecordLayout, footer_offset, parse_footer
from codec.format.framing import Compression, Problem, ProblemKind, RecordInfo, RecordStatus
from codec.format.riegeli import (
    CHUNK_HEADER_SIZE,
    KNOWN_CHUNKS,
    SIMPLE_CHUNK,
    TRANSPOSED_CHUNK,
    ZERO_HEADER,
    ChunkDamage,
    TransposedChunk,
    add_with_overhead,
    chunk_end,
    chunk_header,
    logical_positions,
    read_chunk,
    simple_records,
    simple_values,
    single_records,
    without_block_headers,
)
from codec.index.record_index import RecordIndex
from codec.index.scan import IndexProgress
from codec.sources.byte_sources import ByteSource, LocalBytes, RemoteBytes
from codec.sources.one_file import OneFile
from codec.sources.pinned import PinnedRecord
from codec.sources.protocol import RecordData
from codec.storage.opening import io_errors

__all__ = ["ArrayRecordFile", "array_record_available", "first_line"]

CACHED_CHUNKS = 8  # decoded chunks kept: a group's records read one by one decode it once
RUN_BYTES = 1 << 20  # chunks read in order come this many bytes at a time
HASH_BATCH = 4096  # chunks whose hashes Google's reader checks in one call
EXTRA = "pip install 'tfrecord-lens[array-record]'"


def array_record_available() -> bool:
    """Whether Google's ``array-record`` package imports (it reads transposed chunks and checks hashes)."""
    try:
        from array_record.python import array_record_module  # noqa: F401
    except ImportError:
        return False
    return True


class ArrayRecordFile(OneFile):
    """An ArrayRecord file (local or a URL): records by number, each a read of its chunk.

    :meth:`index_iter` reads the chunk index from the footer (never a scan of the records);
    :meth:`read` decodes the record's chunk, checking every size the chunk states, and never
    raises for damage: a chunk that cannot be read marks its records damaged and adds one
    problem naming the chunk's offset. :meth:`verify_iter` decodes every chunk, and checks
    every header and data hash through Google's ``array-record`` package when it imports.
    """

    note = None
    payload = None
    labels = None
    unsaved = False
    modified = False
    statuses_stored = True
    compression = Compression.NONE  # (no GZIP or ZLIB stream around it: its chunks compress themselves)
    container = "array_record"
    use_cache = False  # the footer is the index: reading it is as fast as the cache
    following = False

    def __init__(self, path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True,
                 info: dict | None = None, byte_source: ByteSource | None = None) -> None:
        """``byte_source``: the file already opened for sniffing (else opened here). ``check_crc`` and
        ``use_cache`` are :class:`TFRecordFile`'s: chunks are always checked, and the footer is the index."""
        self.path = os.fspath(path)
        self.check_crc = check_crc
        if byte_source is None:
            if "://" in self.path and _is_url(self.path):
                byte_source = RemoteBytes(self.path, info)
            else:
                byte_source, _ = LocalBytes.open(self.path)
        self.byte_source: ByteSource = byte_source
        self.index = RecordIndex()
        self.problems: list[Problem] = []
        self.indexed = False
        self.verified = False
        self.layout: ArrayRecordLayout | None = None
        self.lock = threading.RLock()
        self._starts: list[int] = []  # the first record number of each chunk
        self._group = 0  # records in every chunk (the last may hold fewer), when that is so: chunk_of divides
        self._chunk_arrays = (np.zeros(0, np.int64),) * 3  # (offsets, record counts, starts) of the chunks
        self._decoded: OrderedDict[int, list[bytes] | None] = OrderedDict()  # chunk -> records (None: damaged)
        self._run: tuple[int, list[list[bytes] | None]] = (0, [])  # (first chunk, their records): read in order
        self._last = -2  # the chunk read last (the next one read makes a run)
        self._google = None  # Google's reader, opened for a transposed chunk or the hashes
        self.walked = False  # no footer: the chunks were found by walking them (see _walk)
        self._layout_problems: list[Problem] = []  # what reading the index found (kept by a verify pass)

    # -- the bytes --------------------------------------------------------
    @property
    def data_end(self) -> int:
        return self.file_size

    def read_bytes(self, offset: int, size: int) -> bytes:
        """The file's bytes as they are on disk (a hex view)."""
        with io_errors(self.path):
            return self.byte_source.read_at(offset, size)

    # -- lifetime -----------------------------------------------------------
    def release(self) -> bool:
        if not self.byte_source.release():
            return False
        with self.lock:
            self._google = None  # (its own file handle)
        return True

    def close(self) -> None:
        with self.lock:
            self.byte_source.close()
            self._google = None

    def __enter__(self) -> ArrayRecordFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ArrayRecordFile {self.path!r} records={len(self)}>"

    # -- the index: the footer ---------------------------------------------------
    def index_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]:
        """Read the chunk index from the postscript and footer (once), then verify if asked."""
        if not self.indexed:
            self._read_layout()
            yield IndexProgress(len(self.index), self.file_size, self.file_size, len(self.problems), not verify)
        if verify and not self.verified:
            yield from self.verify_iter()

    def build_index(self, *, verify: bool = False) -> ArrayRecordFile:
        for _ in self.index_iter(verify=verify):
            pass
        return self

    def resume_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]:
        return self.index_iter(verify=verify)

    def _read_layout(self) -> None:
        """The postscript (the file's last 64 KiB), then the footer chunk it points at: one read each."""
        size = self.file_size
        where = size - POSTSCRIPT_SPAN
        try:
            if size < POSTSCRIPT_SPAN:
                raise ChunkDamage(f"the file is {size:,} bytes, shorter than its 64 KiB postscript", offset=0)
            with io_errors(self.path):
                header, data = read_chunk(self.byte_source.read_at(where, POSTSCRIPT_SPAN), where)
                footer_at = footer_offset(simple_records(header, data, where), where)
                header, data = read_chunk(self.byte_source.read_at(footer_at, where - footer_at), footer_at)
                layout = parse_footer(*simple_values(header, data, footer_at), footer_at)
        except ChunkDamage as exc:
            layout = self._walk(str(exc))
        offsets, counts = layout.chunk_arrays()
        starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        # Riegeli's record position: the chunk's offset plus the record's place in it
        within = np.arange(layout.num_records, dtype=np.int64) - np.repeat(starts[:-1], counts)
        positions = (np.repeat(offsets, counts) + within).astype(np.uint64)
        with self.lock:
            self.layout = layout
            self._layout_problems = list(self.problems)
            self._starts = starts[:-1].tolist()
            group = int(counts[0]) if len(counts) else 0
            self._group = group if group and (counts[:-1] == group).all() and 1 <= counts[-1] <= group else 0
            self._chunk_arrays = (offsets, counts, starts[:-1])
            self.index = RecordIndex.from_arrays(positions, np.zeros(layout.num_records, dtype=np.uint8))
            self.indexed = True

    def _walk(self, why: str) -> ArrayRecordLayout:
        """Without a footer (a file cut short, a damaged end): the record chunks found by walking the chunk
        headers from the start, as far as they hold; one problem says so (and one where the walk stopped)."""
        size, pos = self.file_size, 0
        offsets: list[int] = []
        counts: list[int] = []
        end_of_records = 0
        stop: Problem | None = None
        with io_errors(self.path):
            while pos < size:
                raw = self.byte_source.read_at(pos, add_with_overhead(pos, CHUNK_HEADER_SIZE) - pos)
                try:
                    header, _ = chunk_header(raw, pos)
                except ChunkDamage as exc:
                    if raw.strip(b"\0"):
                        stop = Problem(sum(counts), pos, ProblemKind.TRUNCATED, f"{exc}: nothing after it is read")
                    break
                if header == ZERO_HEADER:
                    break  # the end of what was written (zeros: space never written)
                end = chunk_end(pos, header)
                if header.chunk_type not in KNOWN_CHUNKS or end > size:
                    what = ("the file ends inside it" if header.chunk_type in KNOWN_CHUNKS
                            else "its header is damaged")
                    kind = ProblemKind.TRUNCATED if end > size else ProblemKind.GARBAGE
                    stop = Problem(sum(counts), pos, kind, f"chunk at offset {pos:,}: {what}: nothing after it is read")
                    break
                if header.chunk_type in (SIMPLE_CHUNK, TRANSPOSED_CHUNK) and header.num_records:
                    offsets.append(pos)
                    counts.append(header.num_records)
                    end_of_records = end
                pos = end
        if self._drop_own_chunks(offsets, counts):
            stop = None  # (what lies after the footer and postscript holds no records)
        if offsets:
            end_of_records = min(end_of_records, size)
        found = sum(counts)
        self.walked = True
        self.problems = [Problem(None, max(0, size - POSTSCRIPT_SPAN), ProblemKind.TRUNCATED,
                                 f"no ArrayRecord footer ({why}): {found:,} records found by walking the "
                                 "chunks from the start (a file cut short, or its end damaged)")]
        if stop is not None:
            self.add_problem(stop)
        return ArrayRecordLayout(end_of_records if offsets else 0, found, offsets, counts, None)

    def _drop_own_chunks(self, offsets: list[int], counts: list[int]) -> bool:
        """Drop the footer and postscript from the end of a walk's chunks, when they are there (True)."""
        dropped = False
        for _ in range(2):
            if not offsets:
                break
            begin = offsets[-1]
            if begin != self.file_size - POSTSCRIPT_SPAN and not self._own_chunk(begin):  # (the postscript's place)
                break
            offsets.pop()
            counts.pop()
            dropped = True
        return dropped

    def _own_chunk(self, begin: int) -> bool:
        """Whether the chunk at ``begin`` reads as an ArrayRecord postscript or footer."""
        try:
            header, data = read_chunk(self.byte_source.read_at(begin, self.file_size - begin), begin)
            values, ends = simple_values(header, data, begin)
        except ChunkDamage:
            return False
        bounds = ends.tolist()
        try:
            footer_offset([values[a:b] for a, b in zip([0] + bounds[:-1], bounds)][:3], begin)
        except ChunkDamage:
            try:
                parse_footer(values, ends, begin)
            except ChunkDamage:
                return False
        return True

    # -- chunks --------------------------------------------------------------------
    def chunk_of(self, i: int) -> tuple[int, int]:
        """(chunk number, place in the chunk) of record ``i``."""
        if self._group:
            return divmod(i, self._group)
        k = bisect.bisect_right(self._starts, i) - 1
        return k, i - self._starts[k]

    def chunk_span(self, k: int) -> tuple[int, int]:
        """(begin, end) of chunk ``k`` in the file: up to the next chunk, or the footer for the last."""
        layout = self.layout
        assert layout is not None
        offsets = layout.chunk_offsets
        return offsets[k], offsets[k + 1] if k + 1 < len(offsets) else layout.footer_offset

    def chunk_records(self, k: int) -> list[bytes] | None:
        """The records of chunk ``k``, decoded by one read (kept for the next few reads); None when it
        is damaged (its records are marked and the problem added)."""
        with self.lock:
            first, run = self._run
            if first <= k < first + len(run):
                self._last = k
                return run[k - first]
            if k in self._decoded:
                self._decoded.move_to_end(k)
                self._last = k
                return self._decoded[k]
            in_order = self._last == k - 1
        if in_order:  # a pass: the chunks ahead come in one read too
            run = self.decode_run(k)
            with self.lock:
                self._run, self._last = (k, run), k
            return run[0]
        records = self._decode(k)
        with self.lock:
            self._decoded[k] = records
            if len(self._decoded) > CACHED_CHUNKS:
                self._decoded.popitem(last=False)
            self._last = k
        return records

    def decode_run(self, k: int) -> list[list[bytes] | None]:
        """Chunk ``k`` and those after it within RUN_BYTES (at least one), read at once and decoded."""
        singles, chunks = self._read_run(k)
        return [[record] for record in singles] if singles is not None else chunks  # type: ignore[return-value]

    def _read_run(self, k: int) -> tuple[list[bytes] | None, list[list[bytes] | None] | None]:
        """:meth:`decode_run` as (the records of a run of sound one-record chunks, None) or (None, the records
        of each chunk, None for a damaged one): a pass takes the first without a list per record."""
        assert self.layout is not None
        offsets = self.layout.chunk_offsets
        base = offsets[k]
        stop = max(k + 1, bisect.bisect_right(offsets, base + RUN_BYTES, lo=k) - 1)
        end = self.chunk_span(stop - 1)[1]
        with io_errors(self.path):
            buf = self.byte_source.read_at(base, end - base)
        chunk_offsets, counts, _ = self._chunk_arrays
        if (counts[k:stop] == 1).all():
            positions = logical_positions(np.append(chunk_offsets[k:stop], end), base)
            singles = single_records(without_block_headers(buf, base), positions[:-1], positions[1:])
            if singles is not None:
                self._mark_good(np.arange(k, stop))
                return singles, None
        out = []
        good: list[int] = []
        ends = offsets[k + 1:stop] + [end]
        for j, begin, chunk_stop in zip(range(k, stop), offsets[k:stop], ends):
            records = self._decode(j, buf[begin - base:chunk_stop - base], mark=False)
            out.append(records)
            if records is not None:
                good.append(j)
        self._mark_good(np.asarray(good, dtype=np.int64))
        return None, out

    def _mark_good(self, chunks: np.ndarray) -> None:
        """The records of ``chunks`` (decoded, sound) are OK, unless already marked otherwise."""
        if not len(chunks):
            return
        _, all_counts, all_starts = self._chunk_arrays
        counts, firsts = all_counts[chunks], all_starts[chunks]
        rows = np.repeat(firsts, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
        if not len(rows):
            return
        low, high = int(rows[0]), int(rows[-1]) + 1
        parts, i = [], low
        while i < high:  # (the index's runs stop at the end of its own chunks)
            parts.append(self.index.run(i, high)[1])
            i += len(parts[-1])
        statuses = np.concatenate(parts)
        unchecked = rows[statuses[rows - low] == int(RecordStatus.UNCHECKED)]
        if len(unchecked):
            self.index.set_statuses(unchecked, np.full(len(unchecked), int(RecordStatus.OK), dtype=np.uint8))

    def _decode(self, k: int, raw: bytes | None = None, mark: bool = True) -> list[bytes] | None:
        """Chunk ``k``'s records from its bytes ``raw`` (read here when None); None when it is damaged."""
        begin, end = self.chunk_span(k)
        assert self.layout is not None
        expected = self.layout.chunk_records[k]
        try:
            if raw is None:
                with io_errors(self.path):
                    raw = self.byte_source.read_at(begin, end - begin)
            header, data = read_chunk(raw, begin)
            if header.num_records != expected:
                raise ChunkDamage(f"chunk at offset {begin:,}: {header.num_records:,} records in its header, "
                                  f"{expected:,} in the footer", offset=begin)
            try:
                records = simple_records(header, data, begin)
            except TransposedChunk:
                records = self._transposed(k, begin)
        except ChunkDamage as exc:
            self._damaged(k, str(exc))
            return None
        if mark:
            self._mark(k, RecordStatus.OK, only_unchecked=True)
        return records

    def _transposed(self, k: int, begin: int) -> list[bytes]:
        """A transposed chunk's records, through Google's reader (a local file only)."""
        if not array_record_available():
            raise UsageError(f"{self.path}: chunk at offset {begin:,} is transposed (written with transpose:true); "
                             f"reading it needs Google's array-record package: {EXTRA}")
        if self.is_remote:
            raise UsageError(f"{self.path}: chunk at offset {begin:,} is transposed: Google's reader, which "
                             "decodes it, reads local files only (copy the file here first)")
        start = self._starts[k]
        assert self.layout is not None
        try:
            return list(self._google_reader().read(list(range(start, start + self.layout.chunk_records[k]))))
        except RuntimeError as exc:  # Google's reader raises RuntimeError, naming the damage
            raise ChunkDamage(f"chunk at offset {begin:,}: {first_line(exc)}", offset=begin) from None

    def _google_reader(self):
        with self.lock:
            if self._google is None:
                from array_record.python import array_record_module

                self._google = array_record_module.ArrayRecordReader(self.path)
            return self._google

    def _mark(self, k: int, status: RecordStatus, only_unchecked: bool = False) -> None:
        assert self.layout is not None
        first, count = self._starts[k], self.layout.chunk_records[k]
        if not count:
            return
        if only_unchecked and self.index.status(first) is not RecordStatus.UNCHECKED:
            return
        if count == 1:
            self.index.set_status(first, status)
            return
        rows = np.arange(first, first + count, dtype=np.int64)
        self.index.set_statuses(rows, np.full(count, int(status), dtype=np.uint8))

    def _damaged(self, k: int, detail: str) -> None:
        """Chunk ``k`` cannot be read: its records are damaged, one problem names it."""
        self._mark(k, RecordStatus.DATA_CRC)
        begin, _ = self.chunk_span(k)
        first = self._starts[k] if self.layout and self.layout.chunk_records[k] else None
        self.add_problem(Problem(first, int(begin), ProblemKind.DATA_CRC, detail))

    # -- records ---------------------------------------------------------------------
    def read(self, i: int) -> RecordData:
        """Record ``i`` from its chunk; a record of a damaged chunk comes empty, with its status."""
        i = self._check_index(i)
        k, j = self.chunk_of(i)
        records = self.chunk_records(k)
        offset = self.index.offset(i)
        if records is None:
            return RecordData(RecordInfo(i, offset, 0, RecordStatus.DATA_CRC), b"", None, None)
        data = records[j]
        return RecordData(RecordInfo(i, offset, len(data), self.index.status(i)), data, None, None)

    def record_info(self, i: int) -> RecordInfo:
        return self.read(i).info

    def iter_rows(self, order: range, every: int, intact_only: bool
                  ) -> Iterator[tuple[int, bytes, RecordStatus, int, int] | IndexProgress]:
        """:func:`codec.sources.record_pass.iter_records` over consecutive records: a run of chunks per
        read (:meth:`decode_run`), each decoded once, their records sliced out here."""
        assert self.layout is not None
        n, problems = len(order), self.problem_count
        i, stop, next_progress = order.start, order.stop, every
        offsets, counts, starts = self.layout.chunk_offsets, self.layout.chunk_records, self._starts
        statuses = self.index.statuses()  # (damage known before the pass: a hash that failed)
        low, high = int(RecordStatus.LENGTH_CRC), int(RecordStatus.TRUNCATED)
        known_bad = (statuses >= low) & (statuses <= high)
        ok, bad = RecordStatus.OK, RecordStatus.DATA_CRC
        while i < stop:
            k, _ = self.chunk_of(i)
            singles, run = self._read_run(k)
            if singles is not None:
                first = starts[k]  # (one record a chunk: chunk k + j holds record first + j)
                last = min(first + len(singles), stop)
                if not known_bad[i:last].any():
                    if i != first or last != first + len(singles):
                        singles = singles[i - first:last - first]
                    for row, data, offset in zip(range(i, last), singles, offsets[k + i - first:k + last - first]):
                        yield row, data, ok, offset, len(data)
                    i = last
                    while i - order.start >= next_progress:
                        yield IndexProgress(next_progress, next_progress, n, problems())
                        next_progress += every
                    continue
                run = [[record] for record in singles]
            assert run is not None
            for kk, records in enumerate(run, k):
                first = starts[kk]
                last = min(first + counts[kk], stop)
                if i >= last:
                    continue
                if records is None or known_bad[first]:
                    if not intact_only:
                        for row in range(i, last):
                            yield row, b"", bad, offsets[kk] + row - first, 0
                else:
                    base = offsets[kk] - first
                    for row in range(i, last):
                        data = records[row - first]
                        yield row, data, ok, base + row, len(data)
                i = last
                while i - order.start >= next_progress:
                    yield IndexProgress(next_progress, next_progress, n, problems())
                    next_progress += every
                if i >= stop:
                    break
        yield IndexProgress(n, n, n, problems(), True)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(len(self)))]
        rec = self.read(key)
        if rec.status.damaged:
            problem = next((p for p in self.problems if p.offset == self.chunk_span(self.chunk_of(rec.info.index)[0])[0]),
                           None)
            detail = problem.detail if problem is not None else "its chunk cannot be read"
            raise CorruptRecordError(f"corrupted record: {self.path}: record {rec.info.index}: {detail}",
                                     offset=rec.info.offset, index=rec.info.index)
        return rec.data

    def intact(self) -> Iterator[tuple[int, bytes]]:
        for i in range(len(self)):
            rec = self.read(i)
            if rec.status.data_intact:
                yield i, rec.data

    def pinned(self, i: int) -> PinnedRecord:
        return PinnedRecord(self, i, self._check_index(i), None)

    # -- verify ----------------------------------------------------------------------
    def verify_iter(self, every: int = 1 << 14, *, keep_rows: bool = False) -> Iterator[IndexProgress]:
        """Decode every chunk now, checking every size it states; then, when Google's package imports
        and the file is local, every header and data hash through its reader."""
        self.build_index()
        assert self.layout is not None
        n, chunks = len(self), len(self.layout.chunk_offsets)
        with self.lock:
            self._decoded.clear()
            self._run, self._last = (0, []), -2
            self.problems = list(self._layout_problems)
        self.index = RecordIndex.from_arrays(self.index.offsets(), np.zeros(n, dtype=np.uint8))
        k = 0
        with self.holding(), self.streaming():
            while k < chunks:
                k += len(self.decode_run(k))
                done = self._starts[k] if k < chunks else n
                yield IndexProgress(done, self.chunk_span(k - 1)[1], self.file_size, len(self.problems))
        if self.hashes_checked:
            yield from self._check_hashes()
        self.verified = True
        yield IndexProgress(n, self.file_size, self.file_size, len(self.problems), True)

    def verify(self) -> list[Problem]:
        for _ in self.verify_iter():
            pass
        return self.problems

    @property
    def hashes_checked(self) -> bool:
        """Whether :meth:`verify_iter` checks the hashes: Google's package imports and the file is local."""
        return not self.is_remote and not self.walked and array_record_available()

    def _check_hashes(self) -> Iterator[IndexProgress]:
        """Every chunk's header and data hash, by reading a record of each through Google's reader."""
        assert self.layout is not None
        try:
            reader = self._google_reader()
        except RuntimeError as exc:  # its footer or postscript hash failed
            self.add_problem(Problem(None, self.layout.footer_offset, ProblemKind.DATA_CRC,
                                     f"chunk at offset {self.layout.footer_offset:,} (the footer or postscript): "
                                     f"{first_line(exc)}"))
            return
        chunks = [k for k, count in enumerate(self.layout.chunk_records)
                  if count and not self.index.status(self._starts[k]).damaged]
        for at in range(0, len(chunks), HASH_BATCH):
            batch = chunks[at:at + HASH_BATCH]
            try:  # a record of each chunk: its reader checks the chunk's hashes as it decodes it
                reader.read([self._starts[k] for k in batch])
            except RuntimeError:
                for k in batch:  # which chunk it was (damage is rare: one by one only here)
                    try:
                        reader.read([self._starts[k]])
                    except RuntimeError as exc:
                        if any(name in str(exc) for name in _INDEX_MESSAGES):  # its reading of the footer failed
                            self.add_problem(Problem(None, self.layout.footer_offset, ProblemKind.DATA_CRC,
                                                     f"the ArrayRecord footer or postscript: {first_line(exc)}"))
                            return
                        self._damaged(k, f"chunk at offset {self.chunk_span(k)[0]:,}: {first_line(exc)}")
            last = batch[-1]
            yield IndexProgress(self._starts[last], self.chunk_span(last)[1], self.file_size, len(self.problems))

    # -- what info shows ---------------------------------------------------------------
    def group_size_warning(self) -> str | None:
        """Why random access is slow when the writer's group_size is above 1 (one line), else None."""
        layout = self.layout
        if layout is None or layout.group_size <= 1:
            return None
        return (f"group_size {layout.group_size:,} > 1: each chunk holds {layout.group_size:,} "
                f"records compressed together, so reading any one record reads and decompresses its whole "
                f"group (random access, as tfds.data_source and Grain do it, costs up to "
                f"{layout.group_size:,}x the bytes); write with group_size:1 for random access")

    def info_lines(self) -> list[str]:
        """The format, the writer's options and, when group_size > 1, why random access is slow."""
        layout = self.layout
        if layout is None:
            return ["format:      ArrayRecord"]
        lines = [f"format:      ArrayRecord ({len(layout.chunk_offsets):,} chunks, {layout.compression}, "
                 f"group_size {layout.group_size:,})",
                 f"writer:      {layout.writer_options or '(no options recorded)'}"]
        warning = self.group_size_warning()
        if warning is not None:
            lines.append(f"warning:     {warning}")
        if self.hashes_checked:
            hashes = "checked by verify (through Google's array-record package)"
        elif self.walked or self.is_remote:
            hashes = "not checked (sizes and structure are): " + ("no footer" if self.walked else "a URL")
        else:
            hashes = f"not checked (sizes and structure are): {EXTRA} to check them"

        lines.append(f"hashes:      {hashes}")
        return lines

    def start_follow(self) -> None:
        raise UsageError(f"cannot follow {self.path}: an ArrayRecord file is read through its footer, "
                         "written when the file is closed")


_INDEX_MESSAGES = ("RiegeliPostscript", "RiegeliFooterMetadata", "ArrayRecordFooter")  # Google's reader's words


def first_line(exc: BaseException) -> str:
    """The first line of what ``exc`` says (Google's package raises messages of many lines)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _is_url(path: str) -> bool:
    from codec.storage.remote import is_url

    return is_url(path)
