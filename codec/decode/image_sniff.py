"""Encoded images recognised by content: magic bytes first, then Pillow reads the header.

Only the header is read, never the pixels, so this is cheap enough to run on
every bytes value of a record (table cells, statistics, finding images).
Knows nothing of records: :mod:`codec.decode.decoder` and :mod:`codec.decode.images` both
build on it.
"""
from __future__ import annotations

import io
import re
import warnings
from typing import NamedTuple

from PIL import Image

from codec.errors import ImageTooLargeError

__all__ = ["MAX_PIXELS", "ImageInfo", "candidate_formats", "check_pixels", "open_image", "probe_image",
           "sniff_image"]

# Images whose header claims more pixels are not decoded (one RGB image of this size is 192 MB of pixels);
# Pillow's own bomb limits (a warning at 89 Mpixel, an error at twice that) sit above it.
MAX_PIXELS = 1 << 26
_BOMB_PIXELS = re.compile(r"\((\d+) pixels\)")

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


class ImageInfo(NamedTuple):
    """What an encoded image's header says, without decoding its pixels."""

    format: str
    width: int
    height: int
    channels: int | None


def candidate_formats(data: bytes) -> list[str]:
    """Formats whose magic bytes ``data`` starts with (usually none)."""
    return [name for name, offset, magic in _SIGNATURES if data.startswith(magic, offset)]


def open_image(data: bytes, formats: list[str] | None) -> Image.Image:
    """A lazy Pillow image of ``data``, tried as ``formats`` only (None: every format); Pillow's errors pass through.

    Pillow's decompression-bomb warning is not printed (:func:`check_pixels` is the limit here), and its
    bomb error becomes :class:`ImageTooLargeError`.
    """
    try:
        # The filter is process-wide: two threads opening at once may leave it set a little longer, or let one
        # warning through; either is harmless, and it is what catch_warnings offers before Python 3.14.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data), formats=formats)
    except Image.DecompressionBombError as exc:
        found = _BOMB_PIXELS.search(str(exc))
        claimed = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
        raise ImageTooLargeError(f"image not decoded: its header claims {claimed}, {_LIMIT}") from None


def check_pixels(width: int, height: int) -> None:
    """Raise :class:`ImageTooLargeError` for an image of more than MAX_PIXELS, before its pixels are decoded."""
    if width * height > MAX_PIXELS:
        raise ImageTooLargeError(f"{width}x{height} image not decoded: {_LIMIT}")


_LIMIT = f"more than the {MAX_PIXELS >> 20} Mpixel ({MAX_PIXELS:,} pixels) decoded here"


def _mode_channels(mode: str) -> int | None:
    try:
        return Image.getmodebands(mode)
    except (KeyError, ValueError):
        return None


def probe_image(data: bytes) -> ImageInfo | None:
    """Format, size and channels of an encoded image, or None if ``data`` is not one."""
    data = bytes(data)
    formats = candidate_formats(data)
    if not formats:
        return None
    try:
        with open_image(data, formats) as image:
            name, (width, height), mode = image.format or formats[0], image.size, image.mode
    except Exception:  # noqa: BLE001 — Pillow raises many types (incl. DecompressionBombError) on bad headers
        return None
    return ImageInfo(name, width, height, _mode_channels(mode))


def sniff_image(data: bytes) -> str | None:
    """The image format of ``data`` ("JPEG", "PNG", ...) decided by content, else None."""
    info = probe_image(data)
    return info.format if info else None
