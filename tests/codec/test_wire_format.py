"""The schema-less protobuf view: parsing, protoc's --decode_raw text, the protobuf rule, JSON, features, tree."""
from __future__ import annotations

import base64
import io
import json
import os
import random
import struct
import subprocess
import sys
import time

import pytest

from codec.decode.decoder import RecordKind, decode_record
from codec.decode.example_proto import Example, SequenceExample
from codec.decode.schemaless import (
    GROUP_DEPTH,
    MESSAGE_DEPTH,
    WireField,
    encode_wire,
    looks_like_protobuf,
    parse_wire,
    protobuf_fields,
    wire_features,
    wire_from_json,
    wire_json,
    wire_text,
    wire_tree,
)
from codec.decode.tensors import TensorProto
from codec.sources.tfrecord_file import open_tfrecord
from tests.builders import MANIFEST, example, fixture_path

# ---------------------------------------------------------------- building wire bytes


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def v(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def f32(number: int, value: int) -> bytes:
    return tag(number, 5) + struct.pack("<I", value)


def f64(number: int, value: int) -> bytes:
    return tag(number, 1) + struct.pack("<Q", value)


def group(number: int, payload: bytes) -> bytes:
    return tag(number, 3) + payload + tag(number, 4)


def nested_ld(depth: int) -> bytes:
    msg = v(1, 1)
    for _ in range(depth):
        msg = ld(1, msg)
    return msg


def nested_groups(depth: int, outer_ld: int = 0) -> bytes:
    msg = b"\x13" * depth + v(1, 1) + b"\x14" * depth  # field 2 groups
    for _ in range(outer_ld):
        msg = ld(1, msg)
    return msg


def random_message(rng: random.Random, depth: int = 0) -> bytes:
    """A canonical message of random shape: scalars, text, binary, nested, repeated and groups."""
    out = bytearray()
    for _ in range(rng.randint(1, 6)):
        number = rng.choice([1, 2, 3, 4, 5, 15, 16, 17, 100, 2047, 2048, 99999, (1 << 29) - 1])
        kind = rng.choice(["varint", "negative", "fixed32", "fixed64", "text", "binary", "empty", "message",
                           "group", "repeated"])
        if kind in ("message", "group") and depth >= 4:
            kind = "varint"
        if kind == "varint":
            out += v(number, rng.choice([0, 1, 127, 128, 150, 1 << 32, (1 << 63) + 5, (1 << 64) - 1]))
        elif kind == "negative":
            out += v(number, -rng.randint(1, 1 << 40))
        elif kind == "fixed32":
            out += f32(number, rng.choice([0, 1, 0x3F800000, 0xFFFFFFFF, rng.getrandbits(32)]))
        elif kind == "fixed64":
            out += f64(number, rng.choice([0, 7, (1 << 64) - 1, rng.getrandbits(64)]))
        elif kind == "text":
            text = rng.choice(["frame-0001", "café ☕", "tab\there \"q\" 'a' \\", "long text " * 20])
            out += ld(number, text.encode())
        elif kind == "binary":
            out += ld(number, rng.randbytes(rng.randint(1, 40)))
        elif kind == "empty":
            out += ld(number, b"")
        elif kind == "message":
            out += ld(number, random_message(rng, depth + 1))
        elif kind == "group":
            out += group(number, random_message(rng, depth + 1))
        else:
            for _ in range(rng.randint(2, 4)):
                out += ld(number, random_message(rng, depth + 1)) if depth < 3 else v(number, rng.getrandbits(20))
    return bytes(out)


def _sequence_example() -> bytes:
    seq = SequenceExample()
    seq.context.feature["id"].bytes_list.value.append(b"clip-7")
    steps = seq.feature_lists.feature_list["frames"].feature
    for i in range(3):
        steps.add().int64_list.value.extend([i, -i])
    return seq.SerializeToString()


def _tensors() -> list[tuple[str, bytes]]:
    out = []
    for name, kwargs in [
        ("float", dict(dtype=1, float_val=[1.5, -2.0], tensor_content=b"")),
        ("content", dict(dtype=1, tensor_content=struct.pack("<4f", 1, 2, 3, 4))),
        ("string", dict(dtype=7, string_val=[b"a", b"\xff\x00", b""])),
        ("bool", dict(dtype=10, bool_val=[True, False])),
        ("half", dict(dtype=19, half_val=[15360, 0])),
        ("int64", dict(dtype=9, int64_val=[-1, 2**62])),
    ]:
        t = TensorProto(**kwargs)
        t.tensor_shape.dim.add(size=2)
        t.tensor_shape.dim.add(size=-1, name="batch")
        out.append((f"tensor_{name}", t.SerializeToString()))
    scalar = TensorProto(dtype=3, int_val=[7])
    scalar.tensor_shape.SetInParent()
    out.append(("tensor_scalar", scalar.SerializeToString()))
    return out


def _descriptor_files() -> list[tuple[str, bytes]]:
    from google.protobuf import descriptor_pb2, timestamp_pb2

    return [("descriptor_proto", descriptor_pb2.DESCRIPTOR.serialized_pb),
            ("timestamp_proto", timestamp_pb2.DESCRIPTOR.serialized_pb)]


def _fixture_records() -> list[tuple[str, bytes]]:
    out = []
    for name, count in [("structured.tfrecord", 3), ("sequence_examples.tfrecord", 2), ("detection.tfrecord", 1),
                        ("raw_strings.tfrecord", 2)]:
        with open_tfrecord(fixture_path(name), use_cache=False) as f:
            out += [(f"{name}#{i}", bytes(f.read(i).data)) for i in range(count)]
    return out


HAND_BUILT = {
    "classic": v(1, 150) + ld(2, b"testing") + ld(3, v(1, 150)),
    "fixed": f32(1, 1) + f32(2, 0xFFFFFFFF) + f64(3, 1) + f64(4, (1 << 64) - 1) + f32(5, 0x3F800000),
    "negative_varints": v(1, -1) + v(2, -(1 << 63)) + v(3, (1 << 63) - 1) + v(4, 0),
    "all_bytes": ld(1, bytes(range(256))) + ld(2, b"\"'\\?\a\b\f\v"),
    "utf8": ld(1, "naïve ☕ 日本".encode()),
    "empty_strings": ld(1, b"") + ld(2, b"") + v(3, 1),
    "repeated": v(1, 1) + v(1, 2) + v(1, 3) + ld(2, b"a") + ld(2, b"b"),
    "repeated_messages": ld(4, v(1, 1)) + ld(4, v(1, 2) + ld(2, b"x")) + ld(4, v(1, 3)),
    "interleaved": v(1, 1) + v(2, 2) + v(1, 3),
    "groups": group(1, v(2, 5) + ld(3, b"in group")) + group(1, b"") + group(7, group(8, f32(9, 3))),
    "group_holding_message": group(2, ld(3, v(1, 9) + ld(2, b"deep"))),
    "big_numbers": v((1 << 29) - 1, 1) + ld(16, b"x") + v(2048, 5),
    "packed": ld(1, varint(1) + varint(300) + varint(2)) + ld(2, struct.pack("<3f", 1, 2, 3)),
    "message_and_trailing": ld(1, v(1, 1) + b"\x00") + ld(2, b"\x0c") + ld(3, b"\x08"),
    "overlong_varint": b"\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",
    "varint_10th_byte": b"\x08" + b"\xff" * 9 + b"\x7f",
    "tag_high_bits_dropped": b"\x88\x80\x80\x80\x70\x01",
    "overlong_tag": b"\x88\x80\x80\x80\x00\x01",
    "overlong_size": b"\x0a\x80\x80\x80\x80\x00",
    "overlong_size_6": b"\x0a\x80\x80\x80\x80\x80\x00",
    "size_2gb": b"\x0a\x80\x80\x80\x80\x08",
    "nested_tag_high_bits": ld(1, b"\x88\x80\x80\x80\x70\x01"),
    "eleven_byte_varint": b"\x08" + b"\x80" * 10 + b"\x00",
    "six_byte_tag": b"\x88\x80\x80\x80\x80\x00\x01",
    "field_zero": b"\x00\x01",
    "wire_type_6": b"\x0e",
    "wire_type_7": b"\x0f\x01",
    "end_group_at_top": b"\x0c",
    "mismatched_end": b"\x0b\x08\x01\x14",
    "open_group": b"\x0b\x08\x01",
    "truncated_varint": b"\x08\xff",
    "truncated_fixed": b"\x0d\x01\x02",
    "length_past_end": b"\x0a\x05abc",
    "huge_length": b"\x0a" + varint(1 << 62) + b"abc",
    "trailing_byte": v(1, 1) + b"\x08",
    "empty": b"",
}
for _d in (MESSAGE_DEPTH - 1, MESSAGE_DEPTH, MESSAGE_DEPTH + 1, MESSAGE_DEPTH + 2, 40):
    HAND_BUILT[f"nested_ld_{_d}"] = nested_ld(_d)
for _d in (GROUP_DEPTH - 1, GROUP_DEPTH, GROUP_DEPTH + 1):
    HAND_BUILT[f"nested_groups_{_d}"] = nested_groups(_d)
for _d in (MESSAGE_DEPTH - 1, MESSAGE_DEPTH, MESSAGE_DEPTH + 1):
    HAND_BUILT[f"groups_{_d}_in_ld"] = nested_groups(_d, outer_ld=1)
    HAND_BUILT[f"groups_{_d - 1}_in_ld_in_ld"] = nested_groups(_d - 1, outer_ld=2)


def _cases() -> dict[str, bytes]:
    cases = dict(HAND_BUILT)
    cases["example"] = example(ints=[0, 1, -1, 2**63 - 1, -(2**63)], floats=[0.5, -1.25, float("inf")],
                               bytes=[b"", b"text", bytes(range(256))], empty=[])
    cases["sequence_example"] = _sequence_example()
    cases.update(_tensors())
    cases.update(_descriptor_files())
    cases.update(_fixture_records())
    rng = random.Random(12)
    for i in range(60):
        cases[f"random_message_{i}"] = random_message(rng)
    for i in range(60):  # mostly 7-bit bytes, so that many parse
        n = rng.randint(1, 24)
        cases[f"random_bytes_{i}"] = bytes(rng.randrange(128 if rng.random() < 0.8 else 256) for _ in range(n))
    return cases


CASES = _cases()

# Runs protoc --decode_raw (grpc_tools' own protoc) on every file of a folder in one process.
_PROTOC_RUNNER = """
import os, sys
from grpc_tools import protoc
folder = sys.argv[1]
stdin, stdout = os.dup(0), os.dup(1)
for name in sorted(n for n in os.listdir(folder) if n.endswith(".bin")):
    stem = os.path.join(folder, name[:-4])
    with open(stem + ".bin", "rb") as fin, open(stem + ".out", "wb") as fout:
        os.dup2(fin.fileno(), 0)
        os.dup2(fout.fileno(), 1)
        rc = protoc.main(["protoc", "--decode_raw"])
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
    with open(stem + ".rc", "w") as f:
        f.write(str(rc))
"""


@pytest.fixture(scope="module")
def protoc_outputs(tmp_path_factory) -> dict[str, tuple[int, str]]:
    """protoc --decode_raw's exit code and output for every case."""
    pytest.importorskip("grpc_tools")
    folder = tmp_path_factory.mktemp("decode_raw")
    names = sorted(CASES)
    for i, name in enumerate(names):
        (folder / f"{i:04d}.bin").write_bytes(CASES[name])
    runner = folder / "runner.py"
    runner.write_text(_PROTOC_RUNNER)
    subprocess.run([sys.executable, os.fspath(runner), os.fspath(folder)], check=True, capture_output=True,
                   timeout=300)
    return {name: (int((folder / f"{i:04d}.rc").read_text()), (folder / f"{i:04d}.out").read_text("latin-1"))
            for i, name in enumerate(names)}


# ---------------------------------------------------------------- protoc --decode_raw


def _family(name: str) -> str:
    if name in HAND_BUILT:
        return "hand_built"
    return name.rsplit("_", 1)[0] if name.startswith("random_") else "real_messages"


@pytest.mark.parametrize("family", ["hand_built", "real_messages", "random_message", "random_bytes"])
def test_wire_text_matches_protoc_decode_raw(family, protoc_outputs):
    """Same verdict as protoc (parses or not), and the same text, for every case of the family."""
    names = [name for name in CASES if _family(name) == family]
    assert len(names) >= 10
    wrong = []
    for name in names:
        rc, expected = protoc_outputs[name]
        fields = parse_wire(CASES[name])
        if (rc != 0) != (fields is None) or (fields is not None and wire_text(fields) != expected):
            wrong.append(name)
    assert not wrong, f"differs from protoc --decode_raw: {wrong}"


def test_protoc_cases_cover_what_they_claim(protoc_outputs):
    """The comparison above meets both outcomes and every printed form."""
    outputs = [out for rc, out in protoc_outputs.values() if rc == 0]
    assert sum(rc != 0 for rc, _ in protoc_outputs.values()) >= 15
    joined = "".join(outputs)
    for form in (": 0x0000000000000001\n", ": 0x00000001\n", ": 18446744073709551615\n", ' {\n  ', ': ""\n',
                 "\\303\\251", "\\'", '\\"', "\\\\", "\\t", "\\n", "\\000", "\\177"):
        assert form in joined, form


# ---------------------------------------------------------------- parsing


def test_parse_wire_reads_fields_and_values():
    fields = parse_wire(HAND_BUILT["classic"] + f32(4, 0x01020304) + f64(5, 2) + group(6, v(1, 1)))
    assert fields == (
        WireField(1, 0, 150), WireField(2, 2, b"testing"), WireField(3, 2, (WireField(1, 0, 150),)),
        WireField(4, 5, 0x01020304), WireField(5, 1, 2), WireField(6, 3, (WireField(1, 0, 1),)))
    assert parse_wire(b"") == ()
    assert parse_wire(memoryview(v(1, 5))) == (WireField(1, 0, 5),)


def test_nesting_budget_is_protocs():
    """Length-delimited values are messages MESSAGE_DEPTH levels deep; deeper ones stay bytes."""
    fields = parse_wire(nested_ld(MESSAGE_DEPTH + 3))
    depth = 0
    while isinstance(fields[0].value, tuple):
        fields, depth = fields[0].value, depth + 1
    assert depth == MESSAGE_DEPTH
    assert parse_wire(fields[0].value) is not None  # the bytes left are a message protoc no longer opens


def test_round_trip_through_bytes_and_json():
    """JSON reads back to the same fields; bytes too, except where the input wrote a varint longer than needed."""
    for name, data in CASES.items():
        fields = parse_wire(data)
        if fields is None:
            continue
        assert wire_from_json(json.loads(json.dumps(wire_json(fields)))) == fields, name
        assert parse_wire(encode_wire(fields)) == fields, name
        if name.startswith(("classic", "groups", "repeated", "example", "tensor_", "descriptor_", "structured")):
            assert encode_wire(fields) == data, name
    assert encode_wire(parse_wire(HAND_BUILT["overlong_varint"])) == v(1, 0)


# ---------------------------------------------------------------- hostile input


@pytest.mark.parametrize("data", [
    nested_ld(10_000),
    b"\x0b" * 10_000 + v(1, 1) + b"\x0c" * 10_000,
    ld(1, b"\x0b" * 10_000 + b"\x0c" * 10_000) * 50,
    b"\x0a" + varint(1 << 62) + b"x" * 100,
    b"\x0a" + b"\xff" * 30,
    b"\x08" + b"\xff" * 10_000,
    b"\x88" + b"\x80" * 10,
    b"\x0b" * 10_000,
    (b"\x0a\x7f" + b"\x0a\x7d" * 64)[:300],
], ids=["ld_10000_deep", "groups_10000_deep", "deep_groups_in_ld", "length_2_62", "endless_length",
        "endless_varint", "endless_tag", "open_groups", "lengths_past_end"])
def test_hostile_input_is_quick_and_never_raises(data):
    start = time.perf_counter()
    fields = parse_wire(data)
    looks_like_protobuf(data)
    if fields is not None:
        wire_text(fields)
        wire_json(fields)
        wire_features(fields)
        wire_tree(fields)
    assert time.perf_counter() - start < 2.0
    assert decode_record(data).kind in (RecordKind.PROTOBUF, RecordKind.RAW)


def test_mangled_messages_never_raise():
    rng = random.Random(7)
    seeds = [data for name, data in CASES.items() if name.startswith("random_message")]
    outcomes = set()
    for i in range(1500):
        data = bytearray(seeds[i % len(seeds)])
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            data[pos] = rng.randrange(256) if rng.random() < 0.7 else data[pos] ^ 0x80
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        fields = parse_wire(bytes(data))
        outcomes.add(fields is None)
        if fields is not None:
            wire_text(fields), wire_json(fields), wire_features(fields), wire_tree(fields)
    assert outcomes == {True, False}


# ---------------------------------------------------------------- which records are protobuf


def _records(name: str) -> list[bytes]:
    with open_tfrecord(fixture_path(name), use_cache=False) as f:
        return [bytes(f.read(i).data) for i in range(len(f))]


def test_raw_fixtures_stay_raw():
    records = _records("raw_strings.tfrecord")
    assert [r["kind"] for r in MANIFEST["raw_strings.tfrecord"]["records"]] == ["raw"] * len(records)
    for data in records:
        assert not looks_like_protobuf(data)
        assert decode_record(data).kind is RecordKind.RAW


@pytest.mark.parametrize("name", ["raw_pixels_32x32x3.tfrecord", "flowers_jpeg.tfrecord", "detection.tfrecord"])
def test_image_and_pixel_bytes_are_not_protobuf(name):
    """Records keep their MANIFEST kind, and the image bytes inside them are not protobuf."""
    records = _records(name)
    kinds = [r["kind"] for r in MANIFEST[name]["records"]]
    assert [decode_record(data).kind.value for data in records[:len(kinds)]] == kinds
    blobs = []
    for data in records:
        features = Example.FromString(data).features.feature
        blobs += [b for key in features for b in features[key].bytes_list.value if len(b) > 100]
    assert len(blobs) >= len(records)
    assert not any(looks_like_protobuf(b) for b in blobs)


def test_encoded_images_are_not_protobuf():
    from PIL import Image

    rng = random.Random(3)
    with open(fixture_path("not_a_tfrecord.jpg"), "rb") as f:
        images = [f.read()]
    for mode, size, depth in [("RGB", (32, 32), 3), ("L", (17, 5), 1), ("RGBA", (8, 8), 4), ("I;16", (4, 4), 2)]:
        for fmt in ("PNG", "JPEG") if mode in ("RGB", "L") else ("PNG",):
            image = Image.frombytes(mode, size, rng.randbytes(size[0] * size[1] * depth))
            out = io.BytesIO()
            image.save(out, fmt)
            images.append(out.getvalue())
    for data in images:
        assert not looks_like_protobuf(data)
        assert decode_record(data).kind is RecordKind.RAW


@pytest.mark.parametrize("text", [b"hello", b"row-0", b"hi", b"80", b"(a(b", b"Record A", b"cat\n",
                                  b'{"label": 3, "name": "dog"}', b"1,2,3\n", "naïve café".encode()])
def test_text_stays_raw(text):
    assert not looks_like_protobuf(text)
    assert decode_record(text).kind is RecordKind.RAW


def test_some_text_would_parse_so_the_text_rule_matters():
    assert parse_wire(b"hi") == (WireField(13, 0, ord("i")),)
    assert parse_wire(b"(a(b") is not None
    assert parse_wire(b"\n(" + b"x" * 40) is not None  # field 1 holding forty times field 15 = 120
    assert not looks_like_protobuf(b"\n(" + b"x" * 40)


@pytest.mark.parametrize("data", [v(1, 5), v(7, 1 << 40), f32(1, 3), f64(2, 9), ld(1, b""), ld(1, b"\xff\xfe\x00"),
                                  b"\x08\x08\x08\x08"[:2]])
def test_a_lone_scalar_or_blob_stays_raw(data):
    assert parse_wire(data) is not None
    assert not looks_like_protobuf(data)
    assert protobuf_fields(data) is None


def test_empty_record_is_not_protobuf():
    assert not looks_like_protobuf(b"")
    assert decode_record(b"").kind is RecordKind.EXAMPLE


def _messages_of_many_shapes() -> list[bytes]:
    from google.protobuf import descriptor_pb2, struct_pb2, timestamp_pb2

    rng = random.Random(5)
    shapes = [random_message(rng) for _ in range(120)]
    shapes += [data for name, data in _descriptor_files()]
    shapes.append(descriptor_pb2.FieldDescriptorProto(name="id", number=1, type=3, json_name="id").SerializeToString())
    shapes.append(timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=5).SerializeToString())
    shapes.append(struct_pb2.Struct(fields={"a": struct_pb2.Value(number_value=1.5)}).SerializeToString())
    shapes += [v(1, 3) + v(2, 4), ld(1, b"frame-0001") + v(2, 1_700_000_000_000), ld(5, v(1, 1)),
               group(1, v(1, 1)), ld(1, b"short text"), ld(3, b"\n(" + b"x" * 40), f32(1, 0) + f32(2, 0)]
    return shapes


