"""A filter's features of a batch of Example records, decoded at once (:mod:`codec.decode.example_columns`).

:func:`codec.query.filter.filter_iter` hands the evaluator a :class:`ColumnView`
per record. It answers from :class:`BatchFeatures`: for each feature the
expression names, the kind, first value and value count of every record of
the batch (numpy, one step per feature and batch), the values cut out only
when the expression asks for them, as the (dtype, values) groups
:class:`~codec.query.compiler.RecordView` would find through protobuf. A
record the columnar decoder leaves alone (any layout but the canonical
Example one) is decoded the usual way, so every record is tested exactly as
before.
"""
from __future__ import annotations

import numpy as np

from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, KIND_NONE, decode_examples
from codec.query.compiler import RecordView

__all__ = ["BatchFeatures", "ColumnView"]

_ABSENT = -1
_DTYPES = {KIND_INT64: "int64", KIND_FLOAT: "float", KIND_BYTES: "bytes"}


class BatchFeatures:
    """The named features of a batch of records; ``ok[r]`` says record ``r`` is answered here."""

    def __init__(self, records: list[bytes], names: frozenset[str]) -> None:
        lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
        ends = np.cumsum(lengths)
        self.buf = b"".join(records)
        cols = decode_examples(self.buf, ends - lengths, ends)
        self.ok = cols.ok.tolist()
        n = len(records)
        # name -> (kind, first value, value count) per record, as lists: kind _ABSENT where it lacks the feature
        self.tables: dict[str, tuple[list, list, list]] = {}
        for k, name in enumerate(cols.keys):
            if name not in names:
                continue
            entries = np.flatnonzero(cols.entry_key == k)
            owners = cols.entry_record[entries]
            kind = np.full(n, _ABSENT, dtype=np.int64)
            first = np.zeros(n, dtype=np.int64)
            count = np.zeros(n, dtype=np.int64)
            kind[owners] = cols.entry_kind[entries]
            first[owners] = cols.entry_offset[entries]
            count[owners] = cols.entry_count[entries]
            self.tables[name] = (kind.tolist(), first.tolist(), count.tolist())
        self._cols = cols
        self._values: dict[int, list] = {}

    def _of_kind(self, kind: int) -> list:
        """A kind's values of the whole batch as a Python list (made on first use); bytes values as spans."""
        values = self._values.get(kind)
        if values is None:
            cols = self._cols
            if kind == KIND_INT64:
                values = cols.int_values.tolist()
            elif kind == KIND_FLOAT:
                values = cols.float_values.tolist()
            else:  # spans: a record's bytes values are cut out when asked for, not every image of the batch
                values = list(zip(cols.bytes_starts.tolist(), cols.bytes_ends.tolist()))
            self._values[kind] = values
        return values

    def groups(self, r: int, name: str) -> list:
        table = self.tables.get(name)
        if table is None:
            return []
        kind = table[0][r]
        if kind == _ABSENT or kind == KIND_NONE:
            return []
        first = table[1][r]
        values = self._of_kind(kind)[first:first + table[2][r]]
        if kind == KIND_BYTES:
            buf = self.buf
            values = [buf[a:b] for a, b in values]
        return [(_DTYPES[kind], values)]

    def has(self, r: int, name: str) -> bool:
        table = self.tables.get(name)
        return table is not None and table[0][r] != _ABSENT

    def length(self, r: int, name: str) -> int:
        table = self.tables.get(name)
        return 0 if table is None or table[0][r] == _ABSENT else table[2][r]


class ColumnView(RecordView):
    """A :class:`RecordView` of record ``r`` of a :class:`BatchFeatures`."""

    __slots__ = ("_batch", "_r")

    def __init__(self, index: int, data: bytes, status: str, offset: int, size: int,
                 batch: BatchFeatures, r: int) -> None:
        self.index = index
        self.data = data
        self.status = status
        self.offset = offset
        self.size = size
        self._decoded = self._features = self._lists = self._payload = None
        self._batch = batch
        self._r = r

    def groups(self, name: str) -> list:
        return self._batch.groups(self._r, name)

    def has(self, name: str) -> bool:
        return self._batch.has(self._r, name)

    def length(self, name: str) -> int:
        return self._batch.length(self._r, name)
