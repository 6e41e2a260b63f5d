"""Open a TFRecord file, index it, and read any record at random.

A :class:`TFRecordFile` is a byte source (a local file or a remote object,
:mod:`codec.sources.byte_sources`) with an index over it; its verify pass is
a :class:`codec.sources.verification.Verifier`. Anything but a regular file
(a FIFO, a device, a socket) is refused before it is opened for reading, so
that nothing blocks on it.
"""
from __future__ import annotations

import os
import threading
from typing import Iterator

from codec.errors import (
    CorruptRecordError,
    FileAccessError,
    FileChangedError,
    TruncatedRecordError,
    UsageError,
)
from codec.format.crc import masked_crc
from codec.format.framing import CRC, HEADER_SIZE, LENGTH, Compression, Problem, ProblemKind, RecordInfo, RecordStatus
from codec.index import cache as index_cache
from codec.index.halves import scan_halves
from codec.index.record_index import RecordIndex
from codec.index.scan import PROGRESS_BYTES, IndexProgress, Scanner, data_crc_problem
from codec.index.scan_sources import PlainSource, StreamSource
from codec.index.small_files import WalkedFile
from codec.sources.byte_sources import ByteSource, LocalBytes, RemoteBytes
from codec.sources.following import Follower
from codec.sources.one_file import OneFile
from codec.sources.pinned import PinnedRecord
from codec.sources.protocol import RecordData
from codec.sources.verification import Verifier
from codec.sources.zran_reads import ZranIndexes
from codec.storage.inflate import InflateReader, InflateScanner, StreamDamage, prefetch
from codec.storage.opening import SNIFF_WINDOW, io_errors, plain_records, sniff
from codec.storage.zran import ZranReader, zran_available


