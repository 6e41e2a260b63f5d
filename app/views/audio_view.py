"""The Audio tab: for each audio value of a record, a header line, a player, a waveform per channel and a spectrogram.

Clips decode on a worker (app.workers.audio_loader); the waveform is painted from a min/max envelope
of the visible range only, recomputed when the range or the width changes. The mouse wheel or the
+/- buttons zoom (about the pointer / the middle); the spectrogram shows the same range.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QToolButton, QVBoxLayout, QWidget

from app.style import palette
from app.views.audio_player import PlayerBar
from app.workers.audio_loader import LoadedClip, load_clips
from app.workers.background import PoolJobs
from codec.decode.audio import AudioRef
from codec.decode.audio_views import waveform_envelope

ZOOM_STEP = 2.0
MIN_VISIBLE_FRAMES = 32


def _mix(a: QColor, b: QColor, t: float) -> int:
    """``a`` to ``b`` at ``t`` in 0..1, as a QImage colour-table entry."""
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t)).rgb()


def level_colors() -> list[int]:
    """256 colours from the canvas (silence) through the chart blue to the chart amber (loudest)."""
    low, mid, high = QColor(palette.CANVAS_BG), QColor(palette.SERIES_1), QColor(palette.SERIES_3)
    return [_mix(low, mid, i / 127) if i < 128 else _mix(mid, high, (i - 128) / 127) for i in range(256)]


class _ClipStrip(QWidget):
    """A strip painted over the clip's visible range; the wheel zooms about the pointer."""

    def __init__(self, panel: ClipPanel) -> None:
        super().__init__(panel)
        self._panel = panel

    def sizeHint(self) -> QSize:
        return QSize(400, 90)

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            anchor = event.position().x() / max(1, self.width())
            self._panel.zoom(ZOOM_STEP ** steps, anchor)
        event.accept()


class Waveform(_ClipStrip):
    """One channel's waveform: a vertical line per pixel column from the column's minimum to its maximum."""

    def __init__(self, panel: ClipPanel, samples: np.ndarray) -> None:
        super().__init__(panel)
        self.samples = samples
        self.full_scale = float(np.iinfo(samples.dtype).max) + 1 if np.issubdtype(samples.dtype, np.integer) else 1.0
        self._cache: tuple | None = None
        self.setMinimumHeight(60)

    def envelope(self) -> tuple[np.ndarray, np.ndarray]:
        """The visible range's (mins, maxs), one value per pixel column (at most)."""
        start, end = self._panel.visible_range()
        key = (start, end, self.width())
        if self._cache is None or self._cache[0] != key:
            mins, maxs = waveform_envelope(self.samples[start:end], max(1, self.width()))
            self._cache = (key, mins[0], maxs[0])
        return self._cache[1], self._cache[2]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(palette.CANVAS_BG))
        mins, maxs = self.envelope()
        if not len(mins):
            return
        mid, half = self.height() / 2, self.height() / 2 - 1
        painter.setPen(QColor(palette.CHART_AXIS))
        painter.drawLine(0, round(mid), self.width(), round(mid))
        painter.setPen(QColor(palette.SERIES_1))
        scale = half / self.full_scale
        step = self.width() / len(mins)
        tops = mid - np.maximum(maxs.astype(np.float64), mins) * scale
        bottoms = mid - mins.astype(np.float64) * scale
        for i in range(len(mins)):
            x = round(i * step)
            painter.drawLine(x, round(tops[i]), x, round(bottoms[i]))


class Spectrogram(_ClipStrip):
    """The clip's spectrogram (low frequencies at the bottom), the visible range stretched to the width."""

    def __init__(self, panel: ClipPanel, levels: np.ndarray) -> None:
        super().__init__(panel)
        flipped = np.ascontiguousarray(levels[::-1])
        self.image = QImage(flipped.data, flipped.shape[1], flipped.shape[0], flipped.strides[0],
                            QImage.Format.Format_Indexed8).copy()
        self.setMinimumHeight(100)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.image.setColorTable(level_colors())  # follows the theme
        start, end = self._panel.visible_range()
        frames = max(1, self._panel.frames)
        width = self.image.width()
        source = QRectF(start / frames * width, 0, max(1e-6, (end - start) / frames * width), self.image.height())
        painter = QPainter(self)
        painter.drawImage(QRectF(self.rect()), self.image, source)


