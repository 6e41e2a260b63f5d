"""Bounding boxes of a record's main image: the Object Detection API's ``image/object/bbox/*`` keys
(or a payload's boxes), placed in the image's pixels, each with what is wrong with it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from codec.decode.decoder import DecodedRecord, feature_values, record_features
from codec.decode.images import ImageRef, find_images, main_image

__all__ = ["BoundingBox", "box_issues", "find_boxes"]


_BBOX_KEYS = tuple(f"image/object/bbox/{side}" for side in ("xmin", "ymin", "xmax", "ymax"))
_CLASS_TEXT_KEY = "image/object/class/text"
_CLASS_LABEL_KEY = "image/object/class/label"
_SCORE_KEYS = ("image/object/score", "image/object/bbox/score", "image/object/scores")


@dataclass
class BoundingBox:
    """A box in pixel coordinates of its image, with its class if known.

    ``class_id`` and ``score`` when the record has them; ``stored``: the coordinates as the record holds
    them (xmin, ymin, xmax, ymax), ``normalised`` whether those are fractions of the image; ``problem``
    says why the box is invalid (min > max, outside the image, zero area), None for a good one.
    """

    xmin: float
    ymin: float
    xmax: float
    ymax: float
    label: str | None = None
    # what a tooltip tells of the box; boxes compare by place and class
    class_id: int | None = field(default=None, compare=False)
    score: float | None = field(default=None, compare=False)
    stored: tuple[float, float, float, float] | None = field(default=None, compare=False)
    normalised: bool = field(default=True, compare=False)
    problem: str | None = field(default=None, compare=False)


def _numbers(features: Any, key: str) -> list[float] | None:
    if key not in features:
        return None
    dtype, values = feature_values(features[key])
    return [float(v) for v in values] if dtype in ("float", "int64") else None


def _box_labels(features: Any, count: int, labels=None) -> list[str | None]:
    """Class names from class/label by ``labels`` (a label map), else class/text, else the ids, per box."""
    texts: list[str] = []
    ids: list[int] = []
    if _CLASS_LABEL_KEY in features:
        dtype, values = feature_values(features[_CLASS_LABEL_KEY])
        ids = values if dtype == "int64" else []
    if ids and labels and labels.get(_CLASS_LABEL_KEY) is not None:
        texts = [labels.name(_CLASS_LABEL_KEY, i) or str(i) for i in ids]
    if not texts and _CLASS_TEXT_KEY in features:
        dtype, values = feature_values(features[_CLASS_TEXT_KEY])
        if dtype == "bytes":
            texts = [v.decode("utf-8", errors="replace") for v in values]
    if not texts:
        texts = [str(i) for i in ids]
    return [texts[i] if i < len(texts) else None for i in range(count)]


def _is_main(decoded: DecodedRecord, ref: ImageRef) -> bool:
    main = main_image(find_images(decoded))
    return main is not None and (main.key, main.value_index, main.step) == (
        ref.key, ref.value_index, ref.step)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def box_issues(xmin: float, ymin: float, xmax: float, ymax: float) -> list[str]:
    """What is wrong with one normalised box, one line per kind: a coordinate that is not finite, or outside
    [0, 1], a min above its max, zero area; empty for a good box. The doctor's ``bbox`` check says the same."""
    named = {"xmin": xmin, "ymin": ymin, "xmax": xmax, "ymax": ymax}
    bad = [f"{k} {_fmt(v)}" for k, v in named.items() if not math.isfinite(v)]
    if bad:
        return [", ".join(bad)]
    out = []
    outside = [f"{k} {_fmt(v)}" for k, v in named.items() if not 0.0 <= v <= 1.0]
    if outside:
        out.append(f"{', '.join(outside)} outside [0, 1]")
    for lo, hi in (("xmin", "xmax"), ("ymin", "ymax")):
        if named[lo] > named[hi]:
            out.append(f"{lo} {_fmt(named[lo])} > {hi} {_fmt(named[hi])}")
        elif named[lo] == named[hi]:
            out.append(f"zero area ({lo} = {hi} = {_fmt(named[lo])})")
    return out


