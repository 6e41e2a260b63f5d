"""The table's sort: one key per record gathered by a pass (on the worker pool where it pays),
and the order kept as a compact permutation of the records.

A key is a column of the table: ``number`` and ``offset`` (file order, no
pass), ``status`` (from the index, no pass), ``size`` and ``kind`` (a pass over
the records) or a feature (a pass; its first value). Keys sort as numbers
(int64 and uint64 exactly, floats as float64, NaN after every number), then
bytes (byte by byte; see :data:`KEY_BYTES`), then the records without a value
(an empty list, a missing feature, damaged data) last, in both directions.
Ties keep record order in both directions: :meth:`SortOrder.reversed` flips
the runs of equal keys, not the records inside them.

The order is a numpy array of record numbers (uint32 while the records fit,
else uint64) and one bit per record marking where a run of equal keys starts:
never a Python object per record.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from codec.format.framing import RecordStatus
from codec.stats.pool import StatsRunner

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator, Sequence

    from codec.index.scan import IndexProgress

__all__ = ["KEY_BYTES", "SortKey", "SortKeys", "SortOrder", "SortRunner", "file_order", "order_from_keys",
           "sort_iter"]

KEY_BYTES = 64  # bytes values compare on their first KEY_BYTES bytes (longer ones agreeing there tie)
BATCH = 16384  # records decoded at once (Example columns), and between two progress reports
# A key's class, in sort order: numbers, then bytes, then no value.
INT, UINT, FLOAT, BYTES, EMPTY = 0, 1, 2, 3, 4
_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64
_STATUS_RANK = np.array([0, 0, 2, 3, 4, 5], dtype=np.uint64)  # unchecked and ok read alike ("ok")
PASS_KEYS = ("size", "kind")  # keys (besides features) that read every record


@dataclass(frozen=True)
class SortKey:
    """A table column to sort by: ``number``, ``offset``, ``size``, ``kind``, ``status``, or
    ``feature`` with its ``name``."""

    what: str
    name: str = ""

    @property
    def needs_pass(self) -> bool:
        """True when the records must be read (not number, offset or status)."""
        return self.what == "feature" or self.what in PASS_KEYS

    def __str__(self) -> str:
        return self.name if self.what == "feature" else self.what


@dataclass
class SortOrder:
    """Record numbers in sort order; ``starts`` (packed bits) marks where each run of equal keys
    begins among the first ``len(order) - empty``; the ``empty`` records without a key come last."""

    order: np.ndarray
    starts: np.ndarray
    empty: int = 0
    descending: bool = False

    def __len__(self) -> int:
        return int(self.order.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.order.nbytes + self.starts.nbytes)

    def reversed(self) -> SortOrder:
        """The other direction: runs of equal keys in reverse, each run and the keyless records
        still in record order (O(n), no pass)."""
        m = len(self) - self.empty
        if not m:  # no record has a key: file order both ways
            return SortOrder(self.order, self.starts, self.empty, not self.descending)
        starts = np.unpackbits(self.starts, count=m).astype(bool)
        first = np.flatnonzero(starts)
        end = np.append(first[1:], m)
        group = np.cumsum(starts) - 1
        position = np.arange(m, dtype=np.int64)
        target = (m - end)[group] + (position - first[group])
        order = np.empty_like(self.order)
        order[target] = self.order[:m]
        order[m:] = self.order[m:]
        new_starts = np.zeros(m, dtype=bool)
        new_starts[m - end] = True
        return SortOrder(order, np.packbits(new_starts), self.empty, not self.descending)


def _index_dtype(n: int):
    return np.uint32 if n < (1 << 32) else np.uint64


def file_order(n: int, descending: bool = False) -> SortOrder:
    """Records ``0 .. n-1`` in file order (or reversed): every key distinct."""
    order = np.arange(n, dtype=_index_dtype(n))
    return SortOrder(order[::-1].copy() if descending else order, np.packbits(np.ones(n, dtype=bool)), 0, descending)


@dataclass
class _Part:
    """One run of records' keys: a class per record, the value's bits (int64, uint64 or float64),
    and the bytes keys (their records' places in the run, their first KEY_BYTES bytes, full lengths)."""

    cls: np.ndarray
    bits: np.ndarray
    bytes_at: np.ndarray
    bytes_key: np.ndarray
    bytes_len: np.ndarray


@dataclass
class SortKeys:
    """The keys of some runs of records, as (first record, keys) parts: what a pass gathers."""

    parts: list[tuple[int, _Part]] = field(default_factory=list)

    def merge(self, other: SortKeys) -> None:
        self.parts.extend(other.parts)

    def order(self, n: int) -> SortOrder:
        """The ascending order of ``n`` records whose keys the parts hold (all of them, once each)."""
        parts = sorted(self.parts, key=lambda part: part[0])
        covered = sum(p.cls.shape[0] for _, p in parts)
        if covered != n or any(parts[k][0] + parts[k][1].cls.shape[0] != parts[k + 1][0]
                               for k in range(len(parts) - 1)):
            from codec.errors import TFRecordError

            raise TFRecordError(f"the sort's pass read {covered:,} of {n:,} records (did the file change?)")
        if not parts:
            return order_from_keys(np.zeros(0, np.uint8), np.zeros(0, np.uint64))
        cls = np.concatenate([p.cls for _, p in parts])
        bits = np.concatenate([p.bits for _, p in parts])
        at = np.concatenate([p.bytes_at.astype(np.int64) + base for base, p in parts])
        keys = [p.bytes_key for _, p in parts if p.bytes_key.shape[0]]
        key = np.concatenate(keys) if keys else np.zeros(0, dtype="S1")
        length = np.concatenate([p.bytes_len for _, p in parts])
        del parts, keys
        self.parts = []  # their memory goes before the sort's own
        return order_from_keys(cls, bits, at, key, length)


class _KeyBuilder:
    """Gathers the keys of a run of records, batch by batch, for one :class:`SortKey`."""

    def __init__(self, key: SortKey, payload) -> None:
        self.key, self.payload = key, payload
        self.cls: list[np.ndarray] = []
        self.bits: list[np.ndarray] = []
        self.bytes_at: list[int] = []
        self.bytes_key: list[bytes] = []
        self.bytes_len: list[int] = []
        self.count = 0

    def add(self, datas: Sequence[bytes], intact: np.ndarray, lengths: Sequence[int]) -> None:
        """One batch of consecutive records: their data, whether it is intact (bools), their lengths."""
        n = len(datas)
        cls = np.full(n, EMPTY, dtype=np.uint8)
        bits = np.zeros(n, dtype=np.uint64)
        what = self.key.what
        if what == "size":
            cls[:] = INT
            bits[:] = np.asarray(lengths, dtype=np.uint64)
        elif what == "kind":
            from codec.decode.decoder import RecordKind
            from codec.sources.record_pass import quick_decode

            rank = {kind: k for k, kind in enumerate(RecordKind)}  # the kinds in their declared order
            for r in np.flatnonzero(intact).tolist():
                cls[r], bits[r] = INT, rank[quick_decode(datas[r], self.payload).kind]
        else:
            self._features(datas, intact, cls, bits)
        self.cls.append(cls)
        self.bits.append(bits)
        self.count += n

    def _features(self, datas: Sequence[bytes], intact: np.ndarray, cls: np.ndarray, bits: np.ndarray) -> None:
        from codec.sources.record_pass import quick_decode

        rest = np.flatnonzero(intact).tolist()
        if self.payload is None:
            rest = self._example_columns(datas, rest, cls, bits)
        for r in rest:
            self._put(r, _first_value(quick_decode(datas[r], self.payload), self.key.name), cls, bits)

    def _example_columns(self, datas: Sequence[bytes], chosen: list[int], cls: np.ndarray,
                         bits: np.ndarray) -> list[int]:
        """Keys of the batch's canonical Examples among ``chosen`` from numpy columns; returns the
        records left to decode."""
        from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, decode_examples

        records = [datas[r] for r in chosen] if len(chosen) < len(datas) else datas
        lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
        ends = np.cumsum(lengths)
        buf = b"".join(records)
        cols = decode_examples(buf, ends - lengths, ends)
        rows = np.asarray(chosen, dtype=np.int64)
        if self.key.name in cols.keys:
            k = cols.keys.index(self.key.name)
            entries = np.flatnonzero((cols.entry_key == k) & (cols.entry_count > 0))
            owner = rows[cols.entry_record[entries]]
            kind, at = cols.entry_kind[entries], cols.entry_offset[entries]
            ints = kind == KIND_INT64
            cls[owner[ints]] = INT
            bits[owner[ints]] = cols.int_values[at[ints]].view(np.uint64)
            floats = kind == KIND_FLOAT
            cls[owner[floats]] = FLOAT
            bits[owner[floats]] = cols.float_values[at[floats]].astype(np.float64).view(np.uint64)
            strings = np.flatnonzero(kind == KIND_BYTES)
            starts, stops = cols.bytes_starts[at[strings]].tolist(), cols.bytes_ends[at[strings]].tolist()
            for r, a, b in zip(owner[strings].tolist(), starts, stops):
                cls[r] = BYTES
                self._put_bytes(r, buf[a:min(b, a + KEY_BYTES)], b - a)
        return rows[~cols.ok].tolist()

    def _put(self, r: int, value, cls: np.ndarray, bits: np.ndarray) -> None:
        if value is None:
            return
        if isinstance(value, str):
            value = value.encode("utf-8")
        if isinstance(value, bytes):
            cls[r] = BYTES
            self._put_bytes(r, value[:KEY_BYTES], len(value))
        elif isinstance(value, int) and _INT64_MIN <= value < -_INT64_MIN:
            cls[r], bits[r] = INT, value & (_UINT64_END - 1)
        elif isinstance(value, int) and 0 <= value < _UINT64_END:
            cls[r], bits[r] = UINT, value
        else:
            cls[r], bits[r] = FLOAT, np.float64(value).view(np.uint64)

    def _put_bytes(self, r: int, prefix: bytes, length: int) -> None:
        self.bytes_at.append(self.count + r)
        self.bytes_key.append(prefix)
        self.bytes_len.append(length)

    def finish(self) -> _Part:
        cls = np.concatenate(self.cls) if self.cls else np.zeros(0, np.uint8)
        bits = np.concatenate(self.bits) if self.bits else np.zeros(0, np.uint64)
        key = np.array(self.bytes_key, dtype=bytes) if self.bytes_key else np.zeros(0, dtype="S1")
        return _Part(cls, bits, np.asarray(self.bytes_at, dtype=np.int64), key,
                     np.asarray(self.bytes_len, dtype=np.int64))


def _first_value(decoded, name: str):
    """Feature ``name``'s first value in a decoded record (a feature list: its steps), None when it has none."""
    from codec.decode.decoder import feature_values, record_feature_lists, record_features

    features = record_features(decoded)
    if features is not None and name in features:
        values = feature_values(features[name])[1]
        return values[0] if values else None
    lists = record_feature_lists(decoded)
    if lists is not None and name in lists:
        return len(lists[name].feature)
    return None


def order_from_keys(cls: np.ndarray, bits: np.ndarray, bytes_at: np.ndarray | None = None,
                    bytes_key: np.ndarray | None = None, bytes_len: np.ndarray | None = None) -> SortOrder:
    """The ascending, stable order of records with these keys (see :class:`_Part`; ``bytes_at`` in record numbers)."""
    n = int(cls.shape[0])
    dtype = _index_dtype(n)
    pieces: list[np.ndarray] = []
    runs: list[np.ndarray] = []
    number = np.flatnonzero(cls < BYTES)
    if number.size == n:  # every record a number (the usual case): no copies of the keys
        del number
        by, keys = _number_order(cls, bits)
        pieces.append(by.astype(dtype))
        del by
        runs.append(_run_starts(*(key[pieces[0]] for key in keys)))
    elif number.size:
        by, keys = _number_order(cls[number], bits[number])
        pieces.append(number[by].astype(dtype))
        runs.append(_run_starts(*(key[by] for key in keys)))
        del by, keys
    if bytes_at is not None and bytes_at.size:
        assert bytes_key is not None and bytes_len is not None
        length = np.minimum(bytes_len, KEY_BYTES + 1)  # past KEY_BYTES: ties (a prefix still sorts first)
        by = np.lexsort((length, bytes_key))
        pieces.append(bytes_at[by].astype(dtype))
        runs.append(_run_starts(bytes_key[by], length[by]))
    empty = np.flatnonzero(cls == EMPTY).astype(dtype)
    order = pieces[0] if len(pieces) == 1 and not empty.size else np.concatenate(pieces + [empty])
    starts = np.concatenate(runs) if runs else np.zeros(0, dtype=bool)
    return SortOrder(order, np.packbits(starts), int(empty.size))


def _number_keys(cls: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sort keys of numbers, most significant first: the value as float64, then exactly (the sign, then
    the integer's 64 bits). A float ties with an int only when it is a whole number (every float past
    2^53 is), so whole floats in the 64-bit range carry their exact integer too: 2^53 + 4.0 sorts after
    the int 2^53 + 3, and 1.0 ties with 1."""
    floats = cls == FLOAT
    signed = cls == INT
    approx = np.where(signed, bits.view(np.int64).astype(np.float64), bits.astype(np.float64))
    approx[floats] = bits[floats].view(np.float64)
    negative = signed & (bits.view(np.int64) < 0)
    exact = np.where(floats, np.uint64(0), bits)
    with np.errstate(invalid="ignore"):
        whole = floats & np.isfinite(approx) & (approx == np.floor(approx)) & (approx >= -2.0**63) & (approx < 2.0**64)
    below = whole & (approx < 0)
    exact[below] = approx[below].astype(np.int64).view(np.uint64)
    low = whole & (approx >= 0) & (approx < 2.0**63)
    exact[low] = approx[low].astype(np.int64).view(np.uint64)
    high_floats = whole & (approx >= 2.0**63)
    exact[high_floats] = approx[high_floats].astype(np.uint64)
    high = np.where(negative | below, 0, 1).astype(np.uint8)  # negatives first
    return approx, high, exact


def _number_order(cls: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Stable order of numbers and the keys it sorted by: int64 alone (the usual case), or
    floats alone, by one argsort; a mix by float64 value, then exactly."""
    if bool(np.all(cls == INT)):
        values = bits.view(np.int64)
        return np.argsort(values, kind="stable"), (values,)
    if bool(np.all(cls == FLOAT)):
        values = bits.view(np.float64)
        return np.argsort(values, kind="stable"), (values,)
    keys = _number_keys(cls, bits)
    return np.lexsort(keys[::-1]), keys


def _run_starts(*keys: np.ndarray) -> np.ndarray:
    """True where a sorted run of equal keys begins."""
    n = keys[0].shape[0]
    starts = np.ones(n, dtype=bool)
    if n > 1:
        same = np.ones(n - 1, dtype=bool)
        for key in keys:
            equal = key[1:] == key[:-1]
            if key.dtype.kind == "f":  # NaNs tie with each other (they keep file order in both directions)
                equal |= np.isnan(key[1:]) & np.isnan(key[:-1])
            same &= equal
        starts[1:] = ~same
    return starts


class SortRunner(StatsRunner):
    """A worker's key pass: the payload decided once (as for statistics), then one task at a time."""

    def __init__(self, named: list[str], key: SortKey, **options) -> None:
        super().__init__(named, **options)
        self.key = key

    def _new_result(self) -> SortKeys:
        return SortKeys()

    # result is what _new_result made: a SortKeys here, where StatsRunner's is a FileStats.
    def _pass(self, f, indices: range, base: int, result: SortKeys):  # type: ignore[override]
        from codec.sources.record_pass import iter_records

        builder = _KeyBuilder(self.key, self.payload)
        for item in _batched_keys(iter_records(f, indices, every=BATCH), builder):
            yield item.records
        result.parts.append((base + indices.start, builder.finish()))


def _batched_keys(items, builder: _KeyBuilder) -> Iterator[IndexProgress]:
    """Feed ``items`` (:func:`codec.sources.record_pass.iter_records`) to ``builder`` in batches, yielding progress."""
    from codec.index.scan import IndexProgress

    batch: list[tuple] = []
    append = batch.append
    for item in items:
        if item.__class__ is tuple:  # (a record; the rest is progress)
            append(item)
            if len(batch) < BATCH:
                continue
            _add(builder, batch)
        elif isinstance(item, IndexProgress):
            _add(builder, batch)
            yield item
    _add(builder, batch)


_INTACT_BELOW = min(s for s in RecordStatus if not s.data_intact)  # statuses below it: data intact


def _add(builder: _KeyBuilder, batch: list[tuple]) -> None:
    """Hand ``batch`` (iter_records's tuples) to ``builder`` and empty it."""
    if not batch:
        return
    datas = [item[1] for item in batch]
    intact = np.fromiter([item[2] for item in batch], dtype=np.uint8, count=len(batch)) < _INTACT_BELOW
    builder.add(datas, intact, [item[4] for item in batch])
    batch.clear()


def sort_iter(source, key: SortKey, into: list[SortOrder], workers: int | None = None,
              run=None) -> Iterator[IndexProgress]:
    """Append to ``into`` the ascending :class:`SortOrder` of every record of ``source`` (any
    :class:`~codec.sources.protocol.RecordSource`) by ``key``, yielding progress. The records are
    read on the pool where :func:`codec.stats.pool.plan_stats` plans tasks and the workers decode
    records as ``source`` does; else here (``run``: a stand-in for codec.parallel.pool.run_tasks).
    Closing the generator stops the workers."""
    from codec.index.scan import IndexProgress
    from codec.sources.record_pass import iter_records
    from codec.stats.pool import plan_stats, pool_decodes_alike, pool_merge_iter

    n = len(source)
    if key.what in ("number", "offset"):
        into.append(file_order(n))
    elif key.what == "status":
        rank = _STATUS_RANK[np.minimum(source.index.statuses()[:n], len(_STATUS_RANK) - 1)]
        into.append(order_from_keys(np.zeros(n, dtype=np.uint8), rank))
    else:
        tasks = plan_stats(source, workers) if pool_decodes_alike(source) else []
        keys = SortKeys()
        if tasks:
            setup = {"named": [], "key": key, "check_crc": source.check_crc}
            yield from pool_merge_iter(source, keys, SortRunner, tasks, setup, workers, run)
        else:
            builder = _KeyBuilder(key, source.payload)
            yield from (p for p in _batched_keys(iter_records(source, every=BATCH), builder) if not p.done)
            keys.parts.append((0, builder.finish()))
        into.append(keys.order(n))
    yield IndexProgress(n, n, n, len(source.problems), True)
