"""Write ArrayRecord files through Google's own writer, safely as every output is written.

Riegeli's readers check a HighwayHash of every chunk, and no well-kept Python implementation of it
exists, so the bytes come from Google's ``array-record`` package (``ArrayRecordWriter``): what it
writes, its reader reads. The file is written to a temporary file beside the output and renamed
over it only when complete (:class:`codec.storage.writer.OutputFile`).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

from codec.errors import FileAccessError, TFRecordError, UsageError
from codec.sources.array_record_file import EXTRA, array_record_available, first_line
from codec.storage.writer import ClosingWriter, OutputFile

__all__ = ["DEFAULT_GROUP_SIZE", "ArrayRecordWriter", "writer_options"]

DEFAULT_GROUP_SIZE = "group_size:1"  # one record per chunk: random access reads one record, not a group
FAILURES = (RuntimeError, ValueError, OSError)  # what Google's writer raises when it cannot write


def writer_options(given: str | None) -> str:
    """Google's options string for ``given`` (as the user wrote it): unchanged, with ``group_size:1`` in
    front when it names no group size."""
    given = (given or "").strip().strip(",")
    names = {part.partition(":")[0].strip() for part in given.split(",")}
    if "group_size" in names:
        return given
    return DEFAULT_GROUP_SIZE + ("," + given if given else "")


class ArrayRecordWriter(ClosingWriter):
    """``with ArrayRecordWriter(path, "zstd:9") as w: w.write(data)``: an ArrayRecord file that Google's
    reader reads, records unchanged; nothing appears at ``path`` unless the block ends normally."""

    def __init__(self, path: str | os.PathLike, options: str | None = None) -> None:
        if not array_record_available():
            raise UsageError(f"writing ArrayRecord files needs Google's array-record package: {EXTRA}")
        from array_record.python import array_record_module

        self.path = os.fspath(path)
        self.options = writer_options(options)
        self.count = 0
        self._writer = None
        self._out = OutputFile(self.path)
        with self._aborting():
            try:
                self._writer = array_record_module.ArrayRecordWriter(self._out.written_path, self.options)
            except ValueError as exc:  # Google's parser names the option and what it takes
                raise UsageError(f"bad ArrayRecord writer options {options or ''!r}: {first_line(exc)}") from None

    @contextmanager
    def _aborting(self) -> Iterator[None]:
        """Any failure inside drops the output; Google's errors become one line naming the file."""
        try:
            yield
        except TFRecordError:
            self.abort()
            raise
        except FAILURES as exc:
            self.abort()
            raise FileAccessError(f"cannot write {self.path}: {first_line(exc)}") from exc
        except BaseException:
            self.abort()
            raise

    def write(self, data: bytes) -> None:
        if self._writer is None:
            raise UsageError(f"writer for {self.path} is closed")
        with self._aborting():
            self._writer.write(data if type(data) is bytes else bytes(data))
        self.count += 1

    def close(self) -> None:
        """Write the footer, then commit (flush, fsync, rename over the target; a URL is uploaded)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        with self._aborting():
            writer.close()  # (raises RuntimeError, naming the failure, when a write failed)
            self._out.commit()

    def abort(self) -> None:
        """Drop everything written; the target is untouched."""
        writer, self._writer = self._writer, None
        self._out.abort()  # (the temporary file is removed first: what the writer still writes goes nowhere)
        if writer is not None:
            try:
                writer.close()
            except FAILURES:
                pass
