"""What the app draws of a clip: a min/max waveform envelope (and its pyramid), a log-magnitude
spectrogram with its colours, and the axes' ticks.

numpy only (no Qt): the envelope is min/max decimation, so a peak one sample wide still shows
at any zoom; the spectrogram is a Hann-windowed STFT over strided frames.
"""
from __future__ import annotations

import numpy as np

__all__ = ["DB_FLOOR", "DB_RANGE", "PYRAMID_FACTOR", "SPECTROGRAM_COLORS", "EnvelopePyramid", "clock_text",
           "frequency_ticks", "hz_text", "spectrogram", "spectrogram_levels", "time_ticks", "waveform_envelope"]

DB_FLOOR = -120.0  # dB given to silent bins (log of zero)
DB_RANGE = 80.0  # the colours span the clip's loudest bin down to this many dB below it
PYRAMID_FACTOR = 8  # frames per entry grow by this from one pyramid level to the next

# Magma (van der Walt and Smith, CC0), every 16th of its 256 colours and the last, as 0-255 RGB.
_MAGMA_ANCHORS = np.array([
    (0, 0, 4), (10, 8, 34), (29, 17, 71), (54, 16, 107), (81, 18, 124), (106, 28, 129), (131, 38, 129),
    (156, 46, 127), (183, 55, 121), (208, 65, 111), (231, 82, 99), (245, 107, 92), (252, 137, 97),
    (254, 167, 114), (254, 196, 136), (253, 226, 163), (252, 253, 191)], dtype=np.float64)
_ANCHOR_AT = np.minimum(np.arange(len(_MAGMA_ANCHORS)) * 16, 255)
# 256 x 3 uint8: the colour of each spectrogram level, dark (quiet) to light yellow (loudest).
SPECTROGRAM_COLORS = np.stack([np.interp(np.arange(256), _ANCHOR_AT, _MAGMA_ANCHORS[:, k]) for k in range(3)],
                              axis=1).round().astype(np.uint8)


