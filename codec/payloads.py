"""What a file's records hold, when the bytes alone cannot say: a payload decodes them.

Without one (``payload=None``), records are read by the kind rule of
DESIGN.md: Example, SequenceExample, a TensorProto, protobuf of no known type,
or raw bytes. A payload the user chose (their own message type with
``--proto``, a TFDS dataset's feature spec) decodes every record of its file
its own way. Every record source has a ``payload`` attribute; callers decode
with ``decode_record(data, source.payload)``.

The flat view: statistics, schema inference, filters and CSV export read any
record as features, ``key -> (dtype, values)`` with dtype "int64", "float" or
"bytes". An Example's are its own; a tensor's, a message's and schema-less
protobuf's are built from their fields (:func:`record_fields`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .record_types import DecodedRecord, RecordKind

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Payload", "fields_features", "int64_values", "record_fields", "tensor_fields"]


class Payload(Protocol):
    """Decodes the records of one file.

    ``name`` is shown to the user ("lens.demo.Frame from frames.desc").
    ``decode`` never raises for bad data: a record that is not what the
    payload expects is a RAW ``DecodedRecord`` with a ``note`` saying why.
    """

    name: str

    def decode(self, data: bytes) -> DecodedRecord: ...


_DTYPE_NAMES: dict = {}  # numpy dtype -> its name as bytes (numpy computes .name in Python, per call)


def tensor_fields(array: np.ndarray) -> dict[str, tuple[str, list]]:
    """A tensor as flat features: ``dtype`` (its name), ``shape``, and ``values`` (flattened, C order)."""
    flat = array.reshape(-1)
    kind = array.dtype.kind
    name = _DTYPE_NAMES.get(array.dtype)
    if name is None:
        name = _DTYPE_NAMES[array.dtype] = b"string" if kind == "O" else array.dtype.name.encode()
    if kind == "O":
        dtype, values = "bytes", [bytes(v) for v in flat]
    elif kind in "biu":
        dtype, values = "int64", flat.tolist()
        if kind == "b":
            values = [int(v) for v in values]
    elif kind == "c":
        dtype = "float"
        values = [part for v in flat.tolist() for part in (v.real, v.imag)]
    else:
        dtype, values = "float", flat.tolist()
    return {"dtype": ("bytes", [name]), "shape": ("int64", list(array.shape)), "values": (dtype, values)}


def record_fields(decoded: DecodedRecord) -> dict[str, tuple[str, list]] | None:
    """The flat features of a record that is not an Example or SequenceExample; None for those and raw ones."""
    if decoded.fields is not None:
        return decoded.fields()
    kind = decoded.kind
    if kind is RecordKind.TENSOR:
        return tensor_fields(decoded.value)
    if kind is RecordKind.MESSAGE:
        from .messages import message_fields

        return message_fields(decoded.message)
    if kind is RecordKind.PROTOBUF:
        from .wire_format import wire_features

        return wire_features(decoded.value)
    return None


def int64_values(values: list) -> list:
    """Integers as int64 holds them: uint64 past int64's range keeps its bits, as TensorFlow stores it."""
    if values and max(values) >= 1 << 63:
        return [v - (1 << 64) if v >= 1 << 63 else v for v in values]
    return values


def fields_features(fields: dict[str, tuple[str, list]]):
    """Flat features as a ``tf.train.Features`` map, the form every pass over Examples reads."""
    from .proto import Features

    features = Features()
    for key, (dtype, values) in fields.items():
        feature = features.feature[key]
        if dtype == "int64":
            feature.int64_list.value.extend(int64_values(values))
        elif dtype == "float":
            feature.float_list.value.extend(values)
        else:
            feature.bytes_list.value.extend(values)
    return features.feature
