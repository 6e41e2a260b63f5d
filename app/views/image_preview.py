"""Every image of a record: encoded images, raw pixel buffers, SequenceExample strips.

The codec finds the images (``find_images``), decodes them (``decode_image``)
and places boxes (``find_boxes``); this widget only lays them out, scales them
and draws the boxes with their labels. Images larger than
``INLINE_DECODE_BYTES`` (and any beyond an inline budget) are decoded on a
thread pool; ``images_shown(count)`` fires once every image of the record is
on screen (decoded or replaced by a "cannot decode" note). 16-bit and float
images are scaled to 8 bits by their type's range, or stretched over their
own min..max when the user turns on "Stretch contrast" (a choice shared by
every preview and gallery, see :mod:`app.models.stretch_preference`).

The pixel inspector, a line under the images, gives the pixel under the pointer: its coordinates
and the decoded value of every channel (0–65535 for 16-bit, floats as stored; the codec's
``pixel_values``), with the image's bit depth and value range. Hovering a box shows what it is.

The main image's masks, keypoints and segmentation class maps (``app.models.overlay_layers``) are built
on a pool thread and drawn over it; a legend names their classes, and a toggle per layer hides each.
"""
from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import Any, NamedTuple

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QImage,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.models.labels import caption_text, image_dims
from app.models.overlay_layers import OverlayLayers, build_layers
from app.models.qimage import Decode, decode_to_qimage
from app.models.stretch_preference import stretch_mode, stretch_preference
from app.style import palette
from app.views.image_canvas import ImageCanvas, Shown
from app.views.overlay_painting import LayerToggles, legend_entries, legend_html
from app.workers.background import PoolJobs
from app.workers.worker import one_line
from codec.decode.decoder import DecodedRecord
from codec.decode.image_boxes import BoundingBox, find_boxes
from codec.decode.image_display import STRETCH_MINMAX
from codec.decode.images import (
    ImageRef,
    PixelValues,
    find_images,
    main_image,
    pixel_values,
)
from codec.errors import ImageDecodeError

INLINE_DECODE_BYTES = 1 << 20  # one image bigger than this is decoded on the pool
INLINE_BUDGET_BYTES = 2 << 20  # and so is everything after this much inline decoding
MAX_UPSCALE = 8.0
MIN_ZOOM, MAX_ZOOM = 0.05, 32.0
STRIP_FRAME_HEIGHT = 120  # fit mode: strip frames at most this high,
STRIP_MIN_HEIGHT = 64  # and at least this high (the strip scrolls sideways)
STRIP_SPACING = 8
CARD_SPACING = 4  # between an image and its caption
MARGIN = 10

STRETCH_TEXT = "Stretch contrast"
STRETCH_TIP = ("Stretch contrast to the image's own range (16-bit and float images; otherwise they are scaled "
               "by their type's range, 0–65535 for 16-bit)")


def _decode_with_values(job: Decode) -> tuple[QImage, PixelValues | None]:
    """The image as shown and its samples at full depth (None when only the shown image could be made)."""
    image = decode_to_qimage(job)
    try:
        values = pixel_values(job.ref)
    except Exception:  # noqa: BLE001 - the inspector then shows coordinates only
        values = None
    return image, values


class _Strip(NamedTuple):
    cards: list[_Card]
    scroller: QScrollArea
    frames: QWidget


class _ElidedLabel(QLabel):
    """A one-line label that elides its text when narrow: the toolbar must not hold the detail (and the tab) wide."""

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        self.style().drawItemText(painter, rect, int(self.alignment()), self.palette(), self.isEnabled(), text,
                                  self.foregroundRole())


