"""How pixels of any depth become 8 bits for a screen: by their type's range, or stretched over the
image's own min..max.

16-bit, 32-bit and float pixels (Pillow modes I;16, I, F; numpy arrays) map linearly onto 0..255;
colour channels share one range (hue is kept) and alpha is scaled by its type. Pillow and numpy only.
"""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageFile

from codec.errors import UsageError

__all__ = ["STRETCH_DTYPE", "STRETCH_MINMAX", "check_stretch", "display_image", "sixteen_bit_colour",
           "stretch_8bit"]

STRETCH_DTYPE = "dtype"  # 16-bit pixels scaled by 255/65535, float by 0..1
STRETCH_MINMAX = "minmax"  # high-depth pixels scaled from the image's own min..max
_STRETCHES = (STRETCH_DTYPE, STRETCH_MINMAX)
_HIGH_DEPTH_MODES = {"I", "I;16", "I;16B", "I;16L", "I;16N", "F"}


def check_stretch(stretch: str) -> None:
    """Refuse a ``stretch`` that is neither :data:`STRETCH_DTYPE` nor :data:`STRETCH_MINMAX` (one line)."""
    if stretch not in _STRETCHES:
        raise UsageError(f"stretch must be one of {', '.join(_STRETCHES)}, got {stretch!r}")


def _dtype_range(pixels: np.ndarray) -> tuple[float, float] | None:
    """The values a pixel type spans (uint16: 0..65535), None when the type says nothing useful.

    Integers wider than 16 bits count as 16-bit when their values fit (Pillow's
    "I" mode often holds 16-bit data), floats as 0..1 when their values do.
    """
    kind, size = pixels.dtype.kind, pixels.dtype.itemsize
    if kind == "b":
        return 0.0, 1.0
    if kind in "ui" and size <= 2:
        info = np.iinfo(pixels.dtype)
        return float(info.min), float(info.max)
    if not pixels.size:
        return None
    if kind in "ui":
        return (0.0, 65535.0) if pixels.min() >= 0 and pixels.max() <= 65535 else None
    if kind == "f":
        finite = pixels[np.isfinite(pixels)]
        if finite.size and finite.min() >= 0 and finite.max() <= 1:
            return 0.0, 1.0
    return None


def _display_range(pixels: np.ndarray, stretch: str) -> tuple[float, float]:
    """The values shown as 0 and 255: the type's range, or the image's own min..max.

    An image of one value keeps the type's range (a flat 16-bit image is grey,
    not black); without one it is mid grey.
    """
    natural = _dtype_range(pixels)
    if stretch == STRETCH_MINMAX or natural is None:
        finite = pixels[np.isfinite(pixels)] if pixels.dtype.kind == "f" else pixels
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
            if high > low:
                return low, high
            if natural is None:
                return low - 0.5, high + 0.5
        elif natural is None:
            return 0.0, 1.0
    return natural


def _to_uint8(pixels: np.ndarray, low: float, high: float) -> np.ndarray:
    """``pixels`` mapped linearly from low..high onto 0..255, rounded and clipped (NaN as 0)."""
    out = pixels.astype(np.float32)
    out -= low
    out *= np.float32(255.0 / (high - low))
    np.nan_to_num(out, copy=False, nan=0.0, posinf=255.0, neginf=0.0)
    np.clip(out, 0.0, 255.0, out=out)
    return np.rint(out).astype(np.uint8)


def _array_for_display(pixels: np.ndarray, stretch: str) -> Image.Image:
    """HxW or HxWxC (C 1-4) pixels of any numeric type as an L, RGB or RGBA image.

    Colour channels share one range (hue is kept); alpha is scaled by its type.
    """
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    if pixels.ndim not in (2, 3) or (pixels.ndim == 3 and pixels.shape[2] not in (2, 3, 4)) \
            or pixels.dtype.kind not in "buif":
        raise UsageError(f"cannot show an array of {pixels.dtype} and shape {pixels.shape} as an image")
    if pixels.dtype != np.uint8:
        alpha = pixels.ndim == 3 and pixels.shape[2] in (2, 4)
        colour = pixels[..., :-1] if alpha else pixels
        out = _to_uint8(colour, *_display_range(colour, stretch))
        if alpha:
            opacity = pixels[..., -1:]
            out = np.concatenate([out, _to_uint8(opacity, *_display_range(opacity, STRETCH_DTYPE))], axis=2)
        pixels = out
    image = Image.fromarray(np.ascontiguousarray(pixels))
    return image.convert("RGBA") if image.mode == "LA" else image


def stretch_8bit(image: Image.Image) -> Image.Image:
    """An 8-bit image (of 16-bit colour reduced by Pillow) stretched over its own colour range."""
    pixels = np.asarray(image)
    alpha = image.mode == "RGBA"
    colour = pixels[..., :3] if alpha else pixels
    low, high = int(colour.min()), int(colour.max())
    if high <= low:
        return image
    out = _to_uint8(colour, low, high)
    if alpha:
        out = np.concatenate([out, pixels[..., 3:]], axis=2)
    return Image.fromarray(np.ascontiguousarray(out))


def display_image(image: Image.Image | np.ndarray, stretch: str = STRETCH_DTYPE) -> Image.Image:
    """``image`` (a Pillow image or a numpy array) as 8-bit L, RGB or RGBA for a screen.

    High-depth pixels (Pillow modes I;16, I;16B, I;16L, I, F; arrays of
    uint16, int32, float...) are scaled to 0..255 by their type's range
    (``stretch="dtype"``: 24200 of 65535 is grey 94) or over the image's own
    min..max (``stretch="minmax"``: a low-contrast depth map or scan uses the
    whole scale). 8-bit images are returned as they are.
    """
    check_stretch(stretch)
    if isinstance(image, np.ndarray):
        return _array_for_display(image, stretch)
    if image.mode in ("RGB", "RGBA", "L"):
        return image
    if image.mode in _HIGH_DEPTH_MODES:
        return _array_for_display(np.asarray(image), stretch)
    if image.mode == "P":
        return image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode == "1":
        return image.convert("L")
    return image.convert("RGBA" if "A" in image.getbands() else "RGB")


def sixteen_bit_colour(image: ImageFile.ImageFile) -> bool:
    """Whether Pillow is about to reduce 16-bit colour samples to 8 bits (PNG, TIFF RGB;16...)."""
    for tile in image.tile:
        args = tile[3] if len(tile) > 3 else None
        rawmode = args[0] if isinstance(args, tuple) and args else args
        if isinstance(rawmode, str) and ";16" in rawmode and image.mode in ("RGB", "RGBA"):
            return True
    return False
