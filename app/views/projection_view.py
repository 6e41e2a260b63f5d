"""The embedding projection: an embedding's 2-D PCA over (a sample of) the records, coloured by label.

The pass runs on a worker (:class:`~app.workers.pass_runner.PassRunner`): the
inferred spec finds the embeddings (:func:`codec.stats.embeddings.embedding_keys`),
then :func:`codec.stats.embeddings.project_iter` projects the chosen one. The
points are painted with numpy into one QImage, with a map of which point
each pixel shows, so 10^5 points draw, hover and click at once.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.models.heat_strip import label_colors
from app.style import palette
from app.views.stats_panel import PassBar
from app.workers.pass_runner import PassRunner, RecomputesWhenShown
from codec.stats.embeddings import Projection, embedding_keys, project_iter
from codec.stats.schema import FileSchema, schema_iter

DOT = 3  # pixels: each point is a DOT × DOT square
MARGIN = 12
PICK_RADIUS = 4  # pixels around the pointer searched for a point


class ProjectionCanvas(QWidget):
    """The points of a projection; ``point_clicked(k)`` gives the index of the point clicked."""

    point_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumSize(160, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._points = np.zeros((0, 2), dtype=np.float32)
        self._colors = np.zeros(0, dtype=np.uint32)  # ARGB32 per point
        self._tips: Callable[[int], str] = str
        self._image: QImage | None = None
        self._pick: np.ndarray | None = None  # point index per pixel, -1 where none
        self._pixels = np.zeros((0, 2), dtype=np.int64)
        self.hovered = -1
        palette.changes.changed.connect(self._drop_image)

    def set_points(self, points: np.ndarray, colors: np.ndarray, tips: Callable[[int], str]) -> None:
        """Show ``points`` (n × 2) in ``colors`` (ARGB32 words); ``tips(k)`` is point k's hover text."""
        self._points, self._colors, self._tips = points, colors, tips
        self.hovered = -1
        self._drop_image()

    def point_count(self) -> int:
        return len(self._points)

    def position_of(self, k: int) -> QPoint:
        """Where point ``k`` is drawn (its centre), in widget coordinates."""
        self._ensure_image()
        x, y = self._pixels[k]
        return QPoint(int(x), int(y))

    def point_at(self, pos: QPoint) -> int:
        """The point drawn nearest ``pos`` (within PICK_RADIUS pixels), or -1."""
        self._ensure_image()
        pick = self._pick
        if pick is None or not pick.size:
            return -1
        x0, y0 = max(pos.x() - PICK_RADIUS, 0), max(pos.y() - PICK_RADIUS, 0)
        window = pick[y0:pos.y() + PICK_RADIUS + 1, x0:pos.x() + PICK_RADIUS + 1]
        ys, xs = np.nonzero(window >= 0)
        if not ys.size:
            return -1
        nearest = np.argmin((ys + y0 - pos.y()) ** 2 + (xs + x0 - pos.x()) ** 2)
        return int(window[ys[nearest], xs[nearest]])

    # -- painting ----------------------------------------------------------
    def _drop_image(self, *_) -> None:
        self._image = None
        self.update()

    def _ensure_image(self) -> None:
        if self._image is not None and self._image.size() == self.size():
            return
        w, h = max(self.width(), 1), max(self.height(), 1)
        buf = np.zeros((h, w), dtype=np.uint32)
        pick = np.full((h, w), -1, dtype=np.int32)
        n = len(self._points)
        if n:
            pts = self._points.astype(np.float64)
            finite = np.isfinite(pts).all(axis=1)
            lo = pts[finite].min(axis=0) if finite.any() else np.zeros(2)
            hi = pts[finite].max(axis=0) if finite.any() else np.ones(2)
            span = np.maximum(hi - lo, 1e-12)
            scale = min((w - 2 * MARGIN) / span[0], (h - 2 * MARGIN) / span[1])  # one scale: distances stay true
            centre = (lo + hi) / 2
            px = np.rint((pts[:, 0] - centre[0]) * scale + w / 2)
            py = np.rint(h / 2 - (pts[:, 1] - centre[1]) * scale)  # up is positive
            px = np.nan_to_num(px, nan=-1e6).clip(-1, w).astype(np.int64)
            py = np.nan_to_num(py, nan=-1e6).clip(-1, h).astype(np.int64)
            self._pixels = np.stack((px, py), axis=1)
            order = np.arange(n, dtype=np.int32)
            for dy in range(-(DOT // 2), DOT - DOT // 2):
                for dx in range(-(DOT // 2), DOT - DOT // 2):
                    xs, ys = px + dx, py + dy
                    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
                    buf[ys[inside], xs[inside]] = self._colors[inside]
                    pick[ys[inside], xs[inside]] = order[inside]
        self._image = QImage(buf.tobytes(), w, h, w * 4, QImage.Format.Format_ARGB32).copy()
        self._pick = pick

    def paintEvent(self, event) -> None:
        self._ensure_image()
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        painter.drawImage(0, 0, self._image)
        if 0 <= self.hovered < len(self._pixels):
            x, y = self._pixels[self.hovered]
            painter.setPen(QPen(self.palette().text().color(), 1.5))
            painter.drawEllipse(QRect(int(x) - 5, int(y) - 5, 11, 11))
        painter.end()

    # -- pointer -------------------------------------------------------------
    def mouseMoveEvent(self, event) -> None:
        k = self.point_at(event.position().toPoint())
        if k != self.hovered:
            self.hovered = k
            self.update()
        if k >= 0:
            QToolTip.showText(event.globalPosition().toPoint(), self._tips(k), self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            k = self.point_at(event.position().toPoint())
            if k >= 0:
                self.point_clicked.emit(k)
                return
        super().mousePressEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(480, 360)


class _Run:
    """What one pass finds: the embeddings (when it looked for them) and the projection."""

    def __init__(self, key: str | None) -> None:
        self.key = key
        self.keys: dict[str, int] | None = None
        self.projection: Projection | None = None


class ProjectionView(RecomputesWhenShown, QWidget):
    """Choose an embedding, project it on a worker (progress, Cancel), see the points by label.

    ``record_activated(i)``: a point was clicked (record ``i`` of the source);
    ``projection_ready(Projection)``: a pass ended with a projection.
    """

    record_activated = Signal(int)
    projection_ready = Signal(object)
    finished = Signal()  # every pass's end, with or without a projection

    def __init__(self, source: Callable, busy: Callable[[], bool], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._keys: dict[str, int] | None = None  # None: not looked for yet
        self._projection: Projection | None = None
        self.runner = PassRunner(busy, self)
        self.key_combo = QComboBox(self)
        self.key_combo.setToolTip("The embedding to project: a float feature of 8 or more values, "
                                  "the same number in every record that has it")
        self.key_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.key_combo.activated.connect(lambda _i: self.compute())
        self.bar = PassBar(self, scoped=False)
        self.bar.refresh.setText("Project")
        self.bar.refresh.setToolTip("Project the embedding again (PCA to 2-D over up to 100,000 records)")
        self.bar.refresh_requested.connect(self.compute)
        self.bar.cancel_requested.connect(self.runner.cancel)
        bar = self.bar.layout()
        bar.insertWidget(0, QLabel("Embedding:", self.bar))
        bar.insertWidget(1, self.key_combo)
        self.canvas = ProjectionCanvas(self)
        self.canvas.point_clicked.connect(self._point_clicked)
        self.legend = QListWidget(self)
        self.legend.setMaximumWidth(180)
        self.legend.setToolTip("The labels' colours (the record's label feature)")
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.canvas, 1)
        body.addWidget(self.legend)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addLayout(body, 1)
        self.runner.waiting.connect(lambda: self._set_running(True, "waiting for indexing to finish…"))
        self.runner.started.connect(lambda: self._set_running(True, "reading the records…"))
        self.runner.progress.connect(self.bar.set_progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        palette.changes.changed.connect(self._recolor)
        self._set_running(False, "")

    # -- public -----------------------------------------------------------
    def projection(self) -> Projection | None:
        return self._projection

    def embedding_keys(self) -> dict[str, int] | None:
        """The embeddings found (key -> length), None before the records were looked at."""
        return self._keys

    def compute(self) -> None:
        """Project the chosen embedding (finding the embeddings first, once) on a worker."""
        self._stale = False
        source = self._source()
        key = self.key_combo.currentData()
        run = _Run(key)
        find = self._keys is None

        def steps():
            if find:
                schema = FileSchema()
                yield from schema_iter(source, None, schema)
                run.keys = embedding_keys(schema)
                run.key = run.key if run.key in run.keys else next(iter(run.keys), None)
            if run.key is not None:
                run.projection = Projection(run.key)
                yield from project_iter(source, run.key, run.projection)

        self.runner.start(steps, run)

    def mark_stale(self) -> None:
        """The records changed: look for the embeddings again too."""
        self._keys = None
        super().mark_stale()

    # -- internals --------------------------------------------------------
    def _filter_applies(self) -> bool:
        return False  # the projection is of all records, whatever the table shows

    def _set_running(self, running: bool, text: str) -> None:
        self.bar.set_running(running)
        self.bar.refresh.setEnabled(not running)
        if running:
            self.bar.summary.setText(text)

    def _finished(self, run: _Run, _last, cancelled: bool) -> None:
        self._set_running(False, "")
        if run.keys is not None:
            self._keys = run.keys
            self.key_combo.clear()
            for key, dims in run.keys.items():
                self.key_combo.addItem(f"{key} ({dims})", key)
        if cancelled:
            self._stale = True
            self.bar.summary.setText("stopped: press Project to go on")
        elif not self._keys:
            self.bar.summary.setText("no embeddings: no float feature has the same 8 or more values in every record")
        elif run.projection is not None:
            self.key_combo.setCurrentIndex(max(self.key_combo.findData(run.key), 0))
            self._show(run.projection)
        self.finished.emit()

    def _failed(self, error: str) -> None:
        self._set_running(False, "")
        self._stale = True
        self.bar.summary.setText(f"failed: {error}")
        self.finished.emit()

    def _show(self, projection: Projection) -> None:
        self._projection = projection
        self._recolor()
        n = len(projection.records)
        ratio = projection.explained
        words = [f"{n:,} record" + ("" if n == 1 else "s") + (" (a sample)" if projection.sampled else ""),
                 f"PC1 {ratio[0]:.0%}, PC2 {ratio[1]:.0%} of the variance"]
        if projection.skipped:
            words.append(f"{projection.skipped:,} without it left out")
        words.append(f"coloured by {projection.label_key}" if projection.label_key else "no label feature")
        self.bar.summary.setText(" · ".join(words))
        self.projection_ready.emit(projection)

    def _recolor(self, *_) -> None:
        """Colour the points and the legend by label (again, when the theme changes)."""
        p = self._projection
        if p is None:
            return
        colors = label_colors(len(p.label_names))
        words = np.array([c.rgba() for c in colors] + [QColor(palette.MUTED_TEXT).rgba()], dtype=np.uint32)
        names = p.label_names

        def tip(k: int) -> str:
            code = int(p.labels[k])
            label = names[code] if code >= 0 else "no label"
            return f"record {int(p.records[k]):,} · {label}"

        self.canvas.set_points(p.points, words[p.labels], tip)  # code -1: the last colour
        self.legend.clear()
        entries = list(zip(names, colors))
        if (p.labels < 0).any():
            entries.append(("no label", QColor(palette.MUTED_TEXT)))
        for name, color in entries:
            swatch = QPixmap(12, 12)
            swatch.fill(color)
            self.legend.addItem(QListWidgetItem(QIcon(swatch), name))
        self.legend.setVisible(bool(names))

    def _point_clicked(self, k: int) -> None:
        if self._projection is not None:
            self.record_activated.emit(int(self._projection.records[k]))
