"""What a glance at an audio value says: one line for the record tree, a duration and an envelope for a tile.

The line reads ``WAV · 16 kHz · mono · 0.25 s`` (raw lists: ``float PCM · 16 kHz · 1 ch · 0.35 s``).
Encoded clips are read from their header only (``soundfile.info``); raw PCM from its list's length and
the sample rate and channels beside it. The rules for what is audio are codec.decode.audio's.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass

import numpy as np

from codec.decode.audio import AudioDecodeError, AudioRef, decode_audio, find_audio, names_audio, sniff_audio
from codec.decode.audio_views import waveform_envelope
from codec.decode.decoded import DecodedRecord

__all__ = ["AudioGlance", "audio_glance", "bytes_summary", "clock_text", "glance_text", "pcm_summary", "rate_text",
           "summary_text", "tile_envelope", "tile_text"]

CODEC_NAMES = {"wav": "WAV", "flac": "FLAC", "ogg": "Ogg", "mp3": "MP3", "pcm_int16": "int16 PCM",
               "pcm_float": "float PCM"}
_OGG_STREAMS = {"VORBIS": "Vorbis", "OPUS": "Opus", "FLAC": "FLAC"}
_CHANNEL_WORDS = {1: "mono", 2: "stereo"}
# libsndfile names the BytesIO object in its messages: that part says nothing to a user.
_OPENING = re.compile(r"Error opening <[^>]*>: ")


@dataclass(frozen=True)
class AudioGlance:
    """What an audio value's header (or a raw list's length and neighbours) says: no samples decoded."""

    codec: str  # as AudioRef.codec
    sample_rate: int
    channels: int
    frames: int
    stream: str = ""  # an Ogg clip's codec (Vorbis, Opus, FLAC)

    @property
    def duration(self) -> float | None:
        return self.frames / self.sample_rate if self.sample_rate > 0 else None

    @property
    def name(self) -> str:
        """``WAV``, ``Ogg Vorbis``, ``float PCM``."""
        base = CODEC_NAMES.get(self.codec, self.codec)
        return f"{base} {self.stream}" if self.stream else base


def _message(exc: Exception) -> str:
    return " ".join(_OPENING.sub("", str(exc)).split()) or type(exc).__name__


def audio_glance(ref: AudioRef) -> AudioGlance:
    """The rate, channels and length of ``ref``: an encoded clip's header only; a raw list as found.

    Raises AudioDecodeError (one line) when the header cannot be read or a list does not split into
    its channels.
    """
    if ref.samples is not None:
        frames = decode_audio(ref).frames  # a reshape, no copy; says why a list does not split
        return AudioGlance(ref.codec, ref.sample_rate, ref.channels, frames)
    try:
        import soundfile
    except (ImportError, OSError) as exc:
        raise AudioDecodeError(f"{ref.codec} needs soundfile and libsndfile ({_message(exc)})") from None
    try:
        info = soundfile.info(io.BytesIO(ref.data))
    except (RuntimeError, ValueError, TypeError) as exc:
        raise AudioDecodeError(f"{ref.codec} bytes do not decode: {_message(exc)}") from None
    stream = _OGG_STREAMS.get(info.subtype, "") if ref.codec == "ogg" else ""
    return AudioGlance(ref.codec, int(info.samplerate), int(info.channels), int(info.frames), stream)


def rate_text(rate: int) -> str:
    """``16 kHz``, ``44.1 kHz``, ``22.05 kHz``; rates under 1 kHz in Hz."""
    return f"{rate / 1000:g} kHz" if rate >= 1000 else f"{rate} Hz"


def clock_text(seconds: float) -> str:
    """``0:03.2``: minutes, seconds and tenths rounded half up (``1:02:03.4`` past an hour)."""
    tenths = math.floor(seconds * 10 + 0.5 + 1e-9)
    minutes, rest = divmod(tenths, 600)
    hours, minutes = divmod(minutes, 60)
    clock = f"{minutes}:{rest // 10:02d}.{rest % 10}"
    return f"{hours}:{minutes:02d}:{rest // 10:02d}.{rest % 10}" if hours else clock


def _seconds_text(seconds: float | None) -> str:
    if seconds is None:
        return "? s"
    return f"{seconds:.2f} s" if seconds < 60 else clock_text(seconds)


def glance_text(glance: AudioGlance, raw: bool = False) -> str:
    """``WAV · 16 kHz · mono · 0.25 s``: channels read ``mono``/``stereo`` from an encoded clip's header,
    ``N ch`` for a raw list (``raw``: the count a ``channels`` feature gives, 1 without one) and past two."""
    words = {} if raw else _CHANNEL_WORDS
    channels = words.get(glance.channels, f"{glance.channels} ch")
    return f"{glance.name} · {rate_text(glance.sample_rate)} · {channels} · {_seconds_text(glance.duration)}"


def summary_text(ref: AudioRef) -> str:
    """The tree's line for ``ref`` (:func:`glance_text`); ``WAV · does not decode: …`` when unreadable."""
    try:
        glance = audio_glance(ref)
    except AudioDecodeError as exc:
        return f"{CODEC_NAMES.get(ref.codec, ref.codec)} · does not decode: {exc}"
    return glance_text(glance, raw=ref.samples is not None)


def bytes_summary(data: bytes) -> str | None:
    """The tree's line for a bytes value that is encoded audio (by its first bytes), else None.

    Bare MPEG frame sync is audio only when its header reads (as ``media`` lists it only when it decodes).
    """
    found = sniff_audio(data)
    if found is None:
        return None
    ref = AudioRef("", found[0], data=bytes(data), weak=found[1])
    if ref.weak:
        try:
            audio_glance(ref)
        except AudioDecodeError:
            return None
    return summary_text(ref)


def pcm_summary(decoded: DecodedRecord, key: str) -> str | None:
    """The tree's line for feature ``key`` when it is raw PCM (a number list under a key naming audio,
    with a sample rate beside it), else None."""
    if not names_audio(key):
        return None
    ref = next((r for r in find_audio(decoded) if r.key == key and r.samples is not None), None)
    return None if ref is None else summary_text(ref)


def tile_text(glance: AudioGlance) -> str:
    """A gallery tile's line: ``0:03.2 · 16 kHz``."""
    duration = glance.duration
    clock = "?" if duration is None else clock_text(duration)
    return f"{clock} · {rate_text(glance.sample_rate)}"


def tile_envelope(ref: AudioRef, columns: int) -> tuple[AudioGlance, np.ndarray, np.ndarray]:
    """The clip's glance and its min/max envelope at ``columns`` columns, channels together, as float32
    in -1..1 (integer samples scaled by their type's full range). Raises AudioDecodeError."""
    audio = decode_audio(ref)
    samples = audio.samples
    mins, maxs = waveform_envelope(samples, columns)
    low, high = mins.min(axis=0).astype(np.float32), maxs.max(axis=0).astype(np.float32)
    if np.issubdtype(samples.dtype, np.integer):
        scale = float(np.iinfo(samples.dtype).max) + 1.0
        low /= scale
        high /= scale
    glance = AudioGlance(ref.codec, audio.sample_rate, audio.channels, audio.frames)
    return glance, np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)
