"""GZIP/ZLIB streams read forward once, then at random through checkpoints.

While indexing, :class:`InflateScanner` decompresses the file in one pass and
keeps a copy of the decompressor every ``checkpoint_every`` bytes of output.
:class:`InflateReader` then reaches any uncompressed offset by resuming from
the nearest checkpoint before it, never from the start of the file. Once the
index is cached, :class:`ZranReader` does the same through a zran index
(``indexed_gzip``), which unlike zlib's state can be saved; a ZLIB file is
shown to it as GZIP by :class:`ZlibAsGzip`.
"""
from __future__ import annotations

import bisect
import io
import os
import queue
import struct
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import BinaryIO

from .framing import Compression

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

_UNLOADED = object()
# indexed_gzip's class (None without it), loaded on first use by _zran_class(): only a GZIP or
# ZLIB file read through a zran index needs it.
_IndexedGzipFile = _UNLOADED
_ZRAN_LOAD_LOCK = threading.Lock()

ZRAN_SPACING = 1 << 20  # a 32 KiB window per point: ~32 MB per GB of uncompressed data
ZRAN_STEP = 1 << 23  # the builder seeks forward this far at a time (uncompressed bytes)


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
    state: "zlib._Decompress"


class ChunkStream:
    """An iterator of uncompressed chunks that can also read back what it has handed over.

    ``reread(pos, n)`` (None if it cannot read back at all) gives up to ``n``
    bytes at uncompressed offset ``pos``, below what the iterator has
    produced; ``close`` stops the iteration.
    """

    def __init__(self, items, reread=None) -> None:
        self._items = items
        self.reread = reread

    def __iter__(self) -> "ChunkStream":
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
        except BaseException as exc:  # handed to the consumer
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


