"""One image of the Images tab painted at a scale: the image, its overlays (class maps, masks, keypoints),
its boxes with their labels; the pixel under the pointer and what a box is when hovered."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QHelpEvent, QImage, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from app.models.overlay_layers import OverlayLayers
from app.style import palette
from app.views.box_painting import box_rect, box_tooltip, paint_boxes
from app.views.overlay_painting import LayerToggles, paint_overlays
from codec.decode.image_boxes import BoundingBox
from codec.decode.images import ImageRef, PixelValues

MAX_CACHED_PIXELS = 16 << 20  # a scaled copy bigger than this is not kept; the visible part is drawn


@dataclass
class Shown:
    """One image slot: its ref, boxes, and (once decoded) its pixels or error."""

    ref: ImageRef
    boxes: list[BoundingBox] = field(default_factory=list)
    image: QImage | None = None
    error: str | None = None
    pending: bool = False
    values: PixelValues | None = None  # the decoded samples, for the pixel inspector (None: not known)
    overlays: OverlayLayers | None = None  # the main image's masks, keypoints and class maps, once built


class ImageCanvas(QWidget):
    """Paints one image at a scale, with its overlays and then its boxes and labels on top."""

    def __init__(self, shown: Shown, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown = shown
        self.scale = 1.0
        self.show_boxes = True
        self.layers = LayerToggles()  # which overlays are drawn
        self._pixmap: QPixmap | None = None
        self._pixmap_size = QSize()
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        font.setBold(True)
        self._label_font = font
        self.pointed: Callable[[Shown, int, int], None] | None = None  # the pixel under the pointer
        self.left: Callable[[], None] | None = None
        self.setMouseTracking(True)

    def pixel_at(self, pos: QPoint) -> tuple[int, int] | None:
        """The image pixel (x, y) under a point of the canvas, None off the image."""
        size = self.natural_size()
        if self.shown.image is None or self.width() < 1 or self.height() < 1:
            return None
        x, y = math.floor(pos.x() * size.width() / self.width()), math.floor(pos.y() * size.height() / self.height())
        return (x, y) if 0 <= x < size.width() and 0 <= y < size.height() else None

    def boxes_at(self, pos: QPoint) -> list[BoundingBox]:
        """The boxes drawn under a point of the canvas (none while boxes are hidden)."""
        if not self.show_boxes or self.shown.image is None:
            return []
        size = self.natural_size()
        sx, sy = self.width() / size.width(), self.height() / size.height()
        area = QRectF(self.rect())
        return [box for box in self.shown.boxes if box_rect(box, area, sx, sy).adjusted(-2, -2, 2, 2).contains(pos)]

    def tooltip_at(self, pos: QPoint) -> str | None:
        """What the boxes under ``pos`` are (class, score, coordinates, why invalid); None over no box."""
        boxes = self.boxes_at(pos)
        return "\n\n".join(box_tooltip(box) for box in boxes) if boxes else None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pixel = self.pixel_at(event.position().toPoint())
        if pixel is not None and self.pointed is not None:
            self.pointed(self.shown, *pixel)
        elif pixel is None and self.left is not None:
            self.left()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self.left is not None:
            self.left()
        super().leaveEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, self)
                return True
        return super().event(event)

    def natural_size(self) -> QSize:
        image = self.shown.image
        if image is not None:
            return image.size()
        return QSize(max(1, self.shown.ref.width), max(1, self.shown.ref.height))

    def set_scale(self, scale: float) -> None:
        self.scale = scale
        size = self.natural_size()
        if self.shown.image is None:
            # placeholders keep a readable size whatever the image's would be
            w = min(max(int(size.width() * scale), 220), 480)
            h = min(max(int(size.height() * scale), 90), 240)
        else:
            w, h = max(1, round(size.width() * scale)), max(1, round(size.height() * scale))
        self.setFixedSize(w, h)
        self.update()

    def image_changed(self) -> None:
        self._pixmap = None
        self.set_scale(self.scale)

    def _scaled_pixmap(self) -> QPixmap | None:
        """The image at the canvas size, cached; None when too big to hold scaled."""
        image = self.shown.image
        target = self.size()
        if image is None or target.width() * target.height() > MAX_CACHED_PIXELS:
            return None
        if self._pixmap is None or self._pixmap_size != target:
            if target == image.size():
                scaled = image
            else:
                scaled = image.scaled(target, Qt.AspectRatioMode.IgnoreAspectRatio, self._transformation())
            self._pixmap = QPixmap.fromImage(scaled)
            self._pixmap_size = QSize(target)
        return self._pixmap

    def _transformation(self) -> Qt.TransformationMode:
        """Crisp pixels when enlarged a lot, smooth otherwise."""
        return Qt.TransformationMode.FastTransformation if self.scale >= 2 else Qt.TransformationMode.SmoothTransformation

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        image = self.shown.image
        if image is None:
            self._paint_placeholder(painter)
            return
        painter.fillRect(event.rect(), palette.CANVAS_BG)
        pixmap = self._scaled_pixmap()
        if pixmap is not None:
            painter.drawPixmap(0, 0, pixmap)
        else:  # zoomed far in: scale only the exposed part
            exposed = QRectF(event.rect())
            sx, sy = image.width() / self.width(), image.height() / self.height()
            source = QRectF(exposed.x() * sx, exposed.y() * sy, exposed.width() * sx, exposed.height() * sy)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform,
                                  self._transformation() == Qt.TransformationMode.SmoothTransformation)
            painter.drawImage(exposed, image, source)
        size = self.natural_size()
        sx, sy = self.width() / size.width(), self.height() / size.height()
        if self.shown.overlays:
            paint_overlays(painter, self.shown.overlays, self.shown.boxes, QRectF(self.rect()), sx, sy, self.layers,
                           dot=max(3.0, min(6.0, 2.0 * sx)))
        if self.show_boxes and self.shown.boxes:
            paint_boxes(painter, self.shown.boxes, QRectF(self.rect()), sx, sy, self._label_font)

    def _paint_placeholder(self, painter: QPainter) -> None:
        rect = self.rect()
        if self.shown.error:
            painter.fillRect(rect, palette.ERROR_BG)
            painter.setPen(QPen(palette.ERROR_TEXT, 1, Qt.PenStyle.DashLine))
            painter.drawRect(rect.adjusted(0, 0, -1, -1))
            painter.setPen(palette.ERROR_TEXT)
            text = self.shown.error
        else:
            painter.fillRect(rect, palette.CANVAS_BG)
            painter.setPen(palette.CAPTION_TEXT)
            text = "decoding…"
        painter.drawText(rect.adjusted(10, 8, -10, -8),
                         Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
