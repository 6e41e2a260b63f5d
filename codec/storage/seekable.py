"""The read-only, seekable file object boilerplate that the views over other bytes share
(:class:`codec.storage.remote_io.BlobFile`, :class:`codec.storage.zran.ZlibAsGzip`): position, size and seeking."""
from __future__ import annotations

import io

__all__ = ["SeekableReader"]


class SeekableReader(io.RawIOBase):
    """A raw file object of ``_size`` bytes read from ``_pos``; a subclass sets both and reads."""

    _pos = 0
    _size = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._pos = base + offset
        return self._pos
