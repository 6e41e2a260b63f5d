"""What a gallery tile asks for and what it shows: the requests the gallery model makes and the
thumbnail loader answers (``app.workers.thumbnail_loader``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

import numpy as np
from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QColor, QImage

from app.models.overlay_layers import OverlayLayers
from codec.decode.image_boxes import BoundingBox
from codec.decode.image_display import STRETCH_DTYPE
from codec.decode.images import RawShape
from codec.format.framing import RecordStatus


@dataclass(frozen=True)
class ThumbRequest:
    """One tile wanted: record ``record`` at ``side`` device pixels (0: the caption only)."""

    record: int
    side: int
    image_key: str | None  # None: the record's main image (the first step's for a SequenceExample)
    caption_key: str | None  # None: the best caption feature of each record
    epoch: int = 0  # the asker's numbering of records when asked (results from an older one are dropped)
    stretch: str = STRETCH_DTYPE  # how 16-bit and float images become 8 bits (codec.decode.image_display.display_image)
    raw_shape: RawShape | None = None  # the user's shape for bytes to show as raw pixels


@dataclass
class ThumbResult:
    """What a tile shows of one record.

    ``state``: "ok" (``image`` set), "none" (the record has no image),
    "error" (the image could not be decoded), "unreadable" (the record
    could not be read), "caption" (a caption-only request).
    """

    request: ThumbRequest
    state: str
    image: QImage | None = None
    boxes: list[BoundingBox] = field(default_factory=list)
    caption: str = ""
    note: str = ""  # one line for the tooltip: what the image is, or why there is none
    status: RecordStatus = RecordStatus.UNCHECKED
    framed: bool = False  # a 1-bit or one-colour image: drawn with a frame so it shows on the background
    overlays: OverlayLayers | None = None  # masks, keypoints and class maps at the thumbnail's scale
    medium: str = "image"  # "audio": ``image`` is the clip's waveform
    badge: str = ""  # drawn on the tile: an audio clip's duration and rate (``0:03.2 · 16 kHz``)

    @property
    def nbytes(self) -> int:
        layers = self.overlays
        drawn = [] if layers is None else [layers.masks, *layers.segmentation]
        return sum(image.sizeInBytes() for image in (self.image, *drawn) if image is not None)


AUDIO_ASPECT = 0.5  # an audio tile's height over its width


def waveform_image(low: np.ndarray, high: np.ndarray, width: int, height: int,
                   colors: tuple[QColor, QColor, QColor]) -> QImage:
    """A min/max envelope (float, -1..1, one value per column) drawn ``width`` x ``height``: each pixel
    column filled from its low to its high, over a centre line. ``colors``: background, line, wave."""
    background, axis, wave = (np.array(c.getRgb(), dtype=np.uint8) for c in colors)
    rgba = np.empty((height, width, 4), dtype=np.uint8)
    rgba[:] = background
    mid = (height - 1) / 2
    rgba[int(round(mid))] = axis
    if len(low):
        columns = (np.arange(width) * len(low)) // width  # the envelope stretched (or thinned) to the width
        top = np.floor(mid - high[columns] * mid)
        bottom = np.ceil(mid - low[columns] * mid)
        rows = np.arange(height)[:, None]
        rgba[(rows >= top) & (rows <= bottom)] = wave
    return QImage(rgba.tobytes(), width, height, 4 * width, QImage.Format.Format_RGBA8888).copy()


class TileLoading(Protocol):
    """What makes the tiles (``app.workers.thumbnail_loader.ThumbnailLoader``): ``ready(ThumbResult)``,
    ``idle()`` when none is being made."""

    ready: SignalInstance
    idle: SignalInstance

    def want(self, requests: Iterable[ThumbRequest]) -> None: ...
    def pending(self) -> int: ...
    def close(self) -> None: ...
    def setParent(self, parent: Any) -> None: ...
