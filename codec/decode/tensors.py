"""TensorFlow's TensorProto (what ``tf.io.serialize_tensor`` writes), decoded to numpy without TensorFlow.

The descriptors mirror tensorflow/core/framework/tensor.proto, tensor_shape.proto
and types.proto (package ``tensorflow``, same names and field numbers), built in
a private descriptor pool as ``codec.decode.example_proto`` builds Example. ``resource_handle_val``
(field 14) is left out: resource tensors have no numpy form, so they are refused
by dtype before that field would matter.

Values are read the way TensorFlow's ``Tensor::FromProto`` reads them: raw
little-endian ``tensor_content`` when present (its size must match the shape),
else the repeated field for the dtype, where a list shorter than the shape
repeats its last value, an empty one means zeros, and a longer one is cut.
"""
from __future__ import annotations

import base64
import hashlib
import math
from typing import NamedTuple

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet

from codec.decode.decoded import read_varint
from codec.decode.example_proto import FIELD, PACKAGE, REPEATED, add_field, message_class
from codec.errors import TensorDecodeError, TensorLimitError

__all__ = [
    "DATA_TYPES",
    "MAX_ELEMENTS",
    "MAX_SPLAT",
    "MAX_SPLAT_BYTES",
    "POOL",
    "TensorProto",
    "TensorShapeProto",
    "VariantTensorDataProto",
    "ParsedTensor",
    "canonical_tensor",
    "decode_tensor",
    "parse_tensor",
    "tensor_array",
    "tensor_json",
    "tensor_of",
]

TYPES_PROTO = "tensorflow/core/framework/types.proto"
TENSOR_SHAPE_PROTO = "tensorflow/core/framework/tensor_shape.proto"
TENSOR_PROTO = "tensorflow/core/framework/tensor.proto"

# A shape may claim more elements than its few bytes of values (a splat, or no
# values at all); past this many, the record is taken as hostile, not expanded.
MAX_ELEMENTS = 1 << 28
# A splat (values repeated to fill the shape) makes its array from a few bytes, so it is capped by what it
# would make, before anything is allocated: elements, and bytes (strings count their length).
MAX_SPLAT = 1 << 20
MAX_SPLAT_BYTES = 1 << 24
MAX_RANK = 32  # numpy's limit is 64 (32 before numpy 2); TensorFlow's own is 254, no real tensor nears it

DATA_TYPES = {
    "DT_INVALID": 0,
    "DT_FLOAT": 1,
    "DT_DOUBLE": 2,
    "DT_INT32": 3,
    "DT_UINT8": 4,
    "DT_INT16": 5,
    "DT_INT8": 6,
    "DT_STRING": 7,
    "DT_COMPLEX64": 8,
    "DT_INT64": 9,
    "DT_BOOL": 10,
    "DT_QINT8": 11,
    "DT_QUINT8": 12,
    "DT_QINT32": 13,
    "DT_BFLOAT16": 14,
    "DT_QINT16": 15,
    "DT_QUINT16": 16,
    "DT_UINT16": 17,
    "DT_COMPLEX128": 18,
    "DT_HALF": 19,
    "DT_RESOURCE": 20,
    "DT_VARIANT": 21,
    "DT_UINT32": 22,
    "DT_UINT64": 23,
    "DT_FLOAT8_E5M2": 24,
    "DT_FLOAT8_E4M3FN": 25,
    "DT_FLOAT8_E4M3FNUZ": 26,
    "DT_FLOAT8_E5M2FNUZ": 28,
    "DT_INT4": 29,
    "DT_UINT4": 30,
}
# The *_REF twins (TF1 reference variables) are the base value plus 100.
DATA_TYPES.update({f"{name}_REF": number + 100 for name, number in list(DATA_TYPES.items()) if number})



def _types_file() -> descriptor_pb2.FileDescriptorProto:
    """types.proto: the DataType enum."""
    file = descriptor_pb2.FileDescriptorProto(name=TYPES_PROTO, package=PACKAGE, syntax="proto3")
    enum = file.enum_type.add(name="DataType")
    for name, number in sorted(DATA_TYPES.items(), key=lambda item: item[1]):
        enum.value.add(name=name, number=number)
    return file


