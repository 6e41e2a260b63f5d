"""Instance masks, keypoints and segmentation class maps of an Object Detection API record, as arrays
to draw and as the ``media`` command's entries.

A value that cannot be read (not a PNG, a float list of the wrong length, lists of different lengths)
is a one-line ``problem`` on its entry, never an exception: one bad record does not stop a listing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from codec.decode.decoder import DecodedRecord, feature_values, record_features
from codec.decode.image_sniff import check_pixels, open_image
from codec.decode.png_samples import png_bit_depth

__all__ = ["EXTRACTORS", "InstanceMask", "Keypoints", "Overlays", "SegmentationMap", "instance_masks",
           "keypoint_entries", "keypoints", "mask_entries", "record_overlays", "segmentation_entries",
           "segmentation_maps"]

MASK_KEY = "image/object/mask"
_KEYPOINT_X, _KEYPOINT_Y = "image/object/keypoint/x", "image/object/keypoint/y"
_VISIBILITY = "image/object/keypoint/visibility"
# what says how many objects a record has, first found first
_OBJECT_COUNT_KEYS = ("image/object/bbox/xmin", "image/object/class/label", "image/object/class/text")
_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass
class InstanceMask:
    """One object's mask: ``pixels`` a 2-D integer array (non-zero inside), or None with a ``problem``.

    ``object`` is the object's number in the record (None when a problem concerns the whole list);
    ``class_id`` its ``image/object/class/label`` when the record has one for it (the colour to draw in).
    """

    key: str
    object: int | None
    pixels: np.ndarray | None = field(default=None, repr=False)
    problem: str | None = None
    class_id: int | None = None

    @property
    def inside(self) -> np.ndarray | None:
        """The mask as a bool array."""
        return None if self.pixels is None else self.pixels != 0

    @property
    def area(self) -> int | None:
        """Non-zero pixels."""
        return None if self.pixels is None else int(np.count_nonzero(self.pixels))


@dataclass
class Keypoints:
    """A record's keypoints in pixels, in stored order: ``points`` an (N, 3) float64 array of x, y and
    visibility (without a visibility list: 1, or 0 for a missing NaN keypoint); None with a ``problem``."""

    points: np.ndarray | None = field(default=None, repr=False)
    problem: str | None = None


@dataclass
class SegmentationMap:
    """One PNG label map: ``classes`` a 2-D integer array of class ids, or None with a ``problem``."""

    key: str
    value_index: int
    classes: np.ndarray | None = field(default=None, repr=False)
    problem: str | None = None


@dataclass
class Overlays:
    """What a record draws over its image: masks per object, keypoints (None without any), label maps."""

    masks: list[InstanceMask]
    keypoints: Keypoints | None
    segmentation: list[SegmentationMap]


def _image_size(features: Any, decoded: DecodedRecord) -> tuple[int, int] | None:
    """(height, width) from ``image/height`` and ``image/width``, else the main image's header."""
    sizes = []
    for key in ("image/height", "image/width"):
        dtype, values = feature_values(features[key]) if key in features else (None, [])
        if dtype == "int64" and len(values) == 1 and int(values[0]) > 0:
            sizes.append(int(values[0]))
    if len(sizes) == 2:
        return sizes[0], sizes[1]
    from codec.decode.images import find_images, main_image  # only for records that do not say their size

    main = main_image(find_images(decoded))
    return (main.height, main.width) if main is not None and main.width > 0 and main.height > 0 else None


def _object_count(features: Any) -> int | None:
    for key in _OBJECT_COUNT_KEYS:
        if key in features:
            return len(feature_values(features[key])[1])
    return None


