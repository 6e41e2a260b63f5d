"""Tests for codec.decode.example_proto and codec.decode.decoder against records written by TensorFlow."""

from __future__ import annotations

import base64
import gzip
import hashlib
import struct
import zlib

import google_crc32c
import pytest
from google.protobuf import descriptor_pool
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st

from codec.decode import example_proto as proto
from codec.decode.decoder import (
    DecodedRecord,
    RecordKind,
    build_tree,
    decode_record,
    detect_kind,
    feature_cell,
    feature_keys,
    format_value,
    is_text,
    one_line_text,
    record_json_value,
    value_at,
    value_count,
    value_node,
)
from codec.decode.example_proto import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from tests.builders import FIXTURES, MANIFEST, bytestrings, example_message, floats, ints

# Files TensorFlow read to the end without error (compressed ones included).
INTACT = sorted(name for name, entry in MANIFEST.items() if entry["tf_error"] is None)


# ---------------------------------------------------------------- helpers


def _masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _framed_records(stream: bytes) -> list[bytes]:
    """Records of an intact TFRecord stream, CRCs checked (the reader is tested elsewhere)."""
    records, pos = [], 0
    while pos < len(stream):
        header = stream[pos:pos + 8]
        length, length_crc = struct.unpack_from("<QI", stream, pos)
        assert length_crc == _masked_crc(header), f"length CRC at {pos}"
        data = stream[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack_from("<I", stream, pos + 12 + length)
        assert data_crc == _masked_crc(data), f"data CRC at {pos}"
        records.append(data)
        pos += 12 + length + 4
    return records


def _fixture_records(name: str) -> list[bytes]:
    raw = (FIXTURES / name).read_bytes()
    compression = MANIFEST[name]["compression"]
    if compression == "GZIP":
        raw = gzip.decompress(raw)
    elif compression == "ZLIB":
        raw = zlib.decompress(raw)
    return _framed_records(raw)


def _fixture_pairs(name: str) -> list[tuple[bytes, dict]]:
    records = _fixture_records(name)
    assert len(records) == len(MANIFEST[name]["records"])
    return list(zip(records, MANIFEST[name]["records"]))


def _decoded(name: str, index: int) -> DecodedRecord:
    return decode_record(_fixture_records(name)[index])


def _length_delimited(buf: bytes) -> list[tuple[int, bytes]]:
    """(field number, payload) of every field of ``buf``; all must be length-delimited."""
    fields, pos = [], 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            byte = buf[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while pos < len(buf):
        tag = varint()
        assert tag & 7 == 2
        length = varint()
        fields.append((tag >> 3, buf[pos:pos + length]))
        pos += length
    return fields


def _canonical(data: bytes) -> list[tuple[int, list[bytes]]]:
    """Top-level fields with their map entries sorted: bytes equal up to map order."""
    return [(number, sorted(entry for _, entry in _length_delimited(payload)))
            for number, payload in _length_delimited(data)]


# ---------------------------------------------------------------- proto


def test_descriptors_mirror_tensorflow_names_and_numbers():
    assert Example.DESCRIPTOR.full_name == "tensorflow.Example"
    assert Example.DESCRIPTOR.file.name == "tensorflow/core/example/example.proto"
    assert Feature.DESCRIPTOR.file.name == "tensorflow/core/example/feature.proto"
    numbers = {
        message.DESCRIPTOR.name: {f.name: f.number for f in message.DESCRIPTOR.fields}
        for message in (Example, SequenceExample, Features, Feature, FeatureList,
                        FeatureLists, BytesList, FloatList, Int64List)
    }
    assert numbers == {
        "Example": {"features": 1},
        "SequenceExample": {"context": 1, "feature_lists": 2},
        "Features": {"feature": 1},
        "Feature": {"bytes_list": 1, "float_list": 2, "int64_list": 3},
        "FeatureList": {"feature": 1},
        "FeatureLists": {"feature_list": 1},
        "BytesList": {"value": 1},
        "FloatList": {"value": 1},
        "Int64List": {"value": 1},
    }
    oneof = Feature.DESCRIPTOR.oneofs_by_name["kind"]
    assert [f.name for f in oneof.fields] == ["bytes_list", "float_list", "int64_list"]
    for message, name in ((Features, "feature"), (FeatureLists, "feature_list")):
        entry = message.DESCRIPTOR.fields_by_name[name].message_type
        assert entry.GetOptions().map_entry


def test_value_lists_are_packed_like_tensorflow():
    assert Int64List(value=[5, 6]).SerializeToString() == b"\x0a\x02\x05\x06"
    assert FloatList(value=[1.0]).SerializeToString() == b"\x0a\x04" + struct.pack("<f", 1.0)
    assert BytesList(value=[b"a", b"bc"]).SerializeToString() == b"\x0a\x01a\x0a\x02bc"


def test_descriptors_live_in_a_private_pool():
    assert Example.DESCRIPTOR.file.pool is proto.POOL
    assert proto.POOL is not descriptor_pool.Default()


@pytest.mark.parametrize("name", INTACT)
def test_message_to_dict_matches_tensorflow(name):
    checked = 0
    for data, expected in _fixture_pairs(name):
        if "json" in expected:
            message_class = Example if expected["kind"] == "example" else SequenceExample
            assert MessageToDict(message_class.FromString(data)) == expected["json"]
            checked += 1
    assert checked == sum("json" in r for r in MANIFEST[name]["records"])


@pytest.mark.parametrize("name", INTACT)
def test_serialize_round_trips_tensorflow_records(name):
    for data, expected in _fixture_pairs(name):
        if expected["kind"] == "raw":
            continue
        message_class = Example if expected["kind"] == "example" else SequenceExample
        again = message_class.FromString(data).SerializeToString()
        # TensorFlow writes maps in hash order; every entry must still be byte-identical.
        assert _canonical(again) == _canonical(data)
        assert len(again) == len(data)


def test_round_trip_is_byte_identical_without_map_order():
    records = _fixture_records("zero_length_record.tfrecord")
    assert [Example.FromString(r).SerializeToString() for r in records] == records


# ---------------------------------------------------------------- kinds


@pytest.mark.parametrize("name", INTACT)
def test_detect_kind_matches_manifest(name):
    pairs = _fixture_pairs(name)
    for data, expected in pairs:
        assert hashlib.sha256(data).hexdigest() == expected["sha256"]
        assert detect_kind(data).value == expected["kind"]


def test_manifest_covers_every_kind():
    kinds = {r["kind"] for name in INTACT for r in MANIFEST[name]["records"]}
    assert kinds == {"example", "sequence_example", "raw"}


def test_raw_strings_and_empty_records():
    assert [detect_kind(r) for r in _fixture_records("raw_strings.tfrecord")] == [
        RecordKind.RAW, RecordKind.RAW]
    kinds = [detect_kind(r) for r in _fixture_records("zero_length_record.tfrecord")]
    assert kinds == [RecordKind.EXAMPLE] * 3


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", RecordKind.EXAMPLE),
        (b"\x0a\x00", RecordKind.EXAMPLE),
        (b"\x0a\x00\x0a\x00", RecordKind.EXAMPLE),  # a repeated field 1 merges
        (b"\x12\x00", RecordKind.SEQUENCE_EXAMPLE),
        (b"\x0a\x00\x12\x00", RecordKind.SEQUENCE_EXAMPLE),
        (b"\x12\x00\x0a\x00", RecordKind.SEQUENCE_EXAMPLE),
        (b"\x1a\x00", RecordKind.RAW),  # field 3
        (b"\x0a\x00\x1a\x00", RecordKind.PROTOBUF),  # two fields of no known type: read schema-less
        (b"\x08\x01", RecordKind.RAW),  # varint wire type
        (b"\x0d\x00\x00\x00\x00", RecordKind.RAW),  # fixed32
        (b"\x0b\x0c", RecordKind.RAW),  # group
        (b"\x02\x00", RecordKind.RAW),  # field number 0
        (b"\x0a\x05abc", RecordKind.RAW),  # length beyond the record
        (b"\x0a" + b"\xff" * 9 + b"\x01", RecordKind.RAW),  # 2**64-ish length
        (b"\x0a" + b"\xff" * 11, RecordKind.RAW),  # varint longer than 10 bytes
        (b"\x0a\x80", RecordKind.RAW),  # truncated varint
        (b"\x0a", RecordKind.RAW),  # tag without length
        (b"\x0a\x02\x0a\x05", RecordKind.RAW),  # Features inside is malformed
        (b"\x12\x02\x0a\x07", RecordKind.RAW),  # FeatureLists inside is malformed
        (b"Record A", RecordKind.RAW),
    ],
)
def test_detect_kind_rule(data, kind):
    assert detect_kind(data) is kind
    decoded = decode_record(data)
    assert decoded.kind is kind
    # only Examples and SequenceExamples have a protobuf message; schema-less fields ride in value
    assert (decoded.message is None) == (kind in (RecordKind.RAW, RecordKind.PROTOBUF))
    assert (decoded.value is not None) == (kind is RecordKind.PROTOBUF)


