"""Embeddings: which features are one, and their projection to 2-D (PCA, numpy only).

The rule: a float feature with the same number of values, :data:`MIN_DIMS` or
more, in every record that has it. It is read off the inferred spec's shapes
(:mod:`codec.stats.schema`), so no second pass decides it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np
from google_crc32c import value as crc32c

from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, decode_examples
from codec.decode.example_proto import Example
from codec.format.crc import MASK_DELTA
from codec.format.framing import HEADER_SIZE, Compression, RecordStatus
from codec.index.record_index import CHUNK_BITS
from codec.index.scan import IndexProgress
from codec.sources.record_pass import iter_records
from codec.sources.tfrecord_file import TFRecordFile
from codec.stats.pool import StatsRunner

__all__ = ["MIN_DIMS", "SAMPLE", "Projection", "ProjectionRunner", "embedding_keys", "is_embedding", "project", "project_iter",
           "sample_records"]

MIN_DIMS = 8  # values per record, at least: fewer are a box, a colour, a few scores
SAMPLE = 100_000  # records projected, at most
BATCH = 8192  # records decoded at once by the columnar decoder
PROBE = 256  # records read first to choose the label feature and the length for every worker
_FLOAT = 1  # a shape's dtype count slot for float lists (codec.stats.schema._Shape.dtypes)
# Reading a sample of a plain file: bytes between two sampled records read through rather than skipped
# (one read instead of two), and the most one read takes.
MAX_GAP = 1 << 14
RUN_BYTES = 1 << 20
_FRAMING = HEADER_SIZE + 4  # header and data CRC around each record's data


def is_embedding(shape) -> bool:
    """Is a feature whose shape is ``shape`` (a :class:`codec.stats.schema._Shape`) an embedding?"""
    return (shape.present > 0 and shape.dtypes[_FLOAT] == shape.present and shape.vmin is not None
            and shape.vmin == shape.vmax and shape.vmin >= MIN_DIMS)


def embedding_keys(schema) -> dict[str, int]:
    """The embedding features of an inferred spec (:class:`codec.stats.schema.FileSchema`) and their lengths."""
    return {name: int(shape.vmin) for name, shape in sorted(schema.shapes.items()) if is_embedding(shape)}


def sample_records(n: int, sample: int = SAMPLE, seed: int = 0) -> Sequence[int]:
    """The record numbers a projection reads: all ``n``, or a seeded sample of ``sample`` of them in order."""
    if n <= sample:
        return range(n)
    return np.sort(np.random.default_rng(seed).choice(n, sample, replace=False)).tolist()


@dataclass
class Projection:
    """The 2-D PCA of an embedding: ``points[k]`` is record ``records[k]``, coloured by ``labels[k]``
    (an index into ``label_names``, -1 where the record has no label)."""

    key: str
    records: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.float32))
    explained: tuple[float, float] = (0.0, 0.0)  # explained variance ratio of the two components
    label_key: str | None = None
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    label_names: list[str] = field(default_factory=list)
    skipped: int = 0  # records read that lack the key or hold another length
    sampled: bool = False  # a sample of the records, not all


class _Gather:
    """Vectors and labels of a pass's records, a batch at a time."""

    def __init__(self, key: str, label_names=None, label_key: str | None = None, dims: int | None = None) -> None:
        self.key, self.names = key, label_names
        self.dims = dims  # the vectors' length: the first one's, unless given
        self.label_key = label_key  # chosen from the first batch's keys, unless given
        self.records: list[np.ndarray] = []
        self.vectors: list[np.ndarray] = []
        self.labels: list[list] = []
        self.skipped = 0
        self.pending: list[tuple[int, bytes]] = []

    def add(self, index: int, data: bytes) -> None:
        self.pending.append((index, data))
        if len(self.pending) >= BATCH:
            self.flush()

    def merge(self, other: _Gather) -> None:
        """Fold in what a worker gathered (its records are put in order at the end)."""
        self.records += other.records
        self.vectors += other.vectors
        self.labels += other.labels
        self.skipped += other.skipped

    def flush(self) -> None:
        if not self.pending:
            return
        numbers = np.fromiter((i for i, _ in self.pending), dtype=np.int64, count=len(self.pending))
        records = [d for _, d in self.pending]
        self.pending = []
        lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
        ends = np.cumsum(lengths)
        self.add_columns(numbers, b"".join(records), ends - lengths, ends)

    def add_columns(self, numbers: np.ndarray, buf: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        """Records ``numbers``, whose bytes are ``buf[starts[k]:ends[k]]``, decoded at once."""
        cols = decode_examples(buf, starts, ends)
        if self.label_key is None:
            self.label_key = self._choose_label(cols)
        n = len(numbers)
        labels = np.full(n, None, dtype=object)
        rows, vectors = self._vectors(cols)
        self._labels(cols, buf, labels)
        extra_rows, extra = [], []
        for r in np.flatnonzero(~cols.ok).tolist():  # any other layout: through protobuf
            vec, labels[r] = self._one(buf[int(starts[r]):int(ends[r])])
            if vec is not None and self.dims is None:
                self.dims = vec.size
            if vec is not None and vec.size == self.dims:
                extra_rows.append(r)
                extra.append(vec)
        if extra:
            rows = np.concatenate((rows, np.asarray(extra_rows, dtype=np.int64)))
            vectors = np.concatenate((vectors, np.stack(extra)))
            order = np.argsort(rows, kind="stable")
            rows, vectors = rows[order], vectors[order]
        self.skipped += n - rows.size
        if rows.size:
            self.records.append(numbers[rows])
            self.vectors.append(vectors)
            self.labels.append(labels[rows].tolist())

    def _choose_label(self, cols) -> str | None:
        from codec.datasets.label_maps import record_label_key

        kind_of = {KIND_INT64: "int64", KIND_FLOAT: "float", KIND_BYTES: "bytes"}
        first = np.unique(cols.entry_key, return_index=True)[1]
        types = {cols.keys[cols.entry_key[e]]: kind_of[kind] for e in first.tolist()
                 if (kind := int(cols.entry_kind[e])) in kind_of}
        return record_label_key(types)

    def _entries(self, cols, key: str | None, kind: int) -> np.ndarray:
        if key is None or key not in cols.keys:
            return np.zeros(0, dtype=np.int64)
        k = cols.keys.index(key)
        return np.flatnonzero((cols.entry_key == k) & (cols.entry_kind == kind) & (cols.entry_count > 0))

    def _vectors(self, cols) -> tuple[np.ndarray, np.ndarray]:
        """The batch rows whose ``key`` is a float list of the embedding's length, and those vectors."""
        entries = self._entries(cols, self.key, KIND_FLOAT)
        if entries.size and self.dims is None:
            self.dims = int(cols.entry_count[entries[0]])
        entries = entries[cols.entry_count[entries] == self.dims] if entries.size else entries
        dims = self.dims or 0
        at = cols.entry_offset[entries][:, None] + np.arange(dims)
        return cols.entry_record[entries], cols.float_values[at].reshape(entries.size, dims)

    def _labels(self, cols, buf: bytes, out: np.ndarray) -> None:
        """Each decoded record's first value of the label feature, into ``out``."""
        ints = self._entries(cols, self.label_key, KIND_INT64)
        out[cols.entry_record[ints]] = cols.int_values[cols.entry_offset[ints]].tolist()
        texts = self._entries(cols, self.label_key, KIND_BYTES)
        at = cols.entry_offset[texts]
        for r, a, b in zip(cols.entry_record[texts].tolist(), cols.bytes_starts[at].tolist(),
                           cols.bytes_ends[at].tolist()):
            out[r] = buf[a:b]

    def _one(self, data: bytes) -> tuple[np.ndarray | None, object]:
        try:
            features = Example.FromString(data).features.feature
        except Exception:  # noqa: BLE001 - not an Example: no vector
            return None, None
        vec = None
        if self.key in features and features[self.key].WhichOneof("kind") == "float_list":
            vec = np.asarray(features[self.key].float_list.value, dtype=np.float32)
        label = None
        if self.label_key is not None and self.label_key in features:
            f = features[self.label_key]
            values = f.int64_list.value or f.bytes_list.value
            label = values[0] if values else None
        return vec, label

    def label_text(self, value) -> str:
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        name = self.names.name(self.label_key, value) if self.names and self.label_key else None
        return f"{value} ({name})" if name is not None else str(value)


def _located(index, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and statuses of the records ``rows`` (ascending), a chunk of the index at a time."""
    offsets = np.empty(rows.size, dtype=np.int64)
    statuses = np.empty(rows.size, dtype=np.uint8)
    chunks = rows >> CHUNK_BITS
    cuts = (np.flatnonzero(np.diff(chunks)) + 1).tolist()
    for a, b in zip([0, *cuts], [*cuts, rows.size]):
        first = int(chunks[a]) << CHUNK_BITS
        chunk_offsets, chunk_statuses = index.run(first, first + (1 << CHUNK_BITS))
        at = rows[a:b] - first
        offsets[a:b], statuses[a:b] = chunk_offsets[at], chunk_statuses[at]
    return offsets, statuses


def _runs(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The read each record's bytes [starts, ends) are in: a new one where the gap from the record before
    passes MAX_GAP or the read would pass RUN_BYTES."""
    new = np.ones(starts.size, dtype=bool)
    new[1:] = starts[1:] - ends[:-1] > MAX_GAP
    base = starts[np.flatnonzero(new)][np.cumsum(new) - 1]
    block = (starts - base) // RUN_BYTES
    new[1:] |= block[1:] != block[:-1]
    return np.cumsum(new) - 1


def _read_spans(tfile: TFRecordFile, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """The bytes [starts[k], ends[k]) of a plain file (ascending), end to end; neighbours share a read."""
    if not starts.size:
        return b""
    runs = _runs(starts, ends)
    first = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
    last = np.r_[first[1:], runs.size] - 1
    run_starts, run_ends = starts[first], ends[last]
    reads = [tfile.read_bytes(a, b - a) for a, b in zip(run_starts.tolist(), run_ends.tolist())]
    within = (starts - run_starts[runs]).tolist()
    return b"".join([reads[r][a:a + n] for r, a, n in zip(runs.tolist(), within, (ends - starts).tolist())])


def sampled_batches(tfile: TFRecordFile, rows: np.ndarray, gather: _Gather, base: int = 0) -> Iterator[int]:
    """Records ``rows`` (ascending) of a plain file into ``gather`` as ``base + row``, a batch at a time,
    yielding how many were read so far. Only their byte ranges are read, found in the offset index
    (neighbours share a read), and their data CRCs checked unless the file says not to; a record that
    is damaged, bigger than a read or fails its CRC is read by the file itself, which records the damage."""
    index, total = tfile.index, len(tfile.index)
    check, unchecked, ok = tfile.check_crc, int(RecordStatus.UNCHECKED), int(RecordStatus.OK)
    for lo in range(0, rows.size, BATCH):
        batch = rows[lo:lo + BATCH]
        starts, statuses = _located(index, batch)
        ends = np.full(batch.size, tfile.data_end, dtype=np.int64)  # a record ends where the next starts
        inner = batch + 1 < total
        ends[inner] = _located(index, batch[inner] + 1)[0]
        usable = ((statuses == ok) | (statuses == unchecked)) & (ends - starts <= RUN_BYTES) \
            & (ends - starts >= _FRAMING)
        spans = ends[usable] - starts[usable]
        buf = _read_spans(tfile, starts[usable], ends[usable])
        at = np.cumsum(spans) - spans  # each usable record's header in buf
        raw = np.frombuffer(buf, dtype=np.uint8)
        length = raw[at[:, None] + np.arange(8)].view("<u8").ravel().astype(np.int64) if at.size else at
        good = length + _FRAMING <= spans
        data_start = at + HEADER_SIZE
        data_end = data_start + np.where(good, length, 0)
        if check and good.any():
            crcs = np.fromiter((crc32c(buf[a:b]) for a, b in zip(data_start[good].tolist(),
                                                                  data_end[good].tolist())),
                               dtype=np.uint64, count=int(good.sum()))
            masked = (((crcs >> np.uint64(15)) | (crcs << np.uint64(17))) + np.uint64(MASK_DELTA)) \
                & np.uint64(0xFFFFFFFF)  # the masked CRC-32C (codec.format.crc), for a batch at once
            stored = raw[data_end[good][:, None] + np.arange(4)].view("<u4").ravel()
            good[np.flatnonzero(good)[masked != stored]] = False
        numbers = batch[usable][good]
        fresh = numbers[statuses[usable][good] == unchecked]
        if fresh.size:
            index.set_statuses(fresh, np.full(fresh.size, ok, dtype=np.uint8))
        gather.add_columns(numbers + base, buf, data_start[good], data_end[good])
        read_apart = np.r_[batch[~usable], batch[usable][~good]]
        for i in np.sort(read_apart).tolist():
            rec = tfile.read(i)
            if rec.info.status.data_intact:
                gather.add(base + i, rec.data)
        gather.flush()
        yield lo + batch.size


def _gather_rows(source, rows: Sequence[int], gather: _Gather, base: int = 0) -> Iterator[IndexProgress]:
    """Records ``rows`` (ascending) of ``source`` into ``gather`` as ``base + row``, with progress: a plain
    file's by :func:`sampled_batches`, anything else's through :func:`iter_records`."""
    if not (isinstance(source, TFRecordFile) and source.compression is Compression.NONE):
        for item in iter_records(source, rows, intact_only=True):
            if isinstance(item, IndexProgress):
                yield item
            else:
                gather.add(base + item[0], item[1])
        gather.flush()
        return
    n = len(rows)
    for done in sampled_batches(source, np.asarray(rows, dtype=np.int64), gather, base):
        yield IndexProgress(done, done, n, len(source.problems), done == n)
    if not n:
        yield IndexProgress(0, 0, 0, len(source.problems), True)


def project_iter(source, key: str, result: Projection, sample: int = SAMPLE, seed: int = 0,
                 workers: int | None = 1) -> Iterator[IndexProgress]:
    """Read ``key``'s vectors of (a seeded sample of) ``source``'s records and fill ``result`` with their
    2-D PCA, yielding progress as the records are read.

    ``workers`` 1 (the default) reads here: 10^5 records take about a second, less than a pool's
    start-up on two cores. More (None: one per core) use the process pool where
    :func:`codec.stats.pool.plan_stats` plans tasks (a big plain file, a shard set); the label feature
    and the vectors' length are then chosen here first, from the first records, for every worker.
    """
    from codec.stats.pool import plan_stats, pool_decodes_alike, pool_merge_iter

    n = len(source)
    order = sample_records(n, sample, seed)
    result.sampled = len(order) < n
    names = getattr(source, "labels", None)
    tasks = plan_stats(source, workers) if pool_decodes_alike(source) else []
    if not tasks:
        gather = _Gather(key, names)
        yield from _gather_rows(source, order, gather)
        _finish(result, gather)
        return
    probe = _Gather(key, names)
    for _ in _gather_rows(source, order[:PROBE], probe):
        pass
    gather = _Gather(key, names, probe.label_key, probe.dims)
    setup = {"named": [], "check_crc": source.check_crc, "key": key, "label_key": probe.label_key,
             "dims": probe.dims, "total": n, "sample": sample, "seed": seed}
    yield from pool_merge_iter(source, gather, ProjectionRunner, tasks, setup, workers)
    _finish(result, gather)
    yield IndexProgress(n, n, n, len(source.problems), True)


class ProjectionRunner(StatsRunner):
    """A worker's share of a projection: the sampled records of each task's range, gathered."""

    def __init__(self, named: list[str], key: str, label_key: str | None, dims: int | None, total: int,
                 sample: int, seed: int, check_crc: bool = True, use_cache: bool = True) -> None:
        super().__init__(named, check_crc=check_crc, use_cache=use_cache)
        self.key, self.label_key, self.dims = key, label_key, dims
        self.order = np.asarray(sample_records(total, sample, seed), dtype=np.int64)

    def _new_result(self) -> _Gather:
        return _Gather(self.key, None, self.label_key, self.dims)

    # result is what _new_result made: a _Gather here, where StatsRunner's is a FileStats.
    def _pass(self, f, indices: range, base: int, result: _Gather):  # type: ignore[override]
        lo, hi = np.searchsorted(self.order, [base + indices.start, base + indices.stop]).tolist()
        mine = (self.order[lo:hi] - base).tolist()
        scale = len(indices) / max(len(mine), 1)  # progress in records of the range, as the pool counts
        for item in _gather_rows(f, mine, result, base):
            yield int(item.records * scale)
        yield len(indices)


def _finish(result: Projection, gather: _Gather) -> None:
    result.skipped, result.label_key = gather.skipped, gather.label_key
    if not gather.vectors:
        return
    records = np.concatenate(gather.records)
    order = np.argsort(records, kind="stable")  # workers' parts come as they finish
    result.records = records[order]
    result.points, result.explained = pca_2d(np.concatenate(gather.vectors)[order])
    values = [v for part in gather.labels for v in part]
    values = list(map(values.__getitem__, order.tolist()))
    distinct = sorted({v for v in values if v is not None}, key=lambda v: (isinstance(v, bytes), v))
    code = {None: -1, **{v: i for i, v in enumerate(distinct)}}
    result.labels = np.fromiter(map(code.__getitem__, values), dtype=np.int32, count=len(values))
    result.label_names = [gather.label_text(v) for v in distinct]


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    """The rows of ``x`` on its first two principal components, and their explained variance ratios.

    Eigenvectors of the covariance (dims × dims: cheap for 10^5 rows), each
    signed so its largest loading is positive, so a run gives the same picture.
    The products run on one BLAS thread: at this size threads only wait for each other on a busy machine.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _pca_2d(np.asarray(x, dtype=np.float64))


def _pca_2d(x: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    finite = np.isfinite(x).all(axis=1)  # a row with NaN or inf is put at the centre
    if finite.all():
        centred = x - x.mean(axis=0)
    else:
        centred = np.zeros_like(x)
        if finite.any():
            centred[finite] = x[finite] - x[finite].mean(axis=0)
    cov = centred.T @ centred / max(len(x) - 1, 1)
    values, vectors = np.linalg.eigh(cov)
    top = np.argsort(values)[::-1][:2]
    basis = vectors[:, top]
    if basis.shape[1] < 2:
        basis = np.pad(basis, ((0, 0), (0, 2 - basis.shape[1])))
    signs = np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(2)])
    basis = basis * np.where(signs == 0, 1.0, signs)
    total = float(values.clip(min=0).sum())
    ratios = [float(max(values[t], 0.0)) / total if total > 0 else 0.0 for t in top]
    ratios += [0.0] * (2 - len(ratios))
    return (centred @ basis).astype(np.float32), (ratios[0], ratios[1])


def project(source, key: str, sample: int = SAMPLE, seed: int = 0, workers: int | None = 1) -> Projection:
    """:func:`project_iter` run to the end: the 2-D projection of embedding ``key`` of ``source``."""
    result = Projection(key)
    for _ in project_iter(source, key, result, sample, seed, workers):
        pass
    return result
