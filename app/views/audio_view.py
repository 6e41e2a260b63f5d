"""The Audio tab: for each audio value of a record, a header line, a player, a waveform per channel,
a spectrogram and a time axis, with a playhead.

Clips decode on a worker (app.workers.audio_loader), which also builds each clip's min/max pyramid:
a waveform is painted from the pyramid's envelope of the visible range (O(columns) per zoom or scroll
step, never a pass over the samples). The mouse wheel or the +/- buttons zoom (about the pointer / the
middle), a horizontal wheel or Shift+wheel scrolls; the spectrogram shows the same range. A click or
drag in any strip moves the playhead there (and the player, when there is one); playback moves it too.
"""
from __future__ import annotations

import html
import os

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.style import palette
from app.views.audio_player import PlayerBar
from app.workers.audio_loader import LoadedClip, load_clips
from app.workers.background import PoolJobs
from codec.decode.audio import AudioRef, wav_bytes
from codec.decode.audio_views import SPECTROGRAM_COLORS, clock_text, frequency_ticks, time_ticks
from codec.ops.export import image_file_name
from codec.storage.writer import atomic_write_bytes

ZOOM_STEP = 2.0
SCROLL_STEP = 0.1  # of the visible span per wheel notch
MIN_VISIBLE_FRAMES = 32
AXIS_HEIGHT = 20
DETAIL_DELAY_MS = 120  # a zoomed-in range's own spectrogram is computed once zooming pauses this long


def level_colors() -> list[int]:
    """The spectrogram's 256 colours (magma, codec.decode.audio_views): perceptual, the same in both themes."""
    return [QColor(int(r), int(g), int(b)).rgb() for r, g, b in SPECTROGRAM_COLORS]


class _ClipStrip(QWidget):
    """A strip painted over the clip's visible range: the wheel zooms about the pointer (or scrolls,
    sideways or with Shift); a click or drag moves the playhead."""

    def __init__(self, panel: ClipPanel) -> None:
        super().__init__(panel)
        self._panel = panel
        self.setCursor(Qt.CursorShape.IBeamCursor)

    def sizeHint(self) -> QSize:
        return QSize(400, 90)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        sideways = delta.x() if delta.x() else (delta.y() if event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                                                 else 0)
        if sideways:
            self._panel.scroll(-sideways / 120 * SCROLL_STEP)
        elif delta.y():
            self._panel.zoom(ZOOM_STEP ** (delta.y() / 120), event.position().x() / max(1, self.width()))
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._panel.seek_at(event.position().x() / max(1, self.width()))
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._panel.seek_at(event.position().x() / max(1, self.width()))
        event.accept()

    def playhead_x(self) -> float | None:
        """Where the playhead is drawn across this strip, None when outside the visible range."""
        start, end = self._panel.visible_range()
        at = self._panel.position
        if end <= start or not start <= at <= end:
            return None
        return (at - start) / (end - start) * self.width()

    def _paint_playhead(self, painter: QPainter) -> None:
        x = self.playhead_x()
        if x is not None:
            painter.setPen(QColor(palette.SERIES_5))
            x = min(round(x), self.width() - 1)
            painter.drawLine(x, 0, x, self.height())


class Waveform(_ClipStrip):
    """One channel's waveform: a vertical line per pixel column from the column's minimum to its maximum."""

    def __init__(self, panel: ClipPanel, channel: int) -> None:
        super().__init__(panel)
        self.channel = channel
        self.samples = panel.clip.samples[:, channel]
        dtype = self.samples.dtype
        self.full_scale = float(np.iinfo(dtype).max) + 1 if np.issubdtype(dtype, np.integer) else 1.0
        self.setMinimumHeight(60)

    def envelope(self) -> tuple[np.ndarray, np.ndarray]:
        """The visible range's (mins, maxs), one value per pixel column (at most)."""
        mins, maxs = self._panel.envelope(self.width())
        return mins[self.channel], maxs[self.channel]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(palette.CANVAS_BG))
        mins, maxs = self.envelope()
        if len(mins):
            mid, half = self.height() / 2, self.height() / 2 - 1
            painter.setPen(QColor(palette.CHART_AXIS))
            painter.drawLine(0, round(mid), self.width(), round(mid))
            painter.setPen(QColor(palette.SERIES_1))
            scale = half / self.full_scale
            step = self.width() / len(mins)
            tops = np.round(mid - np.maximum(maxs.astype(np.float64), mins) * scale).astype(int)
            bottoms = np.round(mid - mins.astype(np.float64) * scale).astype(int)
            xs = np.round(np.arange(len(mins)) * step).astype(int)
            for x, top, bottom in zip(xs.tolist(), tops.tolist(), bottoms.tolist()):
                painter.drawLine(x, top, x, bottom)
        self._paint_playhead(painter)


