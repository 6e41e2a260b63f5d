"""Images inside records: encoded images, raw pixel buffers, bounding boxes.

Encoded images are recognised by content (magic bytes, then Pillow reads the
header without decoding pixels). Raw uint8 pixel buffers are recognised by a
length that matches a shape taken from sibling int64 features, or failing
those a square guess. Boxes follow the Object Detection API's
``image/object/bbox/*`` keys. Pillow only; no Qt.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from PIL import Image

from codec.decode import (
    DecodedRecord,
    feature_values,
    is_text,
    record_feature_lists,
    record_features,
)

__all__ = [
    "BoundingBox",
    "ImageDecodeError",
    "ImageInfo",
    "ImageRef",
    "SQUARE_GUESS_MIN_SIDE",
    "decode_image",
    "find_boxes",
    "find_images",
    "main_image",
    "probe_image",
    "sniff_image",
    "thumbnail",
]

# (Pillow format, offset, bytes): cheap first test, so most bytes values
# never reach Pillow. Pillow then checks the header for real.
_SIGNATURES: tuple[tuple[str, int, bytes], ...] = (
    ("JPEG", 0, b"\xff\xd8\xff"),
    ("PNG", 0, b"\x89PNG\r\n\x1a\n"),
    ("GIF", 0, b"GIF87a"),
    ("GIF", 0, b"GIF89a"),
    ("WEBP", 8, b"WEBP"),
    ("BMP", 0, b"BM"),
    ("TIFF", 0, b"II*\x00"),
    ("TIFF", 0, b"MM\x00*"),
    ("JPEG2000", 0, b"\x00\x00\x00\x0cjP  \r\n\x87\n"),
    ("JPEG2000", 0, b"\xff\x4f\xff\x51"),
    ("PPM", 0, b"P5"),
    ("PPM", 0, b"P6"),
    ("QOI", 0, b"qoif"),
    ("AVIF", 4, b"ftypavif"),
    ("AVIF", 4, b"ftypavis"),
)

# Smallest side a square guess may have: smaller "images" are far more often
# hashes or packed numbers (a 16-byte digest would be a 4x4 grey image).
SQUARE_GUESS_MIN_SIDE = 8
_RAW_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_GUESSED_CHANNELS = (3, 1, 4)
_HIGH_DEPTH_MODES = {"I", "I;16", "I;16B", "I;16L", "I;16N", "F"}

_BBOX_KEYS = tuple(f"image/object/bbox/{side}" for side in ("xmin", "ymin", "xmax", "ymax"))
_CLASS_TEXT_KEY = "image/object/class/text"
_CLASS_LABEL_KEY = "image/object/class/label"
_NORMALISED_MAX = 1.0001


class ImageDecodeError(ValueError):
    """An image's bytes could not be decoded (corrupt, truncated or unsupported)."""


class ImageInfo(NamedTuple):
    """What an encoded image's header says, without decoding its pixels."""

    format: str
    width: int
    height: int
    channels: int | None


@dataclass
class ImageRef:
    """One image inside a record and where it lives.

    ``kind`` is "encoded" (``data`` holds the file bytes) or "raw" (``data``
    holds HxWxC uint8 pixels, ``format`` is "RAW").
    """

    key: str
    value_index: int
    step: int | None
    kind: str
    format: str
    width: int
    height: int
    channels: int | None
    data: bytes = field(repr=False)


@dataclass
class BoundingBox:
    """A box in pixel coordinates of its image, with its class if known."""

    xmin: float
    ymin: float
    xmax: float
    ymax: float
    label: str | None = None


# ---------------------------------------------------------------- sniffing


def _candidate_formats(data: bytes) -> list[str]:
    """Formats whose magic bytes ``data`` starts with (usually none)."""
    return [name for name, offset, magic in _SIGNATURES if data.startswith(magic, offset)]


def _mode_channels(mode: str) -> int | None:
    try:
        return Image.getmodebands(mode)
    except (KeyError, ValueError):
        return None


def _open(data: bytes, formats: list[str]) -> Image.Image:
    return Image.open(io.BytesIO(data), formats=formats)


def probe_image(data: bytes) -> ImageInfo | None:
    """Format, size and channels of an encoded image, or None if ``data`` is not one."""
    data = bytes(data)
    formats = _candidate_formats(data)
    if not formats:
        return None
    try:
        with _open(data, formats) as image:
            name, (width, height), mode = image.format or formats[0], image.size, image.mode
    except Exception:  # Pillow raises many types (incl. DecompressionBombError) on bad headers
        return None
    return ImageInfo(name, width, height, _mode_channels(mode))


def sniff_image(data: bytes) -> str | None:
    """The image format of ``data`` ("JPEG", "PNG", ...) decided by content, else None."""
    info = probe_image(data)
    return info.format if info else None


# ---------------------------------------------------------------- finding


def _single_int(ints: dict[str, list[int]], key: str) -> int | None:
    values = ints.get(key)
    return values[0] if values and len(values) == 1 else None