def test_decode_record_accepts_buffers():
    data = example_message(a=ints(1)).SerializeToString()
    for buffer in (bytearray(data), memoryview(data)):
        decoded = decode_record(buffer)
        assert decoded.kind is RecordKind.EXAMPLE
        assert decoded.data == data and isinstance(decoded.data, bytes)


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_decode_record_never_raises(data):
    decoded = decode_record(data)
    assert decoded.data == data
    value = record_json_value(decoded)
    if decoded.kind is RecordKind.RAW:
        assert value == {"base64": base64.b64encode(data).decode()}
    build_tree(decoded)


_feature_strategy = st.one_of(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5).map(lambda v: ints(*v)),
    st.lists(st.floats(width=32, allow_nan=False), max_size=5).map(lambda v: floats(*v)),
    st.lists(st.binary(max_size=20), max_size=5).map(lambda v: bytestrings(*v)),
)


@pytest.mark.slow
@given(st.dictionaries(st.text(max_size=8), _feature_strategy, max_size=6))
def test_generated_examples_decode_and_tree(features):
    example = example_message(features)
    decoded = decode_record(example.SerializeToString())
    assert decoded.kind is RecordKind.EXAMPLE
    assert decoded.message == example
    assert record_json_value(decoded) == MessageToDict(example)
    tree = build_tree(decoded)
    assert [child.name for child in tree.children] == sorted(features)
    for child in tree.children:
        kind = features[child.name].WhichOneof("kind")
        assert child.values == list(getattr(features[child.name], kind).value)


