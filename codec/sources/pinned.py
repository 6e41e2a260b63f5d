"""One record resolved at a moment, for a detail view (a :class:`codec.sources.protocol.RecordReader`).

A detail view reads its record on another thread; the row it shows may be
edited or renumbered meanwhile. A pinned record holds what the row was: a
record of the file (read from it, at its own offsets), or the bytes of an
edited one (framed as saving would write it, at offset 0 of its own frame).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol

from codec.format.crc import masked_crc
from codec.format.framing import Compression, RecordInfo, RecordStatus, encode_record
from codec.sources.protocol import RecordData, RecordFacts, RecordIndexView

if TYPE_CHECKING:
    from codec.datasets.label_maps import LabelNames
    from codec.decode.payloads import Payload


class PinSource(RecordFacts, Protocol):
    """What a pinned record reads of the file it comes from (a :class:`codec.sources.tfrecord_file.TFRecordFile`)."""

    @property
    def index(self) -> RecordIndexView: ...

    def read_bytes(self, offset: int, size: int) -> bytes: ...


class PinnedRecord:
    """One row resolved at a moment: a source record, or the bytes of an edited one.

    A detail view reads it as a :class:`codec.sources.protocol.RecordReader` holding
    just that record. An edited record is framed as saving would write it, at
    offset 0 of its own frame, and ``note`` says it is not in the file yet.
    """

    def __init__(self, source: PinSource, row: int, origin: int | None, data: bytes | None) -> None:
        """``origin``: the source record the row shows, or None for an edited one, whose bytes are ``data``."""
        self.source = source
        self.row = row
        self.origin = origin
        self._data = data or b""
        self._frame: bytes | None = None
        self.compression = source.compression if origin is not None else Compression.NONE
        self.payload: Payload | None = source.payload
        self.labels: LabelNames | None = source.labels
        self.unsaved = origin is None  # the hex view frames it on its own, at offset 0
        self.is_remote: bool = source.is_remote
        self.container: str = source.container
        self.modified = origin is None
        self.note: str | None
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
