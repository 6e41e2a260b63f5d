"""GZIP/ZLIB streams read forward once, then at random through checkpoints.

While indexing, :class:`InflateScanner` decompresses the file in one pass and
keeps a copy of the decompressor every ``checkpoint_every`` bytes of output.
:class:`InflateReader` then reaches any uncompressed offset by resuming from
the nearest checkpoint before it, never from the start of the file. Once the
index is cached, :class:`codec.storage.zran.ZranReader` does the same through a zran
index (``indexed_gzip``), which unlike zlib's state can be saved; both
readers assemble reads from blocks through :class:`BlockReader`.
"""
from __future__ import annotations

import bisect
import io
import os
import queue
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import BinaryIO, Callable

from codec.format.framing import Compression

READ_CHUNK = 1 << 16
READ_BLOCK = 1 << 20  # compressed bytes read from the file at a time by the index pass
OUT_TARGET = 1 << 19  # uncompressed bytes per zlib call the index pass aims at
OUT_CAP = 1 << 20  # output limit per call where flush cannot be used
STEP_OUT_MAX = 1 << 23  # uncompressed bytes one step of the index pass may give, at most
FLUSH_STEP = STEP_OUT_MAX // 1032  # deflate expands at most 1032-fold: steps this small may use flush
MIN_STEP = 1 << 10  # compressed bytes per step of the index pass, at least (~1 MiB of zeros)
MAX_STEP = 1 << 16  # and at most (steps above FLUSH_STEP stop at STEP_OUT_MAX of output)
CHECKPOINT_EVERY = 1 << 21  # a checkpoint holds ~40 KB (zlib state and window): ~20 MB per GB
READ_AHEAD = 1 << 18  # a random read inflates this much past what it needs (for the next one)
GZIP_MAGIC = b"\x1f\x8b"
MEMBER_BACK = 1 << 20  # how far before where a broken GZIP member failed the next member is looked for
MEMBER_PROBE = 1 << 16  # compressed bytes a GZIP member found after damage is tried on
MEMBER_PROOF = 64  # uncompressed bytes it must give without error (or end soundly) to be read


def wbits_for(compression: Compression) -> int:
    return 31 if compression is Compression.GZIP else 15


def looks_like_zlib(head: bytes) -> bool:
    """A valid two-byte zlib header (RFC 1950): deflate, window <= 32K, check bits."""
    if len(head) < 2:
        return False
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf << 8 | flg) % 31 == 0


@dataclass
class Checkpoint:
    in_pos: int  # compressed bytes consumed before this state
    out_pos: int  # uncompressed bytes produced before this state
    state: zlib._Decompress


class ChunkStream:
    """An iterator of uncompressed chunks that can also read back what it has handed over.

    ``reread(pos, n)`` (None if it cannot read back at all) gives up to ``n``
    bytes at uncompressed offset ``pos``, below what the iterator has
    produced; ``close`` stops the iteration.
    """

    def __init__(self, items, reread=None) -> None:
        self._items = items
        self.reread = reread

    def __iter__(self) -> ChunkStream:
        return self

    def __next__(self):
        return next(self._items)

    def close(self) -> None:
        close = getattr(self._items, "close", None)
        if close is not None:
            close()


def prefetch(items, depth: int = 8) -> ChunkStream:
    """Run the iterator ``items`` on a thread, ``depth`` items ahead of the consumer.

    zlib releases the GIL while it inflates, so decompression overlaps with the
    consumer's header walk. Closing the result stops and joins the thread.
    The result keeps the ``reread`` of ``items`` (see :class:`ChunkStream`).
    """
    return ChunkStream(_prefetch(items, depth), getattr(items, "reread", None))


