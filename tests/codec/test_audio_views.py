"""waveform_envelope, its pyramid, spectrogram and its colours, and the axes' ticks, against synthetic clips."""
from __future__ import annotations

import numpy as np
import pytest

from codec.decode.audio_views import (
    DB_FLOOR,
    DB_RANGE,
    SPECTROGRAM_COLORS,
    EnvelopePyramid,
    clock_text,
    frequency_ticks,
    spectrogram,
    spectrogram_levels,
    time_ticks,
    waveform_envelope,
)


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


@pytest.mark.parametrize("frames,dtype", [(100_003, np.int16), (4_096, np.float32), (9, np.int32)])
def test_pyramid_envelope_equals_the_full_envelope_for_any_range(frames: int, dtype: type) -> None:
    rng = np.random.default_rng(frames)
    if np.issubdtype(dtype, np.integer):
        samples = rng.integers(-30000, 30000, size=(frames, 2)).astype(dtype)
    else:
        samples = rng.uniform(-1, 1, size=(frames, 2)).astype(dtype)
    pyramid = EnvelopePyramid(samples)
    assert [len(mins) for mins, _ in pyramid.levels][-1] <= 8 and pyramid.levels[0][0] is samples  # no copy
    ranges = [(0, frames, 2000), (0, frames, 1), (frames // 3, frames // 3 + 5, 2000), (0, 0, 10)]
    ranges += [(int(a), int(a + rng.integers(0, frames - a + 1)), int(rng.integers(1, 3000)))
               for a in rng.integers(0, frames, size=60)]
    for start, end, columns in ranges:
        mins, maxs = pyramid.envelope(start, end, columns)
        want_mins, want_maxs = waveform_envelope(samples[start:end], columns)
        assert mins.dtype == samples.dtype and mins.shape == want_mins.shape, (start, end, columns)
        assert np.array_equal(mins, want_mins) and np.array_equal(maxs, want_maxs), (start, end, columns)


def test_pyramid_keeps_a_one_sample_spike_at_every_zoom() -> None:
    samples = np.zeros(1_000_000, dtype=np.int16)
    samples[654_321] = 32000
    pyramid = EnvelopePyramid(samples)
    for start, end in [(0, 1_000_000), (600_000, 700_000), (654_000, 654_400), (654_321, 654_322)]:
        _mins, maxs = pyramid.envelope(start, end, 1000)
        assert maxs.shape[0] == 1 and maxs.max() == 32000
        column = (654_321 - start) * maxs.shape[1] // (end - start)  # (exactly, where runs are equal)
        assert abs(int(maxs[0].argmax()) - column) <= 1
    assert pyramid.envelope(0, 654_321, 1000)[1].max() == 0


def test_levels_span_the_peak_down_to_the_range_below_it() -> None:
    peak = -6.0
    db = np.array([[peak, peak - DB_RANGE / 2, peak - DB_RANGE, peak - DB_RANGE - 30, DB_FLOOR]], dtype=np.float32)
    assert spectrogram_levels(db).tolist() == [[255, 128, 0, 0, 0]]
    assert spectrogram_levels(db, 40.0).tolist() == [[255, 0, 0, 0, 0]]
    # a part coloured as its whole clip, whose loudest bin is 10 dB above the part's
    assert spectrogram_levels(db, top=peak + 10).tolist() == [[223, 96, 0, 0, 0]]
    silence = np.full((4, 3), DB_FLOOR, dtype=np.float32)
    assert (spectrogram_levels(silence) == 0).all()  # not the top colour
    quiet = np.full((2, 2), DB_FLOOR + 10, dtype=np.float32)  # a near-silent clip stays dark too
    assert spectrogram_levels(quiet).max() < 40


def test_colour_map_runs_dark_to_light() -> None:
    assert SPECTROGRAM_COLORS.shape == (256, 3) and SPECTROGRAM_COLORS.dtype == np.uint8
    lightness = SPECTROGRAM_COLORS.astype(int) @ np.array([299, 587, 114])
    assert (np.diff(lightness) >= 0).all()  # perceptually ordered: louder is never darker
    assert SPECTROGRAM_COLORS[0].tolist() == [0, 0, 4] and SPECTROGRAM_COLORS[255].tolist() == [252, 253, 191]


def test_a_tone_stands_out_of_the_colour_range() -> None:
    rate = 16000
    t = np.arange(rate) / rate
    tone = (0.5 * np.sin(2 * np.pi * 1000 * t) * 32767).astype(np.int16)  # 16-bit: quantisation ~ -100 dB
    levels = spectrogram_levels(spectrogram(tone, rate, 512, 128))
    assert (levels[32] == 255).all() or levels[32].min() > 240
    far = np.r_[0:20, 45:257]
    assert np.median(levels[far]) == 0  # the noise floor is below the range: no speckle


def test_axis_ticks_and_clock_text() -> None:
    assert frequency_ticks(16000) == [(0.0, "0 Hz"), (2000.0, "2 kHz"), (4000.0, "4 kHz"), (6000.0, "6 kHz"),
                                      (8000.0, "8 kHz")]
    assert [label for _, label in frequency_ticks(8000, 3)] == ["0 Hz", "2 kHz", "4 kHz"]
    assert [label for _, label in frequency_ticks(2000, 4)] == ["0 Hz", "500 Hz", "1 kHz"]
    assert [label for _, label in time_ticks(0, 600, 6)] == ["0:00", "2:00", "4:00", "6:00", "8:00", "10:00"]
    assert [label for _, label in time_ticks(0.1, 0.3, 4)] == ["0:00.10", "0:00.15", "0:00.20", "0:00.25", "0:00.30"]
    assert time_ticks(5, 5) == []
    assert clock_text(0) == "0:00.0" and clock_text(75.34) == "1:15.3" and clock_text(59.96) == "1:00.0"
    assert clock_text(600, 0) == "10:00" and clock_text(1.2345, 3) == "0:01.234"
