"""Media of kinds the reference files do not hold (issue 27's check), built here and run through the real CLI
(`media --json`, `export --format audio`, TFDS `cat --json`), each against figures computed here from
soundfile and numpy alone: stereo, 8 kHz, 24-bit FLAC, Ogg, MP3, 8-bit and float WAV, raw PCM lists,
float-list and PNG masks, keypoints, segmentation maps, a TFDS dataset with two Audio features, and
hostile values."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from codec.cli.main import main
from codec.storage.writer import TFRecordWriter
from tests.builders import example
from tests.codec.test_audio import _encoded as _encode
from tests.codec.test_audio import _sha

ROOT = Path(__file__).resolve().parents[2]
AUDIO_LINE = {"index", "key", "type", "codec", "sample_rate", "channels", "frames", "duration", "sha256"}


def _signal(frames: int, channels: int, rate: int, seed: int) -> np.ndarray:
    """Tones plus noise in [-0.9, 0.9], frames x channels, float64 (each channel its own pitch)."""
    t = np.arange(frames)[:, None] / rate
    pitch = 200.0 + 150.0 * np.arange(channels)[None, :]
    noise = np.random.default_rng(seed).uniform(-0.1, 0.1, (frames, channels))
    return 0.8 * np.sin(2 * np.pi * pitch * t) + noise


def _write(path: Path, records: list[bytes]) -> str:
    with TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return str(path)


def _media(capsys, *args: str) -> tuple[int, list[dict]]:
    code = main(["media", "--json", *args])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _png(array: np.ndarray, mode: str | None = None) -> bytes:
    out = io.BytesIO()
    image = Image.fromarray(array)
    if mode == "P":
        image = image.convert("L").convert("P")  # palette indices = the grey levels
    elif mode == "1":
        image = image.convert("1")
    image.save(out, "PNG")
    return out.getvalue()


# ---------------------------------------------------------------- encoded and raw audio


def _audio_cases() -> list[dict]:
    """Each case: the record's key and value, and what soundfile alone says of it (samples as read)."""
    stereo16 = (_signal(3001, 2, 44100, 1) * 32767).astype(np.int16)
    mono8k = (_signal(2000, 1, 8000, 2) * 32767).astype(np.int16)
    deep24 = (_signal(1500, 2, 96000, 3) * (2 ** 23 - 1)).astype(np.int32) << 8  # 24-bit values in int32's top
    u8 = _signal(800, 1, 11025, 4)
    floatwav = _signal(700, 2, 48000, 5).astype(np.float32)
    ogg = _signal(6000, 2, 22050, 6)
    mp3 = _signal(8000, 1, 16000, 7)
    raw16 = (_signal(1200, 2, 8000, 8) * 32767).astype(np.int16)
    rawf = _signal(900, 1, 22050, 9).astype(np.float32)
    return [
        dict(key="audio/encoded", data=_encode(stereo16, 44100, "WAV", "PCM_16"), codec="wav", read="int16",
             sha="<i2", subtype="PCM_16"),
        dict(key="speech/flac", data=_encode(mono8k, 8000, "FLAC", "PCM_16"), codec="flac", read="int16",
             sha="<i2", subtype="PCM_16"),
        dict(key="audio/encoded", data=_encode(deep24, 96000, "FLAC", "PCM_24"), codec="flac", read="int32",
             sha=None, subtype="PCM_24"),
        dict(key="clip", data=_encode(u8, 11025, "WAV", "PCM_U8"), codec="wav", read="int16", sha=None,
             subtype="PCM_U8"),
        dict(key="clip", data=_encode(floatwav, 48000, "WAV", "FLOAT"), codec="wav", read="float32", sha=None,
             subtype="FLOAT"),
        dict(key="audio/encoded", data=_encode(ogg, 22050, "OGG", "VORBIS"), codec="ogg", read="float32",
             sha=None, subtype=None),
        dict(key="sound", data=_encode(mp3, 16000, "MP3", "MPEG_LAYER_III"), codec="mp3", read="float32",
             sha=None, subtype=None),
        dict(key="audio/encoded", data=_encode(mono8k, 8000, "AIFF", "PCM_16"), codec="aiff", read="int16",
             sha="<i2", subtype="PCM_16"),  # not sniffed: read by libsndfile as its key names audio
        dict(key="speech/pcm", raw=raw16, rate=8000, codec="pcm_int16", sha="<i2", subtype="PCM_16",
             extra={"speech/sample_rate": 8000, "speech/channels": 2}),
        dict(key="audio/samples", raw=rawf, rate=22050, codec="pcm_float", sha="<f4", subtype="FLOAT",
             extra={"audio/sample_rate": 22050.0}),  # a rate stored as a float
    ]


