"""Open a TFRecord file, index it, and read any record at random."""
from __future__ import annotations

import bisect
import mmap
import os
import stat
import threading
import zlib
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from . import index_cache
from .crc import masked_crc
from .errors import CorruptRecordError, FileAccessError, NotTFRecordError, TruncatedRecordError, UsageError
from .framing import (CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Compression, Problem, ProblemKind, RecordInfo,
                      RecordStatus)
from .inflate import (GZIP_MAGIC, InflateReader, InflateScanner, ZranBuilder, ZranReader, looks_like_zlib, prefetch,
                      zran_available)
from .record_index import RecordIndex
from .scan import (IndexProgress, PlainSource, Scanner, StreamSource, candidate_headers, data_crc_problem,
                   verify_spans)

SNIFF_WINDOW = 4 << 20  # how far a file with a damaged start is searched for a record
SNIFF_FIRST = 64 << 10  # what is read first (enough for a sound file)


@dataclass(frozen=True)
class RecordData:
    """A record's bytes with what is known of it; ``data`` is partial when truncated."""

    info: RecordInfo
    data: bytes
    stored_crc: int | None
    computed_crc: int | None

    @property
    def status(self) -> RecordStatus:
        return self.info.status


def _describe_os_error(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"cannot read {path}: {reason}"


def sniff_compression(path: str) -> Compression:
    """Decide plain, GZIP or ZLIB from the content; raise a one-line error otherwise.

    The first 64 KiB answer for any sound file; only a file whose start is
    damaged is read further (up to SNIFF_WINDOW) in search of a record.
    """
    with _open_file(path) as f:
        head = f.read(SNIFF_FIRST)
        kind = _sniff_start(head)
        if kind is not None:
            return kind
        if len(head) == SNIFF_FIRST:
            head += f.read(SNIFF_WINDOW - SNIFF_FIRST)
    if len(head) < HEADER_SIZE:
        return Compression.NONE  # shorter than a header: TensorFlow's "truncated record at 0"
    if _record_at(head, 0, check_length=False) or any(_record_at(head, int(c)) for c in candidate_headers(head)):
        # (record 0 again: its data may reach past the first 64 KiB)
        return Compression.NONE  # damaged at the start, but records follow
    raise NotTFRecordError(f"not a TFRecord file: {path} (no valid record header, GZIP or ZLIB stream found)")


def _sniff_start(head: bytes) -> Compression | None:
    """What the file's first bytes make it for certain; None when they are not enough."""
    if not head:
        return Compression.NONE
    if len(head) >= HEADER_SIZE:
        n, lcrc = HEADER.unpack_from(head)
        if masked_crc(head[:8]) == lcrc or _record_at(head, 0, check_length=False):
            return Compression.NONE
    if head[:3] == GZIP_MAGIC + b"\x08":
        return Compression.GZIP
    if looks_like_zlib(head):
        try:
            zlib.decompressobj().decompress(head[:4096], 64)
            return Compression.ZLIB
        except zlib.error:
            pass
    return None


def _record_at(head: bytes, pos: int, check_length: bool = True) -> bool:
    """Does a plausible record start at ``pos``? Data CRC checked where it fits."""
    if pos + HEADER_SIZE > len(head):
        return False
    (n,) = LENGTH.unpack_from(head, pos)
    end = pos + OVERHEAD + n
    if end > len(head):
        return check_length  # its length CRC held (the caller found it); can't see the data
    (stored,) = CRC.unpack_from(head, end - 4)
    return masked_crc(head[pos + HEADER_SIZE:end - 4]) == stored


def _open_file(path: str):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileAccessError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileAccessError(_describe_os_error(path, exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(f"is a directory, not a TFRecord file: {path}")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise FileAccessError(_describe_os_error(path, exc)) from None


class _Pin:
    """:meth:`TFRecordFile._pinned`: the file open, and not released, while the block runs."""

    __slots__ = ("_tfile",)

    def __init__(self, tfile: "TFRecordFile") -> None:
        self._tfile = tfile

    def __enter__(self) -> None:
        tfile = self._tfile
        with tfile._lock:
            tfile._acquire()
            tfile._pins += 1

    def __exit__(self, *exc) -> None:
        tfile = self._tfile
        with tfile._lock:
            tfile._pins -= 1


class TFRecordFile:
    """A TFRecord file (plain, GZIP or ZLIB) with an offset index.

    Opening sniffs the compression; :meth:`index_iter` (or :meth:`build_index`)
    finds the records. ``len()``, ``[i]``, slices and iteration work on what
    is indexed so far, also while another thread runs the index pass.
    ``f[i]`` checks the data CRC unless ``check_crc=False`` and raises
    :class:`CorruptRecordError` for a damaged record, as TensorFlow would;
    :meth:`read` never raises for damage and says what it found instead.
    """

    def __init__(self, path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True):
        self.path = os.fspath(path)
        self.check_crc = check_crc
        self.compression = sniff_compression(self.path)
        st = os.stat(self.path)
        self.file_size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        # A small file indexes faster than its cache entry is written or read (a set of 10,000 shards)
        self.use_cache = use_cache and st.st_size >= index_cache.MIN_CACHED_BYTES
        self.index = RecordIndex()
        self.problems: list[Problem] = []
        self.indexed = False
        self.verified = False
        self._lock = threading.RLock()
        self._file = None
        self._mmap = None
        self._pins = 0  # passes running over the mmap: no release meanwhile
        self._closed = False
        self._inflate: InflateReader | ZranReader | None = None
        self._zran_job: ZranBuilder | None = None  # the zran index being built for the cache
        self._stream_clean = False  # the compressed stream had no damage (a zran index is possible)
        self._stream_end = 0  # uncompressed bytes available (compressed files)
        self._acquire()

    # -- lifetime ---------------------------------------------------------
    def _acquire(self) -> None:
        """Open (and map) the file if it was released; refuse if it changed since."""
        with self._lock:
            if self._file is not None:
                return
            if self._closed:
                raise FileAccessError(f"{self.path} was closed")
            f = _open_file(self.path)
            st = os.fstat(f.fileno())
            if (st.st_size, st.st_mtime_ns) != (self.file_size, self.mtime_ns):
                f.close()
                raise FileAccessError(f"{self.path} changed on disk since it was opened: open it again")
            self._file = f
            if self.compression is Compression.NONE and self.file_size:
                self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def release(self) -> bool:
        """Close the OS handles but keep the index; the next read reopens the file.

        Returns False (and keeps them) while a pass is running over the file.
        """
        with self._lock:
            if self._pins:
                return False
            if self._inflate is not None:
                self._inflate.close()
            if self._mmap is not None:
                try:
                    self._mmap.close()
                except BufferError:
                    return False  # a numpy view from an unfinished pass still holds it
                self._mmap = None
            if self._file is not None:
                self._file.close()
                self._file = None
            return True

    @property
    def is_open(self) -> bool:
        return self._file is not None

    def _pinned(self) -> "_Pin":
        """Context: the file is open and will not be released until the block ends."""
        return _Pin(self)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._pins = 0
            if not self.release() and self._file is not None:
                self._file.close()  # the mmap stays until the numpy view is collected
                self._file = None

    def __enter__(self) -> "TFRecordFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<TFRecordFile {self.path!r} {self.compression.value} records={len(self)}>"

    # -- indexing ---------------------------------------------------------
    def index_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]:
        """Index the file (once), yielding progress; use the cache when valid.

        With ``verify`` every data CRC is checked in the same pass.
        """
        if self.indexed and (self.verified or not verify):
            yield IndexProgress(len(self.index), self.file_size, self.file_size, len(self.problems), True)
            return
        if not self.indexed and self.use_cache and self._load_cache() and (self.verified or not verify):
            yield IndexProgress(len(self.index), self.file_size, self.file_size, len(self.problems), True)
            return
        if self.indexed:  # indexed without verify: check the data CRCs only
            yield from self.verify_iter()
            return
        yield from self._scan(verify)

    def build_index(self, *, verify: bool = False) -> "TFRecordFile":
        for _ in self.index_iter(verify=verify):
            pass
        return self

    def _scan(self, verify: bool) -> Iterator[IndexProgress]:
        self.index = RecordIndex()
        self.problems = []
        if self.compression is Compression.NONE:
            with self._pinned():
                source = PlainSource(self._mmap if self._mmap is not None else b"")
                yield from Scanner(source, self.index, self.problems, self.file_size, verify=verify).run()
        else:
            yield from self._scan_stream(verify)
        self.problems.sort(key=lambda p: p.offset)
        self.indexed = True
        self.verified = verify
        if self.use_cache:
            self._save_cache()
            if self.compression is not Compression.NONE:
                index_cache.save_zran(self.path, self.file_size, self.mtime_ns, None, 0)  # drop a stale one
                if self._zran_possible():
                    # After the pass, not during it: on two cores a concurrent build slowed the pass ~50%.
                    self._zran_job = self._zran_builder()

    def _scan_stream(self, verify: bool) -> Iterator[IndexProgress]:
        f = _open_file(self.path)
        chunks = None
        self._stream_clean = False
        try:
            inflater = InflateScanner(f, self.compression)
            self._inflate = InflateReader(self.path, self.compression, inflater.checkpoints, 0)
            chunks = prefetch(inflater.chunks())
            source = StreamSource(chunks, lambda: inflater.in_pos)
            scanner = Scanner(source, self.index, self.problems, self.file_size, verify=verify)
            for progress in scanner.run():
                self._inflate.checkpoints = inflater.checkpoints
                self._inflate.total_out = inflater.out_pos
                yield progress
            self._inflate.checkpoints = inflater.checkpoints
            self._inflate.total_out = inflater.out_pos
            self._stream_end = inflater.out_pos
            if inflater.damage is not None:
                self._add_stream_damage(inflater.damage)
            else:
                self._stream_clean = True
        finally:
            if chunks is not None:
                chunks.close()  # stops the decompressing thread before its file closes
            f.close()

    def _add_stream_damage(self, damage) -> None:
        """Fold the compressed stream's damage into the problem list (one entry)."""
        kind = ProblemKind(damage.kind)
        last = self.problems[-1] if self.problems else None
        if last is not None and last.kind is ProblemKind.TRUNCATED and last.offset + last.size >= damage.out_pos:
            self.problems[-1] = Problem(last.index, last.offset, kind, f"{last.detail}: {damage.detail}",
                                        size=last.size, compressed_offset=damage.compressed_offset,
                                        expected=last.expected, found=last.found)
        else:
            self.problems.append(Problem(None, damage.out_pos, kind, damage.detail,
                                         compressed_offset=damage.compressed_offset))

    def _load_cache(self) -> bool:
        cached = index_cache.load(self.path, self.file_size, self.mtime_ns, self.compression)
        if cached is None:
            return False
        self.index, self.problems, self.verified, self._stream_end = cached
        self.indexed = True
        # Only damage to the compressed stream itself carries a compressed offset.
        self._stream_clean = all(p.compressed_offset is None for p in self.problems)
        if self.compression is not Compression.NONE:
            self._inflate = None  # a zran index from the cache, or checkpoints rebuilt on first random read
        return True

    def _save_cache(self) -> None:
        index_cache.save(self.path, self.file_size, self.mtime_ns, self.compression,
                         self.index, self.problems, self.verified, self._stream_end)

    # -- verification -----------------------------------------------------
    def verify_iter(self, every: int = 1 << 14) -> Iterator[IndexProgress]:
        """Check every record's data CRC (indexing first if needed)."""
        if not self.indexed:
            yield from self.index_iter(verify=True)
            return
        self.problems = [p for p in self.problems if p.kind is not ProblemKind.DATA_CRC]
        check, self.check_crc = self.check_crc, True
        n = len(self.index)
        if self.compression is Compression.NONE and self.file_size:
            with self._pinned():
                yield from self._verify_plain(n, every)
            n = 0  # done: skip the per-record loop below
        for i in range(n):
            status = self.index.status(i)
            if status in (RecordStatus.UNCHECKED, RecordStatus.OK, RecordStatus.DATA_CRC):
                self.index.set_status(i, RecordStatus.UNCHECKED)
                self._read(i, RecordStatus.UNCHECKED)  # records a data_crc problem if it fails
            if i % every == every - 1:
                yield IndexProgress(i + 1, self.index.offset(i), self._data_end(), len(self.problems))
        self.check_crc = check
        self.verified = True
        if self.use_cache:
            self._save_cache()
        yield IndexProgress(len(self.index), self._data_end(), self._data_end(), len(self.problems), True)

    def _verify_plain(self, n: int, every: int) -> Iterator[IndexProgress]:
        """Batch verification over the mmap (records whose data CRC is checkable)."""
        offsets = self.index.offsets()
        statuses = self.index.statuses()
        checkable = np.flatnonzero(statuses <= RecordStatus.DATA_CRC)
        checkable = checkable[statuses[checkable] != RecordStatus.LENGTH_CRC]
        found = []
        for start in range(0, checkable.shape[0], every):
            idx = checkable[start:start + every]
            ok, stored, computed = verify_spans(self._mmap, offsets[idx].astype(np.int64))
            self.index.set_statuses(idx, np.where(ok, np.uint8(RecordStatus.OK), np.uint8(RecordStatus.DATA_CRC)))
            for k in np.flatnonzero(~ok).tolist():
                i = int(idx[k])
                found.append(data_crc_problem(i, int(offsets[i]), int(stored[k]), int(computed[k])))
            last = int(idx[-1])
            yield IndexProgress(last + 1, int(offsets[last]), self.file_size, len(self.problems) + len(found))
        with self._lock:
            known = {(p.offset, p.kind) for p in self.problems}
            fresh = [p for p in found if (p.offset, p.kind) not in known]
            self.problems = sorted(self.problems + fresh, key=lambda p: p.offset)

    def verify(self) -> list[Problem]:
        for _ in self.verify_iter():
            pass
        return self.problems

    # -- random access ----------------------------------------------------
    def __len__(self) -> int:
        return len(self.index)

    def _data_end(self) -> int:
        return self.file_size if self.compression is Compression.NONE else self._stream_end

    def _bytes(self, pos: int, size: int) -> bytes:
        if self.compression is Compression.NONE:
            if not self.file_size:
                return b""
            with self._lock:  # no release() between the check and the slice
                if self._mmap is None:
                    self._acquire()
                return self._mmap[pos:pos + size]
        if self._closed:
            raise FileAccessError(f"{self.path} was closed")
        reader = self._inflater()
        if not isinstance(reader, ZranReader):
            return reader.read(pos, size)
        try:
            return reader.read(pos, size)
        except Exception:  # noqa: BLE001 - zran failed: fall back to the zlib checkpoints
            with self._lock:
                if self._inflate is reader:
                    self._inflate = self._rebuild_checkpoints()
            return self._inflater().read(pos, size)

    def _inflater(self) -> InflateReader | ZranReader:
        with self._lock:
            if self._inflate is None:
                self._inflate = self._cached_zran() or self._rebuild_checkpoints()
            return self._inflate

    def _zran_possible(self) -> bool:
        """A GZIP or ZLIB file whose stream is undamaged, with the cache on and indexed_gzip importable."""
        return (self.compression is not Compression.NONE and self.use_cache and zran_available()
                and self._stream_clean)

    def _zran_builder(self) -> ZranBuilder:
        return ZranBuilder(self.path, self.compression, self._stream_end, self._zran_saver())

    def _zran_saver(self):
        """``on_done`` for a zran build: cache it if the file is still the one indexed."""
        path, size, mtime_ns, end = self.path, self.file_size, self.mtime_ns, self._stream_end

        def save(blob: bytes, out: int) -> None:
            try:
                st = os.stat(path)
            except OSError:
                return
            if out == end and (st.st_size, st.st_mtime_ns) == (size, mtime_ns):
                index_cache.save_zran(path, size, mtime_ns, blob, end)

        return save

    def wait_for_cache(self) -> None:
        """Block until background cache work (a GZIP or ZLIB file's zran index) has finished."""
        job = self._zran_job
        if job is not None:
            job.result()

    def _cached_zran(self) -> ZranReader | None:
        """After a cache load of an undamaged GZIP or ZLIB file: random reads through a zran index.

        From the cache if it holds one; else built now (one C-speed pass, the
        cost of rebuilding the zlib checkpoints) and cached for the next open.
        """
        if not self._zran_possible():
            return None
        self.wait_for_cache()
        blob = index_cache.load_zran(self.path, self.file_size, self.mtime_ns, self._stream_end)
        if blob is None:
            built = self._zran_builder().result()
            if built is None or built[1] != self._stream_end:
                return None
            blob = built[0]
        try:
            return ZranReader(self.path, blob, self._stream_end, self.compression)
        except Exception:  # noqa: BLE001 - an unreadable index: use the zlib checkpoints
            return None

    def _rebuild_checkpoints(self) -> InflateReader:
        """After a cache load: one decompression pass to find checkpoints again."""
        with _open_file(self.path) as f:
            inflater = InflateScanner(f, self.compression)
            for _ in inflater.chunks():
                pass
        return InflateReader(self.path, self.compression, inflater.checkpoints, inflater.out_pos)

    def read_bytes(self, offset: int, size: int) -> bytes:
        """Raw bytes of the (uncompressed) stream, e.g. for a hex view."""
        return self._bytes(offset, size)

    def _check_index(self, i: int) -> int:
        n = len(self.index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"record {i} out of range: {self.path} has {n} records")
        return i

    def record_info(self, i: int) -> RecordInfo:
        i = self._check_index(i)
        offset = self.index.offset(i)
        (length,) = LENGTH.unpack(self._bytes(offset, 8))
        return RecordInfo(i, offset, length, self.index.status(i))

    def read(self, i: int) -> RecordData:
        """Record ``i`` with its CRCs checked and status updated; never raises for damage."""
        i = self._check_index(i)
        return self._read(i, self.index.status(i))

    def _read(self, i: int, status: RecordStatus) -> RecordData:
        offset = self.index.offset(i)
        head = self._bytes(offset, HEADER_SIZE)
        (length,) = LENGTH.unpack_from(head)
        if status is RecordStatus.TRUNCATED:
            data = self._bytes(offset + HEADER_SIZE, max(0, self._data_end() - offset - HEADER_SIZE))
            return RecordData(RecordInfo(i, offset, length, status), data, None, None)
        body = self._bytes(offset + HEADER_SIZE, length + 4)
        data = body[:length]
        (stored,) = CRC.unpack_from(body, length)
        computed = masked_crc(data) if self.check_crc else None
        if computed is not None and status in (RecordStatus.UNCHECKED, RecordStatus.OK, RecordStatus.DATA_CRC):
            new = RecordStatus.OK if computed == stored else RecordStatus.DATA_CRC
            if new is not status:
                self.index.set_status(i, new)
                if new is RecordStatus.DATA_CRC:
                    self._add_problem(data_crc_problem(i, offset, stored, computed))
                status = new
        return RecordData(RecordInfo(i, offset, length, status), data, stored, computed)

    def _add_problem(self, problem: Problem) -> None:
        with self._lock:
            if any(p.offset == problem.offset and p.kind is problem.kind for p in self.problems):
                return  # another thread (a verify pass, a view reading rows) found it first
            problems = list(self.problems)
            bisect.insort(problems, problem, key=lambda p: p.offset)
            self.problems = problems  # swapped whole: readers on other threads see a consistent list

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(len(self)))]
        rec = self.read(key)
        if self.check_crc and rec.status.damaged and rec.status is not RecordStatus.LENGTH_CRC:
            where = f"{self.path}: record {rec.info.index} at offset {rec.info.offset}"
            if rec.status is RecordStatus.TRUNCATED:
                raise TruncatedRecordError(f"truncated record: {where}", offset=rec.info.offset, index=rec.info.index)
            raise CorruptRecordError(
                f"corrupted record: {where}: data CRC stored {rec.stored_crc:#010x}, computed {rec.computed_crc:#010x}",
                offset=rec.info.offset, index=rec.info.index)
        return rec.data

    def __iter__(self) -> Iterator[bytes]:
        for i in range(len(self)):
            yield self[i]

    def intact(self) -> Iterator[tuple[int, bytes]]:
        """(index, data) of every record whose data CRC holds, checked now."""
        for i in range(len(self)):
            rec = self.read(i)
            if rec.status.data_intact and (not self.check_crc or rec.stored_crc == rec.computed_crc):
                yield i, rec.data

    def find_record(self, offset: int) -> int:
        """The record containing (or nearest before) byte ``offset``; -1 if none."""
        return self.index.find_offset(offset)


def open_tfrecord(path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True,
                  index: bool = True) -> TFRecordFile:
    """Open ``path`` and (by default) index it fully."""
    f = TFRecordFile(path, check_crc=check_crc, use_cache=use_cache)
    if index:
        try:
            f.build_index()
        except BaseException:
            f.close()
            raise
    return f


def parse_compression(name: str | None) -> Compression:
    return Compression.parse(name)


__all__ = ["TFRecordFile", "RecordData", "open_tfrecord", "sniff_compression", "UsageError"]
