"""Bounding boxes drawn over an image, each label a coloured chip: the preview's and the gallery's.

An invalid box (min > max, outside the image, zero area: the codec's ``BoundingBox.problem``) is
drawn dashed in the warning colour with an "invalid box" chip; ``box_tooltip`` says what a box is.
"""
from __future__ import annotations

import zlib

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen

from app.style import palette
from codec.decode.image_boxes import BoundingBox

# Saturated colours that stay distinct from each other on photos and on white...
BOX_COLORS = tuple(QColor(c) for c in (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#00a3c4", "#f032e6", "#9a6324",
    "#469990", "#000075", "#808000", "#800000", "#bfef45", "#ff6f91"))
# ...and in the dark theme the same hues lighter, the darkest (navy, maroon) traded for pale ones.
DARK_BOX_COLORS = tuple(QColor(c) for c in (
    "#ff4d6d", "#4cd964", "#6b8cff", "#ff9a4d", "#c77dff", "#22d3ee", "#f472f0", "#b07a3a",
    "#5ec9bd", "#aaffc3", "#9ad0ff", "#ffd8b1", "#bfef45", "#ff9bb3"))
BOX_SHADOW = QColor(0, 0, 0, 120)
INVALID_NOTE = "invalid box"  # the chip and tooltip of a box with min > max, outside the image or no area


def box_colors() -> tuple[QColor, ...]:
    """The theme's box colours."""
    return DARK_BOX_COLORS if palette.is_dark() else BOX_COLORS


def label_colors(labels: list[str | None]) -> dict[str | None, QColor]:
    """A colour per label: stable across records (by hash), distinct within one."""
    colors: dict[str | None, QColor] = {}
    used: set[int] = set()
    choices = box_colors()
    for label in dict.fromkeys(labels):
        k = zlib.crc32((label or "").encode("utf-8")) % len(choices)
        for _ in range(len(choices)):
            if k not in used:
                break
            k = (k + 1) % len(choices)
        used.add(k)
        colors[label] = choices[k]
    return colors


def _readable_text_color(bg: QColor) -> QColor:
    luminance = 0.299 * bg.red() + 0.587 * bg.green() + 0.114 * bg.blue()
    return QColor("black") if luminance > 150 else QColor("white")


def paint_boxes(painter: QPainter, boxes: list[BoundingBox], area: QRectF, sx: float, sy: float,
                label_font: QFont | None, rim: float = 4, line: float = 2) -> None:
    """Draw ``boxes`` scaled by ``sx``, ``sy`` into ``area``, with their labels as chips.

    Also used by the gallery's thumbnails; ``label_font`` None draws no labels.
    """
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    colors = label_colors([box.label for box in boxes])
    metrics = QFontMetrics(label_font) if label_font is not None else None
    if label_font is not None:
        painter.setFont(label_font)
    placed: list[QRectF] = []  # chips drawn so far: boxes sharing a corner keep every label readable
    for box in boxes:
        invalid = box.problem is not None
        color = palette.WARN_TEXT if invalid else colors[box.label]
        r = box_rect(box, area, sx, sy)
        painter.setPen(QPen(BOX_SHADOW, rim))  # a dark rim keeps light colours visible on light images
        painter.drawRect(r)
        pen = QPen(color, line)
        if invalid:  # not like the others: dashed, in the warning colour, and said in its chip
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRect(r)
        text = f"{INVALID_NOTE}: {box.label}" if invalid and box.label else INVALID_NOTE if invalid else box.label
        if not text or metrics is None:
            continue
        tw, th = metrics.horizontalAdvance(text) + 8, metrics.height() + 2
        top = r.top() - th if r.top() - th >= area.top() else r.top()
        left = min(max(area.left(), r.left()), max(area.left(), area.right() - tw))
        chip = _free_spot(QRectF(left, top, tw, th), placed, area)
        placed.append(chip)
        painter.fillRect(chip, color)
        painter.setPen(_readable_text_color(color))
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)
    painter.restore()


def box_rect(box: BoundingBox, area: QRectF, sx: float, sy: float) -> QRectF:
    """Where ``box`` is drawn in ``area`` at scale ``sx``, ``sy`` (an inverted box spans its corners)."""
    ox, oy = area.left(), area.top()
    return QRectF(QPointF(ox + box.xmin * sx, oy + box.ymin * sy),
                  QPointF(ox + box.xmax * sx, oy + box.ymax * sy)).normalized()


def box_tooltip(box: BoundingBox) -> str:
    """What a box is: its class (name and label id), score, coordinates as stored and in pixels, and why it
    is invalid."""
    if box.class_id is None:
        head = box.label or "no class"
    elif box.label and box.label != str(box.class_id):
        head = f"{box.label} (label {box.class_id})"
    else:
        head = f"label {box.class_id}"
    if box.score is not None:
        head += f" · score {box.score:.3g}"
    lines = [head]
    if box.stored is not None and box.normalised:
        lines.append("xmin {:.4g}, ymin {:.4g}, xmax {:.4g}, ymax {:.4g} (normalised)".format(*box.stored))
    lines.append(f"x {box.xmin:.0f}–{box.xmax:.0f}, y {box.ymin:.0f}–{box.ymax:.0f} px")
    if box.problem:
        lines.append(f"{INVALID_NOTE}: {box.problem}")
    return "\n".join(lines)


def _free_spot(chip: QRectF, placed: list[QRectF], area: QRectF) -> QRectF:
    """``chip`` moved right (then down a line) until it covers no chip in ``placed``, within ``area`` if it can."""
    start = chip.left()
    for _ in range(4 * len(placed) + 1):
        hit = next((p for p in placed if p.intersects(chip)), None)
        if hit is None:
            return chip
        if hit.right() + 1 + chip.width() <= area.right():
            chip.moveLeft(hit.right() + 1)
        else:
            chip.moveTo(start, chip.top() + chip.height())
    return chip