def _record(case: dict) -> bytes:
    if "raw" in case:
        return example({case["key"]: case["raw"].reshape(-1), **case["extra"], "label": 2})
    return example({case["key"]: case["data"], "label": 1})


def _reference(case: dict) -> tuple[np.ndarray, int]:
    """The case's samples (frames x channels) and rate, read by soundfile or as built."""
    if "raw" in case:
        samples = case["raw"]
        return (samples if samples.ndim == 2 else samples[:, None]), case["rate"]
    samples, rate = sf.read(io.BytesIO(case["data"]), dtype=case["read"], always_2d=True)
    return samples, rate


@pytest.fixture(scope="module")
def audio_file(tmp_path_factory) -> tuple[str, list[dict]]:
    cases = _audio_cases()
    path = tmp_path_factory.mktemp("unseen") / "sounds.tfrecord"
    return _write(path, [_record(c) for c in cases]), cases


def test_media_json_of_unseen_audio_kinds(audio_file, capsys):
    path, cases = audio_file
    code, lines = _media(capsys, path)
    assert code == 0
    assert [(line["index"], line["key"], line["codec"]) for line in lines] == [
        (i, c["key"], c["codec"]) for i, c in enumerate(cases)]
    for line, case in zip(lines, cases):
        samples, rate = _reference(case)
        assert set(line) == AUDIO_LINE, case
        assert line["type"] == "audio"
        assert (line["sample_rate"], line["channels"], line["frames"]) == (rate, samples.shape[1],
                                                                           samples.shape[0]), case
        assert line["duration"] == pytest.approx(samples.shape[0] / rate)
        assert line["sha256"] == (_sha(samples, case["sha"]) if case["sha"] else None), case
        assert isinstance(line["sample_rate"], int)


def test_export_of_unseen_audio_kinds_keeps_samples_and_channels(audio_file, tmp_path, capsys):
    path, cases = audio_file
    out = tmp_path / "wavs"
    assert main(["export", path, "--format", "audio", "--to", str(out)]) == 0
    assert capsys.readouterr().err == f"tfrlens-cli: wrote {len(cases)} audio files to {out}\n"
    for i, case in enumerate(cases):
        name = out / f"{i:06d}_{case['key'].replace('/', '_')}.wav"
        info = sf.info(str(name))
        samples, rate = _reference(case)
        assert (info.format, info.samplerate, info.channels) == ("WAV", rate, samples.shape[1]), case
        if case["codec"] == "wav":
            assert name.read_bytes() == case["data"]  # a WAV is its own bytes
        if case["subtype"] is None:  # lossy: the decoder's samples as 32-bit float
            assert info.subtype == "FLOAT"
            back, _ = sf.read(str(name), dtype="float32", always_2d=True)
            assert back.shape == samples.shape  # (mpg123 may differ in the last bit between two reads)
            assert np.allclose(back, samples, rtol=0, atol=1e-6)
            continue
        assert info.subtype == case["subtype"], case
        dtype = {"PCM_24": "int32", "PCM_16": "int16", "PCM_U8": "int16", "FLOAT": "float32"}[case["subtype"]]
        back, _ = sf.read(str(name), dtype=dtype, always_2d=True)
        want = samples.astype(np.float32) if case["codec"] == "pcm_float" else samples
        assert back.dtype == want.dtype and np.array_equal(back, want), case


# ---------------------------------------------------------------- masks, keypoints, segmentation


