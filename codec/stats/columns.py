"""The statistics of a batch of Example records from numpy columns (:mod:`codec.decode.example_columns`).

:class:`codec.stats.file_stats.FileStats` gathers records into batches; each batch is
decoded at once, and every feature's values are handed to its
:class:`~codec.stats.file_stats.FeatureStats` as arrays, one call per feature and batch
instead of a few protobuf calls per feature and record. Records the
columnar decoder leaves alone (any layout but the canonical one, and every
record that is not an Example) go through ``FileStats.add_one``. The
statistics are a function of the values alone, whatever their order, so the
report is the one the record-at-a-time path gives, byte for byte.
"""
from __future__ import annotations

import numpy as np

from codec.decode.decoder import RecordKind
from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, KIND_NONE, decode_examples
from codec.stats.audio_stats import audio_candidates

__all__ = ["add_batch"]


def add_batch(stats, records: list[bytes]) -> None:
    """Add ``records`` (the data of intact records) to ``stats``, a :class:`codec.stats.file_stats.FileStats`."""
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    ends = np.cumsum(lengths)
    buf = b"".join(records)
    cols = decode_examples(buf, ends - lengths, ends)
    for r in np.flatnonzero(~cols.ok).tolist():
        stats.add_one(records[r])
    decoded = int(cols.ok.sum())
    if not decoded:
        return
    stats.kinds[RecordKind.EXAMPLE.value] += decoded
    kinds, counts, keys = cols.entry_kind, cols.entry_count, cols.entry_key
    # Entries grouped by feature (stable: each feature's entries stay in record order).
    order = np.argsort(keys, kind="stable")
    edges = np.searchsorted(keys[order], np.arange(len(cols.keys) + 1))
    values = {KIND_INT64: cols.int_values, KIND_FLOAT: cols.float_values}
    for k, name in enumerate(cols.keys):
        mine = order[edges[k]:edges[k + 1]]
        if not mine.size:
            continue
        acc = stats.feature(name)
        acc.present += int(mine.size)
        kind, count = kinds[mine], counts[mine]
        per_kind = np.bincount(kind, minlength=4)
        acc.n_none += int(per_kind[KIND_NONE])
        acc.n_bytes += int(per_kind[KIND_BYTES])
        acc.n_float += int(per_kind[KIND_FLOAT])
        acc.n_int += int(per_kind[KIND_INT64])
        acc.per_value_list.extend(count)
        for code, pending in ((KIND_INT64, acc.ints), (KIND_FLOAT, acc.floats)):
            if per_kind[code]:
                pending.extend(_gather(values[code], mine[kind == code], cols))
        if per_kind[KIND_BYTES]:
            spans = _spans(mine[kind == KIND_BYTES], cols)
            starts, ends = cols.bytes_starts[spans].tolist(), cols.bytes_ends[spans].tolist()
            acc.bytes.add([buf[a:b] for a, b in zip(starts, ends)])
    for r in audio_candidates(cols, buf).tolist():  # (decoded again: only records that may hold audio)
        if cols.ok[r]:
            stats.add_audio(records[r])


def _spans(entries: np.ndarray, cols) -> np.ndarray:
    """Positions, in their kind's value array, of the values of ``entries`` (in entry order)."""
    count = cols.entry_count[entries]
    before = np.cumsum(count) - count  # values of the earlier entries
    return np.repeat(cols.entry_offset[entries] - before, count) + np.arange(int(count.sum()))


def _gather(values: np.ndarray, entries: np.ndarray, cols) -> np.ndarray:
    return values[_spans(entries, cols)]
