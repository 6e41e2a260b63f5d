"""Per-feature statistics of a file (or of chosen records), in bounded memory.

``stats_iter(tfile, indices, result)`` is a generator of progress that fills
a :class:`FileStats`; ``FileStats.to_json()`` is the ``tfrlens-cli stats
--json`` contract::

    {"records": N, "kinds": {...}, "raw_records": n, "damaged_records": n,
     "features": {NAME: {"present": n, "dtype": "int64|float32|bytes", ...}}}

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
Feature lists (``sequence``): ``present``, ``dtype``, ``length`` (steps per
record, with a histogram), ``values_per_step`` and the same value stats
over all steps.

Memory stays bounded whatever the file size: numbers are folded into running
moments a chunk at a time (numpy); histograms keep the first 65,536 values
exactly and then switch to 4,096 fine bins that double their span as needed
(exact counts, edges regrouped at the end); int64 histograms come from the
exact value counts whenever those are complete; ``top`` tracks at most
10,000 distinct values of up to 256 bytes each.
"""
from __future__ import annotations

import base64
import math
from array import array
from typing import Any, Iterator, Sequence

import numpy as np

from .decode import RecordKind, is_text
from .payloads import int64_values, record_fields
from .image_sniff import probe_image
from .record_pass import PassCounts, quick_decode, record_pass
from .scan import IndexProgress

__all__ = ["FeatureStats", "FileStats", "compute_stats", "stats_iter"]

TOP_N = 10
MAX_TRACKED = 10_000
MAX_TOP_VALUE = 256
HIST_BINS = 20
EXACT_VALUES = 1 << 16
FINE_BINS = 4096
FLUSH = 1 << 16

# First bytes of the image signatures codec.images knows, to skip Pillow for most values.
_IMAGE_FIRST = frozenset(b"\xff\x89GBIMqP\x00")


def _f32(x: float) -> float:
    """A float32 value as its shortest decimal (0.1, not 0.10000000149011612)."""
    return float(str(np.float32(x)))


