"""Typed edits inside Examples and SequenceExamples."""
from __future__ import annotations

import math

import pytest
from google.protobuf import json_format

from codec import UsageError, decode_record, open_tfrecord
from codec.editing.record_editor import RecordEditor, convert_values, empty_example, parse_value, parse_values
from tests.builders import fixture_path


def features_of(data: bytes) -> dict:
    return json_format.MessageToDict(decode_record(data).message)


@pytest.mark.parametrize("text, dtype, value", [
    ("42", "int64", 42), (" -7 ", "int64", -7), ("0x10", "int64", 16),
    ("9223372036854775807", "int64", 2**63 - 1),
    ("1.5", "float", 1.5), ("-inf", "float", -math.inf), ("hello", "bytes", b"hello"),
    ("hex:89504e47", "bytes", b"\x89PNG"), ("base64:aGk=", "bytes", b"hi"), ("", "bytes", b""),
])
def test_parse_value(text, dtype, value):
    assert parse_value(text, dtype) == value


def test_parse_nan():
    assert math.isnan(parse_value("nan", "float"))


@pytest.mark.parametrize("text, dtype, message", [
    ("1.5", "int64", "not an integer"), ("9223372036854775808", "int64", "out of the int64 range"),
    ("abc", "float", "not a number"), ("1e39", "float", "out of the float32 range"),
    ("hex:zz", "bytes", "pairs of hex digits"), ("base64:!!", "bytes", "valid base64"),
    ("1", "complex", "unknown type"),
])
def test_bad_values_say_what_was_expected(text, dtype, message):
    with pytest.raises(UsageError, match=message):
        parse_value(text, dtype)


def test_parse_values_lists():
    assert parse_values("1, 2,3", "int64") == [1, 2, 3]
    assert parse_values("a\nb", "bytes") == [b"a", b"b"]
    assert parse_values("  ", "float") == []


def test_convert_values():
    assert convert_values([1, 2], "int64", "float") == [1.0, 2.0]
    assert convert_values([b"3", b"4"], "bytes", "int64") == [3, 4]
    assert convert_values([0.5], "float", "bytes") == [b"0.5"]
    with pytest.raises(UsageError, match="not a whole number"):
        convert_values([0.5], "float", "int64")
    with pytest.raises(UsageError):
        convert_values([b"cat"], "bytes", "float")


def test_example_edits():
    with open_tfrecord(fixture_path("structured.tfrecord")) as f:
        e = RecordEditor(f[3])
    e.set_value(("features", "int_col", ), 0, 99)
    e.add_feature("features", "extra", "float", [0.25, 0.5])
    e.rename_feature(("features", "byte_col"), "name")
    e.change_type(("features", "int_col"), "bytes")
    e.delete_feature(("features", "float_col"))
    e.insert_value(("features", "extra"), 0, 1.0)
    e.remove_value(("features", "extra"), 2)
    got = features_of(e.to_bytes())["features"]["feature"]
    assert got == {"int_col": {"bytesList": {"value": ["OTk="]}},  # b"99"
                   "name": {"bytesList": {"value": ["cm93LTM="]}},  # b"row-3"
                   "extra": {"floatList": {"value": [1.0, 0.25]}}}


def test_example_edit_errors():
    e = RecordEditor(empty_example())
    e.add_feature("features", "a", "int64", [1])
    with pytest.raises(UsageError, match="already exists"):
        e.add_feature("features", "a", "int64", [])
    with pytest.raises(UsageError, match="no feature 'b'"):
        e.delete_feature(("features", "b"))
    with pytest.raises(UsageError, match="has no context"):
        e.add_feature("context", "x", "int64", [])
    with pytest.raises(UsageError, match="raw bytes"):
        RecordEditor(b"\xff\xfe raw")


def test_sequence_example_context_and_steps():
    with open_tfrecord(fixture_path("sequence_examples.tfrecord")) as f:
        e = RecordEditor(f[2])
    e.set_values(("context", "length"), [5])
    e.insert_step("my_ints", 0, "int64", [100, 200])
    e.set_value(("feature_lists", "my_ints", 1), 0, -1)
    e.change_type(("feature_lists", "my_ints"), "float")
    e.remove_step("frames", 0)
    e.add_feature("feature_lists", "tags", "bytes", [b"a", b"b"])
    got = features_of(e.to_bytes())
    assert got["context"]["feature"]["length"] == {"int64List": {"value": ["5"]}}
    steps = got["featureLists"]["featureList"]["my_ints"]["feature"]
    assert steps[0] == {"floatList": {"value": [100.0, 200.0]}} and steps[1]["floatList"]["value"][0] == -1.0
    assert len(got["featureLists"]["featureList"]["tags"]["feature"]) == 2
    with pytest.raises(UsageError, match="pick one of its steps"):
        e.set_values(("feature_lists", "tags"), [b"x"])
