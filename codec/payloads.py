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

__all__ = ["Payload", "fields_features", "record_fields", "tensor_fields"]


class Payload(Protocol):
    """Decodes the records of one file.

    ``name`` is shown to the user ("lens.demo.Frame from frames.desc").
    ``decode`` never raises for bad data: a record that is not what the
    payload expects is a RAW ``DecodedRecord`` with a ``note`` saying why.
    """

    name: str

    def decode(self, data: bytes) -> DecodedRecord: ...


def tensor_fields(array: np.ndarray) -> dict[str, tuple[str, list]]:
    """A tensor as flat features: ``dtype`` (its name), ``shape``, and ``values`` (flattened, C order)."""
    flat = array.reshape(-1)
    kind = array.dtype.kind
    if kind == "O":
        dtype, values, name = "bytes", [bytes(v) for v in flat], "string"
    elif kind in "biu":
        dtype, values, name = "int64", [int(v) for v in flat.tolist()], array.dtype.name
    elif kind == "c":
        dtype, name = "float", array.dtype.name
        values = [part for v in flat.tolist() for part in (v.real, v.imag)]
    else:
        dtype, values, name = "float", [float(v) for v in flat.tolist()], array.dtype.name
    return {"dtype": ("bytes", [name.encode()]), "shape": ("int64", [int(n) for n in array.shape]),
            "values": (dtype, values)}


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


def fields_features(fields: dict[str, tuple[str, list]]):
    """Flat features as a ``tf.train.Features`` map, the form every pass over Examples reads."""
    from .proto import Features

    features = Features()
    for key, (dtype, values) in fields.items():
        feature = features.feature[key]
        if dtype == "int64":
            # uint64 past int64's range keeps its bits, as TensorFlow stores it
            feature.int64_list.value.extend(v - (1 << 64) if v >= 1 << 63 else v for v in values)
        elif dtype == "float":
            feature.float_list.value.extend(values)
        else:
            feature.bytes_list.value.extend(values)
    return features.feature
