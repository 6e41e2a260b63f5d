"""The Scalars view's plots, painted with QPainter: a tag's runs as lines, and a histogram's buckets.

:class:`ScalarPlot` draws one tag: each run's smoothed line over its raw line (faint),
axes with round ticks (:mod:`codec.ops.scalar_series`), zoom by the wheel with Ctrl or Alt
held (the wheel alone scrolls the grid of plots, as in TensorBoard) or a dragged rectangle
(a double-click resets it), and a tooltip at the nearest point.
:class:`HistogramPlot` draws one run's histogram of a tag: the distribution at a step,
or several steps offset one above another (older behind), as TensorBoard's "offset" view.
"""
from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from app.style import palette
from codec.ops.scalar_series import STEP, WALL, HistogramPoint, nice_ticks, thinned, tick_label, time_ticks

MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 12, 24, 30
RAW_ALPHA = 70  # the raw line behind the smoothed one
PLOT_HEIGHT = 250  # a plot card's height (its width follows the grid)
HOVER_PIXELS = 24  # how near the pointer a point must be for its tooltip
OFFSET_LABELS = 72  # the offset view's room for its steps' labels
ZOOM_STEP = 0.8  # a wheel notch shows this share of the range


@dataclass
class Curve:
    """One run's line in a tag's plot: x per the axis chosen, raw and smoothed values, and what a tooltip says."""

    run: str
    color: QColor
    xs: list[float]
    values: list[float]
    smoothed: list[float]
    steps: list[int]
    wall_times: list[float]
    _arrays: tuple | None = None
    _ordered: bool | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, values, smoothed) as arrays, made once (to thin a long line for drawing)."""
        if self._arrays is None:
            self._arrays = (np.asarray(self.xs, dtype=np.float64), np.asarray(self.values, dtype=np.float64),
                            np.asarray(self.smoothed, dtype=np.float64))
        return self._arrays

    def ordered(self) -> bool:
        """Whether x never goes back (so the point under the pointer is found by bisection)."""
        if self._ordered is None:
            x = self.arrays()[0]
            self._ordered = bool(np.all(x[1:] >= x[:-1]))
        return self._ordered


def _array_range(arrays: list[np.ndarray]) -> tuple[float, float] | None:
    """(lowest, highest) finite value of ``arrays``, or None when they hold none."""
    lows, highs = [], []
    for a in arrays:
        finite = a[np.isfinite(a)]
        if finite.size:
            lows.append(finite.min())
            highs.append(finite.max())
    return (float(min(lows)), float(max(highs))) if lows else None


class _Frame:
    """Data <-> pixels inside a plot's axes."""

    def __init__(self, area: QRectF, x0: float, x1: float, y0: float, y1: float) -> None:
        self.area, self.x0, self.x1, self.y0, self.y1 = area, x0, x1, y0, y1

    def px(self, x: float) -> float:
        return self.area.left() + (x - self.x0) / (self.x1 - self.x0) * self.area.width()

    def py(self, y: float) -> float:
        return self.area.bottom() - (y - self.y0) / (self.y1 - self.y0) * self.area.height()

    def data_x(self, px: float) -> float:
        return self.x0 + (px - self.area.left()) / self.area.width() * (self.x1 - self.x0)

    def data_y(self, py: float) -> float:
        return self.y0 + (self.area.bottom() - py) / self.area.height() * (self.y1 - self.y0)


def _padded(lo: float, hi: float) -> tuple[float, float]:
    if hi == lo:
        pad = abs(lo) * 0.1 or 1.0
        return lo - pad, hi + pad
    pad = (hi - lo) * 0.05
    return lo - pad, hi + pad


