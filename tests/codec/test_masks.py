"""Tests for codec.decode.masks: instance masks, keypoints and segmentation maps against the shared
reference file's manifest, and records built here for the other shapes they come in."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from codec import TFRecordWriter
from codec.decode.decoder import decode_record
from codec.decode.masks import (
    EXTRACTORS,
    keypoint_entries,
    mask_entries,
    record_overlays,
    segmentation_entries,
)
from codec.sources.tfrecord_file import TFRecordFile
from tests.builders import FIXTURES, example

MEDIA = FIXTURES / "media"
REFERENCE = MEDIA / "masks_keypoints.tfrecord"
EXPECTED = json.loads((MEDIA / "MANIFEST.json").read_text())["masks_keypoints.tfrecord"]["records"]


def _png(pixels: np.ndarray, mode: str | None = None) -> bytes:
    out = io.BytesIO()
    image = Image.fromarray(pixels) if mode is None else Image.fromarray(pixels).convert(mode)
    image.save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def reference_records() -> list:
    """The reference file's records, decoded."""
    source = TFRecordFile(str(REFERENCE))
    source.build_index()
    return [decode_record(source.read(r["index"]).data) for r in EXPECTED]


# ---------------------------------------------------------------- the reference file


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda r: f"record{r['index']}")
def test_every_reference_record_matches_the_manifest(expected, reference_records):
    index = expected["index"]
    decoded = reference_records[index]
    masks = mask_entries(index, decoded)
    assert [{"area": m["area"], "shape": m["shape"]} for m in masks] == expected["masks"]
    assert [(m["index"], m["key"], m["type"], m["object"]) for m in masks] == [
        (index, "image/object/mask", "mask", i) for i in range(len(expected["masks"]))]
    assert all(set(m) == {"index", "key", "type", "object", "shape", "area"} for m in masks)
    (points,) = keypoint_entries(index, decoded)
    assert set(points) == {"index", "type", "points"} and (points["index"], points["type"]) == (index, "keypoints")
    assert len(points["points"]) == len(expected["keypoints"])
    for got, want in zip(points["points"], expected["keypoints"]):
        assert got[2] == want[2] and isinstance(got[2], int)
        assert got[:2] == pytest.approx(want[:2], abs=1e-3)  # the manifest rounds to 3 decimals
    assert segmentation_entries(index, decoded) == []


def test_overlay_arrays_are_what_the_entries_count(reference_records):
    decoded = reference_records[1]
    overlays = record_overlays(decoded)
    assert [m.pixels.shape for m in overlays.masks] == [(40, 60), (40, 60)]
    assert [int(np.count_nonzero(m.pixels)) for m in overlays.masks] == [35, 88]
    assert overlays.keypoints.points.shape == (6, 3) and overlays.keypoints.points.dtype == np.float64
    assert overlays.keypoints.points[:, 2].tolist() == [1, 1, 1, 1, 1, 0]
    assert [m.class_id for m in overlays.masks] == [1, 2]
    assert overlays.masks[1].inside.dtype == bool and int(overlays.masks[1].inside.sum()) == 88
    assert overlays.segmentation == []


# ---------------------------------------------------------------- records built here


def test_float_list_masks_are_objects_by_height_by_width(tmp_path):
    first = np.zeros((3, 4), np.float32)
    first[1, 1:3] = 1.0
    second = np.ones((3, 4), np.float32)
    path = tmp_path / "float_masks.tfrecord"
    with TFRecordWriter(str(path)) as writer:
        writer.write(example({"image/height": 3, "image/width": 4,
                              "image/object/bbox/xmin": [0.1, 0.2],
                              "image/object/mask": np.stack([first, second])}))
    source = TFRecordFile(str(path))
    source.build_index()
    decoded = decode_record(source.read(0).data)
    assert mask_entries(7, decoded) == [
        {"index": 7, "key": "image/object/mask", "type": "mask", "object": 0, "shape": [3, 4], "area": 2},
        {"index": 7, "key": "image/object/mask", "type": "mask", "object": 1, "shape": [3, 4], "area": 12}]
    assert record_overlays(decoded).masks[0].pixels.tolist() == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]