# ---------------------------------------------------------------- JSON value


def test_record_json_value_of_raw_is_base64():
    records = _fixture_records("raw_strings.tfrecord")
    values = [record_json_value(decode_record(r)) for r in records]
    assert [base64.b64decode(v["base64"]) for v in values] == [b"Record A", b"Record B"]
    assert list(values[0]) == ["base64"]


@pytest.mark.parametrize("name", ["sequence_examples.tfrecord", "detection.tfrecord",
                                  "zero_length_record.tfrecord"])
def test_record_json_value_is_tensorflows_json(name):
    for data, expected in _fixture_pairs(name):
        assert record_json_value(decode_record(data)) == expected["json"]


# ---------------------------------------------------------------- tree


def test_example_tree():
    decoded = _decoded("detection.tfrecord", 0)
    expected = MANIFEST["detection.tfrecord"]["records"][0]["json"]["features"]["feature"]
    tree = build_tree(decoded)
    assert (tree.name, tree.role, tree.path) == ("Example", "example", ())
    assert [c.name for c in tree.children] == sorted(expected)
    assert all(c.role == "feature" and c.path == ("features", c.name) for c in tree.children)
    nodes = {c.name: c for c in tree.children}

    width = nodes["image/width"]
    assert width.dtype == "int64"
    assert width.values == [int(v) for v in expected["image/width"]["int64List"]["value"]]
    assert all(type(v) is int for v in width.values)
    xmin = nodes["image/object/bbox/xmin"]
    assert xmin.dtype == "float" and all(type(v) is float for v in xmin.values)
    assert value_count(xmin) == len(expected["image/object/bbox/xmin"]["floatList"]["value"])
    text = nodes["image/object/class/text"]
    assert text.dtype == "bytes"
    assert text.values == [base64.b64decode(v)
                           for v in expected["image/object/class/text"]["bytesList"]["value"]]
    assert value_at(text, 0) == text.values[0]
    assert all(c.children == [] for c in tree.children)