def test_messages_of_many_shapes_are_protobuf():
    shapes = _messages_of_many_shapes()
    verdicts = [looks_like_protobuf(data) for data in shapes]
    accepted = [data for data, yes in zip(shapes, verdicts) if yes]
    refused = [data for data, yes in zip(shapes, verdicts) if not yes]
    # only what the rule refuses on purpose: a lone scalar or a lone non-text blob, or printable text
    for data in refused:
        fields = parse_wire(data)
        lone = len(fields) == 1 and not isinstance(fields[0].value, tuple)
        assert lone or data.decode("utf-8", "replace").isprintable(), data[:40]
    assert len(accepted) >= 0.9 * len(shapes)
    for data in accepted:
        decoded = decode_record(data)
        if decoded.kind is RecordKind.PROTOBUF:
            assert decoded.value == parse_wire(data)


def test_random_bytes_are_rarely_protobuf():
    rng = random.Random(11)
    for n, at_most in [(2, 2), (8, 40), (16, 40), (64, 5), (1024, 0)]:
        hits = sum(looks_like_protobuf(rng.randbytes(n)) for _ in range(2000))
        assert hits <= at_most, (n, hits)


# ---------------------------------------------------------------- views


SAMPLE = (v(1, 150) + ld(2, b"testing") + ld(3, v(1, 7) + ld(2, b"x")) + ld(3, v(1, 8)) + f32(4, 1)
          + f64(5, (1 << 64) - 1) + v(6, -1) + ld(7, b"\xff\x00") + ld(7, b"") + group(8, v(1, 2)) + v(1, 151))


