"""codec.decode.example_text.example_json: `cat --json`'s value of an Example or SequenceExample without protobuf.

What it writes must be byte for byte ``json.dumps`` of protobuf's JSON mapping
(``json_format.MessageToDict``, feature maps in key order) of the same bytes,
as ``cat --json`` printed it through protobuf; anything else it must decline.
"""
from __future__ import annotations

import io
import json
import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.decode.decoder import decode_record, record_json_value
from codec.decode.example_proto import Example
from codec.decode.example_text import _float_json, example_json, example_json_line
from codec.decode.json_batches import JsonLinesWriter, float32_json, json_lines
from codec.decode.json_lines import json_line, json_line_text
from codec.format.framing import RecordStatus

from .test_example_columns import (
    FAST,
    bytes_feature,
    entry,
    example,
    features,
    float_feature,
    int_feature,
    ld,
    serialize,
    varint,
)
from .test_example_text import feature_lists, mutate, mutations, sequence_example


def reference(data: bytes) -> tuple[str, str]:
    """(kind, JSON) through protobuf: its parse, MessageToDict (maps sorted), json.dumps."""
    decoded = decode_record(data)
    return decoded.kind.value, json.dumps(record_json_value(decoded))


def assert_declined_or_same(data: bytes) -> None:
    got = example_json(data)
    if got is not None:
        assert got == reference(data), data


# --- what TensorFlow and protobuf write: written, exactly -----------------------------------------

@FAST
@given(features)
def test_written_examples_are_written_as_protobufs_json_mapping(content):
    data = serialize(content)
    got = example_json(data)
    assert got is not None and got == reference(data)


@FAST
@given(st.one_of(st.none(), features), st.one_of(st.none(), feature_lists))
def test_written_sequence_examples_are_written_as_protobufs_json_mapping(context, lists):
    data = sequence_example(context, lists)
    got = example_json(data)
    assert got is not None and got == reference(data)
    assert got[0] == ("example" if lists is None else "sequence_example")


@FAST
@given(st.integers(0, 2**32 - 1))
def test_every_float32_is_spelt_as_json_format_spells_it(bits):
    from google.protobuf.json_format import MessageToDict

    (x,) = struct.unpack("<f", struct.pack("<I", bits))
    ex = Example()
    ex.features.feature["x"].float_list.value.append(x)
    want = MessageToDict(ex)["features"]["feature"]["x"]["floatList"]["value"][0]
    assert _float_json(x) == json.dumps(want)


def test_every_kind_of_value_and_key():
    ex = Example()
    feature = ex.features.feature
    feature["bytes"].bytes_list.value.extend([b"a\x00\xff\"'\\\n\t", b"", "é".encode(), bytes(range(256))])
    feature["float"].float_list.value.extend([0.1, 1.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, 3.4028235e38,
                                              16777217.0, 0.3])
    feature["int"].int64_list.value.extend([0, -1, 1, 300, 2**63 - 1, -2**63])
    feature[""].int64_list.value.append(3)  # the empty key: JSON keeps it
    feature["q\"u'o\\te\n\x00\x7f"].float_list.SetInParent()
    feature["名前 ключ 😀"].bytes_list.SetInParent()
    feature["no kind"].Clear()
    data = ex.SerializeToString()
    kind, text = example_json(data)
    assert (kind, text) == reference(data)
    assert '"": {"int64List": {"value": ["3"]}}' in text  # int64 as strings
    assert '[0.1, 1.0, -0.0, "Infinity", "-Infinity", "NaN", 1.4013e-45, 3.4028235e+38, 16777216.0, 0.3]' in text
    assert '"\\u540d\\u524d \\u043a\\u043b\\u044e\\u0447 \\ud83d\\ude00": {"bytesList": {}}' in text  # ASCII only
    assert '"no kind": {}' in text and '"YQD/IidcCgk="' in text


