"""Open a TFRecord file, index it, and read any record at random.

Plain files are read with ``os.pread``, never mapped: a mapped file that
shrinks under the reader kills the process with SIGBUS, while a short read
is seen and raised as :class:`FileChangedError`. Anything but a regular file
(a FIFO, a device, a socket) is refused before it is opened for reading, so
that nothing blocks on it.
"""
from __future__ import annotations

import bisect
import os
import stat
import threading
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import google_crc32c
import numpy as np

from . import index_cache
from .crc import mask, masked_crc
from .errors import (CorruptRecordError, FileAccessError, FileChangedError, NotTFRecordError, TFRecordError,
                     TruncatedRecordError, UsageError)
from .forked import beside
from .framing import (CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Compression, Problem, ProblemKind, RecordInfo,
                      RecordStatus)
from .inflate import (GZIP_MAGIC, InflateReader, InflateScanner, ZranBuilder, ZranReader, looks_like_zlib, prefetch,
                      zran_available)
from .halves import SPLIT_BYTES, scan_halves
from .record_index import RecordIndex
from .scan import (IndexProgress, PlainSource, Scanner, StreamSource, candidate_headers, data_crc_problem,
                   verify_spans)

SNIFF_WINDOW = 4 << 20  # how far a file with a damaged start is searched for a record
SNIFF_FIRST = 64 << 10  # what is read first (enough for a sound file)
INFLATE_PROBE = 4096  # compressed bytes a GZIP or ZLIB start must inflate without error to be taken for one
ZLIB_MIN_OUT = 64  # uncompressed bytes a ZLIB start must give before an error to count as a (damaged) stream
ONE_READ = 64 << 10  # a record this close to the next one is read with a single pread
VERIFY_WINDOW = 16 << 20  # bytes of a plain file the verify pass reads at a time
LARGE_RECORD = 64 << 10  # the verify pass reads a record at least this large by itself
LARGE_RUN = 32 << 20  # bytes of large records the verify pass checks between two progress steps
CRC_PIECE = 16 << 20  # a record read by itself is checked in pieces of at most this size
CHECK_SIZE_FROM = 1 << 20  # a read this large first checks that the file has not shrunk

_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))

if hasattr(os, "pread"):
    _pread = os.pread
else:  # Windows: no pread; a seek and a read under one lock
    _seek_lock = threading.Lock()

    def _pread(fd: int, n: int, pos: int) -> bytes:
        with _seek_lock:
            os.lseek(fd, pos, os.SEEK_SET)
            return os.read(fd, n)


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


@contextmanager
def _io_errors(path: str):
    """Turn an OSError from reading ``path`` into a one-line FileAccessError."""
    try:
        yield
    except TFRecordError:
        raise
    except OSError as exc:
        raise FileAccessError(_describe_os_error(path, exc)) from None


def _refusal(path: str, mode: int) -> str | None:
    """Why a path with this ``st_mode`` cannot be read as a TFRecord file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"is a directory, not a TFRecord file: {path}"
    kind = next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")
    return f"not a regular file: {path} ({kind})"


def _open_fd(path: str) -> tuple[int, os.stat_result]:
    """A read-only fd on the regular file ``path`` and its fstat; a one-line error otherwise.

    The path is checked before it is opened (opening a FIFO for reading
    blocks until a writer comes, a device may act on being opened), and the
    fd is checked again: the path may have been replaced in between.
    O_NONBLOCK makes the second check safe; it changes nothing for a
    regular file.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileAccessError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileAccessError(_describe_os_error(path, exc)) from None
    reason = _refusal(path, st.st_mode)
    if reason:
        raise FileAccessError(reason)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileAccessError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileAccessError(_describe_os_error(path, exc)) from None
    try:
        st = os.fstat(fd)
        reason = _refusal(path, st.st_mode)
    except OSError as exc:
        os.close(fd)
        raise FileAccessError(_describe_os_error(path, exc)) from None
    if reason:
        os.close(fd)
        raise FileAccessError(reason)
    return fd, st


