"""Pillow images to QImages: the one place pixels cross from the codec into Qt.

Used by the image preview and by the thumbnail workers; a QImage (unlike a
QPixmap) may be made on any thread.
"""
from __future__ import annotations

from typing import NamedTuple

from PIL import Image
from PySide6.QtGui import QImage

from codec.decode.image_display import STRETCH_DTYPE, display_image
from codec.decode.images import ImageRef, decode_image


def to_qimage(image: Image.Image, stretch: str = STRETCH_DTYPE) -> QImage:
    """A deep copy of a Pillow image as a QImage; high-depth modes (I;16, I, F...) scaled to 8 bits by
    ``codec.decode.image_display.display_image`` with ``stretch``."""
    formats = {"RGB": QImage.Format.Format_RGB888, "RGBA": QImage.Format.Format_RGBA8888,
               "L": QImage.Format.Format_Grayscale8}
    if image.mode not in formats:
        image = display_image(image, stretch)
    if image.mode not in formats:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    data = image.tobytes()
    bytes_per_line = len(data) // image.height if image.height else 0
    return QImage(data, image.width, image.height, bytes_per_line, formats[image.mode]).copy()


class Decode(NamedTuple):
    """One image to decode, and how to scale its high-depth pixels."""

    ref: ImageRef
    stretch: str


def decode_to_qimage(job: Decode) -> QImage:
    """Decode ``job.ref`` and convert it; safe on a pool thread."""
    return to_qimage(decode_image(job.ref, job.stretch), job.stretch)
