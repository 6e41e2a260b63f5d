"""Audio statistics and audio checks: what they cost on audio datasets, and on datasets without audio.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_audio_qa.py [--records 20000]

Builds in benchmarks/_data (kept between runs): N Examples of a 0.25 s 16 kHz mono 16-bit WAV with
an int64 label; N Examples of a 0.25 s float PCM list (4,000 values) beside ``audio/sample_rate``;
and 10×N small Examples without audio whose text values start with the letters audio magic starts
with ("Rome", "fish", "Oslo", "Ireland": the batch prefilter must not decode them again). Prints
records/s of a one-process ``stats`` pass (best of 3), the same pass with the audio part switched
off, and of ``check`` with only the audio checks (one process).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import soundfile as sf

from benchmarks.common import best_ms, ensure_file
from codec import TFRecordFile
from codec.decode.example_proto import Example
from codec.doctor import CheckOptions, run_check
from codec.doctor.audio_checks import AUDIO_CHECKS
from codec.stats.file_stats import compute_stats

RATE, FRAMES = 16000, 4000


def _tone(k: int) -> np.ndarray:
    return np.sin(np.arange(FRAMES) * (0.05 + (k % 50) / 1000)) * 0.5


def _example(features: dict) -> bytes:
    ex = Example()
    for key, value in features.items():
        f = ex.features.feature[key]
        if isinstance(value, bytes):
            f.bytes_list.value.append(value)
        elif isinstance(value, int):
            f.int64_list.value.append(value)
        else:
            f.float_list.value.extend(value.tolist())
    return ex.SerializeToString()


def wav_records(n: int):
    for k in range(n):
        out = io.BytesIO()
        sf.write(out, _tone(k), RATE, format="WAV", subtype="PCM_16")
        yield _example({"audio/encoded": out.getvalue(), "label": k % 10})


def pcm_records(n: int):
    for k in range(n):
        yield _example({"audio/samples": _tone(k).astype(np.float32), "audio/sample_rate": RATE, "label": k % 10})


def text_records(n: int):
    names = [b"Rome", b"fish", b"Oslo", b"Ireland", b"cat", b"dog"]
    for k in range(n):
        yield _example({"name": names[k % len(names)], "label": k % 10})


def _stats(path: str) -> None:
    with TFRecordFile(path) as f:
        f.build_index()
        compute_stats(f)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000)
    args = parser.parse_args(argv)
    n = args.records
    files = {"WAV clips": ensure_file(f"audio_qa_wav_{n}.tfrecord", lambda: wav_records(n)),
             "float PCM lists": ensure_file(f"audio_qa_pcm_{n}.tfrecord", lambda: pcm_records(n)),
             "no audio (text)": ensure_file(f"audio_qa_text_{10 * n}.tfrecord", lambda: text_records(10 * n))}
    counts = {"WAV clips": n, "float PCM lists": n, "no audio (text)": 10 * n}
    for name, path in files.items():
        with_audio = best_ms(lambda p=path: _stats(p), 3) / 1000
        with mock.patch("codec.stats.audio_stats.AudioStats.add_decoded"), \
                mock.patch("codec.stats.columns.audio_candidates", lambda cols, buf: np.zeros(0, np.int64)):
            without = best_ms(lambda p=path: _stats(p), 3) / 1000
        print(f"stats, {name}: {counts[name] / with_audio:,.0f} records/s "
              f"(audio part off: {counts[name] / without:,.0f} records/s)")
    for name in ("WAV clips", "float PCM lists"):
        took = best_ms(lambda p=files[name]: run_check([p], CheckOptions(checks=AUDIO_CHECKS, workers=1)), 1) / 1000
        print(f"check (audio checks, 1 process), {name}: {counts[name] / took:,.0f} records/s")


if __name__ == "__main__":
    main()
