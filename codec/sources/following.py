"""Following a file that is still being written (``tail -f``): the index grows with the file.

A :class:`Follower` follows a :class:`codec.sources.tfrecord_file.TFRecordFile` through
what it declares (:class:`Followable`); ``TFRecordFile.start_follow``
takes the file as unfinished: what its end holds that is not a whole record is
"being written", not damage (a record whose header holds but whose bytes run
past the end is indexed with status ``WRITING``; a partial header is not
indexed yet). Each :meth:`Follower.grow_iter` indexes what was appended since,
resuming from the last complete record, never from the start: a plain file
is read from there, a GZIP or ZLIB file is inflated on from where its stream
stopped (zlib's decompressor goes on with the new bytes), as far as it
inflates. A file that shrank, was replaced or rewritten stops the following
with :class:`FollowStopped`. Damage with an intact record after it is still
damage, and is reported as an ordinary open reports it.
"""
from __future__ import annotations

import functools
import os
import threading
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

import numpy as np

from codec.errors import FileChangedError, FollowStopped, TFRecordError
from codec.format.framing import Compression, Problem, ProblemKind, RecordInfo, RecordStatus
from codec.index.record_index import RecordIndex
from codec.index.scan import IndexProgress, Scanner
from codec.index.scan_sources import PlainSource
from codec.sources.byte_sources import LocalBytes
from codec.storage.file_identity import open_same_file
from codec.storage.inflate import (
    CHECKPOINT_EVERY,
    GZIP_MAGIC,
    OUT_CAP,
    READ_BLOCK,
    Checkpoint,
    InflateReader,
    InflateScanner,
    StreamDamage,
    wbits_for,
)
from codec.storage.opening import open_file, sniff
from codec.storage.zran import ZranReader

MARK = 64  # bytes before the end of what was read, compared at each growth: a rewritten file differs there


@dataclass
class _FollowState:
    resume: int  # the (uncompressed) offset the next pass starts at: the record being written, or the end
    held: bool  # the index's last entry is the record at ``resume`` (WRITING): the next pass updates it
    identity: tuple[int, int]  # (st_dev, st_ino) of the file followed
    mark: tuple[int, bytes]  # (offset, bytes) of the file just before the end of what was read
    stream: StreamGrowth | None = None  # a GZIP or ZLIB file's decompressor at the end of its stream
    rescan: bool = True  # look at the end again even if the size has not changed (just started)


class StreamGrowth:
    """A GZIP or ZLIB stream inflated on as the file grows: the decompressor where the stream stopped.

    :meth:`grow` feeds it the bytes appended since and counts what they
    inflate to (the output is not kept: the index pass reads it back through
    ``checkpoints``, to which it adds one every ``CHECKPOINT_EVERY`` bytes).
    A GZIP member that ends may be followed by another; bytes after a ZLIB
    stream's end, or that do not inflate, are damage (:class:`StreamDamage`).
    """

    def __init__(self, compression: Compression, state, in_pos: int, out_pos: int, leftover: bytes,
                 checkpoints: list[Checkpoint]) -> None:
        self.compression = compression
        self.d = state
        self.in_pos = in_pos  # compressed bytes consumed
        self.out_pos = out_pos  # uncompressed bytes produced
        self.pending = leftover  # read after a member's end, too few to tell what they start
        self.checkpoints = checkpoints
        self._last_ckpt = checkpoints[-1].out_pos if checkpoints else 0

    def grow(self, read_at: Callable[[int, int], bytes]) -> None:
        """Inflate the file's bytes after those read so far (``read_at(pos, n)``: the raw file)."""
        pos = self.in_pos + len(self.pending)
        while True:
            more = read_at(pos, READ_BLOCK)
            pos += len(more)
            data, self.pending = self.pending + more, b""
            while data:
                if self.d.eof:
                    if self.compression is Compression.GZIP and GZIP_MAGIC.startswith(bytes(data[:2])):
                        if len(data) < len(GZIP_MAGIC):
                            self.pending = bytes(data)
                            break
                        self.d = zlib.decompressobj(wbits_for(self.compression))  # another member
                        self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, self.d.copy()))
                        self._last_ckpt = self.out_pos
                        continue
                    raise StreamDamage("garbage", self.in_pos, self.out_pos,
                                       f"bytes after the end of the {self._name} stream at compressed byte "
                                       f"{self.in_pos}")
                try:
                    out = self.d.decompress(data, OUT_CAP)
                except zlib.error as exc:
                    raise StreamDamage("decompress", self.in_pos, self.out_pos,
                                       f"{self._name} stream damaged near compressed byte {self.in_pos}: "
                                       f"{exc}") from None
                left = self.d.unused_data if self.d.eof else self.d.unconsumed_tail
                self.in_pos += len(data) - len(left)
                self.out_pos += len(out)
                data = left
                if self.out_pos - self._last_ckpt >= CHECKPOINT_EVERY and not self.d.eof and not left:
                    self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, self.d.copy()))
                    self._last_ckpt = self.out_pos
            if not more:
                return

    @property
    def _name(self) -> str:
        return self.compression.value.upper()


