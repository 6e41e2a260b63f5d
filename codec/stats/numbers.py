"""Number accumulators of :mod:`codec.stats.file_stats` whose results depend only on the multiset of values.

Whatever order values arrive in, and however a file's records are split into
parts whose accumulators are merged, the results are the same bit for bit:
sums are exact (integers, and float64 values as exact dyadic integers),
min/max treat -0.0 as 0.0, and histograms switch from exact values to fine
bins on a power-of-two grid fixed by the values' range alone.
"""
from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

__all__ = ["EXACT_VALUES", "FINE_BINS", "HIST_BINS", "MAX_TRACKED", "TOP_N", "IntPending", "Numbers", "Pending",
           "f32"]

TOP_N = 10
MAX_TRACKED = 10_000
HIST_BINS = 20
EXACT_VALUES = 1 << 16
FLUSH_VALUES = 1 << 16  # values a Pending holds before folding them in
FINE_BINS = 4096
_SLICE = 1 << 16  # values per exact-sum step: every partial sum stays below 2**53
_SCALE = 1126  # float64 x == M * 2**(e - 53) with e - 53 >= -1126: sums are kept times 2**_SCALE
_F32_MAX = float(np.finfo(np.float32).max)
_FINEST = 60  # fine bins are at least max|x| / 2**60 wide: grid indexes fit int64


def f32(x: float) -> float:
    """A float32 value as its shortest decimal (0.1, not 0.10000000149011612); a wider float64 as it is."""
    return float(str(np.float32(x))) if abs(x) <= _F32_MAX else float(x)


def _int_sums(x: np.ndarray, lo: int, hi: int, squares: bool) -> tuple[int, int]:
    """Exact sum and sum of squares of int64 values within [lo, hi]."""
    n = x.size
    total = (int((x >> 32).sum()) << 32) + int((x & 0xFFFFFFFF).sum())
    if not squares:
        return total, 0
    big = max(-lo, hi)
    if big * big * n < 1 << 63:
        return total, int(np.dot(x, x))
    u = np.abs(x).view(np.uint64)  # |-2**63| is 2**63 as uint64
    limbs = [((u >> np.uint64(16 * k)) & np.uint64(0xFFFF)).astype(np.int64) for k in range(4)]
    sq = 0
    for i in range(4):
        for j in range(i, 4):
            part = int(np.dot(limbs[i], limbs[j]))
            sq += (part << (16 * (i + j))) * (1 if i == j else 2)
    return total, sq


def _float_sums(x: np.ndarray, squares: bool) -> tuple[int, int]:
    """Exact sum (times 2**_SCALE) and sum of squares (times 2**(2*_SCALE)) of finite float64 values."""
    total = sq = 0
    for start in range(0, x.size, _SLICE):
        m, e = np.frexp(x[start:start + _SLICE])
        mant = (m * (1 << 53)).astype(np.int64)  # exact: |mant| < 2**53
        emin = int(e.min())
        group = e - emin
        nbins = int(group.max()) + 1
        # Every per-exponent partial sum below is an integer under 2**53, so float64 bincount is exact.
        hi = np.bincount(group, weights=mant >> 26, minlength=nbins)
        lo = np.bincount(group, weights=mant & 0x3FFFFFF, minlength=nbins)
        if squares:
            a = np.abs(mant)
            c, b, a = a & 0x3FFFF, (a >> 18) & 0x3FFFF, a >> 36
            terms = [(np.bincount(group, weights=w, minlength=nbins), s)
                     for w, s in ((c * c, 0), (b * c, 19), (b * b + 2 * a * c, 36), (a * b, 55), (a * a, 72))]
        for g in np.flatnonzero(np.bincount(group, minlength=nbins)).tolist():
            shift = g + emin - 53 + _SCALE
            total += ((int(hi[g]) << 26) + int(lo[g])) << shift
            if squares:
                sq += sum(int(t[g]) << s for t, s in terms) << (2 * shift)
    return total, sq


def _grid_index(x: np.ndarray, k: int) -> np.ndarray:
    """floor(x / 2**k) as int64, exact even where x / 2**k underflows."""
    idx = np.floor(np.ldexp(x, -k)).astype(np.int64)
    idx[(x < 0) & (idx >= 0)] = -1
    return idx


