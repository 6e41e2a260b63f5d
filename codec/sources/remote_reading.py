"""How a :class:`codec.sources.tfrecord_file.TFRecordFile` reads a URL: the parts of the reader that differ
for a remote object, kept apart from the local file's fd and pread.

A pass front to back (the index pass, a verification, reading records in order)
goes through one :class:`codec.storage.remote_io.Prefetcher`, so it costs about one
download; a record read at random is one request for its bytes (small ones
through the block cache). Closing or releasing the file stops its passes and
lets go of what they hold.
"""
from __future__ import annotations

import threading

from codec.index import cache as index_cache
from codec.errors import FileAccessError
from codec.format.framing import CRC, HEADER_SIZE, LENGTH, OVERHEAD
from codec.storage.opening import sniff

ONE_READ = 64 << 10  # a smaller record comes through the block cache (its neighbours with it)
REMOTE_ONE_READ = 4 << 20  # up to here, one request for the whole record (a round trip costs more)


class _Streaming:
    """:meth:`RemoteReading._streaming`: this thread's reads of the file go through one Prefetcher."""

    __slots__ = ("_tfile", "_stream")

    def __init__(self, tfile) -> None:
        self._tfile = tfile
        self._stream = None

    def __enter__(self) -> None:
        tfile = self._tfile
        self._stream = tfile._track(tfile.remote.stream())
        tfile._tls.stream = self._stream

    def __exit__(self, *exc) -> None:
        tfile = self._tfile
        tfile._tls.stream = None
        tfile._untrack(self._stream)
        self._stream.close()


class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        pass


class RemoteReading:
    """The remote half of TFRecordFile (``remote`` is None for a local file)."""

    remote = None  # a codec.storage.remote.RemoteFile for a URL

    def _open_remote(self, use_cache: bool, info: dict | None) -> None:
        """A URL: one metadata request (none with a listing's ``info``); the compression from the
        index cache when it knows this version of the object, else sniffed from its first block."""
        from codec.storage.remote import RemoteFile

        self.remote = remote = RemoteFile.open(self.path, info=info)
        self.file_size = remote.size
        self.mtime_ns = remote.token  # the version, for the index cache
        self.identity = None  # a local file's; the remote object's version is pinned by its reads
        self.version = remote.token
        self.use_cache = use_cache and remote.size >= index_cache.MIN_CACHED_BYTES
        self._handle = None
        self._tls = threading.local()
        self._passes: set = set()  # prefetchers and stream files to close with the file
        self._in_order = None  # the Prefetcher of records read in order, made on demand
        self._next_read = -1
        entry = index_cache.open_entry(self.path, self.file_size, self.version) if self.use_cache else None
        if entry is not None:
            with entry:
                self.compression = entry.compression
        else:
            self.compression = sniff(remote.read, self.path)

    # -- passes -------------------------------------------------------------
    def _track(self, thing):
        with self._lock:
            if self._closed:
                thing.close()
                raise FileAccessError(f"{self.remote.shown} was closed")
            self._passes.add(thing)
        return thing

    def _untrack(self, thing) -> None:
        with self._lock:
            self._passes.discard(thing)

    def _streaming(self):
        """Context: the calling thread reads the file front to back (a pass); a remote file's
        reads then come from chunks fetched ahead. Nothing changes for a local file."""
        return _Nothing() if self.remote is None else _Streaming(self)

    def _stop_remote(self) -> None:
        """Stop the passes and let go of the cached blocks (release and close)."""
        if self.remote is None:
            return
        with self._lock:
            passes, self._passes = self._passes, set()
            self._in_order = None
        for thing in passes:
            thing.close()
        self.remote.drop_cache()

    def _remote_stream(self, streaming: bool):
        """The remote file as a binary file object, prefetching for a pass when ``streaming``."""
        return self._track(self.remote.file(streaming=True)) if streaming else self.remote.file()

    def _opener(self):
        """What the GZIP/ZLIB random readers open the file with; None: by its path."""
        return None if self.remote is None else self.remote.file

    def _stream_opener(self):
        """What a front-to-back reader (the zran build) opens the file with; None: by its path."""
        return None if self.remote is None else lambda: self._open_stream(streaming=True)

    # -- reads --------------------------------------------------------------
    def _remote_read(self, pos: int, want: int) -> bytes:
        if self._closed:
            raise FileAccessError(f"{self.remote.shown} was closed")
        stream = getattr(self._tls, "stream", None)
        return stream.read_at(pos, want) if stream is not None else self.remote.read(pos, want)

    def _read_at_exactly(self, pos: int, n: int) -> bytes:
        """These bytes in one request of their own (no block around them)."""
        if self._closed:
            raise FileAccessError(f"{self.remote.shown} was closed")
        return self.remote.read_at(pos, min(n, self.file_size - pos))

    def _remote_record(self, i: int, offset: int, span: int) -> tuple[int, bytes, int] | None:
        """(length, data, stored CRC) of record ``i`` in one read of its ``span``, or None to read
        it in parts (a record larger than REMOTE_ONE_READ, or one whose span holds more).

        Records read in order (``cat``, ``export``, ``repair``, a table's rows) come
        from chunks fetched ahead; a record read at random is one request."""
        if not OVERHEAD <= span <= REMOTE_ONE_READ:
            return None
        stream = getattr(self._tls, "stream", None)
        if stream is None and i == self._next_read:
            stream = self._reading_in_order()
        self._next_read = i + 1
        if stream is not None:
            try:
                buf = stream.read_at(offset, span)
            except FileAccessError:
                if self._closed or not stream.closed:
                    raise
                buf = self._read_at_exactly(offset, span)  # its reader was let go (a release): this one alone
        elif span <= ONE_READ:
            buf = self._remote_read(offset, span)
        else:
            buf = self._read_at_exactly(offset, span)
        (length,) = LENGTH.unpack_from(buf)
        if OVERHEAD + length > span:
            return None
        end = HEADER_SIZE + length
        return length, buf[HEADER_SIZE:end], CRC.unpack_from(buf, end)[0]

    def _reading_in_order(self):
        with self._lock:
            if self._in_order is None and not self._closed:
                self._in_order = self.remote.stream()
                self._passes.add(self._in_order)
            return self._in_order