def test_empty_records_and_empty_messages():
    for data in (b"", Example(features={}).SerializeToString(), ld(0x0A, b""),
                 ld(0x0A, b"") + ld(0x12, b""), ld(0x12, b""), sequence_example({}, {"x": []}),
                 sequence_example({"k": ("int64_list", [])}, {"x": [(None, []), ("bytes_list", [])]})):
        assert example_json(data) == reference(data), data
    assert example_json(b"") == ("example", "{}")
    assert example_json(ld(0x0A, b"") + ld(0x12, b"")) == ("sequence_example", '{"context": {}, "featureLists": {}}')


# --- other layouts: declined, or written as protobuf reads them ---------------------------------------

def test_layouts_protobuf_reads_but_this_declines():
    key, feature = b"a", int_feature([1, 2])
    for data in (
        example(entry(key, ld(0x1A, b"\x08\x01\x08\x02"))),  # unpacked int64
        example(entry(key, ld(0x12, b"\x0d" + struct.pack("<f", 1.5)))),  # unpacked float
        example(entry(key, ld(0x1A, ld(0x0A, varint(1)) + ld(0x0A, varint(2))))),  # two packed runs
        example(ld(0x0A, ld(0x12, feature) + ld(0x0A, key))),  # value before key
        example(entry(key, feature + bytes_feature([b"x"]))),  # the oneof set twice
        example(entry(key, feature)) + example(entry(b"b", feature)),  # features twice
        ld(0x12, b"") + ld(0x0A, b""),  # context after feature_lists
        example(entry(b"\xff\xfe", feature)),  # a key that is not UTF-8
        example(entry(b"k", ld(0x12, ld(0x0A, b"\x00\x00\x80")))),  # floats cut mid-value
        b"\x08\x01",  # a varint field: a tensor or protobuf of no known type
    ):
        assert example_json(data) is None, data


def test_what_is_accepted_beyond_the_writers_layout_reads_as_protobuf_reads_it():
    for data in (
        example(entry(b"k", int_feature([5])), entry(b"k", float_feature([2.5]))),  # a key twice: the last wins
        example(entry(b"k", int_feature([1, -1], extra=3))),  # needless 0x80 bytes in varints
        example(entry(b"k", ld(0x1A, ld(0x0A, b"")))),  # an empty packed run
    ):
        got = example_json(data)
        assert got is not None and got == reference(data), data


@FAST
@given(st.one_of(features.map(serialize), st.builds(sequence_example, features, feature_lists)),
       st.lists(mutations, min_size=1, max_size=3))
def test_mutated_records_are_declined_or_written_as_protobuf_reads_them(data, changes):
    for change in changes:
        data = mutate(data, change)
    assert_declined_or_same(data)


# --- the whole line ---------------------------------------------------------------------------------

@FAST
@given(features, st.integers(0, 2**40), st.one_of(st.none(), st.integers(0, 2**50)),
       st.sampled_from(list(RecordStatus)))
def test_a_line_is_json_dumps_of_the_line_object(content, index, offset, status):
    data = serialize(content)
    want = json.dumps(json_line(index, data, status, offset, len(data)))
    assert example_json_line(index, data, status, offset, len(data)) == want
    assert json_line_text(index, data, status, offset, len(data)) == want


def test_other_records_and_payloads_take_protobufs_path():
    tensor_like = b"\x08\x01\x12\x00"
    line = json_line_text(3, tensor_like, RecordStatus.OK, 10, 4)
    assert line == json.dumps(json_line(3, tensor_like, RecordStatus.OK, 10, 4))
    assert json.loads(line)["kind"] != "example"
    assert example_json_line(3, tensor_like, RecordStatus.OK, 10, 4) is None


# --- many lines at once (codec.decode.json_batches): the same bytes as one by one ---------------------------

def one_by_one(rows) -> str:
    return "".join(json_line_text(i, data, status, offset, length) + "\n" for i, data, status, offset, length in rows)


