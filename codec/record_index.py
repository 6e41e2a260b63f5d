"""The compact offset index: 9 bytes per record, no Python object per record."""
from __future__ import annotations

import numpy as np

from .framing import RecordStatus

CHUNK_BITS = 16
CHUNK = 1 << CHUNK_BITS


class RecordIndex:
    """Append-only record start offsets (uint64) and statuses (uint8).

    Stored in fixed-size chunks so that growing never copies and a reader on
    another thread always sees a consistent prefix: ``len()`` is advanced only
    after the entries below it are written.
    """

    def __init__(self) -> None:
        self._offsets: list[np.ndarray] = []
        self._status: list[np.ndarray] = []
        self._count = 0

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
            if chunk == len(self._offsets):
                self._offsets.append(np.zeros(CHUNK, dtype=np.uint64))
                self._status.append(np.zeros(CHUNK, dtype=np.uint8))
            take = min(CHUNK - pos, n - done)
            self._offsets[chunk][pos:pos + take] = offsets[done:done + take]
            self._status[chunk][pos:pos + take] = status[done:done + take]
            done += take
        self._count = count + n

    def offset(self, i: int) -> int:
        return int(self._offsets[i >> CHUNK_BITS][i & (CHUNK - 1)])

    def status(self, i: int) -> RecordStatus:
        return RecordStatus(int(self._status[i >> CHUNK_BITS][i & (CHUNK - 1)]))

    def set_status(self, i: int, status: RecordStatus) -> None:
        self._status[i >> CHUNK_BITS][i & (CHUNK - 1)] = int(status)

    def set_statuses(self, indices: np.ndarray, statuses: np.ndarray) -> None:
        """Vectorised ``set_status`` for many records."""
        indices = np.asarray(indices, dtype=np.int64)
        chunks = indices >> CHUNK_BITS
        for chunk in np.unique(chunks).tolist():
            sel = chunks == chunk
            self._status[chunk][indices[sel] & (CHUNK - 1)] = statuses[sel]

    def offsets(self) -> np.ndarray:
        """All offsets as one array (a copy)."""
        return self._concat(self._offsets, np.uint64)

    def statuses(self) -> np.ndarray:
        return self._concat(self._status, np.uint8)

    def _concat(self, chunks: list[np.ndarray], dtype) -> np.ndarray:
        if not chunks:
            return np.zeros(0, dtype=dtype)
        return np.concatenate(chunks)[: self._count]

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
    def from_arrays(cls, offsets: np.ndarray, statuses: np.ndarray) -> "RecordIndex":
        """Wrap loaded arrays without copying the full chunks."""
        index = cls()
        offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
        statuses = np.ascontiguousarray(statuses, dtype=np.uint8)
        full = (offsets.shape[0] // CHUNK) * CHUNK
        index._offsets = [offsets[i:i + CHUNK] for i in range(0, full, CHUNK)]
        index._status = [statuses[i:i + CHUNK] for i in range(0, full, CHUNK)]
        index._count = full
        index.append(offsets[full:], statuses[full:])
        return index
