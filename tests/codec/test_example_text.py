"""codec.decode.example_text: `cat`'s text of an Example or SequenceExample without protobuf's message classes.

Whatever it writes must be exactly what ``decode_record`` and ``record_text``
(protobuf's parse and ``text_format``) give for the same bytes; anything else
it must decline (None), never guess.
"""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.datasets.payload_choice import record_text
from codec.decode.decoder import decode_record
from codec.decode.example_proto import Example, SequenceExample
from codec.decode.example_text import _float_text, example_text

from .test_example_columns import (
    FAST,
    bytes_feature,
    bytes_lists,
    entry,
    example,
    features,
    float_feature,
    float_lists,
    int_feature,
    int_lists,
    keys,
    ld,
    serialize,
    varint,
)


def reference(data: bytes) -> tuple[str, str]:
    """(kind, text) the ordinary path prints: protobuf's parse, then text_format."""
    decoded = decode_record(data)
    return decoded.kind.value, record_text(decoded)


def assert_declined_or_same(data: bytes) -> None:
    got = example_text(data)
    if got is not None:
        assert got == reference(data), data


def fill(feature, kind: str | None, values: list) -> None:
    if kind is not None:
        getattr(feature, kind).value.extend(values)


steps = st.lists(st.one_of(st.tuples(st.just("int64_list"), int_lists), st.tuples(st.just("float_list"), float_lists),
                          st.tuples(st.just("bytes_list"), bytes_lists), st.tuples(st.just(None), st.just([]))),
                max_size=4)
feature_lists = st.dictionaries(keys, steps, max_size=4)


def sequence_example(context: dict | None, lists: dict | None) -> bytes:
    seq = SequenceExample()
    if context is not None:
        seq.context.SetInParent()
        for key, (kind, values) in context.items():
            fill(seq.context.feature[key], kind, values)
    if lists is not None:
        seq.feature_lists.SetInParent()
        for key, steps in lists.items():
            feature_list = seq.feature_lists.feature_list[key]
            for kind, values in steps:
                fill(feature_list.feature.add(), kind, values)
    return seq.SerializeToString()


# --- what TensorFlow and protobuf write: printed, exactly ---------------------------------------

@FAST
@given(features)
def test_written_examples_print_as_text_format_prints_them(content):
    data = serialize(content)
    got = example_text(data)
    assert got is not None and got == reference(data)


@pytest.mark.slow
@FAST
@given(st.one_of(st.none(), features), st.one_of(st.none(), feature_lists))
def test_written_sequence_examples_print_as_text_format_prints_them(context, lists):
    data = sequence_example(context, lists)
    got = example_text(data)
    assert got is not None and got == reference(data)
    # without field 2 the bytes are an Example's by the kind rule (field 1 is a Features either way)
    assert got[0] == ("example" if lists is None else "sequence_example")


def test_every_kind_of_value_and_key():
    ex = Example()
    feature = ex.features.feature
    feature["bytes"].bytes_list.value.extend([b"a\x00\xff\"'\\\n\t", b"", "é".encode(), bytes(range(256))])
    feature["float"].float_list.value.extend([0.1, 1.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, 3.4028235e38])
    feature["int"].int64_list.value.extend([0, -1, 1, 300, 2**63 - 1, -2**63])
    feature[""].int64_list.value.append(3)  # the empty key: text_format leaves the key line out
    feature["q\"u'o\\te\n"].float_list.SetInParent()
    feature["名前 ключ"].bytes_list.SetInParent()
    feature["no kind"].Clear()
    data = ex.SerializeToString()
    kind, text = example_text(data)
    assert (kind, text) == reference(data)
    assert 'key: "q\\"u\\\'o\\\\te\\n"' in text and 'key: "名前 ключ"' in text
    assert "value: -9223372036854775808" in text and "value: 3.4028235e+38" in text
    assert "\n  feature {\n    value {\n      int64_list {\n        value: 3\n" in text


def test_empty_records_and_empty_messages():
    for data in (b"", Example(features={}).SerializeToString(), ld(0x0A, b""),
                 ld(0x0A, b"") + ld(0x12, b""), ld(0x12, b""), sequence_example({}, {"x": []})):
        assert example_text(data) == reference(data), data
    assert example_text(b"") == ("example", "")
    assert example_text(ld(0x0A, b"") + ld(0x12, b"")) == ("sequence_example", "context {\n}\nfeature_lists {\n}")


