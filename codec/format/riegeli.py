"""Riegeli/records as ArrayRecord writes it: block headers, chunk headers and simple chunks.

The layout is Riegeli's own specification (riegeli_records_file_format.md): a block header
every 64 KiB interrupts the chunks, each chunk is a 40-byte header and its data. Only bytes
are handled here; reading them from a file is :mod:`codec.sources.array_record_file`'s.
Hashes (HighwayHash-64) are not computed here: no well-kept Python implementation exists.
"""
from __future__ import annotations

import struct
import threading
from typing import NamedTuple

import numpy as np

from codec.errors import CorruptRecordError
from codec.format.varints import varint64

BLOCK_SIZE = 1 << 16
BLOCK_HEADER_SIZE = 24
USABLE_BLOCK_SIZE = BLOCK_SIZE - BLOCK_HEADER_SIZE
CHUNK_HEADER_SIZE = 40
# The first 64 bytes of every Riegeli/records file: a block header and the signature chunk's header.
SIGNATURE = bytes.fromhex(
    "83af70d10d884a3f" "0000000000000000" "4000000000000000" "91bac23c9287e1a9"
    "0000000000000000" "e19f13c0e9b1c372" "7300000000000000" "0000000000000000")

SIGNATURE_CHUNK, METADATA_CHUNK, PADDING_CHUNK = 0x73, 0x6D, 0x70
SIMPLE_CHUNK, TRANSPOSED_CHUNK = 0x72, 0x74
KNOWN_CHUNKS = frozenset((SIGNATURE_CHUNK, METADATA_CHUNK, PADDING_CHUNK, SIMPLE_CHUNK, TRANSPOSED_CHUNK))
MANY_RECORDS = 16  # a chunk of this many records has its sizes read by numpy
COMPRESSIONS = {0: "none", 0x62: "brotli", 0x7A: "zstd", 0x73: "snappy"}

_HEADER = struct.Struct("<QQQQQ")  # header_hash, data_size, data_hash, type|num_records<<8, decoded_data_size
_BLOCK = struct.Struct("<QQQ")  # header_hash, previous_chunk, next_chunk


class ChunkDamage(CorruptRecordError):
    """A chunk that cannot be read as the format says; ``offset`` is where the chunk begins."""


class TransposedChunk(ChunkDamage):
    """A transposed chunk: decoded only by Google's ``array-record`` package."""


def is_riegeli(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) begins with the Riegeli/records signature."""
    return head[:len(SIGNATURE)] == SIGNATURE


class ChunkHeader(NamedTuple):
    """The 40 bytes before a chunk's data (a tuple: one is made per chunk read)."""

    header_hash: int
    data_size: int
    data_hash: int
    chunk_type: int
    num_records: int
    decoded_data_size: int

    @classmethod
    def parse(cls, buf: bytes, pos: int = 0) -> ChunkHeader:
        header_hash, data_size, data_hash, kind, decoded = _HEADER.unpack_from(buf, pos)
        return cls(header_hash, data_size, data_hash, kind & 0xFF, kind >> 8, decoded)

    @property
    def type_name(self) -> str:
        return {SIGNATURE_CHUNK: "signature", METADATA_CHUNK: "metadata", PADDING_CHUNK: "padding",
                SIMPLE_CHUNK: "simple", TRANSPOSED_CHUNK: "transposed"}.get(
                    self.chunk_type, f"unknown type {self.chunk_type:#04x}")


ZERO_HEADER = ChunkHeader(0, 0, 0, 0, 0, 0)  # what space never written reads as


def overhead_blocks(pos: int, size: int) -> int:
    """How many block headers interrupt ``size`` chunk bytes written from file position ``pos``."""
    return (size + (pos + USABLE_BLOCK_SIZE - 1) % BLOCK_SIZE) // USABLE_BLOCK_SIZE


def add_with_overhead(pos: int, size: int) -> int:
    """The file position ``size`` chunk bytes after ``pos``, block headers included."""
    return pos + size + overhead_blocks(pos, size) * BLOCK_HEADER_SIZE


def chunk_end(begin: int, header: ChunkHeader) -> int:
    """Where the chunk beginning at ``begin`` ends (its padding included), as the format defines it."""
    remaining = BLOCK_SIZE - 1 - (begin + header.num_records + BLOCK_SIZE - 1) % BLOCK_SIZE
    boundary = begin + header.num_records + max(0, remaining - (USABLE_BLOCK_SIZE - 1))
    return max(add_with_overhead(begin, CHUNK_HEADER_SIZE + header.data_size), boundary)


