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
    tops: tuple[float, ...] = ()  # the loudest bin (dB) of the mix, then of each channel: 255 in their levels
    pyramid: EnvelopePyramid | None = None
    error: str | None = None

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate if self.samples is not None and self.sample_rate else 0.0

    def levels_for(self, channel: int | None) -> np.ndarray | None:
        """The spectrogram of ``channel`` (None: of the channels' mean)."""
        return self.levels if channel is None or not self.channel_levels else self.channel_levels[channel]

    def detail_levels(self, channel: int | None, start: int, end: int, columns: int) -> np.ndarray:
        """The spectrogram of frames [start, end) of ``channel`` (None: the mix), about ``columns`` frames
        across, coloured as the whole clip's: what a zoomed-in view shows (on a worker)."""
        data = self.samples if channel is None or not self.channel_levels else self.samples[:, channel]
        top = self.tops[0 if channel is None or not self.channel_levels else channel + 1]
        hop = max(1, (end - start) // max(1, columns))
        db = spectrogram(data[start:end + SPECTROGRAM_FFT - 1], self.sample_rate, SPECTROGRAM_FFT, hop)
        return spectrogram_levels(db, top=top)


def _levels(samples: np.ndarray, rate: int) -> tuple[np.ndarray, float]:
    """The spectrogram as levels, and its loudest bin in dB."""
    hop = max(MIN_HOP, len(samples) // SPECTROGRAM_FRAMES)
    db = spectrogram(samples, rate, SPECTROGRAM_FFT, hop)
    top = float(db.max())
    return spectrogram_levels(db, top=top), top


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
        mix = [_levels(samples, rate)]
        each = [_levels(samples[:, c], rate) for c in range(samples.shape[1])] if samples.shape[1] > 1 else []
        clips.append(LoadedClip(ref, samples, rate, mix[0][0], tuple(levels for levels, _ in each),
                                tuple(top for _, top in mix + each), EnvelopePyramid(samples)))
    return clips