class _Card(QWidget):
    """An image canvas with its caption below."""

    def __init__(self, shown: Shown, caption: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = ImageCanvas(shown, self)
        self.caption = QLabel(caption, self)
        self.caption.setStyleSheet(f"color: {palette.CAPTION_COLOR};")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setToolTip(tooltip)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(CARD_SPACING)
        layout.addWidget(self.canvas, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.caption, 0, Qt.AlignmentFlag.AlignLeft)


class ImagePreview(QWidget):
    """Images of one record, with zoom to fit / 1:1 and Ctrl+wheel zoom.

    ``images_shown(count)`` is emitted when all images of the record set by
    :meth:`set_record` are displayed (at once when none need the pool).
    """

    images_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown: list[Shown] = []
        self._cards: list[_Card] = []
        self._strips: list[_Strip] = []  # one per feature list with image steps
        self._generation = 0
        self._pending = 0
        self._fit = True
        self._zoom = 1.0
        self._record: DecodedRecord | None = None
        self._labels: Any = None  # the class names the record's boxes were found with
        self._refs: list[ImageRef] | None = None
        preference = stretch_preference()
        self._stretch = stretch_mode(preference.value())
        preference.changed.connect(self._stretch_changed)
        self._jobs = PoolJobs(self)
        self._jobs.finished.connect(self._decoded)
        self._jobs.failed.connect(self._decode_failed)
        self._overlay_jobs = PoolJobs(self, max_threads=1)  # masks, keypoints and class maps, off the GUI thread
        self._overlay_jobs.finished.connect(self._overlays_built)
        self._overlay_jobs.failed.connect(lambda ticket, _message: self._overlays_built(ticket, OverlayLayers()))
        self._toggles = LayerToggles()  # shared by every canvas, kept from record to record
        palette.changes.changed.connect(self._theme_changed)

        self.fit_button = self._tool_button("Fit", "Scale every image to fit the view")
        self.actual_button = self._tool_button("1:1", "Show images at their real size")
        self.boxes_button = self._tool_button("Boxes", "Draw bounding boxes and labels")
        self.boxes_button.setChecked(True)
        self.masks_button = self._layer_button("Masks", "Draw instance masks (image/object/mask) in their class's "
                                               "colour", "masks")
        self.keypoints_button = self._layer_button("Keypoints", "Draw keypoints as dots (hollow: labelled but not "
                                                   "visible)", "keypoints")
        self.segmentation_button = self._layer_button("Segmentation", "Draw segmentation class maps, a colour per "
                                                      "class id (class 0, the background, is not drawn)",
                                                      "segmentation")
        group = QButtonGroup(self)
        group.addButton(self.fit_button)
        group.addButton(self.actual_button)
        self.fit_button.setChecked(True)
        self.fit_button.clicked.connect(self.zoom_to_fit)
        self.actual_button.clicked.connect(self.zoom_actual)
        self.boxes_button.toggled.connect(self._set_boxes_visible)
        self.stretch_action = QAction(STRETCH_TEXT, self)
        self.stretch_action.setCheckable(True)
        self.stretch_action.setChecked(self._stretch == STRETCH_MINMAX)
        self.stretch_action.setToolTip(STRETCH_TIP)
        self.stretch_action.toggled.connect(lambda on: stretch_preference().set_value(on))
        self.stretch_button = QToolButton(self)
        self.stretch_button.setDefaultAction(self.stretch_action)
        self.stretch_button.setAutoRaise(True)
        self.zoom_label = _ElidedLabel(self)
        self.zoom_label.setStyleSheet(f"color: {palette.CAPTION_COLOR};")
        self.summary = _ElidedLabel(self)
        self.summary.setStyleSheet(f"color: {palette.CAPTION_COLOR};")

        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        bar.setSpacing(4)
        for w in (self.fit_button, self.actual_button, self.boxes_button, self.masks_button, self.keypoints_button,
                  self.segmentation_button, self.stretch_button):
            bar.addWidget(w)
        bar.addSpacing(8)
        bar.addWidget(self.zoom_label)
        bar.addStretch(1)
        bar.addWidget(self.summary)

        self.content = QWidget()
        self.content_layout = QVBoxLayout(self.content)
        self.content_layout.setContentsMargins(MARGIN, MARGIN, MARGIN, MARGIN)
        self.content_layout.setSpacing(14)
        self.content_layout.addStretch(1)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.content)
        self.scroll.viewport().installEventFilter(self)

        self.legend = QLabel(self)  # class colour → name, for the boxes, masks and class maps drawn
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setContentsMargins(6, 0, 6, 2)
        self.legend.setToolTip("The colour of each class drawn")
        self.legend.hide()
        self.pixel_line = _ElidedLabel(self)  # the pixel inspector: the pixel under the pointer, the image's depth
        self.pixel_line.setStyleSheet(f"color: {palette.CAPTION_COLOR};")
        self.pixel_line.setContentsMargins(6, 2, 6, 3)
        self.pixel_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.legend)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.pixel_line)
        self._update_zoom_label()

    def _tool_button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(True)
        button.setAutoRaise(True)
        return button

    def _layer_button(self, text: str, tip: str, layer: str) -> QToolButton:
        button = self._tool_button(text, tip)
        button.setChecked(True)
        button.toggled.connect(lambda on: self._set_layer_visible(layer, on))
        button.hide()  # shown for a record that has the layer: the bar stays as narrow as before without
        return button

    # -- public -----------------------------------------------------------
    def overlays(self, i: int) -> OverlayLayers | None:
        """Image ``i``'s masks, keypoints and class maps (None until built, or for an image without boxes)."""
        return self._shown[i].overlays

    def legend_entries(self) -> list[tuple[str, Any]]:
        """(class name, QColor) of each class the record draws, as the legend lists them."""
        main = next((s for s in self._shown if s.overlays is not None or s.boxes), None)
        return [] if main is None else legend_entries(main.boxes, main.overlays)

    def image_count(self) -> int:
        return len(self._shown)

    def box_count(self, i: int) -> int:
        return len(self._shown[i].boxes)

    def boxes(self, i: int) -> list[BoundingBox]:
        return list(self._shown[i].boxes)

    def image_refs(self) -> list[ImageRef]:
        return [s.ref for s in self._shown]

    def image_size(self, i: int) -> QSize | None:
        """Size of decoded image ``i`` (None until decoded or when it cannot be)."""
        image = self._shown[i].image
        return None if image is None else image.size()

    def image_error(self, i: int) -> str | None:
        return self._shown[i].error

    def image(self, i: int) -> QImage | None:
        """Decoded image ``i`` as shown (None until decoded or when it cannot be)."""
        return self._shown[i].image

    def pixel_values(self, i: int) -> PixelValues | None:
        """Image ``i``'s decoded samples (bit depth, range, each pixel's values); None until decoded."""
        return self._shown[i].values

    def pixel_text(self) -> str:
        """The pixel inspector's line: the pixel under the pointer, else the first image's depth and range."""
        return self.pixel_line.text()

    def canvas(self, i: int) -> ImageCanvas:
        """The canvas image ``i`` is drawn on."""
        card = self._card_for(self._shown[i])
        assert card is not None
        return card.canvas

    def stretch(self) -> str:
        """How high-depth images are scaled now: ``"dtype"`` or ``"minmax"``."""
        return self._stretch

    def pending(self) -> int:
        """Images (and the main image's overlays) still decoding on the pool."""
        return self._pending

    def wait(self, msecs: int = -1) -> bool:
        """Block until pool decodes have finished (results still arrive by signal)."""
        return self._jobs.wait(msecs) and self._overlay_jobs.wait(msecs)

    def clear(self) -> None:
        self._generation += 1
        self._pending = 0
        self._record = self._refs = None
        self._shown = []
        self._cards = []
        self._strips = []
        while self.content_layout.count() > 1:  # keep the closing stretch
            widget = self.content_layout.takeAt(0).widget()
            if widget is not None:  # a card or a strip, with its cards
                widget.hide()
                widget.deleteLater()
        self.summary.setText("")
        self.pixel_line.setText("")
        self.legend.clear()
        self.legend.hide()

    def set_record(self, decoded: DecodedRecord | None, refs: list[ImageRef] | None = None,
                   labels: Any = None) -> int:
        """Show the images of ``decoded`` (``refs`` from ``find_images`` if known), boxes named by ``labels`` (the
        source's LabelNames). Returns how many images there are; ``images_shown`` follows when all are up."""
        self.clear()
        self._record, self._refs, self._labels = decoded, refs, labels
        if decoded is None:
            return 0
        refs = find_images(decoded) if refs is None else refs
        self._refs = refs
        generation = self._generation
        stretch = self._stretch
        main = main_image(refs)  # only the main image has boxes (see codec.decode.image_boxes.find_boxes)
        self._shown = [Shown(ref, find_boxes(decoded, ref, labels) if ref is main else []) for ref in refs]
        self._build_cards()
        if main is not None:  # its masks, keypoints and class maps: built on the pool, painted when they arrive
            self._pending += 1
            at = next(i for i, ref in enumerate(refs) if ref is main)
            boxes = self._shown[at].boxes
            self._overlay_jobs.submit((generation, at), lambda: (
                build_layers(decoded, boxes, labels) if generation == self._generation else None))
        budget = INLINE_BUDGET_BYTES
        for i, shown in enumerate(self._shown):
            size = len(shown.ref.data)
            if size > INLINE_DECODE_BYTES or size > budget:
                shown.pending = True
                self._pending += 1
                job = Decode(shown.ref, stretch)
                self._jobs.submit((generation, i), lambda job=job: (
                    _decode_with_values(job) if generation == self._generation else None))  # skip when stale
            else:
                budget -= size
                try:
                    shown.image, shown.values = _decode_with_values(Decode(shown.ref, stretch))
                except ImageDecodeError as exc:
                    shown.error = str(exc)
                except Exception as exc:  # noqa: BLE001 - a note on the card, never a traceback
                    shown.error = f"cannot decode: {one_line(exc)}"
        self._update_summary()
        self._apply_zoom()
        if not self._pending:
            self.images_shown.emit(len(self._shown))
        return len(self._shown)

    def _stretch_changed(self, on: bool) -> None:
        """Decode the record's images again with the new scaling, keeping the scroll position."""
        self._stretch = stretch_mode(on)
        self.stretch_action.blockSignals(True)
        self.stretch_action.setChecked(on)
        self.stretch_action.blockSignals(False)
        if self._record is None or not self._shown:
            return
        bars = (self.scroll.horizontalScrollBar(), self.scroll.verticalScrollBar())
        where = [bar.value() for bar in bars]
        self.set_record(self._record, self._refs, self._labels)
        for bar, value in zip(bars, where):
            bar.setValue(value)

    # -- cards ------------------------------------------------------------
    def _build_cards(self) -> None:
        singles = [(i, s) for i, s in enumerate(self._shown) if s.ref.step is None]
        steps = [(i, s) for i, s in enumerate(self._shown) if s.ref.step is not None]
        several = Counter(s.ref.key for _, s in singles)
        for _i, shown in singles:
            text = caption_text(shown.ref, len(shown.boxes), several[shown.ref.key] > 1)
            self._add_section(self._new_card(shown, text), Qt.AlignmentFlag.AlignLeft)
        for key, group in groupby(steps, key=lambda item: item[1].ref.key):
            self._add_section(self._strip(key, list(group)))

    def _add_section(self, widget: QWidget, alignment: Qt.AlignmentFlag = Qt.AlignmentFlag(0)) -> None:
        """Add below the previous sections (before the closing stretch)."""
        self.content_layout.insertWidget(self.content_layout.count() - 1, widget, 0, alignment)

    def _strip(self, key: str, members: list[tuple[int, Shown]]) -> QWidget:
        """A titled row of a feature list's image steps, scrolling sideways on its own."""
        strip = QWidget(self.content)
        strip.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(strip)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        first = members[0][1].ref
        n = len({s.ref.step for _, s in members})
        title = QLabel(f"<b>{key}</b> · {n} step{'s' if n != 1 else ''} · "
                       f"{f'raw {first.dtype}' if first.kind == 'raw' else first.format} {image_dims(first)}", strip)
        title.setStyleSheet(f"color: {palette.CAPTION_COLOR};")
        layout.addWidget(title)
        frames = QWidget()
        row = QHBoxLayout(frames)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(STRIP_SPACING)
        cards = []
        for _, shown in members:
            ref = shown.ref
            text = f"step {ref.step}" + (f" · value {ref.value_index}" if ref.value_index else "")
            card = self._new_card(shown, text, frames)
            cards.append(card)
            row.addWidget(card, 0, Qt.AlignmentFlag.AlignTop)
        row.addStretch(1)
        scroller = QScrollArea(strip)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidgetResizable(True)
        scroller.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroller.setWidget(frames)
        layout.addWidget(scroller)
        self._strips.append(_Strip(cards, scroller, frames))
        return strip

    @staticmethod
    def _tooltip(ref: ImageRef) -> str:
        return f"{caption_text(ref, 0, True)} · {len(ref.data):,} bytes"

    def _new_card(self, shown: Shown, caption: str, parent: QWidget | None = None) -> _Card:
        card = _Card(shown, caption, self._tooltip(shown.ref), parent)
        card.canvas.pointed = self._pointed
        card.canvas.left = self._pointer_left
        card.canvas.show_boxes = self.boxes_button.isChecked()
        card.canvas.layers = self._toggles
        self._cards.append(card)
        return card

    def _card_for(self, shown: Shown) -> _Card | None:
        for card in self._cards:
            if card.canvas.shown is shown:
                return card
        return None

    def _update_summary(self) -> None:
        n = len(self._shown)
        boxes = sum(len(s.boxes) for s in self._shown)
        bad = sum(1 for s in self._shown if s.error)
        text = f"{n} image{'s' if n != 1 else ''}"
        if boxes:
            text += f" · {boxes} box{'es' if boxes != 1 else ''}"
        layers = [s.overlays for s in self._shown if s.overlays]
        masks = sum(layer.mask_count for layer in layers)
        points = sum(layer.keypoint_count for layer in layers)
        if masks:
            text += f" · {masks} mask{'s' if masks != 1 else ''}"
        if points:
            text += f" · {points} keypoint{'s' if points != 1 else ''}"
        if bad:
            text += f" · {bad} cannot be decoded"
        self.summary.setText(text if n else "")
        self.boxes_button.setEnabled(boxes > 0)
        self.masks_button.setVisible(masks > 0)
        self.keypoints_button.setVisible(points > 0)
        self.segmentation_button.setVisible(any(layer.segmentation for layer in layers))
        self._update_legend()
        self._pointer_left()

    # -- the pixel inspector ----------------------------------------------
    @staticmethod
    def _depth_text(shown: Shown) -> str:
        """``PNG 64×48 · 16-bit · values 0–65,535``: the image and its samples."""
        ref, values = shown.ref, shown.values
        what = f"raw {ref.dtype}" if ref.kind == "raw" else ref.format
        text = f"{what} {image_dims(ref)}"
        if values is not None:
            text += f" · {values.depth_text()} · {values.range_text()}"
        return text

    def _pointed(self, shown: Shown, x: int, y: int) -> None:
        value = shown.values.value_text(x, y) if shown.values is not None else None
        several = len(self._shown) > 1
        where = f"{shown.ref.key}{f' step {shown.ref.step}' if shown.ref.step is not None else ''}: " \
            if several else ""
        self.pixel_line.setText(f"{where}x {x}, y {y}" + (f" · {value}" if value is not None else "")
                                + f" · {self._depth_text(shown)}")

    def _pointer_left(self) -> None:
        """Off the images: the first decoded image's depth and range, and how to read a pixel."""
        first = next((s for s in self._shown if s.image is not None), None)
        self.pixel_line.setText("" if first is None else
                                f"{self._depth_text(first)} · point at a pixel to read its values")

    def _update_legend(self) -> None:
        entries = self.legend_entries()
        self.legend.setText(legend_html(entries))
        self.legend.setVisible(bool(entries) and any(s.overlays for s in self._shown))  # boxes alone have chips

    def _theme_changed(self, _which: str) -> None:
        self._update_legend()  # the swatches take the theme's class colours

    # -- decoding results -------------------------------------------------
    def _overlays_built(self, ticket: tuple[int, int], layers: OverlayLayers | None) -> None:
        generation, i = ticket
        if layers is None or generation != self._generation or i >= len(self._shown):
            return  # stale: clear() forgot what was pending
        self._shown[i].overlays = layers
        card = self._card_for(self._shown[i])
        if card is not None:
            card.canvas.update()
        self._pending -= 1
        self._update_summary()
        if self._pending == 0:
            self.images_shown.emit(len(self._shown))

    def _decoded(self, ticket: tuple[int, int], result: tuple[QImage, PixelValues | None] | None) -> None:
        if result is None:  # a stale job, skipped
            return
        image, values = result
        generation, i = ticket
        if generation == self._generation and i < len(self._shown):
            self._shown[i].values = values
        self._finish(ticket, image, None)

    def _decode_failed(self, ticket: tuple[int, int], message: str) -> None:
        self._finish(ticket, None, message)

    def _finish(self, ticket: tuple[int, int], image: QImage | None, error: str | None) -> None:
        generation, i = ticket
        if generation != self._generation or i >= len(self._shown):
            return
        shown = self._shown[i]
        shown.image, shown.error, shown.pending = image, error, False
        card = self._card_for(shown)
        if card is not None:
            card.canvas.image_changed()
        self._pending -= 1
        self._update_summary()
        self._apply_zoom()
        if self._pending == 0:
            self.images_shown.emit(len(self._shown))

    # -- zoom -------------------------------------------------------------
    def zoom_to_fit(self) -> None:
        self._fit = True
        self.fit_button.setChecked(True)
        self._apply_zoom()

    def zoom_actual(self) -> None:
        self.set_zoom(1.0)

    def set_zoom(self, factor: float) -> None:
        """Show every image at ``factor`` times its real size."""
        self._fit = False
        self._zoom = min(MAX_ZOOM, max(MIN_ZOOM, factor))
        self.actual_button.setChecked(abs(self._zoom - 1.0) < 1e-9)
        if not self.actual_button.isChecked():
            group = self.fit_button.group()
            group.setExclusive(False)
            self.fit_button.setChecked(False)
            group.setExclusive(True)
        self._apply_zoom()

    def zoom_factor(self, i: int = 0) -> float:
        """The scale image ``i`` is shown at now."""
        return self._cards[i].canvas.scale if i < len(self._cards) else self._zoom

    def _available(self) -> QSize:
        """Room for one image in fit mode; independent of scroll bars coming and going."""
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        return QSize(max(40, self.scroll.width() - bar - 2 * MARGIN), max(40, self.scroll.height() - 2 * MARGIN))

    def _fit_scale(self, card: _Card) -> float:
        size = card.canvas.natural_size()
        room = self._available()
        avail_h = max(40, room.height() - card.caption.sizeHint().height() - 8)
        return min(room.width() / size.width(), avail_h / size.height(), MAX_UPSCALE)

    def _strip_scale(self, cards: list[_Card]) -> float:
        """Fit the strip's width, with frames between the strip's minimum and maximum height."""
        tallest = max(c.canvas.natural_size().height() for c in cards)
        total_w = sum(c.canvas.natural_size().width() for c in cards)
        room = self._available().width() - STRIP_SPACING * (len(cards) - 1)
        scale = max(room / total_w, STRIP_MIN_HEIGHT / tallest)
        return min(scale, STRIP_FRAME_HEIGHT / tallest, MAX_UPSCALE)

    def _apply_zoom(self) -> None:
        strip_cards = {id(c) for strip in self._strips for c in strip.cards}
        for card in self._cards:
            if id(card) not in strip_cards:
                card.canvas.set_scale(self._fit_scale(card) if self._fit else self._zoom)
        for strip in self._strips:
            scale = self._strip_scale(strip.cards) if self._fit else self._zoom
            for card in strip.cards:
                card.canvas.set_scale(scale)
            # layouts catch up later; the row's height is known now
            tallest = max(c.canvas.height() + CARD_SPACING + c.caption.sizeHint().height() for c in strip.cards)
            strip.scroller.setFixedHeight(tallest + strip.scroller.horizontalScrollBar().sizeHint().height())
        self._update_zoom_label()

    def _update_zoom_label(self) -> None:
        if self._fit:
            scale = self._cards[0].canvas.scale if self._cards else None
            self.zoom_label.setText(f"fit · {scale * 100:.0f}%" if scale else "fit")
        else:
            self.zoom_label.setText(f"{self._zoom * 100:.0f}%")

    def _set_boxes_visible(self, visible: bool) -> None:
        for card in self._cards:
            card.canvas.show_boxes = visible
            card.canvas.update()

    def _set_layer_visible(self, layer: str, visible: bool) -> None:
        setattr(self._toggles, layer, visible)
        for card in self._cards:
            card.canvas.update()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._fit and self._cards:
            self._apply_zoom()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.scroll.viewport():
            if event.type() == QEvent.Type.Wheel and isinstance(event, QWheelEvent) \
                    and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
                steps = event.angleDelta().y() / 120
                if steps:
                    start = self.zoom_factor(0) if self._fit else self._zoom
                    self.set_zoom(start * 1.25 ** steps)
                event.accept()
                return True
        return super().eventFilter(watched, event)
