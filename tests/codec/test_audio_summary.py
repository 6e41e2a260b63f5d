"""codec.decode.audio_summary: the tree's line for an audio value (header only for encoded clips) and a
gallery tile's duration text and envelope."""
from __future__ import annotations

import io

import numpy as np
import pytest

sf = pytest.importorskip("soundfile")

from codec.decode.audio import AudioDecodeError, AudioRef, find_audio  # noqa: E402
from codec.decode.audio_summary import (  # noqa: E402
    audio_glance,
    bytes_summary,
    clock_text,
    pcm_summary,
    rate_text,
    summary_text,
    tile_envelope,
    tile_text,
)
from codec.decode.decoder import decode_record  # noqa: E402
from tests.builders import FIXTURES, bytestrings, decoded_example, floats, ints  # noqa: E402


def _tone(frames: int, channels: int = 1, rate: int = 16000, level: float = 0.5) -> np.ndarray:
    t = np.arange(frames) / rate
    return np.stack([np.sin(2 * np.pi * (220 + 110 * c) * t) * level for c in range(channels)], axis=1)


def _encoded(samples: np.ndarray, rate: int, fmt: str, subtype: str) -> bytes:
    out = io.BytesIO()
    sf.write(out, samples, rate, format=fmt, subtype=subtype)
    return out.getvalue()


@pytest.mark.parametrize(("fmt", "subtype", "rate", "channels", "frames", "expected"), [
    ("WAV", "PCM_16", 16000, 1, 4000, "WAV · 16 kHz · mono · 0.25 s"),
    ("WAV", "PCM_16", 8000, 2, 12000, "WAV · 8 kHz · stereo · 1.50 s"),
    ("FLAC", "PCM_24", 48000, 2, 24000, "FLAC · 48 kHz · stereo · 0.50 s"),
    ("OGG", "VORBIS", 44100, 1, 44100, "Ogg Vorbis · 44.1 kHz · mono · 1.00 s"),
    ("WAV", "FLOAT", 22050, 3, 2205, "WAV · 22.05 kHz · 3 ch · 0.10 s"),
])
def test_encoded_clips_read_from_their_header(fmt, subtype, rate, channels, frames, expected):
    data = _encoded(_tone(frames, channels, rate), rate, fmt, subtype)
    assert bytes_summary(data) == expected


def test_header_only_a_truncated_wav_still_says_what_its_header_does():
    data = _encoded(_tone(16000), 16000, "WAV", "PCM_16")
    assert bytes_summary(data[:2000]).startswith("WAV · 16 kHz · mono")


def test_bytes_that_are_not_audio_have_no_summary():
    assert bytes_summary(b"hello world, not audio") is None
    assert bytes_summary(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40) is None
    assert bytes_summary(b"\xff\xfb\x90\x00" + b"\x00" * 60) is None  # bare MPEG frame sync, does not decode


def test_audio_whose_header_does_not_read_says_so_in_one_line():
    text = bytes_summary(b"RIFF\x24\x00\x00\x00WAVEjunk")
    assert text.startswith("WAV · does not decode: ")
    assert "\n" not in text and "BytesIO" not in text


def test_raw_pcm_lists_show_rate_channels_and_duration():
    decoded = decoded_example(**{"audio/pcm16": ints(*range(-800, 800)), "audio/sample_rate": ints(8000),
                                 "speech/samples": floats(*([0.25] * 1000)), "speech/sr": ints(16000),
                                 "speech/channels": ints(2), "label": ints(*range(5))})
    assert pcm_summary(decoded, "audio/pcm16") == "int16 PCM · 8 kHz · 1 ch · 0.20 s"
    assert pcm_summary(decoded, "speech/samples") == "float PCM · 16 kHz · 2 ch · 0.03 s"
    assert pcm_summary(decoded, "label") is None  # the key does not name audio
    assert pcm_summary(decoded, "audio/sample_rate") is None  # one number, not a list


