"""The edited records of a file, seen through the reading interface of a TFRecordFile.

A :class:`codec.document.Document` is an overlay of edits over a file; the
table model, the detail view and the exporters read records by number from
a TFRecordFile. :class:`EditedFile` gives them the document's records under
the same names (``len``, ``read``, ``record_info``, ``index.status``...), so
row ``i`` everywhere is document record ``i``. A new or changed record has no
place in the file yet: its offset is -1 and its status ok. Nothing here knows
the file format; it only maps row numbers to the source's records.
"""
from __future__ import annotations

import dataclasses
from typing import Iterator

import numpy as np

from codec.crc import masked_crc
from codec.document import Document
from codec.framing import Compression, Problem, RecordInfo, RecordStatus, encode_record
from codec.reader import RecordData, TFRecordFile

NO_OFFSET = -1  # the offset of a record that is not in the file yet


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

    def pinned(self, i: int) -> PinnedRecord:
        """Row ``i`` as it is now, safe to read on another thread while edits go on."""
        j = self.document.origin(i)
        return PinnedRecord(self.source, i, j, self.document.data(i) if j is None else None)


class PinnedRecord:
    """One row resolved at a moment: a source record, or the bytes of an edited one.

    :class:`app.record_detail.RecordDetail` reads it like a file holding just
    that record. An edited record is framed as saving would write it, at
    offset 0 of its own frame, and ``note`` says it is not in the file yet.
    """

    def __init__(self, source: TFRecordFile, row: int, origin: int | None, data: bytes | None) -> None:
        self.source = source
        self.row = row
        self.origin = origin
        self._data = data
        self._frame: bytes | None = None
        self.compression = source.compression if origin is not None else Compression.NONE
        self.unsaved = origin is None  # the hex view frames it on its own, at offset 0
        if origin is None:
            self.note = "edited · not saved yet"
        elif origin != row:
            self.note = f"record {origin:,} in the file, at offset {source.index.offset(origin):,}"
        else:
            self.note = None

    def record_info(self, i: int) -> RecordInfo:
        if self.origin is None:
            return RecordInfo(self.row, 0, len(self._data), RecordStatus.OK)
        return dataclasses.replace(self.source.record_info(self.origin), index=self.row)

    def read(self, i: int) -> RecordData:
        if self.origin is None:
            crc = masked_crc(self._data)
            return RecordData(RecordInfo(self.row, 0, len(self._data), RecordStatus.OK), self._data, crc, crc)
        rec = self.source.read(self.origin)
        return RecordData(dataclasses.replace(rec.info, index=self.row), rec.data, rec.stored_crc, rec.computed_crc)

    def read_bytes(self, offset: int, size: int) -> bytes:
        if self.origin is None:
            if self._frame is None:
                self._frame = encode_record(self._data)
            return self._frame[offset:offset + size]
        return self.source.read_bytes(offset, size)
