"""Reading a remote object as the codec reads files: a prefetching ``read_at`` for one
front-to-back pass, and a seekable file object for the GZIP/ZLIB readers.

The index pass over a remote file must cost little more than downloading it, and
random reads afterwards only the bytes asked for. :class:`Prefetcher` keeps the next
few chunks of a pass in flight (so round trips overlap with the header walk) and
drops chunks behind it (memory stays a few chunks whatever the file); a read far
ahead of its window is a hop over large records and is fetched alone, so stepping
header to header over huge records reads the headers, not the records.
"""
from __future__ import annotations

import threading

from codec.errors import FileAccessError
from codec.storage.seekable import SeekableReader

FIRST_CHUNK = 512 << 10  # the first chunk of a pass: the first records show after reading little
CHUNK = 16 << 20  # chunks double up to this size
AHEAD_RAMP = 1  # chunks kept in flight beyond the one being read, while they are small
AHEAD = 3  # and once they are CHUNK-sized (memory: (AHEAD + 1) chunks)
JUMP = CHUNK  # a read starting this far past the window is a hop, not the pass going on


class _Fetch:
    """One ranged read on a daemon thread (an interpreter exiting, e.g. on Ctrl-C, never
    waits for a stalled fetch), with ``result()`` like a future's."""

    __slots__ = ("_done", "_data", "_error", "cancelled")

    def __init__(self, read_at, start: int, size: int) -> None:
        self._done = threading.Event()
        self._data = b""
        self._error: BaseException | None = None
        self.cancelled = False
        threading.Thread(target=self._run, args=(read_at, start, size), name="tfrlens-prefetch",
                         daemon=True).start()

    def _run(self, read_at, start: int, size: int) -> None:
        try:
            if not self.cancelled:
                self._data = read_at(start, size)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader by result()
            self._error = exc
        finally:
            self._done.set()

    def cancel(self) -> None:
        self.cancelled = True  # not started yet: skipped; in flight: finishes, and is dropped

    def result(self) -> bytes:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._data


class Prefetcher:
    """``read_at(pos, n)`` over a :class:`codec.storage.remote.RemoteFile` for one pass from front to
    back; the same contract as the remote's (exactly ``min(n, size - pos)`` bytes)."""

    def __init__(self, remote) -> None:
        self.remote = remote
        self.size: int = remote.size
        self._chunks: list[tuple[int, int, _Fetch]] = []  # consecutive (start, end, bytes) from the window start
        self._chunk = FIRST_CHUNK
        self._last_end = 0  # where the last read ended (a pass starts where reads left off)
        self._lock = threading.Lock()
        self._closed = False
        self._hot: tuple[int, int, bytes] = (0, 0, b"")  # the last chunk read from: small reads inside it

    # -- the window ---------------------------------------------------------
    def _reset(self) -> None:
        self._hot = (0, 0, b"")
        for _, _, future in self._chunks:
            future.cancel()
        self._chunks = []
        self._chunk = FIRST_CHUNK

    def _schedule(self, start: int, size: int) -> None:
        end = min(start + size, self.size)
        if end > start:
            self._chunks.append((start, end, _Fetch(self.remote.read_at, start, end - start)))

    def _extend_to(self, end: int) -> None:
        """Chunks up to ``end``, and the ones ahead of it in flight."""
        hi = self._chunks[-1][1]
        while hi < end:
            self._schedule(hi, max(self._chunk, end - hi))
            self._grow()
            hi = self._chunks[-1][1]
        ahead = AHEAD if self._chunk >= CHUNK else AHEAD_RAMP
        current = next(k for k, (s, e, _) in enumerate(self._chunks) if e >= end)
        while len(self._chunks) - 1 - current < ahead and hi < self.size:
            self._schedule(hi, self._chunk)
            self._grow()
            hi = self._chunks[-1][1]

    def _grow(self) -> None:
        self._chunk = min(CHUNK, self._chunk * 2)

    def read_at(self, pos: int, n: int) -> bytes:
        end = min(pos + n, self.size)
        if end <= pos:
            return b""
        lo, hi, data = self._hot
        if lo <= pos and end <= hi and not self._closed:  # the common case of many small reads
            self._last_end = end
            return data[pos - lo:end - lo]
        with self._lock:
            if self._closed:
                raise FileAccessError(f"{self.remote.shown} was closed")
            if self._chunks:
                lo, hi = self._chunks[0][0], self._chunks[-1][1]
                if pos < lo:  # looking back (a damaged record's neighbourhood): leave the window alone
                    return self.remote.read(pos, end - pos)
                if pos > hi + JUMP:
                    self._reset()
            if not self._chunks:
                data = self.remote.cached(pos, end - pos)
                if data is not None:  # the first block, read when the file was sniffed: not fetched again
                    self._last_end = end
                    return data
            if not self._chunks and abs(pos - self._last_end) > JUMP:
                self._last_end = end  # a hop over large records: this read alone
                return self.remote.read(pos, end - pos)
            if not self._chunks:
                self._schedule(pos, max(self._chunk, end - pos))
                self._grow()
            self._extend_to(end)
            while self._chunks[0][1] <= pos:  # behind the pass: dropped
                self._chunks.pop(0)
            wanted = [(s, e, f) for s, e, f in self._chunks if s < end and e > pos]
            self._last_end = end
        parts = []
        for s, e, future in wanted:
            data = future.result()
            parts.append(data[max(pos, s) - s:min(end, e) - s])
        if len(wanted) == 1:
            self._hot = (wanted[0][0], wanted[0][1], data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop fetching ahead; fetches in flight finish on their threads and are dropped."""
        with self._lock:
            self._closed = True
            self._reset()

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BlobFile(SeekableReader):
    """A read-only, seekable file object over a remote object: through a :class:`Prefetcher`
    for a pass, else through the remote's block cache (random reads)."""

    def __init__(self, remote, prefetcher: Prefetcher | None = None) -> None:
        super().__init__()
        self.remote = remote
        self.name = remote.url
        self._read_at = prefetcher.read_at if prefetcher is not None else remote.read
        self._prefetcher = prefetcher
        self._pos, self._size = 0, remote.size

    def reopen(self) -> BlobFile:
        """Another file object over the same object, for random reads (the block cache)."""
        return BlobFile(self.remote)

    def release(self) -> None:
        """Nothing to let go of: no handle is held between reads."""

    def read(self, size: int = -1) -> bytes:
        n = self._size - self._pos if size is None or size < 0 else size
        data = self._read_at(self._pos, n) if n > 0 else b""
        self._pos += len(data)
        return data

    def readinto(self, buffer) -> int:
        out = memoryview(buffer).cast("B")
        data = self.read(len(out))
        out[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None
        super().close()