def test_raw_pcm_that_does_not_split_into_its_channels():
    decoded = decoded_example(**{"audio": ints(1, 2, 3), "sample_rate": ints(16000), "channels": ints(2)})
    assert pcm_summary(decoded, "audio").startswith("int16 PCM · does not decode: 3 values do not split")


def test_raw_pcm_without_a_sample_rate_says_what_is_missing():
    """A number list under a key naming audio is meant as audio: without a rate it says so (as media does)."""
    summary = pcm_summary(decoded_example(audio=ints(1, 2, 3, 4)), "audio")
    assert summary == "int16 PCM · does not decode: audio: no sample rate beside it (sample_rate, sampling_rate, sr)"
    assert pcm_summary(decoded_example(values=ints(1, 2, 3, 4)), "values") is None


def test_the_reference_fixture_reads_as_its_manifest_says():
    from codec import TFRecordFile

    lines = []
    with TFRecordFile(str(FIXTURES / "media" / "audio.tfrecord")) as f:
        f.build_index()
        for i in range(4):
            (ref,) = find_audio(decode_record(f.read(i).data))
            lines.append(summary_text(ref))
    assert lines == ["WAV · 16 kHz · mono · 0.25 s", "FLAC · 16 kHz · mono · 0.30 s",
                     "float PCM · 16 kHz · 1 ch · 0.35 s", "int16 PCM · 16 kHz · 1 ch · 0.40 s"]


def test_clock_and_rate_texts():
    assert clock_text(3.2) == "0:03.2"
    assert clock_text(0.25) == "0:00.3"  # half up, not to even
    assert clock_text(59.96) == "1:00.0"
    assert clock_text(3723.4) == "1:02:03.4"
    assert rate_text(16000) == "16 kHz" and rate_text(44100) == "44.1 kHz" and rate_text(500) == "500 Hz"


def test_tile_envelope_is_the_clips_extremes_at_the_tiles_width_scaled_to_full_range():
    samples = np.zeros((16000, 2), dtype=np.int16)
    samples[100, 0] = 32767  # one sample: a peak a column must still show
    samples[9000, 1] = -16384
    ref = AudioRef("a", "flac", data=_encoded(samples, 16000, "FLAC", "PCM_16"))
    glance, low, high = tile_envelope(ref, 100)
    assert (glance.sample_rate, glance.channels, glance.frames) == (16000, 2, 16000)
    assert tile_text(glance) == "0:01.0 · 16 kHz"
    assert low.shape == high.shape == (100,) and low.dtype == np.float32
    assert high[0] == pytest.approx(32767 / 32768) and high[1:].max() == 0
    assert low[56] == pytest.approx(-0.5) and np.delete(low, 56).min() == 0


def test_tile_envelope_of_a_24_bit_flac_and_a_float_list():
    ref = AudioRef("a", "flac", data=_encoded(_tone(8000, 1, 8000, level=0.75), 8000, "FLAC", "PCM_24"))
    _, low, high = tile_envelope(ref, 64)
    assert high.max() == pytest.approx(0.75, abs=1e-3) and low.min() == pytest.approx(-0.75, abs=1e-3)
    floats_ref = AudioRef("a", "pcm_float", samples=np.array([0.0, 2.0, -0.5, 0.25], dtype=np.float32),
                          sample_rate=8000)
    _, low, high = tile_envelope(floats_ref, 128)  # fewer frames than columns: one column each
    assert list(high) == [0.0, 1.0, -0.5, 0.25]  # clipped to -1..1 for drawing


def test_a_clip_that_does_not_decode_raises_one_line():
    with pytest.raises(AudioDecodeError):
        audio_glance(AudioRef("a", "flac", data=b"fLaC" + b"\x00" * 30))
    with pytest.raises(AudioDecodeError):
        tile_envelope(AudioRef("a", "flac", data=b"fLaC" + b"\x00" * 30), 64)


def test_bytes_features_are_summarized_value_by_value():
    decoded = decoded_example(clip=bytestrings(_encoded(_tone(800), 8000, "WAV", "PCM_16"), b"text"))
    (ref,) = find_audio(decoded)
    assert summary_text(ref) == "WAV · 8 kHz · mono · 0.10 s"
