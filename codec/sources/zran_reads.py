"""A GZIP or ZLIB file's zran index (:mod:`codec.storage.zran`): random reads at C speed, kept in the index cache.

Built on a thread after an index pass over an undamaged stream (not during it:
on two cores a concurrent build slowed the pass ~50%), saved in the cache if
the file is still the version indexed, loaded on the next open. Without one,
random reads go through zlib checkpoints, found again by one decompression pass.
"""
from __future__ import annotations

import os

from codec.format.framing import Compression
from codec.index import cache as index_cache
from codec.sources.byte_sources import ByteSource
from codec.storage.file_identity import FileIdentity
from codec.storage.inflate import InflateReader, InflateScanner
from codec.storage.opening import io_errors
from codec.storage.zran import ZranBuilder, ZranReader


class ZranIndexes:
    """The zran index of one compressed file, read through ``source``: built for the cache, or loaded from it."""

    def __init__(self, path: str, source: ByteSource) -> None:
        self.path = path
        self.source = source
        self.job: ZranBuilder | None = None  # the index being built for the cache

    def build(self, compression: Compression, end: int) -> ZranBuilder:
        """Start building the index of the stream's ``end`` uncompressed bytes; cached when done."""
        return ZranBuilder(self.path, compression, end, self._saver(end), self.source.stream_opener())

    def _saver(self, end: int):
        """``on_done`` for a zran build: cache it if the file is still the one indexed."""
        source = self.source
        path, size, version, identity, remote = self.path, source.size, source.version, source.identity, source.is_remote

        def save(blob: bytes, out: int) -> None:
            if remote:  # its reads were pinned to the version indexed: a change failed them
                if out == end:
                    index_cache.save_zran(path, size, version, blob, end)
                return
            try:
                st = os.stat(path)
            except OSError:
                return
            if out == end and FileIdentity.of(st) == identity:
                index_cache.save_zran(path, size, version, blob, end)

        return save

    def wait(self) -> None:
        """Block until the index being built for the cache (if any) is done."""
        job = self.job
        if job is not None:
            job.result()

    def reader(self, compression: Compression, end: int) -> ZranReader | None:
        """Random reads through the zran index: from the cache if it holds one; else built now (one
        C-speed pass, the cost of rebuilding the zlib checkpoints) and cached for the next open.
        None when it cannot be read (the caller uses zlib checkpoints)."""
        self.wait()
        source = self.source
        index = index_cache.load_zran(self.path, source.size, source.version, end)
        if index is None:
            built = self.build(compression, end).result()
            if built is None or built[1] != end:
                return None
            index = built[0]
        try:
            return ZranReader(self.path, index, end, compression, source.opener())
        except Exception:  # noqa: BLE001 - an unreadable index: use the zlib checkpoints
            return None
        finally:
            if not isinstance(index, bytes):
                index.close()

    def checkpoints(self, compression: Compression) -> InflateReader:
        """After a cache load: one decompression pass to find checkpoints again."""
        with self.source.open_stream(streaming=True) as f, io_errors(self.path):
            inflater = InflateScanner(f, compression)
            for _ in inflater.chunks():
                pass
        return InflateReader(self.path, compression, inflater.checkpoints, inflater.out_pos,
                             self.source.checked_opener())
