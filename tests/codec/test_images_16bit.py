"""High-depth images (16-bit PNG and TIFF, raw uint16/float32 buffers, arrays) become 8 bits for display."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from codec.decode.decoder import DecodedRecord
from codec.decode.image_display import display_image
from codec.decode.images import ImageRef, decode_image, find_images, pixel_values, thumbnail
from tests.builders import bytestrings, decoded_example, ints

FLAT = 24200
FLAT_GREY = round(FLAT * 255 / 65535)  # 94


def _pillow(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def _png16(pixels: np.ndarray) -> bytes:
    """A 16-bit PNG of HxW or HxWxC (C 2-4) uint16 pixels, written by hand (Pillow writes only grey ones)."""
    height, width = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    colour_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + pixels[y].astype(">u2").tobytes() for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 16, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _tiff16_rgb(pixels: np.ndarray) -> bytes:
    """An uncompressed little-endian 16-bit RGB TIFF of HxWx3 uint16 pixels, written by hand."""
    height, width, _ = pixels.shape
    data = pixels.astype("<u2").tobytes()
    entries = 9
    bits_at = 8 + 2 + entries * 12 + 4
    data_at = bits_at + 6

    def short(tag: int, value: int) -> bytes:
        return struct.pack("<HHIHH", tag, 3, 1, value, 0)

    def long(tag: int, value: int, kind: int = 4, count: int = 1) -> bytes:
        return struct.pack("<HHII", tag, kind, count, value)

    ifd = [long(256, width), long(257, height), long(258, bits_at, kind=3, count=3), short(259, 1),
           short(262, 2), long(273, data_at), short(277, 3), long(278, height), long(279, len(data))]
    return (b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", entries) + b"".join(ifd) + b"\x00" * 4
            + struct.pack("<HHH", 16, 16, 16) + data)


def _only(decoded: DecodedRecord) -> ImageRef:
    (ref,) = find_images(decoded)
    return ref


def _low_contrast(shape=(6, 8)) -> np.ndarray:
    """16-bit values from 1000 to 1300: nearly black at the type's range."""
    return (1000 + np.arange(np.prod(shape)) * 300 // (np.prod(shape) - 1)).reshape(shape).astype(np.uint16)


# ---------------------------------------------------------------- encoded


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
def test_flat_sixteen_bit_grey_is_grey_not_black(fmt):
    data = _pillow(Image.fromarray(np.full((5, 7), FLAT, np.uint16)), fmt)
    ref = _only(decoded_example(image__encoded=bytestrings(data)))
    assert (ref.format, ref.width, ref.height) == (fmt, 7, 5)
    for stretch in ("dtype", "minmax"):  # one value has no range of its own: the type's range decides
        image = decode_image(ref, stretch)
        assert image.mode == "L" and image.size == (7, 5)
        assert set(np.asarray(image).ravel().tolist()) == {FLAT_GREY}
    assert FLAT_GREY == 94
    small = thumbnail(ref, 3)
    assert max(small.size) == 3 and set(np.asarray(small).ravel().tolist()) == {FLAT_GREY}


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
def test_minmax_stretch_spans_the_whole_scale(fmt):
    pixels = _low_contrast()
    ref = _only(decoded_example(depth=bytestrings(_pillow(Image.fromarray(pixels), fmt))))
    by_type = np.asarray(decode_image(ref))
    assert by_type.min() == round(1000 * 255 / 65535) and by_type.max() == round(1300 * 255 / 65535)
    stretched = np.asarray(decode_image(ref, "minmax"))
    assert stretched.min() == 0 and stretched.max() == 255
    assert (np.diff(stretched.ravel().astype(int)) >= 0).all()  # order kept
    assert np.asarray(thumbnail(ref, 8, "minmax")).max() == 255


def test_big_endian_sixteen_bit_png_reads_the_right_bytes():
    ref = _only(decoded_example(image=bytestrings(_png16(np.full((3, 4), FLAT, np.uint16)))))
    assert set(np.asarray(decode_image(ref)).ravel().tolist()) == {FLAT_GREY}


@pytest.mark.parametrize("make", [_png16, _tiff16_rgb], ids=["png", "tiff"])
def test_sixteen_bit_rgb_keeps_its_colour(make):
    pixels = np.zeros((4, 5, 3), np.uint16)
    pixels[..., 0], pixels[..., 1], pixels[..., 2] = 60000, 30000, 1000
    ref = _only(decoded_example(image=bytestrings(make(pixels))))
    image = decode_image(ref)
    assert image.mode == "RGB"
    r, g, b = np.asarray(image)[0, 0].tolist()
    assert abs(r - 60000 * 255 / 65535) <= 1 and abs(g - 30000 * 255 / 65535) <= 1 and b <= 4
    pixels[0, 0] = (2000, 2000, 2000)  # minmax: the colour channels' own range, shared
    stretched = np.asarray(decode_image(_only(decoded_example(image=bytestrings(make(pixels)))), "minmax"))
    assert stretched.max() == 255 and stretched[..., 2].min() == 0


def test_float_tiff_by_unit_range_or_own_range():
    unit = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    ref = _only(decoded_example(image=bytestrings(_pillow(Image.fromarray(unit), "TIFF"))))
    assert np.asarray(decode_image(ref)).ravel().tolist() == np.rint(unit.ravel() * 255).astype(int).tolist()
    metres = unit * 40 + 10  # 10..50: no type range, so the values' own
    ref = _only(decoded_example(image=bytestrings(_pillow(Image.fromarray(metres), "TIFF"))))
    shown = np.asarray(decode_image(ref))
    assert shown.min() == 0 and shown.max() == 255


# ---------------------------------------------------------------- raw buffers


def test_raw_uint16_from_declared_shape():
    pixels = np.full((4, 6), FLAT, "<u2")
    pixels[0, 0] = 65535
    ref = _only(decoded_example(image__raw=bytestrings(pixels.tobytes()), image__height=ints(4), image__width=ints(6)))
    assert (ref.kind, ref.dtype, ref.width, ref.height, ref.channels) == ("raw", "uint16", 6, 4, 1)
    shown = np.asarray(decode_image(ref))
    assert shown[0, 0] == 255 and shown[1, 1] == FLAT_GREY
    rgb = np.full((2, 3, 3), FLAT, "<u2")
    ref = _only(decoded_example(image=bytestrings(rgb.tobytes()), height=ints(2), width=ints(3), channels=ints(3)))
    assert (ref.dtype, ref.channels) == ("uint16", 3)
    assert decode_image(ref).mode == "RGB" and np.asarray(decode_image(ref)).max() == FLAT_GREY


def test_raw_dtype_feature_decides_between_equal_lengths():
    # 64 bytes for 4x4: uint8 RGBA by length alone; a dtype feature says float32 grey instead.
    depth = np.linspace(0, 1, 16, dtype="<f4").reshape(4, 4)
    ref = _only(decoded_example(depth=bytestrings(depth.tobytes()), depth_height=ints(4), depth_width=ints(4),
                        depth_channels=ints(1), depth_dtype=bytestrings(b"float32")))
    assert ref.dtype == "float32"
    assert np.asarray(decode_image(ref)).ravel().tolist() == np.rint(depth.ravel() * 255).astype(int).tolist()
    as_rgba = _only(decoded_example(depth=bytestrings(depth.tobytes()), depth_height=ints(4), depth_width=ints(4)))
    assert (as_rgba.dtype, as_rgba.channels) == ("uint8", 4)  # no dtype feature: uint8 first


def test_raw_uint16_of_wrong_length_is_a_decode_error():
    from codec.errors import ImageDecodeError

    ref = ImageRef("image", 0, None, "raw", "RAW", 4, 4, 1, bytes(10), "uint16")
    with pytest.raises(ImageDecodeError, match="expected 32 bytes for 4x4x1 uint16, found 10"):
        decode_image(ref)


# ---------------------------------------------------------------- arrays


@pytest.mark.parametrize("dtype, value, grey", [
    (np.uint16, FLAT, FLAT_GREY), (np.int16, 0, 128), (np.uint8, 94, 94), (np.bool_, True, 255),
    (np.int32, FLAT, FLAT_GREY), (np.float32, 0.5, 128),
])
def test_arrays_by_their_type(dtype, value, grey):
    image = display_image(np.full((3, 2), value, dtype))
    assert image.mode == "L" and image.size == (2, 3)
    assert set(np.asarray(image).ravel().tolist()) == {grey}


def test_array_channels_and_alpha():
    rgba = np.zeros((2, 2, 4), np.uint16)
    rgba[..., 0] = np.array([[1000, 1100], [1200, 1300]])
    rgba[..., 3] = 65535
    image = display_image(rgba, "minmax")
    assert image.mode == "RGBA"
    pixels = np.asarray(image)
    assert pixels[..., 3].tolist() == [[255, 255], [255, 255]]  # alpha is not stretched
    assert pixels[1, 1, 0] == 255 and pixels[0, 0, 1] == 0
    assert display_image(np.zeros((2, 2, 2), np.uint16)).mode == "RGBA"  # grey + alpha
    assert display_image(np.zeros((2, 2, 1), np.float32)).mode == "L"
    with pytest.raises(ValueError, match="shape"):
        display_image(np.zeros((2, 2, 5), np.uint16))
    with pytest.raises(ValueError, match="stretch"):
        display_image(np.zeros((2, 2), np.uint16), "auto")


def test_nan_and_inf_do_not_break_the_range():
    depth = np.array([[np.nan, 1.0], [3.0, np.inf]], np.float32)
    pixels = np.asarray(display_image(depth)).tolist()
    assert pixels[0][1] == 0 and pixels[1][0] == 255 and pixels[0][0] == 0 and pixels[1][1] == 255


# ---------------------------------------------------------------- the pixel inspector's values


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_pixel_values_are_the_decoded_samples_at_full_depth(channels):
    rng = np.random.default_rng(channels)
    shape = (48, 64) if channels == 1 else (48, 64, channels)
    pixels = rng.integers(0, 65536, shape, dtype=np.uint16)
    values = pixel_values(_only(decoded_example(image=bytestrings(_png16(pixels)))))
    assert values.bits == 16 and values.kind == "uint" and values.depth_text() == "16-bit"
    assert np.array_equal(values.pixels.reshape(pixels.shape), pixels)  # not the 8 bits shown
    assert (values.low, values.high) == (pixels.min(), pixels.max())
    assert values.range_text() == f"values {pixels.min():,}–{pixels.max():,}"
    assert values.at(5, 7) == np.atleast_1d(pixels[7, 5]).tolist()
    assert values.at(64, 0) is None and values.value_text(0, 48) is None
    names = {1: (), 2: ("L", "A"), 3: ("R", "G", "B"), 4: ("R", "G", "B", "A")}[channels]
    want = " ".join(f"{n} {v:,}" for n, v in zip(names, np.atleast_1d(pixels[7, 5]).tolist())) \
        if names else f"{int(pixels[7, 5]):,}"
    assert values.value_text(5, 7) == want


def test_pixel_values_of_raw_float_one_bit_and_eight_bit_images():
    floats = np.linspace(-1.5, 2.5, 12, dtype=np.float32).reshape(3, 4)
    ref = ImageRef("tensor", 0, None, "raw", "RAW", 4, 3, 1, floats.tobytes(), "float32")
    values = pixel_values(ref)
    assert values.depth_text() == "32-bit float" and values.range_text() == "values -1.5–2.5"
    assert values.value_text(3, 2) == "2.5"
    one_bit = pixel_values(_only(decoded_example(image=bytestrings(_pillow(Image.new("1", (9, 9), 1), "PNG")))))
    assert (one_bit.bits, one_bit.low, one_bit.high, one_bit.value_text(0, 0)) == (1, 1, 1, "1")
    rgb = pixel_values(_only(decoded_example(image=bytestrings(_pillow(Image.new("RGB", (9, 9), (1, 2, 3)), "PNG")))))
    assert (rgb.depth_text(), rgb.value_text(4, 4), rgb.range_text()) == ("8-bit", "R 1 G 2 B 3", "values 1–3")