def test_sequence_example_tree():
    decoded = _decoded("sequence_examples.tfrecord", 1)
    expected = MANIFEST["sequence_examples.tfrecord"]["records"][1]["json"]
    tree = build_tree(decoded)
    assert tree.role == "sequence_example"
    context, lists = tree.children
    assert (context.name, context.role, context.path) == ("context", "features", ("context",))
    assert [c.name for c in context.children] == sorted(expected["context"]["feature"])
    assert [c.path for c in context.children] == [("context", "length"), ("context", "my_bytes")]
    assert (lists.name, lists.role, lists.path) == (
        "feature_lists", "feature_lists", ("feature_lists",))
    expected_lists = expected["featureLists"]["featureList"]
    assert [c.name for c in lists.children] == sorted(expected_lists)

    my_ints = next(c for c in lists.children if c.name == "my_ints")
    assert (my_ints.role, my_ints.dtype, my_ints.values) == ("feature_list", "int64", [])
    steps = expected_lists["my_ints"]["feature"]
    assert [s.name for s in my_ints.children] == [f"step {i}" for i in range(len(steps))]
    assert [s.path for s in my_ints.children] == [
        ("feature_lists", "my_ints", i) for i in range(len(steps))]
    assert all(s.role == "step" for s in my_ints.children)
    assert [s.values for s in my_ints.children] == [
        [int(v) for v in step["int64List"]["value"]] for step in steps]

    frames = next(c for c in lists.children if c.name == "frames")
    assert frames.dtype == "bytes"
    assert frames.children[0].values[0].startswith(b"\x89PNG")


def test_raw_tree_and_empty_example_tree():
    raw = build_tree(decode_record(b"Record A"))
    assert (raw.role, raw.children, raw.values) == ("raw", [], [])
    empty = build_tree(decode_record(b""))
    assert (empty.role, empty.children) == ("example", [])


def test_tree_of_feature_without_kind_and_mixed_feature_list():
    example = Example()
    example.features.feature["unset"].SetInParent()
    (node,) = build_tree(decode_record(example.SerializeToString())).children
    assert (node.name, node.dtype, node.values) == ("unset", None, [])

    sequence = SequenceExample()
    mixed = sequence.feature_lists.feature_list["mixed"].feature
    mixed.add().CopyFrom(ints(1))
    mixed.add().CopyFrom(bytestrings(b"x"))
    decoded = decode_record(sequence.SerializeToString())
    feature_list = build_tree(decoded).children[1].children[0]
    assert feature_list.dtype is None
    assert [s.dtype for s in feature_list.children] == ["int64", "bytes"]


def test_value_node_addresses_one_value():
    decoded = decode_record(example_message(label=ints(7, 8, 9)).SerializeToString())
    feature = build_tree(decoded).children[0]
    node = value_node(feature, 2)
    assert (node.name, node.role, node.dtype) == ("[2]", "value", "int64")
    assert node.values == [9]
    assert node.path == ("features", "label", 2)
    with pytest.raises(IndexError):
        value_node(feature, 3)


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    ("value", "dtype", "text"),
    [
        (3, "int64", "3"),
        (-(2**63), "int64", "-9223372036854775808"),
        (0.10000000149011612, "float", "0.1"),  # float32 0.1 as Python reads it
        (2.700000047683716, "float", "2.7"),
        (0.4285714328289032, "float", "0.42857143"),
        (1.0, "float", "1.0"),
        (-0.0, "float", "-0.0"),
        (float("nan"), "float", "nan"),
        (float("inf"), "float", "inf"),
        (float("-inf"), "float", "-inf"),
        (3.4028234663852886e38, "float", "3.4028235e+38"),
        (1e300, "float", "1e+300"),  # not a float32: shown as it is, not as inf
        (b"daisy", "bytes", '"daisy"'),
        (b"a\nb", "bytes", '"a\\nb"'),
        ("ünï".encode(), "bytes", '"ünï"'),
        (b"", "bytes", '"" (0 bytes)'),
        (b"\x00\x01", "bytes", "hex: 00 01 (2 bytes)"),
        # every control or invisible character of text escaped alike, never drawn as a box
        (b"a\x1cb\x1dc\x1e\x1f", "bytes", '"a\\x1cb\\x1dc\\x1e\\x1f"'),
        (b"\x0b\x0c\tx\r", "bytes", '"\\x0b\\x0c\\tx\\r"'),
        ("a\u2028b\u2029c\x85".encode(), "bytes", '"a\\u2028b\\u2029c\\x85"'),
        ("zero\u200bwidth".encode(), "bytes", "hex: 7a 65 72 6f e2 80 8b 77 69 64 74 68 (12 bytes)"),  # not text: hex
        ("no\u00a0break\u3000wide".encode(), "bytes", '"no\u00a0break\u3000wide"'),  # spaces stay spaces
    ],
)
def test_format_value(value, dtype, text):
    assert format_value(value, dtype) == text


def test_format_value_floats_read_back_as_the_same_float32():
    for value in (0.1, 1 / 3, 123456.789, 1e-8, 6.02e23):
        single = struct.unpack("<f", struct.pack("<f", value))[0]
        shown = format_value(single, "float")
        assert struct.unpack("<f", struct.pack("<f", float(shown)))[0] == single
        assert len(shown) <= 15


