"""Where a :class:`codec.sources.tfrecord_file.TFRecordFile`'s bytes come from: a local file or a remote object.

Both answer the same questions (``read_at``, ``size``, ``version``, a record's
frame in one read, holding the file open for a pass) so that the reader above
them never asks which it has. A local file is read with ``os.pread``, never
mapped: a mapped file that shrinks under the reader kills the process with
SIGBUS, while a short read is seen and raised as :class:`FileChangedError`.

A remote object's pass front to back (the index pass, a verification, reading
records in order) goes through one :class:`codec.storage.remote_io.Prefetcher`,
so it costs about one download; a record read at random is one request for its
bytes (small ones through the block cache). Closing or releasing stops its
passes and lets go of what they hold.
"""
from __future__ import annotations

import functools
import os
import threading
from contextlib import contextmanager
from typing import Any, BinaryIO, Callable, Iterator

from codec.errors import FileAccessError, FileChangedError, TFRecordError
from codec.format.framing import CRC, HEADER_SIZE, LENGTH, OVERHEAD
from codec.storage.file_identity import FileIdentity, open_same_file
from codec.storage.opening import Handle, describe_os_error, open_fd, pread, read_upto

ONE_READ = 64 << 10  # a record this close to the next one is read with a single read
REMOTE_ONE_READ = 4 << 20  # up to here, one request for a whole remote record (a round trip costs more)
CHECK_SIZE_FROM = 1 << 20  # a local read this large first checks that the file has not shrunk

Frame = tuple[int, bytes, int]  # (length, data, stored data CRC) of one record


def _framed(buf: bytes, span: int) -> Frame | None:
    """The record at the start of ``buf`` (its ``span`` bytes), or None when its length says it is longer."""
    (length,) = LENGTH.unpack_from(buf)
    if OVERHEAD + length > span:
        return None
    end = HEADER_SIZE + length
    return length, buf[HEADER_SIZE:end], CRC.unpack_from(buf, end)[0]


class _Held:
    """What both byte sources keep: passes that hold the file open (no release meanwhile), and whether it
    was closed. A subclass says how it opens (``acquire``) and what a release lets go of (``_drop``)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pins = 0
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pinned(self) -> bool:
        return bool(self._pins)

    def acquire(self) -> None:
        raise NotImplementedError

    def _drop(self) -> None:
        raise NotImplementedError

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Context: the file is open and will not be released until the block ends."""
        self.hold()
        try:
            yield
        finally:
            self.let_go()

    def hold(self) -> None:
        """Hold the file open until :meth:`let_go` (a pass, or a followed file)."""
        with self._lock:
            self.acquire()
            self._pins += 1

    def let_go(self) -> None:
        with self._lock:
            self._pins = max(0, self._pins - 1)

    def release(self) -> bool:
        """Let go of what is held between reads; False while a pass holds the file."""
        with self._lock:
            if self._pins:
                return False
            self._drop()
            return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._pins = 0
            self._drop()