def test_float_list_masks_without_boxes_count_objects_from_the_length_and_are_inside_above_zero():
    decoded = decode_record(example({"image/height": 2, "image/width": 2,
                                     "image/object/mask": [0.0, 1.0, -1.0, 0.0, 0.5, 1.0, 1.0, float("nan")]}))
    assert [(m["object"], m["area"]) for m in mask_entries(0, decoded)] == [(0, 1), (1, 3)]


@pytest.mark.parametrize("features, problem", [
    ({"image/height": 3, "image/width": 4, "image/object/bbox/xmin": [0.1, 0.2], "image/object/mask": [1.0] * 13},
     "image/object/mask: 13 numbers, not 2 objects × 3 × 4 = 24"),
    ({"image/height": 3, "image/width": 4, "image/object/mask": [1.0] * 13},
     "image/object/mask: 13 numbers, not a whole number of 3 × 4 masks"),
    ({"image/object/mask": [1.0] * 12},
     "image/object/mask: 12 numbers but no image size (image/height, image/width)"),
])
def test_a_float_list_of_the_wrong_length_is_one_problem_line(features, problem):
    (entry,) = mask_entries(3, decode_record(example(features)))
    assert entry == {"index": 3, "key": "image/object/mask", "type": "mask", "object": None, "shape": None,
                     "area": None, "error": problem}


def test_a_mask_that_is_not_a_png_is_a_problem_and_the_others_still_read():
    good = _png(np.array([[0, 255], [255, 255]], np.uint8))
    decoded = decode_record(example({"image/object/mask": [b"not a png at all", good, good[:30]]}))
    bad, fine, cut = mask_entries(0, decoded)
    assert bad["error"] == "image/object/mask[0]: not a PNG (16 bytes starting 6e 6f 74 20)"
    assert (bad["shape"], bad["area"]) == (None, None)
    assert (fine["shape"], fine["area"], "error" in fine) == ([2, 2], 3, False)
    assert cut["error"].startswith("image/object/mask[2]: PNG does not decode: ")
    assert all("\n" not in e.get("error", "") for e in (bad, cut))


def test_colour_and_palette_masks_count_non_black_pixels_as_tf_reads_them_grey():
    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[0, 0] = (200, 0, 0)
    rgb[1, 2] = (0, 0, 255)
    decoded = decode_record(example({"image/object/mask": [_png(rgb), _png(rgb, "P")]}))
    assert [(m["shape"], m["area"]) for m in mask_entries(0, decoded)] == [([2, 3], 2), ([2, 3], 2)]


def test_a_record_without_masks_or_keypoints_has_no_entries():
    decoded = decode_record(example({"image/height": 4, "image/width": 4, "label": 3}))
    assert [extract(0, decoded) for extract in EXTRACTORS] == [[], [], []]
    overlays = record_overlays(decoded)
    assert (overlays.masks, overlays.keypoints, overlays.segmentation) == ([], None, [])
    raw = decode_record(b"\xff\xff not a protobuf")
    assert [extract(0, raw) for extract in EXTRACTORS] == [[], [], []]


def test_keypoints_without_visibility_are_visible_in_pixels_in_stored_order():
    decoded = decode_record(example({"image/height": 40, "image/width": 60,
                                     "image/object/keypoint/x": [0.5, 0.25, 0.0],
                                     "image/object/keypoint/y": [0.5, 1.0, 0.125]}))
    assert keypoint_entries(2, decoded) == [
        {"index": 2, "type": "keypoints", "points": [[30.0, 20.0, 1], [15.0, 40.0, 1], [0.0, 5.0, 1]]}]


def test_keypoints_take_the_image_size_from_the_image_when_the_record_does_not_say_it():
    image = _png(np.zeros((10, 20, 3), np.uint8))
    decoded = decode_record(example({"image/encoded": image, "image/object/keypoint/x": [0.5],
                                     "image/object/keypoint/y": [0.5],
                                     "image/object/keypoint/visibility": [0]}))
    assert keypoint_entries(0, decoded)[0]["points"] == [[10.0, 5.0, 0]]


