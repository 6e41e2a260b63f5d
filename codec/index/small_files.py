"""Small plain TFRecord files indexed in one read: a folder of 100,000 one-record shards.

The index pass (:mod:`codec.index.scan`) is built for big files: numpy batches, a
window, resynchronisation. For a file of a few records its set-up costs far
more than the records, so a small file is read whole and walked here in plain
Python, every length CRC (and when verifying every data CRC) checked exactly
as the pass checks them. Anything unusual (not plain, a CRC that fails, a
chain that does not end exactly at the end of the file) declines, and the
full reader then finds and reports what is wrong.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass

import google_crc32c

from codec.format.crc import mask
from codec.format.layout import CRC, HEADER, HEADER_SIZE, OVERHEAD
from codec.storage.file_identity import FileIdentity

SMALL_BYTES = 256 << 10  # files up to this size are read whole (below the index cache's threshold)


@dataclass(frozen=True)
class WalkedFile:
    """A small plain file read whole: its size, mtime and identity when read, and its records' offsets."""

    size: int
    mtime_ns: int
    offsets: list[int]
    verified: bool
    identity: FileIdentity


def walk_small_file(path: str, verify: bool, limit: int = SMALL_BYTES) -> WalkedFile | None:
    """``path`` indexed in one read when it is a sound, plain TFRecord file of at most ``limit``
    bytes; else None."""
    try:  # O_NONBLOCK: a FIFO put in its place would otherwise block the open (regular files ignore it)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the reader says what is wrong with the path
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not 0 < st.st_size <= limit:
            return None
        data = os.read(fd, st.st_size + 1)  # one byte more: a file grown since fstat declines
    except OSError:
        return None
    finally:
        os.close(fd)
    offsets = walk_records(data, verify) if len(data) == st.st_size else None  # (changed since fstat)
    if offsets is None:
        return None
    return WalkedFile(st.st_size, st.st_mtime_ns, offsets, verify, FileIdentity.of(st))


def walk_records(data: bytes, verify: bool) -> list[int] | None:
    """The offsets of every record of ``data`` when each length CRC (and with ``verify`` each
    data CRC) holds and the last record ends exactly at its end; None otherwise."""
    value = google_crc32c.value
    offsets = []
    pos, size = 0, len(data)
    while pos < size:
        if pos + OVERHEAD > size:
            return None
        length, length_crc = HEADER.unpack_from(data, pos)
        if mask(value(data[pos:pos + 8])) != length_crc:
            return None
        end = pos + OVERHEAD + length
        if end > size:
            return None
        if verify and mask(value(data[pos + HEADER_SIZE:end - CRC.size])) != CRC.unpack_from(data, end - CRC.size)[0]:
            return None
        offsets.append(pos)
        pos = end
    return offsets if offsets else None