def _mask_cases():
    rng = np.random.default_rng(12)
    h, w = 6, 9
    float_masks = rng.choice([0.0, 0.0, 0.5, 1.0], (3, h, w)).astype(np.float32)  # 3 objects, 3 boxes
    boxless = rng.choice([0.0, 1.0], (2, 4, 5)).astype(np.float32)
    png_masks = [rng.choice([0, 0, 1, 255], (h, w)).astype(np.uint8) for _ in range(2)]
    png_bits = rng.choice([0, 255], (5, 7)).astype(np.uint8)
    deep = rng.choice([0, 1, 255, 256, 65535], (h, w)).astype(np.uint16)  # TF's decode_png keeps the high byte
    seg = rng.choice([0, 3, 7, 255], (10, 12)).astype(np.uint8)
    seg_palette = rng.choice([0, 2, 5], (8, 8)).astype(np.uint8)
    image = _png(np.zeros((h, w, 3), np.uint8))
    xs, ys, vis = [0.1, 0.5, 0.99, 0.25], [0.2, 0.6, 0.0, 0.75], [1, 0, 2, 1]
    records = [
        example({"image/encoded": image, "image/height": h, "image/width": w,
                 "image/object/bbox/xmin": [0.1, 0.2, 0.3], "image/object/class/label": [1, 2, 1],
                 "image/object/mask": float_masks.reshape(-1),
                 "image/object/keypoint/x": xs, "image/object/keypoint/y": ys,
                 "image/object/keypoint/visibility": vis}),
        example({"image/encoded": image, "image/height": h, "image/width": w,
                 "image/object/mask": [_png(m) for m in png_masks] + [_png(png_bits, "1"), _png(deep)]}),
        example({"image/height": 4, "image/width": 5, "image/object/mask": boxless.reshape(-1)}),
        example({"image/encoded": _png(np.zeros((10, 12, 3), np.uint8)),
                 "image/segmentation/class/encoded": _png(seg),
                 "image/segmentation/class/encoded_palette": _png(seg_palette, "P"),
                 "image/object/keypoint/x": [0.5, float("nan")], "image/object/keypoint/y": [0.25, 0.5]}),
    ]

    def mask(index, obj, pixels):
        return {"index": index, "key": "image/object/mask", "type": "mask", "object": obj,
                "shape": list(pixels.shape), "area": int(np.count_nonzero(pixels))}

    want = [mask(0, i, m) for i, m in enumerate(float_masks)]
    want.append({"index": 0, "type": "keypoints",
                 "points": [[x * w, y * h, v] for x, y, v in zip(xs, ys, vis)]})
    want += [mask(1, i, m) for i, m in enumerate(png_masks + [png_bits, deep >> 8])]
    want += [mask(2, i, m) for i, m in enumerate(boxless)]
    want.append({"index": 3, "type": "keypoints", "points": [[0.5 * 12, 0.25 * 10, 1], [None, None, 0]]})
    want += [{"index": 3, "key": key, "type": "segmentation", "shape": list(m.shape),
              "classes": sorted(int(c) for c in set(m.reshape(-1).tolist()))}
             for key, m in (("image/segmentation/class/encoded", seg),
                            ("image/segmentation/class/encoded_palette", seg_palette))]
    return records, want


def _by_record(lines: list[dict]) -> list[dict]:
    """Lines in a stable order: record, then masks, keypoints, segmentation as the command lists them."""
    return sorted(lines, key=lambda line: (line["index"], line["type"] != "mask", line["type"] != "keypoints",
                                           line.get("key", ""), line.get("object") or 0))


def test_media_json_of_float_list_and_png_masks_keypoints_and_maps(tmp_path, capsys):
    records, want = _mask_cases()
    code, lines = _media(capsys, _write(tmp_path / "masks.tfrecord", records))
    assert code == 0
    assert len(lines) == len(want)
    for line, expected in zip(_by_record(lines), _by_record(want)):
        if expected["type"] == "keypoints":
            assert line["index"] == expected["index"] and set(line) == {"index", "type", "points"}
            for got, point in zip(line["points"], expected["points"], strict=True):
                assert got[2] == point[2] and isinstance(got[2], int)
                assert got[:2] == (pytest.approx(point[:2], rel=1e-6) if point[0] is not None else point[:2])
        else:
            assert line == expected


# ---------------------------------------------------------------- hostile values