def _grid(lo: float, hi: float) -> int:
    """The smallest power-of-two bin width (its exponent) whose aligned bins hold [lo, hi] in FINE_BINS."""
    k = math.frexp(max(-lo, hi))[1] - _FINEST
    span = hi - lo
    if math.isfinite(span):  # from a width where the span needs more than 2 * FINE_BINS bins: no need to look lower
        k = max(k, math.frexp(span)[1] - FINE_BINS.bit_length() - 2)
    ends = np.array([lo, hi])
    while True:
        a, b = _grid_index(ends, k).tolist()
        if b - a < FINE_BINS:
            return k
        k += 1


class Histogram:
    """Counts of finite numbers: exact values while few, then FINE_BINS bins of width 2**k aligned at 0."""

    def __init__(self) -> None:
        self._exact: list[np.ndarray] = []
        self._exact_n = 0
        self._fine: np.ndarray | None = None
        self._k = 0
        self._base = 0  # grid index of the first fine bin
        self._lo = math.inf
        self._hi = -math.inf

    def add(self, x: np.ndarray) -> None:
        if not x.size:
            return
        x = x.astype(np.float64, copy=False)
        if self._fine is None:
            self._exact.append(x.copy())
            self._exact_n += x.size
            if self._exact_n > EXACT_VALUES:
                values = np.concatenate(self._exact)
                self._exact, self._exact_n = [], 0
                self._to_fine(float(values.min()) + 0.0, float(values.max()) + 0.0)
                self._add_fine(values)
            return
        self._cover(float(x.min()) + 0.0, float(x.max()) + 0.0)
        self._add_fine(x)

    def _to_fine(self, lo: float, hi: float) -> None:
        self._lo, self._hi = lo, hi
        self._k = _grid(lo, hi)
        self._base = int(_grid_index(np.array([lo]), self._k)[0])
        self._fine = np.zeros(FINE_BINS, dtype=np.int64)

    def _add_fine(self, x: np.ndarray) -> None:
        idx = _grid_index(x, self._k) - self._base
        self._fine += np.bincount(idx, minlength=FINE_BINS)

    def _cover(self, lo: float, hi: float) -> None:
        """Coarsen the grid (exactly: bins only ever pair up) until it holds [lo, hi] too."""
        lo, hi = min(lo, self._lo), max(hi, self._hi)
        if lo == self._lo and hi == self._hi:
            return
        k = _grid(lo, hi)
        base = int(_grid_index(np.array([lo]), k)[0])
        fine = np.zeros(FINE_BINS, dtype=np.int64)
        _regroup(fine, base, k, self._fine, self._base, self._k)
        self._fine, self._k, self._base, self._lo, self._hi = fine, k, base, lo, hi

    def merge(self, other: Histogram) -> None:
        if other._fine is None:
            for values in other._exact:
                self.add(values)
            return
        if self._fine is None:
            mine = self._exact
            self._exact, self._exact_n = [], 0
            self._fine, self._k, self._base = other._fine.copy(), other._k, other._base
            self._lo, self._hi = other._lo, other._hi
            for values in mine:
                self.add(values)
            return
        self._cover(other._lo, other._hi)
        _regroup(self._fine, self._base, self._k, other._fine, other._base, other._k)

    def result(self, vmin, vmax, integer: bool, exact_counts: dict | None = None, double: bool = False) -> dict:
        """{"edges", "counts"} over [vmin, vmax] in HIST_BINS bins at most.

        Integers get integer edges, each bin [edge, next edge), and exact
        counts are binned in integer arithmetic (exact to 2**64); floats get
        equal bins, the last one closed, edges shown as float32 unless ``double``;
        one value gives one bin [v, v].
        """
        if vmin is None:
            return {"edges": [], "counts": []}
        if integer:
            width = -(-(vmax - vmin + 1) // HIST_BINS)
            bins = -(-(vmax - vmin + 1) // width)
            out_edges: list = [int(vmin) + k * width for k in range(bins + 1)]
            if exact_counts is not None:
                counts = [0] * bins
                for v, c in exact_counts.items():
                    counts[(int(v) - int(vmin)) // width] += c
                return {"edges": out_edges, "counts": counts}
            edges = np.array(out_edges, dtype=np.float64)
        elif vmin == vmax:
            edges = np.array([vmin, vmax], dtype=np.float64)
            out_edges = [float(vmin), float(vmax)] if double else [f32(vmin), f32(vmax)]
        else:
            if math.isfinite(float(vmax) - float(vmin)):
                edges = np.linspace(float(vmin), float(vmax), HIST_BINS + 1)
            else:  # the span overflows float64
                t = np.arange(HIST_BINS + 1) / HIST_BINS
                edges = float(vmin) * (1 - t) + float(vmax) * t
            if double:
                out_edges = [float(e) for e in edges]
                out_edges[0], out_edges[-1] = float(vmin), float(vmax)
            else:
                out_edges = [float(f"{e:.9g}") for e in edges]  # float32 precision
                out_edges[0], out_edges[-1] = f32(vmin), f32(vmax)  # as min and max are shown
        bins = len(edges) - 1
        if self._fine is None:
            values = np.concatenate(self._exact) if self._exact else np.zeros(0)
            counts = _bin(values, edges, None)
        else:
            centers = np.ldexp(self._base + np.arange(FINE_BINS) + 0.5, self._k)
            idx = np.clip(np.searchsorted(edges, centers, side="right") - 1, 0, bins - 1)
            counts = np.bincount(idx, weights=self._fine, minlength=bins)
        return {"edges": out_edges, "counts": [int(c) for c in counts]}


def _regroup(into: np.ndarray, base: int, k: int, counts: np.ndarray, from_base: int, from_k: int) -> None:
    """Add fine bins of the grid (from_base, from_k) into those of the coarser grid (base, k)."""
    held = np.flatnonzero(counts)
    np.add.at(into, ((from_base + held) >> (k - from_k)) - base, counts[held])


def _bin(values: np.ndarray, edges: np.ndarray, weights) -> np.ndarray:
    """Counts per bin, the last bin closed (as numpy.histogram), one bin if edges are equal."""
    bins = len(edges) - 1
    if bins == 1 and edges[0] == edges[1]:
        return np.array([weights.sum() if weights is not None else values.size])
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, bins - 1)
    return np.bincount(idx, weights=weights, minlength=bins)


def _sqrt_ratio(num: int, den: int) -> float:
    """sqrt(num / den) of non-negative integers, also where num / den overflows a float."""
    t = max(0, (num.bit_length() - den.bit_length()) // 2 - 500)
    return math.ldexp(math.sqrt(num / (den << (2 * t))), t)


class Numbers:
    """Exact count/sum/sum of squares, min/max, NaN/inf counts, histogram and value counts."""

    def __init__(self, integer: bool, histogram: bool = True, top: bool = False, double: bool = False) -> None:
        self.integer = integer
        self.double = double  # float64 values, shown in full rather than as float32
        self.count = 0
        self.min: Any = None
        self.max: Any = None
        self.total = 0  # the exact sum (floats: times 2**_SCALE)
        self.squares = 0  # the exact sum of squares (floats: times 2**(2 * _SCALE))
        self.nan = 0
        self.inf = 0
        self.hist = Histogram() if histogram else None
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
        if self.integer:
            lo, hi = int(lo), int(hi)
            total, squares = _int_sums(x, lo, hi, self.hist is not None)
        else:
            lo, hi = float(lo) + 0.0, float(hi) + 0.0  # -0.0 and 0.0 alike, whichever came first
            total, squares = _float_sums(x, self.hist is not None)
        self._extend(lo, hi)
        self.total += total
        self.squares += squares
        self.count += x.size
        if self.hist is not None:
            self.hist.add(x.astype(np.float64))
        if self.top is not None:
            values, counts = np.unique(x, return_counts=True)
            self._count_values(zip(values.tolist(), counts.tolist()))

    def _extend(self, lo, hi) -> None:
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)

    def _count_values(self, pairs) -> None:
        top = self.top
        for v, c in pairs:
            top[v] = top.get(v, 0) + c
        if len(top) > MAX_TRACKED:
            self.top, self.top_overflow = None, True  # not small-cardinality: the histogram says more

    def merge(self, other: Numbers) -> None:
        """Fold ``other``'s values in, as if they had been added here."""
        self.nan += other.nan
        self.inf += other.inf
        if other.count:
            self._extend(other.min, other.max)
            self.count += other.count
            self.total += other.total
            self.squares += other.squares
            if self.hist is not None:
                self.hist.merge(other.hist)
        if self.top is not None or self.top_overflow:
            if other.top is None:
                self.top, self.top_overflow = None, self.top_overflow or other.top_overflow
            elif self.top is not None:
                self._count_values(other.top.items())

    @property
    def mean(self) -> float:
        """The mean, correctly rounded from the exact sum."""
        return self.total / (self.count if self.integer else self.count << _SCALE)

    def summary(self) -> dict:
        """min/max/mean only (values per record, lengths)."""
        if not self.count:
            return {"min": None, "max": None, "mean": None}
        fmt = self._fmt
        return {"min": fmt(self.min), "max": fmt(self.max), "mean": self.mean}

    def _fmt(self, v):
        return int(v) if self.integer else float(v) if self.double else f32(v)

    def std(self) -> float | None:
        if not self.count:
            return None
        n = self.count
        scale = 0 if self.integer else 2 * _SCALE
        return _sqrt_ratio(n * self.squares - self.total * self.total, (n * n) << scale)

    def to_json(self) -> dict:
        out = {"count": self.count + self.nan + self.inf}
        out.update(self.summary())
        out["std"] = self.std()
        out["nan"], out["inf"] = self.nan, self.inf
        if self.hist is not None:
            exact = self.top if self.integer and self.top is not None and self.top else None
            out["histogram"] = self.hist.result(self.min, self.max, self.integer, exact, self.double)
        if self.top is not None:
            out["distinct"] = len(self.top)
            ranked = sorted(self.top.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N]
            out["top"] = [[int(v), int(c)] for v, c in ranked]
        elif self.top_overflow:
            out["distinct"] = None  # more than MAX_TRACKED
        return out


class Pending:
    """Values waiting to be folded into a Numbers in one numpy call.

    ``buf`` stays the same array object for the accumulator's life, so hot
    loops may hold on to it (and to its ``append``/``extend``).
    """

    __slots__ = ("buf", "dtype", "target")

    def __init__(self, typecode: str, target: Numbers) -> None:
        self.buf = array(typecode)
        self.dtype = np.int64 if typecode == "q" else np.float64
        self.target = target

    def flush(self) -> None:
        buf = self.buf
        if buf:
            values = np.frombuffer(buf, dtype=self.dtype).copy()  # the view must go before the array shrinks
            del buf[:]
            self.target.add(values)

    def extend(self, values: np.ndarray) -> None:
        """Many values at once (a batch's, from numpy)."""
        self.buf.frombytes(np.ascontiguousarray(values, dtype=self.dtype).tobytes())
        if len(self.buf) >= FLUSH_VALUES:
            self.flush()

    def merge(self, other: Pending) -> None:
        self.flush()
        other.flush()
        self.target.merge(other.target)


class IntPending(Pending):
    """Integers waiting to be folded into a Numbers: int64 in ``buf``, uint64 past int64's range in ``big``."""

    __slots__ = ("big",)

    def __init__(self, target: Numbers) -> None:
        super().__init__("q", target)
        self.big = array("Q")

    def add_exact(self, values: list) -> None:
        """Python ints of any protobuf integer type (-2**63 .. 2**64 - 1)."""
        if values and max(values) >= 1 << 63:
            self.big.fromlist([v for v in values if v >= 1 << 63])
            values = [v for v in values if v < 1 << 63]
        self.buf.fromlist(values)
        if len(self.buf) + len(self.big) >= FLUSH_VALUES:
            self.flush()

    def flush(self) -> None:
        super().flush()
        if self.big:
            values = np.frombuffer(self.big, dtype=np.uint64).copy()
            del self.big[:]
            self.target.add(values)