def _open_file(path: str):
    """:func:`_open_fd` as a binary file object (for the GZIP and ZLIB readers)."""
    fd, _ = _open_fd(path)
    return os.fdopen(fd, "rb")


def _read_upto(fd: int, path: str, pos: int, n: int) -> bytes:
    """Up to ``n`` bytes at ``pos``, fewer only at the end of the file (whatever its stat says)."""
    parts = []
    got = 0
    with _io_errors(path):
        while got < n:
            more = _pread(fd, n - got, pos + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
    return b"".join(parts)


def sniff_compression(path: str | os.PathLike) -> Compression:
    """Decide plain, GZIP or ZLIB from the content; raise a one-line error otherwise.

    The first 64 KiB answer for any sound file; only a file whose start is
    damaged is read further (up to SNIFF_WINDOW) in search of a record.
    """
    path = os.fspath(path)
    fd, _ = _open_fd(path)
    try:
        return _sniff(fd, path)
    finally:
        os.close(fd)


def _sniff(fd: int, path: str) -> Compression:
    head = _read_upto(fd, path, 0, SNIFF_FIRST)
    kind, certain = _sniff_start(head)
    if certain:
        return kind
    if len(head) == SNIFF_FIRST:
        head += _read_upto(fd, path, SNIFF_FIRST, SNIFF_WINDOW - SNIFF_FIRST)
    if kind is not None:
        # A GZIP or ZLIB start whose stream breaks at once: a plain file whose first header
        # is damaged can begin with those bytes. Records whose CRCs hold decide.
        return Compression.NONE if _plain_records(head) else kind
    if len(head) < HEADER_SIZE:
        return Compression.NONE  # shorter than a header: TensorFlow's "truncated record at 0"
    if _record_at(head, 0, check_length=False) or any(_record_at(head, int(c)) for c in candidate_headers(head)):
        # (record 0 again: its data may reach past the first 64 KiB)
        return Compression.NONE  # damaged at the start, but records follow
    raise NotTFRecordError(f"not a TFRecord file: {path} (no valid record header, GZIP or ZLIB stream found)")


def _sniff_start(head: bytes) -> tuple[Compression | None, bool]:
    """What the file's first bytes make it, and whether for certain.

    (kind, False) with a kind: a GZIP or ZLIB start whose stream breaks
    within its first INFLATE_PROBE bytes and does not begin with a record
    header; (None, False): not enough to say.
    """
    if not head:
        return Compression.NONE, True
    if len(head) >= HEADER_SIZE:
        n, lcrc = HEADER.unpack_from(head)
        if masked_crc(head[:8]) == lcrc or _record_at(head, 0, check_length=False):
            return Compression.NONE, True
    if head[:3] == GZIP_MAGIC + b"\x08":
        out, broke = _inflate_probe(head, 31)
        return Compression.GZIP, not broke or _starts_with_header(out)
    if looks_like_zlib(head):
        out, broke = _inflate_probe(head, 15)
        if not broke or _starts_with_header(out):
            return Compression.ZLIB, True
        if len(out) >= ZLIB_MIN_OUT:
            return Compression.ZLIB, False
    return None, False


def _starts_with_header(stream: bytes) -> bool:
    """Does an inflated stream begin with a record header whose length CRC holds?

    A damaged GZIP/ZLIB file still gives its first records before the break;
    garbage inflated from a plain file that only looks compressed does not.
    """
    return len(stream) >= HEADER_SIZE and masked_crc(stream[:8]) == HEADER.unpack_from(stream)[1]


def _inflate_probe(head: bytes, wbits: int) -> tuple[bytes, bool]:
    """(bytes inflated, broke): inflate the first INFLATE_PROBE bytes of ``head`` in small steps."""
    d = zlib.decompressobj(wbits)
    out = bytearray()
    data = head[:INFLATE_PROBE]
    for k in range(0, len(data), 256):
        try:
            out += d.decompress(data[k:k + 256], 1 << 20)
        except zlib.error:
            return bytes(out), True
        if d.eof or len(out) >= 1 << 20:
            break
    return bytes(out), False


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


def _plain_records(head: bytes) -> bool:
    """Does ``head`` hold a whole record whose data CRC holds (record 0 by it alone, any other
    with its length CRC too)? Chance cannot do that: it makes a plain file for certain."""
    return _record_at(head, 0, check_length=False) or \
        any(_record_at(head, int(c), check_length=False) for c in candidate_headers(head))


class _Handle:
    """An open fd, closed when the last reference to it goes.

    :meth:`TFRecordFile.release` drops the file's reference; a read in flight
    on another thread holds its own until it returns, so the fd number is
    never closed (and reused by another open) under a read.
    """

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


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
    With ``fork_halves`` a pass over a plain file of 32 MB or more runs in two
    halves, the second in a forked child (:mod:`codec.halves`): for the
    command line, never in a process with threads.
    """

    def __init__(self, path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True,
                 fork_halves: bool = False):
        self.path = os.fspath(path)
        self.check_crc = check_crc
        self.fork_halves = fork_halves
        fd, st = _open_fd(self.path)
        try:
            self.compression = _sniff(fd, self.path)
        except BaseException:
            os.close(fd)
            raise
        self.file_size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        # A small file indexes faster than its cache entry is written or read (a set of 10,000 shards)
        self.use_cache = use_cache and st.st_size >= index_cache.MIN_CACHED_BYTES
        self.index = RecordIndex()
        self.problems: list[Problem] = []
        self.indexed = False
        self.verified = False
        self._lock = threading.RLock()
        self._handle: _Handle | None = _Handle(fd)
        self._pins = 0  # passes running over the file: no release meanwhile
        self._closed = False
        self._inflate: InflateReader | ZranReader | None = None
        self._zran_job: ZranBuilder | None = None  # the zran index being built for the cache
        self._stream_clean = False  # the compressed stream had no damage (a zran index is possible)
        self._stream_end = 0  # uncompressed bytes available (compressed files)

    # -- lifetime ---------------------------------------------------------
    def _acquire(self) -> None:
        """Open the file if it was released; refuse if it changed since."""
        with self._lock:
            if self._handle is not None:
                return
            if self._closed:
                raise FileAccessError(f"{self.path} was closed")
            fd, st = _open_fd(self.path)
            if (st.st_size, st.st_mtime_ns) != (self.file_size, self.mtime_ns):
                os.close(fd)
                raise FileChangedError(f"{self.path} changed on disk since it was opened: open it again")
            self._handle = _Handle(fd)

    def _fd(self) -> _Handle:
        """The open fd (reopened if released); hold the result while reading through it."""
        h = self._handle
        if h is None:
            with self._lock:
                self._acquire()
                h = self._handle
        return h

    def release(self) -> bool:
        """Close the OS handles but keep the index; the next read reopens the file.

        Returns False (and keeps them) while a pass is running over the file.
        """
        with self._lock:
            if self._pins:
                return False
            if self._inflate is not None:
                self._inflate.close()
            self._handle = None  # the fd closes with the last read still using it
            return True

    @property
    def is_open(self) -> bool:
        return self._handle is not None

    def _pinned(self) -> "_Pin":
        """Context: the file is open and will not be released until the block ends."""
        return _Pin(self)

    def close(self) -> None:
        """Close the file; a pass still running on another thread fails at its next read."""
        with self._lock:
            self._closed = True
            self._pins = 0
            self.release()

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
        with _io_errors(self.path):
            if self.compression is Compression.NONE:
                yield from self._scan_plain(verify)
            else:
                yield from self._scan_stream(verify)
                if not len(self.index) and not self._stream_clean and self._plain_after_all():
                    yield from self._scan_plain(verify)
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

    def _scan_plain(self, verify: bool) -> Iterator[IndexProgress]:
        with self._pinned():
            halves = scan_halves(self._read_at, self.file_size, verify) if self.fork_halves else None
            if halves is not None:
                self.index, self.problems = halves
                yield IndexProgress(len(self.index), self.file_size, self.file_size, 0, True)
                return
            source = PlainSource(self._read_at, self.file_size)
            yield from Scanner(source, self.index, self.problems, self.file_size, verify=verify).run()

    def _plain_after_all(self) -> bool:
        """A GZIP or ZLIB start whose stream gave no record: is it a plain file whose first header
        happens to begin like one? Then the file is read as plain from now on."""
        h = self._fd()  # held while reading
        head = _read_upto(h.fd, self.path, 0, SNIFF_WINDOW)
        if not _plain_records(head):
            return False
        with self._lock:
            if self._inflate is not None:
                self._inflate.close()
                self._inflate = None
            self.compression = Compression.NONE
            self.index = RecordIndex()
            self.problems = []
            self._stream_clean = False
            self._stream_end = 0
        return True

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
        """Batch verification of a plain file (records whose data CRC is checkable).

        Small records: windows of up to VERIFY_WINDOW bytes (and ``every``
        records), checked at once by :func:`verify_spans`. Large ones: each
        record's data read by itself, so that it is copied once, not twice.
        The length CRCs are checked too (a cached index was made without
        reading them again).
        """
        offsets = self.index.offsets().astype(np.int64)
        statuses = self.index.statuses()
        # No checkable record reaches past the start of the next one (or the end of the file).
        bounds = np.append(offsets[1:], np.int64(self.file_size))
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
                    ok, stored, computed, length_ok = self._verify_window(idx, offsets, int(starts[a]), int(ends[b - 1]))
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
                self.index.set_statuses(idx, status)
                for j in np.flatnonzero(~ok).tolist():
                    i = int(idx[j])
                    found.append(data_crc_problem(i, int(offsets[i]), int(stored[j]), int(computed[j])))
                last = int(idx[-1])
                yield IndexProgress(last + 1, int(offsets[last]), self.file_size, len(self.problems) + len(found))
                a = b

        m = checkable.shape[0]
        half = m // 2 if self.fork_halves and self.file_size >= SPLIT_BYTES else m
        child = beside(_second_half, windows, half, m, self.index, checkable, found) if half < m else None
        try:
            yield from windows(0, half if child is not None else m)
        except BaseException:
            if child is not None:
                child.cancel()
            raise
        if child is not None:
            done, rest = child.result()
            if done:
                self.index.set_statuses(checkable[half:], rest[0])
                found += rest[1]
            else:  # the child failed (the file changed?): check its half here, which says why
                yield from windows(half, m)
        with self._lock:
            known = {(p.offset, p.kind) for p in self.problems}
            fresh = [p for p in found if (p.offset, p.kind) not in known]
            self.problems = sorted(self.problems + fresh, key=lambda p: p.offset)

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
        if start + length + 4 > self.file_size:
            raise FileChangedError(f"the file changed while reading: {self.path}: "
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

    def verify(self) -> list[Problem]:
        for _ in self.verify_iter():
            pass
        return self.problems

    # -- random access ----------------------------------------------------
    def __len__(self) -> int:
        return len(self.index)

    def _data_end(self) -> int:
        return self.file_size if self.compression is Compression.NONE else self._stream_end

    def _read_at(self, pos: int, n: int) -> bytes:
        """Exactly ``min(n, file_size - pos)`` bytes of the (plain) file at ``pos``.

        Raises FileChangedError when the file is shorter than when it was
        opened, FileAccessError (one line) for any other read error.
        """
        want = min(n, self.file_size - pos)
        if want <= 0:
            return b""
        h = self._handle or self._fd()
        try:
            if want >= CHECK_SIZE_FROM and os.fstat(h.fd).st_size < self.file_size:
                self._changed(h.fd)
            data = _pread(h.fd, want, pos)
            if len(data) < want:
                data = self._read_rest(h.fd, data, want, pos)
            return data
        except TFRecordError:
            raise
        except OSError as exc:
            raise FileAccessError(_describe_os_error(self.path, exc)) from None

    def _read_rest(self, fd: int, data: bytes, want: int, pos: int) -> bytes:
        """After a short pread: the rest (one pread gives at most ~2 GiB), or FileChangedError."""
        parts = [data]
        got = len(data)
        while got < want:
            more = _pread(fd, want - got, pos + got)
            if not more:
                self._changed(fd)
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def _changed(self, fd: int):
        try:
            now = f"{os.fstat(fd).st_size} bytes"
        except OSError:
            now = "unknown"
        raise FileChangedError(f"the file changed while reading: {self.path} (was {self.file_size} bytes, now {now})")

    def _bytes(self, pos: int, size: int) -> bytes:
        if self.compression is Compression.NONE:
            return self._read_at(pos, size)
        if self._closed:
            raise FileAccessError(f"{self.path} was closed")
        with _io_errors(self.path):
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
        with _open_file(self.path) as f, _io_errors(self.path):
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
        if status is RecordStatus.TRUNCATED:
            offset = self.index.offset(i)
            (length,) = LENGTH.unpack_from(self._bytes(offset, HEADER_SIZE))
            data = self._bytes(offset + HEADER_SIZE, max(0, self._data_end() - offset - HEADER_SIZE))
            return RecordData(RecordInfo(i, offset, length, status), data, None, None)
        if self.compression is Compression.NONE:
            offset, nxt = self.index.bounds(i)
            length, data, stored = self._plain_record(i, offset, (nxt if nxt >= 0 else self.file_size) - offset)
        else:
            offset = self.index.offset(i)
            length, data, stored = self._stream_record(i, offset)
        computed = masked_crc(data) if self.check_crc else None
        if computed is not None and status in (RecordStatus.UNCHECKED, RecordStatus.OK, RecordStatus.DATA_CRC):
            new = RecordStatus.OK if computed == stored else RecordStatus.DATA_CRC
            if new is not status:
                self.index.set_status(i, new)
                if new is RecordStatus.DATA_CRC:
                    self._add_problem(data_crc_problem(i, offset, stored, computed))
                status = new
        return RecordData(RecordInfo(i, offset, length, status), data, stored, computed)

    def _plain_record(self, i: int, offset: int, span: int) -> tuple[int, bytes, int]:
        """(length, data, stored data CRC) of record ``i`` of a plain file, ``span`` bytes
        before the next record (or the end).

        A record with little room comes in one read of everything up to the
        next; a larger one in three (header, data, CRC), so that its data is
        not copied again out of a larger buffer.
        """
        if OVERHEAD <= span <= ONE_READ:
            h = self._handle
            try:  # the common case, inline; anything unusual goes through _read_at, which says what
                buf = _pread(h.fd, span, offset) if h is not None else b""
            except OSError:
                buf = b""
            if len(buf) != span:
                buf = self._read_at(offset, span)
            (length,) = LENGTH.unpack_from(buf)
            if OVERHEAD + length <= span:
                end = HEADER_SIZE + length
                return length, buf[HEADER_SIZE:end], CRC.unpack_from(buf, end)[0]
        (length,) = LENGTH.unpack_from(self._read_at(offset, HEADER_SIZE).ljust(HEADER_SIZE, b"\0"))
        data = self._read_at(offset + HEADER_SIZE, length)
        footer = self._read_at(offset + HEADER_SIZE + length, 4)
        if len(data) < length or len(footer) < 4:
            raise FileChangedError(f"the file changed while reading: {self.path}: "
                                   f"record {i} at offset {offset} no longer fits in it")
        return length, data, CRC.unpack(footer)[0]

    def _stream_record(self, i: int, offset: int) -> tuple[int, bytes, int]:
        """(length, data, stored data CRC) of record ``i`` of a GZIP or ZLIB file."""
        (length,) = LENGTH.unpack_from(self._bytes(offset, HEADER_SIZE))
        body = self._bytes(offset + HEADER_SIZE, length + 4)
        if len(body) < length + 4:
            raise TruncatedRecordError(f"truncated record: {self.path}: record {i} at offset {offset}: "
                                       "the stream ends inside it", offset=offset, index=i)
        return length, body[:length], CRC.unpack_from(body, length)[0]

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


def _second_half(windows, a: int, m: int, index: RecordIndex, checkable: np.ndarray, found: list) -> tuple:
    """A forked child's share of :meth:`TFRecordFile._verify_plain`: the statuses and problems it found."""
    for _ in windows(a, m):
        pass
    return index.statuses()[checkable[a:m]], found


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
