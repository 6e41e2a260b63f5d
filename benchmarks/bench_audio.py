"""Audio views: the waveform envelope and the spectrogram the Audio tab draws.

    .venv/bin/python benchmarks/bench_audio.py [--minutes 10] [--columns 2000]

Makes a stereo 48 kHz int16 clip in memory (a sweep plus noise) and prints the best of 5 runs of
waveform_envelope (the whole clip into N columns, and a zoomed tenth of it) and of spectrogram
(n_fft 512, hop 4096: about one frame per column). Targets: envelope <= 100 ms, spectrogram <= 300 ms.
Then the Audio tab's way: the EnvelopePyramid built once (on the worker), and one zoom or scroll step
(the pyramid's envelope of the new range) at every zoom from the whole clip down to 32 frames.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import time

import numpy as np

from benchmarks.common import best_ms
from codec.decode.audio_views import EnvelopePyramid, spectrogram, waveform_envelope

RATE = 48_000


def clip(minutes: float) -> np.ndarray:
    """``minutes`` of a 100 Hz - 10 kHz sweep on the left, noise on the right, int16 frames x 2."""
    frames = int(minutes * 60 * RATE)
    t = np.arange(frames, dtype=np.float64) / RATE
    sweep = np.sin(2 * np.pi * (100 + (10_000 - 100) * t / (2 * t[-1])) * t)
    noise = np.random.default_rng(0).standard_normal(frames) * 0.2
    return (np.stack([sweep * 0.8, noise], axis=1) * 32767).clip(-32768, 32767).astype(np.int16)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--columns", type=int, default=2000)
    args = parser.parse_args(argv)
    samples = clip(args.minutes)
    print(f"clip: {args.minutes:g} min, 48 kHz stereo int16, {samples.size:,} samples")
    tenth = samples[: len(samples) // 10]
    print(f"waveform_envelope, whole clip, {args.columns} columns: {best_ms(lambda: waveform_envelope(samples, args.columns)):.1f} ms")
    print(f"waveform_envelope, a tenth (zoomed), {args.columns} columns: {best_ms(lambda: waveform_envelope(tenth, args.columns)):.1f} ms")
    print(f"spectrogram, n_fft 512 hop 4096: {best_ms(lambda: spectrogram(samples, RATE, 512, 4096), 3):.1f} ms")
    print(f"spectrogram, n_fft 512 hop 288 (a tenth, zoomed): {best_ms(lambda: spectrogram(tenth, RATE, 512, 288), 3):.1f} ms")

    step_figures(samples, args.columns)


def step_figures(samples: np.ndarray, columns: int) -> None:
    """The pyramid's build, then each zoom step (halving the range about the middle) and a scroll step."""
    pyramid = None

    def build() -> None:
        nonlocal pyramid
        pyramid = EnvelopePyramid(samples)

    print(f"EnvelopePyramid, built once (worker): {best_ms(build, 3):.1f} ms, "
          f"{sum(m.nbytes * 2 for m, _ in pyramid.levels[1:]) / 2**20:.1f} MiB beside the samples")
    steps, start, span = [], 0, len(samples)
    while span >= 32:
        t = time.perf_counter()
        for _ in range(20):
            pyramid.envelope(start, start + span, columns)
        steps.append((span, (time.perf_counter() - t) * 1000 / 20))
        start, span = start + span // 4, span // 2
    worst = max(steps, key=lambda s: s[1])
    print(f"zoom step ({len(steps)} zooms, whole clip to 32 frames, {columns} columns): "
          f"mean {np.mean([ms for _, ms in steps]):.2f} ms, worst {worst[1]:.2f} ms (at {worst[0]:,} frames)")
    middle = len(samples) // 2
    scroll = best_ms(lambda: pyramid.envelope(middle + 4800, middle + 4800 + 48_000, columns))
    print(f"scroll step (1 s shown, {columns} columns): {scroll:.2f} ms")


if __name__ == "__main__":
    main()