def waveform_envelope(samples: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(mins, maxs), each ``channels x n`` with n = min(columns, frames): the extremes of each column's
    run of frames. The first ``frames % n`` columns hold one frame more than the rest (runs stay
    contiguous). ``samples`` is frames x channels, or 1-D for one channel."""
    data = samples.reshape(-1, 1) if samples.ndim == 1 else samples
    frames, channels = data.shape
    n = max(0, min(int(columns), frames))
    if n == 0:
        empty = np.zeros((channels, 0), dtype=data.dtype)
        return empty, empty.copy()
    q, r = divmod(frames, n)
    long_runs = data[: r * (q + 1)].reshape(r, q + 1, channels)
    short_runs = data[r * (q + 1):].reshape(n - r, q, channels)
    mins = np.concatenate([_fold(long_runs, np.minimum), _fold(short_runs, np.minimum)])
    maxs = np.concatenate([_fold(long_runs, np.maximum), _fold(short_runs, np.maximum)])
    return mins.T.copy(), maxs.T.copy()


def _fold(runs: np.ndarray, op: np.ufunc) -> np.ndarray:
    """``op`` over axis 1 of runs x frames x channels by halving: each step an element-wise op on
    contiguous blocks (SIMD), where ``op.reduce(axis=1)`` would step through the interleaved channels."""
    while runs.shape[1] > 1:
        half = runs.shape[1] // 2
        folded = op(runs[:, :half], runs[:, half:2 * half])
        if runs.shape[1] % 2:
            op(folded[:, 0], runs[:, 2 * half], out=folded[:, 0])
        runs = folded
    return runs[:, 0] if runs.shape[1] else np.zeros((runs.shape[0], runs.shape[2]), dtype=runs.dtype)


def spectrogram(samples: np.ndarray, rate: int, n_fft: int = 512, hop: int | None = None) -> np.ndarray:
    """Log magnitude in dB, ``(n_fft // 2 + 1) x frames`` (row k is k * rate / n_fft Hz), of the
    channels' mean. A clip shorter than ``n_fft`` is zero-padded to one frame."""
    del rate  # the bins' frequencies follow from it; the values do not
    hop = hop or n_fft // 4
    data = samples.reshape(-1, 1) if samples.ndim == 1 else samples
    if len(data) < n_fft:
        data = np.pad(data, ((0, n_fft - len(data)), (0, 0)))
    # Only the frames' own samples are converted: with a long hop that is a small part of the clip.
    windows = np.lib.stride_tricks.sliding_window_view(data, n_fft, axis=0)[::hop]  # frames x channels x n_fft
    frames = windows.astype(np.float32).mean(axis=1)
    if np.issubdtype(samples.dtype, np.integer):
        frames /= float(np.iinfo(samples.dtype).max) + 1.0
    window = np.hanning(n_fft).astype(np.float32)
    magnitude = np.abs(np.fft.rfft(frames * window, axis=1)).T
    with np.errstate(divide="ignore"):
        db = 20.0 * np.log10(magnitude / (window.sum() / 2))
    return np.maximum(db, DB_FLOOR).astype(np.float32)


def spectrogram_levels(db: np.ndarray, db_range: float = DB_RANGE, top: float | None = None) -> np.ndarray:
    """``db`` as 0-255 levels (indices into SPECTROGRAM_COLORS): the loudest bin (or ``top`` dB: a part
    coloured as its whole clip) 255, ``db_range`` dB below it and quieter 0. The top is at least
    DB_FLOOR + db_range, so silence stays 0."""
    loudest = top if top is not None else (float(db.max()) if db.size else DB_FLOOR)
    top = max(loudest, DB_FLOOR + db_range)
    return np.clip((db - (top - db_range)) * (255.0 / db_range), 0, 255).round().astype(np.uint8)


class EnvelopePyramid:
    """A clip's min/max at decimations of PYRAMID_FACTOR, 64, 512... frames, built once in O(frames).

    :meth:`envelope` then gives exactly ``waveform_envelope(samples[start:end], columns)`` from at most
    PYRAMID_FACTOR entries per column and level: a zoom or scroll step costs O(columns), not O(frames).
    """

    def __init__(self, samples: np.ndarray, factor: int = PYRAMID_FACTOR) -> None:
        data = samples.reshape(-1, 1) if samples.ndim == 1 else samples
        self.frames, self.channels = data.shape
        self.dtype = data.dtype
        self.factor = factor
        # level l: (mins, maxs), entries x channels, entry i the extremes of frames [i, i + 1) * factor**l
        self.levels: list[tuple[np.ndarray, np.ndarray]] = [(data, data)]
        mins = maxs = data
        while len(mins) > factor:
            mins, maxs = _decimate(mins, np.minimum, factor), _decimate(maxs, np.maximum, factor)
            self.levels.append((mins, maxs))

    def envelope(self, start: int, end: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
        """(mins, maxs) of frames [start, end), each ``channels x n``, as :func:`waveform_envelope`."""
        start, end = max(0, int(start)), min(self.frames, int(end))
        span = max(0, end - start)
        n = max(0, min(int(columns), span))
        if n == 0:
            empty = np.zeros((self.channels, 0), dtype=self.dtype)
            return empty, empty.copy()
        q, r = divmod(span, n)
        sizes = np.full(n, q, dtype=np.int64)
        sizes[:r] += 1
        edges = start + np.concatenate([[0], np.cumsum(sizes)])
        s, e = edges[:-1], edges[1:]
        top = 0  # the coarsest level whose entries fit in a column
        while top + 1 < len(self.levels) and self.factor ** (top + 1) <= q + (r > 0):
            top += 1
        # Each column splits at m, the last boundary of the coarsest entry inside it: the part before m
        # ends on an entry boundary of every level, the part after starts on one, so each part takes
        # whole entries from the coarsest level down, fewer than ``factor`` per level.
        m = e.copy()
        for level in range(1, top + 1):
            b = self.factor ** level
            at = (e // b) * b
            m = np.where(at >= s, at, m)
        lo_fill, hi_fill = _extreme_values(self.dtype)
        # Rows 0..n-1 gather each column's part before m, rows n..2n-1 its part after.
        mins = np.full((2 * n, self.channels), lo_fill, dtype=self.dtype)
        maxs = np.full((2 * n, self.channels), hi_fill, dtype=self.dtype)
        starts, ends = np.concatenate([s, m]), np.concatenate([m, e])
        head = np.arange(2 * n) < n
        for level in range(top, -1, -1):
            b = self.factor ** level
            level_mins, level_maxs = self.levels[level]
            first, last = -(-starts // b), ends // b
            _take(level_mins, level_maxs, first, last, mins, maxs, lo_fill, hi_fill)
            taken = last > first
            # left for finer levels: [start, first * b) of a part before m, [last * b, end) of one after
            ends = np.where(head & taken, first * b, ends)
            starts = np.where(~head & taken, last * b, starts)
        mins, maxs = np.minimum(mins[:n], mins[n:]), np.maximum(maxs[:n], maxs[n:])
        return mins.T.copy(), maxs.T.copy()


def _decimate(values: np.ndarray, op: np.ufunc, factor: int) -> np.ndarray:
    """``op`` over each run of ``factor`` rows of ``values`` (entries x channels); a shorter last run too."""
    whole = len(values) // factor
    out = _fold(values[: whole * factor].reshape(whole, factor, values.shape[1]), op)
    if len(values) % factor:
        out = np.concatenate([out, op.reduce(values[whole * factor:], axis=0, keepdims=True)])
    return out


def _extreme_values(dtype: np.dtype) -> tuple:
    """(highest, lowest) values of ``dtype``: what a min or a max over nothing starts from."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max, info.min
    return np.inf, -np.inf


def _take(level_mins, level_maxs, first, last, mins, maxs, lo_fill, hi_fill) -> None:
    """Fold entries [first, last) of a level into each column's ``mins`` and ``maxs`` (in place)."""
    width = int((last - first).max(initial=0))
    if width <= 0:
        return
    # Entry k of each range, its last entry again where the range is shorter (harmless to a min or a
    # max); an empty range reads some entry and is masked out after.
    final = np.clip(last - 1, 0, len(level_mins) - 1)
    idx = np.minimum(first, final)
    low, high = level_mins[idx], level_maxs[idx]
    for k in range(1, width):
        idx = np.minimum(first + k, final)
        np.minimum(low, level_mins[idx], out=low)
        np.maximum(high, level_maxs[idx], out=high)
    empty = (last <= first)[:, None]
    np.minimum(mins, np.where(empty, lo_fill, low), out=mins)
    np.maximum(maxs, np.where(empty, hi_fill, high), out=maxs)


# ---------------------------------------------------------------- axes


def clock_text(seconds: float, decimals: int = 1) -> str:
    """``seconds`` as m:ss.s (``decimals`` after the point): 75.34 -> "1:15.3"."""
    units = round(max(0.0, seconds) * 10 ** decimals)
    minutes, rest = divmod(units, 60 * 10 ** decimals)
    if decimals <= 0:
        return f"{minutes}:{rest:02d}"
    return f"{minutes}:{rest / 10 ** decimals:0{3 + decimals}.{decimals}f}"


def hz_text(hz: float) -> str:
    """500 -> "500 Hz", 2500 -> "2.5 kHz", 8000 -> "8 kHz"."""
    return f"{hz / 1000:g} kHz" if hz >= 1000 else f"{hz:g} Hz"


def _nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 5 x 10^k that cuts ``span`` into at most ``most`` steps."""
    raw = span / max(1, most)
    power = 10.0 ** np.floor(np.log10(raw)) if raw > 0 else 1.0
    for mult in (1, 2, 5, 10):
        if mult * power >= raw:
            return float(mult * power)
    return float(10 * power)


def frequency_ticks(rate: int, most: int = 5) -> list[tuple[float, str]]:
    """(Hz, label) of round frequencies from 0 to the Nyquist frequency ``rate / 2``, at most ``most`` + 1."""
    nyquist = rate / 2
    if nyquist <= 0:
        return []
    step = _nice_step(nyquist, most)
    return [(k * step, hz_text(k * step)) for k in range(int(nyquist // step + 1e-9) + 1)]


# Round steps of a second or more: minutes and their usual parts.
_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 18000, 36000, 86400)


def time_ticks(start: float, end: float, most: int = 8) -> list[tuple[float, str]]:
    """(seconds, m:ss.s label) of round times in [start, end], at most about ``most``; the labels carry
    as many decimals as the step needs (up to 3)."""
    if end <= start:
        return []
    span = end - start
    step = _nice_step(span, most)
    if span > most:  # a second or more a step: a round number of seconds or minutes
        step = float(next((t for t in _TIME_STEPS if t * most >= span), _TIME_STEPS[-1]))
    decimals = int(min(3, max(0, -np.floor(np.log10(step) + 1e-9))))
    first = int(np.ceil(start / step - 1e-9))
    last = int(np.floor(end / step + 1e-9))
    return [(k * step, clock_text(k * step, decimals)) for k in range(first, last + 1)]
