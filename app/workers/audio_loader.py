"""Decode a record's audio values off the GUI thread: samples, and a spectrogram about a screen wide."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.decode.audio import AudioDecodeError, AudioRef, decode_audio
from codec.decode.audio_views import spectrogram
from codec.errors import UsageError

SPECTROGRAM_FFT = 512
SPECTROGRAM_FRAMES = 1500  # about a screen's width: the hop grows with the clip
DB_RANGE = 90.0  # the image spans the loudest bin down to this many dB below it


@dataclass(frozen=True)
class LoadedClip:
    """One audio value decoded for the Audio tab, or its one-line ``error``."""

    ref: AudioRef
    samples: np.ndarray | None = None  # frames x channels
    sample_rate: int = 0
    levels: np.ndarray | None = None  # the spectrogram as 0-255, bins x frames, low frequencies first
    error: str | None = None

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate if self.samples is not None and self.sample_rate else 0.0


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
        hop = max(SPECTROGRAM_FFT // 4, audio.frames // SPECTROGRAM_FRAMES)
        db = spectrogram(audio.samples, audio.sample_rate, SPECTROGRAM_FFT, hop)
        top = float(db.max())
        levels = np.clip((db - (top - DB_RANGE)) * (255.0 / DB_RANGE), 0, 255).astype(np.uint8)
        clips.append(LoadedClip(ref, audio.samples, audio.sample_rate, levels))
    return clips
