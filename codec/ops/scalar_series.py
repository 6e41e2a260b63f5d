"""What a Scalars view plots, without Qt: points per tag and run, smoothing, axis ticks, histograms.

:class:`LogSeries` takes a log's event records as they are read (record by record,
a run at a time, and more as a followed file grows) and keeps each tag's scalar
points per run, and each histogram tag's distributions per run, in the order read.
Scalars are the points ``tfrlens-cli scalars`` prints (:mod:`codec.ops.scalars`);
histograms are TF1 ``histo`` values (HistogramProto) and TF2 tensors of the
``histograms`` plugin (k×3: left edge, right edge, count), as TensorBoard reads them.
"""
from __future__ import annotations

import fnmatch
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NamedTuple

import numpy as np

from codec.ops.scalars import ScalarPoint, may_have_summary, point_value

__all__ = ["AXES", "HISTOGRAMS_PLUGIN", "EventPoints", "HistogramPoint", "LogSeries", "PointsBatch", "RunSeries", "SeriesBatch",
           "histogram_buckets", "log_points_iter", "nice_ticks", "run_namer", "smooth", "tag_matcher", "thinned", "tick_label",
           "time_ticks"]

HISTOGRAMS_PLUGIN = "histograms"
HISTOGRAMS_KEPT = 1000  # per tag and run, at least this many and at most twice as many are kept (a memory bound)
STEP, RELATIVE, WALL = "step", "relative", "wall"
AXES = (STEP, RELATIVE, WALL)  # the x axes: the step, hours since the run's first point, the wall time


class HistogramPoint(NamedTuple):
    """One histogram of a run's tag at a step: ``buckets`` a k×3 float64 array of (left, right, count) rows."""

    run: str
    tag: str
    step: int
    wall_time: float
    buckets: np.ndarray


@dataclass
class RunSeries:
    """One run's points of one tag, in the order read."""

    steps: list[int] = field(default_factory=list)
    wall_times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def xs(self, axis: str, start: float) -> list[float]:
        """The x of each point on ``axis`` (``start``: the run's first wall time, for RELATIVE hours)."""
        if axis == STEP:
            return [float(s) for s in self.steps]
        if axis == RELATIVE:
            return [(t - start) / 3600.0 for t in self.wall_times]
        return list(self.wall_times)


class EventPoints:
    """Reads event records into points: a run's tags' plugins are remembered (a tag's plugin is named on
    its first value only), so one reader goes over a run's records in order (a worker's, say)."""

    def __init__(self) -> None:
        from codec.decode.events import event_class

        self._parse = event_class().FromString
        self._plugins: dict[str, dict[str, str]] = {}  # run -> tag -> the plugin its first metadata named
        self.not_events = 0  # intact records that are not Events (left out)

    def points(self, run: str, data: bytes) -> list[ScalarPoint | HistogramPoint]:
        """The scalar and histogram points of one event record of ``run`` (none for other events)."""
        from google.protobuf.message import DecodeError

        if not may_have_summary(data):
            return []
        try:
            event = self._parse(data)
        except (DecodeError, RuntimeError, ValueError):
            self.not_events += 1
            return []
        if not event.HasField("summary"):
            return []
        plugins = self._plugins.setdefault(run, {})
        out: list[ScalarPoint | HistogramPoint] = []
        for value in event.summary.value:
            number = point_value(value, plugins)
            if number is not None:
                out.append(ScalarPoint(run, value.tag, event.step, event.wall_time, number))
                continue
            buckets = histogram_buckets(value, plugins)
            if buckets is not None:
                out.append(HistogramPoint(run, value.tag, event.step, event.wall_time, buckets))
        return out


class SeriesBatch:
    """Points grouped as a :class:`LogSeries` keeps them, made where they are read (a worker), so that
    keeping them is a few list extends per tag and run, whatever their number."""

    def __init__(self) -> None:
        self.points: list[ScalarPoint] = []  # in the order read
        self.series: dict[tuple[str, str], RunSeries] = {}  # (tag, run) -> its points here
        self.histograms: list[HistogramPoint] = []
        self.started: dict[str, float] = {}  # run -> its first point's wall time here, in the order seen

    def __len__(self) -> int:
        return len(self.points) + len(self.histograms)

    def add(self, point: ScalarPoint | HistogramPoint) -> None:
        if point.run not in self.started:
            self.started[point.run] = point.wall_time
        if isinstance(point, HistogramPoint):
            self.histograms.append(point)
            return
        self.points.append(point)
        series = self.series.get((point.tag, point.run))
        if series is None:
            series = self.series[(point.tag, point.run)] = RunSeries()
        series.steps.append(point.step)
        series.wall_times.append(point.wall_time)
        series.values.append(point.value)