def _hostile_records() -> list[bytes]:
    tone = (_signal(400, 1, 8000, 10) * 32767).astype(np.int16)
    return [
        example({"audio/encoded": b""}),  # empty audio bytes
        example({"audio/pcm": tone, "audio/sample_rate": 0}),
        example({"speech/samples": tone.astype(np.float32) / 32768, "speech/sample_rate": -8000}),
        example({"audio/samples": np.linspace(-1, 1, 64, dtype=np.float32)}),  # no sample rate anywhere
        example({"image/height": 4, "image/width": 5, "image/object/bbox/xmin": [0.1, 0.2],
                 "image/object/mask": np.ones(33, np.float32)}),  # not 2 × 4 × 5
        example({"image/height": 4, "image/width": 5, "image/object/mask": np.ones(21, np.float32)}),
        example({"audio/wav": _encode(tone, 8000, "WAV", "PCM_16")}),  # a good value after them
        example({"audio/encoded": b"not audio at all"}),
        example({"audio/pcm": tone, "sr": 2 ** 40}),  # more than libsndfile's int holds
        example({"audio/pcm": np.arange(-1024, 1024), "sr": 8000, "channels": 2048}),  # more channels than a WAV holds
    ]


def test_hostile_values_are_one_line_errors_and_exit_1(tmp_path, capsys):
    path = _write(tmp_path / "hostile.tfrecord", _hostile_records())
    code, lines = _media(capsys, path)
    assert code == 1
    assert [line["index"] for line in lines] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert (lines[7]["codec"], lines[7]["error"]) == (
        "unknown", "audio/encoded: not audio libsndfile reads (16 bytes starting 6e 6f 74 20)")
    assert "2,147,483,647" in lines[8]["error"] and lines[8]["sample_rate"] is None
    assert (lines[9]["channels"], lines[9]["frames"], "error" in lines[9]) == (2048, 1, False)
    for line in lines[:6]:
        assert isinstance(line["error"], str) and line["error"] and "\n" not in line["error"], line
    for line in lines[:4]:
        assert line["type"] == "audio" and line["frames"] is None and line["sha256"] is None, line
    assert [line["key"] for line in lines[:4]] == ["audio/encoded", "audio/pcm", "speech/samples", "audio/samples"]
    assert "empty" in lines[0]["error"]
    assert "audio/sample_rate" in lines[1]["error"] and "0" in lines[1]["error"]
    assert "speech/sample_rate" in lines[2]["error"] and "-8000" in lines[2]["error"]
    assert "sample rate" in lines[3]["error"]
    assert all(line["type"] == "mask" and line["shape"] is None for line in lines[4:6])
    assert "error" not in lines[6] and lines[6]["frames"] == 400
    # the real command in its own process: no traceback, the lines on stdout, exit 1; exports skip them
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "codec.cli", "media", path], capture_output=True, text=True,
                         env=env, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr + run.stdout
    assert len(run.stdout.splitlines()) == 10 and run.stdout.count("error: ") == 8
    out = tmp_path / "wavs"
    run = subprocess.run([sys.executable, "-m", "codec.cli", "export", path, "--format", "audio", "--to", str(out)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert "Traceback" not in run.stderr and "7 audio value(s) do not decode" in run.stderr
    assert [p.name for p in out.iterdir()] == ["000006_audio_wav.wav"]


# ---------------------------------------------------------------- a TFDS dataset with two Audio features
# Laid out as tensorflow_datasets writes one (see tests/fixtures/tfds_media): NAME/VERSION/ holding
# features.json, dataset_info.json, NAME-SPLIT.tfrecord-XXXXX-of-YYYYY shards and the label names.
# example_serializer.py stores int16 samples widened into an int64_list and float32 ones in a float_list,
# flattened; cat --json hashes the samples as TFDS decodes them (its dtype, its shape).

_AUDIO = "tensorflow_datasets.core.features.audio_feature.Audio"


def _tfds_spec() -> dict:
    def audio(dtype, dims, rate):
        return {"audio": {"dtype": dtype, "encoding": "NONE", "sampleRate": str(rate),
                          "shape": {"dimensions": dims}}, "pythonClassName": _AUDIO}

    return {"featuresDict": {"features": {
        "label": {"classLabel": {"numClasses": "2"},
                  "pythonClassName": "tensorflow_datasets.core.features.class_label_feature.ClassLabel"},
        "noise": audio("float32", ["-1", "2"], 8000),
        "speech": audio("int16", ["-1"], 16000)}},
        "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict"}


@pytest.fixture(scope="module")
def two_audio_dataset(tmp_path_factory) -> tuple[Path, list[dict]]:
    folder = tmp_path_factory.mktemp("tfds") / "two_sounds" / "1.0.0"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(21)
    shards = {"train": [[0, 1], [2]], "test": [[3]]}
    lengths = [1600, 0, 801, 2400]
    clips = []
    for n, size in enumerate(lengths):
        speech = (_signal(size, 1, 16000, 30 + n)[:, 0] * 32767).astype(np.int16)
        noise = rng.uniform(-1, 1, (size // 2, 2)).astype(np.float32)
        clips.append({"speech": speech, "noise": noise, "label": n % 2})
    info = {"fileFormat": "tfrecord", "moduleName": "__main__", "name": "two_sounds", "splits": [],
            "version": "1.0.0"}
    for split, parts in shards.items():
        for s, members in enumerate(parts):
            records = [example({"speech": clips[m]["speech"].astype(np.int64), "noise": clips[m]["noise"],
                                "label": clips[m]["label"]}) for m in members]
            _write(folder / f"two_sounds-{split}.tfrecord-{s:05d}-of-{len(parts):05d}", records)
        info["splits"].append({"filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
                               "name": split, "numBytes": "0",
                               "shardLengths": [str(len(m)) for m in parts]})
    (folder / "features.json").write_text(json.dumps(_tfds_spec(), indent=4))
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=2))
    (folder / "label.labels.txt").write_text("quiet\nloud\n")
    return folder, [dict(clips[m], split=split) for split, parts in shards.items()
                    for members in parts for m in members]


def test_tfds_cat_json_of_two_audio_features(two_audio_dataset, capsys):
    folder, clips = two_audio_dataset
    assert main(["cat", "--json", str(folder)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(clips)
    for line, clip in zip(lines, clips):
        features = line["features"]
        assert line["split"] == clip["split"]
        assert features["speech"] == {"dtype": "int16", "shape": [clip["speech"].size], "sample_rate": 16000,
                                      "sha256": _sha(clip["speech"], "<i2")}
        assert features["noise"] == {"dtype": "float32", "shape": list(clip["noise"].shape), "sample_rate": 8000,
                                     "sha256": _sha(clip["noise"], "<f4")}
        assert features["label"] == {"value": clip["label"], "name": ["quiet", "loud"][clip["label"]]}


def test_tfds_media_and_export_use_the_spec_sample_rates(two_audio_dataset, tmp_path, capsys):
    folder, clips = two_audio_dataset
    code, lines = _media(capsys, str(folder))
    assert code == 0
    want = []
    for index, clip in enumerate(clips):
        noise, speech = clip["noise"], clip["speech"]
        want.append({"index": index, "key": "noise", "type": "audio", "codec": "pcm_float", "sample_rate": 8000,
                     "channels": 2, "frames": noise.shape[0], "duration": noise.shape[0] / 8000,
                     "sha256": _sha(noise, "<f4")})
        want.append({"index": index, "key": "speech", "type": "audio", "codec": "pcm_int16", "sample_rate": 16000,
                     "channels": 1, "frames": speech.size, "duration": speech.size / 16000,
                     "sha256": _sha(speech, "<i2")})
    assert lines == want
    out = tmp_path / "wavs"
    assert main(["export", str(folder), "--format", "audio", "--to", str(out)]) == 0
    for index, clip in enumerate(clips):
        speech, rate = sf.read(str(out / f"{index:06d}_speech.wav"), dtype="int16", always_2d=True)
        noise, noise_rate = sf.read(str(out / f"{index:06d}_noise.wav"), dtype="float32", always_2d=True)
        assert (rate, noise_rate) == (16000, 8000)
        assert np.array_equal(speech[:, 0], clip["speech"]) and speech.shape[1] == 1
        assert np.array_equal(noise, clip["noise"]) and noise.shape[1] == 2


def test_tfds_audio_without_a_usable_sample_rate_is_an_error_line(two_audio_dataset, tmp_path, capsys):
    import shutil

    folder = tmp_path / "two_sounds" / "1.0.0"
    shutil.copytree(two_audio_dataset[0], folder)
    spec = _tfds_spec()
    spec["featuresDict"]["features"]["noise"]["audio"]["sampleRate"] = "-5"
    del spec["featuresDict"]["features"]["speech"]["audio"]["sampleRate"]
    (folder / "features.json").write_text(json.dumps(spec))
    code, lines = _media(capsys, str(folder))
    assert code == 1 and len(lines) == 2 * len(two_audio_dataset[1])
    assert {line["error"] for line in lines} == {"noise: features.json gives sample rate -5",
                                                "speech: features.json gives no sample rate"}
