"""Decode a record's audio values off the GUI thread: samples, their envelope pyramid, and spectrograms
about a screen wide (of the channels' mean, and of each channel of a multi-channel clip)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.decode.audio import AudioDecodeError, AudioRef, decode_audio
from codec.decode.audio_views import EnvelopePyramid, spectrogram, spectrogram_levels
from codec.errors import UsageError

SPECTROGRAM_FFT = 512
SPECTROGRAM_FRAMES = 1500  # about a screen's width: the hop grows with the clip
MIN_HOP = 16  # a short clip still gets frames enough for a smooth image


@dataclass(frozen=True)
class LoadedClip:
    """One audio value decoded for the Audio tab, or its one-line ``error``."""

    ref: AudioRef
    samples: np.ndarray | None = None  # frames x channels
    sample_rate: int = 0
    levels: np.ndarray | None = None  # the spectrogram as 0-255, bins x frames, low frequencies first
    channel_levels: tuple[np.ndarray, ...] = ()  # each channel's, for a clip of two or more
    pyramid: EnvelopePyramid | None = None
    error: str | None = None

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate if self.samples is not None and self.sample_rate else 0.0

    def levels_for(self, channel: int | None) -> np.ndarray | None:
        """The spectrogram of ``channel`` (None: of the channels' mean)."""
        return self.levels if channel is None or not self.channel_levels else self.channel_levels[channel]


def _levels(samples: np.ndarray, rate: int) -> np.ndarray:
    hop = max(MIN_HOP, len(samples) // SPECTROGRAM_FRAMES)
    return spectrogram_levels(spectrogram(samples, rate, SPECTROGRAM_FFT, hop))


def load_clips(refs: list[AudioRef]) -> list[LoadedClip]:
    """Every ref decoded (a bare MP3 sync that does not decode is dropped, as ``media`` drops it)."""
    clips = []
    for ref in refs:
        try:
            audio = decode_audio(ref)
        except (AudioDecodeError, UsageError) as exc:
            if not ref.weak:
                clips.append(LoadedClip(ref, error=str(exc)))
            continue
        samples, rate = audio.samples, audio.sample_rate
        each = tuple(_levels(samples[:, c], rate) for c in range(samples.shape[1])) if samples.shape[1] > 1 else ()
        clips.append(LoadedClip(ref, samples, rate, _levels(samples, rate), each, EnvelopePyramid(samples)))
    return clips
