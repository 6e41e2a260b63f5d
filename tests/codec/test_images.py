"""Tests for codec.decode.images: finding, sniffing and decoding images, and their boxes."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, JpegImagePlugin

from codec.decode.decoder import DecodedRecord, decode_record
from codec.decode.example_proto import SequenceExample
from codec.decode.image_boxes import BoundingBox, find_boxes
from codec.decode.image_sniff import probe_image, sniff_image
from codec.decode.images import (
    ImageRef,
    RawShape,
    decode_image,
    find_images,
    guess_raw_shape,
    main_image,
    needs_frame,
    parse_raw_shape,
    thumbnail,
)
from codec.errors import ImageDecodeError
from tests.builders import FIXTURES, MANIFEST, bytestrings, decoded_example, floats, ints

# ---------------------------------------------------------------- helpers


def _framed_records(name: str) -> list[bytes]:
    """Records of an intact, uncompressed fixture (the reader is tested elsewhere)."""
    stream = (FIXTURES / name).read_bytes()
    records, pos = [], 0
    while pos < len(stream):
        (length,) = struct.unpack_from("<Q", stream, pos)
        records.append(stream[pos + 12:pos + 12 + length])
        pos += 12 + length + 4
    assert pos == len(stream)
    assert len(records) == len(MANIFEST[name]["records"])
    return records


def _decoded_fixture(name: str) -> list[DecodedRecord]:
    return [decode_record(r) for r in _framed_records(name)]


def _encode(image: Image.Image, fmt: str, **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def _gradient(width: int, height: int, mode: str = "RGB") -> Image.Image:
    x = np.linspace(0, 255, width, dtype=np.uint8)
    y = np.linspace(0, 255, height, dtype=np.uint8)
    rgb = np.stack(np.broadcast_arrays(x[None, :], y[:, None], x[None, :] // 2 + 60), axis=2)
    return Image.fromarray(np.ascontiguousarray(rgb)).convert(mode)


def _translucent(width: int, height: int) -> Image.Image:
    image = _gradient(width, height)
    image.putalpha(_gradient(width, height, "L"))
    return image


def _features(decoded: DecodedRecord):
    return decoded.message.features.feature


# ---------------------------------------------------------------- sniffing


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "GIF", "BMP", "WEBP", "TIFF"])
def test_sniff_and_probe_by_content(fmt):
    data = _encode(_gradient(20, 12), fmt)
    assert sniff_image(data) == fmt
    info = probe_image(data)
    assert (info.format, info.width, info.height) == (fmt, 20, 12)


def test_probe_reports_channels():
    assert probe_image(_encode(_gradient(4, 4, "L"), "PNG")).channels == 1
    assert probe_image(_encode(_gradient(4, 4, "RGBA"), "PNG")).channels == 4
    assert probe_image(_encode(_gradient(4, 4), "JPEG")).channels == 3


def test_sniff_file_that_is_a_jpeg():
    assert sniff_image((FIXTURES / "not_a_tfrecord.jpg").read_bytes()) == "JPEG"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"daisy",
        b"\xff\xd8\xff",  # JPEG magic and nothing else
        b"\xff\xd8\xff\xe0" + bytes(40),
        b"\x89PNG\r\n\x1a\n" + bytes(10),
        b"BM is not a bitmap",
        b"GIF89a",
        b"RIFF\x00\x00\x00\x00WEBPjunk",
        bytes(range(256)),
    ],
)
def test_sniff_rejects_non_images(data):
    assert sniff_image(data) is None
    assert probe_image(data) is None


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data:UserWarning")
@settings(max_examples=200)
@given(st.sampled_from([b"", b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"BM",
                        b"II*\x00", b"MM\x00*", b"RIFF\x00\x00\x00\x00WEBP"]),
       st.binary(max_size=200))
def test_sniff_never_raises_on_junk_after_magic(magic, tail):
    assert sniff_image(magic + tail) in (None, "JPEG", "PNG", "GIF", "BMP", "TIFF", "WEBP")


# ---------------------------------------------------------------- finding


def test_flowers_jpegs_match_their_decode():
    for decoded in _decoded_fixture("flowers_jpeg.tfrecord"):
        (ref,) = find_images(decoded)
        assert (ref.key, ref.value_index, ref.step, ref.kind, ref.format) == (
            "encoded", 0, None, "encoded", "JPEG")
        assert ref.data == _features(decoded)["encoded"].bytes_list.value[0]
        image = decode_image(ref)
        assert image.size == (ref.width, ref.height)
        assert image.mode == "RGB"


def test_text_bytes_are_not_images():
    decoded = _decoded_fixture("flowers_jpeg.tfrecord")[0]
    text = _features(decoded)["text"].bytes_list.value[0]
    assert text and sniff_image(text) is None
    assert "text" not in {ref.key for ref in find_images(decoded)}


def test_sequence_example_frames_are_png_steps():
    for decoded, expected in zip(_decoded_fixture("sequence_examples.tfrecord"),
                                 MANIFEST["sequence_examples.tfrecord"]["records"]):
        frames = expected["json"]["featureLists"]["featureList"]["frames"]["feature"]
        refs = find_images(decoded)
        assert [ref.step for ref in refs] == list(range(len(frames)))
        assert all(ref.key == "frames" and ref.format == "PNG" for ref in refs)
        steps = decoded.message.feature_lists.feature_list["frames"].feature
        for ref in refs:
            assert ref.data == steps[ref.step].bytes_list.value[0]
            assert decode_image(ref).size == (ref.width, ref.height)
        assert main_image(refs) is None  # frames live in feature lists, none is the main image


def test_raw_pixels_square_guess_for_a_feature_named_image():
    # The fixture has only "image" (3072 bytes) and "label": the name says pixels, the length a 32x32x3 square.
    for decoded in _decoded_fixture("raw_pixels_32x32x3.tfrecord"):
        (ref,) = find_images(decoded)
        assert (ref.key, ref.kind, ref.format) == ("image", "raw", "RAW")
        assert (ref.height, ref.width, ref.channels) == (32, 32, 3)
        image = decode_image(ref)
        assert (image.mode, image.size) == ("RGB", (32, 32))
        assert image.tobytes() == ref.data == _features(decoded)["image"].bytes_list.value[0]


def test_raw_pixels_shape_from_prefixed_siblings():
    pixels = bytes(range(24)) * 3  # 6 wide, 4 high, 3 channels
    (ref,) = find_images(decoded_example(image__raw=bytestrings(pixels), image__height=ints(4),
                                 image__width=ints(6)))
    assert (ref.key, ref.width, ref.height, ref.channels) == ("image/raw", 6, 4, 3)
    assert decode_image(ref).getpixel((1, 0)) == (3, 4, 5)


def test_raw_pixels_channels_from_sibling_or_length():
    grey = bytes(range(24))
    (ref,) = find_images(decoded_example(image__raw=bytestrings(grey), image__height=ints(4),
                                 image__width=ints(6), image__channels=ints(1)))
    assert ref.channels == 1 and decode_image(ref).mode == "L"
    (ref,) = find_images(decoded_example(pixels=bytestrings(grey), height=ints(4), width=ints(6)))
    assert ref.channels == 1
    (ref,) = find_images(decoded_example(mask=bytestrings(bytes(96)), mask_height=ints(4),
                                 mask_width=ints(6), mask_depth=ints(4)))
    assert ref.channels == 4 and decode_image(ref).mode == "RGBA"


def test_raw_pixels_with_shape_that_does_not_fit_are_not_images():
    # 32*32*3 bytes would make a square guess, but the record says 10x10.
    decoded = decoded_example(image=bytestrings(bytes(range(256)) * 12), height=ints(10), width=ints(10))
    assert find_images(decoded) == []
    wrong_channels = decoded_example(image=bytestrings(bytes(range(256)) * 12), height=ints(32),
                             width=ints(32), channels=ints(1))
    assert find_images(wrong_channels) == []


def test_square_guess_needs_a_plausible_size():
    assert find_images(decoded_example(image=bytestrings(bytes(range(16))))) == []  # 4x4x1: a hash
    (ref,) = find_images(decoded_example(image=bytestrings(bytes(range(64)))))  # 8x8x1
    assert (ref.width, ref.height, ref.channels) == (8, 8, 1)


@pytest.mark.parametrize("key", ["tile", "digest", "embedding", "image/key/sha256", "label/raw", "encoded"])
def test_no_square_guess_for_features_not_named_as_images(key):
    decoded = decoded_example(**{key.replace("/", "__"): bytestrings(bytes(range(64)), bytes(range(192)))})
    assert find_images(decoded) == []
    (ref8, ref192) = find_images(decoded, guess_square=True)  # the caller asks
    assert [(r.width, r.height, r.channels) for r in (ref8, ref192)] == [(8, 8, 1), (8, 8, 3)]


@pytest.mark.parametrize("key", ["image", "image_raw", "image/raw", "pixels", "depth_map", "frames", "img/data"])
def test_square_guess_for_features_named_as_images(key):
    (ref,) = find_images(decoded_example(**{key.replace("/", "__"): bytestrings(bytes(range(192)))}))
    assert (ref.key, ref.width, ref.height, ref.channels) == (key, 8, 8, 3)


def test_raw_shape_from_the_caller():
    values = bytestrings(bytes(range(24)), bytes(range(25)))
    decoded = decoded_example(blob=values)
    assert find_images(decoded) == []
    (ref,) = find_images(decoded, raw_shape=RawShape(4, 6, 1))  # only the value of exactly that size
    assert (ref.value_index, ref.width, ref.height, ref.channels, ref.dtype) == (0, 6, 4, 1, "uint8")
    assert np.asarray(decode_image(ref)).tolist() == np.arange(24).reshape(4, 6).tolist()
    assert guess_raw_shape(3 * 32 * 32) == RawShape(32, 32, 3)
    assert guess_raw_shape(100) == RawShape(10, 10, 1)
    assert guess_raw_shape(16) is None and guess_raw_shape(7) is None


def test_text_of_pixel_length_is_not_an_image():
    assert find_images(decoded_example(caption=bytestrings(b"a" * 192))) == []  # 8x8x3 bytes, but text


def test_every_value_of_a_list_and_context_are_searched():
    png = _encode(_gradient(5, 3), "PNG")
    jpeg = _encode(_gradient(7, 9), "JPEG")
    refs = find_images(decoded_example(images=bytestrings(b"not an image", png, jpeg)))
    assert [(r.value_index, r.format, r.width) for r in refs] == [(1, "PNG", 5), (2, "JPEG", 7)]

    sequence = SequenceExample()
    sequence.context.feature["cover"].CopyFrom(bytestrings(png))
    sequence.context.feature["height"].CopyFrom(ints(4))
    sequence.context.feature["width"].CopyFrom(ints(4))
    sequence.feature_lists.feature_list["pixels"].feature.add().CopyFrom(bytestrings(bytes(16)))
    refs = find_images(decode_record(sequence.SerializeToString()))
    assert [(r.key, r.step, r.kind) for r in refs] == [("cover", None, "encoded"),
                                                        ("pixels", 0, "raw")]


def test_no_images_in_raw_or_plain_records():
    assert find_images(decode_record(b"Record A")) == []
    assert find_images(decode_record(b"")) == []
    assert find_images(_decoded_fixture("my_example.tfrecords")[0]) == []


@settings(max_examples=100)
@given(st.lists(st.binary(max_size=300), max_size=4), st.integers(0, 40), st.integers(0, 40))
def test_find_images_never_raises(values, height, width):
    decoded = decoded_example(image__encoded=bytestrings(*(b"\xff\xd8\xff" + v for v in values)),
                      image__raw=bytestrings(*values), image__height=ints(height),
                      image__width=ints(width))
    for ref in find_images(decoded):
        assert ref.width > 0 and ref.height > 0


# ---------------------------------------------------------------- decoding


def test_corrupt_jpeg_is_found_but_does_not_decode():
    decoded = _decoded_fixture("flowers_jpeg.tfrecord")[0]
    jpeg = _features(decoded)["encoded"].bytes_list.value[0]
    # Cut inside the scan data (the header survives), and inside the header: the
    # 300-byte stub must not pass for 10x10x3 raw pixels either.
    cut = decoded_example(encoded=bytestrings(jpeg[:-100]), stub=bytestrings(jpeg[:300]))
    refs = find_images(cut)  # must not raise
    assert [r.key for r in refs] == ["encoded"]
    with pytest.raises(ImageDecodeError, match="'encoded'"):
        decode_image(refs[0])
    with pytest.raises(ImageDecodeError):
        thumbnail(refs[0], 16)


def test_raw_ref_of_wrong_length_raises_decode_error():
    ref = ImageRef("image", 0, None, "raw", "RAW", 4, 4, 3, bytes(10))
    with pytest.raises(ImageDecodeError, match="expected 48 bytes"):
        decode_image(ref)
    with pytest.raises(ImageDecodeError):
        decode_image(ImageRef("image", 0, None, "raw", "RAW", 4, 4, 5, bytes(80)))


@pytest.mark.parametrize(
    ("image", "fmt", "mode"),
    [
        (_gradient(6, 4, "P"), "PNG", "RGB"),
        (_gradient(6, 4, "LA"), "PNG", "RGBA"),
        (_gradient(6, 4, "1"), "PNG", "L"),
        (_gradient(6, 4, "CMYK"), "JPEG", "RGB"),
        (_translucent(6, 4), "WEBP", "RGBA"),
    ],
)
def test_decode_image_gives_display_modes(image, fmt, mode):
    data = _encode(image, fmt)
    (ref,) = find_images(decoded_example(image=bytestrings(data)))
    decoded = decode_image(ref)
    assert decoded.mode == mode and decoded.size == (6, 4)


def test_sixteen_bit_images_are_grey_by_their_range_or_stretched():
    depth = np.array([[1000, 2000], [3000, 5000]], dtype=np.uint16)
    data = _encode(Image.fromarray(depth), "PNG")
    (ref,) = find_images(decoded_example(depth=bytestrings(data)))
    image = decode_image(ref)
    assert image.mode == "L"
    assert np.asarray(image).tolist() == [[4, 8], [12, 19]]  # v * 255 / 65535
    assert np.asarray(decode_image(ref, "minmax")).tolist() == [[0, 64], [128, 255]]  # rounded
    with pytest.raises(ValueError, match="stretch"):
        decode_image(ref, "auto")


def test_thumbnail_fits_and_keeps_aspect():
    data = _encode(_gradient(800, 600), "JPEG")
    (ref,) = find_images(decoded_example(image=bytestrings(data)))
    assert thumbnail(ref, 100).size == (100, 75)
    assert thumbnail(ref, 2000).size == (800, 600)  # never enlarged
    png_ref = find_images(decoded_example(image=bytestrings(_encode(_gradient(30, 60), "PNG"))))[0]
    assert thumbnail(png_ref, 20).size == (10, 20)
    raw_ref = find_images(_decoded_fixture("raw_pixels_32x32x3.tfrecord")[0])[0]
    assert thumbnail(raw_ref, 8).size == (8, 8)
    with pytest.raises(ValueError):
        thumbnail(ref, 0)


def test_jpeg_thumbnail_decodes_at_reduced_scale(monkeypatch):
    requests = []
    original = JpegImagePlugin.JpegImageFile.draft

    def spy(self, mode, size):
        requests.append(size)
        return original(self, mode, size)

    monkeypatch.setattr(JpegImagePlugin.JpegImageFile, "draft", spy)
    (ref,) = find_images(decoded_example(image=bytestrings(_encode(_gradient(800, 600), "JPEG"))))
    thumbnail(ref, 100)
    assert requests and requests[0] == (100, 100)
    requests.clear()
    decode_image(ref)
    assert requests == []


# ---------------------------------------------------------------- boxes


def test_detection_boxes_in_pixels():
    records = _decoded_fixture("detection.tfrecord")
    total = 0
    for decoded in records:
        features = _features(decoded)
        refs = find_images(decoded)
        main = main_image(refs)
        assert main.key == "image/encoded"
        assert (main.width, main.height) == (features["image/width"].int64_list.value[0],
                                             features["image/height"].int64_list.value[0])
        boxes = find_boxes(decoded, main)
        xmins = list(features["image/object/bbox/xmin"].float_list.value)
        assert len(boxes) == len(xmins)
        labels = [t.decode() for t in features["image/object/class/text"].bytes_list.value]
        assert [b.label for b in boxes] == labels
        for box, xmin in zip(boxes, xmins):
            assert 0 <= box.xmin <= box.xmax <= main.width
            assert 0 <= box.ymin <= box.ymax <= main.height
            assert box.xmin == pytest.approx(xmin * main.width)
        total += len(boxes)
    assert total > len(records)  # the fixture has records with several boxes


def test_pixel_boxes_and_numeric_labels():
    jpeg = _encode(_gradient(50, 40), "JPEG")
    decoded = decoded_example(image__encoded=bytestrings(jpeg), image__object__bbox__xmin=floats(10),
                      image__object__bbox__ymin=floats(5), image__object__bbox__xmax=floats(30),
                      image__object__bbox__ymax=floats(20),
                      image__object__class__label=ints(7))
    (ref,) = find_images(decoded)
    assert find_boxes(decoded, ref) == [BoundingBox(10, 5, 30, 20, "7")]


def test_boxes_need_matching_counts_and_the_main_image():
    jpeg = _encode(_gradient(50, 40), "JPEG")
    mask = _encode(_gradient(50, 40, "L"), "PNG")
    box = dict(image__object__bbox__xmin=floats(0.1), image__object__bbox__ymin=floats(0.2),
               image__object__bbox__xmax=floats(0.5), image__object__bbox__ymax=floats(1.0))
    # Other images sort before and after image/encoded; only it gets the boxes.
    decoded = decoded_example(aaa=bytestrings(mask), image__crop=bytestrings(mask), image__encoded=bytestrings(jpeg),
                      image__object__mask=bytestrings(mask), **box)
    refs = find_images(decoded)
    assert [r.key for r in refs] == ["aaa", "image/crop", "image/encoded", "image/object/mask"]
    assert main_image(refs) is refs[2]
    (box_,) = find_boxes(decoded, refs[2])  # float32 0.1 * 50 is not exactly 5
    assert (box_.xmin, box_.ymin, box_.xmax, box_.ymax) == pytest.approx((5, 8, 25, 40))
    assert box_.label is None
    assert [find_boxes(decoded, refs[i]) for i in (0, 1, 3)] == [[], [], []]

    without_encoded = decoded_example(thumb=bytestrings(mask), image__crop=bytestrings(jpeg), **box)
    assert main_image(find_images(without_encoded)).key == "image/crop"

    box["image__object__bbox__ymax"] = floats(1.0, 0.9)
    uneven = decoded_example(image__encoded=bytestrings(jpeg), **box)
    assert find_boxes(uneven, find_images(uneven)[0]) == []


def test_no_boxes_without_bbox_features():
    decoded = _decoded_fixture("flowers_jpeg.tfrecord")[0]
    assert find_boxes(decoded, find_images(decoded)[0]) == []


@pytest.mark.parametrize("text, shape", [
    ("32x32x3", RawShape(32, 32, 3)), ("480 × 640", RawShape(480, 640, 1)),
    ("64x64x1 uint16", RawShape(64, 64, 1, "uint16")), (" 2 x 3 x 4 float32 ", RawShape(2, 3, 4, "float32")),
])
def test_parse_raw_shape(text, shape):
    assert parse_raw_shape(text) == shape


@pytest.mark.parametrize("text", ["", "32", "32x32x5", "0x4", "axb", "4x4x3 int7", "1x2x3x4"])
def test_parse_raw_shape_rejects(text):
    with pytest.raises(ValueError, match="not a shape"):
        parse_raw_shape(text)


def test_the_main_image_is_the_picture_not_a_depth_map_or_mask():
    """TFDS-style keys: ``depth`` (16-bit) and ``mask`` sort before ``image``, which gets the boxes."""
    rgb = _encode(_gradient(32, 24), "PNG")
    depth = _encode(Image.fromarray(np.arange(32 * 24, dtype=np.uint16).reshape(24, 32) * 50), "PNG")
    mask = _encode(_gradient(32, 24, "L"), "PNG")
    box = dict(image__object__bbox__xmin=floats(0.25), image__object__bbox__ymin=floats(0.5),
               image__object__bbox__xmax=floats(0.75), image__object__bbox__ymax=floats(1.0))
    decoded = decoded_example(depth=bytestrings(depth), image=bytestrings(rgb), mask=bytestrings(mask), **box)
    refs = find_images(decoded)
    assert [r.key for r in refs] == ["depth", "image", "mask"]
    assert main_image(refs) is refs[1]
    assert [len(find_boxes(decoded, r)) for r in refs] == [0, 1, 0]
    # a colour image beats a grey one when nothing is named image; a depth map is chosen only when alone
    assert main_image(find_images(decoded_example(aaa=bytestrings(mask), photo=bytestrings(rgb)))).key == "photo"
    assert main_image(find_images(decoded_example(depth=bytestrings(depth)))).key == "depth"


def test_boxes_carry_their_class_score_stored_coordinates_and_problems():
    jpeg = _encode(_gradient(100, 50), "JPEG")
    decoded = decoded_example(
        image__encoded=bytestrings(jpeg),
        image__object__bbox__xmin=floats(0.1, 0.7, 0.2), image__object__bbox__ymin=floats(0.2, 0.1, 0.5),
        image__object__bbox__xmax=floats(0.5, 0.3, 1.2), image__object__bbox__ymax=floats(0.6, 0.9, 0.5),
        image__object__class__label=ints(3, 1, 2), image__object__class__text=bytestrings(b"cat", b"dog", b"owl"),
        image__object__score=floats(0.9, 0.5, 0.25))
    good, flipped, outside = find_boxes(decoded, find_images(decoded)[0])
    assert (good.label, good.class_id, good.normalised, good.problem) == ("cat", 3, True, None)
    assert good.score == pytest.approx(0.9)
    assert good.stored == pytest.approx((0.1, 0.2, 0.5, 0.6))
    assert (good.xmin, good.ymax) == pytest.approx((10, 30))
    assert flipped.problem == "xmin 0.7 > xmax 0.3" and flipped.class_id == 1
    assert outside.problem == "xmax 1.2 outside [0, 1]; zero area (ymin = ymax = 0.5)"
    # boxes in pixels: outside is against the image's size
    pixels = decoded_example(image__encoded=bytestrings(jpeg), image__object__bbox__xmin=floats(10, 60),
                             image__object__bbox__ymin=floats(5, 5), image__object__bbox__xmax=floats(30, 140),
                             image__object__bbox__ymax=floats(20, 4))
    inside, wrong = find_boxes(pixels, find_images(pixels)[0])
    assert not inside.normalised and inside.problem is None and inside.score is None
    assert wrong.problem == "ymin 5 > ymax 4; outside the image"


def test_thumbnails_that_need_a_frame():
    def ref_of(image: Image.Image) -> ImageRef:
        return find_images(decoded_example(image=bytestrings(_encode(image, "PNG"))))[0]

    bilevel = Image.new("1", (20, 20), 1)
    bilevel.paste(0, (2, 2, 6, 6))
    assert needs_frame(ref_of(bilevel), decode_image(ref_of(bilevel)))  # 1-bit, though not one colour
    white = Image.new("RGB", (20, 20), "white")
    assert needs_frame(ref_of(white), decode_image(ref_of(white)))
    photo = _gradient(20, 20)
    assert not needs_frame(ref_of(photo), decode_image(ref_of(photo)))