def without_block_headers(buf: bytes, start: int) -> bytes:
    """``buf``, read from file position ``start``, with the block headers inside it taken out."""
    first = -start % BLOCK_SIZE  # where the first block boundary falls in buf
    if first >= len(buf):
        return buf
    parts = [buf[:first]]
    for at in range(first, len(buf), BLOCK_SIZE):
        parts.append(buf[at + BLOCK_HEADER_SIZE:at + BLOCK_SIZE])
    return b"".join(parts)


def chunk_header(buf: bytes, begin: int) -> tuple[ChunkHeader, bytes]:
    """The header of the chunk at file position ``begin`` whose bytes (block headers in) are ``buf``,
    and those bytes without the block headers."""
    logical = without_block_headers(buf, begin)
    if len(logical) < CHUNK_HEADER_SIZE:
        raise ChunkDamage(f"chunk at offset {begin:,}: the file ends inside its header", offset=begin)
    return ChunkHeader.parse(logical), logical


def read_chunk(buf: bytes, begin: int) -> tuple[ChunkHeader, bytes]:
    """(header, data) of the chunk at file position ``begin`` whose bytes (block headers in) are ``buf``."""
    header, logical = chunk_header(buf, begin)
    data = logical[CHUNK_HEADER_SIZE:CHUNK_HEADER_SIZE + header.data_size]
    if len(data) < header.data_size:
        raise ChunkDamage(f"chunk at offset {begin:,}: its header says {header.data_size:,} bytes of data, "
                          f"{len(data):,} are there", offset=begin)
    return header, data


_local = threading.local()


def _varint(buf: bytes, pos: int) -> tuple[int, int] | None:
    """:func:`varint64` at ``pos``, the one- and two-byte ones (sizes under 16 KiB) without its loop."""
    n = len(buf)
    if pos < n:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        if pos + 1 < n and buf[pos + 1] < 0x80:
            return (b & 0x7F) | (buf[pos + 1] << 7), pos + 2
    return varint64(buf, pos, n)


def _zstd():
    """This thread's zstd decompressor (one made per chunk costs more than the chunk's decompression)."""
    decompressor = getattr(_local, "zstd", None)
    if decompressor is None:
        import zstandard

        decompressor = _local.zstd = zstandard.ZstdDecompressor()
    return decompressor


def _decompress(kind: int, data: bytes, begin: int, what: str, limit: int) -> bytes:
    """``data`` of a chunk at ``begin`` decompressed as ``kind`` says (prefixed by its decompressed size,
    which must not pass ``limit``: nothing is allocated for a size the chunk's header rules out)."""
    if kind == 0:
        return data
    if kind not in COMPRESSIONS:
        raise ChunkDamage(f"chunk at offset {begin:,}: unknown compression type {kind:#04x}", offset=begin)
    got = _varint(data, 0)
    if got is None:
        raise ChunkDamage(f"chunk at offset {begin:,}: the {what}' decompressed size is not a varint", offset=begin)
    size, pos = got
    if size > limit:
        raise ChunkDamage(f"chunk at offset {begin:,}: the {what} claim {size:,} bytes decompressed, "
                          f"more than the {limit:,} its header allows", offset=begin)
    try:
        if kind == 0x7A:
            decompressor = getattr(_local, "zstd", None) or _zstd()
            out = decompressor.decompress(data[pos:], max_output_size=size)
        elif kind == 0x62:
            import brotli

            out = brotli.decompress(data[pos:])
        else:  # 0x73, snappy (raw, unframed)
            import cramjam

            out = bytes(cramjam.snappy.decompress_raw(data[pos:]))
    except Exception as exc:  # noqa: BLE001 - each decompressor raises its own kind for damaged input
        name = COMPRESSIONS[kind]
        raise ChunkDamage(f"chunk at offset {begin:,}: the {what} do not decompress as {name} "
                          f"({str(exc) or type(exc).__name__})", offset=begin) from None
    if len(out) != size:
        raise ChunkDamage(f"chunk at offset {begin:,}: the {what} decompress to {len(out):,} bytes, "
                          f"not the {size:,} stated", offset=begin)
    return out