class Spectrogram(_ClipStrip):
    """The spectrogram (low frequencies at the bottom), the visible range stretched to the width, with
    frequency labels at the left."""

    def __init__(self, panel: ClipPanel, levels: np.ndarray) -> None:
        super().__init__(panel)
        self.levels = levels
        self.image = self._image(levels)
        self._scaled: tuple | None = None
        self.detail: tuple | None = None  # (channel, start, end), levels, picture: see set_detail
        self.setMinimumHeight(160)

    @staticmethod
    def _image(levels: np.ndarray) -> QImage:
        flipped = np.ascontiguousarray(levels[::-1])
        image = QImage(flipped.data, flipped.shape[1], flipped.shape[0], flipped.strides[0],
                       QImage.Format.Format_Indexed8).copy()
        image.setColorTable(level_colors())
        return image

    def set_levels(self, levels: np.ndarray) -> None:
        self.levels = levels
        self.image = self._image(levels)
        self._scaled = None
        self.update()

    def zoomed_in(self) -> bool:
        """The visible range holds fewer of the clip's spectrogram columns than half the width."""
        return self._source().width() < self.width() / 2

    def set_detail(self, what: tuple, levels: np.ndarray) -> None:
        """The spectrogram of the range (channel, start, end) ``what`` at about the widget's width."""
        self.detail = (what, levels, self._image(levels).scaled(
            levels.shape[1], max(1, self.height()), Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation))
        self.update()

    def shown_detail(self) -> np.ndarray | None:
        """The levels of the zoomed-in range painted now, None when the clip's own picture is stretched."""
        start, end = self._panel.visible_range()
        if self.detail is not None and self.zoomed_in() and self.detail[0] == (self._panel.channel, start, end):
            return self.detail[1]
        return None

    def _source(self) -> QRectF:
        """The visible range in image columns (fractional)."""
        start, end = self._panel.visible_range()
        frames, width = max(1, self._panel.frames), self.image.width()
        return QRectF(start / frames * width, 0, max(1e-6, (end - start) / frames * width), self.image.height())

    def scaled(self) -> QImage:
        """The visible range at the widget's size, averaged down (no aliased speckle): rows always,
        columns when the range holds more of them than the widget is wide."""
        source = self._source()
        whole = source.width() <= self.width()  # zoomed in past the image's columns: the whole image, rows fitted
        key = (None if whole else self._panel.visible_range(), self.width(), self.height())
        if self._scaled is None or self._scaled[0] != key:
            if not whole:  # whole columns: at most one off, under a pixel here
                left = int(source.left())
                right = max(left + 1, min(self.image.width(), int(np.ceil(source.right()))))
                part, width = self.image.copy(left, 0, right - left, self.image.height()), self.width()
            else:  # (its columns are stretched when painted)
                part, width = self.image, self.image.width()
            self._scaled = (key, part.scaled(max(1, width), max(1, self.height()), Qt.AspectRatioMode.IgnoreAspectRatio,
                                             Qt.TransformationMode.SmoothTransformation))
        return self._scaled[1]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        picture, source = self.scaled(), self._source()
        if self.shown_detail() is not None:
            painter.drawImage(QRectF(self.rect()), self.detail[2])
        elif source.width() > self.width():
            painter.drawImage(0, 0, picture)
        else:
            painter.drawImage(QRectF(self.rect()), picture, QRectF(source.left(), 0, source.width(), picture.height()))
            if self.zoomed_in():
                self._panel.want_detail()
        self._paint_frequencies(painter)
        self._paint_playhead(painter)

    def _paint_frequencies(self, painter: QPainter) -> None:
        rate = self._panel.clip.sample_rate
        metrics = painter.fontMetrics()
        backing = QColor(palette.CANVAS_BG)
        backing.setAlpha(180)
        most = max(1, self.height() // (2 * metrics.height()))
        for hz, label in frequency_ticks(rate, most):
            y = self.height() - 1 - hz / (rate / 2) * (self.height() - 1)
            text = metrics.boundingRect(label)
            top = min(max(0.0, y - text.height() / 2), self.height() - text.height())
            painter.fillRect(QRectF(0, top, text.width() + 10, text.height()), backing)
            painter.setPen(QColor(palette.CHART_AXIS))
            painter.drawLine(QPointF(0, y), QPointF(4, y))
            painter.setPen(QColor(palette.CHART_LABEL))
            painter.drawText(QRectF(6, top, text.width() + 4, text.height()), Qt.AlignmentFlag.AlignVCenter, label)


class TimeAxis(_ClipStrip):
    """The visible range's times (m:ss.s) under the strips."""

    def __init__(self, panel: ClipPanel) -> None:
        super().__init__(panel)
        self.setFixedHeight(AXIS_HEIGHT)

    def ticks(self) -> list[tuple[float, str]]:
        start, end = self._panel.visible_range()
        rate = self._panel.clip.sample_rate or 1
        width = self.fontMetrics().horizontalAdvance("00:00.000") + 24
        return time_ticks(start / rate, end / rate, max(1, self.width() // width))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        start, end = self._panel.visible_range()
        rate = self._panel.clip.sample_rate or 1
        span = max(1e-12, (end - start) / rate)
        metrics = painter.fontMetrics()
        painter.setPen(QColor(palette.CHART_AXIS))
        painter.drawLine(0, 0, self.width(), 0)
        for seconds, label in self.ticks():
            x = (seconds - start / rate) / span * (self.width() - 1)
            painter.setPen(QColor(palette.CHART_AXIS))
            painter.drawLine(QPointF(x, 0), QPointF(x, 4))
            painter.setPen(QColor(palette.CHART_LABEL))
            w = metrics.horizontalAdvance(label)
            left = min(max(0.0, x - w / 2), self.width() - w)
            painter.drawText(QRectF(left, 4, w + 1, self.height() - 4), Qt.AlignmentFlag.AlignTop, label)
        self._paint_playhead(painter)


class ClipPanel(QWidget):
    """One audio value: its header line, zoom buttons and visible range, the playhead and its time,
    a channel choice, waveforms, spectrogram and time axis, and Save as WAV.

    ``position_changed(frame)`` when the playhead moves; ``saved(message)`` when a save has ended;
    ``detail_shown()`` when the spectrogram of a zoomed-in range has been computed and is shown.
    """

    range_changed = Signal()
    position_changed = Signal(int)
    saved = Signal(str)
    detail_shown = Signal()

    def __init__(self, clip: LoadedClip, parent: QWidget | None = None, record: int = -1) -> None:
        super().__init__(parent)
        self.clip = clip
        self.record = record
        self.frames = 0 if clip.samples is None else len(clip.samples)
        self._start, self._end = 0, self.frames
        self.position = 0
        self.channel: int | None = None  # None: all channels
        self._envelope_key: tuple | None = None
        self._envelope: tuple[np.ndarray, np.ndarray] | None = None
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
        self.channel_box: QComboBox | None = None
        if clip.samples is None:
            layout.addLayout(top)
            return
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(lambda _ticket, message: self._saved(message))
        self._jobs.failed.connect(lambda _ticket, message: self._saved(f"cannot save the clip: {message}", True))
        self._detail_jobs = PoolJobs(self, max_threads=1)
        self._detail_jobs.finished.connect(self._detail_made)
        self._detail_timer = QTimer(self)
        self._detail_timer.setSingleShot(True)
        self._detail_timer.setInterval(DETAIL_DELAY_MS)
        self._detail_timer.timeout.connect(self._make_detail)
        self._detail_asked: tuple | None = None  # the last range computed
        self._detail_wanted: tuple | None = None  # the range the timer will compute
        controls = QHBoxLayout()
        channels = clip.samples.shape[1]
        if channels > 1:
            self.channel_box = QComboBox(self)
            self.channel_box.addItem("All channels")
            for c in range(channels):
                self.channel_box.addItem(f"Channel {c + 1}")
            self.channel_box.setToolTip("The channel the waveforms, the spectrogram and playback follow")
            self.channel_box.currentIndexChanged.connect(lambda i: self.set_channel(None if i <= 0 else i - 1))
            controls.addWidget(self.channel_box)
        self.save_button = QToolButton(self)
        self.save_button.setText("Save as WAV…")
        self.save_button.setToolTip("Write this clip to a WAV file, as export --format audio writes it")
        self.save_button.clicked.connect(self._ask_save)
        controls.addWidget(self.save_button)
        controls.addStretch(1)
        self.position_label = QLabel(self)
        self.position_label.setToolTip("The playhead: click or drag in the waveform or the spectrogram to move it")
        controls.addWidget(self.position_label)
        self.range_label = QLabel(self)
        controls.addWidget(self.range_label)
        self.zoom_in = QToolButton(self)
        self.zoom_in.setText("+")
        self.zoom_in.setToolTip("Zoom in (or the mouse wheel over the waveform; Shift+wheel scrolls)")
        self.zoom_in.clicked.connect(lambda: self.zoom(ZOOM_STEP))
        self.zoom_out = QToolButton(self)
        self.zoom_out.setText("−")
        self.zoom_out.setToolTip("Zoom out")
        self.zoom_out.clicked.connect(lambda: self.zoom(1 / ZOOM_STEP))
        controls.addWidget(self.zoom_in)
        controls.addWidget(self.zoom_out)
        layout.addLayout(top)
        layout.addLayout(controls)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.hide()
        layout.addWidget(self.status)
        self.player = PlayerBar(clip.samples, clip.sample_rate, self)
        self.player.position_changed.connect(self._follow)
        layout.addWidget(self.player)
        for c in range(channels):
            wave = Waveform(self, c)
            wave.setToolTip(f"channel {c + 1}")
            self.waveforms.append(wave)
            layout.addWidget(wave)
        if clip.levels is not None:
            self.spectrogram = Spectrogram(self, clip.levels)
            layout.addWidget(self.spectrogram)
        self.axis = TimeAxis(self)
        layout.addWidget(self.axis)
        self._show_channel()
        self._show_range()
        self._show_position()

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

    def strips(self) -> list[_ClipStrip]:
        return [s for s in (*self.waveforms, self.spectrogram, getattr(self, "axis", None)) if s is not None]

    # -- range --------------------------------------------------------------
    def visible_range(self) -> tuple[int, int]:
        """The frames shown, [start, end)."""
        return self._start, self._end

    def envelope(self, columns: int) -> tuple[np.ndarray, np.ndarray]:
        """Every channel's (mins, maxs) of the visible range in ``columns`` (at most), from the pyramid."""
        key = (self._start, self._end, max(1, columns))
        if self._envelope_key != key:
            self._envelope = self.clip.pyramid.envelope(self._start, self._end, key[2])
            self._envelope_key = key
        return self._envelope

    def zoom(self, factor: float, anchor: float = 0.5) -> None:
        """Show ``1/factor`` as many frames, keeping the frame at ``anchor`` (0..1 across) in place."""
        span = self._end - self._start
        new = int(min(self.frames, max(min(MIN_VISIBLE_FRAMES, self.frames), round(span / factor))))
        if new != span:
            self._set_range(round(self._start + anchor * span - anchor * new), new)

    def scroll(self, fraction: float) -> None:
        """Move the visible range by ``fraction`` of its span (negative: earlier)."""
        span = self._end - self._start
        self._set_range(self._start + round(fraction * span), span)

    def _set_range(self, start: int, span: int) -> None:
        start = max(0, min(self.frames - span, int(start)))
        if (start, start + span) == (self._start, self._end):
            return
        self._start, self._end = start, start + span
        self._show_range()
        for strip in self.strips():
            strip.update()
        self.range_changed.emit()

    def _show_range(self) -> None:
        rate = self.clip.sample_rate or 1
        self.range_label.setText(f"{self._start / rate:.3f}–{self._end / rate:.3f} s")

    # -- playhead ---------------------------------------------------------
    def position_text(self) -> str:
        return self.position_label.text()

    def seek_at(self, fraction: float) -> None:
        """Move the playhead (and the player) to ``fraction`` (0..1) across the visible range."""
        self.seek(round(self._start + min(1.0, max(0.0, fraction)) * (self._end - self._start)))

    def seek(self, frame: int) -> None:
        """Move the playhead, and the player, to ``frame``."""
        self._move_to(frame)
        if self.player is not None:
            self.player.seek(round(self.position * 1000 / (self.clip.sample_rate or 1)))

    def _follow(self, ms: int) -> None:
        """The player moved: the playhead follows, and the view pages along when it runs off the end."""
        frame = round(ms * (self.clip.sample_rate or 1) / 1000)
        self._move_to(frame)
        span = self._end - self._start
        if span < self.frames and not self._start <= self.position < self._end:
            self._set_range(self.position, span)

    def _move_to(self, frame: int) -> None:
        frame = max(0, min(self.frames, int(frame)))
        if frame == self.position:
            return
        self.position = frame
        self._show_position()
        for strip in self.strips():
            strip.update()
        self.position_changed.emit(frame)

    def _show_position(self) -> None:
        rate = self.clip.sample_rate or 1
        self.position_label.setText(f"{clock_text(self.position / rate)} / {clock_text(self.frames / rate)}")

    # -- a zoomed-in spectrogram -----------------------------------------------
    def want_detail(self) -> None:
        """The spectrogram is zoomed in past its columns: compute the range's own, once the zooming pauses."""
        what = (self.channel, self._start, self._end)
        if what not in (self._detail_asked, self._detail_wanted):  # (a repaint alone does not delay it)
            self._detail_wanted = what
            self._detail_timer.start()

    def _make_detail(self) -> None:
        what = (self.channel, self._start, self._end)
        if self.spectrogram is None or what == self._detail_asked:
            return
        self._detail_asked = what
        clip, columns = self.clip, max(1, self.spectrogram.width())
        self._detail_jobs.submit(what, lambda: clip.detail_levels(what[0], what[1], what[2], columns))

    def _detail_made(self, what: tuple, levels: np.ndarray) -> None:
        if what == (self.channel, self._start, self._end):
            self.spectrogram.set_detail(what, levels)
            self.detail_shown.emit()

    # -- channels ---------------------------------------------------------
    def set_channel(self, channel: int | None) -> None:
        """Show and play one channel (0-based), or all of them (None)."""
        if channel == self.channel:
            return
        self.channel = channel
        if self.channel_box is not None and self.channel_box.currentIndex() != (0 if channel is None else channel + 1):
            self.channel_box.setCurrentIndex(0 if channel is None else channel + 1)
        self._show_channel()
        samples = self.clip.samples
        self.player.set_samples(samples if channel is None else samples[:, channel:channel + 1])

    def _show_channel(self) -> None:
        for wave in self.waveforms:
            wave.setVisible(self.channel is None or wave.channel == self.channel)
        if self.spectrogram is not None:
            self.spectrogram.set_levels(self.clip.levels_for(self.channel))
            which = "the channels' mean" if self.channel is None or len(self.waveforms) == 1 else \
                f"channel {self.channel + 1}"
            self.spectrogram.setToolTip(f"spectrogram of {which}, 0 to {self.clip.sample_rate / 2000:g} kHz")

    # -- saving -----------------------------------------------------------
    def default_wav_name(self) -> str:
        """``000012_audio_encoded.wav``: the name export --format audio gives this value."""
        ref = self.clip.ref
        return image_file_name(max(0, self.record), ref.key, ref.value_index, ref.step, "wav")

    def _ask_save(self) -> None:
        start = os.path.join(os.path.expanduser("~"), self.default_wav_name())
        path, _ = QFileDialog.getSaveFileName(self, "Save Clip as WAV", start, "WAV files (*.wav)")
        if path:
            self.save_wav(path)

    def save_wav(self, path: str) -> None:
        """Write the clip to ``path`` on a worker, safely (a temporary file renamed into place)."""
        ref = self.clip.ref
        self.save_button.setEnabled(False)
        self._say("saving…")

        def save() -> str:
            atomic_write_bytes(path, wav_bytes(ref))
            return f"saved to {path}"

        self._jobs.submit(path, save)

    def _saved(self, message: str, failed: bool = False) -> None:
        self.save_button.setEnabled(True)
        self._say(message, failed)
        self.saved.emit(message)

    def _say(self, text: str, failed: bool = False) -> None:
        self.status.setStyleSheet(palette.ERROR_STYLE if failed else palette.HINT_STYLE)
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def wait(self, msecs: int = -1) -> bool:
        """Block until saves and WAVs being made for playback have finished (tests, shutdown)."""
        if self.player is None:
            return True
        return self._jobs.wait(msecs) and self._detail_jobs.wait(msecs) and self.player.wait(msecs)


class AudioView(QScrollArea):
    """Every audio value of the record, one ClipPanel each; ``audio_shown(count)`` when decoded."""

    audio_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._generation = 0
        self._pending = False
        self._record = -1
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
        """Block until decodes, saves and WAVs being made for playback have finished (tests, shutdown)."""
        return self._jobs.wait(msecs) and all(p.wait(msecs) for p in self._panels)

    def clear(self) -> None:
        self._generation += 1
        self._pending = False
        for panel in self._panels:
            if panel.player is not None:
                panel.player.stop()
            panel.deleteLater()
        self._panels = []
        self._say("")

    def set_record(self, refs: list[AudioRef], record: int = -1) -> int:
        """Decode ``refs`` (of record number ``record``, which starts the names Save as WAV offers, as
        export's do) on the worker and show them; the count of audio values."""
        self.clear()
        self._record = record
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
            panel = ClipPanel(clip, self._body, self._record)
            self._panels.append(panel)
            self._layout.insertWidget(1 + n, panel)
        self.audio_shown.emit(len(clips))

    def _failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._pending = False
            self._say(f"Audio cannot be decoded: {message}")
            self.audio_shown.emit(0)