class LocalBytes(_Held):
    """A local file's bytes by ``pread``; released (fd closed) and reopened only if it is the same version."""

    remote = None  # (a RemoteBytes' RemoteFile)
    is_remote = False

    def __init__(self, path: str, size: int, mtime_ns: int, identity: FileIdentity, fd: int | None) -> None:
        self.path = path
        self.size = size
        self.mtime_ns = mtime_ns
        self.identity = identity  # which file, which version
        super().__init__()
        self._handle: Handle | None = None if fd is None else Handle(fd)

    @classmethod
    def open(cls, path: str) -> tuple[LocalBytes, int]:
        """The file opened (refusing anything but a regular file), and its fd for sniffing."""
        fd, st = open_fd(path)
        return cls(path, st.st_size, st.st_mtime_ns, FileIdentity.of(st), fd), fd

    @property
    def version(self) -> str:
        """What keys the file's index in the cache."""
        return self.identity.stamp

    @property
    def is_open(self) -> bool:
        return self._handle is not None

    @property
    def fetched(self) -> int | None:
        return None

    # -- lifetime -------------------------------------------------------------
    def acquire(self) -> None:
        """Open the file if it was released; refuse if it changed since."""
        with self._lock:
            if self._handle is not None:
                return
            if self._closed:
                raise FileAccessError(f"{self.path} was closed")
            fd, st = open_fd(self.path)
            # (a followed file is pinned open: it is never released, so never reopened grown)
            if FileIdentity.of(st) != self.identity:
                os.close(fd)
                raise FileChangedError(f"{self.path} changed on disk since it was opened: open it again")
            self._handle = Handle(fd)

    def _fd(self) -> Handle:
        """The open fd (reopened if released); hold the result while reading through it."""
        h = self._handle
        if h is None:
            with self._lock:
                self.acquire()
                h = self._handle
        assert h is not None
        return h

    def _drop(self) -> None:
        self._handle = None  # the fd closes with the last read still using it

    def streaming(self):
        """Context: the calling thread reads the file front to back (nothing changes for a local file)."""
        return _NOTHING

    # -- reads ----------------------------------------------------------------
    def read_at(self, pos: int, n: int) -> bytes:
        """Exactly ``min(n, size - pos)`` bytes at ``pos``.

        Raises FileChangedError when the file is shorter than when it was
        opened, FileAccessError (one line) for any other read error.
        """
        want = min(n, self.size - pos)
        if want <= 0:
            return b""
        h = self._handle or self._fd()
        try:
            if want >= CHECK_SIZE_FROM and os.fstat(h.fd).st_size < self.size:
                self._changed(h.fd)
            data = pread(h.fd, want, pos)
            if len(data) < want:
                data = self._read_rest(h.fd, data, want, pos)
            return data
        except TFRecordError:
            raise
        except OSError as exc:
            raise FileAccessError(describe_os_error(self.path, exc)) from None

    def _read_rest(self, fd: int, data: bytes, want: int, pos: int) -> bytes:
        """After a short pread: the rest (one pread gives at most ~2 GiB), or FileChangedError."""
        parts = [data]
        got = len(data)
        while got < want:
            more = pread(fd, want - got, pos + got)
            if not more:
                self._changed(fd)
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def _changed(self, fd: int):
        try:
            now = f"{os.fstat(fd).st_size} bytes"
        except OSError:
            now = "unknown"
        raise FileChangedError(f"the file changed while reading: {self.path} (was {self.size} bytes, now {now})")

    def record(self, i: int, offset: int, span: int) -> Frame | None:
        """Record ``i`` at ``offset`` in one read of the ``span`` bytes up to the next record, or None to
        read it in parts (a record with much room, or one whose span holds more)."""
        if not OVERHEAD <= span <= ONE_READ:
            return None
        h = self._handle
        try:  # the common case, inline; anything unusual goes through read_at, which says what
            buf = pread(h.fd, span, offset) if h is not None else b""
        except OSError:
            buf = b""
        if len(buf) != span:
            buf = self.read_at(offset, span)
        (length,) = LENGTH.unpack_from(buf)  # (_framed, inline: this is every record's read)
        if OVERHEAD + length > span:
            return None
        end = HEADER_SIZE + length
        return length, buf[HEADER_SIZE:end], CRC.unpack_from(buf, end)[0]

    def head(self, n: int) -> bytes:
        """Up to ``n`` bytes from the start (a sniff window)."""
        h = self._fd()  # held while reading
        return read_upto(h.fd, self.path, 0, n)

    def stat(self) -> os.stat_result:
        return os.fstat(self._fd().fd)

    def grew(self, st: os.stat_result) -> None:
        """The file followed has grown to ``st``: the version read from now on."""
        with self._lock:
            self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
            self.identity = FileIdentity.of(st)  # a later reopen compares with it

    # -- what the compressed-stream readers open ----------------------------------
    def open_stream(self, streaming: bool = False) -> BinaryIO:
        """The file as a binary file object, checked to be the version opened."""
        return open_same_file(self.path, self.identity)

    def opener(self) -> Callable[[], BinaryIO] | None:
        """What the GZIP/ZLIB random readers open the file with; None: by its path."""
        return None

    def checked_opener(self) -> Callable[..., BinaryIO]:
        """The path checked to hold the file opened (a partial, not a method: no cycle through the reader)."""
        return functools.partial(open_same_file, self.path, self.identity)

    def stream_opener(self) -> Callable[[], BinaryIO] | None:
        """What a front-to-back reader (the zran build) opens the file with; None: by its path."""
        return None


