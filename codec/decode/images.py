"""Images inside records: encoded images and raw pixel buffers.

Encoded images are recognised by content (:mod:`codec.decode.image_sniff`). Raw
pixel buffers (uint8, or uint16 and float32 when the length or a ``dtype``
feature says so) are recognised by a length that matches a shape taken from
sibling int64 features; a square shape is guessed only for a feature whose
name says it holds an image (``image``, ``pixels``...), or for any bytes when
the caller asks (``raw_shape``). High-depth pixels (16-bit, 32-bit, float)
become 8 bits for display by ``display_image``: by their type's range, or
stretched over the image's own min..max (:mod:`codec.decode.image_display`). Their boxes are in
:mod:`codec.decode.image_boxes`. Pillow only; no Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from PIL import Image

from codec.decode.decoder import (
    DecodedRecord,
    RecordKind,
    feature_dtype,
    feature_length,
    feature_values,
    is_text,
    record_feature_lists,
    record_features,
)
from codec.decode.image_display import (
    STRETCH_DTYPE,
    STRETCH_MINMAX,
    check_stretch,
    display_image,
    sixteen_bit_colour,
    stretch_8bit,
)
from codec.decode.image_sniff import candidate_formats, check_pixels, open_image, probe_image
from codec.decode.png_samples import png16_colour, png_bit_depth
from codec.decode.tensor_view import image_shaped
from codec.errors import ImageDecodeError, ImageTooLargeError, UsageError

__all__ = [
    "ImageRef",
    "PixelValues",
    "RawShape",
    "SQUARE_GUESS_MIN_SIDE",
    "decode_image",
    "find_images",
    "guess_raw_shape",
    "main_image",
    "parse_raw_shape",
    "pixel_values",
    "thumbnail",
]

# Smallest side a square guess may have: smaller "images" are far more often
# hashes or packed numbers (a 16-byte digest would be a 4x4 grey image).
SQUARE_GUESS_MIN_SIDE = 8
_RAW_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_GUESSED_CHANNELS = (3, 1, 4)
# numpy dtypes of raw buffers, by the name a ``dtype`` feature may give; little-endian as
# tf.io.decode_raw reads by default. Without such a feature uint8 is tried, then uint16.
_RAW_DTYPES = {"uint8": np.dtype("u1"), "uint16": np.dtype("<u2"), "float32": np.dtype("<f4")}
_DTYPE_KEYS = ("dtype", "data_type", "pixel_type")
# Words in a feature's name that say its bytes are pixels: only such features get a square guess.
_IMAGE_WORDS = frozenset({"image", "images", "img", "imgs", "pixels", "pixel", "frame", "frames", "mask",
                          "masks", "depth", "thumbnail", "picture", "photo"})
# Words that say an image is a map beside the picture, never the picture boxes are drawn on.
_AUXILIARY_WORDS = frozenset({"depth", "disparity", "mask", "masks", "segmentation", "seg", "segmentations",
                              "heatmap", "normals", "flow", "alpha", "label", "labels", "panoptic", "instance"})
_GENERIC_WORDS = frozenset({"raw", "data", "bytes", "buffer", "encoded", "values", "array"})



@dataclass
class ImageRef:
    """One image inside a record and where it lives.

    ``kind`` is "encoded" (``data`` holds the file bytes) or "raw" (``data``
    holds HxWxC pixels of ``dtype``, ``format`` is "RAW").
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
    dtype: str = "uint8"  # raw pixels: "uint8", "uint16" or "float32"


class RawShape(NamedTuple):
    """The shape a caller says raw pixel buffers have (``find_images(..., raw_shape=)``)."""

    height: int
    width: int
    channels: int
    dtype: str = "uint8"


