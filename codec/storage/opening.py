"""Opening a TFRecord file: refusing what is not a regular file, sniffing the compression, and
the file handle that reads share (closed when the last read using it is done).

Anything but a regular file (a FIFO, a device, a socket) is refused before it
is opened for reading, so that nothing blocks on it. A file whose start is
damaged is searched for a record before it is called "not a TFRecord file".
"""
from __future__ import annotations

import os
import stat
import threading
import zlib
from contextlib import contextmanager

from codec.errors import FileAccessError, NotTFRecordError, TFRecordError
from codec.format.crc import masked_crc
from codec.format.framing import CRC, HEADER, HEADER_SIZE, LENGTH, OVERHEAD, Compression
from codec.format.header_search import candidate_headers
from codec.storage.inflate import GZIP_MAGIC, looks_like_zlib, next_gzip_member

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable

SNIFF_WINDOW = 4 << 20  # how far a file with a damaged start is searched for a record
SNIFF_FIRST = 64 << 10  # what is read first (enough for a sound file)
INFLATE_PROBE = 4096  # compressed bytes a GZIP or ZLIB start must inflate without error to be taken for one

_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))

if hasattr(os, "pread"):
    pread = os.pread
else:  # Windows: no pread; a seek and a read under one lock
    _seek_lock = threading.Lock()

    def pread(fd: int, n: int, pos: int) -> bytes:
        with _seek_lock:
            os.lseek(fd, pos, os.SEEK_SET)
            return os.read(fd, n)



