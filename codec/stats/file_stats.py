"""Per-feature statistics of a file (or of chosen records), in bounded memory.

``stats_iter(tfile, indices, result)`` is a generator of progress that fills
a :class:`FileStats`; ``FileStats.to_json()`` is the ``tfrlens-cli stats
--json`` contract::

    {"records": N, "kinds": {...}, "raw_records": n, "damaged_records": n,
     "features": {NAME: {"present": n, "dtype": "int64|float32|float64|bool|bytes", ...}}}

with ``"context"`` and ``"sequence"`` maps instead of ``"features"`` when the
file holds SequenceExamples. Per feature: ``present`` (records that have
it), ``dtype`` (the most common; ``mixed_types`` and ``dtypes`` when it
varies), ``values_per_record`` (min/max/mean); numbers: ``count``, ``min``,
``max``, ``mean``, ``std``, ``nan``, ``inf``, ``histogram`` (``edges`` and
``counts``), and for int64 ``distinct`` and ``top`` ([value, count] pairs,
most common first) while there are at most 10,000 distinct values; bytes:
``count``, ``value_bytes`` (bytes per value), ``top`` (values as UTF-8 text,
else ``base64:...``), ``top_complete``, ``text_share``, ``image_share``,
and for encoded images ``image_formats``, ``image_width``, ``image_height``.
A payload's values are summarised exactly (docs/exact-values.md): integers
up to 2**64 - 1 (dtype "int64" stands for every integer type), doubles as
"float64" (shown in full, not as float32), bools as "bool" (``count``,
``true``, ``false``, ``top``), enums by name as bytes.
A feature holding audio (found as ``tfrlens-cli media`` finds it) has an ``audio`` object:
``count``, ``undecodable``, ``codecs``, ``duration`` (seconds: min/max/mean, ``histogram``),
``sample_rates`` and ``channels`` ([value, count] pairs), from clip headers alone
(:mod:`codec.stats.audio_stats`).
Feature lists (``sequence``): ``present``, ``dtype``, ``length`` (steps per
record, with a histogram), ``values_per_step`` and the same value stats
over all steps.

Memory stays bounded whatever the file size: numbers are folded into exact
sums a chunk at a time (numpy); histograms keep the first 65,536 values
exactly and then switch to 4,096 fine bins of a power-of-two width aligned
at zero, the narrowest that hold the values' range (exact counts, edges
regrouped at the end); int64 histograms come from the exact value counts
whenever those are complete; ``top`` tracks at most 10,000 distinct values
of up to 256 bytes each (past that, a sample chosen by a hash of the value).
Every result is a function of the values alone, so :meth:`FileStats.merge`
of any split of the records equals one pass over them (see
:mod:`codec.stats.numbers`).
"""
from __future__ import annotations

import base64
import heapq
import zlib
from typing import Iterator, Sequence

from codec.decode.decoded import scalar_of
from codec.decode.decoder import RecordKind, is_text
from codec.decode.image_sniff import probe_image
from codec.decode.payloads import record_fields
from codec.index.scan import IndexProgress
from codec.sources.record_pass import PassCounts, quick_decode, record_pass
from codec.stats.audio_stats import AudioStats
from codec.stats.numbers import FLUSH_VALUES, MAX_TRACKED, TOP_N, IntPending
from codec.stats.numbers import Numbers as _Numbers
from codec.stats.numbers import Pending as _Pending

__all__ = ["FeatureStats", "FileStats", "compute_stats", "stats_iter"]

MAX_TOP_VALUE = 256
FLUSH = FLUSH_VALUES
BATCH = 2048  # Example records decoded at once (codec.stats.columns)

# First bytes of the image signatures codec.decode.images knows, to skip Pillow for most values.
_IMAGE_FIRST = frozenset(b"\xff\x89GBIMqP\x00")


def _rank(v: bytes) -> int:
    """A bytes value's rank for tracking: the same in every process (unlike hash())."""
    return zlib.crc32(v)


class _Desc:
    """A bytes value that sorts in reverse: the heap of tracked values keeps the greatest (rank, value) on top."""

    __slots__ = ("v",)

    def __init__(self, v: bytes) -> None:
        self.v = v

    def __lt__(self, other: _Desc) -> bool:
        return self.v > other.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.v == other.v


