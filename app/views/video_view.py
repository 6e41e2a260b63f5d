"""The record detail's Video tab: a record's videos, one at a time, with a frame scrubber and play/pause.

Frames decode on a one-thread pool (app.workers.video_loader), never on the GUI thread; while one
decodes, a newer request waits and those in between are skipped, so scrubbing and playing never queue up.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QImage, QKeyEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from app.style import palette
from app.workers.background import PoolJobs
from app.workers.video_loader import OpenedVideo, export_frames, frame_file_name, frame_image, open_video, save_frame
from app.workers.worker import GeneratorWorker
from codec.decode.video import DEFAULT_FRAME_RATE, Video

FRAME_KEYS_BACK = (Qt.Key.Key_Left, Qt.Key.Key_Comma)
FRAME_KEYS_ON = (Qt.Key.Key_Right, Qt.Key.Key_Period)


class FrameCanvas(QWidget):
    """One frame, scaled to fit and centred; small frames are enlarged with hard pixel edges."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.image: QImage | None = None
        self.setMinimumHeight(120)

    def set_image(self, image: QImage | None) -> None:
        self.image = image
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.image is None or self.image.isNull():
            return
        w, h = self.image.width(), self.image.height()
        scale = min(self.width() / w, self.height() / h)
        target = QRectF((self.width() - w * scale) / 2, (self.height() - h * scale) / 2, w * scale, h * scale)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, scale < 1)
        painter.drawImage(target, self.image)