def test_wire_features_flatten_by_path():
    features = wire_features(parse_wire(SAMPLE))
    assert features == {
        "1": ("int64", [150, 151]),
        "2": ("bytes", [b"testing"]),
        "3.1": ("int64", [7, 8]),
        "3.2": ("bytes", [b"x"]),
        "4": ("int64", [1]),
        "5": ("int64", [-1]),
        "6": ("int64", [-1]),
        "7": ("bytes", [b"\xff\x00", b""]),
        "8.1": ("int64", [2]),
    }
    assert list(features) == ["1", "2", "3.1", "3.2", "4", "5", "6", "7", "8.1"]


def test_wire_features_keep_two_kinds_at_one_path_apart():
    assert wire_features(parse_wire(v(1, 5) + ld(1, b"abc") + v(1, 6))) == {
        "1": ("int64", [5, 6]), "1:bytes": ("bytes", [b"abc"])}


def test_wire_features_are_read_as_record_features():
    decoded = decode_record(SAMPLE)
    assert decoded.kind is RecordKind.PROTOBUF
    from codec.decode.decoder import feature_values, record_features

    features = record_features(decoded)
    assert feature_values(features["5"]) == ("int64", [-1])
    assert feature_values(features["3.1"]) == ("int64", [7, 8])
    assert feature_values(features["7"]) == ("bytes", [b"\xff\x00", b""])