class _GrowingIndex:
    """The index as a growth pass sees it: a held last entry (the record that was being written)
    is left out until the pass indexes its offset again, then updated in place, so readers on
    other threads never see the index shrink."""

    def __init__(self, index, held: bool) -> None:
        self._index = index
        self._held = len(index) - 1 if held else None

    def __len__(self) -> int:
        return len(self._index) - (self._held is not None)

    def status(self, i: int) -> RecordStatus:
        return self._index.status(i)

    def offset(self, i: int) -> int:
        return self._index.offset(i)

    def set_status(self, i: int, status: RecordStatus) -> None:
        self._index.set_status(i, status)

    def append(self, offsets: np.ndarray | list[int], status: np.ndarray | int = RecordStatus.UNCHECKED) -> None:
        offsets = np.asarray(offsets, dtype=np.uint64)
        if self._held is not None and offsets.shape[0]:
            k, self._held = self._held, None
            if int(offsets[0]) != self._index.offset(k):
                raise FileChangedError(f"the record at offset {self._index.offset(k)} changed while it was written")
            first = status if isinstance(status, int) else status[0]
            self._index.set_status(k, RecordStatus(int(first)))
            offsets = offsets[1:]
            if not isinstance(status, int):
                status = status[1:]
        if offsets.shape[0]:
            self._index.append(offsets, status)


class Followable(Protocol):
    """What following reads and sets of a file: a :class:`codec.sources.tfrecord_file.TFRecordFile`."""

    path: str
    compression: Compression
    index: RecordIndex
    problems: list[Problem]
    verified: bool
    lock: threading.RLock
    stream_reader: InflateReader | ZranReader | None  # a GZIP or ZLIB file's random reader
    stream_end: int  # uncompressed bytes available
    stream_state: tuple | None  # (decompressor, in, out, leftover) where the index pass's stream stopped

    @property
    def file_size(self) -> int: ...

    def record_info(self, i: int) -> RecordInfo: ...

    def read_bytes(self, offset: int, size: int) -> bytes: ...

    def add_problem(self, problem: Problem) -> None: ...

    def add_stream_damage(self, damage: StreamDamage, last: bool = True) -> None: ...

    def end_follow(self) -> None: ...


