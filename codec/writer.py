"""Write TFRecord files (plain, GZIP, ZLIB) that TensorFlow reads back.

Writing to a path is atomic: records go to a temporary file beside the
target, which is flushed, fsynced and renamed over the target only when
:meth:`TFRecordWriter.close` succeeds. A failure half-way (disk full,
permission, an exception in the caller's ``with`` block) removes the
temporary file and leaves the target exactly as it was.
"""
from __future__ import annotations

import errno
import os
import tempfile
import zlib
from typing import BinaryIO, Iterable

from .errors import FileAccessError
from .framing import Compression, encode_record
from .inflate import wbits_for

# TensorFlow's ZlibCompressionOptions default level (Z_DEFAULT_COMPRESSION).
COMPRESSION_LEVEL = 6


def describe_write_error(path: str, exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"disk full while writing {path}"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"no permission to write {path}"
    return f"cannot write {path}: {exc.strerror or exc}"


class TFRecordWriter:
    """``with TFRecordWriter(path, "gzip") as w: w.write(data)``."""

    def __init__(self, path: str | os.PathLike, compression: Compression | str = Compression.NONE):
        self.path = os.fspath(path)
        self.compression = Compression.parse(compression)
        self.count = 0
        self.bytes_written = 0
        target_dir = os.path.dirname(os.path.abspath(self.path))
        if os.path.isdir(self.path):
            raise FileAccessError(f"is a directory: {self.path}")
        try:
            fd, self._tmp = tempfile.mkstemp(dir=target_dir, prefix=f".{os.path.basename(self.path)}.",
                                             suffix=".tmp")
        except OSError as exc:
            raise FileAccessError(describe_write_error(self.path, exc)) from None
        self._f: BinaryIO | None = os.fdopen(fd, "wb")
        self._z = None
        if self.compression is not Compression.NONE:
            self._z = zlib.compressobj(COMPRESSION_LEVEL, zlib.DEFLATED, wbits_for(self.compression))

    def write(self, data: bytes) -> None:
        frame = encode_record(bytes(data))
        if self._z is not None:
            frame = self._z.compress(frame)
        self._put(frame)
        self.count += 1

    def write_framed(self, frame: bytes) -> None:
        """Write an already framed record (header, data, footer) verbatim."""
        if self._z is not None:
            frame = self._z.compress(frame)
        self._put(frame)
        self.count += 1

    def _put(self, chunk: bytes) -> None:
        if self._f is None:
            raise ValueError(f"writer for {self.path} is closed")
        try:
            self._f.write(chunk)
        except OSError as exc:
            self.abort()
            raise FileAccessError(describe_write_error(self.path, exc)) from None
        self.bytes_written += len(chunk)

    def close(self) -> None:
        """Finish the stream, flush and fsync, then rename over the target."""
        if self._f is None:
            return
        try:
            if self._z is not None:
                self._f.write(self._z.flush())
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()
            self._f = None
            mode = _existing_mode(self.path)
            if mode is not None:
                os.chmod(self._tmp, mode)
            os.replace(self._tmp, self.path)
        except OSError as exc:
            self.abort()
            raise FileAccessError(describe_write_error(self.path, exc)) from None

    def abort(self) -> None:
        """Drop everything written; the target is untouched."""
        if self._f is not None:
            try:
                self._f.close()
            except OSError:
                pass
            self._f = None
        try:
            os.unlink(self._tmp)
        except OSError:
            pass

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _existing_mode(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def write_records(path: str | os.PathLike, records: Iterable[bytes],
                  compression: Compression | str = Compression.NONE) -> int:
    """Write every record in ``records`` to ``path`` atomically; return the count."""
    with TFRecordWriter(path, compression) as w:
        for data in records:
            w.write(data)
    return w.count


def atomic_write_bytes(path: str | os.PathLike, blob: bytes) -> None:
    """Write ``blob`` to ``path`` through a temporary file and a rename."""
    path = os.fspath(path)
    target_dir = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise FileAccessError(describe_write_error(path, exc)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise FileAccessError(describe_write_error(path, exc)) from None
