"""One pass over a file's records (all, or given indexes) as a generator of progress.

Shared by the statistics, the schema inference and the filters: a visitor
is called with the bytes of every record whose data is intact; records with
damaged data (data CRC failed, truncated) are counted, not visited.
Uncompressed files are read straight from the mapped file with the data CRC
checked here (the reader's own path is taken for anything unusual, so
damage is recorded exactly as :meth:`TFRecordFile.read` records it).
"""
from __future__ import annotations

from typing import Callable, Iterator, Sequence

from google.protobuf.message import DecodeError

from .crc import masked_crc
from .decode import DecodedRecord, RecordKind, decode_record
from .framing import CRC, HEADER_SIZE, LENGTH, Compression, RecordStatus
from .proto import Example
from .reader import TFRecordFile
from .scan import IndexProgress

PROGRESS_EVERY = 2048
_UNCHECKED, _OK = RecordStatus.UNCHECKED, RecordStatus.OK


class PassCounts:
    """How many records a pass visited and left out."""

    def __init__(self) -> None:
        self.visited = 0
        self.damaged = 0


def iter_records(tfile, indices: Sequence[int] | None = None, every: int = PROGRESS_EVERY,
                 intact_only: bool = False) -> Iterator[tuple[int, bytes, RecordStatus, int, int] | IndexProgress]:
    """(index, data, status, offset, length) of each record, with an IndexProgress every ``every`` records.

    The data CRC is checked (unless the file was opened with
    ``check_crc=False``) and a failure recorded on the file. With
    ``intact_only`` records whose data is damaged are skipped.
    """
    if indices is None and hasattr(tfile, "shards"):
        yield from _iter_shard_set(tfile, every, intact_only)
        return
    order = range(len(tfile)) if indices is None else indices
    n = len(order)
    # The fast path reads a plain file's mapped bytes itself; anything else (a
    # compressed file, a shard set, the GUI's edited view of a file) goes
    # through its own read(i).
    plain = isinstance(tfile, TFRecordFile) and tfile.compression is Compression.NONE
    read, read_bytes = tfile.read, getattr(tfile, "read_bytes", None)
    index = tfile.index
    offset_of, status_of = index.offset, index.status
    set_status = getattr(index, "set_status", None)
    check = getattr(tfile, "check_crc", True)
    unpack_len, unpack_crc = LENGTH.unpack_from, CRC.unpack_from
    for k, i in enumerate(order):
        status = status_of(i)
        if plain and (status is _UNCHECKED or status is _OK):
            offset = offset_of(i)
            (length,) = unpack_len(read_bytes(offset, 8))
            body = read_bytes(offset + HEADER_SIZE, length + 4)
            data = body[:length]
            if check:
                if masked_crc(data) == unpack_crc(body, length)[0]:
                    if status is _UNCHECKED:
                        set_status(i, _OK)
                    status = _OK
                else:
                    rec = read(i)  # records the data_crc problem
                    status = rec.info.status
        else:
            rec = read(i)
            data, status, offset, length = rec.data, rec.info.status, rec.info.offset, rec.info.length
        if not intact_only or status.data_intact:
            yield i, data, status, offset, length
        if k % every == every - 1:
            yield IndexProgress(k + 1, k + 1, n, len(tfile.problems))
    yield IndexProgress(n, n, n, len(tfile.problems), True)


def _iter_shard_set(shards, every: int, intact_only: bool):
    """:func:`iter_records` over a :class:`~codec.shards.ShardSet`, shard by shard."""
    total = len(shards)
    done = 0
    problems = shards.problem_count()
    for k in shards.numbered_shards():
        with shards.using(k) as f:  # pinned: other threads opening shards cannot release it meanwhile
            if f is None:
                continue
            base, before = shards.record_start(k), len(f.problems)
            for item in iter_records(f, None, every, intact_only):
                if isinstance(item, IndexProgress):
                    if not item.done:
                        yield IndexProgress(done + item.records, done + item.records, total,
                                            problems + len(f.problems) - before)
                else:
                    yield (base + item[0],) + item[1:]
            done += len(f)
            problems += len(f.problems) - before
        yield IndexProgress(done, done, total, problems)
    yield IndexProgress(total, total, total, shards.problem_count(), True)


def record_pass(tfile, visit: Callable[[bytes], None], indices: Sequence[int] | None = None,
                counts: PassCounts | None = None, every: int = PROGRESS_EVERY) -> Iterator[IndexProgress]:
    """Call ``visit(data)`` for each intact record of ``tfile`` (or of ``indices``).

    Yields progress every ``every`` records: ``records``/``position`` are the
    records gone through so far, ``total`` how many there are, ``problems``
    the file's problems known so far (reading checks data CRCs).
    """
    counts = counts if counts is not None else PassCounts()
    for item in iter_records(tfile, indices, every):
        if isinstance(item, IndexProgress):
            yield item
        elif item[2].data_intact:
            visit(item[1])
            counts.visited += 1
        else:
            counts.damaged += 1


def quick_decode(data: bytes, payload=None) -> DecodedRecord:
    """:func:`decode_record`, with a shortcut for the common Example layout.

    A record that is exactly one length-delimited field 1 is an Example by
    the kind rule; anything else goes through ``decode_record``. A
    ``payload`` (see :mod:`codec.payloads`) decides on its own.
    """
    if payload is not None:
        return payload.decode(data)
    n = len(data)
    if n > 1 and data[0] == 0x0A:
        length, shift, p = 0, 0, 1
        while p < n and p < 6:
            b = data[p]
            length |= (b & 0x7F) << shift
            p += 1
            if not b & 0x80:
                if p + length == n:
                    try:
                        return DecodedRecord(RecordKind.EXAMPLE, data, Example.FromString(data))
                    except (DecodeError, RuntimeError, ValueError):
                        break  # decode_record decides
                break
            shift += 7
    return decode_record(data)