class Follower:
    """Follows one local file as it is written (see the module's docstring); made by
    :meth:`codec.sources.tfrecord_file.TFRecordFile.start_follow`, which holds the file open meanwhile.

    Raises FollowStopped for a compressed stream damaged before its end.
    """

    def __init__(self, f: Followable, local: LocalBytes) -> None:
        self.f = f
        self.byte_source = local
        stream = self._stream_growth() if f.compression is not Compression.NONE else None
        if isinstance(f.stream_reader, InflateReader):
            f.stream_reader.reopen_with(functools.partial(open_same_file, f.path, local.identity, growing=True))
        local.hold()  # never released while followed: a reopened file would have to be the same size
        with f.lock:
            resume, held = self._unfinished_end()
            if held:
                f.index.set_status(len(f.index) - 1, RecordStatus.WRITING)
            st = local.stat()
            self.state = _FollowState(resume, held, (st.st_dev, st.st_ino), self._mark(), stream)
            f.problems = [p for p in f.problems if p.offset < resume]

    def _unfinished_end(self) -> tuple[int, bool]:
        """Where the end's unfinished part starts: the last record if it ran past the end
        (held), else the end of the last record; what is after it is looked at again."""
        n = len(self.f.index)
        if not n:
            return 0, False
        if self.f.index.status(n - 1) in (RecordStatus.TRUNCATED, RecordStatus.WRITING):
            return self.f.index.offset(n - 1), True
        return self.f.record_info(n - 1).end, False

    def _stream_growth(self) -> StreamGrowth:
        """The decompressor at the end of the stream: kept from the index pass, else found by one more
        pass (after a cache load, or when random reads went through the zran index)."""
        state = self.f.stream_state
        inflate = self.f.stream_reader
        if state is None or not isinstance(inflate, InflateReader):
            with open_file(self.f.path) as f:
                inflater = InflateScanner(f, self.f.compression)
                for _ in inflater.chunks():
                    pass
            inflate = InflateReader(self.f.path, self.f.compression, inflater.checkpoints, inflater.out_pos,
                                    self.byte_source.opener())
            state = (inflater.end_state, inflater.in_pos, inflater.out_pos, inflater.leftover)
            with self.f.lock:
                if self.f.stream_reader is not None:
                    self.f.stream_reader.close()
                self.f.stream_reader = inflate
                self.f.stream_end = inflater.out_pos
        d, in_pos, out_pos, leftover = state
        if d is None or (leftover and not (d.eof and self.f.compression is Compression.GZIP
                                           and GZIP_MAGIC.startswith(leftover[:2]))):
            raise FollowStopped(f"cannot follow {self.f.path}: its {self.f.compression.value.upper()} stream is "
                                f"damaged at compressed byte {in_pos}, nothing after that can be read")
        return StreamGrowth(self.f.compression, d if d.eof else d.copy(), in_pos, out_pos, leftover, inflate.checkpoints)

    def grow_iter(self) -> Iterator[IndexProgress]:
        """Index what was appended since the last look, yielding progress (nothing when the file has
        not grown). Raises FollowStopped when the file shrank, was replaced, removed or rewritten."""
        state = self.state
        try:
            st = os.stat(self.f.path)
        except FileNotFoundError:
            raise self._stop(f"{self.f.path} was removed") from None
        except OSError as exc:
            raise self._stop(f"cannot read {self.f.path}: {exc.strerror or exc}") from None
        if (st.st_dev, st.st_ino) != state.identity:
            raise self._stop(f"{self.f.path} was replaced by another file")
        if st.st_size < self.f.file_size:
            raise self._stop(f"{self.f.path} shrank from {self.f.file_size:,} to {st.st_size:,} bytes")
        if st.st_size == self.f.file_size and not state.rescan:
            return
        at, seen = state.mark
        if self.byte_source.read_at(at, len(seen)) != seen:
            raise self._stop(f"{self.f.path} was rewritten (its bytes at offset {at:,} changed)")
        state.rescan = False
        with self.f.lock:
            self.byte_source.grew(st)  # the version now read: a later reopen compares with it
        if not len(self.f.index) and not state.resume and state.stream is None:
            self._sniff_again(state)
        yield from self._grow_pass(state, open_end=True)
        state.mark = self._mark()

    def _grow_pass(self, state: _FollowState, *, open_end: bool) -> Iterator[IndexProgress]:
        """The index pass from ``state.resume`` to the end of the data as it is now."""
        read: Callable[[int, int], bytes]
        if state.stream is not None:
            try:
                state.stream.grow(self.byte_source.read_at)
            except StreamDamage as damage:
                self.f.add_stream_damage(damage)
                raise self._stop(f"{self.f.path}: {damage.detail}") from None
            finally:
                with self.f.lock:
                    self.f.stream_end = state.stream.out_pos
                    if self.f.stream_reader is not None:
                        self.f.stream_reader.total_out = state.stream.out_pos
            size, read = state.stream.out_pos, self.f.read_bytes  # (the stream's uncompressed bytes)
        else:
            size, read = self.f.file_size, self.byte_source.read_at
        found: list[Problem] = []
        index = _GrowingIndex(self.f.index, state.held)
        scanner = Scanner(PlainSource(read, size), index, found, size, verify=self.f.verified, open_end=open_end)
        try:
            for p in scanner.run(state.resume):
                yield IndexProgress(len(self.f.index), p.position, size, len(self.f.problems) + len(found), p.done)
        except FollowStopped:
            raise
        except FileChangedError as exc:
            raise self._stop(str(exc)) from None
        finally:  # (also when the pass is stopped half way: the next one goes on from where it got)
            if found:
                with self.f.lock:
                    known = {(p.offset, p.kind) for p in self.f.problems}
                    new = [p for p in found if (p.offset, p.kind) not in known]
                    self.f.problems = sorted(self.f.problems + new, key=lambda p: p.offset)
            state.held, state.resume = self._resume_point(scanner.stop, state.resume)
            state.rescan = scanner.stop is None  # the next look goes on even if the file does not grow

    def _resume_point(self, stop: int | None, before: int) -> tuple[bool, int]:
        """(held, resume) after a pass that ended at ``stop`` (None: stopped half way)."""
        n = len(self.f.index)
        if n and self.f.index.status(n - 1) is RecordStatus.WRITING:
            return True, self.f.index.offset(n - 1)
        if stop is not None:
            return False, stop
        if not n or self.f.index.offset(n - 1) < before:
            return False, before
        info = self.f.record_info(n - 1)
        return False, info.end

    def _sniff_again(self, state: _FollowState) -> None:
        """Nothing indexed yet: a file followed from its first bytes may turn out GZIP or ZLIB now."""
        try:
            compression = sniff(self.byte_source.read_at, self.f.path)
        except TFRecordError:
            return
        if compression is Compression.NONE:
            return
        d = zlib.decompressobj(wbits_for(compression))
        checkpoints = [Checkpoint(0, 0, d.copy())]
        with self.f.lock:
            self.f.compression = compression
            self.f.stream_reader = InflateReader(self.f.path, compression, checkpoints, 0, self.byte_source.opener())
        state.stream = StreamGrowth(compression, d, 0, 0, b"", checkpoints)

    def _mark(self) -> tuple[int, bytes]:
        at = max(0, self.f.file_size - MARK)
        return at, self.byte_source.read_at(at, self.f.file_size - at)

    def stop_follow(self) -> Iterator[IndexProgress]:
        """Stop following: the end is read once more as an ordinary open reads it (a record cut
        short is truncated then, a problem). A generator (the end may be large): run it through."""
        state = self.state
        try:
            yield from self._final_pass(state)
        finally:
            self.f.end_follow()

    def _final_pass(self, state: _FollowState) -> Iterator[IndexProgress]:
        try:
            yield from self._grow_pass(state, open_end=False)
        except TFRecordError:
            return  # the file changed meanwhile: what was indexed stays as it was
        if state.stream is not None and (not state.stream.d.eof or state.stream.pending):
            end = state.stream.out_pos
            self.f.add_problem(Problem(None, end, ProblemKind.TRUNCATED,
                                      f"{state.stream._name} stream ends early at compressed byte "
                                      f"{state.stream.in_pos}", compressed_offset=state.stream.in_pos))

    def _stop(self, why: str) -> FollowStopped:
        """End following (the file is no longer the one followed); the error to raise."""
        self.f.end_follow()
        return FollowStopped(f"stopped following: {why}")

