"""ArrayRecord's index of its chunks: the postscript in the file's last 64 KiB, which points at the
footer chunk, whose records are the metadata (version, counts, writer options) and one entry per
chunk (its offset and record count). From these, record N is one read of its chunk.

The messages are array_record's ``layout.proto`` (RiegeliPostscript, RiegeliFooterMetadata,
ArrayRecordFooter), read field by field: they hold only varints and one string.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from codec.format.riegeli import BLOCK_SIZE, ChunkDamage, int_field, proto_fields, varint_array

MAGIC = 0x71930E704FDAE05E  # RiegeliPostscript.magic
VERSION = 1  # ArrayRecordMetadata.version this reader knows
POSTSCRIPT_SPAN = BLOCK_SIZE  # the postscript chunk begins this far before the file's end


@dataclass(frozen=True)
class ArrayRecordLayout:
    """Where an ArrayRecord file's chunks are: ``chunk_offsets[k]`` holds ``chunk_records[k]`` records;
    the last chunk ends at ``footer_offset``."""

    footer_offset: int
    num_records: int
    chunk_offsets: list[int]
    chunk_records: list[int]
    writer_options: str | None
    arrays: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)  # the two lists

    def chunk_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(chunk offsets as int64, record counts as int64), as numpy arrays."""
        if self.arrays is not None:
            return self.arrays
        return (np.asarray(self.chunk_offsets, dtype=np.uint64).astype(np.int64),
                np.asarray(self.chunk_records, dtype=np.int64))

    @property
    def options(self) -> dict[str, str]:
        """The writer options string as name -> value (``zstd:3`` -> zstd: 3; a bare word -> "")."""
        out: dict[str, str] = {}
        for part in (self.writer_options or "").split(","):
            name, _, value = part.strip().partition(":")
            if name:
                out[name] = value
        return out

    @property
    def group_size(self) -> int:
        """Records per chunk as written: the option, else the first chunk's count (as Google's reader takes it)."""
        stated = self.options.get("group_size", "")
        if stated.isdigit():
            return int(stated)
        return self.chunk_records[0] if self.chunk_records else 1

    @property
    def compression(self) -> str:
        """The compression the writer was asked for (zstd, brotli, snappy or uncompressed), or "unknown"."""
        options = self.options
        return next((name for name in ("zstd", "brotli", "snappy", "uncompressed") if name in options), "unknown")


def footer_offset(postscript_records: list[bytes], where: int) -> int:
    """The footer's offset from the postscript chunk's records (three copies; the first sound one)."""
    for record in postscript_records:
        try:
            fields = proto_fields(record)
        except ValueError:
            continue
        offset = int_field(fields, 1)
        if int_field(fields, 2) == MAGIC and offset is not None and offset < where:
            return offset
    raise ChunkDamage(f"chunk at offset {where:,}: no ArrayRecord postscript (its magic number or footer "
                      "offset is missing)", offset=where)


def parse_footer(values: bytes, ends: np.ndarray, where: int) -> ArrayRecordLayout:
    """The layout from the footer chunk at ``where``, its records one after another in ``values`` (each
    ending where ``ends`` says): the metadata, then one entry per chunk."""
    def damaged(why: str) -> ChunkDamage:
        return ChunkDamage(f"chunk at offset {where:,} (the ArrayRecord footer): {why}", offset=where)

    if not len(ends):
        raise damaged("no metadata record")
    first = int(ends[0])
    try:
        outer = proto_fields(values[:first])
        metadata = proto_fields(next(v for v in outer.get(1, ()) if isinstance(v, bytes)))
    except (ValueError, StopIteration):
        raise damaged("its metadata is not an ArrayRecordMetadata message") from None
    version = int_field(metadata, 1)
    if version != VERSION:
        raise damaged(f"ArrayRecord version {version}, this reader knows version {VERSION}")
    num_chunks = int_field(metadata, 2) or 0
    num_records = int_field(metadata, 3) or 0
    if len(ends) != num_chunks + 1:
        raise damaged(f"{num_chunks:,} chunks stated, {len(ends) - 1:,} entries found")
    offsets_array, counts_array = _entries(values[first:], ends[1:] - first, damaged)
    if (counts_array < 0).any() or int(counts_array.sum()) != num_records:
        raise damaged(f"{num_records:,} records stated, its chunks hold {int(counts_array.sum()):,}")
    if (np.diff(offsets_array) <= 0).any() or (len(offsets_array) and not 0 <= offsets_array[0] <= offsets_array[-1] < where):
        raise damaged("its chunk offsets are out of order")
    options = next((v for v in metadata.get(4, ()) if isinstance(v, bytes)), None)
    return ArrayRecordLayout(where, num_records, offsets_array.tolist(), counts_array.tolist(),
                             None if options is None else options.decode("utf-8", "replace"),
                             (offsets_array, counts_array))


def _entries(buf: bytes, ends: np.ndarray, damaged) -> tuple[np.ndarray, np.ndarray]:
    """(chunk offsets, record counts), as int64, of the ArrayRecordFooter entries in ``buf`` (each ending
    where ``ends`` says): as numpy reads them when every entry is its three fields in order (as the writer
    writes them), else field by field."""
    got = varint_array(buf, 6 * len(ends))
    if got is not None:
        values, after = got
        if (np.array_equal(after[5::6], ends) and (values[0::6] == 0x08).all() and (values[2::6] == 0x10).all()
                and (values[4::6] == 0x18).all()):
            return values[1::6].astype(np.int64), values[5::6].astype(np.int64)
    offsets, counts = [], []
    bounds = ends.tolist()
    for a, b in zip([0] + bounds[:-1], bounds):
        entry = buf[a:b]
        try:
            fields = proto_fields(entry)
        except ValueError:
            raise damaged("an entry is not an ArrayRecordFooter message") from None
        offset = int_field(fields, 1)
        if offset is None:
            raise damaged("an entry has no chunk offset")
        offsets.append(offset)
        counts.append(int_field(fields, 3) or 0)
    return np.asarray(offsets, dtype=np.uint64).astype(np.int64), np.asarray(counts, dtype=np.uint64).astype(np.int64)