class PointsBatch(NamedTuple):
    """Points read from a log's records (a pass's progress): how far it came, what it found."""

    found: SeriesBatch
    records: int  # records gone through so far
    fraction: float
    not_events: int


def run_namer(source) -> Callable[[int], str]:
    """Record number -> its run: a log folder's runs (``source.payload.runs``); a file on its own is a
    run named by its folder's name."""
    runs = source.payload.runs if source.payload is not None else {}
    if not source.is_set:
        name = runs.get(source.path) or os.path.basename(os.path.dirname(os.path.abspath(source.path))) or "."
        return lambda _i: name
    names = [runs.get(path) or os.path.basename(os.path.dirname(path)) or "." for path in source.files]
    return lambda i: names[source.shard_of(i)]


def log_points_iter(source, reader: EventPoints, start: int = 0, stop: int | None = None,
                    every: int = 2000) -> Iterator[PointsBatch]:
    """The points of ``source``'s intact records (a log: one event file or a set of them) from record
    ``start`` (to ``stop``, else all), a batch every ``every`` records; the last batch says 1.0."""
    from codec.index.scan import IndexProgress
    from codec.sources.record_pass import iter_records

    run_of = run_namer(source)
    indices = None if start == 0 and stop is None else range(start, len(source) if stop is None else stop)
    batch = SeriesBatch()
    seen = 0
    for item in iter_records(source, indices, every, intact_only=True):
        if isinstance(item, IndexProgress):
            yield PointsBatch(batch, seen, item.fraction, reader.not_events)
            batch = SeriesBatch()
            continue
        seen += 1
        for point in reader.points(run_of(item[0]), item[1]):
            batch.add(point)
    yield PointsBatch(batch, seen, 1.0, reader.not_events)


class LogSeries:
    """Scalar and histogram points of a log's runs, by tag then run (see the module docstring)."""

    def __init__(self) -> None:
        self.points: list[ScalarPoint] = []  # every scalar point in the order read (what an export writes)
        self.scalars: dict[str, dict[str, RunSeries]] = {}
        self.histograms: dict[str, dict[str, list[HistogramPoint]]] = {}
        self.runs: list[str] = []  # in the order first read
        self.started: dict[str, float] = {}  # run -> its first point's wall time (RELATIVE's zero)
        self._reader: EventPoints | None = None
        self._thinning: dict[tuple[str, str], list] = {}  # (tag, run) -> see _keep_histogram

    def add(self, points: Iterable[ScalarPoint | HistogramPoint]) -> None:
        """Keep ``points`` (read by an :class:`EventPoints`), after those kept before."""
        batch = SeriesBatch()
        for point in points:
            batch.add(point)
        self.merge(batch)

    def merge(self, batch: SeriesBatch) -> None:
        """Keep a batch's points after those kept before."""
        for run, wall_time in batch.started.items():
            if run not in self.started:
                self.runs.append(run)
                self.started[run] = wall_time
        self.points.extend(batch.points)
        for (tag, run), found in batch.series.items():
            series = self.scalars.setdefault(tag, {}).setdefault(run, RunSeries())
            series.steps.extend(found.steps)
            series.wall_times.extend(found.wall_times)
            series.values.extend(found.values)
        for point in batch.histograms:
            self._keep_histogram(point)

    def _keep_histogram(self, point: HistogramPoint) -> None:
        """Keep every stride-th histogram of its tag and run, and the latest; past twice HISTOGRAMS_KEPT the
        stride doubles (every other one goes), so those kept stay spread evenly over the run."""
        kept = self.histograms.setdefault(point.tag, {}).setdefault(point.run, [])
        thinning = self._thinning.setdefault((point.tag, point.run), [1, 0, []])  # stride, seen, kept's numbers
        stride, seen, numbers = thinning
        if numbers and numbers[-1] % stride:  # the latest before, off the stride: this one is the latest now
            kept.pop()
            numbers.pop()
        kept.append(point)
        numbers.append(seen)
        thinning[1] = seen + 1
        if len(kept) > 2 * HISTOGRAMS_KEPT:
            stride = thinning[0] = stride * 2
            chosen = [k for k, n in enumerate(numbers) if n % stride == 0 or k == len(numbers) - 1]
            kept[:] = [kept[k] for k in chosen]
            numbers[:] = [numbers[k] for k in chosen]

    def add_record(self, run: str, data: bytes) -> int:
        """Read and keep one event record of ``run`` (a reader of this series' own); the points it held."""
        if self._reader is None:
            self._reader = EventPoints()
        points = self._reader.points(run, data)
        self.add(points)
        return len(points)

    @property
    def not_events(self) -> int:
        return 0 if self._reader is None else self._reader.not_events

    def scalar_tags(self, pattern: str = "") -> list[str]:
        """The scalar tags (sorted) that the glob ``pattern`` matches (every tag for "")."""
        return _matching(self.scalars, pattern)

    def histogram_tags(self, pattern: str = "") -> list[str]:
        return _matching(self.histograms, pattern)

    def shown_points(self, tags: Iterable[str], runs: Iterable[str]) -> Iterator[ScalarPoint]:
        """The points of ``tags`` and ``runs``, in the order read (``tfrlens-cli scalars``'s order)."""
        tags, runs = set(tags), set(runs)
        return (p for p in self.points if p.tag in tags and p.run in runs)


