"""Write ArrayRecord files through Google's own writer, safely as every output is written.

Riegeli's readers check a HighwayHash of every chunk, and no well-kept Python implementation of it
exists, so the bytes come from Google's ``array-record`` package (``ArrayRecordWriter``): what it
writes, its reader reads. The file is written to a temporary file beside the output and renamed
over it only when complete (:class:`codec.storage.writer.OutputFile`).
"""
from __future__ import annotations

import os

from codec.errors import FileAccessError, UsageError
from codec.sources.array_record_file import EXTRA, array_record_available, first_line
from codec.storage.writer import OutputFile

__all__ = ["DEFAULT_GROUP_SIZE", "ArrayRecordWriter", "writer_options"]

DEFAULT_GROUP_SIZE = "group_size:1"  # one record per chunk: random access reads one record, not a group


def writer_options(given: str | None) -> str:
    """Google's options string for ``given`` (as the user wrote it): unchanged, with ``group_size:1`` in
    front when it names no group size."""
    given = (given or "").strip().strip(",")
    names = {part.partition(":")[0].strip() for part in given.split(",")}
    if "group_size" in names:
        return given
    return DEFAULT_GROUP_SIZE + ("," + given if given else "")


class ArrayRecordWriter:
    """``with ArrayRecordWriter(path, "zstd:9") as w: w.write(data)``: an ArrayRecord file that Google's
    reader reads, records unchanged; nothing appears at ``path`` unless the block ends normally."""

    def __init__(self, path: str | os.PathLike, options: str | None = None) -> None:
        if not array_record_available():
            raise UsageError(f"writing ArrayRecord files needs Google's array-record package: {EXTRA}")
        from array_record.python import array_record_module

        self.path = os.fspath(path)
        self.options = writer_options(options)
        self.count = 0
        self._out = OutputFile(self.path)
        try:
            self._writer = array_record_module.ArrayRecordWriter(self._out.written_path, self.options)
        except ValueError as exc:  # Google's parser names the option and what it takes
            self._out.abort()
            raise UsageError(f"bad ArrayRecord writer options {options or ''!r}: {first_line(exc)}") from None
        except BaseException as exc:
            self._out.abort()
            raise self._failure(exc) from None
        if not self._writer.ok():
            self._out.abort()
            raise FileAccessError(f"cannot write {self.path}: Google's ArrayRecord writer did not open it")

    def _failure(self, exc: BaseException) -> BaseException:
        if isinstance(exc, (RuntimeError, ValueError, OSError)):
            return FileAccessError(f"cannot write {self.path}: {first_line(exc)}")
        return exc

    def write(self, data: bytes) -> None:
        if self._writer is None:
            raise UsageError(f"writer for {self.path} is closed")
        try:
            self._writer.write(data if type(data) is bytes else bytes(data))
        except BaseException as exc:
            self.abort()
            raise self._failure(exc) from None
        self.count += 1

    def close(self) -> None:
        """Write the footer, then commit (flush, fsync, rename over the target; a URL is uploaded)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            writer.close()  # (raises RuntimeError, naming the failure, when a write failed)
            self._out.commit()
        except BaseException as exc:
            self._out.abort()
            raise self._failure(exc) from None

    def abort(self) -> None:
        """Drop everything written; the target is untouched."""
        writer, self._writer = self._writer, None
        self._out.abort()  # (the temporary file is removed first: what the writer still writes goes nowhere)
        if writer is not None:
            try:
                writer.close()
            except (RuntimeError, ValueError, OSError):
                pass

    def __enter__(self) -> ArrayRecordWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

