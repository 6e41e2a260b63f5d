"""Masks, keypoints and segmentation class maps drawn over an image: the preview's and the gallery's.

Masks take their class's box colour (``box_painting.label_colors`` over the boxes' labels first, so a box
keeps its colour); class maps a colour per class id; keypoints are dots, hollow when not visible
(visibility 0). Colours are picked at paint time from the theme, half-transparent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

from app.models.overlay_layers import OverlayLayers
from app.style import palette
from app.views.box_painting import BOX_SHADOW, label_colors
from codec.decode.image_boxes import BoundingBox

MASK_ALPHA = 120  # of 255: the image stays readable under a mask
SEGMENT_ALPHA = 100


@dataclass
class LayerToggles:
    """Which overlay layers are drawn (the Boxes toggle is the boxes' own)."""

    masks: bool = True
    keypoints: bool = True
    segmentation: bool = True


def keypoint_color() -> QColor:
    """The keypoints' colour in the current theme."""
    return palette.SERIES_3


def mask_colors(boxes: list[BoundingBox], layers: OverlayLayers) -> dict[str | None, QColor]:
    """A colour per mask label, the same as the box of that label has."""
    return label_colors([box.label for box in boxes] + list(layers.mask_labels))


def _tinted(layers: OverlayLayers, image: QImage, colors: list[QColor], alpha: int) -> QImage:
    """``image`` (8-bit, slot k the k-th colour) with its colour table set: slot 0 clear, the rest ``alpha``;
    kept in ``layers.tints`` so a repaint in the same colours copies nothing."""
    table = tuple(([0] + [QColor(c.red(), c.green(), c.blue(), alpha).rgba() for c in colors] + [0] * 256)[:256])
    kept = layers.tints.get(image.cacheKey())
    if kept is None or kept[0] != table:  # one colouring per layer image: a theme switch replaces it
        tinted = QImage(image)
        tinted.setColorTable(list(table))
        kept = layers.tints[image.cacheKey()] = (table, tinted)
    return kept[1]


def paint_overlays(painter: QPainter, layers: OverlayLayers, boxes: list[BoundingBox], area: QRectF,
                   sx: float, sy: float, show: LayerToggles, dot: float = 4.0) -> None:
    """Draw ``layers`` into ``area`` (the image's rectangle), keypoints scaled by ``sx``, ``sy``: class maps,
    then masks, then keypoints as dots of radius ``dot``."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)  # crisp class edges
    if show.segmentation and layers.segmentation:
        colors = label_colors(list(layers.segment_labels))
        chosen = [colors[label] for label in layers.segment_labels]
        for image in layers.segmentation:
            painter.drawImage(area, _tinted(layers, image, chosen, SEGMENT_ALPHA))
    if show.masks and layers.masks is not None:
        colors = mask_colors(boxes, layers)
        painter.drawImage(area, _tinted(layers, layers.masks, [colors[label] for label in layers.mask_labels],
                                          MASK_ALPHA))
    if show.keypoints and layers.keypoints is not None:
        _paint_keypoints(painter, layers, area, sx, sy, dot)
    painter.restore()


def _paint_keypoints(painter: QPainter, layers: OverlayLayers, area: QRectF, sx: float, sy: float,
                     dot: float) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = keypoint_color()
    assert layers.keypoints is not None
    for x, y, visibility in layers.keypoints:
        if not (math.isfinite(x) and math.isfinite(y)):
            continue  # a missing keypoint has no place
        centre = QPointF(area.left() + x * sx, area.top() + y * sy)
        if visibility:
            painter.setPen(QPen(BOX_SHADOW, 1.5))
            painter.setBrush(color)
        else:  # labelled but not visible: hollow, a dark rim under the ring keeps it seen on any colour
            ring = max(1.5, dot / 2.5)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(BOX_SHADOW, ring + 2))
            painter.drawEllipse(centre, dot, dot)
            painter.setPen(QPen(color, ring))
        painter.drawEllipse(centre, dot, dot)


def legend_entries(boxes: list[BoundingBox], layers: OverlayLayers | None) -> list[tuple[str, QColor]]:
    """(name, colour) of each class drawn: the boxes' and masks' classes, then the class maps' ids."""
    masks = layers if layers is not None else OverlayLayers()
    colors = mask_colors(boxes, masks)
    out = [(str(label), color) for label, color in colors.items() if label]
    if masks.segmentation:
        segment_colors = label_colors(list(masks.segment_labels))
        out += [(f"class map {label}", segment_colors[label]) for label in masks.segment_labels]
    return out


def legend_html(entries: list[tuple[str, QColor]]) -> str:
    """The legend as rich text: a colour swatch before each name."""
    return " &nbsp; ".join(f'<span style="color:{color.name()}">■</span>&nbsp;{escape(name)}'
                           for name, color in entries)
