"""The edited records of a file, as a record source (:class:`codec.sources.protocol.RecordSource`).

A :class:`codec.editing.document.Document` is an overlay of edits over a file.
:class:`EditedFile` gives its records by row, so row ``i`` everywhere is
document record ``i``; a new or changed record has no place in the file yet:
its offset is ``NO_OFFSET`` and its status ok, and it is framed (CRCs and all)
as saving would write it. :class:`PinnedRecord` is one row resolved at a
moment, for a detail view reading it on another thread while edits go on.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterator

import numpy as np

from codec.editing.document import Document
from codec.format.crc import masked_crc
from codec.format.framing import Compression, Problem, RecordInfo, RecordStatus
from codec.sources.pinned import PinnedRecord
from codec.sources.protocol import NO_OFFSET, RecordData
from codec.sources.tfrecord_file import TFRecordFile

if TYPE_CHECKING:
    from codec.format.array_record import ArrayRecordLayout


class _RowIndex:
    """``index.status(i)`` / ``index.offset(i)`` / ``index.statuses()`` by document row."""

    def __init__(self, owner: EditedFile) -> None:
        self._owner = owner

    def __len__(self) -> int:
        return len(self._owner)

    def status(self, i: int) -> RecordStatus:
        return self._owner.status(i)

    def offset(self, i: int) -> int:
        j = self._owner.document.origin(i)
        return NO_OFFSET if j is None else self._owner.source.index.offset(j)

    def statuses(self) -> np.ndarray:
        """Every row's status (uint8), gathered piece by piece from the source's array."""
        source = self._owner.source.index.statuses()
        parts = [np.full(len(p), int(RecordStatus.OK), dtype=np.uint8) if p.new else source[p.start:p.stop]
                 for p in self._owner.document.snapshot()]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)


class EditedFile:
    """Document records by row, for views and exporters that read a TFRecordFile."""

    note = None
    unsaved = False
    statuses_stored = False  # statuses are the source's, mapped: a verify pass stores them there

    def __init__(self, document: Document) -> None:
        self.document = document
        self.source: TFRecordFile = document.source
        self.index = _RowIndex(self)
        self._problems_key: tuple | None = None
        self._problems: list[Problem] = []

    # -- what a TFRecordFile also says ----------------------------------------
    @property
    def path(self) -> str:
        return self.source.path

    @property
    def compression(self) -> Compression:
        return self.source.compression

    @property
    def payload(self):
        return self.source.payload

    @property
    def labels(self):
        return self.source.labels

    @property
    def container(self) -> str:
        return self.source.container

    @property
    def complete_records(self) -> int:
        return len(self)  # (a document is not followed)

    def info_lines(self) -> list[str]:
        return self.source.info_lines()

    @property
    def layout(self) -> ArrayRecordLayout | None:
        return self.source.layout

    @property
    def hashes_checked(self) -> bool:
        return self.source.hashes_checked

    def group_size_warning(self) -> str | None:
        return self.source.group_size_warning()

    @property
    def file_size(self) -> int:
        return self.source.file_size

    @property
    def verified(self) -> bool:
        return self.source.verified

    @property
    def indexed(self) -> bool:
        return self.source.indexed

    @property
    def modified(self) -> bool:
        return self.document.modified

    @property
    def mtime_ns(self) -> int:
        return self.source.mtime_ns

    @property
    def is_remote(self) -> bool:
        return self.source.is_remote

    @property
    def bytes_fetched(self) -> int | None:
        return self.source.bytes_fetched

    is_set = False  # (only a single file is edited)
    numbered_out_of_order = False  # rows come and go by edits, which say so themselves

    @property
    def files(self) -> list[str]:
        return self.source.files

    @property
    def unusable(self) -> list[tuple[str, str]]:
        return self.source.unusable

    def publish(self) -> list[tuple[int, int]]:
        return []

    def file_row(self, k: int, j: int) -> int | None:
        """The row showing the file's record ``j`` unchanged; None when edited away."""
        return self.row_of(j) if k == 0 and 0 <= j < len(self.source) else None

    def is_edited(self, i: int) -> bool:
        return self.document.origin(i) is None

    def __len__(self) -> int:
        return len(self.document)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.document)

    # -- rows -------------------------------------------------------------------
    def origin(self, i: int) -> int | None:
        """The source record behind row ``i``, or None for a new or changed record."""
        return self.document.origin(i)

    def is_modified(self, i: int) -> bool:
        return self.document.is_modified(i)

    def data(self, i: int) -> bytes:
        return self.document.data(i)

    def status(self, i: int) -> RecordStatus:
        return self.document.status(i)

    def record_info(self, i: int) -> RecordInfo:
        j = self.document.origin(i)
        if j is None:
            return RecordInfo(i, NO_OFFSET, len(self.document.data(i)), RecordStatus.OK)
        return dataclasses.replace(self.source.record_info(j), index=i)

    def read(self, i: int) -> RecordData:
        j = self.document.origin(i)
        if j is None:
            data = self.document.data(i)
            crc = masked_crc(data)
            return RecordData(RecordInfo(i, NO_OFFSET, len(data), RecordStatus.OK), data, crc, crc)
        rec = self.source.read(j)
        return RecordData(dataclasses.replace(rec.info, index=i), rec.data, rec.stored_crc, rec.computed_crc)

    def read_bytes(self, offset: int, size: int) -> bytes:
        return self.source.read_bytes(offset, size)

    def row_of(self, j: int) -> int | None:
        """The first row showing source record ``j`` unchanged, or None when it was edited away."""
        base = 0
        for piece in self.document.snapshot():
            if not piece.new and piece.start <= j < piece.stop:
                return base + (j - piece.start)
            base += len(piece)
        return None

    def find_record(self, offset: int) -> int:
        """The row of the source record holding byte ``offset`` (-1 if none, or edited away)."""
        j = self.source.find_record(offset)
        row = self.row_of(j) if j >= 0 else None
        return -1 if row is None else row

    @property
    def problems(self) -> list[Problem]:
        """The source's problems, their record numbers mapped to rows (dropped when edited away)."""
        key = (id(self.source.problems), len(self.source.problems), self.document.snapshot())
        if key != self._problems_key:
            mapped = []
            for p in self.source.problems:
                if p.index is None:
                    mapped.append(p)
                    continue
                row = self.row_of(p.index)
                if row is not None:
                    mapped.append(dataclasses.replace(p, index=row))
            self._problems, self._problems_key = mapped, key
        return self._problems

    def record_before(self, problem: Problem) -> int:
        """The row of the last source record starting at or before ``problem`` (-1 if none, or edited away)."""
        return self.find_record(problem.offset)

    def problem_count(self) -> int:
        return len(self.problems)

    def location(self, i: int) -> tuple[str, int]:
        """(file, offset) of row ``i`` (``NO_OFFSET`` for a record not in the file yet)."""
        return self.path, self.index.offset(i)

    def pinned(self, i: int) -> PinnedRecord:
        """Row ``i`` as it is now, safe to read on another thread while edits go on."""
        j = self.document.origin(i)
        return PinnedRecord(self.source, i, j, self.document.data(i) if j is None else None)


if TYPE_CHECKING:  # mypy holds the edited records to the protocol (codec.sources.conformance: the other sources)
    from codec.sources.protocol import RecordSource

    def _conforms(edited: EditedFile) -> RecordSource:
        return edited