class _Histogram:
    """Counts of a stream of finite numbers; exact while small, then fine bins."""

    def __init__(self) -> None:
        self._exact: list[np.ndarray] = []
        self._exact_n = 0
        self._fine: np.ndarray | None = None
        self._lo = 0.0
        self._width = 1.0

    def add(self, x: np.ndarray) -> None:
        if not x.size:
            return
        x = x.astype(np.float64, copy=False)
        if self._fine is None:
            self._exact.append(x.copy())
            self._exact_n += x.size
            if self._exact_n > EXACT_VALUES:
                self._to_fine()
            return
        self._cover(float(x.min()), float(x.max()))
        idx = np.floor((x - self._lo) / self._width).astype(np.int64)
        np.clip(idx, 0, FINE_BINS - 1, out=idx)
        self._fine += np.bincount(idx, minlength=FINE_BINS)

    def _to_fine(self) -> None:
        values = np.concatenate(self._exact)
        self._exact = []
        lo, hi = float(values.min()), float(values.max())
        span = hi - lo
        self._lo = lo
        self._width = span / (FINE_BINS - 1) if span > 0 else max(abs(lo) * 1e-9, 1e-9)
        self._fine = np.zeros(FINE_BINS, dtype=np.int64)
        self.add(values)

    def _cover(self, lo: float, hi: float) -> None:
        """Double the fine bins' span until it holds [lo, hi]."""
        half = FINE_BINS // 2
        while lo < self._lo or (hi - self._lo) / self._width >= FINE_BINS:
            merged = self._fine.reshape(half, 2).sum(axis=1)
            self._width *= 2
            if lo < self._lo:
                self._fine = np.concatenate([np.zeros(half, dtype=np.int64), merged])
                self._lo -= half * self._width
            else:
                self._fine = np.concatenate([merged, np.zeros(half, dtype=np.int64)])

    def result(self, vmin, vmax, integer: bool, exact_counts: dict | None = None) -> dict:
        """{"edges", "counts"} over [vmin, vmax] in HIST_BINS bins at most.

        Integers get integer edges, each bin [edge, next edge); floats get
        equal bins, the last one closed; one value gives one bin [v, v].
        """
        if vmin is None:
            return {"edges": [], "counts": []}
        if integer:
            width = -(-(vmax - vmin + 1) // HIST_BINS)
            bins = -(-(vmax - vmin + 1) // width)
            out_edges: list = [int(vmin) + k * width for k in range(bins + 1)]
            edges = np.array(out_edges, dtype=np.float64)
        elif vmin == vmax:
            edges = np.array([vmin, vmax], dtype=np.float64)
            out_edges = [_f32(vmin), _f32(vmax)]
        else:
            edges = np.linspace(float(vmin), float(vmax), HIST_BINS + 1)
            out_edges = [float(f"{e:.9g}") for e in edges]  # float32 precision
            out_edges[0], out_edges[-1] = _f32(vmin), _f32(vmax)  # as min and max are shown
        bins = len(edges) - 1
        if exact_counts is not None:
            keys = np.fromiter(exact_counts.keys(), dtype=np.float64, count=len(exact_counts))
            weights = np.fromiter(exact_counts.values(), dtype=np.float64, count=len(exact_counts))
            counts = _bin(keys, edges, weights)
        elif self._fine is None:
            values = np.concatenate(self._exact) if self._exact else np.zeros(0)
            counts = _bin(values, edges, None)
        else:
            centers = self._lo + (np.arange(FINE_BINS) + 0.5) * self._width
            idx = np.clip(np.searchsorted(edges, centers, side="right") - 1, 0, bins - 1)
            counts = np.bincount(idx, weights=self._fine, minlength=bins)
        return {"edges": out_edges, "counts": [int(c) for c in counts]}


def _bin(values: np.ndarray, edges: np.ndarray, weights) -> np.ndarray:
    """Counts per bin, the last bin closed (as numpy.histogram), one bin if edges are equal."""
    bins = len(edges) - 1
    if bins == 1 and edges[0] == edges[1]:
        return np.array([weights.sum() if weights is not None else values.size])
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, bins - 1)
    return np.bincount(idx, weights=weights, minlength=bins)


class _Numbers:
    """Running count/min/max/mean/std (Chan's merge), NaN/inf counts, histogram, value counts."""

    def __init__(self, integer: bool, histogram: bool = True, top: bool = False) -> None:
        self.integer = integer
        self.count = 0
        self.min: Any = None
        self.max: Any = None
        self.mean = 0.0
        self.m2 = 0.0
        self.nan = 0
        self.inf = 0
        self.hist = _Histogram() if histogram else None
        self.top: dict | None = {} if top else None
        self.top_overflow = False

    def add(self, x: np.ndarray) -> None:
        if not x.size:
            return
        if not self.integer:
            x = x.astype(np.float64, copy=False)
            finite = np.isfinite(x)
            if not finite.all():
                nan = int(np.isnan(x).sum())
                self.nan += nan
                self.inf += int(x.size - finite.sum()) - nan
                x = x[finite]
                if not x.size:
                    return
        lo, hi = x.min(), x.max()
        lo, hi = (int(lo), int(hi)) if self.integer else (float(lo), float(hi))
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)
        xf = x.astype(np.float64)
        n_b = xf.size
        mean_b = float(xf.mean())
        m2_b = float(np.square(xf - mean_b).sum())
        n = self.count + n_b
        delta = mean_b - self.mean
        self.mean += delta * n_b / n
        self.m2 += m2_b + delta * delta * self.count * n_b / n
        self.count = n
        if self.hist is not None:
            self.hist.add(xf)
        if self.top is not None:
            self._count_values(x)

    def _count_values(self, x: np.ndarray) -> None:
        values, counts = np.unique(x, return_counts=True)
        top = self.top
        keys = values.tolist()
        if len(top) + len(keys) > MAX_TRACKED and len(top) + sum(1 for v in keys if v not in top) > MAX_TRACKED:
            self.top, self.top_overflow = None, True  # not small-cardinality: the histogram says more
            return
        for v, c in zip(keys, counts.tolist()):
            top[v] = top.get(v, 0) + c

    def summary(self) -> dict:
        """min/max/mean only (values per record, lengths)."""
        if not self.count:
            return {"min": None, "max": None, "mean": None}
        fmt = self._fmt
        return {"min": fmt(self.min), "max": fmt(self.max), "mean": self.mean}

    def _fmt(self, v):
        return int(v) if self.integer else _f32(v)

    def to_json(self) -> dict:
        out = {"count": self.count + self.nan + self.inf}
        out.update(self.summary())
        out["std"] = math.sqrt(self.m2 / self.count) if self.count else None
        out["nan"], out["inf"] = self.nan, self.inf
        if self.hist is not None:
            exact = self.top if self.integer and self.top is not None and self.top else None
            out["histogram"] = self.hist.result(self.min, self.max, self.integer, exact)
        if self.top is not None:
            out["distinct"] = len(self.top)
            ranked = sorted(self.top.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N]
            out["top"] = [[int(v), int(c)] for v, c in ranked]
        elif self.top_overflow:
            out["distinct"] = None  # more than MAX_TRACKED
        return out


