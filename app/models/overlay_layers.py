"""What a record draws over its main image (instance masks, keypoints, segmentation class maps), made ready
to paint: 8-bit indexed QImages whose colours the view picks at paint time, so a theme switch recolours them.

Built on worker threads (the Images tab's pool, the gallery's thumbnail loader) from the codec's
``record_overlays`` arrays; a QImage may be made on any thread.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PySide6.QtGui import QImage

from codec.decode.decoder import DecodedRecord
from codec.decode.image_boxes import BoundingBox
from codec.decode.masks import Overlays, record_overlays

CLASS_KEY = "image/object/class/label"  # the feature whose label map names mask and class-map ids
MAX_SLOTS = 255  # colour slots of an 8-bit image, 0 being "nothing drawn"


@dataclass
class OverlayLayers:
    """A record's overlays as images at the mask's own size (drawn stretched over the image).

    ``masks``: slot k is ``mask_labels[k - 1]`` (one slot per class; a later object's mask covers an
    earlier one where they overlap). ``segmentation``: one image per class map, slot k is
    ``segment_labels[k - 1]``; class 0 (background) is not drawn. ``keypoints``: (N, 3) x, y, visibility
    in the image's pixels (or the thumbnail's).
    """

    masks: QImage | None = None
    mask_labels: list[str] = field(default_factory=list)
    mask_count: int = 0
    keypoints: np.ndarray | None = None
    segmentation: list[QImage] = field(default_factory=list)
    segment_labels: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    tints: dict = field(default_factory=dict, repr=False)  # the painter's coloured copy of each layer image

    def __bool__(self) -> bool:
        return self.masks is not None or self.keypoint_count > 0 or bool(self.segmentation)

    @property
    def keypoint_count(self) -> int:
        return 0 if self.keypoints is None else len(self.keypoints)


def _indexed(slots: np.ndarray, side: int | None) -> QImage:
    """A 2-D uint8 array as an 8-bit indexed QImage (its colour table set when painted), its longest side
    at most ``side`` (nearest pixel, keeping the slots) when given."""
    if side is not None and max(slots.shape) > side:
        ratio = side / max(slots.shape)
        slots = _resampled(slots, (max(1, round(slots.shape[0] * ratio)), max(1, round(slots.shape[1] * ratio))))
    height, width = slots.shape
    data = np.ascontiguousarray(slots, dtype=np.uint8)
    image = QImage(data.data, width, height, width, QImage.Format.Format_Indexed8).copy()
    image.setColorTable([0] * 256)
    return image


def _resampled(pixels: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``pixels`` at ``shape`` by nearest neighbour (a mask stored at another size than the first)."""
    if pixels.shape == shape:
        return pixels
    rows = np.arange(shape[0]) * pixels.shape[0] // shape[0]
    cols = np.arange(shape[1]) * pixels.shape[1] // shape[1]
    return pixels[rows][:, cols]


def _class_name(class_id: int | None, labels: Any) -> str | None:
    name = labels.name(CLASS_KEY, class_id) if labels is not None and class_id is not None else None
    return str(name) if name else None


def mask_label(mask_object: int | None, class_id: int | None, boxes: list[BoundingBox], labels: Any) -> str:
    """The label a mask is drawn and listed under: its object's box label (so both share a colour), else its
    class's name or id."""
    if mask_object is not None and mask_object < len(boxes) and boxes[mask_object].class_id == class_id \
            and boxes[mask_object].label:
        return str(boxes[mask_object].label)
    same = next((b.label for b in boxes if b.class_id == class_id and b.label), None) if class_id is not None \
        else None
    if same:
        return str(same)
    if class_id is None:
        return f"object {mask_object}" if mask_object is not None else "mask"
    return _class_name(class_id, labels) or str(class_id)


def _mask_layer(overlays: Overlays, boxes: list[BoundingBox], labels: Any, out: OverlayLayers,
                side: int | None) -> None:
    readable = [m for m in overlays.masks if m.pixels is not None]
    out.problems += [m.problem for m in overlays.masks if m.problem]
    if not readable:
        return
    shape = readable[0].pixels.shape  # type: ignore[union-attr]
    slots = np.zeros(shape, np.uint8)
    for mask in readable:
        label = mask_label(mask.object, mask.class_id, boxes, labels)
        if label not in out.mask_labels:
            out.mask_labels.append(label)
        slot = min(out.mask_labels.index(label) + 1, MAX_SLOTS)
        slots[_resampled(mask.pixels, shape) != 0] = slot  # type: ignore[arg-type]
    out.masks, out.mask_count = _indexed(slots, side), len(readable)


def _segment_layer(overlays: Overlays, labels: Any, out: OverlayLayers, side: int | None) -> None:
    maps = [s for s in overlays.segmentation if s.classes is not None]
    out.problems += [s.problem for s in overlays.segmentation if s.problem]
    ids = sorted({int(c) for s in maps for c in np.unique(s.classes)} - {0})  # type: ignore[arg-type]
    out.segment_labels = [f"{c} {name}" if (name := _class_name(c, labels)) else str(c) for c in ids]
    for found in maps:
        classes = found.classes
        assert classes is not None
        place = np.searchsorted(np.asarray(ids, dtype=np.int64), classes)  # every id but 0 is in ids
        slots = np.where(classes == 0, 0, np.minimum(place + 1, MAX_SLOTS)).astype(np.uint8)
        out.segmentation.append(_indexed(slots, side))


def build_layers(decoded: DecodedRecord, boxes: list[BoundingBox], labels: Any = None,
                 scale: tuple[float, float] = (1.0, 1.0), side: int | None = None) -> OverlayLayers:
    """The record's overlays ready to paint; ``boxes`` its main image's boxes (masks take their labels).

    For a thumbnail, ``scale`` maps keypoints to its pixels and ``side`` caps the layers' longest side.
    Never raises: what does not read is a line in ``problems``.
    """
    out = OverlayLayers()
    try:
        overlays = record_overlays(decoded)
        _mask_layer(overlays, boxes, labels, out, side)
        _segment_layer(overlays, labels, out, side)
    except Exception as exc:  # noqa: BLE001 - a damaged record draws its image without overlays
        return OverlayLayers(problems=[f"overlays: {exc}"])
    found = overlays.keypoints
    if found is not None and found.problem:
        out.problems.append(found.problem)
    elif found is not None and found.points is not None and len(found.points):
        points = found.points.copy()
        points[:, 0] *= scale[0]
        points[:, 1] *= scale[1]
        out.keypoints = points
    return out
