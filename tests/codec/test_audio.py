"""Audio in records: what codec.decode.audio finds and decodes, `tfrlens-cli media` and `export --format audio`."""
from __future__ import annotations

import hashlib
import io
import json
import sys

import numpy as np
import pytest
import soundfile as sf

from codec.cli.main import main
from codec.decode.audio import find_audio, names_audio, sniff_audio
from codec.decode.decoder import decode_record
from codec.storage.writer import TFRecordWriter
from tests.builders import FIXTURES, example, sequence_example

AUDIO = FIXTURES / "media" / "audio.tfrecord"
EXPECTED = json.loads((FIXTURES / "media" / "MANIFEST.json").read_text())["audio.tfrecord"]["audio"]


def _tone(frames: int, channels: int = 1, rate: int = 16000) -> np.ndarray:
    """A deterministic int16 signal, frames x channels (each channel its own pitch)."""
    t = np.arange(frames) / rate
    waves = [np.sin(2 * np.pi * (220 + 110 * c) * t) * (0.5 + 0.1 * c) for c in range(channels)]
    return (np.stack(waves, axis=1) * 32767).astype(np.int16)


def _encoded(samples: np.ndarray, rate: int, fmt: str, subtype: str) -> bytes:
    out = io.BytesIO()
    sf.write(out, samples, rate, format=fmt, subtype=subtype)
    return out.getvalue()


def _sha(samples: np.ndarray, dtype: str) -> str:
    return hashlib.sha256(np.ascontiguousarray(samples, dtype=dtype).tobytes()).hexdigest()


def _file(tmp_path, records: list[bytes]) -> str:
    path = tmp_path / "clips.tfrecord"
    with TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return str(path)


def _media(path: str, capsys, *extra: str) -> tuple[int, list[dict]]:
    code = main(["media", "--json", *extra, path])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_media_json_matches_every_manifest_entry(capsys):
    code, lines = _media(str(AUDIO), capsys)
    assert code == 0
    assert len(lines) == len(EXPECTED)
    for line, want in zip(lines, EXPECTED):
        assert set(line) == {"index", "key", "type", "codec", "sample_rate", "channels", "frames", "duration",
                             "sha256"}
        assert (line["index"], line["key"], line["type"], line["codec"]) == (want["index"], want["key"], "audio",
                                                                             want["kind"])
        assert (line["sample_rate"], line["channels"], line["frames"]) == (want["sample_rate"], want["channels"],
                                                                           want["frames"])
        assert line["duration"] == pytest.approx(want["frames"] / want["sample_rate"])
        assert line["sha256"] == want["sha256"]


