"""The layout of a record on disk, as struct formats and sizes (nothing else: no import cost).

A record is::

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes)
    | data[length] | uint32 masked_crc32c(data)
"""
from __future__ import annotations

import struct

HEADER = struct.Struct("<QI")  # length, masked CRC of the 8 length bytes
LENGTH = struct.Struct("<Q")
CRC = struct.Struct("<I")
HEADER_SIZE = 12
FOOTER_SIZE = 4
OVERHEAD = HEADER_SIZE + FOOTER_SIZE