def _normalised(coords: list[tuple[float, float, float, float]]) -> bool:
    """Coordinates are fractions of the image when all lie within [-1, 2] (a box a little outside [0, 1] is
    an invalid normalised box, not a box of pixels); otherwise they are pixels."""
    return all(-1.0 <= v <= 2.0 for box in coords for v in box if math.isfinite(v))


def _placed(coords: list[tuple[float, float, float, float]], ref: ImageRef, labels: list[str | None],
            ids: list[int | None], scores: list[float | None]) -> list[BoundingBox]:
    """Boxes (xmin, ymin, xmax, ymax as stored) in pixels of ``ref``, each with its class, score and problem."""
    normalised = _normalised(coords)
    width, height = max(1, ref.width), max(1, ref.height)
    sx, sy = (width, height) if normalised else (1, 1)
    out = []
    for (xmin, ymin, xmax, ymax), label, class_id, score in zip(coords, labels, ids, scores):
        issues = box_issues(xmin, ymin, xmax, ymax)
        if not normalised:  # pixels: said in the record's numbers, "outside" against the image's size
            inside = not any("outside" in i for i in box_issues(xmin / width, ymin / height,
                                                                  xmax / width, ymax / height))
            issues = [i for i in issues if "outside" not in i] + ([] if inside else ["outside the image"])
        out.append(BoundingBox(xmin * sx, ymin * sy, xmax * sx, ymax * sy, label, class_id, score,
                               (xmin, ymin, xmax, ymax), normalised, "; ".join(issues) or None))
    return out


def _per_box(features: Any, key: str, count: int, kind: type) -> list:
    """``key``'s values, one per box (None where the record has fewer, or another type)."""
    if key not in features:
        return [None] * count
    dtype, values = feature_values(features[key])
    wanted = "int64" if kind is int else "float"
    values = [kind(v) for v in values] if dtype == wanted else []
    return [values[i] if i < len(values) else None for i in range(count)]


def find_boxes(decoded: DecodedRecord, ref: ImageRef, labels=None) -> list[BoundingBox]:
    """Object Detection API boxes of the record (or its payload's, a TFDS BBoxFeature's), in pixels of ``ref``.

    Only the record's main image (see ``main_image``) has boxes. Coordinates
    all within [-1, 2] are normalised and scaled by the image size (those outside [0, 1] are invalid);
    otherwise they are taken as pixels already. Boxes need the same number of
    xmin, ymin, xmax and ymax values; otherwise there are none. ``labels`` (a
    :class:`codec.datasets.label_maps.LabelNames`) names the class ids; ``image/object/score`` gives
    scores. A box with min > max, outside the image or of zero area has its ``problem``.
    """
    if decoded.boxes is not None:
        return _payload_boxes(decoded, ref)
    features = record_features(decoded)
    if features is None or _BBOX_KEYS[0] not in features:
        return []
    coords = [_numbers(features, key) for key in _BBOX_KEYS]
    if any(c is None for c in coords) or len({len(c) for c in coords}) != 1:
        return []
    if not _is_main(decoded, ref):
        return []
    count = len(coords[0])
    return _placed(list(zip(*coords)), ref, _box_labels(features, count, labels),
                   _per_box(features, _CLASS_LABEL_KEY, count, int),
                   next((_per_box(features, key, count, float) for key in _SCORE_KEYS if key in features),
                        [None] * count))


def _payload_boxes(decoded: DecodedRecord, ref: ImageRef) -> list[BoundingBox]:
    """A payload's (ymin, xmin, ymax, xmax, name) boxes, scaled when all are normalised."""
    found = decoded.boxes()
    if not found or not _is_main(decoded, ref):
        return []
    coords = [(xmin, ymin, xmax, ymax) for ymin, xmin, ymax, xmax, _ in found]
    return _placed(coords, ref, [box[4] for box in found], [None] * len(found), [None] * len(found))
