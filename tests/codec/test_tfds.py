"""TFDS dataset folders read per their feature spec, against what TFDS itself reads (MANIFEST.json) and
against datasets written here the way TFDS writes them."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from codec.datasets import tfds_features
from codec.datasets.tfds import TfdsDataset, boxes, decoded_image, find_tfds_dir
from codec.decode.decoder import RecordKind
from codec.errors import SchemaError
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records
from tests.builders import FIXTURES, example

DEMO = FIXTURES / "payloads" / "tfds" / "lens_tfds_demo" / "1.2.0"
REFERENCE = json.loads((FIXTURES / "payloads" / "MANIFEST.json").read_text())["tfds/lens_tfds_demo/1.2.0"]
MEDIA = FIXTURES / "tfds_media" / "lens_media_demo" / "1.0.0"
MEDIA_REFERENCE = json.loads((FIXTURES / "tfds_media" / "MANIFEST.json").read_text())["tfds_media/lens_media_demo/1.0.0"]
PREFIX = "tensorflow_datasets.core.features."


def _records(path: Path) -> list[bytes]:
    with open_tfrecord(path) as f:
        return [f.read(i).data for i in range(len(f))]


def _json(obj):
    return json.loads(json.dumps(obj))


# ---------------------------------------------------------------- the reference dataset


def test_every_record_matches_what_tfds_reads():
    dataset = TfdsDataset.open(DEMO)
    payload = dataset.payload()
    for split, expected in REFERENCE["splits"].items():
        records = [r for path in dataset.splits[split].files for r in _records(path)]
        assert len(records) == len(expected["records"])
        for i, (data, want) in enumerate(zip(records, expected["records"])):
            decoded = payload.decode(data)
            assert decoded.kind is RecordKind.EXAMPLE and decoded.note is None
            assert _json(payload.features_json(decoded)) == want, (split, i)


def test_info_matches_the_reference():
    dataset = TfdsDataset.open(DEMO)
    assert (dataset.name, dataset.version) == (REFERENCE["name"], REFERENCE["version"])
    assert set(dataset.splits) == set(REFERENCE["splits"])
    for name, expected in REFERENCE["splits"].items():
        split = dataset.splits[name]
        assert [p.name for p in split.files] == expected["files"]
        assert split.num_examples == expected["num_examples"]
        assert all(dataset.split_of(p) == name for p in split.files)
    assert dataset.class_names("label") == REFERENCE["class_names"]
    assert dataset.class_names("objects/label") == REFERENCE["class_names"]
    assert dataset.supervised_keys == ("image", "label")
    text = "\n".join(dataset.describe())
    for part in ("lens_tfds_demo", "1.2.0", "train: 16 examples in 1 shard", "test: 6 examples",
                 "objects/bbox: BBoxFeature float32 [4] REL_YXYX", "mask: Tensor uint8 [6, 6] zlib"):
        assert part in text


def test_find_tfds_dir():
    shard = DEMO / REFERENCE["splits"]["train"]["files"][0]
    assert find_tfds_dir(DEMO) == DEMO
    assert find_tfds_dir(shard) == DEMO
    assert find_tfds_dir(FIXTURES) is None
    assert find_tfds_dir(FIXTURES / "detection.tfrecord") is None


def test_counts_checked_against_dataset_info(tmp_path):
    folder = tmp_path / "lens_tfds_demo" / "1.2.0"
    shutil.copytree(DEMO, folder)
    info = json.loads((folder / "dataset_info.json").read_text())
    info["splits"][0]["shardLengths"] = ["17"]  # train really holds 16
    (folder / "dataset_info.json").write_text(json.dumps(info))
    dataset = TfdsDataset.open(folder)
    counts = {name: sum(len(_records(p)) for p in split.files) for name, split in dataset.splits.items()}
    assert counts == {"train": 16, "test": 6}
    lines = dataset.check_counts(counts)
    assert len(lines) == 1 and "train" in lines[0] and "16" in lines[0] and "17" in lines[0]
    assert TfdsDataset.open(DEMO).check_counts(counts) == []


def test_images_boxes_and_flat_view_of_the_reference():
    dataset = TfdsDataset.open(DEMO)
    payload = dataset.payload()
    assert payload.image_keys() == ["image"]
    assert payload.bbox_keys() == {"objects/bbox": "REL_YXYX"}
    assert payload.label_names() == {"label": REFERENCE["class_names"], "objects/label": REFERENCE["class_names"]}
    expected = REFERENCE["splits"]["test"]["records"]
    for data, want in zip(_records(dataset.splits["test"].files[0]), expected):
        decoded = payload.decode(data)
        pixels = decoded_image(decoded, "image")
        assert list(pixels.shape) == want["image"]["shape"]
        assert hashlib.sha256(pixels.tobytes()).hexdigest() == want["image"]["sha256"]
        coords = np.array(want["objects/bbox"]["values"]).reshape(-1, 4).tolist()
        assert boxes(decoded) == [(*c, n) for c, n in zip(coords, want["objects/label"]["name"])]
        flat = payload.features_flat(decoded)
        assert flat["label"] == ("int64", [want["label"]["value"]])
        assert flat["objects/label"] == ("int64", want["objects/label"]["value"])
        assert flat["caption"] == ("bytes", [want["caption"].encode()])
        assert flat["image"][1][0][:8] == b"\x89PNG\r\n\x1a\n"
        assert decoded.fields() == flat


# ---------------------------------------------------------------- datasets written as TFDS writes them
# How values are stored follows tensorflow_datasets/core/example_serializer.py (_item_to_tf_feature:
# ints and bools in int64_list, every float in float_list, strings in bytes_list),
# core/features/tensor_feature.py (encode_example: tobytes(), zlib.compress for ZLIB, and
# {"value", "shape"} keys when more than one dimension is unknown), core/features/image_feature.py
# (PNG bytes, 16-bit samples for uint16), core/features/sequence_feature.py (a leading length
# dimension, values of all elements concatenated) and class_label_feature.py (NAME.labels.txt).


def _tensor(dtype, dims, encoding="none", cls="tensor_feature.Tensor"):
    return {"pythonClassName": PREFIX + cls,
            "tensor": {"dtype": dtype, "encoding": encoding, "shape": {"dimensions": [str(d) for d in dims]}}}


def _dict(features):
    return {"pythonClassName": PREFIX + "features_dict.FeaturesDict", "featuresDict": {"features": features}}


def _write(folder: Path, name: str, spec: dict, splits: dict[str, list[bytes]], labels=None) -> Path:
    folder.mkdir(parents=True)
    (folder / "features.json").write_text(json.dumps(spec))
    info = {"name": name, "version": "0.1.0", "fileFormat": "tfrecord", "splits": []}
    for split, records in splits.items():
        write_records(folder / f"{name}-{split}.tfrecord-00000-of-00001", records)
        info["splits"].append({"name": split, "shardLengths": [str(len(records))],
                               "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"})
    (folder / "dataset_info.json").write_text(json.dumps(info))
    for key, names in (labels or {}).items():
        (folder / f"{key.replace('/', '-')}.labels.txt").write_text("\n".join(names) + "\n")
    return folder


def _png(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def _decode_all(folder: Path):
    dataset = TfdsDataset.open(folder)
    payload = dataset.payload()
    out = []
    for split in dataset.splits.values():
        for path in split.files:
            out.extend(payload.decode(data) for data in _records(path))
    return dataset, payload, out


def _pixels_json(array):
    return {"dtype": array.dtype.name, "shape": list(array.shape), "sha256": hashlib.sha256(array.tobytes()).hexdigest()}


def test_sixteen_bit_grayscale_images(tmp_path):
    rng = np.random.default_rng(7)
    images = [rng.integers(0, 65536, (5 + i, 7, 1), dtype=np.uint16) for i in range(3)]
    spec = _dict({"depth": {"pythonClassName": PREFIX + "image_feature.Image",
                            "image": {"dtype": "uint16", "encodingFormat": "png",
                                      "shape": {"dimensions": ["-1", "-1", "1"]}}}})
    folder = _write(tmp_path / "depth", "depth", spec,
                    {"train": [example({"depth": _png(im[:, :, 0])}) for im in images]})
    _, payload, decoded = _decode_all(folder)
    for image, record in zip(images, decoded):
        assert record.note is None
        assert _json(payload.features_json(record)) == {"depth": _pixels_json(image)}
        assert np.array_equal(decoded_image(record, "depth"), image)


def _png_filtered(array: np.ndarray) -> bytes:
    """A 16-bit colour PNG whose rows use each of the five filters in turn (PNG spec 9.2), as libpng may."""
    height, width, channels = array.shape
    raw = array.astype(">u2").reshape(height, -1).view(np.uint8).astype(np.int64)
    bpp = 2 * channels
    out = bytearray()
    for y in range(height):
        kind, line = y % 5, raw[y]
        up = raw[y - 1] if y else np.zeros_like(line)
        left = np.concatenate([np.zeros(bpp, np.int64), line[:-bpp]])
        corner = np.concatenate([np.zeros(bpp, np.int64), up[:-bpp]])
        p = left + up - corner
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, corner))
        predictor = [0, left, up, (left + up) // 2, paeth][kind]
        out += bytes([kind]) + ((line - predictor) % 256).astype(np.uint8).tobytes()

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    colour = {3: 2, 4: 6}[channels]
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(out))) + chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [3, 4])
def test_sixteen_bit_colour_images_keep_all_bits(tmp_path, channels):
    image = np.random.default_rng(channels).integers(0, 65536, (6, 5, channels), dtype=np.uint16)
    spec = _dict({"image": {"pythonClassName": PREFIX + "image_feature.Image",
                            "image": {"dtype": "uint16", "shape": {"dimensions": ["6", "5", str(channels)]}}}})
    folder = _write(tmp_path / "rgb16", "rgb16", spec, {"train": [example({"image": _png_filtered(image)})]})
    _, payload, [record] = _decode_all(folder)
    assert _json(payload.features_json(record)) == {"image": _pixels_json(image)}


def test_tensors_of_every_storage(tmp_path):
    rng = np.random.default_rng(3)
    spec = _dict({
        "ragged": _tensor("int32", [-1]),
        "points": _tensor("float64", [-1, 3]),
        "flags": _tensor("bool", [3]),
        "bytes8": _tensor("uint8", [4]),
        "half": _tensor("float16", [-1], "bytes"),
        "packed": _tensor("int16", [2, 3], "zlib"),
        "big": _tensor("uint64", [2]),
        "grid": _tensor("float32", [-1, -1], "zlib"),
        "score": _tensor("float32", [], cls="scalar.Scalar"),
    })
    rows = []
    expected = []
    for n in (0, 1, 4):
        ragged = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        points = rng.normal(size=(n, 3))
        flags = np.array([True, False, n > 1])
        bytes8 = rng.integers(0, 256, 4, dtype=np.uint8)
        half = rng.normal(size=n).astype(np.float16)
        packed = rng.integers(-2**15, 2**15, (2, 3), dtype=np.int64).astype(np.int16)
        big = np.array([2**64 - 1, n], np.uint64)
        grid = rng.normal(size=(n, n + 1)).astype(np.float32)
        score = np.float32(n / 3)
        rows.append(example({
            "ragged": ragged, "points": points, "flags": flags.astype(np.int64),
            "bytes8": bytes8, "half": half.tobytes(), "packed": zlib.compress(packed.tobytes()),
            "big": big.view(np.int64).tolist(), "grid/value": zlib.compress(grid.tobytes()),
            "grid/shape": list(grid.shape), "score": [float(score)]}))

        def tensor(array, dtype=None):
            array = np.asarray(array, dtype)
            return {"dtype": array.dtype.name, "shape": list(array.shape), "values": array.reshape(-1).tolist()}

        expected.append({
            "ragged": tensor(ragged), "points": tensor(points.astype(np.float32).astype(np.float64)),
            "flags": tensor(flags), "bytes8": tensor(bytes8), "half": tensor(half.astype(np.float64), None)
            | {"dtype": "float16"}, "packed": tensor(packed), "big": tensor(big), "grid": tensor(grid),
            "score": tensor(score)})
    folder = _write(tmp_path / "tensors", "tensors", spec, {"train": rows})
    _, payload, decoded = _decode_all(folder)
    for record, want in zip(decoded, expected):
        assert record.note is None
        assert _json(payload.features_json(record)) == _json(want)
        assert record.value["points"].array.dtype == np.float64
        assert record.value["big"].array.dtype == np.uint64
    flat = payload.features_flat(decoded[2])
    assert flat["flags"] == ("int64", [1, 0, 1])
    assert flat["grid"][0] == "float" and len(flat["grid"][1]) == 20


def test_sequences_of_a_single_feature(tmp_path):
    spec = _dict({
        "tokens": {"pythonClassName": PREFIX + "sequence_feature.Sequence",
                   "sequence": {"feature": _tensor("int64", []), "length": "-1"}},
        "tags": {"pythonClassName": PREFIX + "sequence_feature.Sequence",
                 "sequence": {"feature": {"pythonClassName": PREFIX + "class_label_feature.ClassLabel",
                                          "classLabel": {"numClasses": "2"}}, "length": "-1"}},
        "frames": {"pythonClassName": PREFIX + "sequence_feature.Sequence",
                   "sequence": {"feature": {"pythonClassName": PREFIX + "image_feature.Image",
                                            "image": {"dtype": "uint8", "shape": {"dimensions": ["2", "3", "1"]}}},
                                "length": "-1"}},
        "words": {"pythonClassName": PREFIX + "sequence_feature.Sequence",
                  "sequence": {"feature": {"pythonClassName": PREFIX + "text_feature.Text", "text": {}},
                               "length": "2"}},
    })
    frames = [np.full((2, 3, 1), v, np.uint8) for v in (10, 200)]
    data = example({"tokens": [5, 6, 7], "tags": [1, 0], "frames": [_png(f[:, :, 0]) for f in frames],
                     "words": ["héllo", "world"]})
    empty = example({"words": ["a", "b"]})  # variable-length sequences may be left out when empty
    folder = _write(tmp_path / "seq", "seq", spec, {"train": [data, empty]}, labels={"tags": ["no", "yes"]})
    _, payload, (record, blank) = _decode_all(folder)
    assert record.note is None and blank.note is None
    assert _json(payload.features_json(record)) == {
        "tokens": {"dtype": "int64", "shape": [3], "values": [5, 6, 7]},
        "tags": {"value": [1, 0], "name": ["yes", "no"]},
        "frames": _pixels_json(np.stack(frames)),
        "words": ["héllo", "world"]}
    assert _json(payload.features_json(blank)) == {
        "tokens": {"dtype": "int64", "shape": [0], "values": []}, "tags": {"value": [], "name": []},
        "frames": _pixels_json(np.zeros((0, 2, 3, 1), np.uint8)), "words": ["a", "b"]}
    assert np.array_equal(decoded_image(record, "frames", 1), frames[1])


def test_unknown_feature_type_falls_back_with_a_note(tmp_path):
    spec = _dict({"wave": {"pythonClassName": "my_project.features.Waveform",
                           "waveform": {"dtype": "int64", "shape": {"dimensions": ["-1"]}}},
                  "id": _tensor("int64", [], cls="scalar.Scalar")})
    folder = _write(tmp_path / "wave", "wave", spec, {"train": [example({"wave": [1, -2, 3], "id": [9]})]})
    _, payload, [record] = _decode_all(folder)
    assert record.kind is RecordKind.EXAMPLE and "Waveform" in record.note
    out = payload.features_json(record)
    assert out["id"] == {"dtype": "int64", "shape": [], "values": [9]}
    assert "Waveform" in out["wave"]["note"]
    assert out["wave"]["example"] == {"wave": {"int64List": {"value": ["1", "-2", "3"]}}}
    assert payload.features_flat(record)["wave"] == ("int64", [1, -2, 3])


def test_malformed_records_are_notes_not_exceptions(tmp_path):
    spec = _dict({"label": {"pythonClassName": PREFIX + "class_label_feature.ClassLabel",
                            "classLabel": {"numClasses": "3"}},
                  "mask": _tensor("uint8", [2, 2], "zlib"),
                  "image": {"pythonClassName": PREFIX + "image_feature.Image",
                            "image": {"dtype": "uint8", "shape": {"dimensions": ["-1", "-1", "3"]}}}})
    records = [
        b"\xff\x00garbage",
        example({"label": ["cat"], "mask": zlib.compress(b"\0" * 4), "image": _png(np.zeros((2, 2, 3), np.uint8))}),
        example({"label": [1], "mask": b"not zlib", "image": b"\x89PNG\r\n\x1a\n broken"}),
        example({"mask": zlib.compress(b"\0" * 5), "image": _png(np.zeros((2, 2, 3), np.uint8))}),
    ]
    folder = _write(tmp_path / "bad", "bad", spec, {"train": records})
    _, payload, decoded = _decode_all(folder)
    raw, wrong_type, broken, missing = decoded
    assert raw.kind is RecordKind.RAW and "not a tf.train.Example" in raw.note
    assert payload.features_json(raw) == {}
    assert "'label'" in wrong_type.note and "bytes" in wrong_type.note
    assert payload.features_json(wrong_type)["mask"] == _pixels_json(np.zeros((2, 2), np.uint8))
    assert "'mask'" in broken.note and "'image'" in broken.note
    assert payload.features_json(broken)["label"] == {"value": 1, "name": "1"}  # no names: the id itself
    assert "'label' is missing" in missing.note and "5 values do not fit" in missing.note
    for record in decoded:
        assert "\n" not in (record.note or "")
        json.dumps(payload.features_json(record))


def test_features_json_that_is_not_json(tmp_path):
    folder = tmp_path / "broken" / "1.0.0"
    folder.mkdir(parents=True)
    (folder / "features.json").write_text("{not json")
    with pytest.raises(SchemaError) as caught:
        TfdsDataset.open(folder)
    assert "features.json" in str(caught.value) and "not JSON" in str(caught.value)
    assert "\n" not in str(caught.value)
    (folder / "features.json").write_text(json.dumps(_tensor("int64", [])))
    with pytest.raises(SchemaError, match="FeaturesDict"):
        TfdsDataset.open(folder)


def test_hostile_specs_and_payloads_are_bounded(tmp_path, monkeypatch):
    import codec.datasets.tfds_features as tfds_features

    nested = _tensor("int64", [])
    for _ in range(200):
        nested = _dict({"x": nested})
    folder = tmp_path / "deep" / "1.0.0"
    folder.mkdir(parents=True)
    (folder / "features.json").write_text(json.dumps(nested))
    with pytest.raises(SchemaError, match="nested more than"):
        TfdsDataset.open(folder)

    monkeypatch.setattr(tfds_features, "MAX_TENSOR_BYTES", 1000)
    spec = _dict({"blob": _tensor("uint8", [-1], "zlib")})
    bomb = zlib.compress(b"\0" * 5000)
    folder = _write(tmp_path / "bomb", "bomb", spec, {"train": [example({"blob": bomb})]})
    _, payload, [record] = _decode_all(folder)
    assert "inflates past 1000 bytes" in record.note
    assert payload.features_json(record)["blob"]["example"] == {"blob": {"bytesList": {"value": [
        __import__("base64").b64encode(bomb).decode()]}}}


def test_split_names_and_shard_lengths():
    dataset = TfdsDataset.open(DEMO)
    assert dataset.split_of("lens_tfds_demo-validation.tfrecord-00003-of-00010") == "validation"
    assert dataset.split_of("other-train.tfrecord-00000-of-00001") is None
    assert dataset.split_of(DEMO / "features.json") is None
    assert dataset.shard_examples(dataset.splits["train"].files[0]) == 16
    assert dataset.splits["train"].num_bytes == 42135


def test_legacy_features_json(tmp_path):
    # feature.py from_json: the {"type", "content"} form that older TFDS versions wrote
    legacy = {"type": PREFIX + "features_dict.FeaturesDict", "content": {
        "label": {"type": PREFIX + "class_label_feature.ClassLabel", "content": {"num_classes": 2}},
        "vec": {"type": PREFIX + "feature.Tensor", "content": {"shape": [None, 2], "dtype": "int64"}}}}
    folder = _write(tmp_path / "old", "old", legacy, {"train": [example({"label": [1], "vec": [1, 2, 3, 4]})]},
                    labels={"label": ["no", "yes"]})
    _, payload, [record] = _decode_all(folder)
    assert payload.features_json(record) == {"label": {"value": 1, "name": "yes"},
                                             "vec": {"dtype": "int64", "shape": [2, 2], "values": [1, 2, 3, 4]}}


# ---------------------------------------------------------------- Audio and Video
# audio_feature.py: a Tensor of samples (its dtype, its encoding) with sample_rate beside it in the spec;
# video_feature.py: a Sequence of Image frames, one PNG/JPEG per frame in a bytes_list.


def _audio(dtype, dims=("-1",), rate="16000", encoding="NONE", **extra):
    body = {"dtype": dtype, "encoding": encoding, "shape": {"dimensions": list(dims)}, **extra}
    if rate is not None:
        body["sampleRate"] = rate
    return {"pythonClassName": PREFIX + "audio_feature.Audio", "audio": body}


def _video(dims, dtype="uint8", fmt="png"):
    return {"pythonClassName": PREFIX + "video_feature.Video",
            "video": {"dtype": dtype, "encodingFormat": fmt, "shape": {"dimensions": [str(d) for d in dims]}}}


def test_every_media_record_matches_what_tfds_reads():
    dataset = TfdsDataset.open(MEDIA)
    payload = dataset.payload()
    assert [f"{leaf.key}: {leaf.spec.describe()}" for leaf in dataset.leaves] == [
        "audio: Audio int16 [-1] 16000 Hz", "label: ClassLabel (3 classes)", "video: Video uint8 [-1, 12, 16, 3] png"]
    for split, expected in MEDIA_REFERENCE["splits"].items():
        records = [r for path in dataset.splits[split].files for r in _records(path)]
        assert len(records) == len(expected["records"]) == 6
        for i, (data, want) in enumerate(zip(records, expected["records"])):
            decoded = payload.decode(data)
            assert decoded.note is None, (split, i)
            out = _json(payload.features_json(decoded))
            assert (out["audio"], out["video"]) == (want["audio"], want["video"]), (split, i)
            assert out["label"]["name"] in ("speech", "music", "noise")
            flat = payload.features_flat(decoded)
            assert flat["audio"][0] == "int64" and len(flat["audio"][1]) == want["audio"]["shape"][0]
            assert flat["video"][0] == "bytes" and len(flat["video"][1]) == want["video"]["shape"][0]


def test_float_audio_and_two_audio_features_in_one_dataset(tmp_path):
    rng = np.random.default_rng(11)
    spec = _dict({"mic": _audio("float32", ("-1", "2"), "44100"), "speech": _audio("int16", rate="8000"),
                  "hifi": _audio("float64", rate=None), "packed": _audio("int32", encoding="ZLIB")})
    rows, expected = [], []
    for n in (0, 3, 50):
        mic = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        speech = rng.integers(-2**15, 2**15, n, dtype=np.int64).astype(np.int16)
        hifi = rng.normal(size=n)
        packed = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        rows.append(example({"mic": mic.reshape(-1), "speech": speech.astype(np.int64), "hifi": hifi,
                             "packed": zlib.compress(packed.tobytes())}))
        # float64 samples travel in a float_list (float32) and come back as float64, as TFDS casts them
        expected.append({"mic": _pixels_json(mic) | {"sample_rate": 44100},
                         "speech": _pixels_json(speech) | {"sample_rate": 8000},
                         "hifi": _pixels_json(hifi.astype(np.float32).astype(np.float64)) | {"sample_rate": None},
                         "packed": _pixels_json(packed) | {"sample_rate": 16000}})
    folder = _write(tmp_path / "sounds", "sounds", spec, {"train": rows})
    dataset, payload, decoded = _decode_all(folder)
    assert {leaf.key: leaf.spec.describe() for leaf in dataset.leaves}["mic"] == "Audio float32 [-1, 2] 44100 Hz"
    for record, want in zip(decoded, expected):
        assert record.note is None
        assert _json(payload.features_json(record)) == want
    assert decoded[2].value["mic"].array.shape == (50, 2)
    big_endian = np.arange(3, dtype=">f4")  # the hash is of little-endian samples whatever the machine's order
    assert _json(tfds_features.feature_json(tfds_features.FeatureValue(
        dataset.leaves[0], array=big_endian)))["sha256"] == _pixels_json(big_endian.astype("<f4"))["sha256"]


def test_audio_that_does_not_fit_its_spec_is_a_note(tmp_path):
    spec = _dict({"stereo": _audio("int16", ("-1", "2")), "lazy": _audio("int64", lazyDecode=True)})
    folder = _write(tmp_path / "bad", "bad", spec, {"train": [example({"stereo": [1, 2, 3], "lazy": [b"RIFF"]})]})
    _, payload, [record] = _decode_all(folder)
    out = payload.features_json(record)
    assert "3 values do not fit shape [-1, 2]" in out["stereo"]["note"]
    assert out["stereo"]["example"] == {"stereo": {"int64List": {"value": ["1", "2", "3"]}}}
    assert "lazy_decode" in out["lazy"]["note"]  # the Example holds the audio file: not decoded here


def test_videos_of_png_and_jpeg_frames(tmp_path):
    rng = np.random.default_rng(5)
    spec = _dict({"clip": _video([-1, 4, 6, 3]), "grey": _video([2, 4, 6, 1]), "cam": _video([-1, 8, 8, 3],
                                                                                           fmt="jpeg")})
    frames = [rng.integers(0, 256, (4, 6, 3), dtype=np.uint8) for _ in range(3)]
    grey = [np.full((4, 6), v, np.uint8) for v in (0, 255)]
    jpeg = io.BytesIO()
    Image.fromarray(np.full((8, 8, 3), 128, np.uint8)).save(jpeg, "JPEG")
    rows = [example({"clip": [_png(f) for f in frames], "grey": [_png(g) for g in grey],
                     "cam": [jpeg.getvalue()]}),
            example({"grey": [_png(g) for g in grey]})]  # a video of unknown length may be left out: no frames
    folder = _write(tmp_path / "clips", "clips", spec, {"train": rows})
    _, payload, (record, blank) = _decode_all(folder)
    assert record.note is None and blank.note is None
    out = _json(payload.features_json(record))
    assert out["clip"] == _pixels_json(np.stack(frames))
    assert out["grey"] == _pixels_json(np.stack(grey)[..., None])
    assert out["cam"]["shape"] == [1, 8, 8, 3] and out["cam"]["dtype"] == "uint8"
    assert np.abs(record.value["cam"].array.astype(int) - 128).max() <= 2  # JPEG is lossy
    assert _json(payload.features_json(blank))["clip"] == _pixels_json(np.zeros((0, 4, 6, 3), np.uint8))
    assert payload.features_flat(record)["clip"] == ("bytes", [_png(f) for f in frames])
    assert payload.image_keys() == []  # frames are not gallery images


def test_video_that_does_not_fit_its_spec_is_a_note(tmp_path):
    spec = _dict({"short": _video([2, 4, 6, 3]), "broken": _video([-1, 4, 6, 3]), "flat": _video([-1, 4]),
                  "clips": {"pythonClassName": PREFIX + "sequence_feature.Sequence",
                            "sequence": {"feature": _video([-1, 4, 6, 3]), "length": "-1"}}})
    frame = _png(np.zeros((4, 6, 3), np.uint8))
    folder = _write(tmp_path / "bad", "bad", spec, {"train": [
        example({"short": [frame], "broken": [frame, b"not a png"], "clips": [frame], "flat": [frame]})]})
    _, payload, [record] = _decode_all(folder)
    out = payload.features_json(record)
    assert "1 frames, the spec says 2" in out["short"]["note"]
    assert "does not decode" in out["broken"]["note"]
    assert "Video inside a Sequence" in out["clips"]["note"]
    assert "Video of shape [-1, 4] (not [frames" in out["flat"]["note"]  # the rest of the dataset still opens
    json.dumps(out)


def test_legacy_audio_and_video(tmp_path):
    legacy = {"type": PREFIX + "features_dict.FeaturesDict", "content": {
        "audio": {"type": PREFIX + "audio_feature.Audio",
                  "content": {"shape": [None], "dtype": "int16", "file_format": None, "sample_rate": 22050}},
        "video": {"type": PREFIX + "video_feature.Video",
                  "content": {"shape": [None, 2, 2, 3], "encoding_format": "png", "dtype": "uint8"}}}}
    frame = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    folder = _write(tmp_path / "old", "old", legacy, {"train": [example({"audio": [1, -1], "video": [_png(frame)]})]})
    _, payload, [record] = _decode_all(folder)
    assert _json(payload.features_json(record)) == {
        "audio": _pixels_json(np.array([1, -1], np.int16)) | {"sample_rate": 22050},
        "video": _pixels_json(frame[None])}


def test_cat_json_of_the_media_folder(capsys):
    from codec.cli.main import main

    assert main(["cat", "--json", str(MEDIA)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want = MEDIA_REFERENCE["splits"]["train"]["records"]
    assert [(line["split"], line["features"]["audio"], line["features"]["video"]) for line in lines] == [
        ("train", r["audio"], r["video"]) for r in want]


def test_the_tree_shows_audio_and_short_videos_as_their_tensors(monkeypatch):
    from codec.datasets import tfds
    from codec.decode.decoder import build_tree

    payload = TfdsDataset.open(MEDIA).payload()
    decoded = payload.decode(_records(next(iter(TfdsDataset.open(MEDIA).splits["train"].files)))[0])
    tree, kinds = tfds.with_decoded_tensors(decoded, build_tree(decoded))
    nodes = {node.name: node for node in tree.children}
    assert sorted(kinds.values()) == ["int16 [7200] audio 16000 Hz", "uint8 [3, 12, 16, 3] video of png frames"]
    assert nodes["video"].role == "tensor" and nodes["label"].role != "tensor"
    monkeypatch.setattr(tfds, "MAX_TREE_VIDEO_VALUES", 3 * 12 * 16 * 3 - 1)  # longer: the stored frames stay
    tree, kinds = tfds.with_decoded_tensors(decoded, build_tree(decoded))
    assert list(kinds.values()) == ["int16 [7200] audio 16000 Hz"]
    assert next(node for node in tree.children if node.name == "video").role != "tensor"
