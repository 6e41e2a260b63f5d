"""Audio in a decoded record: encoded clips found by their bytes, raw PCM lists found by their key.

Encoded clips (WAV, FLAC, Ogg, MP3) decode through ``soundfile`` (libsndfile); raw
PCM is read with numpy. The rules are the ones docs/media.md states.
"""
from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from codec.decode.decoded import DecodedRecord, RecordKind
from codec.decode.decoder import (
    feature_dtype,
    feature_values,
    number_array,
    number_beside_or_why,
    record_feature_lists,
    record_features,
)
from codec.decode.media_lines import media_line
from codec.errors import TFRecordError, UsageError

__all__ = ["AUDIO_EXTRA", "AudioDecodeError", "AudioRef", "AudioSamples", "audio_media", "decode_audio",
           "find_audio", "names_audio", "names_encoded_audio", "pcm_ref", "sniff_audio", "wav_bytes"]

AUDIO_EXTRA = "pip install soundfile"
AUDIO_WORDS = frozenset({"audio", "wav", "wave", "pcm", "samples", "waveform"})
# A last key part this generic names audio when an earlier part does (``audio/data``).
GENERIC_WORDS = frozenset({"data", "values", "raw", "signal"})
# A last key part that names an audio file's bytes when an earlier part names audio (``audio/encoded``).
ENCODED_WORDS = frozenset({"encoded", "bytes", "file", "data", "content"})
RATE_NAMES = ("sample_rate", "sampling_rate", "sr")
CHANNEL_NAMES = ("channels", "num_channels")
INT16_MIN, INT16_MAX = -32768, 32767
MAX_RATE = 2 ** 31 - 1  # the highest sample rate (and channel count) libsndfile and a WAV header hold
READ_BLOCK = 1 << 16  # frames decoded at a time
# WAV subtypes whose samples a WAV holds unchanged; other sources are written as 32-bit float.
_WAV_KEEPS = {"PCM_16": "int16", "PCM_24": "int32", "PCM_32": "int32", "PCM_U8": "int16", "PCM_S8": "int16",
              "FLOAT": "float32", "DOUBLE": "float64"}


class AudioDecodeError(TFRecordError, ValueError):
    """Audio bytes that libsndfile cannot decode, or raw PCM that does not split into its channels."""


@dataclass(frozen=True)
class AudioRef:
    """One audio value of a record: ``codec`` is wav/flac/ogg/mp3 (``data`` the encoded bytes),
    pcm_int16/pcm_int32/pcm_float (``samples`` the values as stored, ``sample_rate``/``channels`` beside
    them), or unknown (other bytes under a key naming audio, for libsndfile to try)."""

    key: str
    codec: str
    value_index: int = 0
    step: int | None = None
    data: bytes = b""
    samples: np.ndarray | None = None
    sample_rate: int = 0
    channels: int = 1
    weak: bool = False  # bare MP3 frame sync: audio only if it decodes
    problem: str | None = None  # found but unusable (empty bytes, no sample rate): why it does not decode


@dataclass(frozen=True)
class AudioSamples:
    """Decoded audio: ``samples`` frames x channels (interleaved in memory), and the source's subtype."""

    samples: np.ndarray
    sample_rate: int
    subtype: str  # libsndfile's (PCM_16, PCM_24, FLOAT, VORBIS, ...); PCM_16/FLOAT for raw lists
    container: str = ""  # libsndfile's major format of encoded bytes (WAV, AIFF, ...); "" for raw lists

    @property
    def frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1])

    def sha256(self) -> str | None:
        """Of the samples interleaved little-endian: int16 for 16-bit PCM, float32 for float lists; else None."""
        if self.subtype == "PCM_16":
            return hashlib.sha256(np.ascontiguousarray(self.samples, dtype="<i2").tobytes()).hexdigest()
        if self.subtype == "FLOAT_LIST":
            return hashlib.sha256(np.ascontiguousarray(self.samples, dtype="<f4").tobytes()).hexdigest()
        return None