class TFRecordFile(OneFile):
    """A TFRecord file (plain, GZIP or ZLIB) with an offset index.

    Opening sniffs the compression; :meth:`index_iter` (or :meth:`build_index`)
    finds the records. ``len()``, ``[i]``, slices and iteration work on what
    is indexed so far, also while another thread runs the index pass.
    ``f[i]`` checks the data CRC unless ``check_crc=False`` and raises
    :class:`CorruptRecordError` for a damaged record, as TensorFlow would;
    :meth:`read` never raises for damage and says what it found instead.
    With ``fork_halves`` a pass over a plain file of 32 MB or more runs in two
    halves, the second in a forked child (:mod:`codec.index.halves`): for the
    command line, never in a process with threads. :meth:`start_follow` and
    :meth:`grow_iter` follow a file still being written (a :class:`codec.sources.following.Follower`).
    """

    note = None  # (a codec.sources.protocol.RecordSource: a file's records say where they are by their offsets)
    payload = None  # how its records decode (codec.decode.payloads); None: by the kind rule
    labels = None  # class names of label ids (codec.datasets.label_maps.LabelNames), when known
    unsaved = False
    modified = False
    statuses_stored = True

    def __init__(self, path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True,
                 fork_halves: bool = False, info: dict | None = None, walked: WalkedFile | None = None,
                 remote: RemoteBytes | None = None):
        """``walked``: a small plain file already read and indexed whole (:mod:`codec.index.small_files`):
        nothing is opened now (the file is as if released; a read reopens it and checks it unchanged).
        ``remote``: the URL's object already opened (its first block read and kept)."""
        self.path = os.fspath(path)
        self.check_crc = check_crc
        self.byte_source: ByteSource
        if walked is not None:
            self.compression = Compression.NONE
            self.byte_source = LocalBytes(self.path, walked.size, walked.mtime_ns, walked.identity, None)
            self.use_cache = False
        elif "://" in self.path and _is_url(self.path):
            self.byte_source = remote if remote is not None else RemoteBytes(self.path, info)
            self.use_cache = use_cache and self.byte_source.size >= index_cache.MIN_CACHED_BYTES
            # the compression from the index cache when it knows this version of the object, else sniffed
            entry = index_cache.open_entry(self.path, self.file_size, self.version) if self.use_cache else None
            if entry is not None:
                with entry:
                    self.compression = entry.compression
            else:
                self.compression = sniff(self.byte_source.remote.read, self.path)
        else:
            self.byte_source, fd = LocalBytes.open(self.path)
            try:
                self.compression = sniff(fd, self.path)
            except BaseException:
                self.byte_source.close()
                raise
            # A small file indexes faster than its cache entry is written or read (a set of 10,000 shards)
            self.use_cache = use_cache and self.byte_source.size >= index_cache.MIN_CACHED_BYTES
        self.fork_halves = fork_halves and not self.byte_source.is_remote  # async filesystems are not fork-safe
        self.index = RecordIndex()
        self.problems: list[Problem] = []
        self.indexed = False
        self.verified = False
        self._scan_verified = False  # the last pass that began checked data CRCs as it went
        self.lock = threading.RLock()
        self.stream_reader: InflateReader | ZranReader | None = None
        self._zran = ZranIndexes(self.path, self.byte_source)
        self._stream_clean = False  # the compressed stream had no damage (a zran index is possible)
        self.stream_end = 0  # uncompressed bytes available (compressed files)
        self.stream_state: tuple | None = None  # (decompressor, in, out, leftover) where the index pass's stream stopped
        self._follower: Follower | None = None
        if walked is not None:
            status = RecordStatus.OK if walked.verified else RecordStatus.UNCHECKED
            self.index = RecordIndex.of(walked.offsets, status)
            self.indexed = True
            self.verified = walked.verified

    # -- lifetime ---------------------------------------------------------
    def release(self) -> bool:
        """Close the OS handles but keep the index; the next read reopens the file.

        Returns False (and keeps them) while a pass is running over the file.
        """
        with self.lock:
            if not self.byte_source.release():
                return False
            if self.stream_reader is not None:
                self.stream_reader.close()
            return True

    def close(self) -> None:
        """Close the file; a pass still running on another thread fails at its next read."""
        with self.lock:
            self.byte_source.close()
            if self.stream_reader is not None:
                self.stream_reader.close()

    def __enter__(self) -> TFRecordFile:
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

    def build_index(self, *, verify: bool = False) -> TFRecordFile:
        for _ in self.index_iter(verify=verify):
            pass
        return self

    def resume_iter(self, *, verify: bool = False) -> Iterator[IndexProgress]:
        """Go on with an index pass that was stopped (its generator closed), yielding progress.

        A plain file (local or remote) is walked on from the end of the last record found: the
        records before it are kept, not read again. A compressed stream cannot be entered midway
        without its inflater's state: it is indexed again from its start. Indexed already: done.
        """
        if self.indexed or self.compression is not Compression.NONE or not len(self.index):
            yield from self.index_iter(verify=verify)
            return
        start = self.record_info(len(self.index) - 1).end
        self.problems[:] = [p for p in self.problems if p.offset < start]  # what lies after is found again
        verified = verify and self._scan_verified
        with io_errors(self.path), self.holding(), self.streaming():
            source = PlainSource(self.byte_source.read_at, self.file_size,
                                 hop_span=PROGRESS_BYTES if self.byte_source.is_remote else 0)
            yield from Scanner(source, self.index, self.problems, self.file_size, verify=verify).run(start)
        self._finish_scan(verified)

    def _scan(self, verify: bool) -> Iterator[IndexProgress]:
        self.index = RecordIndex()
        self.problems = []
        self._scan_verified = verify  # (a pass resumed with verify checked what came before too)
        with io_errors(self.path):
            if self.compression is Compression.NONE:
                yield from self._scan_plain(verify)
            else:
                yield from self._scan_stream(verify)
                if not len(self.index) and not self._stream_clean and self._plain_after_all():
                    yield from self._scan_plain(verify)
        self._finish_scan(verify)

    def _finish_scan(self, verify: bool) -> None:
        """The pass reached the end: the index is whole (and kept in the cache)."""
        self.problems.sort(key=lambda p: p.offset)
        self.indexed = True
        self.verified = verify
        if self.use_cache:
            self.save_index()
            if self.compression is not Compression.NONE:
                index_cache.save_zran(self.path, self.file_size, self.version, None, 0)  # drop a stale one
                if self._zran_possible():
                    self._zran.job = self._zran.build(self.compression, self.stream_end)

    def _scan_plain(self, verify: bool) -> Iterator[IndexProgress]:
        read_at = self.byte_source.read_at
        with self.holding():
            halves = scan_halves(read_at, self.file_size, verify) if self.fork_halves else None
            if halves is not None:
                self.index, self.problems = halves
                yield IndexProgress(len(self.index), self.file_size, self.file_size, 0, True)
                return
            # (a remote file: chunks fetched ahead of the walk, dropped behind it)
            with self.streaming():
                source = PlainSource(read_at, self.file_size, hop_span=PROGRESS_BYTES if self.byte_source.is_remote else 0)
                yield from Scanner(source, self.index, self.problems, self.file_size, verify=verify).run()

    def _plain_after_all(self) -> bool:
        """A GZIP or ZLIB start whose stream gave no record: is it a plain file whose first header
        happens to begin like one? Then the file is read as plain from now on."""
        if not plain_records(self.byte_source.head(SNIFF_WINDOW)):
            return False
        with self.lock:
            if self.stream_reader is not None:
                self.stream_reader.close()
                self.stream_reader = None
            self.compression = Compression.NONE
            self.index = RecordIndex()
            self.problems = []
            self._stream_clean = False
            self.stream_end = 0
        return True

    def _scan_stream(self, verify: bool) -> Iterator[IndexProgress]:
        f = self.byte_source.open_stream(streaming=True)
        chunks = None
        self._stream_clean = False
        try:
            inflater = InflateScanner(f, self.compression)
            self.stream_reader = InflateReader(self.path, self.compression, inflater.checkpoints, 0,
                                          self.byte_source.checked_opener())
            chunks = prefetch(inflater.chunks())
            source = StreamSource(chunks, lambda: inflater.in_pos)
            scanner = Scanner(source, self.index, self.problems, self.file_size, verify=verify)
            for progress in scanner.run():
                self.stream_reader.checkpoints = inflater.checkpoints
                self.stream_reader.total_out = inflater.out_pos
                yield progress
            self.stream_reader.checkpoints = inflater.checkpoints
            self.stream_reader.total_out = inflater.out_pos
            self.stream_end = inflater.out_pos
            self.stream_state = (inflater.end_state, inflater.in_pos, inflater.out_pos, inflater.leftover)
            for k, damage in enumerate(inflater.damages):
                self.add_stream_damage(damage, last=k == len(inflater.damages) - 1)
            if not inflater.damages:
                self._stream_clean = True
        finally:
            if chunks is not None:
                chunks.close()  # stops the decompressing thread before its file closes
            f.close()

    def add_stream_damage(self, damage: StreamDamage, last: bool = True) -> None:
        """Fold one damage of the compressed stream into the problem list (one entry); the
        stream's last damage may name why the last record is cut short."""
        kind = ProblemKind(damage.kind)
        prev = self.problems[-1] if self.problems and last else None
        if prev is not None and prev.kind is ProblemKind.TRUNCATED and prev.offset + prev.size >= damage.out_pos:
            self.problems[-1] = Problem(prev.index, prev.offset, kind, f"{prev.detail}: {damage.detail}",
                                        size=prev.size, compressed_offset=damage.compressed_offset,
                                        expected=prev.expected, found=prev.found)
        else:
            self.problems.append(Problem(None, damage.out_pos, kind, damage.detail,
                                         compressed_offset=damage.compressed_offset))

    def _load_cache(self) -> bool:
        cached = index_cache.load(self.path, self.file_size, self.version, self.compression)
        if cached is None:
            return False
        self.index, self.problems, self.verified, self.stream_end = cached
        self.indexed = True
        # Only damage to the compressed stream itself carries a compressed offset.
        self._stream_clean = all(p.compressed_offset is None for p in self.problems)
        if self.compression is not Compression.NONE:
            self.stream_reader = None  # a zran index from the cache, or checkpoints rebuilt on first random read
        return True

    def save_index(self) -> None:
        """Keep the index in the cache (unless the file is followed, or remote and damaged)."""
        if self.following:
            return  # its end is unfinished: the next open reads it again
        if self.byte_source.is_remote and self.problems:
            # Damage seen through a network may be the server's or the connection's, not the object's:
            # the next open reads it again instead of trusting an index of those bytes.
            index_cache.invalidate(self.path)
            return
        index_cache.save(self.path, self.file_size, self.version, self.compression,
                         self.index, self.problems, self.verified, self.stream_end)

    # -- random access ----------------------------------------------------
    @property
    def data_end(self) -> int:
        """Where the records' bytes end: the file's size, or a compressed file's uncompressed size."""
        return self.file_size if self.compression is Compression.NONE else self.stream_end

    def _bytes(self, pos: int, size: int) -> bytes:
        if self.compression is Compression.NONE:
            return self.byte_source.read_at(pos, size)
        if self.byte_source.closed:
            raise FileAccessError(f"{self.path} was closed")
        with io_errors(self.path):
            reader = self._inflater()
            if not isinstance(reader, ZranReader):
                return reader.read(pos, size)
            try:
                return reader.read(pos, size)
            except Exception:  # noqa: BLE001 - zran failed: fall back to the zlib checkpoints
                with self.lock:
                    if self.stream_reader is reader:
                        self.stream_reader = self._zran.checkpoints(self.compression)
                return self._inflater().read(pos, size)

    def _inflater(self) -> InflateReader | ZranReader:
        with self.lock:
            if self.stream_reader is None:
                self.stream_reader = self._cached_zran() or self._zran.checkpoints(self.compression)
            return self.stream_reader

    def _zran_possible(self) -> bool:
        """A GZIP or ZLIB file whose stream is undamaged, with the cache on and indexed_gzip importable."""
        return (self.compression is not Compression.NONE and self.use_cache and zran_available()
                and self._stream_clean)

    def wait_for_cache(self) -> None:
        """Block until background cache work (a GZIP or ZLIB file's zran index) has finished."""
        self._zran.wait()

    def _cached_zran(self) -> ZranReader | None:
        """After a cache load of an undamaged GZIP or ZLIB file: random reads through a zran index."""
        return self._zran.reader(self.compression, self.stream_end) if self._zran_possible() else None

    def read_bytes(self, offset: int, size: int) -> bytes:
        """Raw bytes of the (uncompressed) stream, e.g. for a hex view."""
        return self._bytes(offset, size)

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
        if status in (RecordStatus.TRUNCATED, RecordStatus.WRITING):
            offset = self.index.offset(i)
            (length,) = LENGTH.unpack_from(self._bytes(offset, HEADER_SIZE))
            data = self._bytes(offset + HEADER_SIZE, max(0, self.data_end - offset - HEADER_SIZE))
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
                    self.add_problem(data_crc_problem(i, offset, stored, computed))
                status = new
        return RecordData(RecordInfo(i, offset, length, status), data, stored, computed)

    def _plain_record(self, i: int, offset: int, span: int) -> tuple[int, bytes, int]:
        """(length, data, stored data CRC) of record ``i`` of a plain file, ``span`` bytes
        before the next record (or the end).

        A record with little room comes in one read of everything up to the
        next (:meth:`codec.sources.byte_sources.LocalBytes.record`); a larger one in three
        (header, data, CRC), so that its data is not copied again out of a larger buffer.
        """
        got = self.byte_source.record(i, offset, span)
        if got is not None:
            return got
        read_at = self.byte_source.read_at
        (length,) = LENGTH.unpack_from(read_at(offset, HEADER_SIZE).ljust(HEADER_SIZE, b"\0"))
        data = read_at(offset + HEADER_SIZE, length)
        footer = read_at(offset + HEADER_SIZE + length, 4)
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

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(len(self)))]
        rec = self.read(key)
        if rec.status is RecordStatus.WRITING:
            raise TruncatedRecordError(f"record {rec.info.index} of {self.path} at offset {rec.info.offset} "
                                       "is still being written", offset=rec.info.offset, index=rec.info.index)
        if self.check_crc and rec.status.damaged and rec.status is not RecordStatus.LENGTH_CRC:
            where = f"{self.path}: record {rec.info.index} at offset {rec.info.offset}"
            if rec.status is RecordStatus.TRUNCATED:
                raise TruncatedRecordError(f"truncated record: {where}", offset=rec.info.offset, index=rec.info.index)
            raise CorruptRecordError(
                f"corrupted record: {where}: data CRC stored {rec.stored_crc:#010x}, computed {rec.computed_crc:#010x}",
                offset=rec.info.offset, index=rec.info.index)
        return rec.data

    def intact(self) -> Iterator[tuple[int, bytes]]:
        """(index, data) of every record whose data CRC holds, checked now."""
        for i in range(len(self)):
            rec = self.read(i)
            if rec.status.data_intact and (not self.check_crc or rec.stored_crc == rec.computed_crc):
                yield i, rec.data

    def pinned(self, i: int) -> PinnedRecord:
        """Record ``i`` for a detail view."""
        return PinnedRecord(self, i, self._check_index(i), None)

    # -- following a file still being written (codec.sources.following) ------------
    @property
    def following(self) -> bool:
        return self._follower is not None

    @property
    def complete_records(self) -> int:
        """Records whose bytes are all there: all of them, less one being written."""
        n = len(self.index)
        return n - 1 if n and self.index.status(n - 1) is RecordStatus.WRITING else n

    def writing(self) -> RecordInfo | None:
        """The record being written (its header has arrived, not all its bytes), or None."""
        n = len(self.index)
        return None if n == self.complete_records else self.record_info(n - 1)

    def start_follow(self) -> None:
        """Take the file as still being written (indexing it first if needed): its unfinished end is
        "being written" from now on, not a problem. Then call :meth:`grow_iter` as often as wanted.

        Raises UsageError for a URL, FollowStopped for a compressed stream damaged before its end.
        """
        if self._follower is not None:
            return
        if not isinstance(self.byte_source, LocalBytes):
            raise UsageError(f"cannot follow {self.path}: only a local file can be followed, not a URL")
        if not self.indexed:
            self.build_index()
        self._follower = Follower(self, self.byte_source)

    def grow_iter(self) -> Iterator[IndexProgress]:
        """Index what was appended since the last look, yielding progress (nothing when the file has
        not grown). Raises FollowStopped when the file shrank, was replaced, removed or rewritten."""
        if self._follower is None:
            raise UsageError(f"{self.path} is not being followed")
        yield from self._follower.grow_iter()

    def grow(self) -> int:
        """:meth:`grow_iter` run to its end; the number of records complete now."""
        for _ in self.grow_iter():
            pass
        return self.complete_records

    def stop_follow(self) -> Iterator[IndexProgress]:
        """Stop following: the end is read once more as an ordinary open reads it (a record cut
        short is truncated then, a problem). A generator (the end may be large): run it through."""
        if self._follower is not None:
            yield from self._follower.stop_follow()

    def end_follow(self) -> None:
        """Stop following at once, leaving the index as it is (after an error: :meth:`stop_follow` reads
        the end again)."""
        with self.lock:
            if self._follower is not None:
                self._follower = None
                self.byte_source.let_go()

    # -- the verify pass (codec.sources.verification) ---------------------------
    def verify_iter(self, every: int = 1 << 14, *, keep_rows: bool = False) -> Iterator[IndexProgress]:
        """Check every record's data CRC (indexing first if needed); see :meth:`Verifier.run`."""
        return Verifier(self).run(every, keep_rows=keep_rows)

    def verify(self) -> list[Problem]:
        for _ in self.verify_iter():
            pass
        return self.problems

    def replace_index(self, index: RecordIndex, problems: list[Problem]) -> None:
        """Swap in an index made again, with its problems (sorted here)."""
        with self.lock:
            self.index, self.problems = index, sorted(problems, key=lambda p: p.offset)

    def add_problems(self, found: list[Problem]) -> None:
        """Add the problems not known yet, keeping the list sorted (swapped whole: readers see a consistent list)."""
        with self.lock:
            known = {(p.offset, p.kind) for p in self.problems}
            fresh = [p for p in found if (p.offset, p.kind) not in known]
            self.problems = sorted(self.problems + fresh, key=lambda p: p.offset)


def _is_url(path: str) -> bool:
    from codec.storage.remote import is_url

    return is_url(path)


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


__all__ = ["TFRecordFile", "open_tfrecord"]
