"""Records that are not Examples, through the whole codec: kind detection, ``cat``, ``stats``, ``schema``,
export and images, checked against the reference MANIFEST of the shared payloads."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from codec.cli.main import main
from codec.decode.decoder import RecordKind, build_tree, decode_record, feature_values, record_features
from codec.decode.example_proto import Example
from codec.decode.images import decode_image, find_images
from codec.decode.payloads import array_values, record_fields
from codec.decode.tensors import DATA_TYPES, TensorProto, canonical_tensor, tensor_array
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records
from tests.builders import FIXTURES

from .test_tensors import tensor_bytes

PAYLOADS = FIXTURES / "payloads"
TENSORS = str(PAYLOADS / "tensors.tfrecord")
TENSOR_RECORDS = json.loads((PAYLOADS / "MANIFEST.json").read_text())["tensors.tfrecord"]["records"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cat_json_of_tensor_records_is_the_reference(capsys):
    code, out, err = run(capsys, "cat", "--json", TENSORS)
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == len(TENSOR_RECORDS)
    for line, expected in zip(lines, TENSOR_RECORDS):
        assert line["kind"] == "tensor"
        assert line["value"] == expected["json"]


def test_cat_text_names_dtype_and_shape(capsys):
    code, out, _ = run(capsys, "cat", "--range", "0:1", TENSORS)
    assert code == 0
    header, label = out.splitlines()[:2]
    assert header.endswith("tensor")
    assert label == "tensor float32 [2, 3]"


def test_tensor_layout_decides_the_kind():
    scalar = tensor_bytes("DT_INT32", [], int_val=[5])
    assert decode_record(scalar).kind is RecordKind.TENSOR
    # dtype alone, without the shape TensorFlow always writes: not taken for a tensor
    assert decode_record(TensorProto(dtype=DATA_TYPES["DT_INT32"], int_val=[5]).SerializeToString()).kind \
        is not RecordKind.TENSOR
    # content that misses its shape is not a tensor either
    short = tensor_bytes("DT_FLOAT", [4], tensor_content=b"\0" * 12)
    assert decode_record(short).kind is not RecordKind.TENSOR
    assert decode_record(Example().SerializeToString()).kind is RecordKind.EXAMPLE


def test_tensor_flat_features_for_stats_and_filters():
    decoded = decode_record(tensor_bytes("DT_FLOAT", [2, 2], float_val=[1.5, -2.0, 0.25, 8.0]))
    fields = record_fields(decoded)
    assert fields["dtype"] == ("bytes", [b"float32"])
    assert fields["shape"] == ("int64", [2, 2])
    assert fields["values"] == ("float", [1.5, -2.0, 0.25, 8.0])
    features = record_features(decoded)
    assert feature_values(features["values"]) == ("float", [1.5, -2.0, 0.25, 8.0])
    strings = record_fields(decode_record(tensor_bytes("DT_STRING", [2], string_val=[b"a", b"\xff"])))
    assert strings["values"] == ("bytes", [b"a", b"\xff"])


def test_flat_values_of_arrays_are_exact():
    import numpy as np

    big = array_values(np.array([2**64 - 1, 2**63, 7], dtype=np.uint64))
    assert big == ("int64", [2**64 - 1, 2**63, 7]) and big.scalar == "int64"
    flags = array_values(np.array([True, False]))
    assert flags == ("int64", [True, False]) and flags.scalar == "bool" and type(flags[1][0]) is bool
    wide, narrow = array_values(np.array([0.1])), array_values(np.array([0.1], dtype=np.float32))
    assert (wide.scalar, wide[1]) == ("double", [0.1])
    assert (narrow.scalar, narrow[1]) == ("float", [float(np.float32(0.1))])


def test_tensor_tree_carries_the_array():
    decoded = decode_record(tensor_bytes("DT_UINT8", [2, 3], tensor_content=bytes(range(6))))
    tree = build_tree(decoded)
    assert (tree.role, tree.dtype, tree.name) == ("tensor", "uint8", "Tensor uint8 [2, 3]")
    assert tree.values == [0, 1, 2, 3, 4, 5]
    assert tree.detail.shape == (2, 3)


def test_stats_and_schema_cover_tensor_records(capsys):
    code, out, _ = run(capsys, "stats", "--json", TENSORS)
    assert code == 0
    stats = json.loads(out)
    assert stats["kinds"] == {"tensor": len(TENSOR_RECORDS)}
    assert stats["raw_records"] == 0
    assert stats["features"]["shape"]["present"] == len(TENSOR_RECORDS)
    dtypes = {entry["json"]["dtype"] for entry in TENSOR_RECORDS}
    top = stats["features"]["dtype"]
    shown = json.dumps(top)
    assert all(name in shown for name in dtypes)
    code, out, _ = run(capsys, "schema", "--json", TENSORS)
    assert code == 0
    schema = json.loads(out)
    assert schema["records"] == len(TENSOR_RECORDS)
    assert {"dtype", "shape", "values"} <= set(schema["features"])


def test_where_filters_tensor_records(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--where", 'dtype == "float16"', TENSORS)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    expected = [i for i, r in enumerate(TENSOR_RECORDS) if r["json"]["dtype"] == "float16"]
    assert [line["index"] for line in lines] == expected


def test_export_jsonl_and_csv_of_tensors(capsys, tmp_path):
    out_jsonl = tmp_path / "t.jsonl"
    code, _, err = run(capsys, "export", "--format", "jsonl", "--to", str(out_jsonl), TENSORS)
    assert code == 0, err
    lines = [json.loads(line) for line in out_jsonl.read_text().splitlines()]
    assert [line["value"] for line in lines] == [r["json"] for r in TENSOR_RECORDS]
    out_csv = tmp_path / "t.csv"
    code, _, err = run(capsys, "export", "--format", "csv", "--to", str(out_csv), TENSORS)
    assert code == 0, err
    rows = list(csv.DictReader(out_csv.open()))
    assert [row["dtype"] for row in rows] == [r["json"]["dtype"] for r in TENSOR_RECORDS]


def test_image_shaped_tensor_is_an_image():
    pixels = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    decoded = decode_record(tensor_bytes("DT_UINT8", [4, 5, 3], tensor_content=pixels.tobytes()))
    (ref,) = find_images(decoded)
    assert (ref.key, ref.width, ref.height, ref.channels) == ("tensor", 5, 4, 3)
    assert np.array_equal(np.asarray(decode_image(ref)), pixels)
    deep = np.full((3, 3), 24200, dtype=np.uint16)
    (ref16,) = find_images(decode_record(tensor_bytes("DT_UINT16", [3, 3], tensor_content=deep.tobytes())))
    shown = np.asarray(decode_image(ref16))
    assert shown.dtype == np.uint8 and int(shown[0, 0]) == round(24200 * 255 / 65535)
    assert find_images(decode_record(tensor_bytes("DT_FLOAT", [4, 4], float_val=[1.0]))) == []


@pytest.mark.parametrize("payload", [b"\x08\x01\x12\x00\xff\xff", b"\x08\x07\x12\x02\x0a\x05"])
def test_malformed_tensor_bytes_are_a_record_outcome(payload, tmp_path, capsys):
    path = tmp_path / "bad.tfrecord"
    write_records(str(path), [payload, tensor_bytes("DT_INT64", [1], int64_val=[3])])
    code, out, err = run(capsys, "cat", "--json", str(path))
    assert code == 0, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["kind"] in ("raw", "protobuf")
    assert second["kind"] == "tensor" and second["value"]["values"] == [3]


@pytest.mark.parametrize("dtype, numpy_dtype", [("DT_FLOAT", "<f4"), ("DT_DOUBLE", "<f8"), ("DT_INT32", "<i4"),
                                                ("DT_INT64", "<i8"), ("DT_UINT8", "u1"), ("DT_UINT16", "<u2"),
                                                ("DT_HALF", "<f2"), ("DT_BOOL", "?"), ("DT_COMPLEX64", "<c8")])
@pytest.mark.parametrize("shape", [[], [1], [3], [2, 3], [4, 1, 2], [200, 300]])
def test_the_fast_read_of_tensorflows_layout_is_the_full_parse(dtype, numpy_dtype, shape):
    rng = np.random.default_rng(len(shape))
    array = (rng.random(shape) * 100).astype(numpy_dtype)
    data = tensor_bytes(dtype, shape, tensor_content=array.tobytes())
    parsed = canonical_tensor(data)
    assert parsed is not None and parsed.proto is None
    fast = tensor_array(parsed)
    assert fast.dtype == array.dtype and fast.shape == array.shape and np.array_equal(fast, array)
    full = decode_record(data)  # the same bytes through protobuf, as a non-canonical record would go
    assert np.array_equal(tensor_array(parse_tensor_by_protobuf(data)), full_array(full))


def parse_tensor_by_protobuf(data: bytes):
    """parse_tensor without its fast path: the reference the fast path must agree with."""
    from codec.decode import tensors

    original = tensors.canonical_tensor
    tensors.canonical_tensor = lambda _data: None
    try:
        return tensors.parse_tensor(data)
    finally:
        tensors.canonical_tensor = original


def full_array(decoded):
    from codec.decode.tensors import tensor_of

    return tensor_of(decoded)


def test_other_layouts_are_left_to_the_full_parse():
    content = np.arange(6, dtype="<f4").tobytes()
    named = TensorProto(dtype=DATA_TYPES["DT_FLOAT"])
    named.tensor_shape.dim.add(size=6, name="n")
    named.tensor_content = content
    unknown = tensor_bytes("DT_FLOAT", [6], tensor_content=content) + b"\xa0\x06\x01"  # field 100
    cases = {
        "a dim name": named.SerializeToString(),
        "an unknown field": unknown,
        "values in the repeated field": tensor_bytes("DT_FLOAT", [2], float_val=[1.0, 2.0]),
        "strings": tensor_bytes("DT_STRING", [1], string_val=[b"a"]),
        "a short content": tensor_bytes("DT_FLOAT", [6], tensor_content=content[:-4]),
        "an unknown dim": tensor_bytes("DT_FLOAT", [-1], tensor_content=content),
    }
    for what, data in cases.items():
        assert canonical_tensor(data) is None, what
    assert decode_record(cases["a dim name"]).kind is RecordKind.TENSOR
    assert decode_record(cases["an unknown field"]).kind is not RecordKind.TENSOR
    assert decode_record(cases["a short content"]).kind is not RecordKind.TENSOR


def test_flat_keys_of_tree_paths_are_the_keys_statistics_use():
    from codec.decode.messages import load_message_type
    from codec.decode.payloads import flat_key

    frame = load_message_type(PAYLOADS / "messages" / "frames.desc", "lens.demo.Frame")
    with open_tfrecord(PAYLOADS / "messages" / "frames.tfrecord") as file:
        file.build_index()
        decoded = frame.decode(bytes(file.read(1).data))
    keys = set(record_fields(decoded))

    def leaves(node):
        if not node.children:
            yield node
        for child in node.children:
            yield from leaves(child)

    tree_keys = {flat_key(node.path) for node in leaves(build_tree(decoded)) if node.role == "field"}
    assert "boxes.label" in tree_keys and tree_keys <= keys | {"captured_at"}
    assert flat_key(("features", "image/object/class/label")) == "image/object/class/label"
    assert flat_key(("feature_lists", "frames", 3)) == "frames"
