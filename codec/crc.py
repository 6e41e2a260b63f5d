"""Masked CRC-32C as TFRecord uses it, scalar and vectorised over headers."""
from __future__ import annotations

import google_crc32c
import numpy as np

MASK_DELTA = 0xA282EAD8


def mask(crc: int) -> int:
    """TensorFlow's CRC mask: rotate right by 15 bits and add a constant."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """The masked CRC-32C of ``data`` (bytes only: google-crc32c's rule)."""
    return mask(google_crc32c.value(data))


def _make_table() -> np.ndarray:
    poly = 0x82F63B78  # CRC-32C (Castagnoli), reflected
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table[i] = c
    return table


_TABLE = _make_table()


def masked_crc_rows(rows: np.ndarray) -> np.ndarray:
    """Masked CRC-32C of each row of a 2-D uint8 array (one header per row)."""
    return masked_crc_columns([rows[:, col] for col in range(rows.shape[1])])


def masked_crc_columns(columns: list[np.ndarray]) -> np.ndarray:
    """Masked CRC-32C of many equal-length byte strings given column by column.

    ``columns[j][i]`` is byte j of string i. Used to check many 8-byte length
    fields at once: per byte column, one table lookup over every string,
    instead of one Python call per header.
    """
    crc = np.full(columns[0].shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for column in columns:
        crc = _TABLE[(crc ^ column) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    rot = (crc >> np.uint32(15)) | (crc << np.uint32(17))
    return rot + np.uint32(MASK_DELTA)  # uint32 arithmetic wraps mod 2**32


def masked_crc_windows(buf: np.ndarray, width: int = 8) -> np.ndarray:
    """Masked CRC of every ``width``-byte window of ``buf`` (window i starts at i)."""
    n = buf.shape[0] - width + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint32)
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    for col in range(width):
        crc = _TABLE[(crc ^ buf[col:col + n]) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    rot = (crc >> np.uint32(15)) | (crc << np.uint32(17))
    return rot + np.uint32(MASK_DELTA)
