"""TFRecord framing: the record layout, compression, record statuses, problems, and encoding."""
from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum, IntEnum

from codec.format.crc import masked_crc
from codec.format.layout import CRC, FOOTER_SIZE, HEADER, HEADER_SIZE, LENGTH, OVERHEAD  # noqa: F401 (the layout, named here too)


class Compression(str, Enum):
    """How a TFRecord stream is wrapped; the value is the CLI/JSON spelling."""

    NONE = "none"
    GZIP = "gzip"
    ZLIB = "zlib"

    @classmethod
    def parse(cls, text: str | Compression | None) -> Compression:
        from codec.errors import UsageError

        if isinstance(text, Compression):
            return text
        name = (text or "none").strip().lower()
        aliases = {"": "none", "plain": "none", "gz": "gzip"}
        try:
            return cls(aliases.get(name, name))
        except ValueError:
            raise UsageError(f"unknown compression {text!r}: expected none, gzip or zlib") from None

    @classmethod
    def for_name(cls, path: str) -> Compression:
        """What a file's name says it holds: ``.gz`` GZIP, ``.zz``/``.zlib`` ZLIB, else NONE.

        Writers follow the name unless the user chose otherwise (see
        :func:`name_disagrees`); readers never trust it and sniff the bytes.
        """
        name = str(path).lower()
        if name.endswith(".gz"):
            return cls.GZIP
        if name.endswith((".zz", ".zlib")):
            return cls.ZLIB
        return cls.NONE


def name_disagrees(path: str, compression: Compression) -> str | None:
    """One line saying why ``path`` is a misleading name for ``compression``; None when it fits.

    A compressed suffix with other data, or GZIP/ZLIB data under a plain
    name, both trip the next reader (TensorFlow needs the right
    ``compression_type`` and people pick it from the name).
    """
    named = Compression.for_name(path)
    if named is compression:
        return None
    base = os.path.basename(str(path))
    if named is Compression.NONE:
        return f"{base} is written {compression.value.upper()}-compressed but its name has no .gz/.zz suffix"
    shown = "plain (uncompressed)" if compression is Compression.NONE else compression.value.upper()
    return f"{base} is named like a {named.value.upper()} file but is written {shown}"


class RecordStatus(IntEnum):
    """One byte per record in the index."""

    UNCHECKED = 0  # header's length CRC holds; data CRC not checked yet
    OK = 1  # both CRCs hold
    LENGTH_CRC = 2  # length CRC fails, but the data CRC proves the length: recovered
    DATA_CRC = 3  # length CRC holds, data CRC fails
    TRUNCATED = 4  # the record runs past the end of the file or stream
    WRITING = 5  # the last record of a file being followed: its bytes are still arriving (not damage)

    @property
    def label(self) -> str:
        """The status word of the CLI's JSON: ok, length_crc, data_crc, truncated or writing."""
        return "ok" if self <= RecordStatus.OK else self.name.lower()

    @property
    def damaged(self) -> bool:
        return RecordStatus.LENGTH_CRC <= self <= RecordStatus.TRUNCATED

    @property
    def data_intact(self) -> bool:
        """True when the record's data is known or presumed good (salvageable)."""
        return self <= RecordStatus.LENGTH_CRC


class ProblemKind(str, Enum):
    LENGTH_CRC = "length_crc"
    DATA_CRC = "data_crc"
    TRUNCATED = "truncated"
    GARBAGE = "garbage"
    DECOMPRESS = "decompress"


@dataclass(frozen=True)
class Problem:
    """One piece of damage.

    ``offset`` is where the damaged record's 12-byte header starts (or where
    the damage starts, if no header is left), in the uncompressed stream.
    ``size`` is how many bytes the damage spans there (skipped bytes for a
    resynchronisation). ``compressed_offset`` is set for GZIP/ZLIB streams.
    """

    index: int | None
    offset: int
    kind: ProblemKind
    detail: str
    size: int = 0
    compressed_offset: int | None = None
    expected: int | None = None
    found: int | None = None
    path: str | None = None  # the shard, when the problem belongs to one file of a set

    def to_json(self) -> dict:
        out = {"index": self.index, "offset": self.offset, "problem": self.kind.value, "detail": self.detail}
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True)
class RecordInfo:
    """Where a record is and what is known of it, without its data."""

    index: int
    offset: int
    length: int
    status: RecordStatus

    @property
    def end(self) -> int:
        return self.offset + OVERHEAD + self.length


def encode_record(data: bytes) -> bytes:
    """Frame ``data`` exactly as TensorFlow's TFRecordWriter does."""
    length = LENGTH.pack(len(data))
    return b"".join((length, CRC.pack(masked_crc(length)), data, CRC.pack(masked_crc(bytes(data)))))
