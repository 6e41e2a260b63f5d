"""TensorProto records (``tf.io.serialize_tensor``) decoded without TensorFlow.

The reference file was written by TensorFlow; MANIFEST.json says what the
reference library reads from each record. Everything else is built here from
TensorProto messages, in both of TensorFlow's encodings: raw ``tensor_content``
and the typed repeated fields (with their splat rule).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import sys

import numpy as np
import pytest

from codec.decode.example_proto import Example, Feature, Features, FloatList, Int64List, SequenceExample
from codec.decode.tensors import DATA_TYPES, MAX_ELEMENTS, TensorProto, decode_tensor, tensor_json
from codec.errors import TensorDecodeError, TFRecordError
from codec.sources.tfrecord_file import open_tfrecord
from tests.builders import FIXTURES

PAYLOADS = FIXTURES / "payloads"
TENSOR_RECORDS = json.loads((PAYLOADS / "MANIFEST.json").read_text())["tensors.tfrecord"]["records"]


def reference_records() -> list[bytes]:
    with open_tfrecord(PAYLOADS / "tensors.tfrecord") as file:
        file.build_index()
        return [bytes(file.read(i).data) for i in range(len(file))]


def tensor_bytes(dtype: str, shape: list[int], **fields) -> bytes:
    """A serialized TensorProto of DataType ``dtype`` (e.g. "DT_FLOAT") with the given fields set."""
    proto = TensorProto(dtype=DATA_TYPES[dtype])
    proto.tensor_shape.SetInParent()  # TensorFlow always writes the shape, a scalar's empty one too
    for size in shape:
        proto.tensor_shape.dim.add(size=size)
    for name, value in fields.items():
        if isinstance(value, bytes):
            setattr(proto, name, value)
        else:
            getattr(proto, name).extend(value)
    return proto.SerializeToString()


def assert_same(array: np.ndarray, expected: np.ndarray) -> None:
    assert array.dtype == expected.dtype
    assert array.shape == expected.shape
    if expected.dtype.kind == "f" or expected.dtype.kind == "c":
        np.testing.assert_array_equal(array, expected)  # NaN equals NaN here
    else:
        assert array.tolist() == expected.tolist()


def assert_one_line_error(data: bytes, *fragments: str) -> str:
    with pytest.raises(TensorDecodeError) as caught:
        decode_tensor(data)
    message = str(caught.value)
    assert message and "\n" not in message
    for fragment in fragments:
        assert fragment in message
    return message


# ---------------------------------------------------------------- the reference file


def test_reference_file_has_every_manifest_record():
    assert len(reference_records()) == len(TENSOR_RECORDS) == 8


@pytest.mark.parametrize("index", range(len(TENSOR_RECORDS)))
def test_reference_record_decodes_to_manifest_json(index):
    data = reference_records()[index]
    assert tensor_json(decode_tensor(data)) == TENSOR_RECORDS[index]["json"]


def test_reference_sha256_is_of_the_element_bytes():
    for data, entry in zip(reference_records(), TENSOR_RECORDS):
        array = decode_tensor(data)
        if array.dtype == object:
            assert "sha256" not in entry["json"]
        else:
            proto = TensorProto.FromString(data)
            assert entry["json"]["sha256"] == hashlib.sha256(proto.tensor_content).hexdigest()


@pytest.mark.parametrize("index", range(len(TENSOR_RECORDS)))
def test_reference_record_cut_short_fails_cleanly(index):
    data = reference_records()[index]
    assert_one_line_error(data[:-1])


def test_reference_strings_are_bytes_in_an_object_array():
    array = decode_tensor(reference_records()[2])
    assert array.dtype == object
    assert array.tolist() == [b"alpha", b"", "été".encode()]


# ---------------------------------------------------------------- content form round trips

CONTENT_CASES = [
    ("DT_HALF", np.array([[1.5, -2.25], [0.0, 65504.0]], np.float16)),
    ("DT_FLOAT", np.array([[0.1, -3.5, np.inf], [np.nan, 1e-30, -0.0]], np.float32)),
    ("DT_DOUBLE", np.array([math.pi, -1e300, 5e-324], np.float64)),
    ("DT_INT8", np.array([-128, -1, 0, 127], np.int8)),
    ("DT_INT16", np.array([[-32768], [32767]], np.int16)),
    ("DT_INT32", np.array([-(2 ** 31), 2 ** 31 - 1], np.int32)),
    ("DT_INT64", np.array([-(2 ** 63), 2 ** 63 - 1, 0], np.int64)),
    ("DT_UINT8", np.arange(24, dtype=np.uint8).reshape(2, 3, 4)),
    ("DT_UINT16", np.array([0, 65535, 4096], np.uint16)),
    ("DT_UINT32", np.array([0, 2 ** 32 - 1], np.uint32)),
    ("DT_UINT64", np.array([0, 2 ** 64 - 1], np.uint64)),
    ("DT_BOOL", np.array([[True, False], [False, True]])),
    ("DT_COMPLEX64", np.array([1 + 2j, -0.5 - 0.25j], np.complex64)),
    ("DT_COMPLEX128", np.array([[1e200 - 1j]], np.complex128)),
]


@pytest.mark.parametrize("dtype, expected", CONTENT_CASES, ids=[case[0] for case in CONTENT_CASES])
def test_content_form_round_trips(dtype, expected):
    content = expected.astype(expected.dtype.newbyteorder("<")).tobytes()
    data = tensor_bytes(dtype, list(expected.shape), tensor_content=content)
    assert_same(decode_tensor(data), expected)


@pytest.mark.parametrize("dtype, expected", CONTENT_CASES, ids=[case[0] for case in CONTENT_CASES])
def test_content_form_with_one_byte_missing_is_refused(dtype, expected):
    content = expected.tobytes()[:-1]
    assert_one_line_error(tensor_bytes(dtype, list(expected.shape), tensor_content=content),
                          f"needs {expected.nbytes} bytes", f"found {expected.nbytes - 1}")


def test_content_form_little_endian_whatever_the_host():
    data = tensor_bytes("DT_INT32", [2], tensor_content=struct.pack("<ii", 1, -2))
    assert decode_tensor(data).tolist() == [1, -2]


def test_bool_content_reads_any_nonzero_byte_as_true():
    data = tensor_bytes("DT_BOOL", [3], tensor_content=b"\x00\x01\x02")
    assert decode_tensor(data).tolist() == [False, True, True]


def test_string_content_form_uses_varint_lengths_then_bytes():
    texts = [b"", b"x" * 200, b"\x00\xff"]
    lengths = b"\x00" + b"\xc8\x01" + b"\x02"  # 0, 200 (a two-byte varint), 2
    data = tensor_bytes("DT_STRING", [3], tensor_content=lengths + b"".join(texts))
    array = decode_tensor(data)
    assert array.dtype == object and array.tolist() == texts


@pytest.mark.parametrize("content, fragment", [
    (b"\x05abc", "its lengths say 5"),
    (b"\x01ab", "its lengths say 1"),
    (b"\x80", "ends inside its lengths"),
])
def test_string_content_whose_lengths_do_not_add_up_is_refused(content, fragment):
    assert_one_line_error(tensor_bytes("DT_STRING", [1], tensor_content=content), fragment)


# ---------------------------------------------------------------- repeated-field form

FIELD_CASES = [
    ("DT_HALF", "half_val", [0x3E00, 0xC080, 0x7BFF], np.array([1.5, -2.25, 65504.0], np.float16)),
    ("DT_FLOAT", "float_val", [0.5, -3.25, 1e38], np.array([0.5, -3.25, 1e38], np.float32)),
    ("DT_DOUBLE", "double_val", [math.e, -0.0], np.array([math.e, -0.0])),
    ("DT_INT8", "int_val", [-128, 127, -1], np.array([-128, 127, -1], np.int8)),
    ("DT_INT16", "int_val", [-300, 300], np.array([-300, 300], np.int16)),
    ("DT_INT32", "int_val", [-(2 ** 31), 7], np.array([-(2 ** 31), 7], np.int32)),
    ("DT_INT64", "int64_val", [-(2 ** 63), 2 ** 40], np.array([-(2 ** 63), 2 ** 40], np.int64)),
    ("DT_UINT8", "int_val", [0, 255, 17], np.array([0, 255, 17], np.uint8)),
    ("DT_UINT16", "int_val", [65535, 1], np.array([65535, 1], np.uint16)),
    ("DT_UINT32", "uint32_val", [2 ** 32 - 1, 3], np.array([2 ** 32 - 1, 3], np.uint32)),
    ("DT_UINT64", "uint64_val", [2 ** 64 - 1, 3], np.array([2 ** 64 - 1, 3], np.uint64)),
    ("DT_BOOL", "bool_val", [True, False, True], np.array([True, False, True])),
    ("DT_COMPLEX64", "scomplex_val", [1.0, 2.0, -3.0, 0.5], np.array([1 + 2j, -3 + 0.5j], np.complex64)),
    ("DT_COMPLEX128", "dcomplex_val", [0.25, -1.0], np.array([0.25 - 1j], np.complex128)),
]


@pytest.mark.parametrize("dtype, field, values, expected", FIELD_CASES, ids=[case[0] for case in FIELD_CASES])
def test_repeated_field_form_round_trips(dtype, field, values, expected):
    data = tensor_bytes(dtype, [len(expected)], **{field: values})
    assert_same(decode_tensor(data), expected)


@pytest.mark.parametrize("dtype, field, values, expected", FIELD_CASES, ids=[case[0] for case in FIELD_CASES])
def test_repeated_field_shorter_than_shape_repeats_its_last_value(dtype, field, values, expected):
    data = tensor_bytes(dtype, [2, len(expected) + 1], **{field: values})
    padded = np.concatenate([expected, np.repeat(expected[-1:], len(expected) + 2)])
    assert_same(decode_tensor(data), padded.reshape(2, len(expected) + 1))


@pytest.mark.parametrize("dtype, field, values, expected", FIELD_CASES, ids=[case[0] for case in FIELD_CASES])
def test_repeated_field_empty_means_zeros(dtype, field, values, expected):
    array = decode_tensor(tensor_bytes(dtype, [3]))
    assert_same(array, np.zeros(3, expected.dtype))


def test_repeated_field_longer_than_shape_is_cut_as_tensorflow_does():
    array = decode_tensor(tensor_bytes("DT_INT32", [2], int_val=[4, 5, 6]))
    assert array.tolist() == [4, 5]


def test_single_value_fills_the_whole_shape():
    array = decode_tensor(tensor_bytes("DT_FLOAT", [2, 2, 2], float_val=[0.75]))
    assert array.shape == (2, 2, 2) and array.dtype == np.float32
    assert (array == 0.75).all()


def test_string_values_round_trip_and_splat():
    array = decode_tensor(tensor_bytes("DT_STRING", [2, 2], string_val=[b"a", b"\xffb"]))
    assert array.dtype == object
    assert array.tolist() == [[b"a", b"\xffb"], [b"\xffb", b"\xffb"]]


def test_string_without_values_is_empty_strings():
    assert decode_tensor(tensor_bytes("DT_STRING", [2])).tolist() == [b"", b""]


def test_values_of_another_dtypes_field_are_ignored_as_tensorflow_does():
    array = decode_tensor(tensor_bytes("DT_FLOAT", [2], int_val=[3, 4]))
    assert array.tolist() == [0.0, 0.0]


def test_content_wins_over_repeated_values():
    data = tensor_bytes("DT_INT32", [1], tensor_content=struct.pack("<i", 9), int_val=[1])
    assert decode_tensor(data).tolist() == [9]


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("shape", [[0], [3, 0], [0, 2, 5]])
def test_zero_element_tensors(shape):
    for dtype, field in [("DT_FLOAT", None), ("DT_STRING", None), ("DT_INT64", "int64_val")]:
        fields = {field: [5]} if field else {}
        array = decode_tensor(tensor_bytes(dtype, shape, **fields))
        assert array.shape == tuple(shape) and array.size == 0
    assert tensor_json(decode_tensor(tensor_bytes("DT_DOUBLE", shape))) == {
        "dtype": "float64", "shape": shape, "values": [], "sha256": hashlib.sha256(b"").hexdigest()}


def test_scalars_in_both_forms():
    assert decode_tensor(tensor_bytes("DT_INT32", [], int_val=[-7])).shape == ()
    assert decode_tensor(tensor_bytes("DT_INT32", [], int_val=[-7])).item() == -7
    assert decode_tensor(tensor_bytes("DT_DOUBLE", [], tensor_content=struct.pack("<d", 2.5))).item() == 2.5
    assert decode_tensor(tensor_bytes("DT_STRING", [], string_val=[b"s"])).item() == b"s"
    assert tensor_json(decode_tensor(tensor_bytes("DT_BOOL", [], bool_val=[True])))["values"] == [True]


# ---------------------------------------------------------------- bfloat16


def test_bfloat16_without_ml_dtypes_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    assert_one_line_error(tensor_bytes("DT_BFLOAT16", [1], half_val=[0x3FC0]), "bfloat16", "ml-dtypes")


def test_bfloat16_with_ml_dtypes_decodes_both_forms():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    expected = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    from_field = decode_tensor(tensor_bytes("DT_BFLOAT16", [2], half_val=[0x3FC0, 0xC000]))
    from_content = decode_tensor(tensor_bytes("DT_BFLOAT16", [2], tensor_content=expected.tobytes()))
    for array in (from_field, from_content):
        assert array.dtype == expected.dtype and array.astype(np.float32).tolist() == [1.5, -2.0]
    assert tensor_json(from_field)["dtype"] == "bfloat16"


# ---------------------------------------------------------------- malformed input


def test_garbage_is_not_a_tensor():
    assert_one_line_error(b"\xff\xff\xff", "not a TensorProto")


def test_empty_bytes_have_no_dtype():
    assert_one_line_error(b"", "no dtype")


def test_unknown_dtype_number_is_refused():
    data = tensor_bytes("DT_FLOAT", [1], float_val=[1.0])
    proto = TensorProto.FromString(data)
    proto.dtype = 99
    assert_one_line_error(proto.SerializeToString(), "DataType 99", "not supported")


@pytest.mark.parametrize("dtype", ["DT_RESOURCE", "DT_VARIANT", "DT_FLOAT_REF", "DT_FLOAT8_E5M2"])
def test_dtypes_without_a_numpy_form_are_refused_by_name(dtype):
    assert_one_line_error(tensor_bytes(dtype, [1]), dtype, "not supported")


def test_unknown_rank_and_negative_dims_are_refused():
    proto = TensorProto(dtype=DATA_TYPES["DT_FLOAT"])
    proto.tensor_shape.unknown_rank = True
    assert_one_line_error(proto.SerializeToString(), "unknown rank")
    assert_one_line_error(tensor_bytes("DT_FLOAT", [2, -1], float_val=[1.0]), "[2, -1]", "negative")


def test_a_huge_shape_is_refused_before_anything_is_allocated():
    side = int(math.isqrt(MAX_ELEMENTS)) + 1
    assert_one_line_error(tensor_bytes("DT_FLOAT", [side, side], float_val=[1.0]), f"[{side}, {side}]")
    assert_one_line_error(tensor_bytes("DT_DOUBLE", [2 ** 62, 2 ** 62]), "more than")


def test_a_field_tensorflow_does_not_have_is_refused():
    data = tensor_bytes("DT_INT32", [1], int_val=[1]) + b"\xa0\x06\x01"  # field 100, varint 1
    assert_one_line_error(data, "no field 100")


def test_errors_are_codec_errors_and_value_errors():
    assert issubclass(TensorDecodeError, TFRecordError)
    assert issubclass(TensorDecodeError, ValueError)


# ---------------------------------------------------------------- other records are not tensors


def test_example_bytes_are_not_a_tensor():
    example = Example(features=Features(feature={
        "label": Feature(int64_list=Int64List(value=[3])),
        "score": Feature(float_list=FloatList(value=[0.5])),
    }))
    assert_one_line_error(example.SerializeToString(), "not a TensorProto")


def test_sequence_example_bytes_are_not_a_tensor():
    sequence = SequenceExample(context=Features(feature={"id": Feature(int64_list=Int64List(value=[1]))}))
    sequence.feature_lists.feature_list["steps"].feature.add(float_list=FloatList(value=[1.0]))
    assert_one_line_error(sequence.SerializeToString(), "not a TensorProto")


def test_reference_examples_are_not_tensors():
    with open_tfrecord(FIXTURES / "structured.tfrecord") as file:
        file.build_index()
        for i in range(min(len(file), 5)):
            assert_one_line_error(bytes(file.read(i).data))


# ---------------------------------------------------------------- JSON


def test_json_of_non_finite_floats_follows_protobufs_json_mapping():
    array = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert tensor_json(array)["values"] == ["NaN", "Infinity", "-Infinity", 1.0]


def test_json_of_complex_values_is_real_imag_pairs():
    result = tensor_json(np.array([[1 + 2j], [-3.5 + 0j]], np.complex64))
    assert result["dtype"] == "complex64" and result["shape"] == [2, 1]
    assert result["values"] == [[1.0, 2.0], [-3.5, 0.0]]


def test_json_of_strings_is_base64_without_sha256():
    array = decode_tensor(tensor_bytes("DT_STRING", [2], string_val=[b"\x00\xff", b"hi"]))
    result = tensor_json(array)
    assert result == {"dtype": "string", "shape": [2], "values": [base64.b64encode(b"\x00\xff").decode(), "aGk="]}


def test_json_sha256_is_of_c_order_little_endian_bytes():
    array = np.arange(6, dtype=">i4").reshape(2, 3).T  # big-endian, not C-contiguous
    result = tensor_json(array)
    assert result["dtype"] == "int32" and result["shape"] == [3, 2]
    assert result["values"] == [0, 3, 1, 4, 2, 5]
    assert result["sha256"] == hashlib.sha256(struct.pack("<6i", 0, 3, 1, 4, 2, 5)).hexdigest()


def test_json_is_serializable_for_every_round_trip_case():
    for _dtype, expected in CONTENT_CASES:
        result = tensor_json(expected)
        assert json.loads(json.dumps(result, allow_nan=False)) == result