def _matching(by_tag: dict, pattern: str) -> list[str]:
    match = tag_matcher(pattern)
    return sorted(tag for tag in by_tag if match(tag))


def tag_matcher(pattern: str):
    """A test of a tag against a glob as ``scalars --tag`` takes it (``*`` crosses ``/``); a pattern
    without a glob character matches tags containing it, as a filter box is expected to."""
    pattern = pattern.strip()
    if not pattern:
        return lambda _tag: True
    if not any(c in pattern for c in "*?["):
        return lambda tag: pattern in tag
    match = re.compile(fnmatch.translate(pattern)).match
    return lambda tag: match(tag) is not None


def smooth(values: list[float], weight: float) -> list[float]:
    """TensorBoard's smoothing: an exponential moving average debiased by ``1 - weight**n`` (so the first
    points are not pulled to 0). Non-finite values are kept as they are and skipped by the average; a
    constant series is returned unchanged, as TensorBoard does."""
    if not values or weight <= 0:
        return list(values)
    first = values[0]
    if all(v == first for v in values):
        return list(values)
    out = []
    last, n = 0.0, 0
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1.0 - weight) * v
        n += 1
        out.append(last / (1.0 - weight ** n) if weight < 1 else last)
    return out


def thinned(xs, ys, x0: float, x1: float, columns: int):
    """Indices of the points worth drawing of a line ``columns`` pixels wide showing ``x0``..``x1``, or None
    for all of them: when there are more than 2 a column, each column keeps its lowest and highest point
    (the line looks the same), and outside the range only the nearest point on each side is kept.
    Non-finite values are left out then (a thinned line is not broken at them)."""
    import numpy as np

    n = len(xs)
    if n <= 2 * max(1, columns) or not x1 > x0:
        return None
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    finite = np.isfinite(x) & np.isfinite(y)
    inside = np.flatnonzero(finite & (x >= x0) & (x <= x1))
    parts = []
    left, right = np.flatnonzero(finite & (x < x0)), np.flatnonzero(finite & (x > x1))
    if left.size:  # the nearest point on each side: the line leaves the view toward it
        parts.append(left[np.argmax(x[left])][None])
    if right.size:
        parts.append(right[np.argmin(x[right])][None])
    if inside.size:
        col = np.minimum(((x[inside] - x0) / (x1 - x0) * columns).astype(np.int64), columns - 1)
        order = np.lexsort((y[inside], col))  # by column, then by value
        cols = col[order]
        starts = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]])
        ends = np.r_[starts[1:], len(order)] - 1
        parts += [inside[order[starts]], inside[order[ends]]]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round numbers (1, 2 or 5 times a power of ten apart) from ``lo`` to ``hi``, about ``target`` of them."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        return [lo]
    raw = (hi - lo) / max(1, target)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * 0.999)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + step * 1e-9:
        ticks.append(_clean(k * step, step))
        k += 1
    return ticks