def _shape_prefixes(key: str) -> list[str]:
    """Prefixes under which sibling shape features of ``key`` may live, best first."""
    prefixes = [key + "/", key + "_"]
    for separator in ("/", "_"):
        if separator in key:
            prefixes.append(key.rsplit(separator, 1)[0] + separator)
    prefixes.append("")
    return list(dict.fromkeys(prefixes))


def _fit_channels(size: int, height: int, width: int, channels: int | None) -> tuple | None:
    """(height, width, channels) if a uint8 buffer of ``size`` bytes fits that shape."""
    if height <= 0 or width <= 0:
        return None
    for c in (channels,) if channels else _GUESSED_CHANNELS:
        if c in _RAW_MODES and height * width * c == size:
            return height, width, c
    return None


def _declared_shape(prefix: str, ints: dict[str, list[int]]) -> tuple | None:
    """(height, width, channels or None) from ``prefix``height/width/... features."""
    shape = ints.get(prefix + "shape")
    if shape and len(shape) in (2, 3):
        return shape[0], shape[1], shape[2] if len(shape) == 3 else None
    height, width = _single_int(ints, prefix + "height"), _single_int(ints, prefix + "width")
    if height is None or width is None:
        return None
    channels = _single_int(ints, prefix + "channels") or _single_int(ints, prefix + "depth")
    return height, width, channels


