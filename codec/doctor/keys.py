"""Which features of a record are its image, its declared format and size, its boxes and its labels.

Object Detection API names first (``image/encoded``, ``image/format``,
``image/width``/``height``, ``image/object/bbox/*``, ``image/object/class/*``,
``image/class/*``), then a TFDS dataset's feature spec (via the payload), then
the app's own image detection (:func:`codec.decode.images.find_images`) and the label
key rule (:func:`codec.datasets.label_maps.label_keys`). ``--image-key`` and
``--label-key`` override. Decided once per set of feature keys, not per record.
"""
from __future__ import annotations

from dataclasses import dataclass

from codec.datasets.label_maps import LABEL_KEYS, TEXT_KEYS, record_label_key

__all__ = ["BBOX_KEYS", "Roles", "resolve_roles"]

IMAGE_KEY = "image/encoded"
FORMAT_KEYS = ("image/format",)
WIDTH_KEYS = ("image/width",)
HEIGHT_KEYS = ("image/height",)
BBOX_KEYS = tuple(f"image/object/bbox/{side}" for side in ("xmin", "ymin", "xmax", "ymax"))


@dataclass(frozen=True)
class Roles:
    """The features of one kind of record (one set of keys) by role; None where there is none."""

    image_key: str | None
    format_key: str | None
    width_key: str | None
    height_key: str | None
    bbox: bool  # any Object Detection API box key present
    label_key: str | None  # the record's label (for conflicts and label order)
    checked_labels: tuple[tuple[str, str], ...]  # (key, "id" | "text") to look up in the label map


def _first(keys, options) -> str | None:
    return next((k for k in options if k in keys), None)


def _detected_image(decoded) -> str | None:
    """The app's choice of a record's main image (encoded by magic bytes, or raw pixels by shape)."""
    from codec.decode.images import find_images, main_image

    try:
        ref = main_image(find_images(decoded))
    except Exception:  # noqa: BLE001 - odd data is simply not an image here
        return None
    return ref.key if ref is not None else None


def resolve_roles(types: dict[str, str], decoded, payload, labels, image_key: str | None,
                  label_key: str | None) -> Roles:
    """Roles of the features of a record whose keys and dtypes are ``types`` (``decoded`` is one such record).

    ``labels``: the :class:`codec.datasets.label_maps.LabelNames` unknown labels are
    looked up in (None: no label check). ``image_key``/``label_key``: the
    user's choice, used whenever the record has that key.
    """
    from codec.datasets.label_maps import label_keys

    keys = set(types)
    tfds_images = list(payload.image_keys()) if hasattr(payload, "image_keys") else []
    tfds_labels = list(payload.label_names()) if hasattr(payload, "label_names") else []
    if image_key is None:
        image_key = _first(keys, [*tfds_images, IMAGE_KEY])
        if image_key is None:
            image_key = _detected_image(decoded)
    ints = [k for k in sorted(keys) if types[k] == "int64"]
    if label_key is None:
        label_key = record_label_key(types, tfds_labels)
    checked: list[tuple[str, str]] = []
    if labels:
        for key in dict.fromkeys([*LABEL_KEYS, *tfds_labels, *label_keys(ints)]):
            if key in keys and types[key] == "int64" and labels.get(key) is not None:
                checked.append((key, "id"))
        for key in TEXT_KEYS:
            if key in keys and types[key] == "bytes" and labels.get(key.rsplit("/", 1)[0] + "/label") is not None:
                checked.append((key, "text"))
    return Roles(image_key=image_key, format_key=_first(keys, FORMAT_KEYS), width_key=_first(keys, WIDTH_KEYS),
                 height_key=_first(keys, HEIGHT_KEYS), bbox=any(k in keys for k in BBOX_KEYS),
                 label_key=label_key, checked_labels=tuple(checked))
