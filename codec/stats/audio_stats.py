"""Audio statistics per feature: durations, sample rates, channels and values that do not decode.

Audio is found as ``tfrlens-cli media`` finds it (:func:`codec.decode.audio.find_audio`). Encoded
clips are measured from their header alone (libsndfile opens them and reports frames, rate and
channels without decoding a sample); raw PCM lists from their length and the sample rate beside
them. Every figure depends on the values alone, so :meth:`AudioStats.merge` of any split of the
records equals one pass over them.
"""
from __future__ import annotations

import io

import numpy as np

from codec.decode.audio import AudioDecodeError, AudioRef, decode_audio, find_audio, names_audio
from codec.decode.decoded import DecodedRecord
from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64
from codec.stats.numbers import FLUSH_VALUES, Numbers

__all__ = ["AudioKeyStats", "AudioStats", "audio_candidates", "clip_header"]

# The first four bytes codec.decode.audio.sniff_audio knows (as little-endian uint32), and ID3's three;
# an MPEG frame sync (0xFF, then three set bits) is the other start it takes.
_MAGIC4 = np.frombuffer(b"RIFFRF64fLaCOggS", dtype="<u4")
_ID3 = int.from_bytes(b"ID3", "little")


def clip_header(ref: AudioRef) -> tuple[int, int, int]:
    """(sample rate, channels, frames) of one audio value without decoding its samples: an encoded
    clip's header (as libsndfile reads it), a PCM list's length over its channels.

    Raises AudioDecodeError (one line) for bytes libsndfile cannot open.
    """
    if ref.samples is not None:
        audio = decode_audio(ref)  # (a reshape: raises when the list does not split into its channels)
        return audio.sample_rate, audio.channels, audio.frames
    import soundfile as sf

    try:
        with sf.SoundFile(io.BytesIO(ref.data)) as f:
            return int(f.samplerate), int(f.channels), int(f.frames)
    except (sf.LibsndfileError, RuntimeError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise AudioDecodeError(f"{ref.codec} bytes do not decode: {reason}") from None


def _add_count(counts: dict, key, n: int = 1) -> None:
    counts[key] = counts.get(key, 0) + n


class AudioKeyStats:
    """The audio values of one feature: how many, by codec, their durations, rates and channels."""

    def __init__(self) -> None:
        self.count = 0
        self.undecodable = 0
        self.codecs: dict[str, int] = {}
        self.sample_rates: dict[int, int] = {}
        self.channels: dict[int, int] = {}
        self.durations = Numbers(False, double=True)  # seconds
        self._waiting: list[float] = []  # durations not folded into ``durations`` yet

    def add(self, ref: AudioRef) -> None:
        try:
            rate, channels, frames = clip_header(ref)
        except AudioDecodeError:
            if ref.weak:  # bare MP3 frame sync that does not open: not audio (as media says)
                return
            self.undecodable += 1
        else:
            _add_count(self.sample_rates, rate)
            _add_count(self.channels, channels)
            self._waiting.append(frames / rate if rate else 0.0)
            if len(self._waiting) >= FLUSH_VALUES:
                self._flush()
        self.count += 1
        _add_count(self.codecs, ref.codec)

    def _flush(self) -> None:
        if self._waiting:
            self.durations.add(np.array(self._waiting, dtype=np.float64))
            self._waiting = []

    def merge(self, other: AudioKeyStats) -> None:
        self.count += other.count
        self.undecodable += other.undecodable
        for mine, theirs in ((self.codecs, other.codecs), (self.sample_rates, other.sample_rates),
                             (self.channels, other.channels)):
            for k, n in theirs.items():
                _add_count(mine, k, n)
        self._flush()
        other._flush()
        self.durations.merge(other.durations)

    def to_json(self) -> dict:
        self._flush()
        nums, hist = self.durations, self.durations.hist
        assert hist is not None
        duration = dict(nums.summary(), histogram=hist.result(nums.min, nums.max, False, double=True))
        return {"count": self.count, "undecodable": self.undecodable, "codecs": _ranked(self.codecs),
                "duration": duration, "sample_rates": _pairs(self.sample_rates), "channels": _pairs(self.channels)}


def _ranked(counts: dict) -> dict:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _pairs(counts: dict) -> list[list[int]]:
    """[value, count] pairs, most common first (ties: the smaller value first)."""
    return [[int(v), n] for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


class AudioStats:
    """Audio statistics of a pass, by feature: (True, key) for a feature list's steps, (False, key) else."""

    def __init__(self) -> None:
        self.keys: dict[tuple[bool, str], AudioKeyStats] = {}

    def add_decoded(self, decoded: DecodedRecord) -> None:
        """Every audio value of one decoded record."""
        for ref in find_audio(decoded):
            where = (ref.step is not None, ref.key)
            acc = self.keys.get(where)
            if acc is None:
                acc = self.keys[where] = AudioKeyStats()
            acc.add(ref)

    def merge(self, other: AudioStats) -> None:
        for where, theirs in other.keys.items():
            acc = self.keys.get(where)
            if acc is None:
                acc = self.keys[where] = AudioKeyStats()
            acc.merge(theirs)

    def section(self, sequence: bool) -> dict[str, dict]:
        """The ``audio`` objects of a report's features (``sequence``: of its feature lists), by key; only
        keys with at least one audio value."""
        return {key: acc.to_json() for (steps, key), acc in sorted(self.keys.items())
                if steps == sequence and acc.count}


def audio_candidates(cols, buf: bytes) -> np.ndarray:
    """Records of a columnar batch (:class:`codec.decode.example_columns.ExampleColumns` over ``buf``)
    that may hold audio: a bytes value whose first bytes start a clip as media sniffs it, or a list of two or more
    numbers under a key that names audio. The others need not be decoded again to look for it."""
    kinds, found = cols.entry_kind, []
    starts, ends = cols.bytes_starts, cols.bytes_ends
    if starts.size:
        a = np.frombuffer(buf, dtype=np.uint8)
        long = np.flatnonzero(ends - starts >= 4)
        at = starts[long]
        head = a[at].astype(np.uint32) | a[at + 1].astype(np.uint32) << 8 | a[at + 2].astype(np.uint32) << 16
        sync = (a[at] == 0xFF) & ((a[at + 1] & 0xE0) == 0xE0)
        head4 = head | a[at + 3].astype(np.uint32) << 24
        hit = long[np.isin(head4, _MAGIC4) | (head == _ID3) | sync]
        if hit.size:
            entries = np.flatnonzero(kinds == KIND_BYTES)  # their values follow one another from entry_offset
            owner = entries[np.searchsorted(cols.entry_offset[entries], hit, side="right") - 1]
            found.append(cols.entry_record[owner])
    audio_keys = [k for k, name in enumerate(cols.keys) if names_audio(name)]
    if audio_keys:
        numeric = ((kinds == KIND_INT64) | (kinds == KIND_FLOAT)) & (cols.entry_count >= 2)
        found.append(cols.entry_record[numeric & np.isin(cols.entry_key, audio_keys)])
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