def test_wire_json_is_readable_and_typed():
    value = wire_json(parse_wire(SAMPLE))
    fields = value["fields"]
    assert fields[0] == {"number": 1, "wire_type": "varint", "value": 150}
    assert fields[1] == {"number": 2, "wire_type": "len",
                         "value": {"base64": base64.b64encode(b"testing").decode(), "text": "testing"}}
    assert fields[2] == {"number": 3, "wire_type": "len", "value": {"fields": [
        {"number": 1, "wire_type": "varint", "value": 7},
        {"number": 2, "wire_type": "len", "value": {"base64": "eA==", "text": "x"}}]}}
    assert fields[4] == {"number": 4, "wire_type": "fixed32", "value": 1}
    assert fields[5] == {"number": 5, "wire_type": "fixed64", "value": (1 << 64) - 1}
    assert fields[6] == {"number": 6, "wire_type": "varint", "value": (1 << 64) - 1}
    assert fields[7]["value"] == {"base64": "/wA="}
    assert fields[8]["value"] == {"base64": "", "text": ""}
    assert fields[9] == {"number": 8, "wire_type": "group", "value": {"fields": [
        {"number": 1, "wire_type": "varint", "value": 2}]}}
    assert json.loads(json.dumps(value)) == value


def test_wire_json_is_the_cat_json_value():
    from codec.decode.decoder import record_json_value

    assert record_json_value(decode_record(SAMPLE)) == wire_json(parse_wire(SAMPLE))