def _png_pixels(data: bytes, grey: bool) -> np.ndarray:
    """A PNG's pixels as a 2-D array; raises ValueError with a one-line reason.

    ``grey``: colour and palette images become grey levels (what the Object Detection API's
    ``decode_png(channels=1)`` reads); otherwise palette indices stay as they are and a colour image whose
    channels differ is refused (a label map holds one class id per pixel).
    """
    if not data:
        raise ValueError("empty (0 bytes)")
    if bytes(data[:8]) != _PNG:
        raise ValueError(f"not a PNG ({len(data)} bytes starting {bytes(data[:4]).hex(' ')})")
    try:
        with open_image(bytes(data), ["PNG"]) as image:
            check_pixels(*image.size)
            if grey and image.mode not in ("1", "L", "I", "I;16", "I;16B"):
                image = image.convert("L")
            pixels = np.asarray(image)
            if grey and png_bit_depth(bytes(data)) == 16:  # decode_png's uint8: each sample's high byte
                pixels = (pixels.astype(np.uint32) >> 8).astype(np.uint8)
    except Exception as exc:  # noqa: BLE001 — Pillow raises many types on damaged PNGs
        said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"PNG does not decode: {said}") from None
    if pixels.ndim == 3:
        colour = pixels[..., :3] if pixels.shape[2] >= 3 else pixels[..., :1]  # alpha is no class
        if not (colour == colour[..., :1]).all():
            raise ValueError(f"a colour PNG ({image.mode}), not one class id per pixel")
        pixels = colour[..., 0]
    return pixels.astype(np.uint8) if pixels.dtype == bool else pixels


def _pngs(key: str, values: list, grey: bool) -> list[tuple[int, np.ndarray | None, str | None]]:
    """(value number, pixels, problem) of each PNG under ``key``: pixels or a one-line problem."""
    out: list[tuple[int, np.ndarray | None, str | None]] = []
    for i, data in enumerate(values):
        try:
            out.append((i, _png_pixels(data, grey), None))
        except ValueError as exc:
            out.append((i, None, f"{key}[{i}]: {exc}"))
    return out


def _list_masks(values: list, features: Any, decoded: DecodedRecord) -> list[InstanceMask]:
    """Masks stored as one flat number list of objects × height × width."""
    size = _image_size(features, decoded)
    if size is None:
        return [InstanceMask(MASK_KEY, None, problem=f"{MASK_KEY}: {len(values)} numbers but no image size "
                                                     "(image/height, image/width)")]
    height, width = size
    count = _object_count(features)
    if count is None:
        count = len(values) // (height * width)
        if len(values) != count * height * width:
            return [InstanceMask(MASK_KEY, None, problem=f"{MASK_KEY}: {len(values)} numbers, not a whole "
                                                         f"number of {height} × {width} masks")]
    elif len(values) != count * height * width:
        return [InstanceMask(MASK_KEY, None, problem=f"{MASK_KEY}: {len(values)} numbers, not {count} objects "
                                                     f"× {height} × {width} = {count * height * width}")]
    # inside where the value is above 0, as the Object Detection API reads it (NaN is outside)
    stacked = (np.asarray(values, dtype=np.float64).reshape(count, height, width) > 0).astype(np.uint8)
    return [InstanceMask(MASK_KEY, i, stacked[i]) for i in range(count)]


def instance_masks(decoded: DecodedRecord) -> list[InstanceMask]:
    """The record's ``image/object/mask`` masks, one per object: PNG strings, or a flat float list of
    objects × ``image/height`` × ``image/width`` (objects counted by the boxes, inside where above 0);
    empty without masks."""
    features = record_features(decoded)
    if features is None or MASK_KEY not in features:
        return []
    dtype, values = feature_values(features[MASK_KEY])
    if not values:
        return []
    masks = ([InstanceMask(MASK_KEY, *found) for found in _pngs(MASK_KEY, values, grey=True)] if dtype == "bytes"
             else _list_masks(values, features, decoded))
    if "image/object/class/label" in features:
        dtype, ids = feature_values(features["image/object/class/label"])
        for mask in masks:
            if dtype == "int64" and mask.object is not None and mask.object < len(ids):
                mask.class_id = int(ids[mask.object])
    return masks


def _numbers(features: Any, key: str) -> list[float] | None:
    dtype, values = feature_values(features[key])
    return [float(v) for v in values] if dtype in ("float", "int64") else None