class _PlotBase(QWidget):
    """A card with a title, axes and ticks; subclasses say the ranges and paint inside."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.setMinimumSize(280, PLOT_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(380, PLOT_HEIGHT)

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        try:  # (a painter left active would bring the app down)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            self._paint(p)
        finally:
            p.end()

    def _paint(self, p: QPainter) -> None:
        """Paint the plot (the subclass's)."""
        raise NotImplementedError

    def _area(self) -> QRectF:
        return QRectF(MARGIN_LEFT, MARGIN_TOP, max(10, self.width() - MARGIN_LEFT - MARGIN_RIGHT),
                      max(10, self.height() - MARGIN_TOP - MARGIN_BOTTOM))

    def _paint_frame(self, p: QPainter, frame: _Frame, x_axis: str = STEP, y_labels: bool = True) -> None:
        """Background, title, grid, tick labels (the y axis' unless not ``y_labels``) and the axes' lines."""
        qp = self.palette()
        p.fillRect(self.rect(), qp.color(QPalette.ColorRole.Base))
        p.setPen(qp.color(QPalette.ColorRole.Text))
        font = p.font()
        title_font = font
        title_font.setBold(True)
        p.setFont(title_font)
        p.drawText(QRectF(8, 2, self.width() - 16, MARGIN_TOP - 4), Qt.AlignmentFlag.AlignVCenter
                   | Qt.AlignmentFlag.AlignLeft, self.title)
        title_font.setBold(False)
        p.setFont(title_font)
        area = frame.area
        grid = QPen(palette.CHART_TRACK, 1)
        label_pen = QPen(palette.CHART_LABEL)
        metrics = p.fontMetrics()
        y_ticks = nice_ticks(frame.y0, frame.y1, max(2, int(area.height() // 40)))
        y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else abs(frame.y1 - frame.y0) or 1.0
        for t in y_ticks if y_labels else ():
            y = frame.py(t)
            p.setPen(grid)
            p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
            p.setPen(label_pen)
            p.drawText(QRectF(0, y - 8, MARGIN_LEFT - 6, 16), Qt.AlignmentFlag.AlignRight
                       | Qt.AlignmentFlag.AlignVCenter, tick_label(t, y_step))
        count = max(2, int(area.width() // 90))
        if x_axis == WALL:
            x_ticks = time_ticks(frame.x0, frame.x1, count)
        else:
            ticks = nice_ticks(frame.x0, frame.x1, count)
            step = ticks[1] - ticks[0] if len(ticks) > 1 else abs(frame.x1 - frame.x0) or 1.0
            x_ticks = [(t, tick_label(t, step)) for t in ticks]
        for t, text in x_ticks:
            x = frame.px(t)
            p.setPen(grid)
            p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            p.setPen(label_pen)
            w = metrics.horizontalAdvance(text) + 4
            p.drawText(QRectF(x - w / 2, area.bottom() + 4, w, 16), Qt.AlignmentFlag.AlignCenter, text)
        p.setPen(QPen(palette.CHART_AXIS, 1))
        p.drawLine(area.bottomLeft(), area.bottomRight())
        p.drawLine(area.bottomLeft(), area.topLeft())


class ScalarPlot(_PlotBase):
    """One tag's runs (see the module docstring). ``zoomed(bool)``: the view left or came back to the whole."""

    zoomed = Signal(bool)

    def __init__(self, tag: str, parent: QWidget | None = None) -> None:
        super().__init__(tag, parent)
        self.curves: list[Curve] = []
        self.x_axis = STEP
        self.view: tuple[float, float, float, float] | None = None  # (x0, x1, y0, y1) zoomed; None: all
        self._drag_from: QPointF | None = None
        self._drag_to: QPointF | None = None
        self._hover: tuple[int, int] | None = None  # (curve, point)
        self._full = None
        self.setToolTip("")

    def set_curves(self, curves: list[Curve], x_axis: str) -> None:
        if x_axis != self.x_axis:
            self.view = None
        self.curves, self.x_axis = curves, x_axis
        self._full: tuple[float, float, float, float] | None = None
        self._hover = None
        self.update()

    def full_range(self) -> tuple[float, float, float, float]:
        """(x0, x1, y0, y1) holding every finite point, padded (worked out once per set of curves)."""
        if self._full is None:
            xs = _array_range([c.arrays()[0] for c in self.curves]) or (0.0, 1.0)
            ys = _array_range([a for c in self.curves for a in c.arrays()[1:]]) or (0.0, 1.0)
            x0, x1 = xs if xs[1] > xs[0] else _padded(*xs)
            self._full = (x0, x1, *_padded(*ys))
        return self._full

    def frame(self) -> _Frame:
        return _Frame(self._area(), *(self.view or self.full_range()))

    def zoom_to(self, x0: float, x1: float, y0: float, y1: float) -> None:
        if x1 <= x0 or y1 <= y0:
            return
        self.view = (x0, x1, y0, y1)
        self.update()
        self.zoomed.emit(True)

    def reset_zoom(self) -> None:
        self.view = None
        self.update()
        self.zoomed.emit(False)

    # -- painting ----------------------------------------------------------
    def _paint(self, p: QPainter) -> None:
        frame = self.frame()
        self._paint_frame(p, frame, self.x_axis)
        p.setClipRect(frame.area.adjusted(-1, -1, 1, 1))
        columns = int(frame.area.width())
        for curve in self.curves:
            faint = QColor(curve.color)
            faint.setAlpha(RAW_ALPHA)
            x, raw, smoothed = curve.arrays()
            drawn = thinned(x, raw, frame.x0, frame.x1, columns)
            if drawn is not None:  # a long line: the points that shape it at this width
                x, raw, smoothed = x[drawn], raw[drawn], smoothed[drawn]
            if curve.smoothed is not curve.values:
                p.setPen(QPen(faint, 1))
                for line in _polylines(frame, x, raw):
                    p.drawPolyline(line)
            p.setPen(QPen(curve.color, 1.6))
            for line in _polylines(frame, x, smoothed):
                p.drawPolyline(line)
        if self._hover is not None:
            curve = self.curves[self._hover[0]]
            k = self._hover[1]
            point = QPointF(frame.px(curve.xs[k]), frame.py(curve.smoothed[k]))
            p.setPen(QPen(self.palette().color(QPalette.ColorRole.Base), 1.5))
            p.setBrush(curve.color)
            p.drawEllipse(point, 4, 4)
        if self._drag_from is not None and self._drag_to is not None:
            band = QColor(palette.CHART_BAR)
            band.setAlpha(40)
            p.setPen(QPen(palette.CHART_BAR, 1, Qt.PenStyle.DashLine))
            p.setBrush(band)
            p.drawRect(QRectF(self._drag_from, self._drag_to).normalized())

    # -- zoom and hover ----------------------------------------------------
    def wheelEvent(self, event) -> None:
        frame = self.frame()
        pos = event.position()
        zoom = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
        if not frame.area.contains(pos) or not event.modifiers() & zoom:  # the wheel alone scrolls the grid
            return super().wheelEvent(event)
        factor = ZOOM_STEP if event.angleDelta().y() > 0 else 1 / ZOOM_STEP
        cx, cy = frame.data_x(pos.x()), frame.data_y(pos.y())
        self.zoom_to(cx - (cx - frame.x0) * factor, cx + (frame.x1 - cx) * factor,
                     cy - (cy - frame.y0) * factor, cy + (frame.y1 - cy) * factor)
        event.accept()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.frame().area.contains(event.position()):
            self._drag_from = self._drag_to = event.position()
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._drag_from is not None:
            self._drag_to = event.position()
            self.update()
            return
        self._show_hover(event.position(), event.globalPosition().toPoint())

    def mouseReleaseEvent(self, event) -> None:
        start, end = self._drag_from, event.position()
        self._drag_from = self._drag_to = None
        self.update()
        if start is not None and abs(end.x() - start.x()) > 4 and abs(end.y() - start.y()) > 4:
            frame = self.frame()
            xs = sorted((frame.data_x(start.x()), frame.data_x(end.x())))
            ys = sorted((frame.data_y(start.y()), frame.data_y(end.y())))
            self.zoom_to(xs[0], xs[1], ys[0], ys[1])
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        self.reset_zoom()
        event.accept()

    def leaveEvent(self, event) -> None:
        if self._hover is not None:
            self._hover = None
            self.update()
        super().leaveEvent(event)

    def nearest(self, pos: QPointF) -> tuple[int, int] | None:
        """(curve, point) of the point nearest ``pos`` on the smoothed lines, if within HOVER_PIXELS."""
        frame = self.frame()
        area = frame.area
        sx = area.width() / (frame.x1 - frame.x0)
        sy = area.height() / (frame.y1 - frame.y0)
        best, where = float(HOVER_PIXELS ** 2), None
        reach = HOVER_PIXELS / sx
        for c, curve in enumerate(self.curves):
            x, _raw, y = curve.arrays()
            lo, hi = 0, len(x)
            if curve.ordered():  # only the points within reach along x
                cx = frame.data_x(pos.x())
                lo, hi = np.searchsorted(x, cx - reach), np.searchsorted(x, cx + reach, side="right")
            if hi <= lo:
                continue
            dx = (area.left() + (x[lo:hi] - frame.x0) * sx) - pos.x()
            dy = (area.bottom() - (y[lo:hi] - frame.y0) * sy) - pos.y()
            d = dx * dx + dy * dy
            d[~np.isfinite(d)] = np.inf
            j = int(np.argmin(d))
            if d[j] < best:
                best, where = float(d[j]), (c, lo + j)
        return where

    def hover_text(self, c: int, k: int) -> str:
        """What the tooltip says of point ``k`` of curve ``c``: run, step, value, smoothed, time."""
        curve = self.curves[c]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(curve.wall_times[k])) \
            if math.isfinite(curve.wall_times[k]) else repr(curve.wall_times[k])
        lines = [f"<b>{_escape(curve.run)}</b>", f"step {curve.steps[k]:,}", f"value {curve.values[k]:.6g}"]
        if curve.smoothed is not curve.values:
            lines.append(f"smoothed {curve.smoothed[k]:.6g}")
        lines.append(when)
        return "<br>".join(lines)

    def _show_hover(self, pos: QPointF, global_pos) -> None:
        hit = self.nearest(pos)
        if hit != self._hover:
            self._hover = hit
            self.update()
        if hit is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(global_pos, self.hover_text(*hit), self, QRect(), 10000)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _polylines(frame: _Frame, xs: np.ndarray, ys: np.ndarray) -> list[QPolygonF]:
    """The line through the finite points in pixels, a polyline per run of them (broken at NaN, infinities)."""
    area = frame.area
    px = area.left() + (xs - frame.x0) * (area.width() / (frame.x1 - frame.x0))
    py = area.bottom() - (ys - frame.y0) * (area.height() / (frame.y1 - frame.y0))
    finite = np.isfinite(px) & np.isfinite(py)
    px, py = np.clip(px, -1e6, 1e6), np.clip(py, -1e6, 1e6)  # far outside a zoomed view: still drawable
    edges = np.flatnonzero(np.diff(np.r_[False, finite, False].astype(np.int8)))
    out = []
    for start, end in zip(edges[::2], edges[1::2]):
        out.append(QPolygonF([QPointF(x, y) for x, y in zip(px[start:end].tolist(), py[start:end].tolist())]))
    return out


class HistogramPlot(_PlotBase):
    """One run's histograms of a tag: at a step (``set_step``), or several steps offset (``offset``)."""

    OFFSET_STEPS = 12  # how many steps the offset view draws, spread over the run

    def __init__(self, title: str, color: QColor, points: list[HistogramPoint], parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.color = color
        self.points = points
        self.offset = False
        self.index = len(points) - 1  # the point shown at a step

    def set_points(self, points: list[HistogramPoint]) -> None:
        self.points = points
        self.index = min(max(self.index, 0), len(points) - 1)
        self.update()

    def set_step(self, step: int) -> None:
        """Show the last histogram at or before ``step`` (the first, if all are after it)."""
        steps = [p.step for p in self.points]
        self.index = max(0, bisect.bisect_right(steps, step) - 1)
        self.update()

    def set_offset(self, on: bool) -> None:
        self.offset = on
        self.update()

    def shown(self) -> list[HistogramPoint]:
        """The histograms drawn: the one at the step, or the offset view's, oldest first."""
        if not self.points:
            return []
        if not self.offset:
            return [self.points[self.index]]
        n = len(self.points)
        if n <= self.OFFSET_STEPS:
            return list(self.points)
        picks = sorted({round(k * (n - 1) / (self.OFFSET_STEPS - 1)) for k in range(self.OFFSET_STEPS)})
        return [self.points[k] for k in picks]

    def _paint(self, p: QPainter) -> None:
        shown = [h for h in self.shown() if len(h.buckets)]
        edges = np.concatenate([h.buckets[:, :2].ravel() for h in shown]) if shown else np.zeros(0)
        counts = np.concatenate([h.buckets[:, 2] for h in shown]) if shown else np.zeros(0)
        edges, counts = edges[np.isfinite(edges)], counts[np.isfinite(counts)]
        x0, x1 = (float(edges.min()), float(edges.max())) if edges.size else (0.0, 1.0)
        if x1 <= x0:
            x0, x1 = _padded(x0, x1)
        peak = float(counts.max()) if counts.size and counts.max() > 0 else 1.0
        rows = len(shown)
        lift = 0.6 if self.offset and rows > 1 else 0.0  # each older histogram sits this share of a peak lower
        area = self._area()
        if lift:  # room on the right for the steps' labels; the y axis means nothing then
            area.setRight(area.right() - OFFSET_LABELS)
        frame = _Frame(area, x0, x1, 0.0, peak * (1 + lift * (rows - 1)) * 1.05)
        self._paint_frame(p, frame, y_labels=not lift)
        edge = QPen(self.color.darker(120) if not palette.is_dark() else self.color.lighter(120), 1)
        for k, histogram in enumerate(shown):
            base = peak * lift * (rows - 1 - k)
            fill = QColor(self.color)
            fill.setAlpha(60 + int(140 * (k + 1) / rows) if rows > 1 else 110)
            buckets = histogram.buckets
            path = QPainterPath()
            path.moveTo(frame.px(float(buckets[0, 0])), frame.py(base))
            for left, right, count in buckets.tolist():
                height = base + (count if math.isfinite(count) else 0.0)  # a bucket's height: its count
                path.lineTo(frame.px(left), frame.py(height))
                path.lineTo(frame.px(right), frame.py(height))
            path.lineTo(frame.px(float(buckets[-1, 1])), frame.py(base))
            path.closeSubpath()
            p.setClipRect(frame.area.adjusted(-1, -1, 1, 1))
            p.setPen(edge)
            p.setBrush(fill)
            p.drawPath(path)
            p.setClipping(False)
            if lift:
                p.setPen(QPen(palette.CHART_LABEL))
                p.drawText(QPointF(frame.area.right() + 6, frame.py(base) + 4), f"step {histogram.step:,}")