class _Bytes:
    """Bytes values: lengths, top values, text and image shares, image formats and sizes.

    ``top`` counts values of up to MAX_TOP_VALUE bytes exactly; past
    MAX_TRACKED distinct ones it keeps those of least :func:`_rank` (a
    bottom-k sample), so which values are counted depends on the values
    alone, never on their order or on how a file was split.
    """

    def __init__(self) -> None:
        self.count = 0
        self.text = 0
        self.images = 0
        self.tracked: dict[bytes, list] = {}  # value -> [count, is_text, ImageInfo | None, rank]
        self._heap: list[tuple[int, _Desc]] = []  # (-rank, value) of the tracked values, once full
        self.top_complete = True
        self.formats: dict[str, int] = {}
        self.lengths = _Pending("q", _Numbers(True, histogram=False))
        self.widths = _Pending("q", _Numbers(True))
        self.heights = _Pending("q", _Numbers(True))

    def add(self, values) -> None:
        tracked = self.tracked
        lengths = self.lengths.buf
        for v in values:
            lengths.append(len(v))
            entry = tracked.get(v)
            if entry is not None:
                entry[0] += 1
                text, info = entry[1], entry[2]
            else:
                text = is_text(v)
                info = probe_image(v) if not text and _maybe_image(v) else None
                if len(v) <= MAX_TOP_VALUE:
                    self._track(v, [1, text, info, _rank(v)])
                else:
                    self.top_complete = False
            if text:
                self.text += 1
            elif info is not None:
                self.images += 1
                self.formats[info.format] = self.formats.get(info.format, 0) + 1
                self.widths.buf.append(info.width)
                self.heights.buf.append(info.height)
        self.count += len(values)
        if len(lengths) >= FLUSH:
            self.flush()

    def _track(self, v: bytes, entry: list) -> None:
        """Count a value not tracked yet, if its (rank, value) is among the MAX_TRACKED least seen."""
        tracked, heap = self.tracked, self._heap
        if len(tracked) < MAX_TRACKED:
            tracked[v] = entry
            return
        self.top_complete = False
        if not heap:
            heap.extend((-e[3], _Desc(k)) for k, e in tracked.items())
            heapq.heapify(heap)
        worst_rank, worst = -heap[0][0], heap[0][1].v
        if (entry[3], v) < (worst_rank, worst):
            heapq.heapreplace(heap, (-entry[3], _Desc(v)))
            del tracked[worst]
            tracked[v] = entry

    def flush(self) -> None:
        for pending in (self.lengths, self.widths, self.heights):
            pending.flush()

    def merge(self, other: _Bytes) -> None:
        """Fold ``other``'s values in, as if they had been added here."""
        self.count += other.count
        self.text += other.text
        self.images += other.images
        self.top_complete = self.top_complete and other.top_complete
        for fmt, n in other.formats.items():
            self.formats[fmt] = self.formats.get(fmt, 0) + n
        for mine, theirs in ((self.lengths, other.lengths), (self.widths, other.widths),
                             (self.heights, other.heights)):
            mine.merge(theirs)
        for v, entry in other.tracked.items():
            have = self.tracked.get(v)
            if have is not None:
                have[0] += entry[0]
            else:
                self._track(v, list(entry))

    def to_json(self) -> dict:
        self.flush()
        ranked = sorted(self.tracked.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TOP_N]
        out = {
            "count": self.count,
            "value_bytes": self.lengths.target.summary(),
            "top": [[_show_bytes(v, entry[1]), entry[0]] for v, entry in ranked],
            "top_complete": self.top_complete,
            "text_share": self.text / self.count if self.count else 0.0,
            "image_share": self.images / self.count if self.count else 0.0,
        }
        if self.images:
            out["image_formats"] = dict(sorted(self.formats.items(), key=lambda kv: (-kv[1], kv[0])))
            for key, pending in (("image_width", self.widths), ("image_height", self.heights)):
                nums = pending.target
                out[key] = dict(nums.summary(), histogram=nums.hist.result(nums.min, nums.max, True))
        return out


def _maybe_image(v: bytes) -> bool:
    """Cheap test before Pillow: could ``v`` start with an image signature?"""
    return bool(v) and (v[0] in _IMAGE_FIRST or v[4:8] == b"ftyp" or v[8:12] == b"WEBP")


def _show_bytes(v: bytes, text: bool) -> str:
    if text or not v:
        return v.decode("utf-8")
    return "base64:" + base64.b64encode(v).decode("ascii")


_DTYPE_NAMES = {"int64_list": "int64", "float_list": "float32", "bytes_list": "bytes"}
_LISTS = {"int64": "int64_list", "float": "float_list", "bytes": "bytes_list"}  # flat-view dtype -> Feature list
_ORDER = ("int64", "float32", "float64", "bool", "bytes")  # ties of the most common dtype go to the first