def describe_os_error(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"cannot read {path}: {reason}"


@contextmanager
def io_errors(path: str):
    """Turn an OSError from reading ``path`` into a one-line FileAccessError."""
    try:
        yield
    except TFRecordError:
        raise
    except OSError as exc:
        raise FileAccessError(describe_os_error(path, exc)) from None


def _refusal(path: str, mode: int) -> str | None:
    """Why a path with this ``st_mode`` cannot be read as a TFRecord file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"is a directory, not a TFRecord file: {path}"
    kind = next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")
    return f"not a regular file: {path} ({kind})"


def open_fd(path: str) -> tuple[int, os.stat_result]:
    """A read-only fd on the regular file ``path`` and its fstat; a one-line error otherwise.

    The path is checked before it is opened (opening a FIFO for reading
    blocks until a writer comes, a device may act on being opened), and the
    fd is checked again: the path may have been replaced in between.
    O_NONBLOCK makes the second check safe; it changes nothing for a
    regular file.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileAccessError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileAccessError(describe_os_error(path, exc)) from None
    reason = _refusal(path, st.st_mode)
    if reason:
        raise FileAccessError(reason)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileAccessError(f"no such file: {path}") from None
    except OSError as exc:
        raise FileAccessError(describe_os_error(path, exc)) from None
    try:
        st = os.fstat(fd)
        reason = _refusal(path, st.st_mode)
    except OSError as exc:
        os.close(fd)
        raise FileAccessError(describe_os_error(path, exc)) from None
    if reason:
        os.close(fd)
        raise FileAccessError(reason)
    return fd, st


def open_file(path: str):
    """:func:`open_fd` as a binary file object (for the GZIP and ZLIB readers)."""
    fd, _ = open_fd(path)
    return os.fdopen(fd, "rb")


def read_upto(fd: int, path: str, pos: int, n: int) -> bytes:
    """Up to ``n`` bytes at ``pos``, fewer only at the end of the file (whatever its stat says)."""
    parts = []
    got = 0
    with io_errors(path):
        while got < n:
            more = pread(fd, n - got, pos + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
    return b"".join(parts)


def sniff_compression(path: str | os.PathLike) -> Compression:
    """Decide plain, GZIP or ZLIB from the content; raise a one-line error otherwise.

    The first 64 KiB answer for any sound file; only a file whose start is
    damaged is read further (up to SNIFF_WINDOW) in search of a record.
    """
    path = os.fspath(path)
    fd, _ = open_fd(path)
    try:
        return sniff(fd, path)
    finally:
        os.close(fd)


def sniff(source: int | Callable[[int, int], bytes], path: str) -> Compression:
    """The compression of the file on ``source``: an fd, or ``read(pos, n)`` (up to n bytes)."""
    if isinstance(source, int):
        fd = source
        read = lambda pos, n: read_upto(fd, path, pos, n)  # noqa: E731
    else:
        read = source
    head = read(0, SNIFF_FIRST)
    kind, certain = _sniff_start(head, path)
    if certain and kind is not None:  # certain always comes with a kind
        return kind
    if len(head) == SNIFF_FIRST:
        head += read(SNIFF_FIRST, SNIFF_WINDOW - SNIFF_FIRST)
    if kind is not None:
        # A GZIP or ZLIB start whose stream breaks at once. A plain file whose first header is
        # damaged can begin with those bytes: a first record whose data CRC holds makes it plain.
        # Records found further on do not (a compressed file holds its records verbatim in
        # stored blocks): the index pass reads it as plain if the stream gives no record.
        return Compression.NONE if _record_at(head, 0, check_length=False) else kind
    if len(head) < HEADER_SIZE:
        return Compression.NONE  # shorter than a header: TensorFlow's "truncated record at 0"
    if _record_at(head, 0, check_length=False):  # (again: its data may reach past the first 64 KiB)
        return Compression.NONE
    record = next((int(c) for c in candidate_headers(head) if _record_at(head, int(c))), None)
    # Damage at the start, then a GZIP member or a record, whichever comes first: a GZIP file holds
    # records verbatim in its stored blocks, a plain file's records can hold GZIP data.
    member = next_gzip_member(lambda pos, n: head[pos:pos + n], 1, len(head) if record is None else record)
    if member is not None and _members_from(head, member, record):
        return Compression.GZIP
    if record is not None:
        return Compression.NONE  # damaged at the start, but records follow
    raise NotTFRecordError(f"not a TFRecord file: {path} (no valid record header, GZIP or ZLIB stream found)")


def _sniff_start(head: bytes, path: str = "") -> tuple[Compression | None, bool]:
    """What the file's first bytes make it, and whether for certain.

    (kind, False) with a kind: a valid GZIP or ZLIB header (GZIP: magic and
    method; ZLIB: the two bytes with their check bits) whose stream breaks
    within its first INFLATE_PROBE bytes and does not begin with a record
    header, wherever it breaks (ZLIB: when it gives no record header, only
    where ``path`` is named like ZLIB); (None, False): not enough to say.
    """
    if not head:
        return Compression.NONE, True
    if len(head) >= HEADER_SIZE:
        n, lcrc = HEADER.unpack_from(head)
        if masked_crc(head[:8]) == lcrc or _record_at(head, 0, check_length=False):
            return Compression.NONE, True
    if head[:3] == GZIP_MAGIC + b"\x08":
        out, broke = _inflate_probe(head, 31)
        return Compression.GZIP, not broke or _starts_with_header(out)
    if looks_like_zlib(head):
        out, broke = _inflate_probe(head, 15)
        if not broke or _starts_with_header(out):
            return Compression.ZLIB, True
        # Two bytes pass zlib's header check by chance in about one file of 1,000. A stream that
        # breaks before it gives a record header is taken for ZLIB only when the name says so
        # (.zz/.zlib); any other file is then "not a TFRecord file", as it was before it broke.
        if Compression.for_name(path) is Compression.ZLIB:
            return Compression.ZLIB, False
    return None, False


def _members_from(head: bytes, member: int, record: int | None) -> bool:
    """Is the GZIP member at ``member`` where a GZIP file's members go on, not GZIP data inside a
    plain record found at ``record``? Unless it ends soundly before that record with no member
    right after it (a record's CRC and the next header follow a record's data)."""
    if record is None:
        return True
    d = zlib.decompressobj(31)
    data = head[member:record]
    try:
        while data and not d.eof:
            d.decompress(data, 1 << 20)
            data = d.unconsumed_tail
    except zlib.error:
        return True  # a broken member: the index pass falls back to plain if the stream gives no record
    if not d.eof:
        return True
    end = record - len(d.unused_data)
    return head[end:end + 3] == GZIP_MAGIC + b"\x08"


def _starts_with_header(stream: bytes) -> bool:
    """Does an inflated stream begin with a record header whose length CRC holds?

    A damaged GZIP/ZLIB file still gives its first records before the break;
    garbage inflated from a plain file that only looks compressed does not.
    """
    return len(stream) >= HEADER_SIZE and masked_crc(stream[:8]) == HEADER.unpack_from(stream)[1]


def _inflate_probe(head: bytes, wbits: int) -> tuple[bytes, bool]:
    """(bytes inflated, broke): inflate the first INFLATE_PROBE bytes of ``head`` in small steps."""
    d = zlib.decompressobj(wbits)
    out = bytearray()
    data = head[:INFLATE_PROBE]
    for k in range(0, len(data), 256):
        try:
            out += d.decompress(data[k:k + 256], 1 << 20)
        except zlib.error:
            return _inflate_until_error(data[:k + 256], wbits), True
        if d.eof or len(out) >= 1 << 20:
            break
    return bytes(out), False


def _inflate_until_error(data: bytes, wbits: int) -> bytes:
    """Everything ``data`` inflates to before its stream breaks (a failing call gives nothing back, so
    the bytes go in one at a time: a probe's few KiB at most, and only for a broken start)."""
    d = zlib.decompressobj(wbits)
    out = bytearray()
    for k in range(len(data)):
        try:
            out += d.decompress(data[k:k + 1])
        except zlib.error:
            break
    return bytes(out)


def _record_at(head: bytes, pos: int, check_length: bool = True) -> bool:
    """Does a plausible record start at ``pos``? Data CRC checked where it fits."""
    if pos + HEADER_SIZE > len(head):
        return False
    (n,) = LENGTH.unpack_from(head, pos)
    end = pos + OVERHEAD + n
    if end > len(head):
        return check_length  # its length CRC held (the caller found it); can't see the data
    (stored,) = CRC.unpack_from(head, end - 4)
    return masked_crc(head[pos + HEADER_SIZE:end - 4]) == stored


def plain_records(head: bytes) -> bool:
    """Does ``head`` hold a whole record whose data CRC holds (record 0 by it alone, any other
    with its length CRC too)? Chance cannot do that: it makes a plain file for certain."""
    return _record_at(head, 0, check_length=False) or \
        any(_record_at(head, int(c), check_length=False) for c in candidate_headers(head))


class Handle:
    """An open fd, closed when the last reference to it goes.

    :meth:`TFRecordFile.release` drops the file's reference; a read in flight
    on another thread holds its own until it returns, so the fd number is
    never closed (and reused by another open) under a read.
    """

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass
