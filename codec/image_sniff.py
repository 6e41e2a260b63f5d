"""Encoded images recognised by content: magic bytes first, then Pillow reads the header.

Only the header is read, never the pixels, so this is cheap enough to run on
every bytes value of a record (table cells, statistics, finding images).
Knows nothing of records: :mod:`codec.decode` and :mod:`codec.images` both
build on it.
"""
from __future__ import annotations

import io
from typing import NamedTuple

from PIL import Image

__all__ = ["ImageInfo", "candidate_formats", "open_image", "probe_image", "sniff_image"]

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


def open_image(data: bytes, formats: list[str]) -> Image.Image:
    """A lazy Pillow image of ``data``, tried as ``formats`` only; Pillow's errors pass through."""
    return Image.open(io.BytesIO(data), formats=formats)


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
    except Exception:  # Pillow raises many types (incl. DecompressionBombError) on bad headers
        return None
    return ImageInfo(name, width, height, _mode_channels(mode))


def sniff_image(data: bytes) -> str | None:
    """The image format of ``data`` ("JPEG", "PNG", ...) decided by content, else None."""
    info = probe_image(data)
    return info.format if info else None