def test_media_where_and_human_lines(capsys):
    code, lines = _media(str(AUDIO), capsys, "--where", "has(audio/pcm16)")
    assert code == 0 and [line["index"] for line in lines] == [3, 7, 11]
    assert main(["media", str(AUDIO)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert len(text) == 12
    assert text[3] == "record 3  audio/pcm16  audio pcm_int16  16000 Hz  1 ch  6,400 frames  0.400 s  sha256 " \
                      + EXPECTED[3]["sha256"][:16]


def test_stereo_8khz_24bit_flac_and_ogg_made_here(tmp_path, capsys):
    stereo = _tone(1000, channels=2, rate=8000)
    deep = ((_tone(1200).astype(np.int32) << 8) + 77) << 8  # 24-bit values (as int32 holds them): low bits
    records = [
        example({"audio/encoded": _encoded(stereo, 8000, "WAV", "PCM_16"), "label": 1}),
        example({"audio/encoded": _encoded(deep, 48000, "FLAC", "PCM_24")}),
        example({"clip": _encoded(_tone(4000).astype(np.float32) / 32768, 22050, "OGG", "VORBIS")}),
        example({"label": 3, "text": b"no audio here"}),
    ]
    code, lines = _media(_file(tmp_path, records), capsys)
    assert code == 0
    assert [(line["index"], line["key"], line["codec"]) for line in lines] == [
        (0, "audio/encoded", "wav"), (1, "audio/encoded", "flac"), (2, "clip", "ogg")]
    wav, flac, ogg = lines
    assert (wav["sample_rate"], wav["channels"], wav["frames"]) == (8000, 2, 1000)
    assert wav["sha256"] == _sha(stereo, "<i2")  # interleaved: frame by frame, left then right
    assert (flac["sample_rate"], flac["channels"], flac["frames"], flac["sha256"]) == (48000, 1, 1200, None)
    assert (ogg["sample_rate"], ogg["channels"], ogg["sha256"]) == (22050, 1, None)
    assert ogg["frames"] == pytest.approx(4000, abs=1024) and ogg["duration"] == ogg["frames"] / 22050


def test_raw_pcm_lists_need_an_audio_key_and_a_sample_rate(tmp_path, capsys):
    pcm = _tone(300, channels=2).reshape(-1)
    floats = np.linspace(-1, 1, 50, dtype=np.float32)
    records = [
        example({"speech/pcm16": pcm, "speech/sample_rate": 8000, "speech/channels": 2}),
        example({"waveform": floats, "sr": 44100}),
        example({"audio/data": np.arange(10), "sample_rate": 16000}),
        example({"audio/samples": floats}),  # no sample rate beside it: a value that does not decode
        example({"audio/label": np.arange(4), "audio/sample_rate": 16000}),  # not a key naming samples
        example({"audio/pcm": np.array([0, 40000]), "audio/sample_rate": 16000}),  # wider than int16
        example({"audio/sample_rate": 16000, "audio/num_samples": 100}),  # single numbers
    ]
    code, lines = _media(_file(tmp_path, records), capsys)
    assert code == 1
    assert [(line["index"], line["key"], line["codec"]) for line in lines] == [
        (0, "speech/pcm16", "pcm_int16"), (1, "waveform", "pcm_float"), (2, "audio/data", "pcm_int16"),
        (3, "audio/samples", "pcm_float")]
    assert lines[3]["error"] == "audio/samples: no sample rate beside it (sample_rate, sampling_rate, sr)"
    assert (lines[0]["sample_rate"], lines[0]["channels"], lines[0]["frames"]) == (8000, 2, 300)
    assert lines[0]["sha256"] == _sha(pcm, "<i2")
    assert (lines[1]["sample_rate"], lines[1]["frames"], lines[1]["sha256"]) == (44100, 50, _sha(floats, "<f4"))


def test_mp3_frames_are_audio_only_when_they_decode(tmp_path, capsys):
    mp3 = _encoded(_tone(8000).astype(np.float32) / 32768, 16000, "MP3", "MPEG_LAYER_III")
    assert sniff_audio(mp3) == ("mp3", True)  # libsndfile writes bare frames, no ID3 tag
    records = [example({"sound": mp3}), example({"blob": b"\xff\xfb\x90\x00" + b"\x00" * 64})]
    code, lines = _media(_file(tmp_path, records), capsys)
    assert code == 0 and len(lines) == 1
    assert (lines[0]["codec"], lines[0]["sample_rate"], lines[0]["frames"], lines[0]["sha256"]) == (
        "mp3", 16000, 8000, None)


def test_a_file_without_audio_prints_nothing(tmp_path, capsys):
    code = main(["media", "--json", _file(tmp_path, [example(label=1), example(text=b"hello")])])
    captured = capsys.readouterr()
    assert code == 0 and captured.out == ""
    assert captured.err == "tfrlens-cli: no media values in 2 record(s)\n"


def test_audio_that_does_not_decode_is_a_line_with_an_error_and_exit_1(tmp_path, capsys):
    broken = b"fLaC" + b"\x00" * 40
    code, lines = _media(_file(tmp_path, [example({"audio/encoded": broken})]), capsys)
    assert code == 1
    assert lines[0]["codec"] == "flac" and lines[0]["frames"] is None and lines[0]["error"].startswith("flac bytes")


def test_sniffing_and_key_rule():
    assert sniff_audio(b"RIFF\x00\x00\x00\x00WAVEfmt ") == ("wav", False)
    assert sniff_audio(b"OggS\x00\x02" + b"\x00" * 22 + b"\x80theora") is None  # Ogg video is not audio
    assert sniff_audio(b"ID3\x04\x00") == ("mp3", False)
    assert sniff_audio(b"\xff\xfb\x90\x00") == ("mp3", True)  # bare frame: audio only if it decodes
    assert sniff_audio(b"\xff\xd8\xff\xe0") is None  # a JPEG
    assert names_audio("audio") and names_audio("a/pcm16_left") and names_audio("audio/values")
    assert not names_audio("audio/label") and not names_audio("values")


def test_encoded_clips_in_feature_list_steps():
    clip = _encoded(_tone(100), 16000, "WAV", "PCM_16")
    refs = find_audio(decode_record(sequence_example({"id": 1}, {"clips": [clip, b"text", clip]})))
    assert [(r.key, r.step, r.codec) for r in refs] == [("clips", 0, "wav"), ("clips", 2, "wav")]


def test_export_audio_round_trip(tmp_path, capsys):
    out = tmp_path / "wavs"
    assert main(["export", str(AUDIO), "--format", "audio", "--to", str(out)]) == 0
    assert capsys.readouterr().err == f"tfrlens-cli: wrote 12 audio files to {out}\n"
    assert sorted(p.name for p in out.iterdir())[:4] == [
        "000000_audio_encoded.wav", "000001_audio_encoded.wav", "000002_audio_samples.wav", "000003_audio_pcm16.wav"]
    for want in EXPECTED:
        name = f"{want['index']:06d}_{want['key'].replace('/', '_')}.wav"
        info = sf.info(str(out / name))
        assert info.subtype == ("FLOAT" if want["samples_dtype"] == "float32" else "PCM_16")
        samples, rate = sf.read(str(out / name), dtype=want["samples_dtype"], always_2d=True)
        assert (rate, samples.shape) == (want["sample_rate"], (want["frames"], want["channels"]))
        assert _sha(samples, "<f4" if want["samples_dtype"] == "float32" else "<i2") == want["sha256"]


def test_export_keeps_24_bit_and_stereo_samples(tmp_path):
    deep = (_tone(500, channels=2).astype(np.int32) << 8) - 5  # 24-bit values, whose low bits 16 bits lose
    path = _file(tmp_path, [example({"audio/encoded": _encoded(deep << 8, 44100, "FLAC", "PCM_24")})])
    out = tmp_path / "wavs"
    assert main(["export", path, "--format", "audio", "--to", str(out)]) == 0
    info = sf.info(str(out / "000000_audio_encoded.wav"))
    assert (info.format, info.subtype, info.samplerate) == ("WAV", "PCM_24", 44100)
    back, _ = sf.read(str(out / "000000_audio_encoded.wav"), dtype="int32", always_2d=True)
    assert np.array_equal(back >> 8, deep)


def test_without_soundfile_encoded_audio_is_one_line_hint_and_raw_pcm_still_listed(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "soundfile", None)  # as when it is not installed
    raw = _file(tmp_path, [example({"audio/pcm": np.arange(8), "audio/sample_rate": 8000})])
    code, lines = _media(raw, capsys)
    assert code == 0 and [line["codec"] for line in lines] == ["pcm_int16"]
    assert main(["media", str(AUDIO)]) == 2
    err = capsys.readouterr().err
    assert err == "tfrlens-cli: decoding encoded audio needs soundfile and libsndfile (pip install soundfile)\n"
