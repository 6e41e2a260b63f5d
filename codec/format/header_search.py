"""Record headers and CRCs checked many at a time with numpy.

The length CRCs of a batch of headers (:func:`length_crcs_hold`), the data
CRCs of a batch of records (:func:`verify_spans`), and the search for headers
in arbitrary bytes (:func:`candidate_headers`), which resynchronises after
damage and finds a record in the middle of a file. Apart from the index pass
(:mod:`codec.index.scan`) because the verify pass, the sniffing of a damaged start
and the two-half scan use them too.
"""
from __future__ import annotations

import google_crc32c
import numpy as np

from codec.format.crc import MASK_DELTA, masked_crc, masked_crc_columns, masked_crc_windows
from codec.format.framing import CRC, HEADER_SIZE, LENGTH

_COLS8 = np.arange(8, dtype=np.int64)
_COLS4 = np.arange(4, dtype=np.int64)
_COLS12 = np.arange(HEADER_SIZE, dtype=np.int64)
_SCALAR_WINDOW = 2048
_ZERO4 = bytes(4)
_RUN_HEAD = np.arange(-6, 0, dtype=np.int64)
_RUN_TAIL = np.arange(-11, -5, dtype=np.int64)


def length_crcs_hold(arr: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """Does the length CRC hold for the header at each offset ``rel`` into ``arr`` (uint8)?

    Column by column (one gather of one byte per header), which is cheaper
    than gathering a 12-byte row per header.
    """
    columns = [arr.take(rel + k) for k in range(HEADER_SIZE)]
    stored = columns[8].astype(np.uint32)
    for k in range(9, HEADER_SIZE):
        stored |= columns[k].astype(np.uint32) << np.uint32(8 * (k - 8))
    return masked_crc_columns(columns[:8]) == stored


def verify_spans(buf, rel: np.ndarray, *, length_crcs: bool = False):
    """Check the data CRC of the records starting at ``rel`` (offsets into ``buf``).

    Lengths and stored CRCs are gathered with numpy; the only per-record Python
    work is slicing the data and one google-crc32c call (it takes bytes only).
    Returns (ok mask, stored CRCs, computed masked CRCs), and with
    ``length_crcs`` a fourth array: does each header's length CRC hold.
    """
    arr = np.frombuffer(buf, dtype=np.uint8)
    rel = np.asarray(rel, dtype=np.int64)
    if length_crcs:
        head = arr[rel[:, None] + _COLS12]
        lengths = head[:, :8].copy().view("<u8").ravel().astype(np.int64)
        length_ok = masked_crc_columns([head[:, k] for k in range(8)]) == head[:, 8:].copy().view("<u4").ravel()
    else:
        lengths = arr[rel[:, None] + _COLS8].copy().view("<u8").ravel().astype(np.int64)
    starts = rel + HEADER_SIZE
    ends = starts + lengths
    stored = arr[ends[:, None] + _COLS4].copy().view("<u4").ravel()
    value = google_crc32c.value
    raw = np.fromiter((value(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())),
                      dtype=np.uint32, count=rel.shape[0])
    computed = ((raw >> np.uint32(15)) | (raw << np.uint32(17))) + np.uint32(MASK_DELTA)
    if length_crcs:
        return computed == stored, stored, computed, length_ok
    return computed == stored, stored, computed


def candidate_headers(win: bytes, max_length: int | None = None) -> np.ndarray:
    """Offsets in ``win`` where 12 bytes form a header whose length CRC holds
    (and, given ``max_length``, whose length is at most that).

    With ``max_length`` below 2**32 the length's four high bytes must be zero,
    which rules out nearly every offset of random bytes at once; an offset
    inside a zero run is never a header either (the masked CRC of eight zero
    bytes is not zero). Only the few offsets left have their CRC computed.
    """
    arr = np.frombuffer(win, dtype=np.uint8)
    m = arr.shape[0] - HEADER_SIZE + 1
    if m <= 0:
        return np.zeros(0, dtype=np.int64)
    if max_length is None or max_length >= 1 << 32:
        crcs = masked_crc_windows(arr[: m + 7], 8)
        a = arr.astype(np.uint32)
        stored = a[8:8 + m] | (a[9:9 + m] << 8) | (a[10:10 + m] << 16) | (a[11:11 + m] << 24)
        return np.flatnonzero(crcs[:m] == stored)
    if m <= _SCALAR_WINDOW:  # a damaged record's span: numpy's per-call cost would dominate
        found = []
        i = win.find(_ZERO4, 4)
        while 0 <= i < m + 4:
            c = i - 4
            if LENGTH.unpack_from(win, c)[0] <= max_length and \
                    masked_crc(bytes(win[c:c + 8])) == CRC.unpack_from(win, c + 8)[0]:
                found.append(c)
            i = win.find(_ZERO4, i + 1)
        return np.array(found, dtype=np.int64)
    return _short_headers(arr, m, max_length)


def _short_headers(arr: np.ndarray, m: int, max_length: int) -> np.ndarray:
    """:func:`candidate_headers` for lengths below 2**32, through the runs of zero byte pairs.

    The length's four high bytes (offsets c+4..c+7) hold a zero aligned
    pair, so c lies within 6 bytes before a run of zero pairs; and c cannot
    lie where all twelve bytes are zero. That leaves 12 offsets per run (6 at
    its start, 6 at its end), found with a few passes over half as many
    pairs as bytes, then checked exactly.
    """
    zero = arr[: arr.shape[0] & ~1].view("<u2") == 0
    flags = zero.view(np.int8)
    edges = np.flatnonzero(flags[1:] != flags[:-1]) + 1
    starts = edges[zero[edges]]
    ends = edges[~zero[edges]]
    if zero.shape[0] and zero[0]:
        starts = np.concatenate(([0], starts))
    if zero.shape[0] and zero[-1]:
        ends = np.concatenate((ends, [zero.shape[0]]))
    if not starts.shape[0]:
        return np.zeros(0, dtype=np.int64)
    cand = np.unique(np.concatenate(((2 * starts)[:, None] + _RUN_HEAD, (2 * ends)[:, None] + _RUN_TAIL)).ravel())
    cand = cand[(cand >= 0) & (cand < m)]
    high = arr.take(cand + 4) | arr.take(cand + 5) | arr.take(cand + 6) | arr.take(cand + 7)
    cand = cand[high == 0]
    rest = arr.take(cand)
    for k in (1, 2, 3, 8, 9, 10, 11):
        rest = rest | arr.take(cand + k)
    cand = cand[rest != 0]
    if not cand.shape[0]:
        return cand
    low = arr.take(cand).astype(np.int64)
    for k in range(1, 4):
        low |= arr.take(cand + k).astype(np.int64) << (8 * k)
    cand = cand[low <= max_length]
    if not cand.shape[0]:
        return cand
    return cand[length_crcs_hold(arr, cand)]