def _prefetch(items, depth: int):
    q: queue.Queue = queue.Queue(depth)
    stop = threading.Event()
    end = object()
    errors: list[BaseException] = []

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:  # noqa: BLE001 — handed to the consumer
            errors.append(exc)
        put(end)

    thread = threading.Thread(target=run, name="tfrlens-inflate", daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is end:
                break
            yield item
        if errors:
            raise errors[0]
    finally:
        stop.set()
        thread.join()


class StreamDamage(Exception):
    """Raised inside the scanner; carries where the compressed stream broke."""

    def __init__(self, kind: str, compressed_offset: int, out_pos: int, detail: str):
        super().__init__(detail)
        self.kind = kind  # "decompress" | "truncated" | "garbage"
        self.compressed_offset = compressed_offset
        self.out_pos = out_pos
        self.detail = detail


def next_gzip_member(read: Callable[[int, int], bytes], pos: int, end: int | None = None) -> int | None:
    """The first offset >= ``pos`` (and < ``end``) where a GZIP member starts, through
    ``read(pos, n)`` (up to n bytes); None if there is none.

    A member is the magic, method 8 and a start that inflates (see
    :func:`gzip_member_at`): bytes that look like one by chance do not.
    """
    marker = GZIP_MAGIC + b"\x08"
    while end is None or pos < end:
        block = read(pos, READ_BLOCK)
        k = block.find(marker)
        while k >= 0 and (end is None or pos + k < end):
            if gzip_member_at(read, pos + k):
                return pos + k
            k = block.find(marker, k + 1)
        if len(block) < READ_BLOCK:
            return None
        pos += len(block) - (len(marker) - 1)  # a marker across the blocks' seam is found next time
    return None


def gzip_member_at(read: Callable[[int, int], bytes], pos: int) -> bool:
    """Does a GZIP member start at ``pos``: does it end soundly, or give MEMBER_PROOF bytes
    before an error, within MEMBER_PROBE compressed bytes?"""
    data = read(pos, MEMBER_PROBE)
    d = zlib.decompressobj(31)
    got = 0
    for k in range(0, len(data), 256):
        try:
            got += len(d.decompress(data[k:k + 256]))
        except zlib.error:
            return False
        if d.eof or got >= MEMBER_PROOF:
            return True
    return got > 0 and len(data) < MEMBER_PROBE  # the file's last member, cut short


class InflateScanner:
    """Forward-only decompression with checkpoints; yields output chunks."""

    def __init__(self, f: BinaryIO, compression: Compression, checkpoint_every: int | None = None):
        self.f = f
        self.compression = compression
        self.every = checkpoint_every or CHECKPOINT_EVERY
        self.checkpoints: list[Checkpoint] = []
        self.in_pos = 0
        self.out_pos = 0
        self.damages: list[StreamDamage] = []
        # Where the stream stopped, to go on from if the file grows (codec.sources.following): the
        # decompressor and the bytes read after its end; None after damage inside the stream.
        self.end_state: zlib._Decompress | None = None
        self.leftover = b""

    @property
    def damage(self) -> StreamDamage | None:
        """The first damage met (None: the stream is sound)."""
        return self.damages[0] if self.damages else None

    def chunks(self) -> ChunkStream:
        """The uncompressed stream in order, as lists of bytes (one list per step);
        on damage note it in ``self.damages`` and stop, or with GZIP go on at the
        next member that inflates (see :meth:`_next_member`). Its ``reread`` reads back any
        part already produced, through the checkpoints (see :class:`StreamReadBack`).

        Built for the prefetch thread: each step inflates about ``OUT_TARGET``
        bytes (the input step adapts to the compression ratio), and a step's
        output is handed over only once the next step has started, so the
        consumer's Python work overlaps the inflating instead of queueing for
        the GIL. A step of at most ``FLUSH_STEP`` input bytes inflates in one
        stretch without the GIL (see :func:`_flush_continues`), consuming all
        of its input, so a checkpoint holds no copy of unconsumed input: only
        zlib's state and window (~40 KB). A larger step could expand up to
        1032-fold (a run of zeros after text): it stops at ``STEP_OUT_MAX``
        bytes of output instead, so no chunk is ever larger than that.
        """
        reread = StreamReadBack(self) if StreamReadBack.possible(self.f) else None
        return ChunkStream(self._chunks(), reread)

    def _chunks(self):
        self.checkpoints = []
        start: int | None = 0
        while start is not None:
            damage, member = yield from self._run(start)
            if damage is None:
                return
            start = self._next_member(member, damage.compressed_offset)
            if start is not None:
                damage.detail += f"; the next GZIP member that inflates starts at compressed byte {start}: " \
                                 "read on there"
            self.damages.append(damage)

    def _run(self, start: int):
        """Inflate from compressed byte ``start`` (a stream's start) to the end or the damage;
        return (the damage or None, where the member it is in starts)."""
        wbits = wbits_for(self.compression)
        name = self.compression.value.upper()
        d = zlib.decompressobj(wbits)
        self.end_state = None
        self.f.seek(start)
        self.in_pos = member = start
        self.checkpoints.append(Checkpoint(start, self.out_pos, d.copy()))
        last_ckpt = self.out_pos
        ratio = 4.0  # uncompressed bytes per compressed byte, as last seen
        careful = False  # after damage was met: small flushed steps only
        data = memoryview(b"")  # compressed input read but not yet consumed
        ready: list[bytes] = []  # the previous step's output, in parts
        while True:
            if len(data) < 2:  # two bytes: enough to recognise a following GZIP member
                more = self.f.read(READ_BLOCK)
                if more:
                    data = memoryview(bytes(data) + more if data else more)
            if not data or d.eof:
                if d.eof and data and self.compression is Compression.GZIP and data[:2] == GZIP_MAGIC:
                    d = zlib.decompressobj(wbits)  # a concatenated member
                    member = self.in_pos
                    self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, d.copy()))
                    last_ckpt = self.out_pos
                    continue
                if ready:
                    yield ready
                self.end_state, self.leftover = d, bytes(data)
                if data:
                    return StreamDamage("garbage", self.in_pos, self.out_pos,
                                        f"bytes after the end of the {name} stream at compressed byte {self.in_pos}"
                                        ), member
                if not d.eof:
                    try:  # flush may have stopped at bad data with no input left (a wrong checksum)
                        d.decompress(b"", 1)
                        return StreamDamage("truncated", self.in_pos, self.out_pos,
                                            f"{name} stream ends early at compressed byte {self.in_pos}"), member
                    except zlib.error as exc:
                        self.end_state = None
                        return StreamDamage("decompress", self.in_pos, self.out_pos,
                                            f"{name} stream damaged at compressed byte {self.in_pos}: {exc}"), member
                return None, member
            step = max(MIN_STEP, min(MAX_STEP, int(OUT_TARGET / ratio)))
            if careful:
                step = min(step, FLUSH_STEP)
            piece = data[:step]
            # flush's output has no limit: only where deflate's worst ratio keeps it bounded
            flushing = _FLUSH_CONTINUES and len(piece) <= FLUSH_STEP
            saved = None if flushing or not _FLUSH_CONTINUES else d.copy()
            try:
                out = [d.decompress(piece, 1 if flushing else STEP_OUT_MAX if _FLUSH_CONTINUES else OUT_CAP)]
                if ready:
                    yield ready  # now: the consumer walks it while flush inflates without the GIL
                    ready = []
                if flushing and d.unconsumed_tail and not d.eof:
                    out.append(d.flush(int(len(piece) * ratio * 1.25) + (1 << 15)))
            except zlib.error as exc:
                if saved is not None:  # again in small flushed steps, which stop exactly at the damage
                    d, careful = saved, True
                    continue
                if ready:
                    yield ready
                return StreamDamage("decompress", self.in_pos, self.out_pos,
                                    f"{name} stream damaged near compressed byte {self.in_pos}: {exc}"), member
            left = len(d.unused_data) if d.eof else len(d.unconsumed_tail)
            consumed = len(piece) - left
            produced = sum(map(len, out))
            self.in_pos += consumed
            self.out_pos += produced
            data = data[consumed:]
            ready = [o for o in out if o]
            if flushing and left and not d.eof:  # flush stops quietly where the data is bad
                if ready:
                    yield ready
                try:
                    d.decompress(d.unconsumed_tail, 1)
                    detail = "invalid data"
                except zlib.error as exc:
                    detail = str(exc)
                return StreamDamage("decompress", self.in_pos, self.out_pos,
                                    f"{name} stream damaged at compressed byte {self.in_pos}: {detail}"), member
            if consumed and produced:
                ratio = max(1.0, produced / consumed)
            gap = self.out_pos - last_ckpt
            # With input left over (an output limit reached) the copy would keep it alive: wait, within bounds.
            if gap >= self.every and not d.eof and (not left or gap >= 2 * self.every - OUT_CAP):
                self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, d.copy()))
                last_ckpt = self.out_pos

    def _next_member(self, member: int, broke: int) -> int | None:
        """Where the first GZIP member after the broken one (starting at compressed byte
        ``member``, broken at ``broke``) starts; None for ZLIB, or when no member follows.

        Looked for from just after ``member``, though at most MEMBER_BACK before
        ``broke``: damage can let a member inflate on, as garbage, past the next
        member's header.
        """
        if self.compression is not Compression.GZIP:
            return None

        def read(pos: int, n: int) -> bytes:
            self.f.seek(pos)
            return self.f.read(n)

        return next_gzip_member(read, max(member + 1, broke - MEMBER_BACK))


