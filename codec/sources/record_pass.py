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
from google_crc32c import value as crc32c

from codec.decode.decoder import EMPTY_MESSAGE_SIZE, DecodedRecord, RecordKind, decode_record
from codec.decode.example_proto import Example
from codec.errors import FileChangedError
from codec.format.crc import MASK_DELTA, masked_crc
from codec.format.framing import CRC, HEADER_SIZE, LENGTH, Compression, RecordStatus
from codec.index.record_index import _STATUSES
from codec.index.scan import IndexProgress
from codec.sources.tfrecord_file import TFRecordFile

PROGRESS_EVERY = 2048
RUN_BYTES = 1 << 20  # bytes read at once by a pass over a plain file's consecutive records
_UNCHECKED, _OK = RecordStatus.UNCHECKED, RecordStatus.OK
_EXAMPLE, _parse_example = RecordKind.EXAMPLE, Example.FromString


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
    rows = getattr(tfile, "iter_rows", None)  # an ArrayRecord file: its chunks decoded a run at a time
    if rows is not None and isinstance(order, range) and order.step == 1:
        yield from rows(order, every, intact_only)
        return
    # The fast path reads a plain file's bytes itself, a run of records per
    # read; anything else (a compressed file, the GUI's edited view of a
    # file) goes through its own read(i).
    plain = isinstance(tfile, TFRecordFile) and tfile.compression is Compression.NONE
    if plain and isinstance(order, range) and order.step == 1:
        yield from _iter_plain_run(tfile, order, every, intact_only)
        return
    n = len(order)
    read = tfile.read
    index = tfile.index
    status_of = index.status
    for k, i in enumerate(order):
        status = status_of(i)
        if plain and (status is _UNCHECKED or status is _OK):
            i, data, status, offset, length = _read_plain(tfile, i, status)
        else:
            rec = read(i)
            data, status, offset, length = rec.data, rec.info.status, rec.info.offset, rec.info.length
        if not intact_only or status.data_intact:
            yield i, data, status, offset, length
        if k % every == every - 1:
            yield IndexProgress(k + 1, k + 1, n, len(tfile.problems))
    yield IndexProgress(n, n, n, len(tfile.problems), True)


def _read_plain(tfile: TFRecordFile, i: int, status: RecordStatus) -> tuple[int, bytes, RecordStatus, int, int]:
    """Record ``i`` of a plain file whose header is known good, its data CRC checked (a failure is
    recorded on the file by its own read)."""
    offset = tfile.index.offset(i)
    (length,) = LENGTH.unpack_from(tfile.read_bytes(offset, 8))
    body = tfile.read_bytes(offset + HEADER_SIZE, length + 4)
    data = body[:length]
    if tfile.check_crc:
        if masked_crc(data) == CRC.unpack_from(body, length)[0]:
            if status is _UNCHECKED:
                tfile.index.set_status(i, _OK)
            status = _OK
        else:
            status = tfile.read(i).info.status
    return i, data, status, offset, length


def _iter_plain_run(tfile: TFRecordFile, order: range, every: int, intact_only: bool):
    """:func:`iter_records` over consecutive records of a plain file: one read per run of records
    (up to RUN_BYTES), sliced here; a record alone in its run (a big one, the file's last) is read by itself.

    Only records between two known offsets share a read, so bytes after the
    file's last record (a damaged tail) are never read as part of a run.
    """
    import numpy as np

    index = tfile.index
    n, total = len(order), len(index)
    check = tfile.check_crc
    read_bytes, read = tfile.read_bytes, tfile.read
    unpack_len, unpack_crc = LENGTH.unpack_from, CRC.unpack_from
    unchecked, ok = int(_UNCHECKED), int(_OK)
    i, stop, done, next_progress = order.start, order.stop, 0, every
    while i < stop:
        offsets, statuses = index.run(i, min(stop + 1, total))
        if len(offsets) > 1:  # a run ends where its last record's successor starts
            base = int(offsets[0])
            m = int(np.searchsorted(offsets, base + RUN_BYTES, side="right"))
            m = max(2, min(m, len(offsets)))
            end = int(offsets[m - 1])
            count = m - 1
        else:
            count = 0
        if count < 2 and (count == 0 or end - base > RUN_BYTES):
            status = index.status(i)
            if status is _UNCHECKED or status is _OK:
                item = _read_plain(tfile, i, status)
            else:
                rec = read(i)
                item = (i, rec.data, rec.info.status, rec.info.offset, rec.info.length)
            if not intact_only or item[2].data_intact:
                yield item
            i += 1
            done += 1
        else:
            try:
                buf = read_bytes(base, end - base)
            except FileChangedError:  # the file shrank under the run: those still whole first, one by one
                for j in range(i, i + count):
                    rec = read(j)  # raises at the first record the change cut
                    if not intact_only or rec.info.status.data_intact:
                        yield j, rec.data, rec.info.status, rec.info.offset, rec.info.length
                raise
            good = []
            for k, (offset, code) in enumerate(zip(offsets[:count].tolist(), statuses[:count].tolist())):
                j = i + k
                rel = offset - base
                if code == ok or code == unchecked:
                    (length,) = unpack_len(buf, rel)
                    data_at = rel + HEADER_SIZE
                    if data_at + length + 4 <= len(buf):
                        data = buf[data_at:data_at + length]
                        if not check:
                            yield j, data, _STATUSES[code], offset, length
                            continue
                        crc = crc32c(data)
                        if (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF == unpack_crc(buf, data_at + length)[0]:
                            if code == unchecked:
                                good.append(j)
                            yield j, data, _OK, offset, length
                            continue
                rec = read(j)  # damage, or a header claiming more than the run: the reader decides
                if not intact_only or rec.info.status.data_intact:
                    yield j, rec.data, rec.info.status, rec.info.offset, rec.info.length
            if good:
                index.set_statuses(np.asarray(good, dtype=np.int64), np.full(len(good), ok, dtype=np.uint8))
            i += count
            done += count
        while done >= next_progress:
            yield IndexProgress(next_progress, next_progress, n, len(tfile.problems))
            next_progress += every
    yield IndexProgress(n, n, n, len(tfile.problems), True)


def _iter_shard_set(shards, every: int, intact_only: bool):
    """:func:`iter_records` over a :class:`~codec.sources.shard_set.ShardSet`, shard by shard."""
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
    ``payload`` (see :mod:`codec.decode.payloads`) decides on its own.
    """
    if payload is not None:
        return payload.decode(data)
    n = len(data)
    if n > 1 and data[0] == 0x0A:
        if data[1] < 0x80:  # a one-byte length (records under 130 bytes): the loop below, unrolled
            if data[1] + 2 == n:
                try:
                    message = _parse_example(data)
                except (DecodeError, RuntimeError, ValueError):
                    pass
                else:
                    if message.features.feature or n <= EMPTY_MESSAGE_SIZE:  # else decode_record says what it is
                        return DecodedRecord(_EXAMPLE, data, message)
            return decode_record(data)
        length, shift, p = 0, 0, 1
        while p < n and p < 6:
            b = data[p]
            length |= (b & 0x7F) << shift
            p += 1
            if not b & 0x80:
                if p + length == n:
                    try:
                        message = Example.FromString(data)
                    except (DecodeError, RuntimeError, ValueError):
                        break  # decode_record decides
                    if message.features.feature:
                        return DecodedRecord(RecordKind.EXAMPLE, data, message)
                break
            shift += 7
    return decode_record(data)