class VideoView(QWidget):
    """A record's videos. ``video_shown(count)`` once the first frame (or why it cannot be shown) is up;
    ``frame_shown(n)`` each time frame ``n`` (from 0) is drawn."""

    video_shown = Signal(int)
    frame_shown = Signal(int)
    export_done = Signal(str)  # a one-line note: what was written, or why not

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._generation = 0
        self._videos: list[Video] = []
        self._record = -1
        self._video: Video | None = None
        self._count = 0
        self._rate = DEFAULT_FRAME_RATE
        self._shown = -1  # the frame drawn
        self._wanted = -1  # the frame asked for last
        self._busy = False  # a frame is decoding
        self._pending = False
        self._exporter: GeneratorWorker | None = None
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(self._job_done)
        self._jobs.failed.connect(self._job_failed)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)

        self.chooser = QComboBox(self)
        self.chooser.currentIndexChanged.connect(self._choose)
        self.header = QLabel(self)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = QLabel(self)
        self.message.setStyleSheet(f"color: {palette.MUTED_COLOR};")
        self.message.setWordWrap(True)
        self.canvas = FrameCanvas(self)
        self.play_button = QPushButton("▶ Play", self)
        self.play_button.setToolTip("Play or pause at the frame rate (Space); ← and → step a frame")
        self.play_button.clicked.connect(self.toggle_play)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setSingleStep(1)
        self.slider.setPageStep(10)
        self.slider.valueChanged.connect(self.show_frame)
        self.frame_label = QLabel(self)
        self.export_button = QPushButton("Export Frame…", self)
        self.export_button.setToolTip("Save the frame shown as a PNG")
        self.export_button.clicked.connect(self._export_frame)
        self.export_all_button = QPushButton("Export All Frames…", self)
        self.export_all_button.setToolTip("Save every frame as a PNG into a folder")
        self.export_all_button.clicked.connect(self._export_all)
        self.progress = QProgressBar(self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.cancel_export)
        self.export_note = QLabel(self)
        self.export_note.setStyleSheet(f"color: {palette.MUTED_COLOR};")

        bar = QHBoxLayout()
        for widget in (self.play_button, self.slider, self.frame_label):
            bar.addWidget(widget, 1 if widget is self.slider else 0)
        exports = QHBoxLayout()
        for widget in (self.export_button, self.export_all_button, self.progress, self.cancel_button,
                       self.export_note):
            exports.addWidget(widget)
        exports.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.chooser)
        layout.addWidget(self.header)
        layout.addWidget(self.message)
        layout.addWidget(self.canvas, 1)
        layout.addLayout(bar)
        layout.addLayout(exports)
        self.clear()

    # -- public -----------------------------------------------------------
    def set_record(self, videos: list[Video], record: int) -> int:
        """Show ``videos`` of record ``record`` (the first one; the chooser picks another); their count."""
        self.clear()
        self._videos, self._record = list(videos), record
        self.chooser.blockSignals(True)
        for video in videos:
            where = f" step {video.step}" if video.step is not None else ""
            where += f" [{video.value_index}]" if video.value_index else ""
            self.chooser.addItem(f"{video.key}{where} · {video.codec}")
        self.chooser.blockSignals(False)
        self.chooser.setVisible(len(videos) > 1)
        if videos:
            self._choose(0)
        return len(videos)

    def clear(self) -> None:
        self.pause()
        self._generation += 1
        for video in self._videos:
            self._jobs.submit(None, video.close)  # on the pool: a decode may be using it now
        self._videos, self._video = [], None
        self._count, self._shown, self._wanted, self._busy, self._pending = 0, -1, -1, False, False
        self.chooser.clear()
        self.chooser.hide()
        self.header.clear()
        self._say("")
        self.canvas.set_image(None)
        self.slider.blockSignals(True)
        self.slider.setRange(0, 0)
        self.slider.blockSignals(False)
        self.frame_label.clear()
        self._enable(False)
        self._show_export(False)

    def pending(self) -> bool:
        return self._pending

    def wait(self, msecs: int = -1) -> bool:
        """Block until decodes and an export have finished (tests, shutdown)."""
        exported = self._exporter is None or self._exporter.wait(None if msecs < 0 else msecs)
        return self._jobs.wait(msecs) and exported

    def frame_count(self) -> int:
        return self._count

    def current_frame(self) -> int:
        """The frame drawn (from 0), -1 when none."""
        return self._shown

    def frame_rate(self) -> float:
        """The rate frames play at: the video's, else DEFAULT_FRAME_RATE."""
        return self._rate

    def playing(self) -> bool:
        return self._timer.isActive()

    def frame_text(self) -> str:
        return self.frame_label.text()

    def show_frame(self, n: int) -> None:
        """Move to frame ``n`` (from 0): the slider and label now, the picture once it decodes."""
        if self._video is None or not self._count:
            return
        n = max(0, min(n, self._count - 1))
        self._wanted = n
        if self.slider.value() != n:
            self.slider.blockSignals(True)
            self.slider.setValue(n)
            self.slider.blockSignals(False)
        self.frame_label.setText(self._label(n))
        if not self._busy:
            self._decode(n)

    def step(self, delta: int) -> None:
        self.pause()
        self.show_frame((self._wanted if self._wanted >= 0 else 0) + delta)

    def toggle_play(self) -> None:
        if self.playing():
            self.pause()
        elif self._count > 1:
            if self._wanted >= self._count - 1:
                self.show_frame(0)  # from the end: play again from the start
            self._timer.start(max(1, round(1000 / self._rate)))
            self.play_button.setText("⏸ Pause")

    def pause(self) -> None:
        self._timer.stop()
        self.play_button.setText("▶ Play")

    # -- loading ----------------------------------------------------------
    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _enable(self, on: bool) -> None:
        for widget in (self.play_button, self.slider, self.export_button):
            widget.setEnabled(on)
        self.export_all_button.setEnabled(on and self._exporter is None)

    def _choose(self, index: int) -> None:
        if not 0 <= index < len(self._videos):
            return
        self.pause()
        self._generation += 1
        self._video = self._videos[index]
        self._count, self._shown, self._wanted, self._busy = 0, -1, -1, True
        self._pending = True
        self._enable(False)
        self.canvas.set_image(None)
        self.frame_label.clear()
        self.header.setText(self._video.key)
        self._say("Decoding video…")
        video = self._video
        self._jobs.submit((self._generation, "open"), lambda: open_video(video))

    def _decode(self, n: int) -> None:
        self._busy = True
        video = self._video
        self._jobs.submit((self._generation, n), lambda: frame_image(video, n))

    def _answer_for(self, ticket: object, export_note: str) -> bool:
        """Whether a pool answer is for the video shown now (its decoder free again); an exported frame's
        answer is noted here instead (``export_note``), a stale one dropped."""
        if isinstance(ticket, tuple) and ticket[0] == "export":
            self._noted(export_note)
            return False
        if not isinstance(ticket, tuple) or ticket[0] != self._generation:
            return False
        self._busy = False
        return True

    def _job_done(self, ticket: object, result: object) -> None:
        if not self._answer_for(ticket, f"Frame saved to {result}"):
            return
        if isinstance(result, OpenedVideo):
            self._opened(result)
            return
        self._draw(ticket[1], result)
        if self._wanted != self._shown:
            self._decode(self._wanted)

    def _job_failed(self, ticket: object, message: str) -> None:
        if not self._answer_for(ticket, f"The frame was not saved: {message}"):
            return
        self.pause()
        if ticket[1] == "open":
            self._pending = False
            self._say(f"This video cannot be shown: {message}")
            self.video_shown.emit(0)
        else:
            self._say(f"Frame {ticket[1] + 1} cannot be shown: {message}")

    def _opened(self, opened: OpenedVideo) -> None:
        video = self._video
        self._count = opened.count
        self._rate = opened.rate or DEFAULT_FRAME_RATE
        rate = f"{opened.rate:g} fps" if opened.rate else f"no frame rate: plays at {DEFAULT_FRAME_RATE:g} fps"
        size = f"{opened.first.width()}×{opened.first.height()}"
        self.header.setText(f"{video.key} · {video.codec} · {opened.count:,} frames · {size} · {rate}")
        self._say("")
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, opened.count - 1))
        self.slider.setValue(0)
        self.slider.blockSignals(False)
        self._enable(True)
        self._pending = False
        self._wanted = 0
        self.frame_label.setText(self._label(0))
        self._draw(0, opened.first)
        self.video_shown.emit(len(self._videos))

    def _draw(self, n: int, image: QImage) -> None:
        self._shown = n
        self.canvas.set_image(image)
        self.frame_shown.emit(n)

    def _label(self, n: int) -> str:
        return f"frame {n + 1} / {self._count} · {self._rate:g} fps"

    def _tick(self) -> None:
        if self._busy:
            return  # decoding is slower than the rate: drop a tick rather than queue frames
        if self._wanted >= self._count - 1:
            self.pause()
            return
        self.show_frame(self._wanted + 1)

    def hideEvent(self, event: QHideEvent) -> None:
        self.pause()  # a tab the user left does not go on playing
        super().hideEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in FRAME_KEYS_BACK:
            self.step(-1)
        elif event.key() in FRAME_KEYS_ON:
            self.step(1)
        elif event.key() == Qt.Key.Key_Space:
            self.toggle_play()
        else:
            super().keyPressEvent(event)

    # -- exporting --------------------------------------------------------
    def ask_save_path(self, name: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, "Export Frame", name, "PNG images (*.png)")
        return path

    def ask_folder(self) -> str:
        return QFileDialog.getExistingDirectory(self, "Export All Frames to Folder")

    def _export_frame(self) -> None:
        if self._video is None or self._shown < 0:
            return
        n, video = self._shown, self._video
        path = self.ask_save_path(frame_file_name(self._record, video, n + 1))
        if path:
            self._jobs.submit(("export", path), lambda: save_frame(video, n, path))

    def _export_all(self) -> None:
        if self._video is None or self._exporter is not None:
            return
        folder = self.ask_folder()
        if not folder:
            return
        video, record = self._video, self._record
        worker = GeneratorWorker(lambda: export_frames(video, record, folder), self)
        worker.progress.connect(self._export_progress)
        worker.finished.connect(lambda last: self._export_ended(worker, last, folder))
        worker.failed.connect(lambda message: self._export_ended(worker, None, folder, message))
        self._exporter = worker
        self.progress.setRange(0, self._count)
        self.progress.setValue(0)
        self._show_export(True)
        worker.start()

    def cancel_export(self) -> None:
        if self._exporter is not None:
            self._exporter.cancel()

    def _export_progress(self, done: tuple[int, int]) -> None:
        self.progress.setRange(0, done[1])
        self.progress.setValue(done[0])

    def _export_ended(self, worker: GeneratorWorker, last: tuple[int, int] | None, folder: str,
                      error: str | None = None) -> None:
        worker.wait()
        worker.deleteLater()
        self._exporter = None
        self._show_export(False)
        done, total = last if last else (0, self._count)
        if error:
            note = f"Export stopped after {done:,} of {total:,} frames: {error}"
        elif worker.cancelled:
            note = f"Export cancelled: {done:,} of {total:,} frames written to {folder}"
        else:
            note = f"{done:,} frames written to {folder}"
        self._noted(note)

    def _noted(self, note: str) -> None:
        self.export_note.setText(note)
        self.export_note.show()
        self.export_done.emit(note)

    def _show_export(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.export_all_button.setEnabled(not running and self._video is not None and self._count > 0)
        if running:
            self.export_note.hide()