class StreamReadBack:
    """``reread(pos, n)`` for a running :class:`InflateScanner`: inflates again from the
    nearest checkpoint, so the index pass can go back over what it dropped without
    holding it. Reads the scanner's file through ``os.pread`` (its position, which the
    inflating thread moves, is left alone), or opens it again by name."""

    def __init__(self, scanner: InflateScanner) -> None:
        self._scanner = scanner
        self._reader: InflateReader | None = None

    @staticmethod
    def possible(f) -> bool:
        if hasattr(f, "reopen"):
            return True
        try:
            f.fileno()
            return True
        except (AttributeError, OSError, ValueError):
            return isinstance(getattr(f, "name", None), (str, os.PathLike))

    def __call__(self, pos: int, n: int) -> bytes:
        sc = self._scanner
        if self._reader is None:
            if hasattr(sc.f, "reopen"):  # a remote file: another view of it for random reads
                source, path = sc.f.reopen(), sc.f.name
            else:
                try:
                    source = _PreadFile(sc.f.fileno())
                    path = ""
                except (AttributeError, OSError, ValueError):
                    source, path = None, os.fspath(sc.f.name)
            self._reader = InflateReader(path, sc.compression, sc.checkpoints, sc.out_pos)
            self._reader._f = source
        reader = self._reader
        reader.checkpoints = sc.checkpoints
        reader.total_out = sc.out_pos
        return reader.read(pos, n)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class _PreadFile:
    """``seek``/``read`` over a file descriptor with a position of its own (``os.pread``)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pos = 0

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        self._pos = pos
        return pos

    def read(self, n: int = -1) -> bytes:
        data = os.pread(self._fd, n if n >= 0 else 1 << 30, self._pos)
        self._pos += len(data)
        return data

    def close(self) -> None:
        pass  # the descriptor belongs to the scanner's file


def _flush_continues() -> bool:
    """Does ``Decompress.flush(n)`` inflate all pending input into one n-byte buffer and
    leave the stream open, so that ``decompress`` can go on after it?

    CPython's does (it ends the stream only at its real end), and unlike
    ``decompress``, whose output buffer starts at 32 KiB and re-takes the GIL
    each time it grows, it inflates a whole step in one stretch without the
    GIL. Checked once here, since the documentation promises less; if not,
    the index pass uses ``decompress`` alone.
    """
    try:
        data = bytes(range(256)) * 64 + b"tfrecord lens" * 500
        packed = zlib.compress(data)
        d = zlib.decompressobj()
        out = []
        for k in range(0, len(packed), 100):
            out.append(d.decompress(packed[k:k + 100], 1))
            if d.unconsumed_tail:
                out.append(d.flush(1 << 16))
        return b"".join(out) == data and d.eof
    except Exception:  # noqa: BLE001 - any surprise: use the documented path
        return False


_FLUSH_CONTINUES = _flush_continues()


class BlockReader:
    """Reads of the uncompressed stream assembled from blocks a subclass decompresses.

    Subclasses give ``_locate(pos) -> (block number, its start offset)`` and
    ``_block(k, need)``: block k's bytes, at least its first ``need`` if the
    block has them (called with ``self._lock`` held, caching as they see fit).
    """

    total_out: int
    _lock: threading.Lock

    def read(self, pos: int, size: int) -> bytes:
        """Up to ``size`` bytes at uncompressed offset ``pos`` (fewer at the end)."""
        end = min(pos + size, self.total_out)
        if pos >= end:
            return b""
        parts = []
        with self._lock:
            while pos < end:
                k, start = self._locate(pos)
                piece = self._block(k, end - start)[pos - start:end - start]
                if not piece:
                    break
                parts.append(piece)
                pos += len(piece)
        return b"".join(parts)


class _Inflating:
    """A block inflated as far as reads have needed, with the decompressor to go on."""

    __slots__ = ("out", "d", "file_pos", "ended")

    def __init__(self, ck: Checkpoint):
        self.out = bytearray()
        self.d = ck.state.copy()
        # The state may hold input it has not consumed yet (its unconsumed_tail,
        # the file's bytes from in_pos on): it is fed first, the file goes on after it.
        self.file_pos = ck.in_pos + len(self.d.unconsumed_tail)
        self.ended = False  # the stream, the file or the good data ended: no more output


class InflateReader(BlockReader):
    """Random access to the uncompressed stream through checkpoints.

    A read inflates its block from the checkpoint only as far as it needs
    (and ``READ_AHEAD`` more); the next read in that block goes on from there.
    """

    def __init__(self, path: str, compression: Compression, checkpoints: list[Checkpoint], total_out: int,
                 opener: Callable[[], BinaryIO] | None = None):
        self.path = path
        self._open = opener or (lambda: open(path, "rb"))  # a remote file gives its own
        self.compression = compression
        self.checkpoints = checkpoints
        self.total_out = total_out  # uncompressed bytes known to be readable
        self._lock = threading.Lock()
        self._blocks: OrderedDict[int, _Inflating] = OrderedDict()
        self._f: BinaryIO | None = None

    def reopen_with(self, opener: Callable[[], BinaryIO]) -> None:
        """Open the file with ``opener`` from now on (a followed file is checked as growing, not as fixed)."""
        with self._lock:
            self._open = opener

    def close(self) -> None:
        with self._lock:
            if self._f is not None:
                self._f.close()
                self._f = None
            self._blocks.clear()

    def _locate(self, pos: int) -> tuple[int, int]:
        k = bisect.bisect_right(self._starts(), pos) - 1
        return k, self.checkpoints[k].out_pos

    def _starts(self) -> list[int]:
        starts = getattr(self, "_starts_cache", None)
        if starts is None or len(starts) != len(self.checkpoints):
            starts = [c.out_pos for c in self.checkpoints]
            self._starts_cache = starts
        return starts

    def _block(self, k: int, need: int) -> bytearray:
        ck = self.checkpoints[k]
        # The last block grows while indexing runs; its cached part goes on growing with it.
        stop = self.checkpoints[k + 1].out_pos if k + 1 < len(self.checkpoints) else self.total_out
        want = stop - ck.out_pos
        block = self._blocks.get(k)
        if block is None:
            block = self._blocks[k] = _Inflating(ck)
            if len(self._blocks) > 4:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(k)
        if len(block.out) < need and not block.ended:
            if self._f is None:
                self._f = self._open()
            try:
                self._extend(block, min(want, need + READ_AHEAD))
            except zlib.error:  # damage inside the block: what the index pass saw of it, no more
                block.out = bytearray(self._salvage(ck, want))
                block.ended = True
        return block.out

    def _extend(self, block: _Inflating, target: int) -> None:
        d = block.d
        while len(block.out) < target and not d.eof:
            data = d.unconsumed_tail
            if not data:
                self._f.seek(block.file_pos)
                data = self._f.read(READ_CHUNK)
                if not data:
                    break
                block.file_pos += len(data)
            block.out += d.decompress(data, target - len(block.out))
        block.ended = d.eof

    def _salvage(self, ck: Checkpoint, want: int) -> bytes:
        """Up to ``want`` bytes from checkpoint ``ck``, stopping at the damage.

        Inflates the way the index pass does, so it gives exactly the output
        the pass saw: with ``flush``, which stops quietly at bad data,
        everything before it; without, what the calls before the failing one gave.
        """
        d = ck.state.copy()
        self._f.seek(ck.in_pos + len(d.unconsumed_tail))
        out = []
        got = 0
        while got < want and not d.eof:
            data = d.unconsumed_tail or self._f.read(MAX_STEP)
            if not data:
                break
            try:
                pieces = [d.decompress(data, 1 if _FLUSH_CONTINUES else want - got)]
            except zlib.error:
                break
            if _FLUSH_CONTINUES and d.unconsumed_tail and not d.eof:
                pieces.append(d.flush(1 << 20))
            out += pieces
            got += sum(map(len, pieces))
            if _FLUSH_CONTINUES and d.unconsumed_tail and not d.eof:
                break  # flush stopped at the damage
        return b"".join(out)[:want]
