"""The compact offset index: 9 bytes per record, no Python object per record."""
from __future__ import annotations

import threading

import numpy as np

from codec.format.framing import RecordStatus

CHUNK_BITS = 14  # small chunks: the last one, partly empty, costs little
CHUNK = 1 << CHUNK_BITS
FIRST_CAPACITY = 4  # a file's first chunk starts this small and grows to CHUNK (100,000 one-record shards stay small)
_STATUSES = tuple(RecordStatus(v) for v in range(max(RecordStatus) + 1))  # by value


class RecordIndex:
    """Append-only record start offsets (uint64) and statuses (uint8).

    Stored in chunks of CHUNK entries so that growing never copies more than
    one chunk, and a reader on another thread always sees a consistent prefix:
    ``len()`` is advanced only after the entries below it are written. The
    first chunk starts small and doubles (a shard of 3 records does not
    reserve 64K entries); a status set while it is copied is not lost (lock).
    """

    def __init__(self) -> None:
        self._offsets: list[np.ndarray] = []
        self._status: list[np.ndarray] = []
        self._count = 0
        self._grow_lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._offsets) + sum(a.nbytes for a in self._status)

    def append(self, offsets: np.ndarray | list[int], status: np.ndarray | int = RecordStatus.UNCHECKED) -> None:
        offsets = np.asarray(offsets, dtype=np.uint64)
        n = offsets.shape[0]
        if isinstance(status, (int, RecordStatus)):
            status = np.full(n, int(status), dtype=np.uint8)
        done = 0
        count = self._count
        while done < n:
            chunk, pos = divmod(count + done, CHUNK)
            take = min(CHUNK - pos, n - done)
            if chunk == len(self._offsets):
                size = CHUNK if chunk else min(CHUNK, max(FIRST_CAPACITY, _pow2(take)))
                self._offsets.append(np.zeros(size, dtype=np.uint64))
                self._status.append(np.zeros(size, dtype=np.uint8))
            elif pos + take > self._offsets[chunk].shape[0]:
                self._grow(chunk, min(CHUNK, _pow2(pos + take)))
            self._offsets[chunk][pos:pos + take] = offsets[done:done + take]
            self._status[chunk][pos:pos + take] = status[done:done + take]
            done += take
        self._count = count + n

    def _grow(self, chunk: int, size: int) -> None:
        """Replace a (first) chunk with a larger copy; readers keep seeing the old one until swapped."""
        with self._grow_lock:
            offsets = np.zeros(size, dtype=np.uint64)
            status = np.zeros(size, dtype=np.uint8)
            old = self._offsets[chunk]
            offsets[: old.shape[0]] = old
            status[: old.shape[0]] = self._status[chunk]
            self._offsets[chunk] = offsets
            self._status[chunk] = status

    def offset(self, i: int) -> int:
        return int(self._offsets[i >> CHUNK_BITS][i & (CHUNK - 1)])

    def bounds(self, i: int) -> tuple[int, int]:
        """(offset of record ``i``, offset of record ``i + 1``, or -1 when ``i`` is the last so far)."""
        j = i + 1
        nxt = int(self._offsets[j >> CHUNK_BITS][j & (CHUNK - 1)]) if j < self._count else -1
        return int(self._offsets[i >> CHUNK_BITS][i & (CHUNK - 1)]), nxt

    def run(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, statuses) of records ``i`` .. up to ``j - 1``, stopping at the end of ``i``'s chunk:
        views, no copy (a pass over many records takes them a run at a time)."""
        chunk, pos = i >> CHUNK_BITS, i & (CHUNK - 1)
        take = min(j - i, CHUNK - pos, self._count - i)
        return self._offsets[chunk][pos:pos + take], self._status[chunk][pos:pos + take]

    def status(self, i: int) -> RecordStatus:
        return _STATUSES[self._status[i >> CHUNK_BITS][i & (CHUNK - 1)]]  # (an Enum call costs ~1 us)

    def set_status(self, i: int, status: RecordStatus) -> None:
        with self._grow_lock:
            self._status[i >> CHUNK_BITS][i & (CHUNK - 1)] = int(status)

    def set_statuses(self, indices: np.ndarray, statuses: np.ndarray) -> None:
        """Vectorised ``set_status`` for many records."""
        indices = np.asarray(indices, dtype=np.int64)
        chunks = indices >> CHUNK_BITS
        with self._grow_lock:
            for chunk in np.flatnonzero(np.bincount(chunks)).tolist():  # (np.unique imports numpy.ma: 20 ms)
                sel = chunks == chunk
                self._status[chunk][indices[sel] & (CHUNK - 1)] = statuses[sel]

    def offsets(self) -> np.ndarray:
        """All offsets as one array (a copy)."""
        return self._concat(self._offsets, np.uint64)

    def statuses(self) -> np.ndarray:
        return self._concat(self._status, np.uint8)

    def filled_chunks(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(offset chunks, status chunks) trimmed to ``len()``: views, no copy (for writing out)."""
        full, rest = divmod(self._count, CHUNK)
        n = full + (1 if rest else 0)
        offsets = [c if k < full else c[:rest] for k, c in enumerate(self._offsets[:n])]
        status = [c if k < full else c[:rest] for k, c in enumerate(self._status[:n])]
        return offsets, status

    def _concat(self, chunks: list[np.ndarray], dtype) -> np.ndarray:
        n = self._count
        full, rest = divmod(n, CHUNK)
        parts = chunks[:full] + ([chunks[full][:rest]] if rest else [])
        if not parts:
            return np.zeros(0, dtype=dtype)
        return np.concatenate(parts)

    def find_offset(self, offset: int) -> int:
        """Index of the last record starting at or before ``offset`` (-1 if none)."""
        lo, hi = 0, self._count
        while lo < hi:
            mid = (lo + hi) // 2
            if self.offset(mid) <= offset:
                lo = mid + 1
            else:
                hi = mid
        return lo - 1

    @classmethod
    def of(cls, offsets: list[int], status: RecordStatus) -> RecordIndex:
        """An index of ``offsets`` all with ``status``, sized to them (a one-record shard holds one entry)."""
        n = len(offsets)
        if n > CHUNK:
            return cls.from_arrays(np.array(offsets, dtype=np.uint64), np.full(n, int(status), dtype=np.uint8))
        index = cls()  # (one chunk, made here as it is kept: 100,000 small shards make 100,000 of them)
        index._offsets = [np.array(offsets, dtype=np.uint64)]
        statuses = np.empty(n, dtype=np.uint8)
        statuses.fill(int(status))
        index._status = [statuses]
        index._count = n
        return index

    @classmethod
    def from_arrays(cls, offsets: np.ndarray, statuses: np.ndarray) -> RecordIndex:
        """Wrap loaded arrays without copying the full chunks."""
        index = cls()
        offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
        statuses = np.ascontiguousarray(statuses, dtype=np.uint8)
        full = (offsets.shape[0] // CHUNK) * CHUNK
        index._offsets = [offsets[i:i + CHUNK] for i in range(0, full, CHUNK)]
        index._status = [statuses[i:i + CHUNK] for i in range(0, full, CHUNK)]
        if full < offsets.shape[0]:  # the last, partial chunk wrapped too: it grows (a copy) when appended to
            index._offsets.append(offsets[full:])
            index._status.append(statuses[full:])
        index._count = offsets.shape[0]
        return index


def _pow2(n: int) -> int:
    """The smallest power of two >= n."""
    return 1 << max(0, n - 1).bit_length()
