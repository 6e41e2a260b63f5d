"""One file of records, opened as what its first bytes say: an ArrayRecord (Riegeli) file or a TFRecord file,
whatever it is called (content sniffing, not names)."""
from __future__ import annotations

import os

from codec.errors import TFRecordError
from codec.format.riegeli import SIGNATURE, is_riegeli
from codec.index import cache as index_cache
from codec.sources.array_record_file import ArrayRecordFile
from codec.sources.byte_sources import RemoteBytes
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.opening import open_fd, read_upto
from codec.storage.remote_errors import RemoteFolderError

__all__ = ["RecordFile", "is_array_record", "open_record_file"]


def _is_url(path: str) -> bool:
    from codec.storage.remote import is_url  # (imported only for a path that may be a URL)

    return is_url(path)


def _cached_tfrecord(remote: RemoteBytes, use_cache: bool) -> bool:
    """Whether the index cache holds this version of the object: a TFRecord file (it keeps no other)."""
    if not use_cache or remote.size < index_cache.MIN_CACHED_BYTES:
        return False
    entry = index_cache.open_entry(remote.path, remote.size, remote.version)
    if entry is None:
        return False
    with entry:
        return True


def is_array_record(path: str) -> bool:
    """Whether the local file ``path`` begins with the Riegeli/records signature (False when unreadable:
    opening it as a TFRecord file then says why)."""
    try:
        fd, _ = open_fd(path)
    except TFRecordError:
        return False
    try:
        return is_riegeli(read_upto(fd, path, 0, len(SIGNATURE)))
    except TFRecordError:
        return False
    finally:
        os.close(fd)


RecordFile = TFRecordFile | ArrayRecordFile  # one file of records, whichever its bytes say


def open_record_file(path: str | os.PathLike, *, check_crc: bool = True, use_cache: bool = True,
                     info: dict | None = None, **options) -> RecordFile:
    """``path`` opened as what its first bytes are: an ArrayRecord (Riegeli) file or a TFRecord file.

    ``options`` go to :class:`TFRecordFile` (``fork_halves``). A URL's first bytes cost one small read.
    """
    path = os.fspath(path)
    if "://" in path and _is_url(path):
        try:
            remote = RemoteBytes(path, info)
        except RemoteFolderError:
            remote = None  # (a folder named without its trailing slash: the caller lists it)
        if remote is not None:
            # (through the object's block cache: a TFRecord file's own sniff reads the same block, fetched once;
            # an object the index cache knows is a TFRecord file, opened without a read)
            if not _cached_tfrecord(remote, use_cache) and is_riegeli(remote.remote.read(0, len(SIGNATURE))):
                return ArrayRecordFile(path, check_crc=check_crc, byte_source=remote)
            return TFRecordFile(path, check_crc=check_crc, use_cache=use_cache, info=info, remote=remote, **options)
    elif is_array_record(path):
        return ArrayRecordFile(path, check_crc=check_crc)
    return TFRecordFile(path, check_crc=check_crc, use_cache=use_cache, info=info, **options)