def test_one_line_text_escapes_like_python_repr_but_keeps_spaces():
    for c in [*map(chr, range(0x20)), "\x7f", *map(chr, range(0x80, 0xa0)), "\u2028", "\ufeff", "\U000e0001"]:
        shown = one_line_text(f"a{c}b")
        assert shown == "a" + repr(c)[1:-1] + "b" and shown.isprintable(), repr(c)
    assert one_line_text("tab\there") == "tab\\there" and one_line_text("ünï 猫") == "ünï 猫"
    long = format_value(b"\x1c" * 100, "bytes", max_len=40)  # escaped, then cut
    assert long.startswith('"\\x1c\\x1c') and long.endswith('…" (100 bytes)') and len(long) <= 40


def test_format_value_elides_long_bytes_and_says_the_length():
    text = format_value(b"lorem ipsum " * 50, "bytes", max_len=40)
    assert text.startswith('"lorem ipsum lorem') and text.endswith('…" (600 bytes)')
    assert len(text) <= 40
    png = format_value(b"\x89PNG\r\n\x1a\n" + bytes(1226), "bytes", max_len=40)
    assert png.startswith("hex: 89 50 4e 47") and png.endswith("… (1234 bytes)")
    assert len(png) <= 40


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"hello", True),
        (b"tab\tand\nnewline\r\n", True),
        ("ünïcødé ✓".encode(), True),
        ("non\u00a0breaking".encode(), True),
        (b"", False),
        (b"\xff\xfe", False),
        (b"a\x00b", False),
        (b"\x1b[0m", False),
        (b"\x89PNG\r\n\x1a\n", False),
    ],
)
def test_is_text(data, expected):
    assert is_text(data) is expected


# ---------------------------------------------------------------- table cells


def test_feature_keys():
    expected = MANIFEST["detection.tfrecord"]["records"][0]["json"]["features"]["feature"]
    assert feature_keys(_decoded("detection.tfrecord", 0)) == sorted(expected)
    assert feature_keys(_decoded("sequence_examples.tfrecord", 0)) == ["length", "my_bytes"]
    assert feature_keys(decode_record(b"Record A")) == []
    assert feature_keys(decode_record(b"")) == []


def test_feature_cells_of_detection_record():
    decoded = _decoded("detection.tfrecord", 1)
    features = decoded.message.features.feature
    width = features["image/width"].int64_list.value[0]
    height = features["image/height"].int64_list.value[0]
    assert feature_cell(decoded, "image/encoded") == f"<JPEG {width}x{height}>"
    assert feature_cell(decoded, "image/width") == str(width)
    assert feature_cell(decoded, "image/filename") == '"img_0001.jpg"'
    assert feature_cell(decoded, "image/object/class/text") == '["dog", "cat"]'
    assert feature_cell(decoded, "image/object/class/label") == "[2, 1]"
    assert feature_cell(decoded, "no such key") == ""


def test_feature_cell_elides_long_lists():
    decoded = decode_record(example_message(ids=ints(*range(40)), few=ints(1, 2)).SerializeToString())
    cell = feature_cell(decoded, "ids")
    assert cell.startswith("[0, 1, 2, ") and cell.endswith(", …] (40)")
    assert len(cell) <= 40
    assert feature_cell(decoded, "few") == "[1, 2]"
    empty = decode_record(example_message(none=floats()).SerializeToString())
    assert feature_cell(empty, "none") == "[]"


def test_feature_cells_of_sequence_example():
    decoded = _decoded("sequence_examples.tfrecord", 1)
    steps = len(MANIFEST["sequence_examples.tfrecord"]["records"][1]["json"]
                ["featureLists"]["featureList"]["frames"]["feature"])
    assert feature_cell(decoded, "frames") == f"{steps} steps"
    assert feature_cell(decoded, "my_bytes") == '"data"'
    assert feature_cell(decode_record(b"Record A"), "anything") == ""


def test_long_text_is_cut_between_escapes_never_inside_one():
    from codec.decode.decoder import _format_text

    assert _format_text(("aaaaa" + "\u2028" * 30).encode(), 20) == '"aaaaa…" (95 bytes)'
    assert _format_text(("a\x1cb" * 40).encode(), 30) == '"a\\x1cba\\x1cba…" (120 bytes)'
    assert _format_text(("abc" * 40).encode(), 30) == '"abcabcabcabcabc…" (120 bytes)'