class ClipPanel(QWidget):
    """One audio value: its header line, zoom buttons and visible range, waveforms and spectrogram."""

    range_changed = Signal()

    def __init__(self, clip: LoadedClip, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.clip = clip
        self.frames = 0 if clip.samples is None else len(clip.samples)
        self._start, self._end = 0, self.frames
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        top = QHBoxLayout()
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setText(self._header_html())
        top.addWidget(self.header, 1)
        self.waveforms: list[Waveform] = []
        self.player: PlayerBar | None = None
        self.spectrogram: Spectrogram | None = None
        if clip.samples is None:
            layout.addLayout(top)
            return
        self.range_label = QLabel(self)
        top.addWidget(self.range_label)
        self.zoom_in = QToolButton(self)
        self.zoom_in.setText("+")
        self.zoom_in.setToolTip("Zoom in (or the mouse wheel over the waveform)")
        self.zoom_in.clicked.connect(lambda: self.zoom(ZOOM_STEP))
        self.zoom_out = QToolButton(self)
        self.zoom_out.setText("−")
        self.zoom_out.setToolTip("Zoom out")
        self.zoom_out.clicked.connect(lambda: self.zoom(1 / ZOOM_STEP))
        top.addWidget(self.zoom_in)
        top.addWidget(self.zoom_out)
        layout.addLayout(top)
        self.player = PlayerBar(clip.samples, clip.sample_rate, self)
        layout.addWidget(self.player)
        for c in range(clip.samples.shape[1]):
            wave = Waveform(self, clip.samples[:, c])
            wave.setToolTip(f"channel {c + 1}")
            self.waveforms.append(wave)
            layout.addWidget(wave)
        if clip.levels is not None:
            self.spectrogram = Spectrogram(self, clip.levels)
            self.spectrogram.setToolTip(f"spectrogram, 0 to {clip.sample_rate / 2000:g} kHz")
            layout.addWidget(self.spectrogram)
        self._show_range()

    def _header_html(self) -> str:
        ref = self.clip.ref
        where = html.escape(ref.key) + (f" [{ref.value_index}]" if ref.value_index else "") + (
            f" step {ref.step}" if ref.step is not None else "")
        if self.clip.error:
            return f"<b>{where}</b> · {ref.codec} · <span style='color:{palette.ERROR_COLOR}'>" \
                   f"{html.escape(self.clip.error)}</span>"
        channels = self.clip.samples.shape[1]
        return (f"<b>{where}</b> · {ref.codec} · {self.clip.sample_rate:,} Hz · "
                f"{channels} channel{'s' if channels != 1 else ''} · {self.duration_text()}")

    def duration_text(self) -> str:
        return f"{self.clip.duration:.3f} s"

    def header_text(self) -> str:
        return self.header.text()

    def visible_range(self) -> tuple[int, int]:
        """The frames shown, [start, end)."""
        return self._start, self._end

    def zoom(self, factor: float, anchor: float = 0.5) -> None:
        """Show ``1/factor`` as many frames, keeping the frame at ``anchor`` (0..1 across) in place."""
        span = self._end - self._start
        new = int(min(self.frames, max(min(MIN_VISIBLE_FRAMES, self.frames), round(span / factor))))
        if new == span:
            return
        pivot = self._start + anchor * span
        start = int(round(pivot - anchor * new))
        self._start = max(0, min(self.frames - new, start))
        self._end = self._start + new
        self._show_range()
        for strip in [*self.waveforms, self.spectrogram]:
            if strip is not None:
                strip.update()
        self.range_changed.emit()

    def _show_range(self) -> None:
        rate = self.clip.sample_rate or 1
        self.range_label.setText(f"{self._start / rate:.3f}–{self._end / rate:.3f} s")


class AudioView(QScrollArea):
    """Every audio value of the record, one ClipPanel each; ``audio_shown(count)`` when decoded."""

    audio_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._generation = 0
        self._pending = False
        self._panels: list[ClipPanel] = []
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(self._loaded)
        self._jobs.failed.connect(self._failed)
        self._body = QWidget(self)
        self._layout = QVBoxLayout(self._body)
        self._layout.addStretch(1)
        self.setWidget(self._body)
        self.message = QLabel(self._body)
        self.message.setStyleSheet(f"color: {palette.MUTED_COLOR};")
        self.message.setMargin(12)
        self._layout.insertWidget(0, self.message)

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))  # an empty line would still take its margins

    def panels(self) -> list[ClipPanel]:
        return list(self._panels)

    def pending(self) -> bool:
        return self._pending

    def wait(self, msecs: int = -1) -> bool:
        """Block until decodes and WAVs being made for playback have finished (tests, shutdown)."""
        return self._jobs.wait(msecs) and all(p.player.wait(msecs) for p in self._panels if p.player)

    def clear(self) -> None:
        self._generation += 1
        self._pending = False
        for panel in self._panels:
            if panel.player is not None:
                panel.player.stop()
            panel.deleteLater()
        self._panels = []
        self._say("")

    def set_record(self, refs: list[AudioRef]) -> int:
        """Decode ``refs`` on the worker and show them; the count of audio values."""
        self.clear()
        if refs:
            self._pending = True
            self._say("Decoding audio…")
            generation = self._generation
            self._jobs.submit(generation, lambda: load_clips(refs) if generation == self._generation else None)
        return len(refs)

    def _loaded(self, generation: int, clips: list[LoadedClip] | None) -> None:
        if generation != self._generation or clips is None:
            return
        self._pending = False
        self._say("" if clips else "No audio decodes here.")
        for n, clip in enumerate(clips):
            panel = ClipPanel(clip, self._body)
            self._panels.append(panel)
            self._layout.insertWidget(1 + n, panel)
        self.audio_shown.emit(len(clips))

    def _failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._pending = False
            self._say(f"Audio cannot be decoded: {message}")
            self.audio_shown.emit(0)