class _Bools:
    """Bool values: how many are true and how many false."""

    def __init__(self) -> None:
        self.true = self.false = 0

    def add(self, values) -> None:
        true = sum(1 for v in values if v)
        self.true += true
        self.false += len(values) - true

    def merge(self, other: _Bools) -> None:
        self.true += other.true
        self.false += other.false

    def to_json(self) -> dict:
        ranked = sorted(((True, self.true), (False, self.false)), key=lambda kv: (-kv[1], kv[0]))
        return {"count": self.true + self.false, "true": self.true, "false": self.false,
                "top": [[v, n] for v, n in ranked if n]}


class FeatureStats:
    """Statistics of one feature (or one feature list's values over all steps)."""

    def __init__(self, name: str, sequence: bool = False) -> None:
        self.name = name
        self.sequence = sequence
        self.present = 0
        self.n_int = self.n_float = self.n_bytes = self.n_none = 0  # records (steps) of each type
        self.n_double = self.n_bool = 0  # payloads' doubles and bools (codec.decode.payloads): records of each
        self.ints = IntPending(_Numbers(True, top=True))
        self.floats = _Pending("d", _Numbers(False))
        self.doubles = _Pending("d", _Numbers(False, double=True))
        self.bools = _Bools()
        self.bytes = _Bytes()
        self.per_value_list = _Pending("q", _Numbers(True, histogram=False))  # values per record / step
        self.lengths = _Pending("q", _Numbers(True)) if sequence else None  # steps per record
        self._int_buf, self._float_buf, self._counts = self.ints.buf, self.floats.buf, self.per_value_list.buf

    @property
    def dtypes(self) -> dict[str, int]:
        """Records (steps, for feature lists) by value type; "none" for a Feature with no list set."""
        return {"int64": self.n_int, "float32": self.n_float, "float64": self.n_double, "bool": self.n_bool,
                "bytes": self.n_bytes, "none": self.n_none}

    # -- feeding (the hot path: one call per feature per record) ----------
    def add_feature(self, feature) -> None:
        """One Feature message (a record's value list, or one step)."""
        kind = feature.WhichOneof("kind")
        if kind is None:
            self.add_values(None, ())
        else:
            self.add_values(kind, getattr(feature, kind).value)

    def add_values(self, kind: str | None, values) -> None:
        """One value list: ``kind`` "int64_list", "float_list", "bytes_list" (None: no list set).

        Examples give upb containers (indexing one value or slicing to a list
        is far cheaper than array.extend()); other payloads give lists.
        """
        if kind == "int64_list":
            n = len(values)
            self.n_int += 1
            buf = self._int_buf
            if n == 1:
                buf.append(values[0])
            else:
                buf.fromlist(values[:])
            if len(buf) >= FLUSH:
                self.ints.flush()
        elif kind == "float_list":
            n = len(values)
            self.n_float += 1
            buf = self._float_buf
            if n == 1:
                buf.append(values[0])
            else:
                buf.fromlist(values[:])
            if len(buf) >= FLUSH:
                self.floats.flush()
        elif kind == "bytes_list":
            n = len(values)
            self.n_bytes += 1
            self.bytes.add(values)
        else:
            self.n_none += 1
            n = 0
        counts = self._counts
        counts.append(n)
        if len(counts) >= FLUSH:
            self.per_value_list.flush()

    def add_flat(self, feature) -> None:
        """One feature of a payload's flat view (:mod:`codec.decode.payloads`), its values exact: integers up to
        2**64 - 1, bools as bools, doubles as float64."""
        dtype, values = feature
        scalar = scalar_of(feature)
        if scalar == "bool":
            self.n_bool += 1
            self.bools.add(values)
        elif scalar == "double":
            self.n_double += 1
            self.doubles.buf.fromlist(list(values))
            if len(self.doubles.buf) >= FLUSH:
                self.doubles.flush()
        elif dtype == "int64":
            self.n_int += 1
            self.ints.add_exact(list(values))
        else:
            self.add_values(_LISTS[dtype], values)
            return
        self._counts.append(len(values))
        if len(self._counts) >= FLUSH:
            self.per_value_list.flush()

    def add_feature_list(self, feature_list) -> None:
        steps = feature_list.feature
        self.present += 1
        self.lengths.buf.append(len(steps))
        for step in steps:
            self.add_feature(step)
        if len(self.lengths.buf) >= FLUSH:
            self.lengths.flush()

    # -- results ---------------------------------------------------------
    @property
    def dtype(self) -> str | None:
        """The most common value type (None when no record had a typed value)."""
        typed = [(n, name) for name, n in self.dtypes.items() if name != "none" and n]
        return max(typed, key=lambda t: (t[0], -_ORDER.index(t[1])))[1] if typed else None

    @property
    def mixed_types(self) -> bool:
        return sum(1 for name, n in self.dtypes.items() if name != "none" and n) > 1

    @property
    def values_min(self) -> int | None:
        self.per_value_list.flush()
        return self.per_value_list.target.min

    @property
    def values_max(self) -> int | None:
        self.per_value_list.flush()
        return self.per_value_list.target.max

    def _values_json(self, dtype: str) -> dict:
        if dtype == "int64":
            self.ints.flush()
            return self.ints.target.to_json()
        if dtype == "float32":
            self.floats.flush()
            return self.floats.target.to_json()
        if dtype == "float64":
            self.doubles.flush()
            return self.doubles.target.to_json()
        if dtype == "bool":
            return self.bools.to_json()
        return self.bytes.to_json()

    def merge(self, other: FeatureStats) -> None:
        """Fold ``other`` (the same feature, over other records) in, as if its records had been added here."""
        self.present += other.present
        self.n_int += other.n_int
        self.n_float += other.n_float
        self.n_bytes += other.n_bytes
        self.n_none += other.n_none
        self.n_double += other.n_double
        self.n_bool += other.n_bool
        self.ints.merge(other.ints)
        self.floats.merge(other.floats)
        self.doubles.merge(other.doubles)
        self.bools.merge(other.bools)
        self.bytes.merge(other.bytes)
        self.per_value_list.merge(other.per_value_list)
        if self.lengths is not None:
            self.lengths.merge(other.lengths)

    def to_json(self) -> dict:
        self.per_value_list.flush()
        out: dict = {"present": self.present, "dtype": self.dtype}
        if self.mixed_types:
            out["mixed_types"] = True
        if self.mixed_types or self.n_none:
            out["dtypes"] = {k: v for k, v in self.dtypes.items() if v}
        if self.sequence:
            self.lengths.flush()
            nums = self.lengths.target
            out["length"] = dict(nums.summary(), histogram=nums.hist.result(nums.min, nums.max, True))
            out["values_per_step"] = self.per_value_list.target.summary()
        else:
            out["values_per_record"] = self.per_value_list.target.summary()
        if self.dtype is not None:
            out.update(self._values_json(self.dtype))
        if self.mixed_types:
            out["by_dtype"] = {d: self._values_json(d) for d, n in self.dtypes.items()
                               if n and d not in ("none", self.dtype)}
        return out