@FAST
@given(st.lists(st.integers(0, 2**32 - 1), min_size=64, max_size=100))
def test_a_batch_of_floats_is_spelt_as_one_by_one(bits):
    raw = struct.pack(f"<{len(bits)}I", *bits)
    assert float32_json(raw) == [_float_json(x) for (x,) in struct.iter_unpack("<f", raw)]


def float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_floats_at_the_edges_of_the_batch_path():
    """Powers of ten and their neighbours (the decimal exponent), ties at 6 to 8 digits (1.015625),
    the ends of the vectorised range, subnormals, zeros and the values JSON spells as strings."""
    values = []
    for k in range(-45, 39):
        ten = float32(10.0**k)
        values += [ten, math.nextafter(ten, 0.0), math.nextafter(ten, math.inf)]
    values += [k * 2.0**-j for k in range(1, 200, 7) for j in range(0, 40, 3)]
    values += [1e-9, 1e6, 999999.94, 1.015625, 1.0078125, 0.0, -0.0, 1e-45, -3.4028235e38, math.nan, math.inf,
               -math.inf]
    values += [-v for v in values]
    raw = b"".join(struct.pack("<f", float32(v)) if math.isfinite(v) else struct.pack("<f", v) for v in values)
    assert float32_json(raw) == [_float_json(x) for (x,) in struct.iter_unpack("<f", raw)]


@pytest.mark.slow
@FAST
@given(st.lists(features.map(serialize), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), max_size=12),
       st.sampled_from(list(RecordStatus)))
def test_a_batch_of_lines_is_the_lines_one_by_one(layouts, flips, status):
    records = layouts * 3  # each layout seen more than once: written through its template
    for at, bit in flips:  # the same length, one bit changed: other values, or another layout, or none
        data = bytearray(layouts[at % len(layouts)])
        if data:
            data[at % len(data)] ^= 1 << bit
        records.append(bytes(data))
    rows = [(i, data, status, None if i % 3 == 2 else 130 * i, len(data)) for i, data in enumerate(records)]
    assert json_lines(rows) == one_by_one(rows)


def test_a_layout_of_many_floats_and_a_packed_run_that_is_no_varints():
    rng = random.Random(5)
    records = [serialize({"box": ("float_list", [rng.uniform(-1e7, 1e7) for _ in range(80)]),
                          "id": ("int64_list", [rng.randrange(2**20, 2**27)]),
                          "label": ("int64_list", [rng.randrange(5)]),
                          "name": ("bytes_list", [rng.randbytes(12), b""])}) for _ in range(6)]
    broken = bytearray(records[0])  # the label's one byte becomes a varint that never ends
    at = broken.index(b"label") + len(b"label") + 6
    assert broken[at] < 5
    broken[at] = 0x85
    records.append(bytes(broken))
    rows = [(i, data, RecordStatus.OK, 50 * i, len(data)) for i, data in enumerate(records)]
    assert json_lines(rows) == one_by_one(rows)
    assert json.loads(one_by_one(rows[-1:]))["kind"] != "example"


def test_the_writer_holds_a_batch_and_writes_it_on_flush():
    data = serialize({"x": ("float_list", [0.5])})
    stream = io.StringIO()
    writer = JsonLinesWriter(stream)
    writer.BATCH = 3
    for i in range(4):
        writer.write(i, data, RecordStatus.OK, 20 * i, len(data))
    assert stream.getvalue().count("\n") == 3  # a batch written, one record held
    writer.flush()
    rows = [(i, data, RecordStatus.OK, 20 * i, len(data)) for i in range(4)]
    assert stream.getvalue() == one_by_one(rows)
    writer.BATCH_BYTES = 2 * len(data)  # and at most this much data held
    writer.write(4, data, RecordStatus.OK)
    assert stream.getvalue().count("\n") == 4
    writer.write(5, data, RecordStatus.OK)
    assert stream.getvalue().count("\n") == 6
