"""A few records of one file read through its index cache alone: no index loaded, no numpy.

``tfrlens-cli cat --range -1:`` of a 1M-record GZIP file spends its time on
start-up; this read needs only the cache entry (offsets read one by one), the
file, and for a GZIP or ZLIB file its cached zran index. Anything out of the
ordinary declines (returns None) before any output, and the full reader
(:class:`codec.sources.tfrecord_file.TFRecordFile`) takes over and says what is wrong.
"""
from __future__ import annotations

import os
import stat

from codec.errors import UsageError
from codec.storage.file_identity import FileIdentity


def parse_range(text: str | None, n: int) -> range:
    """``A:B`` with Python slice rules (either side may be empty or negative)."""
    if not text:
        return range(n)
    parts = text.split(":")
    try:
        if len(parts) == 1:
            i = int(parts[0])
            return range(n)[i:i + 1] if i != -1 else range(n)[-1:]
        if len(parts) == 2:
            a, b = (int(p) if p.strip() else None for p in parts)
            return range(n)[slice(a, b)]
    except ValueError:
        pass
    raise UsageError(f"bad --range {text!r}: expected A:B, e.g. 10:20 or :5 or -3:")


def range_stop(text: str | None) -> int | None:
    """Where the records ``text`` selects end when that is known without counting the records:
    ``A:B`` and ``A`` with no negative bound (B, A + 1); else None (``-3:``, ``5:``, all)."""
    if not text:
        return None
    parts = text.split(":")
    try:
        bounds = [int(p) if p.strip() else None for p in parts]
    except ValueError:
        return None
    if len(bounds) == 1 and bounds[0] is not None and bounds[0] >= 0:
        return bounds[0] + 1
    if len(bounds) == 2 and bounds[1] is not None and bounds[1] >= 0 and (bounds[0] or 0) >= 0:
        return bounds[1]
    return None


CACHED_CAT_MAX = 256  # records a `cat` reads straight from a cache entry, at most


def cached_records(paths: list[str], range_text: str | None, *, check_crc: bool = True) -> tuple[list, bool] | None:
    """The records ``range_text`` selects of ``paths`` (one file), read through its index cache
    alone, or None to take the ordinary path.

    For a few records of one file whose index is cached (a GZIP or ZLIB file's
    zran index too): their offsets are read from the cache entry one by one and
    their bytes from the file, so neither the index is loaded nor numpy imported.
    Anything out of the ordinary (damaged records, no zran index, a file that
    changed, more than CACHED_CAT_MAX records) returns None before any output.
    Returns the records as (index, offset, length, status, data) and whether
    the file has problems (the exit code).
    """
    if len(paths) != 1:
        return None
    path = paths[0]
    try:
        st = os.stat(path)
    except OSError:
        return None  # the ordinary path says what is wrong
    from codec.index import cache as index_cache

    if not stat.S_ISREG(st.st_mode) or st.st_size < index_cache.MIN_CACHED_BYTES:
        return None
    entry = index_cache.open_entry(path, st.st_size, FileIdentity.of(st).stamp)
    if entry is None:
        return None
    with entry:
        try:
            wanted = parse_range(range_text, entry.count)
        except UsageError:
            return None
        if len(wanted) > CACHED_CAT_MAX:
            return None
        spans = [(i, entry.offset(i), entry.status(i)) for i in wanted]
    from codec.format.framing import CRC, HEADER_SIZE, LENGTH, Compression, RecordStatus

    if any(status > RecordStatus.OK and status != RecordStatus.DATA_CRC for _, _, status in spans):
        return None
    problems = bool(entry.problems)
    opened = plain_reader(path, st) if entry.compression is Compression.NONE else zran_reader(path, st, entry)
    if opened is None:
        return None
    read, close = opened
    try:
        records = []
        for i, offset, status in spans:
            head = read(offset, HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                return None
            (length,) = LENGTH.unpack_from(head)
            body = read(offset + HEADER_SIZE, length + 4)
            if len(body) < length + 4:
                return None
            data = body[:length]
            status = RecordStatus(status)
            if check_crc and status is not RecordStatus.DATA_CRC:
                from codec.format.crc import masked_crc

                if masked_crc(data) != CRC.unpack_from(body, length)[0]:
                    status = RecordStatus.DATA_CRC
            problems = problems or status is RecordStatus.DATA_CRC
            records.append((i, offset, length, status, data))
    except Exception:  # noqa: BLE001 - a read that failed: the ordinary path reads again and says why
        return None
    finally:
        close()
    try:
        now = os.stat(path)
    except OSError:
        return None
    if FileIdentity.of(now) != FileIdentity.of(st):
        return None
    return records, problems


def plain_reader(path: str, st):
    """(read(pos, n), close) over a plain file, opened once; None if it is not the file ``st`` describes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    if os.fstat(fd).st_ino != st.st_ino:
        os.close(fd)
        return None
    return (lambda pos, n: os.pread(fd, n, pos)), (lambda: os.close(fd))


def zran_reader(path: str, st, entry):
    """(read(pos, n), close) over a GZIP or ZLIB file's stream through its cached zran index, or None."""
    from codec.index import cache as index_cache
    from codec.storage.zran import ZranReader, zran_available

    if any(p.get("compressed_offset") is not None for p in entry.problems) or not zran_available():
        return None  # a damaged stream has no zran index
    index = index_cache.load_zran(path, st.st_size, FileIdentity.of(st).stamp, entry.stream_end)
    if index is None:
        return None
    try:
        reader = ZranReader(path, index, entry.stream_end, entry.compression)
    except Exception:  # noqa: BLE001 - an unreadable index: the ordinary path copes
        return None
    finally:
        index.close()
    return reader.read, reader.close
