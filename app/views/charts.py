"""Small charts painted with QPainter into a table cell: histograms and bar charts.

Each function draws into ``rect`` with the painter's current font and leaves
the painter as it found it. They take plain numbers and labels (what
``codec.stats.file_stats`` reports), and know nothing of features or files.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from app.style import palette

# The palette's own QColors, changed in place when the theme changes.
BAR_COLOR = palette.CHART_BAR
BAR_ALT_COLOR = palette.CHART_BAR_ALT
AXIS_COLOR = palette.CHART_AXIS
LABEL_COLOR = palette.CHART_LABEL
TRACK_COLOR = palette.CHART_TRACK
MIN_BAR_PX = 1.5  # a non-zero count is always visible


def _small_font(painter: QPainter, factor: float = 0.85) -> QFont:
    font = QFont(painter.font())
    if font.pointSizeF() > 0:
        font.setPointSizeF(max(6.5, font.pointSizeF() * factor))
    return font


def paint_histogram(painter: QPainter, rect: QRectF, counts: list[int], low: str = "", high: str = "",
                    color: QColor = BAR_COLOR) -> None:
    """Vertical bars, one per bin, scaled to the largest; ``low`` and ``high`` label the axis ends."""
    if not counts or rect.width() < 8 or rect.height() < 12:
        return
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    font = _small_font(painter)
    painter.setFont(font)
    fm = QFontMetricsF(font)
    labels = bool(low or high)
    plot = QRectF(rect.left(), rect.top() + 2, rect.width(), rect.height() - 2 - (fm.height() + 1 if labels else 0))
    top = max(counts)
    n = len(counts)
    gap = 1.0 if plot.width() / n > 4 else 0.0
    width = plot.width() / n
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    for k, c in enumerate(counts):
        if not c:
            continue
        h = max(MIN_BAR_PX, plot.height() * c / top) if top else 0
        painter.drawRect(QRectF(plot.left() + k * width, plot.bottom() - h, max(1.0, width - gap), h))
    painter.setPen(QPen(AXIS_COLOR, 1))
    painter.drawLine(plot.bottomLeft(), plot.bottomRight())
    if labels:
        painter.setPen(LABEL_COLOR)
        line = QRectF(rect.left(), plot.bottom() + 1, rect.width(), fm.height())
        painter.drawText(line, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, low)
        if fm.horizontalAdvance(low) + fm.horizontalAdvance(high) + 8 < rect.width():
            painter.drawText(line, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, high)
    painter.restore()


def paint_columns(painter: QPainter, rect: QRectF, items: list[tuple[str, int]], color: QColor = BAR_COLOR) -> None:
    """One labelled column per category (few categories: labels 0..4, formats), counts on top."""
    if not items or rect.width() < 8 or rect.height() < 20:
        return
    painter.save()
    font = _small_font(painter)
    painter.setFont(font)
    fm = QFontMetricsF(font)
    n = len(items)
    slot = rect.width() / n
    top = max(c for _, c in items) or 1
    label_h = fm.height()
    plot = QRectF(rect.left(), rect.top() + label_h, rect.width(), rect.height() - 2 * label_h - 1)
    bar_w = max(2.0, min(slot * 0.7, 40.0))
    for k, (label, count) in enumerate(items):
        cx = rect.left() + slot * (k + 0.5)
        h = max(MIN_BAR_PX, plot.height() * count / top) if count else 0
        bar = QRectF(cx - bar_w / 2, plot.bottom() - h, bar_w, h)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRect(bar)
        painter.setPen(LABEL_COLOR)
        count_text = f"{count:,}"
        if fm.horizontalAdvance(count_text) <= slot:
            painter.drawText(QRectF(cx - slot / 2, bar.top() - label_h, slot, label_h),
                             Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, count_text)
        shown = fm.elidedText(label, Qt.TextElideMode.ElideRight, slot - 2)
        painter.drawText(QRectF(cx - slot / 2, plot.bottom() + 1, slot, label_h),
                         Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, shown)
    painter.setPen(QPen(AXIS_COLOR, 1))
    painter.drawLine(plot.bottomLeft(), plot.bottomRight())
    painter.restore()


def paint_bars(painter: QPainter, rect: QRectF, items: list[tuple[str, int]], total: int,
               color: QColor = BAR_COLOR) -> None:
    """Horizontal bars (value label, a bar on a track scaled to ``total``, the count), as many as fit."""
    if not items or rect.width() < 40:
        return
    painter.save()
    font = _small_font(painter)
    painter.setFont(font)
    fm = QFontMetricsF(font)
    row_h = fm.height() + 1
    rows = max(1, int(rect.height() // row_h))
    items = items[:rows]
    label_w = min(rect.width() * 0.42, max(fm.horizontalAdvance(label) for label, _ in items) + 6)
    count_w = max(fm.horizontalAdvance(f"{count:,}") for _, count in items) + 6
    track_w = max(10.0, rect.width() - label_w - count_w)
    top = max(1, total)
    for k, (label, count) in enumerate(items):
        y = rect.top() + k * row_h
        painter.setPen(LABEL_COLOR)
        painter.drawText(QRectF(rect.left(), y, label_w - 4, row_h), Qt.AlignmentFlag.AlignRight |
                         Qt.AlignmentFlag.AlignVCenter, fm.elidedText(label, Qt.TextElideMode.ElideRight, label_w - 4))
        track = QRectF(rect.left() + label_w, y + 2, track_w, row_h - 4)
        painter.fillRect(track, TRACK_COLOR)
        w = max(MIN_BAR_PX, track_w * count / top) if count else 0
        painter.fillRect(QRectF(track.left(), track.top(), w, track.height()), color)
        painter.drawText(QRectF(track.right() + 4, y, count_w, row_h), Qt.AlignmentFlag.AlignLeft |
                         Qt.AlignmentFlag.AlignVCenter, f"{count:,}")
    painter.restore()


def paint_share(painter: QPainter, rect: QRectF, parts: list[tuple[str, int, QColor]]) -> None:
    """One stacked bar of parts (e.g. JPEG / PNG) with a legend under it."""
    total = sum(n for _, n, _ in parts)
    if not total or rect.width() < 20:
        return
    painter.save()
    font = _small_font(painter)
    painter.setFont(font)
    fm = QFontMetricsF(font)
    bar = QRectF(rect.left(), rect.top() + 2, rect.width(), min(12.0, rect.height() / 3))
    x = bar.left()
    for _, n, color in parts:
        w = bar.width() * n / total
        painter.fillRect(QRectF(x, bar.top(), w, bar.height()), color)
        x += w
    x = rect.left()
    y = bar.bottom() + 3
    for name, n, color in parts:
        text = f"{name} {n / total:.0%}"
        w = fm.horizontalAdvance(text) + 16
        if x + w > rect.right():
            break
        painter.fillRect(QRectF(x, y + (fm.height() - 8) / 2, 8, 8), color)
        painter.setPen(LABEL_COLOR)
        painter.drawText(QRectF(x + 11, y, w, fm.height()), Qt.AlignmentFlag.AlignLeft |
                         Qt.AlignmentFlag.AlignVCenter, text)
        x += w + 6
    painter.restore()


def paint_histogram_with_counts(painter: QPainter, rect: QRectF, counts: list[int], low: str, high: str,
                                groups: list[list[tuple[str, int]]]) -> None:
    """A histogram on the left half (one column when ``low == high``), then each group of categories
    (e.g. sample rates, channels) as labelled columns in the alternate colour."""
    groups = [g for g in groups if g]
    hist_w = rect.width() * (0.5 if groups else 1.0)
    area = QRectF(rect.left(), rect.top(), hist_w - 12, rect.height())
    if low == high:
        paint_columns(painter, area, [(low, sum(counts))])
    else:
        paint_histogram(painter, area, counts, low, high)
    slot = (rect.width() - hist_w) / max(1, len(groups))
    for k, items in enumerate(groups):
        paint_columns(painter, QRectF(rect.left() + hist_w + k * slot, rect.top(), slot - 12, rect.height()), items,
                      color=BAR_ALT_COLOR)
