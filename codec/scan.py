"""The index pass: walk the record headers once, record offsets, find damage.

The pass is a generator of :class:`IndexProgress`, so a caller can show rows
while it runs and stop it at any yield. Headers are walked in batches by a
tight loop over ``struct.unpack_from`` and their length CRCs are checked for
the whole batch at once (numpy). Damage is recorded as a :class:`Problem` and
the walk resynchronises on the next header whose length CRC and data CRC hold.

No intact record is lost to a damaged one: when a record fails its data CRC
(or, without verification, when the header after it fails and its own data
CRC then fails), its span is searched for records whose length and data CRCs
both hold, since bytes deleted or inserted inside it leave its header
claiming a span that the next records start inside. Without verification a
damaged record whose claimed end happens to fall on a valid header goes
unnoticed (no data CRC is read): only a verifying pass searches it.

Memory stays bounded whatever a header claims: the file is read through a
window of ``WINDOW`` bytes, a record larger than ``HOLD`` is checked by an
incremental CRC over pieces, and the resynchronising search reads the file
again (a compressed stream through its checkpoints) instead of keeping it.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Iterator

import google_crc32c
import numpy as np

from .crc import MASK_DELTA, mask, masked_crc, masked_crc_columns, masked_crc_windows
from .framing import CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Problem, ProblemKind, RecordStatus
from .record_index import RecordIndex

MAX_RECORD = 1 << 31  # protobuf and TensorFlow cannot produce larger records
FIRST_BATCH = 1024
BATCH = 1 << 14
BATCH_BYTES = 32 << 20
PROGRESS_BYTES = 1 << 20  # progress is shown at least this often (of the data), besides every BATCH records
WINDOW = 256 << 10  # bytes of a plain file read at a time (small: the index alone should grow with the file)
HOLD = 16 << 20  # larger records are never held whole: checked piece by piece
HOP = 1 << 16  # a plain file's records this large are stepped over by their headers when not verifying
PIECE = 4 << 20  # piece size for incremental CRCs and for reading a stream back
RESYNC_WINDOW = 4 << 20
_LITTLE_ENDIAN = sys.byteorder == "little"
_COLS8 = np.arange(8, dtype=np.int64)
_COLS4 = np.arange(4, dtype=np.int64)
_COLS12 = np.arange(HEADER_SIZE, dtype=np.int64)


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
    """An uncompressed file read through ``read_at(pos, n)`` in windows.

    ``read_at`` returns exactly ``min(n, size - pos)`` bytes (or raises).
    The scanner walks ``buf`` (file bytes from ``base``); nothing holds more
    than a window or one record of up to ``HOLD`` bytes. Passing a buffer
    alone (no ``size``) reads from that buffer.
    """

    random_access = True

    def __init__(self, read_at, size: int | None = None, *, window: int = WINDOW) -> None:
        if size is None:  # a bytes-like buffer (an mmap)
            data = read_at
            size = len(data)
            read_at = lambda pos, n: bytes(data[pos:pos + n])  # noqa: E731
        self._read_at: Callable[[int, int], bytes] = read_at
        self.size = size
        self.window = window
        self.buf = b""
        self.base = 0

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    @property
    def eof(self) -> bool:
        return self.end >= self.size

    def read(self, pos: int, n: int) -> bytes:
        """The file's bytes [pos, pos + n) (fewer at its end), read now, not kept."""
        return self._read_at(pos, min(n, self.size - pos)) if 0 <= pos < self.size and n > 0 else b""

    _read = read

    def seek(self, pos: int) -> None:
        """Make the window hold ``pos`` (empty and starting there if it did not)."""
        if not self.base <= pos <= self.end:
            self.base, self.buf = pos, b""

    def fill(self, pos: int, n: int) -> None:
        """Make the window start at ``pos`` and hold at least ``n`` bytes (as far as the file goes)."""
        self.buf = b""  # the old window goes before the new one is read: never two at once
        self.base, self.buf = pos, self._read(pos, max(n, self.window))

    def get(self, pos: int, n: int) -> bytes:
        if self.base <= pos and pos + n <= self.end:
            return self.buf[pos - self.base:pos - self.base + n]
        return self._read(pos, n)

    def pieces(self, pos: int, n: int) -> Iterator[bytes]:
        """The ``n`` bytes at ``pos`` in pieces of at most ``PIECE`` bytes (fewer at the end)."""
        end = pos + n
        while pos < end:
            piece = self._read(pos, min(PIECE, end - pos))
            if not piece:
                return
            yield piece
            pos += len(piece)

    def release(self, upto: int) -> None:
        pass  # the window is replaced whole by the next fill; trimming it would copy it

    def consumed(self, pos: int) -> int:
        return pos

    def total(self) -> int:
        return self.size

    def close(self) -> None:
        self.buf = b""