@dataclass
class PixelValues:
    """An image's samples as decoded, at their full depth (0-65535 for 16-bit, floats as they are).

    ``pixels`` is H x W x C; ``channels`` names them (("R", "G", "B"), ("L",)...); ``bits``
    is the depth of one sample as stored (1, 8, 16, 32) and ``kind`` "uint", "int" or "float";
    ``low``..``high`` the range of the image's (finite) samples.
    """

    pixels: np.ndarray = field(repr=False)
    channels: tuple[str, ...]
    bits: int
    kind: str
    low: float
    high: float

    def at(self, x: int, y: int) -> list[float | int] | None:
        """The samples of pixel (x, y) from the top left, None outside the image."""
        height, width = self.pixels.shape[:2]
        if not (0 <= x < width and 0 <= y < height):
            return None
        return self.pixels[y, x].tolist()

    def depth_text(self) -> str:
        """``16-bit`` (``32-bit float``, ``1-bit``): the samples' type as a person says it."""
        return f"{self.bits}-bit" + (" float" if self.kind == "float" else " signed" if self.kind == "int" else "")

    def range_text(self) -> str:
        """``values 12–60,000`` over the whole image (every channel)."""
        return f"values {_number_text(self.low, self.kind)}–{_number_text(self.high, self.kind)}"

    def value_text(self, x: int, y: int) -> str | None:
        """``R 12 G 200 B 65,535`` for pixel (x, y), one grey value alone (``0.25``); None outside the image."""
        values = self.at(x, y)
        if values is None:
            return None
        if len(values) == 1:
            return _number_text(values[0], self.kind)
        names = self.channels if len(self.channels) == len(values) else tuple(str(i) for i in range(len(values)))
        return " ".join(f"{name} {_number_text(v, self.kind)}" for name, v in zip(names, values))


def _number_text(value: float, kind: str) -> str:
    if kind == "float":
        return f"{value:.6g}"
    return f"{int(value):,}"


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


def _fit_channels(size: int, height: int, width: int, channels: int | None,
                  dtypes: tuple[str, ...] = ("uint8", "uint16")) -> tuple | None:
    """(height, width, channels, dtype) if a buffer of ``size`` bytes fits that shape."""
    if height <= 0 or width <= 0:
        return None
    for name in dtypes:
        item = _RAW_DTYPES[name].itemsize
        for c in (channels,) if channels else _GUESSED_CHANNELS:
            if c in _RAW_MODES and height * width * c * item == size:
                return height, width, c, name
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


def _declared_dtypes(prefix: str, hints: dict[str, str]) -> tuple[str, ...]:
    for name in _DTYPE_KEYS:
        if prefix + name in hints:
            return (hints[prefix + name],)
    return ("uint8", "uint16")


