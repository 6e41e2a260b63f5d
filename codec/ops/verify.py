"""Checking a file as ``verify`` does: every record's data CRC now, and its records counted by
status. The command line and its Beam tasks (:mod:`codec.beam.verify`) both use these; each imports
what it uses when called (``verify`` proves an intact file without numpy)."""
from __future__ import annotations

from collections import Counter

__all__ = ["status_counts", "verify_data"]


def status_counts(f) -> Counter:
    """Records per status label (ok, length_crc, ...) of a file or shard set, counted by numpy."""
    import numpy as np

    from codec.format.framing import RecordStatus

    if hasattr(f, "shards"):
        indexes = [s.file.index for s in f.shards if s.file is not None and s.error is None]
    else:
        indexes = [f.index]
    counts = np.zeros(256, dtype=np.int64)
    for index in indexes:
        for chunk in index.filled_chunks()[1]:
            counts += np.bincount(chunk, minlength=256)
    labels: Counter = Counter()
    for value in np.flatnonzero(counts).tolist():
        labels[RecordStatus(value).label] += int(counts[value])
    return labels


def verify_data(f) -> None:
    """Check every record's data CRC now, whatever the cache says: bit rot and bad copies keep a
    file's size and mtime, so a cached "verified" says nothing about the bytes as they are today.

    A plain file's cached index still spares it the header walk (its records are then checked
    in batches); a compressed file is inflated anyway, so it is indexed and checked in one pass.
    """
    from codec.format.framing import Compression
    from codec.index import cache as index_cache

    if f.use_cache and index_cache.has_entry(f.path, f.file_size, f.version, f.compression):
        if f.compression is Compression.NONE:
            f.build_index()
        else:
            index_cache.invalidate(f.path)
    f.verify()
