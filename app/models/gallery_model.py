"""The gallery's items: one per shown record, with its thumbnail, caption and status.

:class:`GalleryModel` has one item per row of the
:class:`~app.models.filtered_table_model.FilteredTableModel` (every record, or a
filter's matches), so the table and the gallery always show the same
records in the same order. Thumbnails are made lazily: painting asks for
the tiles on screen, the model asks the
:class:`~app.workers.thumbnail_loader.ThumbnailLoader` for those first and for a
screenful either side next, and keeps what arrives in a bounded LRU cache.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QImage

from app.models.filtered_table_model import FilteredTableModel
from app.models.labels import status_words
from app.models.overlay_layers import OverlayLayers
from app.models.record_table_model import RECORD_ROLE, STATUS_ROLE
from app.models.stretch_preference import stretch_mode
from app.models.tiles import ThumbRequest, ThumbResult, TileLoading
from codec.decode.image_boxes import BoundingBox
from codec.decode.images import RawShape
from codec.format.framing import RecordStatus
from codec.format.problem_text import TFRECORD
from codec.sources.protocol import RecordSource

TILE_ROLE = Qt.ItemDataRole.UserRole + 40  # a Tile: what the delegate paints
DEFAULT_SIDE = 128  # the longest side of a thumbnail, in pixels, until the view sets its own
MAX_CACHE_BYTES = 96 << 20
MAX_CACHE_ITEMS = 20_000
MAX_QUEUE = 600  # tiles asked of the loader at once (visible first)
APPEND_DELAY_MS = 250  # rows appended while indexing reach the grid at most this often
ASPECT_SAMPLES = (1, 4, 16, 64)  # thumbnails after which the tile shape is reconsidered


@dataclass
class Tile:
    """One gallery item as the delegate paints it."""

    record: int
    state: str  # "pending", "ok", "none", "error", "unreadable"
    image: QImage | None
    boxes: list[BoundingBox]
    caption: str
    note: str
    status: RecordStatus
    framed: bool = False  # a 1-bit or one-colour image: drawn with a frame to show against the background
    overlays: OverlayLayers | None = None  # masks, keypoints and class maps, at the thumbnail's scale
    medium: str = "image"  # "audio": ``image`` is a clip's waveform
    badge: str = ""  # an audio clip's duration and rate, drawn on the tile


class GalleryModel(QAbstractListModel):
    """Items = rows of ``rows``; thumbnails, captions and record statuses by role.

    ``tile_ready(record)`` when a record's thumbnail arrives; ``finished()`` when
    no thumbnail is being made.
    """

    tile_ready = Signal(int)
    finished = Signal()
    aspect_changed = Signal(float)

    def __init__(self, rows: FilteredTableModel, loader: TileLoading, parent=None, *,
                 status: Callable[[int], RecordStatus] | None = None,
                 source: Callable[[], RecordSource | None] = lambda: None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._source = source  # the records as now (their container words a status)
        self._status = status  # a record's live status (a verify pass may find damage after its tile was made)
        self._side = DEFAULT_SIDE  # device pixels
        self._image_key: str | None = None
        self._caption_key: str | None = None
        self._stretch = stretch_mode(False)
        self._raw_shape: RawShape | None = None
        self._images: OrderedDict[int, ThumbResult] = OrderedDict()
        self._image_bytes = 0
        self._captions: OrderedDict[int, str] = OrderedDict()
        self._asked: set[int] = set()
        self._epoch = 0  # grows when records are renumbered: tiles asked for before are dropped
        self.visible_rows: Callable[[], tuple[int, int] | None] = lambda: None  # the view's, set by it
        self.aspect = 0.0  # the typical height/width of the thumbnails made (capped at 1)
        self._aspects: list[float] = []
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(0)
        self._flush_timer.timeout.connect(self._flush)
        self.loader = loader  # makes the tiles (app.workers.thumbnail_loader.ThumbnailLoader); closed with the model
        loader.setParent(self)
        self.loader.ready.connect(self._ready)
        self.loader.finished.connect(self.finished)
        # The view knows ``_count`` rows. A hidden gallery follows nothing (it catches up when shown), and
        # rows appended while indexing arrive in batches: each insert makes QListView lay out every tile again.
        self._count = 0
        self._active = False
        self._dirty = True
        self._inserting = False
        self._append_timer = QTimer(self)
        self._append_timer.setSingleShot(True)
        self._append_timer.setInterval(APPEND_DELAY_MS)
        self._append_timer.timeout.connect(self._flush_appends)
        rows.rowsAboutToBeInserted.connect(self._about_to_insert)
        rows.rowsInserted.connect(self._inserted)
        rows.rowsAboutToBeRemoved.connect(self._about_to_remove)
        rows.rowsRemoved.connect(self._removed)
        rows.modelAboutToBeReset.connect(self._about_to_reset)
        rows.modelReset.connect(self._reset)
        rows.dataChanged.connect(self._rows_changed)

    # -- settings ---------------------------------------------------------
    @property
    def side(self) -> int:
        return self._side

    def set_side(self, side: int) -> None:
        """Thumbnails of at most ``side`` device pixels; smaller cached ones are shown scaled until replaced."""
        if side != self._side:
            self._side = side
            self._changed_all()

    def _drop_thumbnails(self, *, shapes: bool) -> None:
        """Forget every thumbnail (and, with ``shapes``, the tile shape learnt from them); repaint all."""
        if shapes:
            self.aspect = 0.0
            self._aspects = []
        self._images.clear()
        self._image_bytes = 0
        self._changed_all()

    @property
    def image_key(self) -> str | None:
        return self._image_key

    def set_image_key(self, key: str | None) -> None:
        """Show feature ``key``'s image (None: each record's main image)."""
        if key != self._image_key:
            self._image_key = key
            self._drop_thumbnails(shapes=True)

    @property
    def stretch(self) -> str:
        return self._stretch

    def set_stretch(self, stretch: str) -> None:
        """Make thumbnails of 16-bit and float images with this scaling (see codec.decode.image_display.display_image)."""
        if stretch != self._stretch:
            self._stretch = stretch
            self._drop_thumbnails(shapes=False)

    @property
    def raw_shape(self) -> RawShape | None:
        return self._raw_shape

    def set_raw_shape(self, shape: RawShape | None) -> None:
        """Show bytes values of exactly this shape's size as raw pixels (None: only what the records declare)."""
        if shape != self._raw_shape:
            self._raw_shape = shape
            self._drop_thumbnails(shapes=True)

    @property
    def caption_key(self) -> str | None:
        return self._caption_key

    def set_caption_key(self, key: str | None) -> None:
        """Caption tiles with feature ``key`` (None: the best caption feature of each record)."""
        if key != self._caption_key:
            self._caption_key = key
            self._captions.clear()
            self._changed_all()

    def record_at(self, row: int) -> int:
        return self._rows.record_at(row)

    def row_for_record(self, record: int) -> int:
        return self._rows.row_for_record(record)

    def tile_count(self) -> int:
        """Records whose thumbnail (or its absence) is known and cached."""
        return len(self._images)

    def cached_tile(self, record: int) -> ThumbResult | None:
        return self._images.get(record)

    def pending(self) -> int:
        return self.loader.pending() + len(self._asked)

    def drop_audio_tiles(self) -> None:
        """Forget the waveform tiles (drawn in the theme's colours when made: the theme changed)."""
        for record in [r for r, result in self._images.items() if result.medium == "audio"]:
            self._image_bytes -= self._images.pop(record).nbytes
        self._changed_all()

    def forget(self) -> None:
        """Drop every cached tile (the records were replaced or renumbered)."""
        self._epoch += 1
        self._images.clear()
        self._image_bytes = 0
        self._captions.clear()
        self._changed_all()

    def close(self) -> None:
        self._flush_timer.stop()
        self.loader.close()

    # -- Qt model ---------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._count

    # -- following the rows -----------------------------------------------
    @property
    def active(self) -> bool:
        return self._active

    def set_active(self, active: bool) -> None:
        """Follow the rows (the gallery is shown), or stop following them (hidden)."""
        self._active = active
        if active and (self._dirty or self._count != self._rows.rowCount()):
            self.beginResetModel()
            self._count = self._rows.rowCount()
            self._dirty = False
            self.endResetModel()

    def _about_to_insert(self, _parent: QModelIndex, first: int, last: int) -> None:
        if not self._active:
            self._dirty = True
        elif first >= self._count:  # appended (indexing): shown in a batch a moment later
            if not self._append_timer.isActive():
                self._append_timer.start()
        else:
            self._flush_appends()
            self.beginInsertRows(QModelIndex(), first, last)
            self._inserting = True

    def _inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self._inserting:
            self._inserting = False
            self._count += last - first + 1
            self.endInsertRows()
        if first < self._rows.rowCount() - (last - first + 1):
            # Records came in before others (a shard set's shard indexed out of order): the
            # records after them have new numbers, and tiles are cached by record number.
            self.forget()

    def _flush_appends(self) -> None:
        self._append_timer.stop()
        n = self._rows.rowCount()
        if self._active and n > self._count:
            self.beginInsertRows(QModelIndex(), self._count, n - 1)
            self._count = n
            self.endInsertRows()

    def _about_to_remove(self, _parent: QModelIndex, first: int, last: int) -> None:
        if not self._active or last >= self._count:
            self._dirty = True
            return
        self.beginRemoveRows(QModelIndex(), first, last)
        self._count -= last - first + 1
        self._inserting = False

    def _removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self._dirty:
            if self._active:
                self.set_active(True)
            return
        self.endRemoveRows()

    def _about_to_reset(self) -> None:
        if self._active:
            self.beginResetModel()

    def _reset(self) -> None:
        if self._active:
            self._append_timer.stop()
            self._count = self._rows.rowCount()
            self._dirty = False
            self.endResetModel()
        else:
            self._dirty = True

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        record = self._rows.record_at(index.row())
        if record < 0:
            return None
        if role == TILE_ROLE:
            return self._tile(record)
        if role == RECORD_ROLE:
            return record
        if role == Qt.ItemDataRole.DisplayRole:
            return self._captions.get(record, "")
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(record)
        return None

    def _tile(self, record: int) -> Tile:
        result = self._images.get(record)
        caption = self._captions.get(record)
        if result is not None:
            self._images.move_to_end(record)
        if caption is not None:
            self._captions.move_to_end(record)
        if result is None or caption is None or (result.state == "ok" and result.request.side < self._side):
            self._ask(record)
        status = self._live_status(record, result)
        if result is None:
            return Tile(record, "pending", None, [], caption or "", "", status)
        return Tile(record, result.state, result.image, result.boxes, caption or "", result.note, status,
                    result.framed, result.overlays, result.medium, result.badge)

    def _live_status(self, record: int, result: ThumbResult | None) -> RecordStatus:
        if self._status is not None:
            try:
                return self._status(record)
            except (IndexError, ValueError, OSError):
                pass
        return result.status if result is not None else RecordStatus.UNCHECKED

    def _tooltip(self, record: int) -> str:
        result = self._images.get(record)
        lines = [f"Record {record:,}"]
        caption = self._captions.get(record)
        if caption:
            lines.append(caption)
        if result is not None and result.note:
            lines.append(result.note)
        status = self._live_status(record, result)
        if status.damaged:
            records = self._source()  # (their container's words)
            text = status_words(status, TFRECORD if records is None else records.container)
            lines.append(f"record damaged: {text}")
        return "\n".join(lines)

    # -- asking for thumbnails --------------------------------------------
    def _ask(self, record: int) -> None:
        self._asked.add(record)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _needs(self, record: int) -> ThumbRequest | None:
        result = self._images.get(record)
        image_ok = result is not None and not (result.state == "ok" and result.request.side < self._side)
        if image_ok and record in self._captions:
            return None
        return ThumbRequest(record, 0 if image_ok else self._side, self._image_key, self._caption_key, self._epoch,
                            self._stretch, self._raw_shape)

    def _flush(self) -> None:
        """Ask the loader for the tiles on screen, then a screenful after and before them.

        Painting asks for the tiles it lacks; the range is the whole screen's
        (a repaint of one tile must not shrink what is being made).
        """
        asked, self._asked = self._asked, set()
        if not asked:
            return
        rows = sorted(r for r in (self._rows.row_for_record(rec) for rec in asked) if r >= 0)
        if not rows:
            return
        lo, hi = rows[0], rows[-1]
        screen = self.visible_rows()
        if screen is not None:
            lo, hi = min(lo, screen[0]), max(hi, screen[1])
        span = hi - lo + 1
        n = self.rowCount()
        order = list(range(lo, hi + 1)) + list(range(hi + 1, min(n, hi + 1 + 2 * span))) + \
            list(range(lo - 1, max(-1, lo - 1 - span), -1))
        requests = []
        for row in order:
            request = self._needs(self._rows.record_at(row))
            if request is not None:
                requests.append(request)
                if len(requests) >= MAX_QUEUE:
                    break
        self.loader.want(requests)

    def _ready(self, result: ThumbResult) -> None:
        request = result.request
        if request.image_key != self._image_key or request.epoch != self._epoch:
            return
        if (request.stretch != self._stretch or request.raw_shape != self._raw_shape) and request.side > 0:
            return
        record = request.record
        if request.caption_key == self._caption_key:
            self._captions[record] = result.caption
            self._captions.move_to_end(record)
            while len(self._captions) > MAX_CACHE_ITEMS:
                self._captions.popitem(last=False)
        if result.state == "ok" and result.image is not None and result.image.width():
            self._learn_aspect(result.image.height() / result.image.width())
        if result.state != "caption":
            old = self._images.pop(record, None)
            if old is not None:
                self._image_bytes -= old.nbytes
            self._images[record] = result
            self._image_bytes += result.nbytes
            while self._images and (self._image_bytes > MAX_CACHE_BYTES or len(self._images) > MAX_CACHE_ITEMS):
                _, dropped = self._images.popitem(last=False)
                self._image_bytes -= dropped.nbytes
        row = self._rows.row_for_record(record)
        if 0 <= row < self._count:
            index = self.index(row, 0)
            self.dataChanged.emit(index, index, [TILE_ROLE, Qt.ItemDataRole.DisplayRole])
        self.tile_ready.emit(record)

    def _learn_aspect(self, aspect: float) -> None:
        """The median shape of the first thumbnails sets the tiles' shape (a few relayouts at most)."""
        if len(self._aspects) >= ASPECT_SAMPLES[-1]:
            return
        self._aspects.append(min(1.0, aspect))
        if len(self._aspects) in ASPECT_SAMPLES:
            median = sorted(self._aspects)[len(self._aspects) // 2]
            if abs(median - self.aspect) > 0.02:
                self.aspect = median
                self.aspect_changed.emit(median)

    def _rows_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list = ()) -> None:
        """A record's status changed (repaint its tile) or its bytes did (an edit: make its tile again)."""
        first, last = top_left.row(), bottom_right.row()
        if STATUS_ROLE in roles:
            pass
        elif last - first > 1000:
            self._images.clear()
            self._image_bytes = 0
            self._captions.clear()
        else:
            for row in range(first, last + 1):
                record = self._rows.record_at(row)
                old = self._images.pop(record, None)
                if old is not None:
                    self._image_bytes -= old.nbytes
                self._captions.pop(record, None)
        if 0 <= first < self.rowCount():
            self.dataChanged.emit(self.index(first, 0), self.index(min(last, self.rowCount() - 1), 0))

    def _changed_all(self) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0))
