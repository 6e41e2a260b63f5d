"""A schema with one field of every protobuf scalar type (proto2 and proto3), and records at each type's edges.

The descriptor set is built here with ``descriptor_pb2`` (no protoc), so the
codec tests and the app tests read the same file; the records are made by
protobuf's own classes, so every expectation can be computed from the
messages themselves.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from codec.storage.writer import write_records

_F = descriptor_pb2.FieldDescriptorProto
# field name -> (FieldDescriptorProto type, the values records take in turn)
INT32 = [0, 1, -1, -(2**31), 2**31 - 1]
INT64 = [0, 1, -1, -(2**63), 2**63 - 1, 2**53 + 1, -(2**53) - 1]
UINT32 = [0, 1, 2**32 - 1]
UINT64 = [0, 1, 2**53 - 1, 2**53 + 1, 2**63, 2**63 + 1, 2**64 - 1]
FLOATS = [0.1, math.nan, math.inf, -math.inf, -0.0, 3.4028234663852886e38, 1e-45, 16777217.0]
DOUBLES = [0.1, math.nan, math.inf, -math.inf, -0.0, 1.7976931348623157e308, 5e-324, float(2**53 + 1)]
SCALARS = {
    "f_double": (_F.TYPE_DOUBLE, DOUBLES), "f_float": (_F.TYPE_FLOAT, FLOATS),
    "f_int64": (_F.TYPE_INT64, INT64), "f_uint64": (_F.TYPE_UINT64, UINT64),
    "f_int32": (_F.TYPE_INT32, INT32), "f_fixed64": (_F.TYPE_FIXED64, UINT64),
    "f_fixed32": (_F.TYPE_FIXED32, UINT32), "f_bool": (_F.TYPE_BOOL, [True, False]),
    "f_uint32": (_F.TYPE_UINT32, UINT32), "f_enum": (_F.TYPE_ENUM, [2, 3, 0]),
    "f_sfixed32": (_F.TYPE_SFIXED32, INT32), "f_sfixed64": (_F.TYPE_SFIXED64, INT64),
    "f_sint32": (_F.TYPE_SINT32, INT32), "f_sint64": (_F.TYPE_SINT64, INT64),
}
INTEGER_FIELDS = [name for name, (t, _) in SCALARS.items() if t not in (_F.TYPE_DOUBLE, _F.TYPE_FLOAT,
                                                                        _F.TYPE_BOOL, _F.TYPE_ENUM)]
ENUM_NAMES = {0: "UNKNOWN", 2: "ACTIVE", 3: "DONE"}
RECORDS = 8  # every field's edges come round at least once


def _file(syntax: str) -> descriptor_pb2.FileDescriptorProto:
    package = f"lens.{syntax}"
    fd = descriptor_pb2.FileDescriptorProto(name=f"scalars_{syntax}.proto", package=package, syntax=syntax)
    status = fd.enum_type.add(name="Status")
    for number, name in sorted(ENUM_NAMES.items()):
        status.value.add(name=name, number=number)
    message = fd.message_type.add(name="Scalars")
    for number, (name, (kind, _)) in enumerate(SCALARS.items(), 1):
        for offset, label, prefix in ((0, _F.LABEL_OPTIONAL, "f_"), (100, _F.LABEL_REPEATED, "r_")):
            field = message.field.add(name=prefix + name[2:], number=number + offset, type=kind, label=label)
            if kind == _F.TYPE_ENUM:
                field.type_name = f".{package}.Status"
    message.field.add(name="created_ms", number=200, type=_F.TYPE_UINT64, label=_F.LABEL_OPTIONAL)
    return fd


def scalar_messages(syntax: str) -> list:
    """The records as messages of ``lens.<syntax>.Scalars``: record i holds each type's i-th edge (in turn),
    and its repeated fields every edge, rotated by i."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file(syntax))
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"lens.{syntax}.Scalars"))
    out = []
    for i in range(RECORDS):
        message = cls(created_ms=UINT64[i % len(UINT64)])
        for name, (_, values) in SCALARS.items():
            setattr(message, name, values[i % len(values)])
            getattr(message, "r_" + name[2:]).extend(values[i % len(values):] + values[:i % len(values)])
        out.append(message)
    return out


def write_scalar_files(folder: str | os.PathLike, syntax: str) -> tuple[str, str, list]:
    """``scalars.desc`` (both syntaxes) and ``scalars_<syntax>.tfrecord`` in ``folder``: their paths, the messages."""
    folder = Path(folder)
    schema = descriptor_pb2.FileDescriptorSet()
    schema.file.extend([_file("proto2"), _file("proto3")])
    desc = folder / "scalars.desc"
    desc.write_bytes(schema.SerializeToString())
    messages = scalar_messages(syntax)
    data = folder / f"scalars_{syntax}.tfrecord"
    write_records(data, [m.SerializeToString() for m in messages])
    return os.fspath(desc), os.fspath(data), messages
