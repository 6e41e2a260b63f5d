"""Audio statistics: durations, sample rates, channels and undecodable clips per feature, in `stats` and `stats --json`."""
from __future__ import annotations

import io
import json

import numpy as np
import soundfile as sf

from codec.cli.main import main
from codec.sources.tfrecord_file import TFRecordFile
from codec.stats.file_stats import FileStats, compute_stats
from codec.storage.writer import TFRecordWriter
from tests.builders import FIXTURES, example, sequence_example

AUDIO = FIXTURES / "media" / "audio.tfrecord"
EXPECTED = json.loads((FIXTURES / "media" / "MANIFEST.json").read_text())["audio.tfrecord"]["audio"]


def _tone(frames: int, channels: int = 1, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(frames)
    return np.stack([np.sin(t / (5 + c)) * amplitude for c in range(channels)], axis=1)


def encoded(samples: np.ndarray, rate: int, fmt: str, subtype: str) -> bytes:
    """``samples`` encoded by libsndfile (also used by test_audio_doctor)."""
    out = io.BytesIO()
    sf.write(out, samples, rate, format=fmt, subtype=subtype)
    return out.getvalue()


def write(path, records: list[bytes]) -> str:
    """A TFRecord file of ``records``; its path."""
    with TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return str(path)


def _records() -> list[bytes]:
    """Every kind of clip once: WAV 16-bit stereo 8 kHz, 24-bit FLAC, OGG Vorbis, a float list, an int16 list,
    bytes that start like a WAV and are cut short; and a record without audio."""
    wav = encoded(_tone(800, 2), 8000, "WAV", "PCM_16")
    return [
        example({"audio/encoded": wav, "label": 1}),
        example({"audio/encoded": encoded(_tone(4000), 16000, "FLAC", "PCM_24"), "label": 2}),
        example({"audio/encoded": encoded(_tone(2205), 22050, "OGG", "VORBIS"), "label": 1}),
        example({"audio/samples": np.float32(_tone(1600)[:, 0]), "audio/sample_rate": 16000}),
        example({"audio/pcm16": (_tone(3200)[:, 0] * 32767).astype(np.int64), "audio/sample_rate": 16000}),
        example({"audio/encoded": wav[:20], "label": 3}),
        example({"label": 4, "text": b"no audio here"}),
    ]


def test_every_kind_of_clip_exactly(tmp_path):
    path = write(tmp_path / "clips.tfrecord", _records())
    with TFRecordFile(path) as f:
        f.build_index()
        features = compute_stats(f).to_json()["features"]
    encoded = features["audio/encoded"]["audio"]
    assert encoded["count"] == 4 and encoded["undecodable"] == 1
    assert encoded["codecs"] == {"flac": 1, "ogg": 1, "wav": 2}
    assert encoded["sample_rates"] == [[8000, 1], [16000, 1], [22050, 1]]
    assert encoded["channels"] == [[1, 2], [2, 1]]
    d = encoded["duration"]
    assert (d["min"], d["max"], d["mean"]) == (0.1, 0.25, 0.15)  # 800/8000, 4000/16000, 2205/22050
    assert sum(d["histogram"]["counts"]) == 3
    assert d["histogram"]["counts"][0] == 2 and d["histogram"]["counts"][-1] == 1
    floats = features["audio/samples"]["audio"]
    assert floats["codecs"] == {"pcm_float": 1} and floats["sample_rates"] == [[16000, 1]]
    assert floats["duration"]["min"] == floats["duration"]["max"] == 0.1
    ints = features["audio/pcm16"]["audio"]
    assert ints["codecs"] == {"pcm_int16": 1} and ints["duration"]["mean"] == 0.2 and ints["undecodable"] == 0
    assert "audio" not in features["label"] and "audio" not in features["audio/sample_rate"]


def test_reference_file_matches_its_manifest():
    with TFRecordFile(AUDIO) as f:
        f.build_index()
        features = compute_stats(f).to_json()["features"]
    for key in {e["key"] for e in EXPECTED}:
        mine = [e for e in EXPECTED if e["key"] == key]
        audio = features[key]["audio"]
        assert audio["count"] == len(mine) and audio["undecodable"] == 0
        durations = [e["frames"] / e["sample_rate"] for e in mine]
        assert audio["duration"]["min"] == min(durations) and audio["duration"]["max"] == max(durations)
        assert audio["sample_rates"] == [[16000, len(mine)]] and audio["channels"] == [[1, len(mine)]]


def test_any_split_merges_to_one_pass(tmp_path):
    records = _records()
    whole = FileStats()
    for r in records:
        whole.add(r)
    parts = []
    for chunk in (records[:2], records[2:5], records[5:]):
        part = FileStats()
        for r in chunk:
            part.add(r)
        parts.append(part)
    merged = parts[2]
    merged.merge(parts[0])
    merged.merge(parts[1])
    assert merged.to_json() == whole.to_json()


def test_one_record_at_a_time_gives_the_batch_figures():
    """The columnar batch and the record-at-a-time path (any payload, odd layouts) count the same audio."""
    batch, one = FileStats(), FileStats()
    for r in _records():
        batch.add(r)
        one.add_one(r)
    assert batch.to_json()["features"] == one.to_json()["features"]


def test_feature_list_clips_and_text_and_json(tmp_path, capsys):
    clip = encoded(_tone(1600), 16000, "WAV", "PCM_16")
    path = write(tmp_path / "seq.tfrecord", [sequence_example({"id": 1}, {"frames/audio": [clip, clip]})])
    assert main(["stats", "--json", path]) == 0
    report = json.loads(capsys.readouterr().out)
    audio = report["sequence"]["frames/audio"]["audio"]
    assert audio["count"] == 2 and audio["sample_rates"] == [[16000, 2]] and audio["duration"]["mean"] == 0.1
    clips = write(tmp_path / "clips.tfrecord", _records())
    assert main(["stats", clips]) == 0
    text = capsys.readouterr().out
    assert "    audio              4 clip(s): wav 2, flac 1, ogg 1; 1 do not decode" in text
    assert "    sample rates       8,000 Hz ×1, 16,000 Hz ×1, 22,050 Hz ×1;  channels 1 ch ×2, 2 ch ×1" in text
    assert "    duration (s)       min 0.100  max 0.250  mean 0.150" in text


def test_two_workers_give_one_process_figures(tmp_path, capsys):
    """The audio figures travel back from the pool's workers and merge as the other statistics do."""
    records = _records()
    folder = tmp_path / "set"
    folder.mkdir()
    write(folder / "clips-00000-of-00002.tfrecord", records[:3])
    write(folder / "clips-00001-of-00002.tfrecord", records[3:])
    reports = []
    for workers in ("1", "2"):
        assert main(["stats", "--json", "--workers", workers, str(folder)]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert reports[1]["features"]["audio/encoded"]["audio"]["count"] == 4


def test_only_records_that_may_hold_audio_are_decoded_again():
    """Text starting with R, f, O or I is no candidate; a bare MP3 frame sync that does not open is audio
    only under a key that names audio (there, a clip that does not decode)."""
    from codec.decode.example_columns import decode_examples
    from codec.stats.audio_stats import audio_candidates

    records = _records() + [example({"name": name}) for name in (b"Rome", b"fish", b"Oslo", b"Ireland", b"RIF")]
    records.append(example({"audio/encoded": b"\xff\xfb\x90\x00" + bytes(64)}))
    buf = b"".join(records)
    ends = np.cumsum([len(r) for r in records])
    found = audio_candidates(decode_examples(buf, ends - [len(r) for r in records], ends), buf)
    assert found.tolist() == [0, 1, 2, 3, 4, 5, 12]
    stats = FileStats()
    stats.add(records[-1])
    stats.add(example({"name": b"\xff\xfb\x90\x00" + bytes(64)}))
    figures = stats.to_json()["features"]
    assert figures["audio/encoded"]["audio"]["undecodable"] == figures["audio/encoded"]["audio"]["count"] == 1
    assert "audio" not in figures["name"]
