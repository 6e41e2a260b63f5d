"""A :class:`~codec.sources.tfrecord_file.TFRecordFile` opened already indexed: a small plain local
file in one read (:mod:`codec.index.small_files`), any other by its index pass. For passes over many
files (a shard set's shards, the statistics pool's tasks)."""
from __future__ import annotations

from codec.index import cache as index_cache
from codec.index.small_files import SMALL_BYTES, walk_small_file
from codec.sources.array_record_file import ArrayRecordFile
from codec.sources.record_file import open_record_file
from codec.sources.tfrecord_file import TFRecordFile

__all__ = ["indexed_file", "walked_file"]


def walked_file(path: str, *, check_crc: bool = True, use_cache: bool = True,
                verify: bool = False) -> TFRecordFile | None:
    """``path`` indexed in one read (:mod:`codec.index.small_files`) when it is a small, sound, plain
    local file the index cache would not keep; None otherwise (open it as usual)."""
    if "://" in path:
        from codec.storage.remote import is_url  # (its imports only for a URL)

        if is_url(path):
            return None
    limit = min(SMALL_BYTES, index_cache.MIN_CACHED_BYTES - 1) if use_cache else SMALL_BYTES
    walked = walk_small_file(path, verify, limit)
    return None if walked is None else TFRecordFile(path, check_crc=check_crc, walked=walked)


def indexed_file(path: str, *, check_crc: bool = True, use_cache: bool = True, info: dict | None = None,
                 verify: bool = False) -> TFRecordFile | ArrayRecordFile:
    """``path`` opened and indexed: a small plain file in one read, any other as :class:`TFRecordFile` does
    (or :class:`ArrayRecordFile`, when its first bytes say it is one)."""
    walked = walked_file(path, check_crc=check_crc, use_cache=use_cache, verify=verify) if info is None else None
    if walked is not None:
        return walked
    f = open_record_file(path, check_crc=check_crc, use_cache=use_cache, info=info)
    try:
        return f.build_index(verify=verify)
    except BaseException:
        f.close()
        raise
