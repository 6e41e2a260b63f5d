"""A pass over a plain file in two halves, the second in a forked child (two cores, half the time).

The header walk is a chain (each header says where the next one starts), so
the second half cannot simply start at the middle byte. The child starts at
the first header after the middle whose length CRC holds and which chains on
to the next few: a guess. The parent walks the first half, up to that guess,
as a file that ends there. The guess is right exactly when the parent's chain
lands on it with no problem on the way; then the two halves together are,
record for record, what one walk finds. Otherwise, or when the child finds
any problem, both halves are dropped and the caller walks the file in one
pass, which alone decides how damage is reported.

Only the command line asks for this (:class:`TFRecordFile` with
``fork_halves``); the app has threads and never forks.
"""
from __future__ import annotations

import numpy as np

from codec.format.framing import HEADER, HEADER_SIZE, OVERHEAD, Problem
from codec.format.header_search import candidate_headers
from codec.index.record_index import RecordIndex
from codec.index.scan import MAX_RECORD, Scanner
from codec.index.scan_sources import PlainSource
from codec.parallel.forked import beside, can_fork

SPLIT_BYTES = 32 << 20  # smaller files are walked in one process: a fork costs more than it saves
SYNC_WINDOW = 1 << 20  # bytes searched after the middle for the child's first header
SYNC_CHAIN = 4  # headers that must chain from a guess before the child starts there


def scan_halves(read_at, size: int, verify: bool) -> tuple[RecordIndex, list] | None:
    """(index, problems) of the plain file read by ``read_at``, walked in two processes;
    None when it cannot be split or either half found a problem (walk it in one pass)."""
    if size < SPLIT_BYTES or not can_fork():
        return None
    start = sync_point(read_at, size, size // 2)
    if start is None:
        return None
    child = beside(_walk_rest, read_at, size, start, verify)
    if child is None:
        return None
    try:
        index, problems = RecordIndex(), list[Problem]()
        for _ in Scanner(PlainSource(read_at, start), index, problems, start, verify=verify).run():
            pass
    except BaseException:
        child.cancel()
        raise
    done, rest = child.result()
    if not done or problems or rest is None or not _ends_at(read_at, index, start):
        return None
    offsets, statuses = rest
    index.append(offsets + np.uint64(start), statuses)
    return index, problems


def _ends_at(read_at, index: RecordIndex, end: int) -> bool:
    """Does the last record of ``index`` end exactly at ``end``?"""
    if not len(index):
        return False
    last = index.offset(len(index) - 1)
    return last + OVERHEAD + HEADER.unpack(read_at(last, HEADER_SIZE))[0] == end


def _walk_rest(read_at, size: int, start: int, verify: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The child's half: (offsets from ``start``, statuses), or None if it found any problem."""
    index, problems = RecordIndex(), list[Problem]()
    source = PlainSource(lambda pos, n: read_at(start + pos, n), size - start)
    for _ in Scanner(source, index, problems, size - start, verify=verify).run():
        pass
    return None if problems else (index.offsets(), index.statuses())


def sync_point(read_at, size: int, at: int) -> int | None:
    """The first offset in [at, at + SYNC_WINDOW) where a header's length CRC holds and it chains
    on through SYNC_CHAIN headers (or to the end of the file); None if there is none."""
    window = read_at(at, min(SYNC_WINDOW, size - at))
    for rel in candidate_headers(window, MAX_RECORD).tolist():
        if _chains(read_at, size, at + rel):
            return at + rel
    return None


def _chains(read_at, size: int, pos: int) -> bool:
    from codec.format.crc import masked_crc

    for _ in range(SYNC_CHAIN):
        head = read_at(pos, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            return False
        length, crc = HEADER.unpack(head)
        if masked_crc(head[:8]) != crc or pos + OVERHEAD + length > size:
            return False
        pos += OVERHEAD + length
        if pos == size:
            return True
    return True