# ---------------------------------------------------------------- finding


def sniff_audio(data: bytes) -> tuple[str, bool] | None:
    """(codec, weak) of encoded audio bytes by their first bytes, or None; weak for bare MP3 frames."""
    head = data[:12]
    if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
        return "wav", False
    if head[:4] == b"fLaC":
        return "flac", False
    if head[:4] == b"OggS":
        page = data[:128]  # the first page names its codec; Theora and other video are not audio
        return ("ogg", False) if any(m in page for m in (b"\x01vorbis", b"OpusHead", b"\x7fFLAC")) else None
    if head[:3] == b"ID3":
        return "mp3", False
    if _mpeg_frame_header(head):
        return "mp3", True
    return None


def _mpeg_frame_header(head: bytes) -> bool:
    """An MPEG audio layer I-III frame header: sync, and no reserved version, layer, bitrate or rate."""
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version, layer = (head[1] >> 3) & 3, (head[1] >> 1) & 3
    bitrate, rate = head[2] >> 4, (head[2] >> 2) & 3
    return version != 1 and layer != 0 and bitrate not in (0, 15) and rate != 3


def _key_words(part: str) -> set[str]:
    """``pcm16_left`` -> {"pcm", "left"}: lower-case words, trailing digits dropped."""
    return {w.rstrip("0123456789") for w in re.split(r"[^a-z0-9]+", part.lower()) if w}


def names_audio(key: str) -> bool:
    """A key naming raw audio: its last ``/`` part holds an audio word, or is a generic word
    (data, values, raw, signal) under a part that holds one."""
    parts = key.split("/")
    if _key_words(parts[-1]) & AUDIO_WORDS:
        return True
    return parts[-1].lower() in GENERIC_WORDS and any(_key_words(p) & AUDIO_WORDS for p in parts[:-1])


def _beside(features: Any, key: str, names: tuple[str, ...]) -> tuple[int | None, str | None]:
    """(the first whole number from 1 to MAX_RATE under ``names`` beside ``key``, None), in
    decoder.number_beside's places; (None, why) when such a feature is there but none holds one."""
    value, refused = number_beside_or_why(features, key, names, "audio", whole=True, limit=MAX_RATE)
    return (None if value is None else int(value)), refused