def _shape_file() -> descriptor_pb2.FileDescriptorProto:
    """tensor_shape.proto: TensorShapeProto and its Dim."""
    file = descriptor_pb2.FileDescriptorProto(name=TENSOR_SHAPE_PROTO, package=PACKAGE, syntax="proto3")
    shape = file.message_type.add(name="TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    add_field(dim, "size", 1, FIELD.TYPE_INT64)
    add_field(dim, "name", 2, FIELD.TYPE_STRING)
    add_field(shape, "dim", 2, FIELD.TYPE_MESSAGE, REPEATED, f".{PACKAGE}.TensorShapeProto.Dim")
    add_field(shape, "unknown_rank", 3, FIELD.TYPE_BOOL)
    return file


def _tensor_file() -> descriptor_pb2.FileDescriptorProto:
    """tensor.proto: TensorProto and VariantTensorDataProto."""
    file = descriptor_pb2.FileDescriptorProto(
        name=TENSOR_PROTO, package=PACKAGE, syntax="proto3", dependency=[TENSOR_SHAPE_PROTO, TYPES_PROTO]
    )
    tensor = file.message_type.add(name="TensorProto")
    add_field(tensor, "dtype", 1, FIELD.TYPE_ENUM, type_name=f".{PACKAGE}.DataType")
    add_field(tensor, "tensor_shape", 2, FIELD.TYPE_MESSAGE, type_name=f".{PACKAGE}.TensorShapeProto")
    add_field(tensor, "version_number", 3, FIELD.TYPE_INT32)
    add_field(tensor, "tensor_content", 4, FIELD.TYPE_BYTES)
    for name, number, type_ in [
        ("half_val", 13, FIELD.TYPE_INT32),
        ("float_val", 5, FIELD.TYPE_FLOAT),
        ("double_val", 6, FIELD.TYPE_DOUBLE),
        ("int_val", 7, FIELD.TYPE_INT32),
        ("scomplex_val", 9, FIELD.TYPE_FLOAT),
        ("int64_val", 10, FIELD.TYPE_INT64),
        ("bool_val", 11, FIELD.TYPE_BOOL),
        ("dcomplex_val", 12, FIELD.TYPE_DOUBLE),
        ("uint32_val", 16, FIELD.TYPE_UINT32),
        ("uint64_val", 17, FIELD.TYPE_UINT64),
    ]:
        add_field(tensor, name, number, type_, REPEATED, packed=True)
    add_field(tensor, "string_val", 8, FIELD.TYPE_BYTES, REPEATED)
    add_field(tensor, "variant_val", 15, FIELD.TYPE_MESSAGE, REPEATED, f".{PACKAGE}.VariantTensorDataProto")

    variant = file.message_type.add(name="VariantTensorDataProto")
    add_field(variant, "type_name", 1, FIELD.TYPE_STRING)
    add_field(variant, "metadata", 2, FIELD.TYPE_BYTES)
    add_field(variant, "tensors", 3, FIELD.TYPE_MESSAGE, REPEATED, f".{PACKAGE}.TensorProto")
    return file


POOL = descriptor_pool.DescriptorPool()
POOL.Add(_types_file())
POOL.Add(_shape_file())
POOL.Add(_tensor_file())


def _message_class(name: str) -> type:
    return message_class(POOL, name)


TensorShapeProto = _message_class("TensorShapeProto")
TensorProto = _message_class("TensorProto")
VariantTensorDataProto = _message_class("VariantTensorDataProto")


# ---------------------------------------------------------------- dtypes


class _Kind:
    """How one DataType is read: its numpy dtype and which repeated field holds its values."""

    __slots__ = ("dtype", "field", "via")

    def __init__(self, dtype: np.dtype | None, field: str, via: str | None = None):
        self.dtype = dtype  # None: resolved on use (bfloat16 needs ml_dtypes)
        self.field = field
        self.via = via  # "half": uint16 bit patterns; "complex": (re, im) pairs


# Quantized types are read as the integers they are stored as.
_KINDS = {
    DATA_TYPES["DT_FLOAT"]: _Kind(np.dtype("<f4"), "float_val"),
    DATA_TYPES["DT_DOUBLE"]: _Kind(np.dtype("<f8"), "double_val"),
    DATA_TYPES["DT_HALF"]: _Kind(np.dtype("<f2"), "half_val", "half"),
    DATA_TYPES["DT_BFLOAT16"]: _Kind(None, "half_val", "half"),
    DATA_TYPES["DT_INT8"]: _Kind(np.dtype("i1"), "int_val"),
    DATA_TYPES["DT_INT16"]: _Kind(np.dtype("<i2"), "int_val"),
    DATA_TYPES["DT_INT32"]: _Kind(np.dtype("<i4"), "int_val"),
    DATA_TYPES["DT_INT64"]: _Kind(np.dtype("<i8"), "int64_val"),
    DATA_TYPES["DT_UINT8"]: _Kind(np.dtype("u1"), "int_val"),
    DATA_TYPES["DT_UINT16"]: _Kind(np.dtype("<u2"), "int_val"),
    DATA_TYPES["DT_UINT32"]: _Kind(np.dtype("<u4"), "uint32_val"),
    DATA_TYPES["DT_UINT64"]: _Kind(np.dtype("<u8"), "uint64_val"),
    DATA_TYPES["DT_QINT8"]: _Kind(np.dtype("i1"), "int_val"),
    DATA_TYPES["DT_QUINT8"]: _Kind(np.dtype("u1"), "int_val"),
    DATA_TYPES["DT_QINT16"]: _Kind(np.dtype("<i2"), "int_val"),
    DATA_TYPES["DT_QUINT16"]: _Kind(np.dtype("<u2"), "int_val"),
    DATA_TYPES["DT_QINT32"]: _Kind(np.dtype("<i4"), "int_val"),
    DATA_TYPES["DT_BOOL"]: _Kind(np.dtype("?"), "bool_val"),
    DATA_TYPES["DT_COMPLEX64"]: _Kind(np.dtype("<c8"), "scomplex_val", "complex"),
    DATA_TYPES["DT_COMPLEX128"]: _Kind(np.dtype("<c16"), "dcomplex_val", "complex"),
    DATA_TYPES["DT_STRING"]: _Kind(np.dtype(object), "string_val"),
}

# The numpy type of each repeated field's elements, before the cast to the tensor's dtype.
_FIELD_DTYPES = {
    "float_val": np.float32, "double_val": np.float64, "int_val": np.int32, "int64_val": np.int64,
    "uint32_val": np.uint32, "uint64_val": np.uint64, "bool_val": np.bool_,
    "scomplex_val": np.float32, "dcomplex_val": np.float64,
}

_DTYPE_NAMES = {number: name for name, number in DATA_TYPES.items()}


def _bfloat16() -> np.dtype:
    """numpy's bfloat16, which only the ml_dtypes package provides."""
    try:
        import ml_dtypes  # optional: imported only for a bfloat16 tensor
    except ImportError:
        raise TensorDecodeError(
            "bfloat16 tensors need the ml_dtypes package (pip install ml-dtypes)") from None
    return np.dtype(ml_dtypes.bfloat16)


def _numpy_dtype(number: int, kind: _Kind) -> np.dtype:
    if kind.dtype is not None:
        return kind.dtype
    if number == DATA_TYPES["DT_BFLOAT16"]:
        return _bfloat16()
    raise AssertionError(f"no numpy dtype for DataType {number}")


def _dtype_label(number: int) -> str:
    name = _DTYPE_NAMES.get(number)
    return f"{name} ({number})" if name else f"DataType {number}"


# ---------------------------------------------------------------- decoding


def _parse(data: bytes) -> TensorProto:
    """``data`` parsed as a TensorProto, with no field TensorFlow's message lacks."""
    proto = TensorProto()
    data = bytes(data)
    try:
        proto.ParseFromString(data)
    except DecodeError as exc:
        raise TensorDecodeError(f"not a TensorProto: {exc}") from None
    # Without unknown fields, TensorFlow's canonical bytes serialize back to their own size: the
    # field-by-field look (slow) is only needed when they do not.
    proto.DiscardUnknownFields()
    if proto.ByteSize() != len(data):
        proto.ParseFromString(data)
        for part, where in [(proto, "TensorProto"), (proto.tensor_shape, "TensorShapeProto")]:
            _refuse_unknown(part, where)
        for dim in proto.tensor_shape.dim:
            _refuse_unknown(dim, "TensorShapeProto.Dim")
    return proto


def _refuse_unknown(message, where: str) -> None:
    """An unknown field (or a known number with the wrong wire type) means this is some other message."""
    unknown = UnknownFieldSet(message)
    if len(unknown):
        field = unknown[0]
        raise TensorDecodeError(
            f"not a TensorProto: {where} has no field {field.field_number} of wire type {field.wire_type}")


def _shape(proto: TensorProto) -> tuple[tuple[int, ...], int]:
    """The tensor's dims, all known and non-negative, and how many elements they hold (at most MAX_ELEMENTS)."""
    shape_proto = proto.tensor_shape
    if shape_proto.unknown_rank:
        raise TensorDecodeError("tensor shape has an unknown rank")
    shape = tuple([dim.size for dim in shape_proto.dim])
    if len(shape) > MAX_RANK:
        raise TensorLimitError(f"tensor of rank {len(shape)}: more than the {MAX_RANK} dimensions numpy holds")
    count = 1
    for size in shape:
        if size < 0:
            raise TensorDecodeError(f"tensor shape {list(shape)} has an unknown or negative dimension")
        count *= size
    if count > MAX_ELEMENTS:
        raise TensorLimitError(
            f"tensor shape {list(shape)} holds {count:,} elements, more than the {MAX_ELEMENTS:,} allowed")
    return shape, count


class ParsedTensor(NamedTuple):
    """A TensorProto checked to make an array (:func:`parse_tensor`), not yet made into one."""

    proto: TensorProto | None  # None when read by the fast path: then the values are all in content
    number: int  # the DataType
    kind: _Kind
    shape: tuple[int, ...]
    count: int
    content: bytes  # tensor_content (empty: the values are in the proto's repeated field)


def decode_tensor(data: bytes) -> np.ndarray:
    """A serialized TensorProto as a numpy array of its dtype and shape.

    Strings come back as an object array of ``bytes``. Raises TensorDecodeError
    (one line) for bytes that do not parse as a TensorProto, a dtype numpy
    cannot hold, or values that do not fit the shape.
    """
    return tensor_array(parse_tensor(data))


def parse_tensor(data: bytes) -> ParsedTensor:
    """Everything :func:`decode_tensor` checks, without making the array (a record's kind needs no more).

    Raises TensorDecodeError as :func:`decode_tensor` does.
    """
    fast = canonical_tensor(data)
    if fast is not None:
        return fast
    proto = _parse(data)
    number = proto.dtype
    kind = _KINDS.get(number)
    if kind is None:
        if number == DATA_TYPES["DT_INVALID"]:
            raise TensorDecodeError("not a TensorProto: no dtype set")
        raise TensorDecodeError(f"tensor dtype {_dtype_label(number)} is not supported")
    dtype = _numpy_dtype(number, kind)
    shape, count = _shape(proto)
    content = proto.tensor_content
    if content:
        if number == DATA_TYPES["DT_STRING"]:
            _strings_from_content(content, count)
        elif len(content) != count * dtype.itemsize:
            raise TensorDecodeError(
                f"{dtype.name} tensor of shape {list(shape)} needs {count * dtype.itemsize} bytes of "
                f"tensor_content, found {len(content)}")
    else:
        _check_splat(getattr(proto, kind.field), kind, dtype, shape, count)
    if not count:
        _check_empty(shape, dtype)
    return ParsedTensor(proto, number, kind, shape, count, content)


def _check_splat(values, kind: _Kind, dtype: np.dtype, shape: tuple, count: int) -> None:
    """Refuse a repeated field that would be repeated past MAX_SPLAT elements or MAX_SPLAT_BYTES bytes."""
    given = len(values) // 2 if kind.via == "complex" else len(values)
    if count <= given:
        return  # every element is in the record already
    if dtype == np.dtype(object):  # strings count their bytes, the last one repeated
        size = sum(len(value) for value in values) + (count - given) * (len(values[-1]) if given else 0)
    else:
        size = count * dtype.itemsize
    if count > MAX_SPLAT or size > MAX_SPLAT_BYTES:
        raise TensorLimitError(
            f"tensor of shape {list(shape)} would repeat {given:,} value(s) to {count:,} elements "
            f"({size:,} bytes): more than the {MAX_SPLAT:,} elements or {MAX_SPLAT_BYTES:,} bytes allowed")


def _check_empty(shape: tuple, dtype: np.dtype) -> None:
    """A shape with a zero dim holds nothing, but numpy still refuses one whose other dims overflow its sizes."""
    try:
        np.empty(shape, dtype)
    except (ValueError, MemoryError):
        raise TensorLimitError(
            f"tensor of shape {list(shape)} holds no elements, but its other dims are more than numpy "
            "can index") from None


def canonical_tensor(data: bytes) -> ParsedTensor | None:
    """The layout ``tf.io.serialize_tensor`` writes for numbers, checked and read without protobuf (fast).

    ``08 dtype | 12 shape (12 dim (08 size)?)* | 22 content``, the content
    exactly ``dtype`` × shape in size; anything else (strings, values in the
    repeated fields, a dim name, an unknown field, a varint of many bytes)
    returns None for the full parse to decide.
    """
    n = len(data)
    if n < 4 or data[0] != 0x08 or data[1] >= 0x80 or data[2] != 0x12 or data[3] >= 0x80:
        return None
    kind = _KINDS.get(data[1])
    if kind is None or kind.dtype is None or data[1] == _STRING:
        return None
    p, end = 4, 4 + data[3]
    shape = []
    while p < end:  # each dim: 12 len [08 size]
        if data[p] != 0x12 or p + 1 >= end:
            return None
        length = data[p + 1]
        p += 2
        if length == 0:
            shape.append(0)
            continue
        if length > 11 or data[p] != 0x08:
            return None
        size = shift = 0
        stop = p + length
        for q in range(p + 1, stop):
            byte = data[q]
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                if q + 1 != stop:
                    return None
                break
        else:
            return None
        if size >= 1 << 63:  # a negative (unknown) dim: the full parse says so
            return None
        shape.append(size)
        p = stop
    if p != end or end >= n or data[end] != 0x22:
        return None
    length, p = 0, end + 1
    for shift in range(0, 35, 7):
        if p >= n:
            return None
        byte = data[p]
        p += 1
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
    else:
        return None
    count = math.prod(shape)
    if p + length != n or length != count * kind.dtype.itemsize or not length or len(shape) > MAX_RANK:
        return None
    return ParsedTensor(None, data[1], kind, tuple(shape), count, data[p:])


_STRING = 7  # DT_STRING: its content is lengths then bytes, left to the full parse


def tensor_array(parsed: ParsedTensor) -> np.ndarray:
    """The array of a :func:`parse_tensor` result."""
    proto, number, kind, shape, count, content = parsed
    if content:
        flat = _from_content(content, number, kind, count)
    else:
        flat = _from_values(getattr(proto, kind.field), number, kind, count)
    return flat.reshape(shape)


def tensor_of(decoded) -> np.ndarray:
    """A tensor record's array (a :class:`codec.decode.decoder.DecodedRecord`), made on first use and kept."""
    if decoded.value is None:
        decoded.value = tensor_array(decoded.message)
    return decoded.value


def _from_content(content: bytes, number: int, kind: _Kind, count: int) -> np.ndarray:
    """Raw little-endian element bytes, exactly ``count`` of them (checked by parse_tensor)."""
    if number == DATA_TYPES["DT_STRING"]:
        return _strings_from_content(content, count)
    dtype = _numpy_dtype(number, kind)
    if dtype == np.bool_:
        return np.frombuffer(content, np.uint8) != 0
    return np.frombuffer(content, dtype).copy()


def _strings_from_content(content: bytes, count: int) -> np.ndarray:
    """TensorFlow's string list encoding: ``count`` varint lengths, then the bytes back to back."""
    lengths = []
    pos = 0
    for _ in range(count):
        read = read_varint(content, pos)
        if read is None:
            raise TensorDecodeError("string tensor_content ends inside its lengths")
        length, pos = read
        lengths.append(length)
    if sum(lengths) != len(content) - pos:
        raise TensorDecodeError(
            f"string tensor_content holds {len(content) - pos} bytes of text, "
            f"its lengths say {sum(lengths)}")
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = content[pos:pos + length]
        pos += length
    return out


def _from_values(values, number: int, kind: _Kind, count: int) -> np.ndarray:
    """A typed repeated field, splatted or cut to ``count`` elements as TensorFlow does."""
    dtype = _numpy_dtype(number, kind)
    if kind.via == "complex":
        parts = np.asarray(list(values), dtype=_FIELD_DTYPES[kind.field])
        given = np.empty(len(parts) // 2, dtype)
        given.real = parts[0:2 * len(given):2]
        given.imag = parts[1:2 * len(given):2]
    elif dtype == np.dtype(object):
        given = np.empty(len(values), dtype=object)
        given[:] = [bytes(value) for value in values]
    elif kind.via == "half":
        given = np.asarray(list(values), dtype=np.int32).astype(np.uint16).view(dtype)
    else:
        given = np.asarray(list(values), dtype=_FIELD_DTYPES[kind.field]).astype(dtype)
    return _fill(given, count, dtype)


def _fill(given: np.ndarray, count: int, dtype: np.dtype) -> np.ndarray:
    """``given`` cut or extended to ``count``: by its last value, or zeros/empty strings when empty."""
    if len(given) >= count:
        return given[:count].copy()
    out = np.empty(count, dtype)
    if dtype == np.dtype(object):
        out[:] = [given[-1] if len(given) else b""] * count
        out[:len(given)] = given
    elif len(given):
        out[:len(given)] = given
        out[len(given):] = given[-1]
    else:
        out[:] = 0
    return out


# ---------------------------------------------------------------- JSON


def _json_number(value: float | int | bool) -> float | int | bool | str:
    """A value for JSON; non-finite floats spelled as protobuf's JSON mapping spells them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def tensor_json(array: np.ndarray) -> dict:
    """``{"dtype", "shape", "values", "sha256"}`` for ``cat --json``.

    ``dtype`` is numpy's name, or ``"string"`` for an object array of bytes
    (values then base64, and no sha256). ``values`` are flattened in C order;
    complex values are ``[real, imag]`` pairs. ``sha256`` is of the element
    bytes, little-endian in C order (TensorFlow's ``tensor_content``).
    """
    shape = [int(size) for size in array.shape]
    if array.dtype == np.dtype(object):
        values = [base64.b64encode(bytes(value)).decode("ascii") for value in array.reshape(-1)]
        return {"dtype": "string", "shape": shape, "values": values}
    flat = np.ascontiguousarray(array.reshape(-1))
    if flat.dtype.kind == "c":
        values = [[_json_number(v.real), _json_number(v.imag)] for v in flat.tolist()]
    elif flat.dtype.kind in "biu":
        values = flat.tolist()
    else:
        values = [_json_number(float(v)) for v in flat.astype(np.float64).tolist()]
    little = flat.astype(flat.dtype.newbyteorder("<"), copy=False)
    return {
        "dtype": array.dtype.name,
        "shape": shape,
        "values": values,
        "sha256": hashlib.sha256(little.tobytes()).hexdigest(),
    }
