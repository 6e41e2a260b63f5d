"""The gallery: a grid of the shown records' images with captions and boxes.

:class:`Gallery` shows a :class:`~app.models.gallery_model.GalleryModel`
with a bar to pick the image and caption features and the tile size. The
view lays out uniform cells (``QListView`` in icon mode, static movement),
so 100,000 records scroll as smoothly as 100.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListView,
    QMenu,
    QMessageBox,
    QSlider,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.models.filtered_table_model import FilteredTableModel
from app.models.gallery_model import DEFAULT_SIDE, TILE_ROLE, GalleryModel, Tile
from app.models.stretch_preference import stretch_mode, stretch_preference
from app.style import icons, palette
from app.views.box_painting import paint_boxes
from app.views.image_preview import STRETCH_TIP
from app.views.overlay_painting import LayerToggles, paint_overlays
from app.workers.background import PoolJobs
from app.workers.thumbnail_loader import SAMPLE_RECORDS, ThumbnailLoader, sample_keys
from app.workers.worker import PAINT_GATE
from codec.decode.images import RawShape, parse_raw_shape
from codec.format.framing import RecordStatus

MIN_SIDE, MAX_SIDE = 48, 320
PAD = 6
LABELS_FROM_SIDE = 120  # box labels drawn on thumbnails at least this big
MAX_UPSCALE = 4.0  # small images are enlarged at most this much to fill a tile
SETTINGS_SIDE = "gallery/side"
RAW_CHOICE = "\x00raw"  # the Image combo's "Raw pixels…" item (no feature key starts with NUL)
RAW_TEXT = "Raw pixels…"


def ask_raw_shape(parent: QWidget, current: RawShape | None) -> RawShape | None:
    """Ask for the shape to read bytes as pixels in; None when cancelled (errors are said and asked again)."""
    text = f"{current.height}x{current.width}x{current.channels} {current.dtype}" if current else "32x32x3"
    while True:
        text, ok = QInputDialog.getText(
            parent, "Show Bytes as Raw Pixels",
            "Height × width × channels, and uint8 (default), uint16 or float32:\n"
            "bytes values of exactly that size are shown as images.", text=text)
        if not ok:
            return None
        try:
            return parse_raw_shape(text)
        except ValueError as exc:
            QMessageBox.warning(parent, "Show Bytes as Raw Pixels", str(exc))


class GalleryDelegate(QStyledItemDelegate):
    """Paints a tile: the thumbnail (with its masks, keypoints, class maps and boxes), a caption line, and marks
    for damage."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.side = DEFAULT_SIDE  # logical pixels: the longest side of a thumbnail
        self.aspect = 1.0  # height/width of the image area (at most 1): landscape images get lower tiles
        self.show_boxes = True
        self.layers = LayerToggles()  # which of masks, keypoints and class maps are drawn
        self._font = QFont()
        self._small = QFont()
        self._chip_font = QFont()
        self.set_font(QFont())

    def set_font(self, font: QFont) -> None:
        self._font = QFont(font)
        self._small = QFont(font)
        self._small.setPointSizeF(max(6.5, font.pointSizeF() * 0.85))
        self._chip_font = QFont(self._small)
        self._chip_font.setBold(True)

    def box_height(self) -> int:
        return max(1, round(self.side * self.aspect))

    def cell_size(self) -> QSize:
        line = QFontMetrics(self._font).height()
        return QSize(self.side + 2 * PAD, self.box_height() + 2 * PAD + line + 4)

    def tile_rect(self, option_rect: QRect) -> QRect:
        """The tile inside its grid cell (cells are wider than tiles when spread to fill a row)."""
        size = self.cell_size()
        return QRect(option_rect.left() + (option_rect.width() - size.width()) // 2, option_rect.top(),
                     size.width(), size.height())

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        return self.cell_size()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        tile: Tile | None = index.data(TILE_ROLE)
        if tile is None:
            return
        painter.save()
        tile_rect = self.tile_rect(option.rect)
        cell = QRectF(tile_rect).adjusted(1, 1, -1, -1)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        qpal = option.palette
        if selected:
            highlight = QColor(qpal.highlight().color())
            highlight.setAlpha(70)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(qpal.highlight().color(), 2))
            painter.setBrush(highlight)
            painter.drawRoundedRect(cell, 6, 6)
        elif hovered:
            hover = QColor(qpal.highlight().color())
            hover.setAlpha(25)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(hover)
            painter.drawRoundedRect(cell, 6, 6)
        box = QRectF(tile_rect.left() + PAD, tile_rect.top() + PAD, self.side, self.box_height())
        self._paint_image(painter, box, tile)
        self._paint_caption(painter, option, tile_rect, tile)
        if tile.status.damaged:
            self._paint_damage(painter, box, tile.status)
        painter.restore()

    def _paint_image(self, painter: QPainter, box: QRectF, tile: Tile) -> None:
        if tile.image is None or tile.state != "ok":
            self._paint_placeholder(painter, box, tile)
            return
        image = tile.image
        scale = min(box.width() / image.width(), box.height() / image.height(), MAX_UPSCALE)
        w, h = image.width() * scale, image.height() * scale
        # centred across, resting on the caption: landscape images do not float away from their words
        target = QRectF(box.left() + (box.width() - w) / 2, box.bottom() - h, w, h)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawImage(target, image)
        if tile.framed:  # a 1-bit or one-colour image would vanish into the background
            painter.setPen(QPen(self.frame_color(), 1))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(target.adjusted(-0.5, -0.5, 0.5, 0.5))
        thin = self.side < LABELS_FROM_SIDE
        if tile.overlays is not None:
            paint_overlays(painter, tile.overlays, tile.boxes, target, scale, scale, self.layers,
                           dot=2.0 if thin else 3.0)
        if self.show_boxes and tile.boxes:
            paint_boxes(painter, tile.boxes, target, scale, scale, None if thin else self._chip_font,
                        rim=3 if thin else 4, line=1.5 if thin else 2)
        if tile.badge:
            self._paint_badge(painter, target, tile.badge)

    def _paint_badge(self, painter: QPainter, target: QRectF, text: str) -> None:
        """An audio tile's duration and rate in its lower right corner, on the label background."""
        painter.setFont(self._small)
        metrics = QFontMetrics(self._small)
        text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(1, int(target.width()) - 6))
        w, h = metrics.horizontalAdvance(text) + 6, metrics.height() + 2
        chip = QRectF(target.right() - w - 2, target.bottom() - h - 2, w, h)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(palette.TILE_LABEL_BG)
        painter.drawRoundedRect(chip, 3, 3)
        painter.setPen(palette.CAPTION_TEXT)
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)

    def frame_color(self) -> QColor:
        """The frame around a plain thumbnail: the palette's mid tone, seen on light and dark backgrounds."""
        parent = self.parent()
        return (parent.palette() if isinstance(parent, QWidget) else QApplication.palette()).mid().color()

    @staticmethod
    def placeholder_text(tile: Tile) -> str:
        """What a tile without a thumbnail says ("" while it is being made)."""
        if tile.state == "error":
            return "audio does not decode" if tile.medium == "audio" else "cannot decode"
        if tile.state == "unreadable":
            return "cannot read"
        if tile.state == "none":
            return "damaged record" if tile.status.damaged else "no image"
        return ""

    def _paint_placeholder(self, painter: QPainter, box: QRectF, tile: Tile) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        inner = box.adjusted(4, 4, -4, -4)
        if tile.state in ("error", "unreadable") or (tile.state == "none" and tile.status.damaged):
            painter.setPen(QPen(palette.ERROR_TEXT, 1.2, Qt.PenStyle.DashLine))
            painter.setBrush(palette.ERROR_BG)
            painter.drawRoundedRect(inner, 4, 4)
            painter.setPen(palette.ERROR_TEXT)
        elif tile.state == "none":
            painter.setPen(QPen(palette.TILE_FRAME, 1.2, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(inner, 4, 4)
            painter.setPen(palette.MUTED_TEXT)
        else:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(palette.CANVAS_BG)
            painter.drawRoundedRect(inner, 4, 4)
            return
        painter.setFont(self._small)
        painter.drawText(inner.adjusted(4, 4, -4, -4), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                         self.placeholder_text(tile))

    def _paint_caption(self, painter: QPainter, option: QStyleOptionViewItem, tile_rect: QRect, tile: Tile) -> None:
        rect = QRect(tile_rect.left() + PAD, tile_rect.top() + PAD + self.box_height() + 2, self.side,
                     QFontMetrics(self._font).height() + 2)
        number = f"{tile.record:,}"
        painter.setFont(self._small)
        small = QFontMetrics(self._small)
        nw = small.horizontalAdvance(number) + 6
        painter.setPen(palette.DAMAGED_TEXT if tile.status.damaged else palette.MUTED_TEXT)
        painter.drawText(rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, number)
        if not tile.caption:
            return
        painter.setFont(self._font)
        text_rect = rect.adjusted(nw, 0, 0, 0)
        text = QFontMetrics(self._font).elidedText(tile.caption, Qt.TextElideMode.ElideRight, text_rect.width())
        painter.setPen(option.palette.text().color())
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def _paint_damage(self, painter: QPainter, box: QRectF, status: RecordStatus) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(palette.DAMAGED_TEXT, 2.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(box.adjusted(1, 1, -1, -1), 4, 4)
        size = max(14, min(22, int(self.side / 6)))
        badge = QRect(int(box.right()) - size - 3, int(box.top()) + 3, size, size)
        path = QPainterPath()
        path.addEllipse(QRectF(badge).adjusted(-2, -2, 2, 2))
        painter.fillPath(path, palette.TILE_LABEL_BG)
        icons.icon("warning" if status is RecordStatus.LENGTH_CRC else "damaged").paint(painter, badge)


class GalleryView(QListView):
    """Icon-mode list with uniform cells laid out in rows (no per-item geometry is kept)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setMovement(QListView.Movement.Static)  # list-mode layout: fast, no free positions
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(True)
        self.setLayoutMode(QListView.LayoutMode.Batched)
        self.setBatchSize(2000)
        self.setSpacing(0)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.setDragEnabled(False)
        self.setWordWrap(False)


    def paintEvent(self, event) -> None:
        with PAINT_GATE.painting():  # each tile is painted in Python: keep workers off the GIL meanwhile
            super().paintEvent(event)
    def setModel(self, model) -> None:  # type: ignore[override]
        super().setModel(model)
        if isinstance(model, GalleryModel):
            model.visible_rows = self.visible_rows

    def visible_rows(self) -> tuple[int, int] | None:
        """First and last rows on screen (None when none are)."""
        model = self.model()
        if model is None or not model.rowCount():
            return None
        grid = self.gridSize()
        if not grid.isValid() or grid.isEmpty():
            return None
        height = self.viewport().height()
        x = grid.width() // 2
        first = self.indexAt(QPoint(x, 1))
        if not first.isValid():
            first = self.indexAt(QPoint(x, min(height - 1, grid.height() // 2)))
        last = QModelIndex()
        columns = max(1, self.viewport().width() // grid.width())
        for y in (height - 2, height - 2 - grid.height() // 2):
            for col in range(columns - 1, -1, -1):
                last = self.indexAt(QPoint(col * grid.width() + x, y))
                if last.isValid():
                    break
            if last.isValid():
                break
        lo = first.row() if first.isValid() else 0
        hi = last.row() if last.isValid() else model.rowCount() - 1
        return (lo, hi) if lo <= hi else None

    def set_cell_size(self, size: QSize) -> None:
        """Tiles of ``size``; grid cells share out a row's spare width so rows fill the view."""
        self._cell = QSize(size)
        self._spread()
        self.verticalScrollBar().setSingleStep(max(16, size.height() // 4))

    def _spread(self) -> None:
        cell = getattr(self, "_cell", None)
        if cell is None or cell.width() <= 0:
            return
        # the width with a scroll bar, whether one shows or not: no relayout loop when it comes and goes
        # (less a few pixels: the icon-mode flow wraps a cell that ends exactly at the viewport's edge)
        width = self.width() - 2 * self.frameWidth() - self.verticalScrollBar().sizeHint().width() - 4
        columns = max(1, width // cell.width())
        grid = QSize(max(cell.width(), width // columns), cell.height())
        if grid != self.gridSize():
            self.setGridSize(grid)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._spread()


class Gallery(QWidget):
    """The gallery tab: a toolbar (image, caption, boxes, size) over the grid.

    ``record_activated(record)`` when the user makes a tile current;
    :meth:`set_current_record` follows the table.
    """

    record_activated = Signal(int)
    open_requested = Signal(int)

    def __init__(self, rows: FilteredTableModel, read: Callable, settings=None, parent: QWidget | None = None,
                 *, threads: int | None = None, status: Callable[[int], RecordStatus] | None = None,
                 source: Callable[[], Any] | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._read = read
        self._source: Callable[[], Any] = source or (lambda: None)  # the records' payload and labels, as now
        self._settings = settings
        self._sampled = False
        self._following = False
        self._scroll_target: tuple | None = None
        self._pending_record = -1  # the record to show as current (kept while the gallery is hidden)
        loader = ThumbnailLoader(read, threads, source=self._source)  # source(): how records decode now
        self.model = GalleryModel(rows, loader, self, status=status, source=self._source)
        self.model.aspect_changed.connect(self._aspect_changed)
        self.delegate = GalleryDelegate(self)
        self.view = GalleryView(self)
        self.view.setModel(self.model)
        self.view.setItemDelegate(self.delegate)
        self.delegate.set_font(self.view.font())
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.view.verticalScrollBar().rangeChanged.connect(self._retry_scroll)
        self.view.verticalScrollBar().actionTriggered.connect(self._user_scrolled)  # the user's own scrolling wins
        self.view.doubleClicked.connect(lambda index: self.open_requested.emit(self.model.record_at(index.row())))
        self._sampler = PoolJobs(self, max_threads=1)
        self._sampler.finished.connect(self._sampled_keys)

        self.image_combo = QComboBox(self)
        self.image_combo.setToolTip("Which image or audio feature to show (Auto: the picture the boxes are on: "
                                    "image/encoded, a feature named image or in colour, never a depth map or "
                                    "mask; the first step of a SequenceExample; without an image, the first "
                                    "audio clip as a waveform)")
        self.image_combo.addItem("Auto", None)
        self.image_combo.addItem(RAW_TEXT, RAW_CHOICE)
        self.image_combo.setItemData(1, "Show bytes of a given shape as raw pixels (height × width × channels)",
                                     Qt.ItemDataRole.ToolTipRole)
        self._image_index = 0  # the combo's choice before "Raw pixels…" (restored when that is cancelled)
        # Shrinkable combos and slider: the hidden gallery must not hold the table side wide on a small screen.
        self.image_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.image_combo.setMinimumContentsLength(6)
        self.caption_combo = QComboBox(self)
        self.caption_combo.setToolTip("Which feature captions each thumbnail (Auto: the class text, label or "
                                      "file name of each record)")
        self.caption_combo.addItem("Auto", None)
        self.caption_combo.addItem("None", "")
        self.caption_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.caption_combo.setMinimumContentsLength(6)
        self.boxes_check = QCheckBox("Boxes", self)
        self.boxes_check.setChecked(True)
        self.boxes_check.setToolTip("Draw Object Detection API boxes (image/object/bbox/*) on the thumbnails")
        self.layers_button = QToolButton(self)  # masks, keypoints, class maps: one menu keeps the bar narrow
        self.layers_button.setText("Layers")
        self.layers_button.setToolTip("Which of masks, keypoints and segmentation class maps the thumbnails draw")
        self.layers_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.layers_button.setAutoRaise(True)
        layers_menu = QMenu(self.layers_button)
        self.masks_action = self._layer_action(layers_menu, "Masks", "masks")
        self.keypoints_action = self._layer_action(layers_menu, "Keypoints", "keypoints")
        self.segmentation_action = self._layer_action(layers_menu, "Segmentation", "segmentation")
        self.layers_button.setMenu(layers_menu)
        self.layers_button.hide()  # until a tile has a layer: the bar stays as narrow as before without
        self.model.tile_ready.connect(self._tile_arrived)
        palette.changes.changed.connect(self._theme_changed)
        preference = stretch_preference()
        self.stretch_check = QCheckBox("Stretch", self)
        self.stretch_check.setChecked(preference.value())
        self.stretch_check.setToolTip(STRETCH_TIP)
        self.stretch_check.toggled.connect(preference.set_value)
        preference.changed.connect(self._stretch_changed)
        self.model.set_stretch(stretch_mode(preference.value()))
        self.size_slider = QSlider(Qt.Orientation.Horizontal, self)
        self.size_slider.setRange(MIN_SIDE, MAX_SIDE)
        self.size_slider.setSingleStep(8)
        self.size_slider.setPageStep(32)
        self.size_slider.setMinimumWidth(50)
        self.size_slider.setMaximumWidth(120)
        self.size_slider.setToolTip("Thumbnail size")

        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        bar.setSpacing(6)
        bar.addWidget(QLabel("Show:", self))
        bar.addWidget(self.image_combo)
        bar.addSpacing(6)
        bar.addWidget(QLabel("Caption:", self))
        bar.addWidget(self.caption_combo)
        bar.addSpacing(6)
        bar.addWidget(self.boxes_check)
        bar.addWidget(self.layers_button)
        bar.addWidget(self.stretch_check)
        bar.addStretch(1)
        bar.addWidget(QLabel("Size:", self))
        bar.addWidget(self.size_slider)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)

        self.image_combo.currentIndexChanged.connect(self._image_chosen)
        self.caption_combo.currentIndexChanged.connect(self._caption_chosen)
        self.boxes_check.toggled.connect(self._boxes_toggled)
        side = DEFAULT_SIDE
        if settings is not None:
            side = int(settings.qsettings.value(SETTINGS_SIDE, DEFAULT_SIDE, type=int) or DEFAULT_SIDE)
        self.size_slider.setValue(max(MIN_SIDE, min(MAX_SIDE, side)))
        self.size_slider.valueChanged.connect(self.set_side)
        self.set_side(self.size_slider.value(), save=False)
        rows.counts_changed.connect(self._rows_changed)

    # -- public -----------------------------------------------------------
    def set_side(self, side: int, save: bool = True) -> None:
        """Thumbnails of ``side`` x ``side`` logical pixels."""
        self.delegate.side = side
        ratio = self.devicePixelRatioF() if self.isVisible() else 1.0
        self.model.set_side(max(1, math.ceil(side * ratio)))
        self.view.set_cell_size(self.delegate.cell_size())
        if self.size_slider.value() != side:
            self.size_slider.setValue(side)
        if save and self._settings is not None:
            self._settings.qsettings.setValue(SETTINGS_SIDE, side)
        current = self.view.currentIndex()
        if current.isValid():
            self.scroll_to_row(current.row())

    def set_current_record(self, record: int) -> None:
        """Make ``record``'s tile current (when shown), without announcing it back."""
        self._pending_record = record
        if not self.model.active:
            return  # a hidden gallery catches up when shown
        row = self._rows.row_for_record(record)
        current = self.view.currentIndex()
        if (current.row() if current.isValid() else -1) == row:
            return
        self._following = True
        try:
            if row < 0:
                self.view.selectionModel().clear()
            else:
                index = self.model.index(row, 0)
                self.view.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
                self.scroll_to_row(row)
        finally:
            self._following = False

    def scroll_to_row(self, row: int,
                      hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible) -> None:
        """Bring tile ``row`` into view, now or as soon as the grid has laid it out.

        The grid lays tiles out in batches between events (100,000 tiles take
        a fraction of a second in the background); a tile not laid out yet is
        scrolled to when its batch is done.
        """
        index = self.model.index(row, 0)
        self._scroll_target = None
        if not index.isValid():
            return
        self.view.scrollTo(index, hint)
        if not self.view.visualRect(index).intersects(self.view.viewport().rect()):
            self._scroll_target = (row, hint)

    def _user_scrolled(self, *_) -> None:
        self._scroll_target = None

    def _retry_scroll(self, *_) -> None:
        if self._scroll_target is not None:
            self.scroll_to_row(*self._scroll_target)

    def current_record(self) -> int:
        index = self.view.currentIndex()
        return self.model.record_at(index.row()) if index.isValid() else -1

    def stop(self) -> None:
        """Stop making thumbnails and wait for those in the making (before the file closes)."""
        self.model.close()
        self._sampler.wait()

    # -- internals --------------------------------------------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.model.set_active(True)
        ratio = self.devicePixelRatioF()
        self.model.set_side(max(1, math.ceil(self.delegate.side * ratio)))
        self._sample()
        if self._pending_record >= 0:
            self.set_current_record(self._pending_record)
        current = self.view.currentIndex()
        if current.isValid():
            self.scroll_to_row(current.row(), QAbstractItemView.ScrollHint.PositionAtCenter)

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        self.model.set_active(False)

    def _aspect_changed(self, aspect: float) -> None:
        self.delegate.aspect = max(0.5, aspect)
        self.view.set_cell_size(self.delegate.cell_size())

    def _sample(self) -> None:
        """Offer the image and caption features of the first records (once, off the GUI thread)."""
        if self._sampled or self._rows.total() == 0:
            return
        self._sampled = True
        read, n, source = self._read, min(SAMPLE_RECORDS, self._rows.total()), self._source()
        self._sampler.submit("keys", lambda: sample_keys(read, range(n), source))

    def payload_changed(self) -> None:
        """The records decode differently now (Decode As, a label map): the features offered are sampled again.

        The tiles are made again too (the session's ``reopened`` drops them).
        """
        self._sampled = False
        if self.isVisible():
            self._sample()

    def _sampled_keys(self, _ticket, keys: tuple[list[str], list[str]]) -> None:
        image_keys, caption_keys = keys
        combo = self.image_combo
        combo.blockSignals(True)  # keys go before "Raw pixels…": the current item moves, the choice does not
        for key in image_keys:
            if combo.findData(key) < 0:
                combo.insertItem(combo.findData(RAW_CHOICE), key, key)
        combo.blockSignals(False)
        self._image_index = combo.currentIndex()
        for key in caption_keys:
            if self.caption_combo.findData(key) < 0:
                self.caption_combo.addItem(key, key)

    def _image_chosen(self, index: int) -> None:
        key = self.image_combo.currentData()
        raw = self.image_combo.findData(RAW_CHOICE)
        if key == RAW_CHOICE:
            shape = ask_raw_shape(self, self.model.raw_shape)
            if shape is None:
                self.image_combo.setCurrentIndex(self._image_index)
                return
            self.set_raw_shape(shape)
            return
        self._image_index = index
        self.image_combo.setItemText(raw, RAW_TEXT)
        self.model.set_raw_shape(None)
        self.model.set_image_key(key)
        self.delegate.aspect = 1.0
        self.view.set_cell_size(self.delegate.cell_size())

    def set_raw_shape(self, shape: RawShape) -> None:
        """Show bytes of exactly ``shape``'s size as raw pixels (the "Raw pixels…" choice)."""
        raw = self.image_combo.findData(RAW_CHOICE)
        self.image_combo.setItemText(raw, f"Raw {shape.height}×{shape.width}×{shape.channels}"
                                          + ("" if shape.dtype == "uint8" else f" {shape.dtype}"))
        self._image_index = raw
        if self.image_combo.currentIndex() != raw:
            self.image_combo.blockSignals(True)
            self.image_combo.setCurrentIndex(raw)
            self.image_combo.blockSignals(False)
        self.model.set_image_key(None)
        self.model.set_raw_shape(shape)
        self.delegate.aspect = 1.0
        self.view.set_cell_size(self.delegate.cell_size())

    def _caption_chosen(self, _index: int) -> None:
        key = self.caption_combo.currentData()
        self.model.set_caption_key(key)

    def _stretch_changed(self, on: bool) -> None:
        self.stretch_check.blockSignals(True)
        self.stretch_check.setChecked(on)
        self.stretch_check.blockSignals(False)
        self.model.set_stretch(stretch_mode(on))

    def _layer_action(self, menu: QMenu, text: str, layer: str) -> QAction:
        action = menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(True)
        action.toggled.connect(lambda on: self._layer_toggled(layer, on))
        return action

    def _tile_arrived(self, record: int) -> None:
        if self.layers_button.isHidden():
            tile = self.model.cached_tile(record)
            if tile is not None and tile.overlays is not None:
                self.layers_button.show()

    def _theme_changed(self, _theme: str) -> None:
        self.model.drop_audio_tiles()  # waveforms were drawn in the old theme's colours

    def _layer_toggled(self, layer: str, on: bool) -> None:
        setattr(self.delegate.layers, layer, on)
        self.view.viewport().update()

    def _boxes_toggled(self, on: bool) -> None:
        self.delegate.show_boxes = on
        self.view.viewport().update()

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._following and current.isValid():
            self.record_activated.emit(self.model.record_at(current.row()))

    def _rows_changed(self) -> None:
        if not self._sampled and self.isVisible():
            self._sample()