class FileStats:
    """Statistics of a file's records; filled by :func:`stats_iter`."""

    def __init__(self, payload=None) -> None:
        self.payload = payload  # how records are decoded (codec.decode.payloads); None: by the kind rule
        self.labels = None  # class names of label ids (codec.datasets.label_maps.LabelNames), for "names"
        self.kinds = {k.value: 0 for k in RecordKind}
        self.features: dict[str, FeatureStats] = {}  # an Example's features or a SequenceExample's context
        self.sequence: dict[str, FeatureStats] = {}  # feature lists
        self.counts = PassCounts()
        self.audio = AudioStats()  # per audio feature: durations, rates, channels (codec.stats.audio_stats)
        self._batch: list[bytes] = []  # records waiting to be decoded together (see add)

    def __getstate__(self) -> dict:
        self.finish()
        return self.__dict__

    @property
    def records(self) -> int:
        """Records whose data was read (damaged ones are counted apart)."""
        return self.counts.visited

    @property
    def damaged_records(self) -> int:
        return self.counts.damaged

    @property
    def raw_records(self) -> int:
        return self.kinds[RecordKind.RAW.value]

    @property
    def is_sequence(self) -> bool:
        return self.kinds[RecordKind.SEQUENCE_EXAMPLE.value] > 0

    def add(self, data: bytes) -> None:
        """One record's data. Records decoded by the kind rule wait to be decoded a batch at a time
        (:mod:`codec.stats.columns`): call :meth:`finish` before reading the features."""
        if self.payload is not None:
            self.add_one(data)
            return
        batch = self._batch
        batch.append(data)
        if len(batch) >= BATCH:
            self.finish()

    def finish(self) -> None:
        """Fold in the records still waiting in a batch."""
        if self._batch:
            from codec.stats.columns import add_batch

            batch, self._batch = self._batch, []
            add_batch(self, batch)

    def feature(self, name: str) -> FeatureStats:
        """The statistics of feature ``name`` (made on first use)."""
        acc = self.features.get(name)
        if acc is None:
            acc = self.features[name] = FeatureStats(name)
        return acc

    def add_audio(self, data: bytes) -> None:
        """The audio of one record the columnar path counted already (:func:`codec.stats.columns.add_batch`)."""
        self.audio.add_decoded(quick_decode(data, self.payload))

    def add_one(self, data: bytes) -> None:
        """One record's data, decoded here."""
        decoded = quick_decode(data, self.payload)
        self.kinds[decoded.kind.value] += 1
        if decoded.kind is not RecordKind.RAW:
            self.audio.add_decoded(decoded)
        if decoded.kind is RecordKind.EXAMPLE and decoded.fields is None:
            self._add_features(decoded.message.features.feature)
        elif decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
            message = decoded.message
            self._add_features(message.context.feature)
            stats = self.sequence
            lists = message.feature_lists.feature_list
            for key in lists:
                acc = stats.get(key)
                if acc is None:
                    acc = stats[key] = FeatureStats(key, sequence=True)
                acc.add_feature_list(lists[key])
        elif decoded.kind is not RecordKind.RAW:
            fields = record_fields(decoded)
            if fields is not None:
                self._add_fields(fields)

    def _add_fields(self, fields: dict) -> None:
        """A payload's flat view (see codec.decode.payloads): key -> (dtype, values)."""
        stats = self.features
        for key, feature in fields.items():
            acc = stats.get(key)
            if acc is None:
                acc = stats[key] = FeatureStats(key)
            acc.present += 1
            acc.add_flat(feature)

    def _add_features(self, features) -> None:
        stats = self.features
        for key, feature in features.items():
            acc = stats.get(key)
            if acc is None:
                acc = stats[key] = FeatureStats(key)
            acc.present += 1
            acc.add_feature(feature)

    def merge(self, other: FileStats) -> None:
        """Fold in the statistics of other records (another shard, another range of this file).

        Any split of the records, merged in any order, gives the ``to_json()``
        of one pass over them all, byte for byte.
        """
        self.finish()
        other.finish()
        for kind, n in other.kinds.items():
            self.kinds[kind] += n
        self.counts.visited += other.counts.visited
        self.counts.damaged += other.counts.damaged
        for mine, theirs, sequence in ((self.features, other.features, False),
                                       (self.sequence, other.sequence, True)):
            for name, stats in theirs.items():
                acc = mine.get(name)
                if acc is None:
                    acc = mine[name] = FeatureStats(name, sequence)
                acc.merge(stats)
        self.audio.merge(other.audio)

    def to_json(self) -> dict:
        """The ``tfrlens-cli stats --json`` object (see the module docstring)."""
        self.finish()
        out: dict = {"records": self.records, "kinds": {k: n for k, n in self.kinds.items() if n},
                     "raw_records": self.raw_records, "damaged_records": self.damaged_records}
        features = {name: self.features[name].to_json() for name in sorted(self.features)}
        if self.labels:
            for name, feature in features.items():
                self._name_classes(name, feature)
        sequence = {name: self.sequence[name].to_json() for name in sorted(self.sequence)}
        for section, sequential in ((features, False), (sequence, True)):
            for name, audio in self.audio.section(sequential).items():
                if name in section:
                    section[name]["audio"] = audio
        if self.is_sequence:
            out["context"] = features
            out["sequence"] = sequence
        else:
            out["features"] = features
        return out

    def _name_classes(self, key: str, feature: dict) -> None:
        """``names`` beside an int64 feature's ``top``: the class name of each id that has one."""
        if feature.get("dtype") != "int64" or not feature.get("top"):
            return
        names = {str(v): self.labels.name(key, v) for v, _ in feature["top"]}
        names = {v: n for v, n in names.items() if n is not None}
        if names:
            feature["names"] = names


def stats_iter(tfile, indices: Sequence[int] | None = None,
               result: FileStats | None = None) -> Iterator[IndexProgress]:
    """Gather statistics of ``tfile``'s records (or of ``indices``) into ``result``, yielding progress."""
    result = result if result is not None else FileStats()
    result.payload, result.labels = tfile.payload, tfile.labels
    try:
        yield from record_pass(tfile, result.add, indices, result.counts)
    finally:
        result.finish()


def compute_stats(tfile, indices: Sequence[int] | None = None) -> FileStats:
    """:func:`stats_iter` run to the end."""
    result = FileStats()
    for _ in stats_iter(tfile, indices, result):
        pass
    return result