def varint_array(buf: bytes, count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``count`` varints that make up ``buf`` exactly (as uint64, kept to 64 bits as protobuf does)
    and the position after each; None when ``buf`` is not exactly ``count`` varints of at most 10 bytes."""
    b = np.frombuffer(buf, dtype=np.uint8)
    if len(b) == count and (count == 0 or int(b.max()) < 0x80):  # every one a byte (records under 128 bytes)
        return b.astype(np.uint64), np.arange(1, count + 1, dtype=np.int64)
    ends = np.flatnonzero(b < 0x80)
    if len(ends) != count or (count and ends[-1] != len(b) - 1) or (not count and len(b)):
        return None
    starts = np.zeros(count, dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    values = (b[starts] & 0x7F).astype(np.uint64)
    longer = np.flatnonzero(ends != starts)  # the varints with a k-th byte (fewer each round)
    k = 1
    while len(longer):
        if k == 10:
            return None
        at = starts[longer] + k
        values[longer] |= (b[at] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        longer = longer[ends[longer] != at]
        k += 1
    return values, ends + 1


def chunk_compression(data: bytes) -> str:
    """The compression of a simple chunk's ``data`` (its first byte), by name."""
    return COMPRESSIONS.get(data[0], f"unknown ({data[0]:#04x})") if data else "none"


def _buffers(header: ChunkHeader, data: bytes, begin: int) -> tuple[bytes, bytes]:
    """(record sizes, records) of the simple chunk at ``begin``, decompressed."""
    if header.chunk_type == TRANSPOSED_CHUNK:
        raise TransposedChunk(f"chunk at offset {begin:,} is transposed", offset=begin)
    if header.chunk_type != SIMPLE_CHUNK:
        raise ChunkDamage(f"chunk at offset {begin:,}: a {header.type_name} chunk where records were expected",
                          offset=begin)
    if not data:
        raise ChunkDamage(f"chunk at offset {begin:,}: no data", offset=begin)
    kind = data[0]
    got = _varint(data, 1)
    if got is None or got[0] > len(data) - got[1]:
        raise ChunkDamage(f"chunk at offset {begin:,}: the size of its record sizes runs past its data", offset=begin)
    sizes_size, pos = got
    sizes = _decompress(kind, data[pos:pos + sizes_size], begin, "record sizes", 10 * header.num_records)
    values = _decompress(kind, data[pos + sizes_size:], begin, "records", header.decoded_data_size)
    return sizes, values


def simple_records(header: ChunkHeader, data: bytes, begin: int) -> list[bytes]:
    """The records of the simple chunk at ``begin``, every size checked against the header."""
    sizes, values = _buffers(header, data, begin)
    if header.num_records >= MANY_RECORDS:
        ends = _ends(header, sizes, values, begin).tolist()
        return [values[a:b] for a, b in zip([0] + ends[:-1], ends)]
    records: list[bytes] = []
    at, p, n = 0, 0, len(sizes)
    for _ in range(header.num_records):
        got = _varint(sizes, p)
        if got is None:
            raise ChunkDamage(f"chunk at offset {begin:,}: {header.num_records:,} record sizes stated, "
                              f"{len(records):,} found", offset=begin)
        size, p = got
        records.append(values[at:at + size])
        at += size
    if p != n:
        raise ChunkDamage(f"chunk at offset {begin:,}: {n - p:,} bytes after its {header.num_records:,} record sizes",
                          offset=begin)
    if at != len(values) or at != header.decoded_data_size:
        raise ChunkDamage(f"chunk at offset {begin:,}: its records' sizes add up to {at:,} bytes; "
                          f"the records hold {len(values):,}, the header says {header.decoded_data_size:,}",
                          offset=begin)
    return records


def simple_values(header: ChunkHeader, data: bytes, begin: int) -> tuple[bytes, np.ndarray]:
    """The simple chunk at ``begin`` as its records one after another and where each ends (checked as
    :func:`simple_records` checks them): a chunk of many records without a bytes object per record."""
    sizes, values = _buffers(header, data, begin)
    return values, _ends(header, sizes, values, begin)


def _ends(header: ChunkHeader, sizes: bytes, values: bytes, begin: int) -> np.ndarray:
    """Where each record ends in ``values``, from the chunk's record ``sizes`` read by numpy."""
    got = varint_array(sizes, header.num_records)
    if got is None:
        raise ChunkDamage(f"chunk at offset {begin:,}: its record sizes are not {header.num_records:,} varints",
                          offset=begin)
    lengths = got[0]
    if (len(lengths) and int(lengths.max()) > len(values)) or int(lengths.sum()) != len(values) \
            or len(values) != header.decoded_data_size:
        raise ChunkDamage(f"chunk at offset {begin:,}: its records' sizes do not add up to the "
                          f"{header.decoded_data_size:,} bytes its header says (the records hold {len(values):,})",
                          offset=begin)
    return np.cumsum(lengths, dtype=np.int64)


def logical_positions(positions: list[int] | np.ndarray, start: int) -> np.ndarray:
    """Where file ``positions`` (chunk beginnings at or after ``start``) fall once the block headers from
    ``start`` on are taken out (:func:`without_block_headers`)."""
    p = np.asarray(positions, dtype=np.int64)
    crossed = -(-p // BLOCK_SIZE) - (-(-start // BLOCK_SIZE))  # block boundaries in [start, p)
    return p - start - BLOCK_HEADER_SIZE * crossed


def single_records(logical: bytes, starts: np.ndarray, limits: np.ndarray) -> list[bytes] | None:
    """The one record of each simple chunk whose bytes (block headers out) begin at ``starts`` in
    ``logical`` and end by ``limits``: the chunks of a ``group_size:1`` file, read with numpy instead of a
    call per field. None unless every chunk holds one record, zstd-compressed or not at all, with the
    sizes and values exactly as its header says: the caller then reads the chunks one by one
    (:func:`simple_records` says what is wrong)."""
    arr = np.frombuffer(logical, dtype=np.uint8)
    if not len(starts) or (starts + CHUNK_HEADER_SIZE + 3 > limits).any():
        return None
    header = arr[starts[:, None] + np.arange(CHUNK_HEADER_SIZE)].view("<u8")
    data_size, kind, decoded = header[:, 1].astype(np.int64), header[:, 3], header[:, 4].astype(np.int64)
    end = starts + CHUNK_HEADER_SIZE + data_size
    if (kind != (1 << 8 | SIMPLE_CHUNK)).any() or (data_size < 0).any() or (end > limits).any():
        return None
    compression = arr[starts + CHUNK_HEADER_SIZE]
    sizes_size = arr[starts + CHUNK_HEADER_SIZE + 1].astype(np.int64)
    sizes_at = starts + CHUNK_HEADER_SIZE + 2
    values_at = sizes_at + sizes_size
    if (sizes_size >= 0x80).any() or (values_at > end).any():
        return None
    if (compression == 0).all():
        got = varint_array(b"".join(logical[a:b] for a, b in zip(sizes_at.tolist(), values_at.tolist())), len(starts))
        if got is None or not np.array_equal(got[1], np.cumsum(sizes_size)) or not np.array_equal(got[0], decoded) \
                or not np.array_equal(end - values_at, decoded):
            return None
        return [logical[a:b] for a, b in zip(values_at.tolist(), end.tolist())]
    if not (compression == 0x7A).all() or (arr[sizes_at] >= 0x80).any():
        return None
    return _zstd_singles(logical, arr, sizes_at, values_at, end, decoded)


def _zstd_singles(logical: bytes, arr: np.ndarray, sizes_at: np.ndarray, values_at: np.ndarray, end: np.ndarray,
                  decoded: np.ndarray) -> list[bytes] | None:
    """:func:`single_records` of zstd chunks: their record frames decompressed in one call, their sizes checked."""
    sizes_out = arr[sizes_at].astype(np.int64)  # each sizes buffer's decompressed size (a one-byte varint)
    stated = np.zeros(len(values_at), dtype=np.uint64)  # each values buffer's decompressed size (a varint)
    frame_at = np.zeros(len(values_at), dtype=np.int64)  # where its frame begins, once the varint ends
    done = np.zeros(len(values_at), dtype=bool)
    for k in range(10):
        at = values_at + k
        live = ~done & (at < end)
        byte = arr[np.where(live, at, 0)].astype(np.uint64)
        stated[live] |= (byte[live] & np.uint64(0x7F)) << np.uint64(7 * k)
        ended = live & (byte < 0x80)
        frame_at[ended] = at[ended] + 1
        done |= ended
        if done.all():
            break
    if not done.all() or not np.array_equal(stated.astype(np.int64), decoded):
        return None
    decompressor = getattr(_local, "zstd", None) or _zstd()
    try:
        if not _sizes_agree(decompressor, logical, arr, sizes_at + 1, values_at, sizes_out, decoded):
            return None
        return zstd_frames(decompressor, logical, frame_at, end, decoded)
    except Exception:  # noqa: BLE001 - a damaged frame: the caller reads the chunks one by one to say which
        return None


def _sizes_agree(decompressor, logical: bytes, arr: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 sizes_out: np.ndarray, decoded: np.ndarray) -> bool:
    """Whether each one-record chunk's sizes frame (``logical[starts[k]:ends[k]]``) decompresses to one varint
    of ``sizes_out[k]`` bytes saying ``decoded[k]``. Equal frames decompress alike: each distinct one
    (a few, one per record size) is decompressed once."""
    lengths = ends - starts
    if not len(lengths) or (lengths <= 0).any() or int(lengths.max()) > 0xFF:
        return False
    width = int(lengths.max())
    columns = np.arange(width)
    rows = np.zeros((len(lengths), width + 1), dtype=np.uint8)
    rows[:, :width] = np.where(columns < lengths[:, None], arr[np.minimum(starts[:, None] + columns, len(arr) - 1)], 0)
    rows[:, width] = lengths  # (a frame and its length: frames that differ only in trailing zeros differ here)
    keys = np.ascontiguousarray(rows).view(np.dtype((np.void, width + 1))).ravel()
    _, firsts, inverse = np.unique(keys, return_index=True, return_inverse=True)
    values, sizes = np.zeros(len(firsts), dtype=np.int64), np.zeros(len(firsts), dtype=np.int64)
    for j, k in enumerate(firsts.tolist()):
        out = decompressor.decompress(logical[int(starts[k]):int(ends[k])], max_output_size=int(sizes_out[k]))
        got = varint64(out, 0, len(out))
        values[j], sizes[j] = (got[0], len(out)) if got is not None and got[1] == len(out) else (-1, -1)
    inverse = inverse.ravel()
    return np.array_equal(values[inverse], decoded) and np.array_equal(sizes[inverse], sizes_out)


def zstd_frames(decompressor, buf: bytes, starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray) -> list[bytes]:
    """The zstd frames ``buf[starts[k]:ends[k]]``, each decompressed to exactly ``sizes[k]`` bytes (else an
    error), in one call for them all; a frame of empty content alone (``multi_decompress_to_buffer``
    cannot take it)."""
    import zstandard

    filled = np.flatnonzero(sizes > 0)
    records: list[bytes] = []
    if len(filled):
        segments = np.empty((len(filled), 2), dtype="<u8")
        segments[:, 0] = starts[filled]
        segments[:, 1] = ends[filled] - starts[filled]
        if not segments[:, 1].all():
            raise ValueError("an empty frame")
        out = decompressor.multi_decompress_to_buffer(zstandard.BufferWithSegments(buf, segments.tobytes()),
                                                      decompressed_sizes=sizes[filled].astype("<u8").tobytes())
        records = [segment.tobytes() for segment in out]
    if len(filled) == len(sizes):
        return records
    placed: list[bytes] = [b""] * len(sizes)
    for k, record in zip(filled.tolist(), records):
        placed[k] = record
    for k in np.flatnonzero(sizes == 0).tolist():
        placed[k] = decompressor.decompress(buf[int(starts[k]):int(ends[k])], max_output_size=1)
        if placed[k]:
            raise ValueError("a frame stated empty is not")
    return placed


def proto_fields(buf: bytes) -> dict[int, list[int | bytes]]:
    """The fields of a serialized protobuf message by number (varints and length-delimited only:
    what ArrayRecord's footer and postscript hold); ValueError when it is not one."""
    fields: dict[int, list[int | bytes]] = {}
    pos, end = 0, len(buf)
    while pos < end:
        got = varint64(buf, pos, end)
        if got is None:
            raise ValueError("bad tag")
        tag, pos = got
        number, wire = tag >> 3, tag & 7
        got = varint64(buf, pos, end)
        if got is None or number == 0:
            raise ValueError("bad field")
        value, pos = got
        if wire == 2:
            if value > end - pos:
                raise ValueError("field runs past the message")
            fields.setdefault(number, []).append(buf[pos:pos + value])
            pos += value
        elif wire == 0:
            fields.setdefault(number, []).append(value)
        else:
            raise ValueError(f"wire type {wire}")
    return fields


def int_field(fields: dict[int, list[int | bytes]], number: int) -> int | None:
    """The last varint value of field ``number`` (protobuf keeps the last), None when absent."""
    values = [v for v in fields.get(number, ()) if isinstance(v, int)]
    return values[-1] if values else None
