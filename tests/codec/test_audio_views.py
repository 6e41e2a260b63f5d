"""waveform_envelope and spectrogram against synthetic tones."""
from __future__ import annotations

import numpy as np
import pytest

from codec.decode.audio_views import DB_FLOOR, spectrogram, waveform_envelope


@pytest.mark.parametrize("frames,columns", [(1000, 10), (1003, 7), (5, 20), (48000, 1999)])
def test_envelope_is_the_true_extremes_of_each_column(frames: int, columns: int) -> None:
    rng = np.random.default_rng(frames)
    samples = rng.integers(-32768, 32767, size=(frames, 2), dtype=np.int16)
    mins, maxs = waveform_envelope(samples, columns)
    n = min(columns, frames)
    assert mins.shape == maxs.shape == (2, n)
    q, r = divmod(frames, n)
    edges = np.cumsum([0] + [q + 1] * r + [q] * (n - r))
    for c in range(2):
        for i in range(n):
            run = samples[edges[i]:edges[i + 1], c]
            assert mins[c, i] == run.min() and maxs[c, i] == run.max()


def test_envelope_keeps_a_one_sample_spike_and_takes_1d() -> None:
    samples = np.zeros(10_000, dtype=np.float32)
    samples[4321] = 0.9
    samples[7000] = -0.5
    mins, maxs = waveform_envelope(samples, 100)
    assert maxs.shape == (1, 100)
    assert maxs[0, 43] == pytest.approx(0.9) and maxs.max() == pytest.approx(0.9)
    assert mins[0, 70] == pytest.approx(-0.5) and np.count_nonzero(maxs) == 1


def test_envelope_of_nothing_is_empty() -> None:
    mins, maxs = waveform_envelope(np.zeros((0, 1), dtype=np.int16), 100)
    assert mins.shape == maxs.shape == (1, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_a_1khz_sine_peaks_in_the_1khz_bin(dtype: type) -> None:
    rate, n_fft = 16000, 512
    t = np.arange(rate) / rate
    tone = 0.5 * np.sin(2 * np.pi * 1000 * t)
    samples = (tone * 32767).astype(np.int16) if dtype is np.int16 else tone.astype(np.float32)
    db = spectrogram(samples, rate, n_fft=n_fft, hop=128)
    assert db.shape == (n_fft // 2 + 1, 1 + (rate - n_fft) // 128)
    peak_bins = db.argmax(axis=0)
    assert set(peak_bins.tolist()) == {round(1000 * n_fft / rate)}  # bin 32
    assert db[32].mean() == pytest.approx(20 * np.log10(0.5), abs=0.5)  # amplitude 0.5 = -6 dB
    assert db[200].mean() < db[32].mean() - 60


def test_spectrogram_of_silence_and_short_clips() -> None:
    db = spectrogram(np.zeros((100, 2), dtype=np.float32), 8000, n_fft=256)
    assert db.shape == (129, 1) and (db == DB_FLOOR).all()