def test_a_missing_keypoint_is_null_not_nan_and_invisible_without_a_visibility_list():
    decoded = decode_record(example({"image/height": 10, "image/width": 10,
                                     "image/object/keypoint/x": [float("nan"), 0.5],
                                     "image/object/keypoint/y": [float("nan"), 0.5]}))
    assert keypoint_entries(0, decoded)[0]["points"] == [[None, None, 0], [5.0, 5.0, 1]]
    assert np.isnan(record_overlays(decoded).keypoints.points[0, 0])


@pytest.mark.parametrize("features, problem", [
    ({"image/object/keypoint/x": [0.1, 0.2], "image/object/keypoint/y": [0.1]},
     "2 keypoint x values but 1 y values"),
    ({"image/object/keypoint/x": [0.1], "image/object/keypoint/y": [0.1],
      "image/object/keypoint/visibility": [1, 0]},
     "image/object/keypoint/visibility: 2 values for 1 keypoints"),
    ({"image/object/keypoint/x": [0.1], "image/object/keypoint/y": [0.1]},
     "1 keypoints but no image size (image/height, image/width)"),
])
def test_keypoints_that_do_not_line_up_are_one_problem_line(features, problem):
    assert keypoint_entries(1, decode_record(example(features))) == [
        {"index": 1, "type": "keypoints", "points": None, "error": problem}]


def test_a_segmentation_png_gives_its_shape_and_the_classes_present():
    labels = np.array([[0, 0, 7, 7], [3, 3, 0, 255], [0, 0, 0, 0]], np.uint8)
    palette = Image.fromarray(labels, mode="P")
    palette.putpalette([0, 0, 0] * 256)
    out = io.BytesIO()
    palette.save(out, format="PNG")
    decoded = decode_record(example({"image/segmentation/class/encoded": _png(labels),
                                     "image/segmentation/class/format": "png",
                                     "segmentation/encoded": out.getvalue()}))
    assert segmentation_entries(5, decoded) == [
        {"index": 5, "key": "image/segmentation/class/encoded", "type": "segmentation", "shape": [3, 4],
         "classes": [0, 3, 7, 255]},
        {"index": 5, "key": "segmentation/encoded", "type": "segmentation", "shape": [3, 4],
         "classes": [0, 3, 7, 255]}]  # palette indices are the class ids, whatever colours they name
    (first, _) = record_overlays(decoded).segmentation
    assert first.classes.tolist() == labels.tolist()


def test_a_colour_segmentation_png_is_a_problem_and_a_grey_one_saved_as_rgb_is_not():
    grey = np.repeat(np.array([[1, 2], [2, 9]], np.uint8)[..., None], 3, axis=2)
    colour = grey.copy()
    colour[0, 0] = (1, 2, 3)
    decoded = decode_record(example({"image/segmentation/class/encoded": [_png(grey), _png(colour)]}))
    ok, bad = segmentation_entries(0, decoded)
    assert (ok["classes"], "error" in ok) == ([1, 2, 9], False)
    assert bad["error"] == "image/segmentation/class/encoded[1]: a colour PNG (RGB), not one class id per pixel"
    assert (bad["shape"], bad["classes"]) == (None, None)


def test_media_json_lists_masks_and_keypoints_as_the_manifest_says(capsys):
    import json

    from codec.cli.main import main
    from tests.builders import FIXTURES

    records = json.loads((FIXTURES / "media" / "MANIFEST.json").read_text())["masks_keypoints.tfrecord"]["records"]
    assert main(["media", "--json", str(FIXTURES / "media" / "masks_keypoints.tfrecord")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for want in records:
        masks = [m for m in lines if m["index"] == want["index"] and m["type"] == "mask"]
        assert [(m["object"], m["shape"], m["area"]) for m in masks] == \
            [(k, w["shape"], w["area"]) for k, w in enumerate(want["masks"])]
        points = [m["points"] for m in lines if m["index"] == want["index"] and m["type"] == "keypoints"]
        assert len(points) == 1 and len(points[0]) == len(want["keypoints"])
        for got, expected in zip(points[0], want["keypoints"]):
            assert got[:2] == pytest.approx(expected[:2], abs=1e-3) and got[2] == expected[2]
    assert main(["media", str(FIXTURES / "media" / "masks_keypoints.tfrecord")]) == 0
    human = capsys.readouterr().out.splitlines()
    assert "record 1  keypoints  6 points (1 hidden)" in "\n".join(human)