def pcm_ref(key: str, samples: np.ndarray, sample_rate: int, channels: int = 1) -> AudioRef:
    """Raw PCM ``samples`` (as stored, interleaved) as an AudioRef: integers that fit int16 are 16-bit PCM,
    ones that fit int32 32-bit, floats float32; wider integers a value with a ``problem``."""
    flat = np.asarray(samples).reshape(-1)
    if flat.dtype.kind == "f":
        return AudioRef(key, "pcm_float", samples=flat.astype(np.float32), sample_rate=sample_rate,
                        channels=channels)
    low, high = (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
    if INT16_MIN <= low and high <= INT16_MAX:
        return AudioRef(key, "pcm_int16", samples=flat.astype(np.int16), sample_rate=sample_rate,
                        channels=channels)
    if -2 ** 31 <= low and high < 2 ** 31:
        return AudioRef(key, "pcm_int32", samples=flat.astype(np.int32), sample_rate=sample_rate,
                        channels=channels)
    return AudioRef(key, "pcm_int32", problem=f"{key}: samples wider than 32 bits")


def _raw_pcm(features: Any, key: str, dtype: str | None, values: np.ndarray) -> AudioRef | None:
    """An int or float list under a key naming audio as raw PCM, with the sample rate beside it; without
    one (or with one that is not a positive whole number) a value with a ``problem``."""
    if dtype not in ("int64", "float") or len(values) < 2 or not names_audio(key):
        return None
    if dtype == "int64":
        samples = np.asarray(values, dtype=np.int64)
        if samples.min() < INT16_MIN or samples.max() > INT16_MAX:
            return None  # wider integers: not 16-bit PCM (docs/media.md)
    else:
        samples = np.asarray(values, dtype=np.float32)
    rate, refused = _beside(features, key, RATE_NAMES)
    ref = pcm_ref(key, samples, rate or 0, _beside(features, key, CHANNEL_NAMES)[0] or 1)
    if rate is None:
        why = refused or f"no sample rate beside it ({', '.join(RATE_NAMES)})"
        return replace(ref, problem=f"{key}: {why}")
    return ref


def names_encoded_audio(key: str) -> bool:
    """A bytes key meant for an audio file: one naming audio, or ``…/encoded`` (``bytes``, ``file``)
    under a part that names audio (``audio/encoded``)."""
    parts = key.split("/")
    return names_audio(key) or (parts[-1].lower() in ENCODED_WORDS
                                and any(_key_words(p) & AUDIO_WORDS for p in parts[:-1]))


def _encoded(key: str, dtype: str | None, values: list, step: int | None) -> list[AudioRef]:
    """Encoded clips of a bytes feature; under a key naming audio, a value that is none is one with a problem."""
    if dtype != "bytes":
        return []
    refs = []
    meant = names_encoded_audio(key)
    for n, value in enumerate(values):
        found = sniff_audio(value)
        if found is not None:
            refs.append(AudioRef(key, found[0], n, step, data=bytes(value), weak=found[1] and not meant))
        elif meant:  # another container libsndfile may read (AIFF, CAF, AU...), or a value that is no audio
            problem = f"{key}: empty (0 bytes)" if not value else None
            refs.append(AudioRef(key, "unknown", n, step, data=bytes(value), problem=problem))
    return refs


def find_audio(decoded: DecodedRecord) -> list[AudioRef]:
    """Every audio value of a record, keys in sorted order: encoded clips in any bytes feature (an
    Example's, a SequenceExample's context and each step of its lists), raw PCM in the features. An Event's
    audio is where its summaries say (the payload's ``audio``), and nowhere else."""
    if decoded.kind is RecordKind.EVENT:
        return decoded.audio() if decoded.audio is not None else []
    features = record_features(decoded)
    if features is None:
        return []
    given = {ref.key: ref for ref in decoded.audio()} if decoded.audio is not None else {}
    refs: list[AudioRef] = []
    for key in sorted(set(features) | set(given)):
        if key in given:  # where the payload's spec says audio is (a TFDS Audio feature)
            refs.append(given[key])
            continue
        dtype = feature_dtype(features[key])
        if dtype == "bytes":
            refs.extend(_encoded(key, dtype, feature_values(features[key])[1], None))
        elif dtype is not None and names_audio(key):  # (a number list elsewhere is never read)
            raw = _raw_pcm(features, key, dtype, number_array(features[key]))
            if raw is not None:
                refs.append(raw)
    lists = record_feature_lists(decoded) or {}
    for key in sorted(lists):
        for step, feature in enumerate(lists[key].feature):
            refs.extend(_encoded(key, *feature_values(feature), step))
    return refs


# ---------------------------------------------------------------- decoding


def _soundfile():
    try:
        import soundfile
    except ImportError:
        raise UsageError(f"decoding encoded audio needs soundfile and libsndfile ({AUDIO_EXTRA})") from None
    except OSError as exc:  # a soundfile without libsndfile (an unusual platform, no bundled library)
        raise UsageError(f"soundfile cannot load libsndfile ({exc}); {AUDIO_EXTRA}") from None
    return soundfile


def decode_audio(ref: AudioRef) -> AudioSamples:
    """The samples of ``ref``, frames x channels, in a dtype that holds them exactly (16-bit PCM int16,
    24/32-bit int32, float float32); lossy and other codecs as the decoder's float32.

    Raises AudioDecodeError (one line) for bytes libsndfile cannot read and for a ref with a ``problem``.
    """
    if ref.problem is not None:
        raise AudioDecodeError(ref.problem)
    if ref.samples is not None:
        if ref.samples.size % ref.channels:
            raise AudioDecodeError(f"{ref.samples.size:,} values do not split into {ref.channels} channels")
        subtype = {"pcm_int16": "PCM_16", "pcm_int32": "PCM_32"}.get(ref.codec, "FLOAT_LIST")
        return AudioSamples(ref.samples.reshape(-1, ref.channels), ref.sample_rate, subtype)
    sf = _soundfile()
    try:
        with sf.SoundFile(io.BytesIO(ref.data)) as f:
            dtype = _WAV_KEEPS.get(f.subtype, "float32")
            # A block at a time: a header's frame count is not trusted with one allocation of its size.
            blocks = []
            while len(block := f.read(READ_BLOCK, dtype=dtype, always_2d=True)):
                blocks.append(block)
            samples = np.concatenate(blocks) if blocks else np.zeros((0, f.channels), dtype=dtype)
            return AudioSamples(samples, int(f.samplerate), f.subtype, f.format)
    except (sf.LibsndfileError, RuntimeError, ValueError, TypeError) as exc:
        if ref.codec == "unknown":
            raise AudioDecodeError(f"{ref.key}: not audio libsndfile reads ({len(ref.data):,} bytes starting "
                                   f"{ref.data[:4].hex(' ')})") from None
        raise AudioDecodeError(f"{ref.codec} bytes do not decode: {_one_line(exc)}") from None


# libsndfile names the in-memory file it could not open ("Error opening <_io.BytesIO object at 0x...>: "),
# an address that differs from run to run and says nothing to the user.
_OPENING = re.compile(r"Error opening <[^>]*>: ")


def _one_line(exc: Exception) -> str:
    return " ".join(_OPENING.sub("", str(exc)).split()) or type(exc).__name__


def wav_bytes(ref: AudioRef) -> bytes:
    """``ref`` as a WAV file: a WAV's own bytes; other lossless samples unchanged (16-bit stays PCM_16,
    24-bit PCM_24, float FLOAT); lossy codecs' decoded samples as FLOAT."""
    if ref.codec == "wav":
        decode_audio(ref)  # (bytes that do not decode are refused, not copied)
        return ref.data
    audio = decode_audio(ref)
    subtype = {"FLOAT_LIST": "FLOAT", "PCM_S8": "PCM_U8"}.get(audio.subtype, audio.subtype)
    if subtype not in _WAV_KEEPS:
        subtype = "FLOAT"
    out = io.BytesIO()
    sf = _soundfile()
    try:
        sf.write(out, audio.samples, audio.sample_rate, subtype=subtype, format="WAV")
    except (sf.LibsndfileError, RuntimeError, ValueError, TypeError, OverflowError) as exc:
        raise AudioDecodeError(f"{audio.channels} channels at {audio.sample_rate:,} Hz do not make a WAV file: "
                               f"{_one_line(exc)}") from None
    return out.getvalue()


# ---------------------------------------------------------------- media lines


def audio_media(index: int, decoded: DecodedRecord) -> list[dict]:
    """``media``'s lines for the audio of record ``index``: codec, rate, channels, frames, duration and
    the samples' sha256; a value that does not decode has an ``error`` and null figures."""
    lines = []
    for ref in find_audio(decoded):
        line = media_line(index, ref.key, "audio", ref.codec, ref.step, ref.value_index)
        try:
            audio = decode_audio(ref)
        except AudioDecodeError as exc:
            if ref.weak:
                continue
            line.update(sample_rate=None, channels=None, frames=None, duration=None, sha256=None, error=str(exc))
        else:
            if ref.codec == "unknown":
                line["codec"] = audio.container.lower()  # what libsndfile found (aiff, caf, au, ...)
            line.update(sample_rate=audio.sample_rate, channels=audio.channels, frames=audio.frames,
                        duration=audio.frames / audio.sample_rate if audio.sample_rate else None,
                        sha256=audio.sha256())
        lines.append(line)
    return lines
