"""A filter's features of a batch of Example records, decoded at once (:mod:`codec.example_columns`).

:func:`codec.query.filter_iter` hands the evaluator a :class:`ColumnView`
per record: the expression's features already cut out of the batch's
columns, as the (dtype, values) groups :class:`~codec.query_compiler.RecordView`
would find through protobuf. A record the columnar decoder leaves alone
(any layout but the canonical Example one) gets ``None`` and is decoded the
usual way, so every record is tested exactly as before.
"""
from __future__ import annotations

import numpy as np

from .example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, decode_examples
from .query_compiler import RecordView

__all__ = ["ColumnView", "batch_groups"]

_DTYPES = {KIND_INT64: "int64", KIND_FLOAT: "float", KIND_BYTES: "bytes"}


class ColumnView(RecordView):
    """A :class:`RecordView` whose features come from ``groups``: name -> [(dtype, values)] for each
    feature the record has (an empty list for a feature with no value list set)."""

    __slots__ = ("_groups",)

    def __init__(self, index: int, data: bytes, status: str, offset: int, size: int, groups: dict) -> None:
        super().__init__(index, data, status, offset, size, None)
        self._groups = groups

    def groups(self, name: str) -> list:
        return self._groups.get(name, [])

    def has(self, name: str) -> bool:
        return name in self._groups

    def length(self, name: str) -> int:
        g = self._groups.get(name)
        return len(g[0][1]) if g else 0


def batch_groups(records: list[bytes], names: frozenset[str]) -> list[dict | None]:
    """Per record, ``names``' groups as :class:`ColumnView` takes them; None for a record to decode itself."""
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    ends = np.cumsum(lengths)
    buf = b"".join(records)
    cols = decode_examples(buf, ends - lengths, ends)
    out: list[dict | None] = [None] * len(records)
    for r in np.flatnonzero(cols.ok).tolist():
        out[r] = {}
    wanted = [(k, name) for k, name in enumerate(cols.keys) if name in names]
    if not wanted:
        return out
    # Python lists once per batch: a record's values are then a list slice.
    values = {KIND_INT64: cols.int_values.tolist(), KIND_FLOAT: cols.float_values.tolist()}
    starts, stops = cols.bytes_starts.tolist(), cols.bytes_ends.tolist()
    for k, name in wanted:
        entries = np.flatnonzero(cols.entry_key == k)
        owners = cols.entry_record[entries].tolist()
        kinds = cols.entry_kind[entries].tolist()
        counts = cols.entry_count[entries].tolist()
        firsts = cols.entry_offset[entries].tolist()
        for r, kind, count, first in zip(owners, kinds, counts, firsts):
            last = first + count
            if kind in values:
                out[r][name] = [(_DTYPES[kind], values[kind][first:last])]
            elif kind == KIND_BYTES:
                out[r][name] = [("bytes", [buf[a:b] for a, b in zip(starts[first:last], stops[first:last])])]
            else:
                out[r][name] = []
    return out
