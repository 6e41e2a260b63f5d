"""What the app draws of a clip: a min/max waveform envelope and a log-magnitude spectrogram.

numpy only (no Qt): the envelope is min/max decimation, so a peak one sample wide still shows
at any zoom; the spectrogram is a Hann-windowed STFT over strided frames.
"""
from __future__ import annotations

import numpy as np

__all__ = ["DB_FLOOR", "spectrogram", "waveform_envelope"]

DB_FLOOR = -120.0  # dB given to silent bins (log of zero)


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
