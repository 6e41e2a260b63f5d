"""Prove a plain file of large records intact without numpy or an index.

``verify`` of a file of a few thousand large records is all start-up and
reading: numpy alone takes longer to import than checking 100 MB. So before
the full reader runs, the command line tries this proof. It hops from header
to header (reading each record's data CRC with the next header), then checks
every data CRC, the records split by bytes between this process and a forked
child. Every length and data CRC is checked, exactly as the full reader does.

It proves, or declines: any failed CRC, a chain that does not end exactly at
the end of the file, a compressed or special file, or records too small for
hopping to pay (small records are checked far faster by the reader's batches)
returns None, and the full reader then finds and reports what is wrong.
"""
from __future__ import annotations

import os
import stat

import google_crc32c

from codec.format.crc import mask
from codec.format.layout import CRC, HEADER, HEADER_SIZE, OVERHEAD
from codec.parallel.forked import beside

MIN_AVERAGE = 16 << 10  # records smaller than this on average: left to the reader
SAMPLE = 1024  # records hopped before the average is judged
SPLIT_BYTES = 32 << 20  # smaller files are checked in one process
PIECE = 4 << 20  # larger records are checked in pieces of this size
NEXT = CRC.size + HEADER_SIZE  # a record's data CRC and the next record's header


def intact_records(path: str) -> int | None:
    """The number of records of the plain TFRecord file ``path`` when all are intact; None if not proven."""
    try:  # O_NONBLOCK: a FIFO put in its place would otherwise block the open (regular files ignore it)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None  # the reader says what is wrong with the path
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size < OVERHEAD:
            return None
        spans = _hop(fd, info.st_size)
        if spans is None:
            return None
        half = _split(spans, info.st_size)
        child = beside(_intact, fd, spans[half:]) if info.st_size >= SPLIT_BYTES else None
        if child is None:
            return len(spans) if _intact(fd, spans) else None
        try:
            mine = _intact(fd, spans[:half])
        except BaseException:
            child.cancel()
            raise
        done, theirs = child.result()
        return len(spans) if mine and done and theirs else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _hop(fd: int, size: int) -> list[tuple[int, int, int]] | None:
    """(data offset, length, stored data CRC) of every record, hopping header to header and
    checking each length CRC; None unless the chain ends exactly at the end of the file."""
    spans = []
    pos = 0
    head = os.pread(fd, HEADER_SIZE, 0)
    while True:
        length, length_crc = HEADER.unpack(head)
        if mask(google_crc32c.value(head[:8])) != length_crc or pos + OVERHEAD + length > size:
            return None
        start = pos + HEADER_SIZE
        after = os.pread(fd, NEXT, start + length)
        spans.append((start, length, CRC.unpack_from(after)[0]))
        pos = start + length + CRC.size
        if pos == size:
            return spans
        if len(after) < NEXT:
            return None
        if len(spans) % SAMPLE == 0 and pos < len(spans) * MIN_AVERAGE:
            return None
        head = after[CRC.size:]


def _split(spans: list[tuple[int, int, int]], size: int) -> int:
    """The index of the first record of the second half of the file's bytes."""
    for i, (start, _, _) in enumerate(spans):
        if start >= size // 2:
            return i
    return len(spans)


def _intact(fd: int, spans: list[tuple[int, int, int]]) -> bool:
    """Does every record's data CRC hold?"""
    value, extend = google_crc32c.value, google_crc32c.extend
    for start, length, stored in spans:
        if length <= PIECE:
            crc = value(os.pread(fd, length, start))
        else:
            crc = 0
            for at in range(start, start + length, PIECE):
                crc = extend(crc, os.pread(fd, min(PIECE, start + length - at), at))
        if mask(crc) != stored:
            return False
    return True
