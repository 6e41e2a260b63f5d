"""Play, pause and seek one clip through QtMultimedia, from a WAV held in memory.

QtMultimedia ships in PySide6-Addons, the ``playback`` extra;
without it the bar is a one-line note and the rest of the Audio tab works as before.
"""
from __future__ import annotations

import io

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QUrl, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QToolButton, QWidget

from app.style import palette
from app.workers.background import PoolJobs
from codec.decode.audio_views import clock_text

try:
    from PySide6.QtMultimedia import QAudioOutput, QMediaPlayer
except ImportError:  # PySide6-Essentials only
    QAudioOutput = QMediaPlayer = None

PLAYBACK_EXTRA = "pip install PySide6-Addons"


def playback_available() -> bool:
    return QMediaPlayer is not None


def wav_in_memory(samples: np.ndarray, rate: int) -> bytes:
    """``samples`` (frames x channels) as a WAV file: int16 stays 16-bit, anything else 32-bit float."""
    import soundfile

    out = io.BytesIO()
    subtype = "PCM_16" if samples.dtype == np.int16 else "FLOAT"
    data = samples if samples.dtype == np.int16 else samples.astype(np.float32) / (
        float(np.iinfo(samples.dtype).max) + 1 if np.issubdtype(samples.dtype, np.integer) else 1.0)
    soundfile.write(out, data, rate, subtype=subtype, format="WAV")
    return out.getvalue()


class PlayerBar(QWidget):
    """A play/pause button, a position slider to seek and the time; or a note when playback is unavailable.

    ``position_changed(ms)`` as playback (or the slider) moves; :meth:`seek` moves the player.
    """

    position_changed = Signal(int)

    def __init__(self, samples: np.ndarray, rate: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.samples, self._rate = samples, rate
        self._buffer: QBuffer | None = None
        self._making = False
        self._ticket = 0  # a WAV made for samples since replaced is dropped
        self._at = 0  # ms: where playback starts or resumes
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(self._wav_made)
        self._jobs.failed.connect(lambda ticket, message: ticket == self._ticket and self._fail(message))
        self.player = self.output = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel(self)
        self.note.setStyleSheet(f"color: {palette.MUTED_COLOR};")
        layout.addWidget(self.note)
        self.play_button = QToolButton(self)
        self.play_button.setText("▶ Play")
        self.play_button.setCheckable(True)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setRange(0, max(1, round(len(samples) / rate * 1000)) if rate else 1)
        self.time = QLabel(self)
        layout.addWidget(self.play_button)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.time)
        if not playback_available():
            self.note.setText(f"Playback needs QtMultimedia ({PLAYBACK_EXTRA}).")
            for w in (self.play_button, self.slider, self.time):
                w.hide()
            return
        self.note.hide()
        self.player = QMediaPlayer(self)
        self.output = QAudioOutput(self)
        self.player.setAudioOutput(self.output)
        self.play_button.toggled.connect(self._toggled)
        self.slider.sliderMoved.connect(self._slid)
        self.player.positionChanged.connect(self._position)
        self.player.playbackStateChanged.connect(self._state)
        self.player.mediaStatusChanged.connect(self._loaded)
        self._show_time(0)

    def _toggled(self, on: bool) -> None:
        self.play_button.setText("⏸ Pause" if on else "▶ Play")
        if not on:
            self.player.pause()
        elif self._buffer is not None:
            self.player.play()
        elif not self._making:  # the WAV is made on the first play, on the worker (a long clip is large)
            self._making = True
            samples, rate = self.samples, self._rate
            self._jobs.submit(self._ticket, lambda: wav_in_memory(samples, rate))

    def _wav_made(self, ticket: int, wav: bytes) -> None:
        if ticket != self._ticket:
            return
        self._making = False
        self._buffer = QBuffer(self)
        self._buffer.setData(QByteArray(wav))
        self._buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self.player.setSourceDevice(self._buffer, QUrl("clip.wav"))
        if self._at:
            self.player.setPosition(self._at)
        if self.play_button.isChecked():
            self.player.play()

    def _fail(self, message: str) -> None:
        self._making = False
        self.play_button.setChecked(False)
        self.note.setText(f"Cannot play: {message}")
        self.note.show()

    def wait(self, msecs: int = -1) -> bool:
        return self._jobs.wait(msecs)

    def seek(self, ms: int) -> None:
        """Play from ``ms`` on (now, or when playback starts)."""
        self._at = max(0, int(ms))
        if self.player is None:
            return
        if self._buffer is not None:
            self.player.setPosition(self._at)
        else:
            self._show_time(self._at)

    def _slid(self, ms: int) -> None:
        self.seek(ms)
        if self._buffer is None:  # (else the player reports the new position)
            self.position_changed.emit(ms)

    def set_samples(self, samples: np.ndarray) -> None:
        """Play ``samples`` (one channel, or all) from now on, from the same position; playback pauses."""
        self.samples = samples
        self._ticket += 1
        self._making = False
        if self.player is None:
            return
        self.play_button.setChecked(False)
        self.player.stop()
        self.player.setSource(QUrl())
        self._buffer = None

    def _loaded(self, status) -> None:
        """A position asked for before the WAV had loaded is taken now (a player may drop it before)."""
        if status == QMediaPlayer.MediaStatus.LoadedMedia and self._at and self.player.position() != self._at:
            self.player.setPosition(self._at)

    def _state(self, state) -> None:
        if state == QMediaPlayer.PlaybackState.StoppedState and self.play_button.isChecked():
            self.play_button.setChecked(False)  # the clip ended

    def _position(self, ms: int) -> None:
        if self._buffer is None:
            return  # (a player without a source reports 0)
        self._at = ms
        self._show_time(ms)
        self.position_changed.emit(ms)

    def _show_time(self, ms: int) -> None:
        if not self.slider.isSliderDown():
            self.slider.setValue(ms)
        self.time.setText(f"{clock_text(ms / 1000)} / {clock_text(self.slider.maximum() / 1000)}")

    def stop(self) -> None:
        if self.player is not None:
            self.player.stop()