def _clean(value: float, step: float) -> float:
    """``value`` rounded to the digits ``step`` has (no 0.30000000000000004 on an axis)."""
    digits = max(0, -math.floor(math.log10(step)) + 1)
    out = round(value, digits)
    return 0.0 if out == 0 else out


def tick_label(value: float, step: float) -> str:
    """A tick's text: as few digits as the spacing needs (``1e-05``-style far from 1)."""
    if value == 0:
        return "0"
    magnitude = max(abs(value), abs(step))
    if magnitude >= 1e6 or magnitude < 1e-4:
        return f"{value:.3g}"
    digits = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:.{digits}f}"


_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
               2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400)


def time_ticks(lo: float, hi: float, target: int = 5) -> list[tuple[float, str]]:
    """(seconds since the epoch, local-time label) at round times between ``lo`` and ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [(lo, _time_text(lo, 60, hi - lo))] if math.isfinite(lo) else []
    raw = (hi - lo) / max(1, target)
    step = next((s for s in _TIME_STEPS if s >= raw), None)
    if step is None:  # months apart: round days
        step = 86400 * math.ceil(raw / 86400)
    offset = -time.localtime(lo).tm_gmtoff if step >= 3600 else 0  # round hours and days in local time
    first = math.ceil((lo - offset) / step) * step + offset
    out: list[tuple[float, str]] = []
    t = float(first)
    while t <= hi:
        out.append((t, _time_text(t, step, hi - lo)))
        t += step
    return out


def _time_text(t: float, step: float, span: float) -> str:
    try:
        when = time.localtime(t)
    except (OverflowError, ValueError, OSError):
        return repr(t)
    if span >= 86400:
        return time.strftime("%m-%d %H:%M", when)
    return time.strftime("%H:%M:%S" if step < 60 else "%H:%M", when)


def histogram_buckets(value, plugins: dict[str, str]) -> np.ndarray | None:
    """The buckets of a summary value that is a histogram (a k×3 float64 array: left, right, count), or None.

    TF1 ``histo``: bucket i spans the previous limit to ``bucket_limit[i]``, the first from ``min`` and the
    last to ``max`` (TensorBoard's own migration). TF2: a k×3 float tensor of the ``histograms`` plugin."""
    kind = value.WhichOneof("value")
    if kind == "histo":
        h = value.histo
        limits, counts = list(h.bucket_limit), list(h.bucket)
        if not counts or len(limits) != len(counts):
            return None
        return np.array([[h.min, *limits[:-1]], [*limits[:-1], h.max], counts], dtype=np.float64).T.copy()
    if kind != "tensor" or plugins.get(value.tag) != HISTOGRAMS_PLUGIN:
        return None
    return _bucket_tensor(value.tensor)


_FLOATS = {1: ("<f4", "float_val"), 2: ("<f8", "double_val")}  # DT_FLOAT, DT_DOUBLE


def _bucket_tensor(tensor) -> np.ndarray | None:
    dims = [d.size for d in tensor.tensor_shape.dim]
    spec = _FLOATS.get(tensor.dtype)
    if spec is None or len(dims) != 2 or dims[1] != 3 or dims[0] < 0:
        return None
    dtype, list_name = spec
    n = dims[0] * 3
    if tensor.tensor_content:
        if len(tensor.tensor_content) != n * np.dtype(dtype).itemsize:
            return None
        flat = np.frombuffer(tensor.tensor_content, dtype=dtype)
    else:
        values = getattr(tensor, list_name)
        if len(values) == 1 and n > 1:  # one value stands for all (TensorProto's rule)
            flat = np.full(n, values[0], dtype=np.float64)
        elif len(values) == n:
            flat = np.array(values, dtype=np.float64)
        else:
            return None
    return flat.astype(np.float64).reshape(dims[0], 3)