def _square_guess(size: int) -> tuple | None:
    for c in _GUESSED_CHANNELS:
        side = math.isqrt(size // c)
        if side >= SQUARE_GUESS_MIN_SIDE and side * side * c == size:
            return side, side, c
    return None


def _raw_shape(key: str, data: bytes, ints: dict[str, list[int]]) -> tuple | None:
    """The (height, width, channels) of a raw buffer under ``key``, if any fits.

    A declared shape that does not fit rules the buffer out. The square guess
    is not made for bytes with an image signature: those are a broken
    encoded image, not pixels.
    """
    for prefix in _shape_prefixes(key):
        declared = _declared_shape(prefix, ints)
        if declared is not None:
            return _fit_channels(len(data), *declared)
    return None if _candidate_formats(data) else _square_guess(len(data))


def _image_ref(key: str, index: int, step: int | None, data: bytes,
               ints: dict[str, list[int]]) -> ImageRef | None:
    info = probe_image(data)
    if info is not None:
        return ImageRef(key, index, step, "encoded", info.format, info.width, info.height,
                        info.channels, data)
    shape = _raw_shape(key, data, ints)
    if shape is None or is_text(data):
        return None
    height, width, channels = shape
    return ImageRef(key, index, step, "raw", "RAW", width, height, channels, data)


def _int_features(features: Any) -> dict[str, list[int]]:
    ints = {}
    for key in features:
        dtype, values = feature_values(features[key])
        if dtype == "int64":
            ints[key] = values
    return ints


def _refs_in_feature(key: str, feature: Any, step: int | None,
                     ints: dict[str, list[int]]) -> list[ImageRef]:
    dtype, values = feature_values(feature)
    if dtype != "bytes":
        return []
    refs = (_image_ref(key, i, step, value, ints) for i, value in enumerate(values))
    return [ref for ref in refs if ref is not None]


def find_images(decoded: DecodedRecord) -> list[ImageRef]:
    """Every image in a record: encoded images and raw uint8 pixel buffers.

    Looks at an Example's features, a SequenceExample's context and each step
    of its feature lists, keys in sorted order. Shapes for raw buffers come
    from int64 features beside them (the context, for feature-list steps).
    Never raises for odd data: what cannot be read is simply not an image.
    """
    features = record_features(decoded)
    if features is None:
        return []
    ints = _int_features(features)
    refs: list[ImageRef] = []
    for key in sorted(features):
        refs.extend(_refs_in_feature(key, features[key], None, ints))
    lists = record_feature_lists(decoded)
    for key in sorted(lists) if lists is not None else ():
        for step, feature in enumerate(lists[key].feature):
            refs.extend(_refs_in_feature(key, feature, step, ints))
    return refs


def main_image(refs: list[ImageRef]) -> ImageRef | None:
    """The record's main image: ``image/encoded``, else the first ``image/...``,
    else the first image outside feature lists."""
    plain = [ref for ref in refs if ref.step is None]
    for ref in plain:
        if ref.key == "image/encoded":
            return ref
    for ref in plain:
        if ref.key.startswith("image/"):
            return ref
    return plain[0] if plain else None


# ---------------------------------------------------------------- decoding


def _stretch_to_grey(image: Image.Image) -> Image.Image:
    """16-bit or float pixels (depth maps...) scaled min..max onto 0..255."""
    pixels = np.nan_to_num(np.asarray(image, dtype=np.float64))
    low, high = float(pixels.min()), float(pixels.max())
    scale = 255.0 / (high - low) if high > low else 0.0
    return Image.fromarray(((pixels - low) * scale).astype(np.uint8))


def _for_display(image: Image.Image) -> Image.Image:
    """``image`` in RGB, RGBA or L."""
    if image.mode in ("RGB", "RGBA", "L"):
        return image
    if image.mode in _HIGH_DEPTH_MODES:
        return _stretch_to_grey(image)
    if image.mode == "P":
        return image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode == "1":
        return image.convert("L")
    return image.convert("RGBA" if "A" in image.getbands() else "RGB")


def _where(ref: ImageRef) -> str:
    step = f" step {ref.step}" if ref.step is not None else ""
    return f"{ref.format} image in {ref.key!r}{step} value {ref.value_index}"


def _decode_raw(ref: ImageRef) -> Image.Image:
    mode = _RAW_MODES.get(ref.channels or 0)
    if mode is None:
        raise ImageDecodeError(f"cannot show {_where(ref)}: {ref.channels} channels")
    try:
        image = Image.frombytes(mode, (ref.width, ref.height), ref.data)
    except ValueError as exc:
        raise ImageDecodeError(
            f"cannot decode {_where(ref)}: expected {ref.width * ref.height * ref.channels} "
            f"bytes for {ref.width}x{ref.height}x{ref.channels}, found {len(ref.data)}"
        ) from exc
    return _for_display(image)


def _decode_encoded(ref: ImageRef, max_side: int | None) -> Image.Image:
    try:
        with _open(ref.data, _candidate_formats(ref.data) or [ref.format]) as image:
            if max_side is not None and image.format in ("JPEG", "MPO"):
                image.draft(image.mode, (max_side, max_side))  # DCT scaling: fast
            image.load()
            return _for_display(image)
    except Exception as exc:  # Pillow raises OSError, SyntaxError, struct.error, ...
        raise ImageDecodeError(f"cannot decode {_where(ref)}: {exc}") from exc


def decode_image(ref: ImageRef) -> Image.Image:
    """The image's pixels in RGB, RGBA or L.

    Raises ImageDecodeError when the bytes are corrupt, truncated or the
    format cannot be decoded.
    """
    return _decode_raw(ref) if ref.kind == "raw" else _decode_encoded(ref, None)


def thumbnail(ref: ImageRef, max_side: int) -> Image.Image:
    """The image scaled to fit ``max_side`` x ``max_side`` (never enlarged).

    JPEGs are decoded at a reduced scale directly. Raises ImageDecodeError
    like ``decode_image``.
    """
    if max_side < 1:
        raise ValueError(f"max_side must be at least 1, got {max_side}")
    if ref.kind == "raw":
        image = _decode_raw(ref)
    else:
        image = _decode_encoded(ref, max_side)
    image.thumbnail((max_side, max_side))
    return image


# ---------------------------------------------------------------- boxes


def _numbers(features: Any, key: str) -> list[float] | None:
    if key not in features:
        return None
    dtype, values = feature_values(features[key])
    return [float(v) for v in values] if dtype in ("float", "int64") else None


def _box_labels(features: Any, count: int) -> list[str | None]:
    """Class names from class/text, else class ids from class/label, per box."""
    texts: list[str] = []
    if _CLASS_TEXT_KEY in features:
        dtype, values = feature_values(features[_CLASS_TEXT_KEY])
        if dtype == "bytes":
            texts = [v.decode("utf-8", errors="replace") for v in values]
    if not texts and _CLASS_LABEL_KEY in features:
        dtype, values = feature_values(features[_CLASS_LABEL_KEY])
        if dtype == "int64":
            texts = [str(v) for v in values]
    return [texts[i] if i < len(texts) else None for i in range(count)]


def _is_main(decoded: DecodedRecord, ref: ImageRef) -> bool:
    main = main_image(find_images(decoded))
    return main is not None and (main.key, main.value_index, main.step) == (
        ref.key, ref.value_index, ref.step)


def find_boxes(decoded: DecodedRecord, ref: ImageRef) -> list[BoundingBox]:
    """Object Detection API boxes of the record, in pixels of ``ref``.

    Only the record's main image (see ``main_image``) has boxes. Coordinates
    all within [0, 1.0001] are normalised and scaled by the image size;
    otherwise they are taken as pixels already. Boxes need the same number of
    xmin, ymin, xmax and ymax values; otherwise there are none.
    """
    features = record_features(decoded)
    if features is None or _BBOX_KEYS[0] not in features:
        return []
    coords = [_numbers(features, key) for key in _BBOX_KEYS]
    if any(c is None for c in coords) or len({len(c) for c in coords}) != 1:
        return []
    if not _is_main(decoded, ref):
        return []
    normalised = all(0.0 <= v <= _NORMALISED_MAX for c in coords for v in c)
    sx, sy = (ref.width, ref.height) if normalised else (1, 1)
    labels = _box_labels(features, len(coords[0]))
    return [
        BoundingBox(xmin * sx, ymin * sy, xmax * sx, ymax * sy, label)
        for xmin, ymin, xmax, ymax, label in zip(*coords, labels)
    ]