class InflateScanner:
    """Forward-only decompression with checkpoints; yields output chunks."""

    def __init__(self, f: BinaryIO, compression: Compression, checkpoint_every: int | None = None):
        self.f = f
        self.compression = compression
        self.every = checkpoint_every or CHECKPOINT_EVERY
        self.checkpoints: list[Checkpoint] = []
        self.in_pos = 0
        self.out_pos = 0
        self.damage: StreamDamage | None = None

    def chunks(self) -> ChunkStream:
        """The uncompressed stream in order, as lists of bytes (one list per step);
        on damage set ``self.damage`` and stop. Its ``reread`` reads back any
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
        wbits = wbits_for(self.compression)
        name = self.compression.value.upper()
        d = zlib.decompressobj(wbits)
        self.f.seek(0)
        self.checkpoints = [Checkpoint(0, 0, d.copy())]
        last_ckpt = 0
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
                    self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, d.copy()))
                    last_ckpt = self.out_pos
                    continue
                if ready:
                    yield ready
                if data:
                    self.damage = StreamDamage(
                        "garbage", self.in_pos, self.out_pos,
                        f"bytes after the end of the {name} stream at compressed byte {self.in_pos}")
                elif not d.eof:
                    try:  # flush may have stopped at bad data with no input left (a wrong checksum)
                        d.decompress(b"", 1)
                        self.damage = StreamDamage("truncated", self.in_pos, self.out_pos,
                                                   f"{name} stream ends early at compressed byte {self.in_pos}")
                    except zlib.error as exc:
                        self.damage = StreamDamage("decompress", self.in_pos, self.out_pos,
                                                   f"{name} stream damaged at compressed byte {self.in_pos}: {exc}")
                return
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
                self.damage = StreamDamage("decompress", self.in_pos, self.out_pos,
                                           f"{name} stream damaged near compressed byte {self.in_pos}: {exc}")
                return
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
                self.damage = StreamDamage("decompress", self.in_pos, self.out_pos,
                                           f"{name} stream damaged at compressed byte {self.in_pos}: {detail}")
                return
            if consumed and produced:
                ratio = max(1.0, produced / consumed)
            gap = self.out_pos - last_ckpt
            # With input left over (an output limit reached) the copy would keep it alive: wait, within bounds.
            if gap >= self.every and not d.eof and (not left or gap >= 2 * self.every - OUT_CAP):
                self.checkpoints.append(Checkpoint(self.in_pos, self.out_pos, d.copy()))
                last_ckpt = self.out_pos


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
        try:
            f.fileno()
            return True
        except (AttributeError, OSError, ValueError):
            return isinstance(getattr(f, "name", None), (str, os.PathLike))

    def __call__(self, pos: int, n: int) -> bytes:
        sc = self._scanner
        if self._reader is None:
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


class _BlockReader:
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


class InflateReader(_BlockReader):
    """Random access to the uncompressed stream through checkpoints.

    A read inflates its block from the checkpoint only as far as it needs
    (and ``READ_AHEAD`` more); the next read in that block goes on from there.
    """

    def __init__(self, path: str, compression: Compression, checkpoints: list[Checkpoint], total_out: int):
        self.path = path
        self.compression = compression
        self.checkpoints = checkpoints
        self.total_out = total_out  # uncompressed bytes known to be readable
        self._lock = threading.Lock()
        self._blocks: OrderedDict[int, _Inflating] = OrderedDict()
        self._f: BinaryIO | None = None

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
                self._f = open(self.path, "rb")
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


def _load_indexed_gzip():
    """indexed_gzip's extension module, loaded without running its package ``__init__``.

    That ``__init__`` only re-exports the extension's names and asks
    ``importlib.metadata`` for a version string, which imports ``email``, ``zipfile``
    and more: ~40 ms of a one-record ``cat``. The extension's own imports first try
    ``indexed_gzip.<name>`` (Cython's implicit relative import), so a bare stand-in
    for the package sits in ``sys.modules`` while it loads and is removed after: a
    later ``import indexed_gzip`` runs the real ``__init__``, which finds the loaded
    extension. Anything unexpected falls back to the ordinary import.
    """
    import sys

    name = "indexed_gzip.indexed_gzip"
    if name in sys.modules or "indexed_gzip" in sys.modules:
        import importlib

        return importlib.import_module(name)
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    try:
        package = PathFinder.find_spec("indexed_gzip")  # finds the package folder; runs nothing
        spec = PathFinder.find_spec(name, package.submodule_search_locations)
        module = module_from_spec(spec)
    except Exception:  # noqa: BLE001 - not laid out as expected
        import importlib

        return importlib.import_module(name)
    stand_in = type(sys)("indexed_gzip")  # not a package: "indexed_gzip.io" fails at once
    sys.modules["indexed_gzip"] = stand_in
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if sys.modules.get("indexed_gzip") is stand_in:
            del sys.modules["indexed_gzip"]
    return module


def _zran_class():
    """indexed_gzip's ``_IndexedGzipFile``, or None when the package is missing or broken."""
    global _IndexedGzipFile
    with _ZRAN_LOAD_LOCK:
        if _IndexedGzipFile is _UNLOADED:
            try:  # optional: serialisable GZIP/ZLIB checkpoints (zran); everything works without it
                _IndexedGzipFile = _load_indexed_gzip()._IndexedGzipFile
            except Exception:  # noqa: BLE001 - missing, or a broken build: use the zlib checkpoints only
                _IndexedGzipFile = None
    return _IndexedGzipFile


def zran_available() -> bool:
    """Whether indexed_gzip can be used (importing it on the first call)."""
    return _zran_class() is not None


ZLIB_FDICT = 0x20
_GZIP_HEADER = GZIP_MAGIC + b"\x08\x00" + b"\x00" * 4 + b"\x00\xff"  # deflate, no flags, no mtime, OS unknown


class ZlibAsGzip(io.RawIOBase):
    """A ZLIB file seen as a one-member GZIP file, read-only and seekable.

    indexed_gzip refuses ZLIB streams, but both formats wrap the same raw
    deflate data: this presents a synthetic 10-byte GZIP header, the ZLIB
    file's bytes after its 2-byte header and before its 4-byte Adler-32, then
    an 8-byte trailer (CRC 0, so zran must skip CRC checks; the size modulo
    2**32). The file is opened on the first read and closed by
    :meth:`release` (the next read reopens it).
    """

    def __init__(self, path: str, total_out: int):
        self.path = path
        self._f: BinaryIO | None = None
        with open(path, "rb") as f:
            head = f.read(2)
            size = f.seek(0, io.SEEK_END)
        if not looks_like_zlib(head) or size < 6:
            raise ValueError(f"{path}: not a ZLIB stream")
        if head[1] & ZLIB_FDICT:
            raise ValueError(f"{path}: the ZLIB stream needs a preset dictionary")
        self._body_end = len(_GZIP_HEADER) + size - 6  # where the deflate data ends in the GZIP view
        self._trailer = struct.pack("<II", 0, total_out & 0xFFFFFFFF)
        self._size = self._body_end + len(self._trailer)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._pos = base + offset
        return self._pos

    def release(self) -> None:
        """Close the file handle (reads reopen it)."""
        if self._f is not None:
            self._f.close()
            self._f = None

    def close(self) -> None:
        self.release()
        super().close()

    def _file(self, pos: int) -> BinaryIO:
        """The ZLIB file, positioned at GZIP-view offset ``pos`` (inside the deflate data)."""
        if self._f is None:
            self._f = open(self.path, "rb")
        self._f.seek(pos - len(_GZIP_HEADER) + 2)
        return self._f

    def read(self, size: int = -1) -> bytes:
        pos = self._pos
        n = self._size - pos if size is None or size < 0 else min(size, self._size - pos)
        if n <= 0:
            return b""
        if len(_GZIP_HEADER) <= pos and pos + n <= self._body_end:  # the usual case: one read, no copy
            data = self._file(pos).read(n)
            self._pos = pos + len(data)
            return data
        buf = bytearray(n)  # a read crossing the synthetic header or trailer
        return bytes(memoryview(buf)[:self.readinto(buf)])

    def readinto(self, buffer) -> int:
        out = memoryview(buffer).cast("B")
        pos = self._pos
        n = max(0, min(len(out), self._size - pos))
        done = 0
        while done < n:
            p = pos + done
            if p < len(_GZIP_HEADER):
                k = min(n - done, len(_GZIP_HEADER) - p)
                out[done:done + k] = _GZIP_HEADER[p:p + k]
            elif p < self._body_end:
                k = self._file(p).readinto(out[done:min(n, done + self._body_end - p)])
                if not k:
                    break  # the file shrank under us
            else:
                k = n - done
                out[done:n] = self._trailer[p - self._body_end:p - self._body_end + k]
            done += k
        self._pos = pos + done
        return done


def _zran_file(path: str, compression: Compression, total_out: int, auto_build: bool):
    """(an indexed_gzip file over ``path``, the :class:`ZlibAsGzip` view it reads or None).

    GZIP CRCs are checked while building and skipped when reading through an
    imported index; the ZLIB view has no CRC to check.
    """
    cls = _zran_class()
    if cls is None:
        raise OSError("indexed_gzip is not available")
    if compression is Compression.ZLIB:
        view = ZlibAsGzip(path, total_out)
        return cls(fileobj=view, spacing=ZRAN_SPACING, auto_build=auto_build, skip_crc_check=True), view
    return cls(filename=path, spacing=ZRAN_SPACING, drop_handles=True, auto_build=auto_build,
               skip_crc_check=not auto_build), None


class ZranBuilder:
    """A zran index of a GZIP or ZLIB file, built on a thread.

    zran (the ``indexed_gzip`` package) inflates in C with the GIL released.
    Unlike the zlib checkpoints its index can be exported, so it goes into the
    index cache and a cached open reads at random without decompressing the
    whole file. ``total_out`` (the uncompressed size) is needed for ZLIB only.
    ``on_done(blob, end)`` runs on the thread after a successful build.
    """

    def __init__(self, path: str, compression: Compression = Compression.GZIP, total_out: int = 0,
                 on_done=None):
        self.path = path
        self.compression = compression
        self.total_out = total_out
        self._on_done = on_done
        self.blob: bytes | None = None
        self.end = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tfrlens-zran", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            z, view = _zran_file(self.path, self.compression, self.total_out, auto_build=True)
            try:
                pos = 0
                while True:  # seek (GIL released) builds the index as it goes
                    pos += ZRAN_STEP
                    if z.seek(pos) < pos:
                        break
                self.end = z.tell()
                buf = io.BytesIO()
                z.export_index(fileobj=buf)
                self.blob = buf.getvalue()
            finally:
                z.close()
                if view is not None:
                    view.close()
            if self._on_done is not None:
                self._on_done(self.blob, self.end)
        except BaseException as exc:  # noqa: BLE001 - damage, I/O, zran: no zran index, that is all
            self.error = exc

    def result(self) -> tuple[bytes, int] | None:
        """Wait for the build; (exported index, uncompressed size) or None if it failed."""
        self._thread.join()
        if self.blob is None:
            return None
        return self.blob, self.end


class ZranReader(_BlockReader):
    """Random access to a GZIP or ZLIB stream through an imported zran index.

    Same interface as :class:`InflateReader`. ``close`` drops the cached
    blocks and any file handle (GZIP: zran opens the file around each call;
    ZLIB: the :class:`ZlibAsGzip` view reopens it on the next read). Errors
    are raised to the caller, which falls back to the zlib checkpoints.
    """

    BLOCK = 1 << 18

    def __init__(self, path: str, blob: bytes, total_out: int, compression: Compression = Compression.GZIP):
        self.path = path
        self.total_out = total_out
        self.checkpoints: list[Checkpoint] = []  # the zlib ones; none here
        self._lock = threading.Lock()
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        z, view = _zran_file(path, compression, total_out, auto_build=False)
        try:
            z.import_index(fileobj=io.BytesIO(blob))
        except BaseException:
            z.close()
            if view is not None:
                view.close()
            raise
        self._z = z
        self._view = view

    def close(self) -> None:
        with self._lock:
            self._blocks.clear()
            if self._view is not None:
                self._view.release()

    def _locate(self, pos: int) -> tuple[int, int]:
        k = pos // self.BLOCK
        return k, k * self.BLOCK

    def _block(self, k: int, need: int = 0) -> bytes:
        block = self._blocks.get(k)
        if block is not None:
            self._blocks.move_to_end(k)
            return block
        start = k * self.BLOCK
        want = min(self.BLOCK, self.total_out - start)
        self._z.seek(start)
        block = self._z.read(want)
        if len(block) != want:
            raise OSError(f"{self.path}: the zran index reads {len(block)} of {want} bytes at {start}")
        self._blocks[k] = block
        if len(self._blocks) > 4:
            self._blocks.popitem(last=False)
        return block
