"""Masked CRC-32C as TFRecord uses it, scalar and vectorised over headers.

numpy is imported by the vectorised functions only: reading one record needs
the scalar CRC alone, and a numpy import costs a one-record ``cat`` ~70 ms.
"""
from __future__ import annotations

import google_crc32c

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import numpy as np

MASK_DELTA = 0xA282EAD8


def mask(crc: int) -> int:
    """TensorFlow's CRC mask: rotate right by 15 bits and add a constant."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """The masked CRC-32C of ``data`` (bytes only: google-crc32c's rule)."""
    return mask(google_crc32c.value(data))


def _make_table() -> np.ndarray:
    import numpy as np

    poly = 0x82F63B78  # CRC-32C (Castagnoli), reflected
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table[i] = c
    return table


_TABLE: np.ndarray | None = None


def _table() -> np.ndarray:
    global _TABLE
    if _TABLE is None:
        _TABLE = _make_table()
    return _TABLE


def masked_crc_columns(columns: list[np.ndarray]) -> np.ndarray:
    """Masked CRC-32C of many equal-length byte strings given column by column.

    ``columns[j][i]`` is byte j of string i. Used to check many 8-byte length
    fields at once: per byte column, one table lookup over every string,
    instead of one Python call per header.
    """
    import numpy as np

    table = _TABLE if _TABLE is not None else _table()
    crc = np.full(columns[0].shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for column in columns:
        crc = table[(crc ^ column) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    rot = (crc >> np.uint32(15)) | (crc << np.uint32(17))
    return rot + np.uint32(MASK_DELTA)  # uint32 arithmetic wraps mod 2**32


def masked_crc_windows(buf: np.ndarray, width: int = 8) -> np.ndarray:
    """Masked CRC of every ``width``-byte window of ``buf`` (window i starts at i)."""
    import numpy as np

    n = buf.shape[0] - width + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint32)
    table = _TABLE if _TABLE is not None else _table()
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    for col in range(width):
        crc = table[(crc ^ buf[col:col + n]) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    rot = (crc >> np.uint32(15)) | (crc << np.uint32(17))
    return rot + np.uint32(MASK_DELTA)
