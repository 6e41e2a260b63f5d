"""The doctor's audio checks: clips that do not decode, silent and clipped clips, sample rates that differ."""
from __future__ import annotations

import json

import numpy as np
import pytest

from codec.cli.main import main
from codec.decode.audio import AudioSamples
from codec.doctor import CheckOptions, run_check
from codec.doctor.audio_checks import AUDIO_CHECKS, clip_problems
from tests.builders import FIXTURES, example

from .test_audio_stats import encoded, write

AUDIO = FIXTURES / "media" / "audio.tfrecord"


def _tone(frames: int, amplitude: float = 0.5, channels: int = 1) -> np.ndarray:
    t = np.arange(frames)
    return np.stack([np.sin(t / (5 + c)) * amplitude for c in range(channels)], axis=1)


def _wav(samples: np.ndarray, rate: int = 16000, subtype: str = "PCM_16", fmt: str = "WAV") -> bytes:
    return encoded(samples, rate, fmt, subtype)


def _dataset(tmp_path) -> str:
    """Records 0-3 fine at 16 kHz (WAV, 24-bit FLAC, OGG, float list), 4 silent, 5 clipped, 6 cut short,
    7 and 8 at 8 kHz (one a stereo WAV, one an int16 list)."""
    clipped = np.clip(_tone(1000, 1.5), -1.0, 1.0)  # about half its samples at full scale
    good = _wav(_tone(1600))
    quiet = np.zeros((1600, 1), np.int16)
    quiet[::7], quiet[3::7] = 16, -16  # peak 16 of 32,768: -66.2 dBFS
    return write(tmp_path / "clips.tfrecord", [
        example({"audio/encoded": good}),
        example({"audio/encoded": _wav(_tone(1600), subtype="PCM_24", fmt="FLAC")}),
        example({"audio/encoded": _wav(_tone(1600), subtype="VORBIS", fmt="OGG")}),
        example({"audio/encoded": _wav(_tone(1600), subtype="FLOAT")}),
        example({"audio/encoded": _wav(quiet)}),
        example({"audio/encoded": _wav(clipped)}),
        example({"audio/encoded": good[:40]}),
        example({"audio/encoded": _wav(_tone(800, channels=2), 8000)}),
        example({"audio/pcm": (_tone(800)[:, 0] * 32767).astype(np.int64), "audio/sample_rate": 8000,
                 "audio/encoded": good}),
    ])


def _by_check(report) -> dict[str, list]:
    return {check: [(f.severity, [r.index for r in f.records], f.detail) for f in found]
            for check, found in report.by_check().items()}


def test_the_four_checks_on_a_small_dataset(tmp_path):
    path = _dataset(tmp_path)
    report = run_check([path], CheckOptions(checks=AUDIO_CHECKS))
    found = _by_check(report)
    assert set(found) == set(AUDIO_CHECKS)
    [(severity, records, detail)] = found["audio_decode"]
    assert (severity, records) == ("error", [6])
    assert detail == "audio/encoded: wav bytes do not decode: Error in WAV file. No 'data' chunk marker."
    assert found["audio_silent"] == [("warning", [4], "audio/encoded: silent: peak -66.2 dBFS (below -60 dBFS)")]
    [(severity, records, detail)] = found["audio_clipped"]
    assert (severity, records) == ("warning", [5])
    x = np.clip(_tone(1000, 1.5), -1.0, 1.0)
    as_int16 = np.abs((x * 32767).round())  # (as libsndfile writes floats to 16-bit)
    at_full = int((as_int16 >= 0.999 * 32768).sum())
    assert detail.startswith(f"audio/encoded: clipped: {at_full:,} of 1,000 samples ({at_full / 1000:.2%}) at full")
    # audio/encoded: 16 kHz in 7 clips (0-5 and 8), 8 kHz in record 7; audio/pcm: one rate only.
    assert found["audio_sample_rate"] == [("warning", [7], "audio/encoded: 2 sample rates: 16,000 Hz in 7 clips, "
                                           "8,000 Hz in 1 clip (records listed: up to 10 of each rate but the most "
                                           "common)")]
    assert report.exit_code == 1


