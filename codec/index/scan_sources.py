"""The bytes the index pass walks: a window over a plain file, or over an inflating stream.

Both give :class:`codec.index.scan.Scanner` the same small interface (``buf`` and
``base``, ``seek``, ``fill``, ``get``, ``pieces``, ``release``, ``consumed``,
``total``, ``close``); neither holds more than a window, or one record of up
to the scanner's ``HOLD`` bytes, so memory stays bounded whatever the file.
Apart from the scanner because they know about reading, not about records.
"""
from __future__ import annotations

from typing import Callable, Iterator

WINDOW = 256 << 10  # bytes of a plain file read at a time (small: the index alone should grow with the file)
PIECE = 4 << 20  # piece size for incremental CRCs and for reading a stream back


class PlainSource:
    """An uncompressed file read through ``read_at(pos, n)`` in windows.

    ``read_at`` returns exactly ``min(n, size - pos)`` bytes (or raises).
    The scanner walks ``buf`` (file bytes from ``base``); nothing holds more
    than a window or one record of up to ``HOLD`` bytes. Passing a buffer
    alone (no ``size``) reads from that buffer.
    """

    random_access = True

    def __init__(self, read_at, size: int | None = None, *, window: int = WINDOW, hop_span: int = 0) -> None:
        if size is None:  # a bytes-like buffer (an mmap)
            data = read_at
            size = len(data)
            read_at = lambda pos, n: bytes(data[pos:pos + n])  # noqa: E731
        self._read_at: Callable[[int, int], bytes] = read_at
        self.size = size
        self.window = window
        self.hop_span = hop_span  # bytes the scanner steps over large records before it shows progress (0: any)
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
    iterator's own ``reread``, see :func:`codec.storage.inflate.prefetch`). Without
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