def _square_guess(size: int) -> tuple | None:
    for c in _GUESSED_CHANNELS:
        side = math.isqrt(size // c)
        if side >= SQUARE_GUESS_MIN_SIDE and side * side * c == size:
            return side, side, c, "uint8"
    return None


def guess_raw_shape(size: int) -> RawShape | None:
    """A square uint8 shape (3, 1 or 4 channels) that ``size`` bytes fill exactly, if any.

    A guess to offer a user who asks to see bytes as pixels; never made
    automatically for features whose name does not say they hold an image.
    """
    shape = _square_guess(size)
    return RawShape(*shape) if shape else None


def parse_raw_shape(text: str) -> RawShape:
    """``"32x32x3"``, ``"480 x 640"`` (1 channel) or ``"64x64x1 uint16"`` as a RawShape (height first).

    Raises UsageError (a ValueError) with a one-line reason for anything else.
    """
    words = text.lower().replace("×", "x").replace(",", " ").split()
    dtype = "uint8"
    if words and words[-1] in _RAW_DTYPES:
        dtype = words.pop()
    parts = [p for p in "".join(words).split("x") if p]
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise UsageError(f"not a shape: {text.strip()!r} (expected height x width x channels, e.g. 32x32x3)")
    height, width, channels = (int(p) for p in (parts if len(parts) == 3 else [*parts, "1"]))
    if height < 1 or width < 1 or channels not in _RAW_MODES:
        raise UsageError(f"not a shape: {text.strip()!r} (sides of at least 1, 1 to 4 channels)")
    return RawShape(height, width, channels, dtype)


def _words(part: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in part.lower()).split()


def _names_an_image(key: str) -> bool:
    """Whether ``key`` says its bytes are pixels: ``image``, ``image_raw``, ``image/raw``, ``depth``..."""
    parts = key.split("/")
    last = _words(parts[-1])
    if _IMAGE_WORDS.intersection(last):
        return True
    return len(parts) > 1 and set(last) <= _GENERIC_WORDS and bool(_IMAGE_WORDS.intersection(_words(parts[-2])))


def _raw_shape(key: str, data: bytes, ints: dict[str, list[int]], hints: dict[str, str],
               raw_shape: RawShape | None, guess_square: bool) -> tuple | None:
    """The (height, width, channels, dtype) of a raw buffer under ``key``, if any fits.

    A shape the caller gives wins; then a declared shape, which rules the
    buffer out when it does not fit. The square guess is made only for a
    feature named like an image (or when the caller asks), and never for
    bytes with an image signature: those are a broken encoded image.
    """
    if raw_shape is not None:
        fitted = _fit_channels(len(data), raw_shape.height, raw_shape.width, raw_shape.channels,
                               (raw_shape.dtype,))
        if fitted is not None:
            return fitted
    for prefix in _shape_prefixes(key):
        declared = _declared_shape(prefix, ints)
        if declared is not None:
            return _fit_channels(len(data), *declared, _declared_dtypes(prefix, hints))
    if candidate_formats(data) or not (guess_square or _names_an_image(key)):
        return None
    return _square_guess(len(data))


def _image_ref(key: str, index: int, step: int | None, data: bytes, ints: dict[str, list[int]],
               hints: dict[str, str], raw_shape: RawShape | None, guess_square: bool) -> ImageRef | None:
    info = probe_image(data)
    if info is not None:
        return ImageRef(key, index, step, "encoded", info.format, info.width, info.height,
                        info.channels, data)
    shape = _raw_shape(key, data, ints, hints, raw_shape, guess_square)
    if shape is None or (raw_shape is None and is_text(data)):
        return None
    height, width, channels, dtype = shape
    return ImageRef(key, index, step, "raw", "RAW", width, height, channels, data, dtype)


def _int_features(features: Any) -> dict[str, list[int]]:
    """The short int lists (sizes, shapes) a raw image's shape is read from; long ones are never read."""
    return {key: feature_values(features[key])[1] for key in features
            if feature_dtype(features[key]) == "int64" and feature_length(features[key]) <= MAX_SHAPE_INTS}


MAX_SHAPE_INTS = 8  # an int list longer than this is no image size or shape


def _dtype_hints(features: Any) -> dict[str, str]:
    """``{key: "uint16"}`` for features like ``image/dtype`` naming a raw dtype this module reads."""
    hints = {}
    for key in features:
        if key.rsplit("/", 1)[-1].rsplit("_", 1)[-1] not in ("dtype", "type"):
            continue
        dtype, values = feature_values(features[key])
        if dtype == "bytes" and len(values) == 1 and len(values[0]) <= 16:
            name = bytes(values[0]).decode("latin-1").strip().lower().removeprefix("tf.").removeprefix("np.")
            if name in _RAW_DTYPES:
                hints[key] = name
    return hints


def _refs_in_feature(key: str, feature: Any, step: int | None, ints: dict[str, list[int]],
                     hints: dict[str, str], raw_shape: RawShape | None, guess_square: bool) -> list[ImageRef]:
    if feature_dtype(feature) != "bytes":
        return []
    dtype, values = feature_values(feature)
    refs = (_image_ref(key, i, step, value, ints, hints, raw_shape, guess_square) for i, value in enumerate(values))
    return [ref for ref in refs if ref is not None]


def find_images(decoded: DecodedRecord, *, raw_shape: RawShape | None = None,
                guess_square: bool = False) -> list[ImageRef]:
    """Every image in a record: encoded images and raw pixel buffers.

    Looks at an Example's features, a SequenceExample's context and each step
    of its feature lists, keys in sorted order; a tensor record shaped like
    an image is one raw image (key "tensor"). Shapes for raw buffers come
    from int64 features beside them (the context, for feature-list steps), a
    dtype from a ``dtype`` feature beside them; a square shape is guessed for
    features named like images. ``raw_shape`` (the user's word) makes every
    bytes value of exactly that size pixels; ``guess_square`` guesses a
    square shape whatever the feature's name. Never raises for odd data:
    what cannot be read is simply not an image. A payload that knows its
    images (an Event's summaries) gives them alone.
    """
    if decoded.images is not None:
        return decoded.images()
    if decoded.kind is RecordKind.TENSOR:
        from codec.decode.tensors import tensor_of

        return _tensor_image(tensor_of(decoded))
    features = record_features(decoded)
    if features is None:
        return []
    ints = _int_features(features)
    hints = _dtype_hints(features)
    refs: list[ImageRef] = []
    for key in sorted(features):
        refs.extend(_refs_in_feature(key, features[key], None, ints, hints, raw_shape, guess_square))
    lists = record_feature_lists(decoded)
    for key in sorted(lists) if lists is not None else ():
        for step, feature in enumerate(lists[key].feature):
            refs.extend(_refs_in_feature(key, feature, step, ints, hints, raw_shape, guess_square))
    return refs


def _tensor_image(array: np.ndarray) -> list[ImageRef]:
    """A tensor record's pixels: uint8/uint16 shaped HxW or HxWx1/3/4 (key "tensor")."""
    if not image_shaped(array):
        return []
    height, width = array.shape[:2]
    channels = array.shape[2] if array.ndim == 3 else 1
    dtype = array.dtype.name
    data = np.ascontiguousarray(array, dtype=_RAW_DTYPES[dtype]).tobytes()
    return [ImageRef("tensor", 0, None, "raw", "RAW", width, height, channels, data, dtype)]


def _auxiliary(key: str) -> bool:
    """Whether a key names a map beside the picture (``depth``, ``mask``, ``segmentation``...)."""
    return bool(_AUXILIARY_WORDS.intersection(_words(key)))


def _main_rank(ref: ImageRef) -> tuple[bool, int]:
    """Lower is the likelier main image: not a depth map or mask, then by name, then in colour."""
    if ref.key == "image/encoded":
        tier = 0
    elif ref.key.startswith("image/"):
        tier = 1
    elif ref.key == "image" or ref.key.endswith("/image"):
        tier = 2
    elif ref.channels in (3, 4):
        tier = 3
    else:
        tier = 4
    return _auxiliary(ref.key), tier


def main_image(refs: list[ImageRef]) -> ImageRef | None:
    """The record's main image, the one its boxes are on: outside feature lists, not a depth map, mask
    or segmentation; then ``image/encoded``, the first ``image/...``, a feature named ``image`` (TFDS),
    the first image in colour, the first image (in key order among equals)."""
    plain = [ref for ref in refs if ref.step is None]
    return min(plain, key=_main_rank) if plain else None


# ---------------------------------------------------------------- decoding


def _where(ref: ImageRef) -> str:
    step = f" step {ref.step}" if ref.step is not None else ""
    return f"{ref.format} image in {ref.key!r}{step} value {ref.value_index}"


def _raw_layout(ref: ImageRef) -> tuple[str, np.dtype]:
    """The Pillow mode and numpy dtype of a raw buffer; ImageDecodeError when its size does not fit them."""
    mode = _RAW_MODES.get(ref.channels or 0)
    if mode is None:
        raise ImageDecodeError(f"cannot show {_where(ref)}: {ref.channels} channels")
    dtype = _RAW_DTYPES.get(ref.dtype)
    if dtype is None:
        raise ImageDecodeError(f"cannot show {_where(ref)}: pixels of type {ref.dtype}")
    expected = ref.width * ref.height * ref.channels * dtype.itemsize
    if len(ref.data) != expected:
        of = "" if ref.dtype == "uint8" else f" {ref.dtype}"
        raise ImageDecodeError(
            f"cannot decode {_where(ref)}: expected {expected} bytes for "
            f"{ref.width}x{ref.height}x{ref.channels}{of}, found {len(ref.data)}")
    return mode, dtype


def _decode_raw(ref: ImageRef, stretch: str) -> Image.Image:
    mode, dtype = _raw_layout(ref)
    if dtype.itemsize == 1:
        return display_image(Image.frombytes(mode, (ref.width, ref.height), ref.data), stretch)
    pixels = np.frombuffer(ref.data, dtype).reshape(ref.height, ref.width, ref.channels)
    return display_image(pixels, stretch)


def _encoded_samples(ref: ImageRef) -> tuple[np.ndarray, tuple[str, ...], int]:
    """(H x W x C samples, channel names, bits per sample) of an encoded image, at its full depth."""
    full = png16_colour(ref.data) if png_bit_depth(ref.data) == 16 else None
    if full is not None:
        return full, {2: ("L", "A"), 3: ("R", "G", "B"), 4: ("R", "G", "B", "A")}[full.shape[2]], 16
    with open_image(ref.data, candidate_formats(ref.data) or [ref.format]) as image:
        check_pixels(*image.size)
        image.load()
        if image.mode in ("P", "PA"):  # a palette's entries are 8-bit colours
            image = image.convert("RGBA" if "transparency" in image.info or image.mode == "PA" else "RGB")
        pixels = np.asarray(image, dtype=np.uint8) if image.mode == "1" else np.asarray(image)
        bands = image.getbands()
    depth = png_bit_depth(ref.data)
    bits = 1 if image.mode == "1" else depth if depth in (2, 4, 16) else pixels.dtype.itemsize * 8
    names = ("L",) if len(bands) == 1 else tuple(bands)
    return pixels, names, bits


def pixel_values(ref: ImageRef) -> PixelValues:
    """The image's samples as decoded, at full depth (16-bit colour PNGs too), with their range.

    For the pixel inspector: what a pixel holds, not the 8 bits shown. Raises ImageDecodeError (or
    ImageTooLargeError) as ``decode_image`` does.
    """
    if ref.kind == "raw":
        _mode, dtype = _raw_layout(ref)
        pixels = np.frombuffer(ref.data, dtype).reshape(ref.height, ref.width, ref.channels)
        names, bits = tuple(_RAW_MODES[ref.channels]), dtype.itemsize * 8
    else:
        try:
            pixels, names, bits = _encoded_samples(ref)
        except ImageTooLargeError as exc:
            raise ImageTooLargeError(f"{_where(ref)}: {exc}") from None
        except Exception as exc:  # Pillow raises OSError, SyntaxError, struct.error, ...
            raise ImageDecodeError(f"cannot decode {_where(ref)}: {exc}") from exc
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    kind = {"f": "float", "i": "int"}.get(pixels.dtype.kind, "uint")
    finite = pixels[np.isfinite(pixels)] if kind == "float" else pixels
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    return PixelValues(pixels, names, bits, kind, low, high)


def _decode_encoded(ref: ImageRef, max_side: int | None, stretch: str) -> Image.Image:
    try:
        with open_image(ref.data, candidate_formats(ref.data) or [ref.format]) as image:
            if max_side is not None and image.format in ("JPEG", "MPO"):
                image.draft(image.mode, (max_side, max_side))  # DCT scaling: fast
            check_pixels(*image.size)  # after the draft: a JPEG scaled down at decoding is checked at its scale
            reduced = stretch == STRETCH_MINMAX and sixteen_bit_colour(image)
            image.load()
            shown = display_image(image, stretch)
            return stretch_8bit(shown) if reduced else shown
    except ImageTooLargeError as exc:
        raise ImageTooLargeError(f"{_where(ref)}: {exc}") from None
    except Exception as exc:  # Pillow raises OSError, SyntaxError, struct.error, ...
        raise ImageDecodeError(f"cannot decode {_where(ref)}: {exc}") from exc


def decode_image(ref: ImageRef, stretch: str = STRETCH_DTYPE) -> Image.Image:
    """The image's pixels in RGB, RGBA or L (high-depth pixels scaled, see ``display_image``).

    Raises ImageDecodeError when the bytes are corrupt, truncated or the
    format cannot be decoded.
    """
    check_stretch(stretch)
    return _decode_raw(ref, stretch) if ref.kind == "raw" else _decode_encoded(ref, None, stretch)


def thumbnail(ref: ImageRef, max_side: int, stretch: str = STRETCH_DTYPE) -> Image.Image:
    """The image scaled to fit ``max_side`` x ``max_side`` (never enlarged).

    JPEGs are decoded at a reduced scale directly. Raises ImageDecodeError
    like ``decode_image``.
    """
    if max_side < 1:
        raise UsageError(f"max_side must be at least 1, got {max_side}")
    check_stretch(stretch)
    image = decode_image(ref, stretch) if ref.kind == "raw" else _decode_encoded(ref, max_side, stretch)
    image.thumbnail((max_side, max_side))
    return image


def needs_frame(ref: ImageRef, image: Image.Image) -> bool:
    """Whether ``image`` (``ref`` decoded, e.g. a thumbnail) may vanish into a plain background: a 1-bit
    image (mostly white, often) or one of a single colour (all white, all black...)."""
    extrema = image.getextrema()
    bands = extrema if isinstance(extrema[0], tuple) else (extrema,)
    if all(low == high for low, high in bands):
        return True
    if ref.kind != "encoded":
        return False
    if png_bit_depth(ref.data) == 1:
        return True
    try:  # the header says the mode; the pixels are not decoded again
        with open_image(ref.data, candidate_formats(ref.data) or [ref.format]) as opened:
            return opened.mode == "1"
    except Exception:  # noqa: BLE001 - it decoded once already; a header that does not open again is no 1-bit image
        return False
