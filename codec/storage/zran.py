"""GZIP and ZLIB files read at random through a zran index (the optional ``indexed_gzip``).

:class:`ZranBuilder` builds the index on a thread once a compressed file has
been indexed; :class:`ZranReader` reads through an imported one, with the
same interface as :class:`codec.storage.inflate.InflateReader`; a ZLIB file is shown
to zran as GZIP by :class:`ZlibAsGzip`. Unlike zlib's state, a zran index can
be saved, so it goes into the index cache and a cached open reads at random
without inflating the whole file. Apart from :mod:`codec.storage.inflate` because
``indexed_gzip`` is optional and loaded only on first use.
"""
from __future__ import annotations

import io
import struct
import threading
from collections import OrderedDict
from typing import BinaryIO, Callable

from codec.format.framing import Compression
from codec.storage.inflate import GZIP_MAGIC, BlockReader, Checkpoint, looks_like_zlib
from codec.storage.seekable import SeekableReader

REMOTE_READ = 256 << 10  # compressed bytes zran reads at a time from a remote file
ZRAN_SPACING = 1 << 20  # a 32 KiB window per point: ~32 MB per GB of uncompressed data
ZRAN_STEP = 1 << 23  # the builder seeks forward this far at a time (uncompressed bytes)
ZLIB_FDICT = 0x20
_GZIP_HEADER = GZIP_MAGIC + b"\x08\x00" + b"\x00" * 4 + b"\x00\xff"  # deflate, no flags, no mtime, OS unknown

_UNLOADED = object()
# indexed_gzip's class (None without it), loaded on first use by _zran_class(): only a GZIP or
# ZLIB file read through a zran index needs it.
_IndexedGzipFile = _UNLOADED
_ZRAN_LOAD_LOCK = threading.Lock()


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


class ZlibAsGzip(SeekableReader):
    """A ZLIB file seen as a one-member GZIP file, read-only and seekable.

    indexed_gzip refuses ZLIB streams, but both formats wrap the same raw
    deflate data: this presents a synthetic 10-byte GZIP header, the ZLIB
    file's bytes after its 2-byte header and before its 4-byte Adler-32, then
    an 8-byte trailer (CRC 0, so zran must skip CRC checks; the size modulo
    2**32). The file is opened on the first read and closed by
    :meth:`release` (the next read reopens it).
    """

    def __init__(self, path: str, total_out: int, opener: Callable[[], BinaryIO] | None = None):
        self.path = path
        self._open = opener or (lambda: open(path, "rb"))  # a remote file gives its own
        self._f: BinaryIO | None = None
        with self._open() as f:
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
            self._f = self._open()
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
                # typing.BinaryIO omits readinto; the files opened here (open(path, "rb"), fsspec's) have it.
                k = self._file(p).readinto(out[done:min(n, done + self._body_end - p)])  # type: ignore[attr-defined]
                if not k:
                    break  # the file shrank under us
            else:
                k = n - done
                out[done:n] = self._trailer[p - self._body_end:p - self._body_end + k]
            done += k
        self._pos = pos + done
        return done


def _zran_file(path: str, compression: Compression, total_out: int, auto_build: bool,
               opener: Callable[[], BinaryIO] | None = None):
    """(an indexed_gzip file over ``path``, the :class:`ZlibAsGzip` view it reads or None).

    GZIP CRCs are checked while building and skipped when reading through an
    imported index; the ZLIB view has no CRC to check.
    """
    cls = _zran_class()
    if cls is None:
        raise OSError("indexed_gzip is not available")
    view: ZlibAsGzip | BinaryIO
    if compression is Compression.ZLIB:
        view = ZlibAsGzip(path, total_out, opener)
        return cls(fileobj=view, spacing=ZRAN_SPACING, auto_build=auto_build, skip_crc_check=True), view
    if opener is not None:  # a remote file: small reads (each one is a round trip and its bytes)
        view = opener()
        return cls(fileobj=view, spacing=ZRAN_SPACING, auto_build=auto_build, skip_crc_check=not auto_build,
                   readbuf_size=REMOTE_READ), view
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
                 on_done=None, opener: Callable[[], BinaryIO] | None = None):
        self.path = path
        self._opener = opener
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
            z, view = _zran_file(self.path, self.compression, self.total_out, auto_build=True, opener=self._opener)
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


class _Reads:
    """Only a file's ``read``, for ``import_index``: handed the file itself, indexed_gzip would
    ``fdopen`` its descriptor and never close that ``FILE`` (a leak at every open)."""

    mode = "rb"

    def __init__(self, f: BinaryIO):
        self.read = f.read

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


class ZranReader(BlockReader):
    """Random access to a GZIP or ZLIB stream through an imported zran index.

    Same interface as :class:`InflateReader`. ``close`` drops the cached
    blocks and any file handle (GZIP: zran opens the file around each call;
    ZLIB: the :class:`ZlibAsGzip` view reopens it on the next read). Errors
    are raised to the caller, which falls back to the zlib checkpoints.
    """

    BLOCK = 1 << 18

    def __init__(self, path: str, index: bytes | BinaryIO, total_out: int,
                 compression: Compression = Compression.GZIP, opener: Callable[[], BinaryIO] | None = None):
        """``index``: zran's exported index, as bytes or a binary file positioned at it (read, not closed)."""
        self.path = path
        self.total_out = total_out
        self.checkpoints: list[Checkpoint] = []  # the zlib ones; none here
        self._lock = threading.Lock()
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        z, view = _zran_file(path, compression, total_out, auto_build=False, opener=opener)
        try:
            z.import_index(fileobj=io.BytesIO(index) if isinstance(index, (bytes, bytearray)) else _Reads(index))
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