class _Pending:
    """Values waiting to be folded into a _Numbers in one numpy call.

    ``buf`` stays the same array object for the accumulator's life, so hot
    loops may hold on to it (and to its ``append``/``extend``).
    """

    __slots__ = ("buf", "dtype", "target")

    def __init__(self, typecode: str, target: _Numbers) -> None:
        self.buf = array(typecode)
        self.dtype = np.int64 if typecode == "q" else np.float64
        self.target = target

    def flush(self) -> None:
        buf = self.buf
        if buf:
            values = np.frombuffer(buf, dtype=self.dtype).copy()  # the view must go before the array shrinks
            del buf[:]
            self.target.add(values)


class _Bytes:
    """Bytes values: lengths, top values, text and image shares, image formats and sizes."""

    def __init__(self) -> None:
        self.count = 0
        self.text = 0
        self.images = 0
        self.tracked: dict[bytes, list] = {}  # value -> [count, is_text, ImageInfo | None]
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
                    if len(tracked) < MAX_TRACKED:
                        tracked[v] = [1, text, info]
                    else:
                        self.top_complete = False
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

    def flush(self) -> None:
        for pending in (self.lengths, self.widths, self.heights):
            pending.flush()

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


class FeatureStats:
    """Statistics of one feature (or one feature list's values over all steps)."""

    def __init__(self, name: str, sequence: bool = False) -> None:
        self.name = name
        self.sequence = sequence
        self.present = 0
        self.n_int = self.n_float = self.n_bytes = self.n_none = 0  # records (steps) of each type
        self.ints = _Pending("q", _Numbers(True, top=True))
        self.floats = _Pending("d", _Numbers(False))
        self.bytes = _Bytes()
        self.per_value_list = _Pending("q", _Numbers(True, histogram=False))  # values per record / step
        self.lengths = _Pending("q", _Numbers(True)) if sequence else None  # steps per record
        self._int_buf, self._float_buf, self._counts = self.ints.buf, self.floats.buf, self.per_value_list.buf

    @property
    def dtypes(self) -> dict[str, int]:
        """Records (steps, for feature lists) by value type; "none" for a Feature with no list set."""
        return {"int64": self.n_int, "float32": self.n_float, "bytes": self.n_bytes, "none": self.n_none}

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
        return max(typed, key=lambda t: (t[0], -("int64", "float32", "bytes").index(t[1])))[1] if typed else None

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
        return self.bytes.to_json()

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
        self.payload = payload  # how records are decoded (codec.payloads); None: by the kind rule
        self.labels = None  # class names of label ids (codec.label_maps.LabelNames), for "names"
        self.kinds = {k.value: 0 for k in RecordKind}
        self.features: dict[str, FeatureStats] = {}  # an Example's features or a SequenceExample's context
        self.sequence: dict[str, FeatureStats] = {}  # feature lists
        self.counts = PassCounts()

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
        decoded = quick_decode(data, self.payload)
        self.kinds[decoded.kind.value] += 1
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
        """A payload's flat view (see codec.payloads): key -> (dtype, values)."""
        stats = self.features
        for key, (dtype, values) in fields.items():
            acc = stats.get(key)
            if acc is None:
                acc = stats[key] = FeatureStats(key)
            acc.present += 1
            if dtype == "int64":
                acc.add_values("int64_list", int64_values(values))
            else:
                acc.add_values("float_list" if dtype == "float" else "bytes_list", values)

    def _add_features(self, features) -> None:
        stats = self.features
        for key in features:
            acc = stats.get(key)
            if acc is None:
                acc = stats[key] = FeatureStats(key)
            acc.present += 1
            acc.add_feature(features[key])

    def to_json(self) -> dict:
        """The ``tfrlens-cli stats --json`` object (see the module docstring)."""
        out: dict = {"records": self.records, "kinds": {k: n for k, n in self.kinds.items() if n},
                     "raw_records": self.raw_records, "damaged_records": self.damaged_records}
        features = {name: self.features[name].to_json() for name in sorted(self.features)}
        if self.labels:
            for name, feature in features.items():
                self._name_classes(name, feature)
        if self.is_sequence:
            out["context"] = features
            out["sequence"] = {name: self.sequence[name].to_json() for name in sorted(self.sequence)}
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
    yield from record_pass(tfile, result.add, indices, result.counts)


def compute_stats(tfile, indices: Sequence[int] | None = None) -> FileStats:
    """:func:`stats_iter` run to the end."""
    result = FileStats()
    for _ in stats_iter(tfile, indices, result):
        pass
    return result