class StreamSource:
    """A window over a forward-only stream of uncompressed chunks, each a list of bytes.

    Each :meth:`fill` appends chunks as soon as they arrive: walking a chunk
    while the next one is inflated on the prefetch thread is what keeps the
    two overlapped. Bytes before the window are dropped; going back to them
    reads them again through ``reread(pos, n)`` (by default the chunk
    iterator's own ``reread``, see :func:`codec.inflate.prefetch`). Without
    one, what was dropped is gone. :meth:`release` only marks bytes as no
    longer needed; they leave when the window next grows (one copy, not one
    per release).
    """

    random_access = False
    size = None

    def __init__(self, chunks: Iterator[list[bytes]], consumed: Callable[[], int],
                 reread: Callable[[int, int], bytes] | None = None) -> None:
        self._chunks = chunks
        self._consumed = consumed
        self._reread = reread if reread is not None else getattr(chunks, "reread", None)
        self.buf = b""
        self.base = 0
        self._keep = 0  # bytes before this are no longer needed
        self.live_end = 0  # uncompressed bytes the stream has handed over so far
        self._live_done = False

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    @property
    def eof(self) -> bool:
        return self._live_done and self.end >= self.live_end

    def _piece(self, end: int) -> list[bytes] | None:
        """The bytes from ``end`` on: read back, or the stream's next chunk."""
        if end < self.live_end:
            piece = self._reread(end, min(PIECE, self.live_end - end)) if self._reread is not None else b""
            return [piece] if piece else None
        if self._live_done:
            return None
        chunk = next(self._chunks, None)
        if chunk is None:
            self._live_done = True
            return None
        self.live_end += sum(map(len, chunk))
        return chunk

    def _extend_to(self, target: int) -> None:
        """Grow the window to ``target`` (or the end of the data), dropping released bytes."""
        keep = min(max(self._keep, self.base), self.end)
        parts = [self.buf[keep - self.base:]] if keep < self.end else []
        end = self.end
        while end < target:
            piece = self._piece(end)
            if piece is None:
                if end < self.live_end:  # cannot be read again: go on where the stream is
                    parts, keep = [], self.live_end
                    end = self.live_end
                    continue
                break
            parts.extend(p for p in piece if p)
            end += sum(map(len, piece))
        self.buf = parts[0] if len(parts) == 1 else b"".join(parts)
        self.base = keep

    def seek(self, pos: int) -> None:
        """Make the window start at ``pos`` (reading back if it is behind)."""
        if pos < self.base or (self.end < pos <= self.live_end and self._reread is not None):
            if self._reread is not None:
                self.buf, self.base = b"", pos
                self._keep = pos
            return
        while pos > self.end and not self.eof:
            self._keep = self.end
            self._extend_to(self.end + 1)
        self.release(pos)

    def fill(self, pos: int, n: int) -> None:
        self.seek(pos)
        self._extend_to(max(pos, self.base) + n)

    def get(self, pos: int, n: int) -> bytes:
        if pos < self.base or pos > self.end:
            self.seek(pos)
        if pos + n > self.end:
            self._keep = min(self._keep, pos)
            self._extend_to(pos + n)
        start = pos - self.base
        return self.buf[start:start + n] if start >= 0 else b""

    def pieces(self, pos: int, n: int) -> Iterator[bytes]:
        """The ``n`` bytes at ``pos`` in pieces of at most ``PIECE`` bytes, dropping each once handed out."""
        self.seek(pos)
        end = pos + n
        while pos < end:
            if pos >= self.end:
                self.release(pos)
                self._extend_to(pos + 1)
                if pos >= self.end:
                    return
            start = pos - self.base
            take = min(end - pos, self.end - pos, PIECE)
            yield self.buf if take == len(self.buf) else self.buf[start:start + take]
            pos += take
            self.release(pos)

    def release(self, upto: int) -> None:
        self._keep = max(self._keep, min(upto, self.end))

    def consumed(self, pos: int) -> int:
        return self._consumed()

    def total(self) -> int:
        """The stream's length: what is left of it is inflated and dropped (read back if needed)."""
        while not self._live_done:
            chunk = next(self._chunks, None)
            if chunk is None:
                self._live_done = True
            else:
                self.live_end += sum(map(len, chunk))
        return self.live_end

    def close(self) -> None:
        self.buf = b""
        close = getattr(self._reread, "close", None)
        if close is not None:
            close()


