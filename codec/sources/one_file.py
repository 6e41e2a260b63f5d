"""What a record source of one file says the same way whatever the file holds: its bytes' facts, its
lifetime, rows by number and the facts of :class:`codec.sources.protocol.RecordSource`.

:class:`~codec.sources.tfrecord_file.TFRecordFile` and
:class:`~codec.sources.array_record_file.ArrayRecordFile` both build on :class:`OneFile`: they differ in
how records are found and read, not in these.
"""
from __future__ import annotations

import bisect
import threading
from typing import TYPE_CHECKING, Iterator

from codec.errors import RecordIndexError
from codec.format.framing import Problem
from codec.format.problem_text import TFRECORD

if TYPE_CHECKING:
    from codec.format.array_record import ArrayRecordLayout
    from codec.index.record_index import RecordIndex
    from codec.sources.byte_sources import ByteSource
    from codec.storage.file_identity import FileIdentity

__all__ = ["OneFile"]


class OneFile:
    """The shared part of a one-file record source over ``byte_source``, with ``index`` and ``problems``."""

    path: str
    byte_source: ByteSource
    index: RecordIndex
    problems: list[Problem]
    lock: threading.RLock

    is_set = False  # one file
    numbered_out_of_order = False  # records are appended, never numbered in between
    container = TFRECORD  # (an ArrayRecord file says its own, with its layout and hashes)
    layout: ArrayRecordLayout | None = None

    # -- the bytes ------------------------------------------------------
    @property
    def file_size(self) -> int:
        return self.byte_source.size

    @property
    def mtime_ns(self) -> int:
        return self.byte_source.mtime_ns

    @property
    def identity(self) -> FileIdentity | None:
        """Which file, which version (None for a URL: its reads are pinned to the version opened)."""
        return self.byte_source.identity

    @property
    def version(self) -> str:
        """What keys its index in the cache."""
        return self.byte_source.version

    @property
    def remote(self):
        """The :class:`codec.storage.remote.RemoteFile` of a URL, else None."""
        return self.byte_source.remote

    @property
    def is_remote(self) -> bool:
        return self.byte_source.is_remote

    @property
    def bytes_fetched(self) -> int | None:
        return self.byte_source.fetched

    # -- lifetime ---------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self.byte_source.is_open

    def holding(self):
        """Context: the file is open and will not be released until the block ends (a pass)."""
        return self.byte_source.holding()

    def streaming(self):
        """Context: the calling thread reads the file front to back (a pass); a remote file's
        reads then come from chunks fetched ahead. Nothing changes for a local file."""
        return self.byte_source.streaming()

    # -- rows by number -----------------------------------------------------
    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, key):
        raise NotImplementedError

    def __iter__(self) -> Iterator[bytes]:
        for i in range(len(self)):
            yield self[i]

    def _check_index(self, i: int) -> int:
        n = len(self.index)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise RecordIndexError(f"record {i} out of range: {self.path} has {n} records")
        return j

    def add_problem(self, problem: Problem) -> None:
        with self.lock:
            if any(p.offset == problem.offset and p.kind is problem.kind for p in self.problems):
                return  # another thread (a verify pass, a view reading rows) found it first
            problems = list(self.problems)
            bisect.insort(problems, problem, key=lambda p: p.offset)
            self.problems = problems  # swapped whole: readers on other threads see a consistent list

    def find_record(self, offset: int) -> int:
        """The record containing (or nearest before) byte ``offset``; -1 if none."""
        return self.index.find_offset(offset)

    def record_before(self, problem: Problem) -> int:
        """The last record starting at or before ``problem`` (-1 if none)."""
        return self.find_record(problem.offset)

    def problem_count(self) -> int:
        return len(self.problems)

    def location(self, i: int) -> tuple[str, int]:
        """(file, offset) of record ``i``."""
        return self.path, self.index.offset(self._check_index(i))

    # -- facts of a record source (codec.sources.protocol.RecordSource) ----------
    @property
    def files(self) -> list[str]:
        return [self.path]

    @property
    def unusable(self) -> list[tuple[str, str]]:
        return []  # (a file that cannot be read is not opened at all)

    def publish(self) -> list[tuple[int, int]]:
        return []

    def file_row(self, k: int, j: int) -> int | None:
        return j if k == 0 and 0 <= j < len(self) else None

    def is_edited(self, i: int) -> bool:
        return False

    @property
    def complete_records(self) -> int:
        return len(self.index)

    def info_lines(self) -> list[str]:
        return []  # (TFRecord framing has nothing to add to the path, compression and size)

    @property
    def hashes_checked(self) -> bool:
        return False

    def group_size_warning(self) -> str | None:
        return None