def test_wire_tree_merges_runs_and_nests_messages():
    root = wire_tree(parse_wire(SAMPLE))
    assert (root.name, root.role, root.path) == ("protobuf (no schema)", "protobuf", ())
    shown = [(c.name, c.role, c.dtype, c.path) for c in root.children]
    assert shown == [("1", "field", "varint", (1,)), ("2", "field", "string", (2,)),
                     ("3", "repeated", "message", (3,)), ("4", "field", "fixed32", (4,)),
                     ("5", "field", "fixed64", (5,)), ("6", "field", "varint", (6,)),
                     ("7", "field", "bytes", (7,)), ("8", "message", "group", (8,)),
                     ("1", "field", "varint", ("1#1",))]
    assert root.children[0].values == [150]
    assert root.children[1].values == [b"testing"]
    assert root.children[6].values == [b"\xff\x00", b""]
    assert root.children[5].values == [(1 << 64) - 1]
    items = root.children[2].children
    assert [(i.name, i.role, i.path) for i in items] == [("[0]", "message", (3, 0)), ("[1]", "message", (3, 1))]
    assert [(c.name, c.dtype, c.values, c.path) for c in items[0].children] == [
        ("1", "varint", [7], (3, 0, 1)), ("2", "string", [b"x"], (3, 0, 2))]
    assert [(c.name, c.values, c.path) for c in root.children[7].children] == [("1", [2], (8, 1))]


def test_wire_tree_single_message_and_run_split_by_kind():
    root = wire_tree(parse_wire(ld(2, v(1, 1) + v(1, 2)) + v(3, 1) + ld(3, b"t") + ld(3, v(1, 5))))
    message = root.children[0]
    assert (message.role, message.dtype, message.path) == ("message", "message", (2,))
    assert [(c.role, c.values, c.path) for c in message.children] == [("field", [1, 2], (2, 1))]
    assert [(c.role, c.dtype, c.path) for c in root.children[1:]] == [
        ("field", "varint", (3,)), ("field", "string", ("3#1",)), ("message", "message", ("3#2",))]


def test_decode_record_builds_the_schema_less_tree():
    from codec.decode.decoder import build_tree

    tree = build_tree(decode_record(SAMPLE))
    assert tree.role == "protobuf"
    assert [c.name for c in tree.children] == ["1", "2", "3", "4", "5", "6", "7", "8", "1"]