@dataclass(frozen=True)
class _Check:
    """What a data CRC check found: is the record complete, does its CRC hold (None: not checked)."""

    complete: bool
    ok: bool | None = None
    stored: int = 0
    computed: int = 0


class Scanner:
    """One index pass over a source, filling ``index`` and ``problems``."""

    def __init__(self, source, index: RecordIndex, problems: list[Problem], total: int, *, verify: bool = False):
        self.src = source
        self.index = index
        self.problems = problems
        self.total = total
        self.verify = verify
        self._no_headers = (0, 0)  # no header with a length CRC that holds starts in [a, b)

    def _progress(self, pos: int, done: bool = False) -> IndexProgress:
        return IndexProgress(len(self.index), self.src.consumed(pos), self.total, len(self.problems), done)

    def run(self) -> Iterator[IndexProgress]:
        src = self.src
        pos = 0
        batch = FIRST_BATCH
        shown = (0, 0)  # (records, position) at the last yield
        try:
            while True:
                if not src.base <= pos <= src.end:
                    src.seek(pos)
                offsets, stop = self._walk(src.buf, src.base, pos, batch)
                pos, bad = self._accept(src.buf, src.base, offsets, stop)
                # A step that found nothing is not shown; the window is small, so steps are gathered
                # into batches of records (or of bytes, for large records and damage).
                if len(self.index) - shown[0] >= batch or pos - shown[1] >= PROGRESS_BYTES:
                    shown = (len(self.index), pos)
                    batch = BATCH
                    yield self._progress(pos)
                if bad:
                    pos = self._damaged(pos)
                else:
                    need = self._shortfall(pos)
                    if need < 0:
                        pos = self._damaged(pos)
                    elif need:
                        if src.random_access:
                            hopped = self._hop(pos)
                            if hopped != pos:
                                pos = hopped
                                continue
                        if need <= HOLD and not src.eof:
                            have = src.end - pos
                            src.fill(pos, need)
                            if src.end - pos > have:
                                continue
                        if pos >= src.end and src.eof:
                            break
                        pos = self._damaged(pos)
                if pos is None:
                    break
            yield self._progress(src.live_end if src.size is None else src.size, done=True)
        finally:
            src.close()

    def _hop(self, pos: int) -> int:
        """A plain file: step over large records by their headers (reading their data would
        cost more than the whole walk), or when verifying, read each one's data by itself
        (copied once, straight into the bytes its CRC is computed over); return where it
        stopped. A record failing a check is left to the window walk, which handles damage."""
        src = self.src
        offsets: list[int] = []
        verify = self.verify
        read = 0
        head = src.get(pos, HEADER_SIZE)
        while len(offsets) < BATCH and read < BATCH_BYTES:
            if len(head) < HEADER_SIZE:
                break
            n, stored = HEADER.unpack(head)
            if n < HOP or pos + OVERHEAD + n > src.size or masked_crc(head[:8]) != stored:
                break
            end = pos + OVERHEAD + n
            if verify:
                if n > HOLD:
                    break
                data = src.read(pos + HEADER_SIZE, n)
                tail = src.read(end - 4, 4 + HEADER_SIZE)  # its CRC and the next header
                if len(data) < n or len(tail) < 4 or masked_crc(data) != CRC.unpack_from(tail)[0]:
                    break
                head = tail[4:]
                read += n
            else:
                head = src.get(end, HEADER_SIZE)
            offsets.append(pos)
            pos = end
        if offsets:
            self.index.append(offsets, RecordStatus.OK if verify else RecordStatus.UNCHECKED)
        return pos

    def _shortfall(self, pos: int) -> int:
        """0 when the record at ``pos`` lies in the window, -1 when its length CRC fails,
        else how many bytes from ``pos`` it needs."""
        src = self.src
        p = pos - src.base
        have = len(src.buf) - p
        if have < HEADER_SIZE:
            return HEADER_SIZE
        n, stored = HEADER.unpack_from(src.buf, p)
        if masked_crc(src.buf[p:p + 8]) != stored:
            return -1
        return OVERHEAD + n if OVERHEAD + n > have else 0

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
                    view.release()
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

        Returns the position to go on from and whether the walk stopped at a
        header whose length CRC fails. When verifying, a record whose data
        CRC fails ends the batch if a record starts inside it (the walk goes
        on from there).
        """
        if not offsets:
            return stop, False
        rel = np.asarray(offsets, dtype=np.int64)
        ok = length_crcs_hold(np.frombuffer(buf, dtype=np.uint8), rel)
        bad_at = len(offsets) if ok.all() else int(np.argmin(ok))
        good = rel[:bad_at]
        status = np.full(bad_at, int(RecordStatus.UNCHECKED), dtype=np.uint8)
        resume = None
        if self.verify and bad_at:
            first = len(self.index)
            okd, stored, computed = verify_spans(buf, good)
            status[okd] = RecordStatus.OK
            status[~okd] = RecordStatus.DATA_CRC
            failed = np.flatnonzero(~okd).tolist()
            for k in failed:
                start = int(good[k]) + base
                end = int(rel[k + 1]) + base if k + 1 < len(offsets) else stop
                inner = self._resync(start + 1, limit=end)
                if inner is not None:
                    bad_at = k + 1
                    resume = inner
                    break
            for k in failed:
                if k < bad_at:
                    self.problems.append(data_crc_problem(first + k, int(good[k]) + base, int(stored[k]),
                                                          int(computed[k])))
        self.index.append(good[:bad_at] + base, status[:bad_at])
        if resume is not None:
            return resume, False
        if bad_at < len(offsets):
            return int(rel[bad_at]) + base, True
        return stop, False

    # -- damage -----------------------------------------------------------
    def _damaged(self, pos: int) -> int | None:
        """Handle the bad or incomplete record at ``pos``; return where to go on."""
        src = self.src
        head = src.get(pos, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            inner = self._check_previous(pos)
            if inner is not None:
                return inner
            if head:
                self.problems.append(Problem(
                    None, pos, ProblemKind.TRUNCATED,
                    f"{len(head)} bytes left at the end, a record header needs {HEADER_SIZE}", size=len(head)))
            return None
        n, stored_lcrc = HEADER.unpack(head)
        computed_lcrc = masked_crc(head[:8])
        length_ok = stored_lcrc == computed_lcrc
        if length_ok and n <= MAX_RECORD:
            check = self._data_crc(pos, n, self.verify)
            if check.complete:  # a good header the fast walk stopped short of (a large record)
                return self._index_checked(pos, n, check)
        inner = self._check_previous(pos)
        if inner is not None:
            return inner
        if not length_ok and n <= MAX_RECORD and (src.random_access or n <= HOLD):
            check = self._data_crc(pos, n, True)
            if check.ok:
                self.problems.append(Problem(
                    len(self.index), pos, ProblemKind.LENGTH_CRC,
                    f"length CRC stored {stored_lcrc:#010x}, computed {computed_lcrc:#010x}; "
                    f"the data CRC proves the length ({n}): recovered",
                    size=HEADER_SIZE, expected=stored_lcrc, found=computed_lcrc))
                self.index.append([pos], RecordStatus.LENGTH_CRC)
                return pos + OVERHEAD + n
        nxt = self._resync(pos + 1)
        if length_ok:
            if nxt is None:
                data_end = self._data_end()
                left = max(0, data_end - pos - HEADER_SIZE)
                self.problems.append(Problem(
                    len(self.index), pos, ProblemKind.TRUNCATED,
                    f"record claims {n} bytes of data and a 4-byte CRC, only {left} bytes left after its header",
                    size=data_end - pos, expected=n, found=left))
                self.index.append([pos], RecordStatus.TRUNCATED)
                return None
            self.problems.append(Problem(
                None, pos, ProblemKind.GARBAGE,
                f"header claims {n} bytes past the end; {nxt - pos} bytes skipped to the next record at {nxt}",
                size=nxt - pos))
            return nxt
        skipped = (nxt if nxt is not None else self._data_end()) - pos
        where = f"skipped {skipped} bytes to the next intact record at {nxt}" if nxt is not None else \
            f"no intact record after it ({skipped} bytes to the end)"
        self.problems.append(Problem(
            None, pos, ProblemKind.LENGTH_CRC,
            f"length CRC stored {stored_lcrc:#010x}, computed {computed_lcrc:#010x}; {where}",
            size=skipped, expected=stored_lcrc, found=computed_lcrc))
        return nxt

    def _data_end(self) -> int:
        """Where the data ends (a stream is inflated to its end first)."""
        return self.src.total()

    def _index_checked(self, pos: int, n: int, check: _Check) -> int:
        """Index a complete record at ``pos``; return where the walk goes on."""
        end = pos + OVERHEAD + n
        if check.ok is None:
            self.index.append([pos], RecordStatus.UNCHECKED)
            return end
        if check.ok:
            self.index.append([pos], RecordStatus.OK)
            return end
        self.problems.append(data_crc_problem(len(self.index), pos, check.stored, check.computed))
        self.index.append([pos], RecordStatus.DATA_CRC)
        inner = self._resync(pos + 1, limit=end)
        return end if inner is None else inner

    def _check_previous(self, pos: int) -> int | None:
        """Check the data CRC of the unchecked record ending at ``pos`` (the header after it
        failed): if it fails, mark it and return the first intact record inside it, if any."""
        i = len(self.index) - 1
        if i < 0 or self.index.status(i) is not RecordStatus.UNCHECKED:
            return None
        start = self.index.offset(i)
        head = self.src.get(start, 8)
        if len(head) < 8:
            return None
        (n,) = LENGTH.unpack(head)
        if start + OVERHEAD + n != pos:
            return None
        check = self._data_crc(start, n, True)
        if check.ok:
            self.index.set_status(i, RecordStatus.OK)
            return None
        self.index.set_status(i, RecordStatus.DATA_CRC)
        self.problems.append(data_crc_problem(i, start, check.stored, check.computed))
        return self._resync(start + 1, limit=pos)

    def _data_crc(self, pos: int, n: int, need: bool) -> _Check:
        """Is the record at ``pos`` with ``n`` data bytes complete, and (if ``need``, or free
        because a stream is read anyway) does its data CRC hold? Never holds more than
        ``HOLD`` bytes: larger records are checked piece by piece."""
        src = self.src
        if n > MAX_RECORD:
            return _Check(False)
        start = pos + HEADER_SIZE
        if src.size is not None:
            complete = start + n + 4 <= src.size
            if not complete or not need:
                return _Check(complete)
        if n <= HOLD:
            body = src.get(start, n + 4)
            if len(body) < n + 4:
                return _Check(False)
            (stored,) = CRC.unpack_from(body, n)
            computed = masked_crc(body[:n])
        else:
            crc = got = 0
            extend = google_crc32c.extend
            # A stream is not read twice for nothing: while the data goes by, note whether any
            # header could start in it, so that a resync over it can skip it if none can.
            look = not src.random_access
            carry = src.get(pos + 1, HEADER_SIZE - 1) if look else b""
            for piece in src.pieces(start, n):
                crc = extend(crc, piece)
                got += len(piece)
                if look:
                    both = carry + piece
                    look = not candidate_headers(both, MAX_RECORD).shape[0]
                    carry = both[-(HEADER_SIZE - 1):]
            if look:
                self._no_headers = (pos + 1, start + got - (HEADER_SIZE - 1))
            tail = src.get(start + n, 4)
            if got < n or len(tail) < 4:
                return _Check(False)
            (stored,) = CRC.unpack(tail)
            computed = mask(crc)
        return _Check(True, stored == computed, stored, computed)

    def _resync(self, start: int, limit: int | None = None) -> int | None:
        """The first offset >= start (and < limit) whose length CRC and data CRC both hold."""
        src = self.src
        s = start
        if self._no_headers[0] <= s < self._no_headers[1]:
            s = self._no_headers[1]
        while limit is None or s < limit:
            step = RESYNC_WINDOW if limit is None else min(RESYNC_WINDOW, limit - s)
            win = src.get(s, step + HEADER_SIZE - 1)  # headers starting in [s, s + step)
            if len(win) < HEADER_SIZE:
                return None
            for c in candidate_headers(win, MAX_RECORD).tolist():
                (n,) = LENGTH.unpack_from(win, c)
                if self._data_crc(s + c, n, True).ok:
                    return s + c
            if len(win) < step + HEADER_SIZE - 1:
                return None
            s += step
            src.release(s)
        return None


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


_SCALAR_WINDOW = 2048
_ZERO4 = bytes(4)


_RUN_HEAD = np.arange(-6, 0, dtype=np.int64)
_RUN_TAIL = np.arange(-11, -5, dtype=np.int64)


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


def data_crc_problem(index: int, offset: int, stored: int, computed: int) -> Problem:
    return Problem(index, offset, ProblemKind.DATA_CRC,
                   f"data CRC stored {stored:#010x}, computed {computed:#010x}",
                   expected=stored, found=computed)