def keypoints(decoded: DecodedRecord) -> Keypoints | None:
    """The record's keypoints, normalised x and y scaled to pixels (x × width, y × height); None without any."""
    features = record_features(decoded)
    if features is None or _KEYPOINT_X not in features or _KEYPOINT_Y not in features:
        return None
    xs, ys = _numbers(features, _KEYPOINT_X), _numbers(features, _KEYPOINT_Y)
    if xs is None or ys is None:
        return Keypoints(problem=f"{_KEYPOINT_X}, {_KEYPOINT_Y}: not numbers")
    if not xs and not ys:
        return None
    if len(xs) != len(ys):
        return Keypoints(problem=f"{len(xs)} keypoint x values but {len(ys)} y values")
    # no visibility list: a keypoint is visible unless it is missing (NaN), as the Object Detection API decides
    visible = [0.0 if math.isnan(x) or math.isnan(y) else 1.0 for x, y in zip(xs, ys)]
    if _VISIBILITY in features:
        given = _numbers(features, _VISIBILITY)
        if given is None or len(given) != len(xs):
            said = "not numbers" if given is None else f"{len(given)} values"
            return Keypoints(problem=f"{_VISIBILITY}: {said} for {len(xs)} keypoints")
        visible = given
    size = _image_size(features, decoded)
    if size is None:
        return Keypoints(problem=f"{len(xs)} keypoints but no image size (image/height, image/width)")
    height, width = size
    points = np.column_stack([np.asarray(xs) * width, np.asarray(ys) * height, np.asarray(visible)])
    return Keypoints(points.astype(np.float64))


def _segmentation_key(key: str) -> bool:
    lower = key.lower()
    return "segmentation" in lower and "encoded" in lower


def segmentation_maps(decoded: DecodedRecord) -> list[SegmentationMap]:
    """PNG class maps under keys naming ``segmentation`` and ``encoded`` (``image/segmentation/class/encoded``):
    one class id per pixel, palette indices as stored; a colour PNG whose channels differ is a problem."""
    features = record_features(decoded)
    if features is None:
        return []
    out: list[SegmentationMap] = []
    for key in sorted(k for k in features if _segmentation_key(k)):
        dtype, values = feature_values(features[key])
        if dtype == "bytes":
            out.extend(SegmentationMap(key, *found) for found in _pngs(key, values, grey=False))
    return out


def record_overlays(decoded: DecodedRecord) -> Overlays:
    """Everything the record draws over its image, as arrays (the app's masks, dots and class maps)."""
    return Overlays(instance_masks(decoded), keypoints(decoded), segmentation_maps(decoded))


# ---------------------------------------------------------------- the media command's entries


def _shape(pixels: np.ndarray | None) -> list[int] | None:
    return None if pixels is None else [int(pixels.shape[0]), int(pixels.shape[1])]


def _with_problem(entry: dict, problem: str | None) -> dict:
    return {**entry, "error": problem} if problem is not None else entry


def mask_entries(index: int, decoded: DecodedRecord) -> list[dict]:
    """One ``{"index", "key", "type": "mask", "object", "shape": [H, W], "area"}`` per object mask; a mask
    that does not read has ``shape`` and ``area`` null and a ``problem``."""
    return [_with_problem({"index": index, "key": mask.key, "type": "mask", "object": mask.object,
                           "shape": _shape(mask.pixels), "area": mask.area}, mask.problem)
            for mask in instance_masks(decoded)]


def _point(x: float, y: float) -> list[float | None]:
    """[x, y], or [null, null] for a missing keypoint (either coordinate NaN: JSON has no NaN)."""
    return [x, y] if math.isfinite(x) and math.isfinite(y) else [None, None]


def keypoint_entries(index: int, decoded: DecodedRecord) -> list[dict]:
    """``{"index", "type": "keypoints", "points": [[x, y, visibility], ...]}`` in pixels, full float64
    precision, for a record with keypoints (none otherwise); ``points`` null and a ``problem`` when unreadable."""
    found = keypoints(decoded)
    if found is None:
        return []
    points = None if found.points is None else [
        [*_point(float(x), float(y)), int(v) if math.isfinite(v) else None]
        for x, y, v in found.points]
    return [_with_problem({"index": index, "type": "keypoints", "points": points}, found.problem)]


def segmentation_entries(index: int, decoded: DecodedRecord) -> list[dict]:
    """One ``{"index", "key", "type": "segmentation", "shape": [H, W], "classes": [ids present, sorted]}``
    per label map; ``shape`` and ``classes`` null and a ``problem`` when it does not read."""
    out = []
    for found in segmentation_maps(decoded):
        classes = None if found.classes is None else [int(c) for c in np.unique(found.classes)]
        out.append(_with_problem({"index": index, "key": found.key, "type": "segmentation",
                                  "shape": _shape(found.classes), "classes": classes}, found.problem))
    return out


# for codec/cli/media.py's list of extractors
EXTRACTORS = (mask_entries, keypoint_entries, segmentation_entries)
