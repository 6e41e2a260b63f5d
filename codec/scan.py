"""The index pass: walk the record headers once, record offsets, find damage.

The pass is a generator of :class:`IndexProgress`, so a caller can show rows
while it runs and stop it at any yield. Headers are walked in batches by a
tight loop over ``struct.unpack_from`` and their length CRCs are checked for
the whole batch at once (numpy). Damage is recorded as a :class:`Problem` and
the walk resynchronises on the next header whose length CRC and data CRC hold.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Iterator

import google_crc32c
import numpy as np

from .crc import MASK_DELTA, masked_crc, masked_crc_columns, masked_crc_windows
from .framing import CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Problem, ProblemKind, RecordStatus
from .record_index import RecordIndex

MAX_RECORD = 1 << 31  # protobuf and TensorFlow cannot produce larger records
FIRST_BATCH = 1024
BATCH = 1 << 14
BATCH_BYTES = 32 << 20
RESYNC_WINDOW = 1 << 20
_LITTLE_ENDIAN = sys.byteorder == "little"
_COLS8 = np.arange(8, dtype=np.int64)
_COLS4 = np.arange(4, dtype=np.int64)


@dataclass(frozen=True)
class IndexProgress:
    """How far a pass has come: records found, bytes of the file consumed."""

    records: int
    position: int
    total: int
    problems: int
    done: bool = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.done or not self.total else min(1.0, self.position / self.total)


class PlainSource:
    """The whole uncompressed file as one buffer (an mmap)."""

    eof = True
    base = 0

    def __init__(self, buf) -> None:
        self.buf = buf

    @property
    def end(self) -> int:
        return len(self.buf)

    def get(self, pos: int, size: int) -> bytes:
        return self.buf[pos:pos + size]

    def more(self) -> bool:
        return False

    def release(self, upto: int) -> None:
        pass

    def consumed(self, pos: int) -> int:
        return pos


class StreamSource:
    """A window over a forward-only stream of uncompressed chunks, each a list of bytes.

    Each :meth:`more` appends the next chunk as soon as it arrives: walking a
    chunk while the next one is inflated on the prefetch thread is what keeps
    the two overlapped.
    """

    def __init__(self, chunks: Iterator[list[bytes]], consumed: Callable[[], int]) -> None:
        self._chunks = chunks
        self._consumed = consumed
        self.buf = b""
        self.base = 0
        self.eof = False

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def more(self) -> bool:
        chunk = next(self._chunks, None)
        if chunk is None:
            self.eof = True
            return False
        self.buf = b"".join([self.buf, *chunk]) if self.buf or len(chunk) > 1 else chunk[0]
        return True

    def get(self, pos: int, size: int) -> bytes:
        while pos + size > self.end and not self.eof:
            self.more()
        start = pos - self.base
        return self.buf[start:start + size]

    def release(self, upto: int) -> None:
        if upto > self.base:
            self.buf = self.buf[upto - self.base:]
            self.base = upto

    def consumed(self, pos: int) -> int:
        return self._consumed()


class Scanner:
    """One index pass over a source, filling ``index`` and ``problems``."""

    def __init__(self, source, index: RecordIndex, problems: list[Problem], total: int, *, verify: bool = False):
        self.src = source
        self.index = index
        self.problems = problems
        self.total = total
        self.verify = verify

    def _progress(self, pos: int, done: bool = False) -> IndexProgress:
        return IndexProgress(len(self.index), self.src.consumed(pos), self.total, len(self.problems), done)

    def run(self) -> Iterator[IndexProgress]:
        src = self.src
        pos = 0
        batch = FIRST_BATCH
        while True:
            offsets, stop = self._walk(src.buf, src.base, pos, batch)
            batch = BATCH
            pos, bad = self._accept(src.buf, src.base, offsets, stop)
            yield self._progress(pos)
            if bad:
                pos = self._damaged(pos)
            elif pos >= src.end or self._needs_more(src.buf, src.base, pos):
                if not src.eof:
                    src.release(pos)
                    if src.more() or pos < src.end:
                        continue
                if pos >= src.end:
                    break
                pos = self._damaged(pos)
            if pos is None:
                break
        yield self._progress(src.end, done=True)

    @staticmethod
    def _needs_more(buf, base: int, pos: int) -> bool:
        p = pos - base
        if p + HEADER_SIZE > len(buf):
            return True
        (n,) = LENGTH.unpack_from(buf, p)
        return p + OVERHEAD + n > len(buf)

    @staticmethod
    def _walk(buf, base: int, pos: int, limit: int) -> tuple[list[int], int]:
        """Offsets (relative to buf) of records that fit in buf, up to ``limit``.

        The lengths are read through eight uint64 views of the buffer, one per
        byte alignment (``views[p & 7][p >> 3]``): the cheapest read of an
        unaligned little-endian integer per record from Python.
        """
        p = pos - base
        end = len(buf)
        stop = min(end, p + BATCH_BYTES)
        offsets: list[int] = []
        append = offsets.append
        if _LITTLE_ENDIAN:
            views = _uint64_views(buf)
            try:
                for _ in range(limit):
                    q = p + OVERHEAD + views[p & 7][p >> 3]
                    if q > stop:
                        break
                    append(p)
                    p = q
            except IndexError:  # fewer than 8 bytes left
                pass
            finally:
                for view in views:
                    view.release()  # an mmap cannot close while a view of it exists
        else:
            unpack = LENGTH.unpack_from
            while len(offsets) < limit and p + HEADER_SIZE <= stop:
                q = p + OVERHEAD + unpack(buf, p)[0]
                if q > stop:
                    break
                append(p)
                p = q
        if not offsets and stop < end and p + HEADER_SIZE <= end:  # one record larger than BATCH_BYTES
            q = p + OVERHEAD + LENGTH.unpack_from(buf, p)[0]
            if q <= end:
                append(p)
                p = q
        return offsets, p + base

    def _accept(self, buf, base: int, offsets: list[int], stop: int) -> tuple[int, bool]:
        """Check the batch's length CRCs; index the good prefix.

        Returns the position after the accepted records and whether the walk
        stopped at a header whose length CRC fails.
        """
        if not offsets:
            return stop, False
        rel = np.asarray(offsets, dtype=np.int64)
        ok = length_crcs_hold(np.frombuffer(buf, dtype=np.uint8), rel)
        bad_at = len(offsets) if ok.all() else int(np.argmin(ok))
        good = rel[:bad_at]
        status = np.full(bad_at, int(RecordStatus.UNCHECKED), dtype=np.uint8)
        if self.verify and bad_at:
            self._verify_batch(buf, base, good, status)
        self.index.append(good + base, status)
        if bad_at < len(offsets):
            return int(rel[bad_at]) + base, True
        return stop, False

    def _verify_batch(self, buf, base: int, rel: np.ndarray, status: np.ndarray) -> None:
        first = len(self.index)
        ok, stored, computed = verify_spans(buf, rel)
        status[ok] = RecordStatus.OK
        status[~ok] = RecordStatus.DATA_CRC
        for k in np.flatnonzero(~ok).tolist():
            self.problems.append(data_crc_problem(first + k, int(rel[k]) + base, int(stored[k]), int(computed[k])))

    # -- damage -----------------------------------------------------------
    def _damaged(self, pos: int) -> int | None:
        """Handle the bad or incomplete record at ``pos``; return where to go on."""
        src = self.src
        head = src.get(pos, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            if head:
                self.problems.append(Problem(
                    None, pos, ProblemKind.TRUNCATED,
                    f"{len(head)} bytes left at the end, a record header needs {HEADER_SIZE}", size=len(head)))
            return None
        n, stored_lcrc = HEADER.unpack(head)
        computed_lcrc = masked_crc(head[:8])
        body = src.get(pos + HEADER_SIZE, n + 4) if n <= MAX_RECORD else b""
        complete = n <= MAX_RECORD and len(body) == n + 4
        if stored_lcrc == computed_lcrc:
            if complete:  # a good record the fast walk stopped short of
                self._index_one(pos, body, n, RecordStatus.UNCHECKED)
                return pos + OVERHEAD + n
            nxt = self._resync(pos + 1)
            if nxt is None:
                left = max(0, src.end - pos - HEADER_SIZE)
                self.problems.append(Problem(
                    len(self.index), pos, ProblemKind.TRUNCATED,
                    f"record claims {n} bytes of data and a 4-byte CRC, only {left} bytes left after its header", size=src.end - pos,
                    expected=n, found=left))
                self.index.append([pos], RecordStatus.TRUNCATED)
                return None
            self.problems.append(Problem(
                None, pos, ProblemKind.GARBAGE,
                f"header claims {n} bytes past the end; {nxt - pos} bytes skipped to the next record at {nxt}",
                size=nxt - pos))
            return nxt
        if complete:
            (stored_dcrc,) = CRC.unpack_from(body, n)
            if masked_crc(body[:n]) == stored_dcrc:
                self.problems.append(Problem(
                    len(self.index), pos, ProblemKind.LENGTH_CRC,
                    f"length CRC stored {stored_lcrc:#010x}, computed {computed_lcrc:#010x}; "
                    f"the data CRC proves the length ({n}): recovered",
                    size=HEADER_SIZE, expected=stored_lcrc, found=computed_lcrc))
                self.index.append([pos], RecordStatus.LENGTH_CRC)
                return pos + OVERHEAD + n
        nxt = self._resync(pos + 1)
        skipped = (nxt if nxt is not None else src.end) - pos
        where = f"skipped {skipped} bytes to the next intact record at {nxt}" if nxt is not None else \
            f"no intact record after it ({skipped} bytes to the end)"
        self.problems.append(Problem(
            None, pos, ProblemKind.LENGTH_CRC,
            f"length CRC stored {stored_lcrc:#010x}, computed {computed_lcrc:#010x}; {where}",
            size=skipped, expected=stored_lcrc, found=computed_lcrc))
        return nxt

    def _index_one(self, pos: int, body: bytes, n: int, status: RecordStatus) -> None:
        if self.verify:
            (stored,) = CRC.unpack_from(body, n)
            computed = masked_crc(bytes(body[:n]))
            status = RecordStatus.OK if stored == computed else RecordStatus.DATA_CRC
            if status is RecordStatus.DATA_CRC:
                self.problems.append(data_crc_problem(len(self.index), pos, stored, computed))
        self.index.append([pos], status)

    def _resync(self, start: int) -> int | None:
        """The next offset >= start whose length CRC and data CRC both hold."""
        src = self.src
        s = start
        while True:
            win = src.get(s, RESYNC_WINDOW + HEADER_SIZE - 1)
            if len(win) < OVERHEAD:
                return None
            for c in candidate_headers(win).tolist():
                q = s + c
                (n,) = LENGTH.unpack_from(win, c)
                if n > MAX_RECORD:
                    continue
                body = src.get(q + HEADER_SIZE, n + 4)
                if len(body) == n + 4 and masked_crc(bytes(body[:n])) == CRC.unpack_from(body, n)[0]:
                    return q
            if len(win) < RESYNC_WINDOW + HEADER_SIZE - 1:
                return None
            s += RESYNC_WINDOW
            src.release(s)


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


def _uint64_views(buf) -> list[memoryview]:
    """``buf`` as native uint64 arrays starting at byte 0, 1, ... 7 (release them after use)."""
    whole = memoryview(buf)
    try:
        n = len(whole)
        return [whole[k:k + 8 * ((n - k) // 8)].cast("Q") for k in range(min(8, n))]
    finally:
        whole.release()


def verify_spans(buf, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check the data CRC of the records starting at ``rel`` (offsets into ``buf``).

    Lengths and stored CRCs are gathered with numpy; the only per-record Python
    work is slicing the data and one google-crc32c call (it takes bytes only).
    Returns (ok mask, stored CRCs, computed masked CRCs).
    """
    arr = np.frombuffer(buf, dtype=np.uint8)
    rel = np.asarray(rel, dtype=np.int64)
    lengths = arr[rel[:, None] + _COLS8].copy().view("<u8").ravel().astype(np.int64)
    starts = rel + HEADER_SIZE
    ends = starts + lengths
    stored = arr[ends[:, None] + _COLS4].copy().view("<u4").ravel()
    value = google_crc32c.value
    raw = np.fromiter((value(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())),
                      dtype=np.uint32, count=rel.shape[0])
    computed = ((raw >> np.uint32(15)) | (raw << np.uint32(17))) + np.uint32(MASK_DELTA)
    return computed == stored, stored, computed


def candidate_headers(win: bytes) -> np.ndarray:
    """Offsets in ``win`` where 12 bytes form a header whose length CRC holds."""
    arr = np.frombuffer(win, dtype=np.uint8)
    m = arr.shape[0] - HEADER_SIZE + 1
    if m <= 0:
        return np.zeros(0, dtype=np.int64)
    crcs = masked_crc_windows(arr[: m + 7], 8)
    a = arr.astype(np.uint32)
    stored = a[8:8 + m] | (a[9:9 + m] << 8) | (a[10:10 + m] << 16) | (a[11:11 + m] << 24)
    return np.flatnonzero(crcs[:m] == stored)


def data_crc_problem(index: int, offset: int, stored: int, computed: int) -> Problem:
    return Problem(index, offset, ProblemKind.DATA_CRC,
                   f"data CRC stored {stored:#010x}, computed {computed:#010x}",
                   expected=stored, found=computed)