@FAST
@given(st.integers(0, 2**32 - 1))
def test_a_float_is_spelt_as_text_format_spells_a_float_field(bits):
    from google.protobuf.internal.type_checkers import ToShortestFloat

    (x,) = struct.unpack("<f", struct.pack("<I", bits))
    assert _float_text(x) == ("nan" if math.isnan(x) else str(ToShortestFloat(x)))


# --- other layouts: declined (protobuf reads them), or printed as protobuf reads them -------------

def test_layouts_protobuf_reads_but_this_declines():
    key, feature = b"a", int_feature([1, 2])
    declined = {
        "unpacked int64": example(entry(key, ld(0x1A, b"\x08\x01\x08\x02"))),
        "unpacked float": example(entry(key, ld(0x12, b"\x0d" + struct.pack("<f", 1.5)))),
        "two packed runs": example(entry(key, ld(0x1A, ld(0x0A, varint(1)) + ld(0x0A, varint(2))))),
        "value before key": example(ld(0x0A, ld(0x12, feature) + ld(0x0A, key))),
        "an entry without its value": example(ld(0x0A, ld(0x0A, key))),
        "the oneof set twice": example(entry(key, feature + bytes_feature([b"x"]))),
        "features twice": example(entry(key, feature)) + example(entry(b"b", feature)),
        "context after feature_lists": ld(0x12, b"") + ld(0x0A, b""),
        "an unknown field": example(entry(key, feature)) + ld(0x1A, b""),
        "a two-byte tag": b"\x82\x01\x00",
    }
    for name, data in declined.items():
        assert example_text(data) is None, name
        assert reference(data)[0] in ("example", "sequence_example", "protobuf", "raw"), name


def test_what_is_accepted_beyond_the_writers_layout_reads_as_protobuf_reads_it():
    feature = int_feature([5])
    for data in (
        example(entry(b"k", feature), entry(b"k", float_feature([2.5]))),  # a key twice: the last one wins
        example(entry(b"k", int_feature([1, -1], extra=3))),  # needless 0x80 bytes in varints
        ld(0x0A, ld(0x0A, ld(0x0A, b"k", extra=2) + ld(0x12, feature)), extra=4),  # and in lengths
        example(entry(b"k", ld(0x1A, ld(0x0A, b"")))),  # an empty packed run
    ):
        got = example_text(data)
        assert got is not None and got == reference(data), data


def test_what_protobuf_refuses_is_declined():
    for data in (
        example(entry(b"\xff\xfe", int_feature([1]))),  # a key that is not UTF-8 (proto3 checks)
        example(entry(b"\xed\xa0\x80", int_feature([1]))),  # a UTF-16 surrogate
        example(entry(b"k", ld(0x12, ld(0x0A, b"\x00\x00\x80")))),  # floats cut mid-value
        example(entry(b"k", ld(0x1A, ld(0x0A, b"\x80\x80")))),  # a varint cut short
        example(entry(b"k", ld(0x1A, ld(0x0A, b"\xff" * 10 + b"\x01")))),  # a varint of 11 bytes
        ld(0x0A, b"\x0a\x05ab"),  # a length past the end
    ):
        assert example_text(data) is None, data
        assert reference(data)[0] not in ("example", "sequence_example"), data


mutations = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.integers(1, 8)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("repeat"), st.integers(0, 10**6), st.integers(1, 16)),
)


def mutate(data: bytes, mutation) -> bytes:
    what, at, arg = mutation
    at %= len(data) + 1
    if what == "flip" and at < len(data):
        return data[:at] + bytes([data[at] ^ (1 << arg)]) + data[at + 1:]
    if what == "cut":
        return data[:at] + data[at + arg:]
    if what == "insert":
        return data[:at] + arg + data[at:]
    return data[:at] + data[at:at + arg] + data[at:]


@FAST
@given(st.one_of(features.map(serialize), st.builds(sequence_example, features, feature_lists)),
       st.lists(mutations, min_size=1, max_size=3))
def test_mutated_records_are_declined_or_printed_as_protobuf_reads_them(data, changes):
    for change in changes:
        data = mutate(data, change)
    assert_declined_or_same(data)
