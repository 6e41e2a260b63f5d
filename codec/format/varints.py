"""Protobuf varints read from bytes, as protobuf reads them (no imports: the fast paths use it)."""
from __future__ import annotations

U64 = (1 << 64) - 1


def varint64(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """The varint at ``pos`` (at most 10 bytes, kept to 64 bits as protobuf does) and the position after it.

    None if it runs past ``end`` or over 10 bytes.
    """
    result = 0
    shift = 0
    for i in range(pos, min(end, pos + 10)):
        byte = data[i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & U64, i + 1
        shift += 7
    return None
