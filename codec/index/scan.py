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
unnoticed (no data CRC is read): only a verifying pass searches it (and the
verify pass after such an index pass, which indexes again if it finds one:
see :mod:`codec.sources.verification`).

Memory stays bounded whatever a header claims: the file is read through a
window (the sources of :mod:`codec.index.scan_sources`), a record larger than
``HOLD`` is checked by an incremental CRC over pieces, and the
resynchronising search reads the file again (a compressed stream through
its checkpoints) instead of keeping it. The batch checks and the header
search are in :mod:`codec.format.header_search`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Iterator, Protocol

import google_crc32c
import numpy as np

from codec.format.crc import mask, masked_crc
from codec.format.framing import CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Problem, ProblemKind, RecordStatus
from codec.format.header_search import candidate_headers, length_crcs_hold, verify_spans

MAX_RECORD = 1 << 31  # protobuf and TensorFlow cannot produce larger records
FIRST_BATCH = 1024
BATCH = 1 << 14
BATCH_BYTES = 32 << 20
PROGRESS_BYTES = 1 << 20  # progress is shown at least this often (of the data), besides every BATCH records
HOLD = 16 << 20  # larger records are never held whole: checked piece by piece
HOP = 1 << 16  # a plain file's records this large are stepped over by their headers when not verifying
RESYNC_WINDOW = 4 << 20
_LITTLE_ENDIAN = sys.byteorder == "little"


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


@dataclass(frozen=True)
class _Check:
    """What a data CRC check found: is the record complete, does its CRC hold (None: not checked)."""

    complete: bool
    ok: bool | None = None
    stored: int = 0
    computed: int = 0


class IndexSink(Protocol):
    """What an index pass fills: a :class:`codec.index.record_index.RecordIndex`, or a followed file's view of one."""

    def __len__(self) -> int: ...

    def append(self, offsets: np.ndarray | list[int], status: np.ndarray | int = RecordStatus.UNCHECKED) -> None: ...

    def offset(self, i: int) -> int: ...

    def status(self, i: int) -> RecordStatus: ...

    def set_status(self, i: int, status: RecordStatus) -> None: ...


class Scanner:
    """One index pass over a source, filling ``index`` and ``problems``."""

    def __init__(self, source, index: IndexSink, problems: list[Problem], total: int, *, verify: bool = False,
                 open_end: bool = False):
        self.src = source
        self.index = index
        self.problems = problems
        self.total = total
        self.verify = verify
        # A file still being written (followed): what is unfinished at its end is no problem. A record
        # whose header holds but whose bytes run past the end is indexed as WRITING; anything else
        # with no intact record after it is left for the next pass (see ``stop``).
        self.open_end = open_end
        self.stop: int | None = None  # where the pass ended: the end of the data, or its unfinished part
        self._no_headers = (0, 0)  # no header with a length CRC that holds starts in [a, b)

    def _progress(self, pos: int, done: bool = False) -> IndexProgress:
        return IndexProgress(len(self.index), self.src.consumed(pos), self.total, len(self.problems), done)

    def run(self, start: int = 0) -> Iterator[IndexProgress]:
        """The pass, from the record start ``start`` (a record known to start there, or 0)."""
        src = self.src
        pos = start
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
                            self.stop = pos
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
        stop = pos + src.hop_span if src.hop_span else src.size  # a remote file shows progress sooner
        head = src.get(pos, HEADER_SIZE)
        while len(offsets) < BATCH and read < BATCH_BYTES and pos < stop:
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
            if self.open_end:
                self.stop = pos
            elif head:
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
        if self.open_end and length_ok and n <= MAX_RECORD:  # still arriving
            self.index.append([pos], RecordStatus.WRITING)
            self.stop = pos
            return None
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
        if nxt is None and self.open_end:
            self.stop = pos
            return None
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

    def intact_record_in(self, start: int, end: int) -> bool:
        """Does a record whose length and data CRCs hold start in [start, end)?"""
        return self._resync(start, limit=end) is not None

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


def _uint64_views(buf) -> list[memoryview]:
    """``buf`` as native uint64 arrays starting at byte 0, 1, ... 7 (release them after use)."""
    whole = memoryview(buf)
    try:
        n = len(whole)
        return [whole[k:k + 8 * ((n - k) // 8)].cast("Q") for k in range(min(8, n))]
    finally:
        whole.release()


def data_crc_problem(index: int, offset: int, stored: int, computed: int) -> Problem:
    return Problem(index, offset, ProblemKind.DATA_CRC,
                   f"data CRC stored {stored:#010x}, computed {computed:#010x}",
                   expected=stored, found=computed)