class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


_NOTHING = _Nothing()


class RemoteBytes(_Held):
    """A remote object's bytes (:class:`codec.storage.remote.RemoteFile`), each read pinned to the version opened."""

    is_remote = True
    identity = None  # a local file's; the remote object's version is pinned by its reads

    def __init__(self, path: str, info: dict | None = None) -> None:
        """One metadata request (none with a listing's ``info``)."""
        from codec.storage.remote import RemoteFile

        self.path = path
        self.remote = RemoteFile.open(path, info=info)
        self.size: int = self.remote.size
        self.mtime_ns: Any = self.remote.token  # the version, for the index cache
        self.version: str = self.remote.token
        super().__init__()
        self._tls = threading.local()
        self._passes: set = set()  # prefetchers and stream files to close with the file
        self._in_order: Any = None  # the Prefetcher of records read in order, made on demand
        self._next_read = -1

    @property
    def is_open(self) -> bool:
        return not self._closed and (self.remote.holding or bool(self._passes))

    @property
    def fetched(self) -> int | None:
        return int(self.remote.bytes_fetched)

    # -- lifetime -------------------------------------------------------------
    def acquire(self) -> None:
        """Nothing held between reads (each read is pinned to the version opened); refuses once closed."""
        if self._closed:
            raise FileAccessError(f"{self.path} was closed")

    def _drop(self) -> None:
        """Stop the passes and let go of the cached blocks."""
        with self._lock:
            passes, self._passes = self._passes, set()
            self._in_order = None
        for thing in passes:
            thing.close()
        self.remote.drop_cache()

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

    @contextmanager
    def streaming(self) -> Iterator[None]:
        """Context: this thread's reads of the file come from chunks fetched ahead (a pass)."""
        stream = self._track(self.remote.stream())
        self._tls.stream = stream
        try:
            yield
        finally:
            self._tls.stream = None
            self._untrack(stream)
            stream.close()

    # -- reads ----------------------------------------------------------------
    def read_at(self, pos: int, n: int) -> bytes:
        """Exactly ``min(n, size - pos)`` bytes at ``pos`` (through this thread's pass, if any)."""
        want = min(n, self.size - pos)
        if want <= 0:
            return b""
        if self._closed:
            raise FileAccessError(f"{self.remote.shown} was closed")
        stream = getattr(self._tls, "stream", None)  # (threading.local: unset on other threads)
        return stream.read_at(pos, want) if stream is not None else self.remote.read(pos, want)

    def _read_exactly(self, pos: int, n: int) -> bytes:
        """These bytes in one request of their own (no block around them)."""
        if self._closed:
            raise FileAccessError(f"{self.remote.shown} was closed")
        return self.remote.read_at(pos, min(n, self.size - pos))

    def record(self, i: int, offset: int, span: int) -> Frame | None:
        """Record ``i`` in one read of its ``span``, or None to read it in parts (a record larger than
        REMOTE_ONE_READ, or one whose span holds more).

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
                buf = self._read_exactly(offset, span)  # its reader was let go (a release): this one alone
        elif span <= ONE_READ:
            buf = self.read_at(offset, span)
        else:
            buf = self._read_exactly(offset, span)
        return _framed(buf, span)

    def _reading_in_order(self):
        with self._lock:
            if self._in_order is None and not self._closed:
                self._in_order = self.remote.stream()
                self._passes.add(self._in_order)
            return self._in_order

    def head(self, n: int) -> bytes:
        return self.remote.read_at(0, n)

    # -- what the compressed-stream readers open ----------------------------------
    def open_stream(self, streaming: bool = False) -> BinaryIO:
        """The object as a binary file object, prefetching for a pass when ``streaming``."""
        return self._track(self.remote.file(streaming=True)) if streaming else self.remote.file()

    def opener(self) -> Callable[[], BinaryIO] | None:
        return self.remote.file

    def checked_opener(self) -> Callable[..., BinaryIO]:
        return self.remote.file

    def stream_opener(self) -> Callable[[], BinaryIO] | None:
        return lambda: self.open_stream(streaming=True)


ByteSource = LocalBytes | RemoteBytes
