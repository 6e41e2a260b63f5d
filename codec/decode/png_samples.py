"""PNG samples at their full depth: Pillow keeps only 8 bits of a 16-bit colour PNG; these read all 16.

Used by TFDS images (which TensorFlow decodes to uint16) and the pixel inspector's values.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["PNG_SIGNATURE", "png16_colour", "png_bit_depth", "png_stream"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bit_depth(data: bytes) -> int:
    """Bits per sample of PNG bytes (1, 2, 4, 8 or 16) from its IHDR; 0 for bytes that are not a PNG."""
    return data[24] if len(data) > 25 and data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR" else 0


def png16_colour(data: bytes) -> np.ndarray | None:
    """16-bit colour PNG samples in full (Pillow keeps only 8 bits of 16-bit colour); None for greyscale,
    which Pillow reads in full.

    Pillow's own compiled PNG decoder does the work, through :func:`PIL.Image.frombytes` on the IDAT
    stream: colour twice, once keeping each sample's high byte and once its low byte (the unfiltering works
    on whole pixels, so both are exact), grey with alpha once, as one big-endian 32-bit int per pixel.
    """
    from PIL import Image

    from codec.decode.image_sniff import check_pixels

    width, height, depth, colour, interlace, stream = png_stream(data)
    if colour not in (2, 4, 6):
        return None
    check_pixels(width, height)
    if not width or not height:
        raise ValueError(f"a {width}x{height} PNG is empty")
    if colour == 4:
        packed = np.asarray(Image.frombytes("I", (width, height), stream, "zip", "I;32B", interlace))
        out = np.empty((height, width, 2), np.uint16)
        out[..., 0] = packed >> 16
        out[..., 1] = packed & 0xFFFF
        return out
    mode = "RGB" if colour == 2 else "RGBA"
    out = np.asarray(Image.frombytes(mode, (width, height), stream, "zip", mode + ";16B", interlace), np.uint16)
    out <<= 8
    out |= np.asarray(Image.frombytes(mode, (width, height), stream, "zip", mode + ";16L", interlace))
    return out


def png_stream(data: bytes) -> tuple[int, int, int, int, int, bytes]:
    """A PNG's width, height, bit depth, colour type and interlace method, and its IDAT chunks joined;
    each chunk's CRC checked, as Pillow checks them."""
    pos, header, parts = 8, None, []
    while pos + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) < length or pos + 12 + length > len(data):
            break
        stored = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if kind in (b"IHDR", b"IDAT") and zlib.crc32(body, zlib.crc32(kind)) != stored:
            raise ValueError(f"the PNG's {kind.decode()} chunk fails its CRC")
        if kind == b"IHDR" and length == 13:
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            parts.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("the PNG has no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    return width, height, depth, colour, interlace, b"".join(parts)