def test_rules_at_their_thresholds():
    def clip(values, dtype) -> AudioSamples:
        return AudioSamples(np.array(values, dtype=dtype).reshape(-1, 1), 16000, "PCM_16")

    quiet = 32  # just under -60 dBFS of int16 full scale (32.768)
    assert [c for c, _ in clip_problems(clip([quiet, -quiet, 0], np.int16))] == ["audio_silent"]
    assert clip_problems(clip([33, 0], np.int16)) == []
    assert clip_problems(clip([0] * 4, np.int16))[0][1] == "silent: peak every sample 0 (below -60 dBFS)"
    assert clip_problems(AudioSamples(np.zeros((0, 2), np.int16), 8000, "PCM_16")) == [
        ("audio_silent", "no samples (0 frames)")]
    # One sample in 1,000 at full scale is clipped; one in 1,001 is not. int16's -32768 counts as full scale.
    assert [c for c, _ in clip_problems(clip([-32768] + [1000] * 999, np.int16))] == ["audio_clipped"]
    assert clip_problems(clip([-32768] + [1000] * 1000, np.int16)) == []
    # 24- and 32-bit PCM decode to int32: full scale is 2**31. Floats: 1.0, and beyond it counts too.
    assert [c for c, _ in clip_problems(clip([2**31 - 1] + [2**20] * 99, np.int32))] == ["audio_clipped"]
    assert clip_problems(clip([2**30] + [2**20] * 99, np.int32)) == []
    assert [c for c, _ in clip_problems(clip([32767] * 100, np.int32))] == ["audio_silent"]  # -96.3 dBFS of 2**31
    assert [c for c, _ in clip_problems(clip([1.2] + [0.1] * 99, np.float32))] == ["audio_clipped"]


def test_reference_file_is_clean_and_json_carries_the_findings(tmp_path, capsys):
    assert run_check([str(AUDIO)], CheckOptions(checks=AUDIO_CHECKS)).findings == []
    path = _dataset(tmp_path)
    assert main(["check", "--json", "--checks", "audio_silent,audio_sample_rate", path]) == 0  # warnings only
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["check"], [r["index"] for r in f["records"]]) for f in findings] == [
        ("audio_silent", [4]), ("audio_sample_rate", [7])]


def test_two_workers_give_one_process_findings(tmp_path):
    """Two files on two workers: per-record findings and the rates of both files joined."""
    path = _dataset(tmp_path)
    other = write(tmp_path / "more.tfrecord", [example({"audio/encoded": _wav(_tone(400), 8000)})] * 2)
    one = run_check([path, other], CheckOptions(checks=AUDIO_CHECKS, workers=1))
    two = run_check([path, other], CheckOptions(checks=AUDIO_CHECKS, workers=2))
    assert [f.to_json() for f in one.findings] == [f.to_json() for f in two.findings]
    [rates] = [f for f in two.findings if f.check == "audio_sample_rate"]
    assert rates.detail.startswith("audio/encoded: 2 sample rates: 16,000 Hz in 7 clips, 8,000 Hz in 3 clips")
    assert [(r.path, r.index) for r in rates.records] == [(path, 7), (other, 0), (other, 1)]


@pytest.mark.slow  # a Beam pipeline on the direct runner: a few seconds
def test_on_beam_the_report_is_the_local_one(tmp_path, capsys):
    """``check --runner direct``: the clips' rates come back with each task's summary, and the report is the same."""
    pytest.importorskip("apache_beam")
    path = _dataset(tmp_path)
    argv = ["check", "--json", "--checks", ",".join(sorted(AUDIO_CHECKS)), path]
    assert main(argv) == 1
    local = capsys.readouterr().out
    assert main([*argv, "--runner", "direct", "--beam-option", "direct_num_workers=1"]) == 1
    assert capsys.readouterr().out == local
    assert "audio_sample_rate" in local
