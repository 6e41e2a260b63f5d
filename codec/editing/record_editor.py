"""Edits inside one Example or SequenceExample, addressed by tree paths.

Paths are those of :func:`codec.decode.decoder.build_tree`: ``("features", key)``,
``("context", key)``, ``("feature_lists", key)``, ``("feature_lists", key,
step)``; a value adds its index. A :class:`RecordEditor` parses the record,
applies edits and serialises it again (deterministically: map keys sorted).
Bad input raises :class:`UsageError` with a message meant for the user.
"""
from __future__ import annotations

import base64
import binascii
import math
import struct
from typing import Any, Sequence

from codec.decode.decoder import RecordKind, decode_record, feature_values
from codec.decode.example_proto import Example, Feature
from codec.errors import UsageError

DTYPES = ("int64", "float", "bytes")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
_FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]


def parse_value(text: str, dtype: str) -> int | float | bytes:
    """One value typed by the user; raises UsageError saying what was expected.

    int64: a whole number in range (``0x`` hex allowed). float: any float32,
    ``nan``, ``inf``, ``-inf``. bytes: text as UTF-8, or ``hex:89504e47`` /
    ``base64:iVBORw==`` for binary.
    """
    s = text.strip() if dtype != "bytes" else text
    value: int | float
    if dtype == "int64":
        try:
            value = int(s, 0) if s.lower().startswith(("0x", "-0x", "0o", "0b")) else int(s)
        except ValueError:
            raise UsageError(f"{text!r} is not an integer") from None
        if not INT64_MIN <= value <= INT64_MAX:
            raise UsageError(f"{value} is out of the int64 range")
        return value
    if dtype == "float":
        try:
            value = float(s)
        except ValueError:
            raise UsageError(f"{text!r} is not a number (nan, inf and -inf are allowed)") from None
        if math.isfinite(value) and abs(value) > _FLOAT32_MAX:
            raise UsageError(f"{text} is out of the float32 range")
        return value
    if dtype == "bytes":
        if s.startswith("hex:"):
            try:
                return bytes.fromhex(s[4:])
            except ValueError:
                raise UsageError("hex: must be followed by pairs of hex digits") from None
        if s.startswith("base64:"):
            try:
                return base64.b64decode(s[7:], validate=True)
            except (binascii.Error, ValueError):
                raise UsageError("base64: must be followed by valid base64") from None
        return s.encode("utf-8")
    raise UsageError(f"unknown type {dtype!r}: expected one of {', '.join(DTYPES)}")


def parse_values(text: str, dtype: str) -> list:
    """A list typed by the user: comma-separated numbers, or one bytes value per line."""
    if not text.strip():
        return []
    if dtype == "bytes":
        return [parse_value(line, dtype) for line in text.splitlines()]
    return [parse_value(part, dtype) for part in text.replace("\n", ",").split(",") if part.strip()]


def convert_values(values: Sequence, source: str, target: str) -> list:
    """Values of one type as another; UsageError where one does not convert."""
    out = []
    for v in values:
        try:
            if target == source:
                out.append(v)
            elif target == "bytes":
                out.append(_number_text(v).encode())
            elif source == "bytes":
                out.append(parse_value(v.decode("utf-8"), target))
            elif target == "int64":
                if not float(v).is_integer():
                    raise UsageError(f"{v} is not a whole number")
                out.append(parse_value(str(int(v)), "int64"))
            else:
                out.append(float(v))
        except UnicodeDecodeError:
            raise UsageError("binary bytes do not convert to numbers") from None
        except (OverflowError, ValueError) as exc:
            raise UsageError(f"{v!r} does not convert to {target}: {exc}") from None
    return out


def _number_text(v: Any) -> str:
    if isinstance(v, float):
        return repr(float(struct.unpack("<f", struct.pack("<f", v))[0])) if math.isfinite(v) else str(v)
    return str(v)


def make_feature(dtype: str, values: Sequence) -> Any:
    feature = Feature()
    if dtype == "int64":
        feature.int64_list.value.extend(values)
    elif dtype == "float":
        feature.float_list.value.extend(values)
    elif dtype == "bytes":
        feature.bytes_list.value.extend(values)
    else:
        raise UsageError(f"unknown type {dtype!r}: expected one of {', '.join(DTYPES)}")
    return feature


def empty_example() -> bytes:
    return Example().SerializeToString()


class RecordEditor:
    """Edit one record's features; ``to_bytes()`` gives the new record."""

    def __init__(self, data: bytes) -> None:
        decoded = decode_record(data)
        if decoded.kind is RecordKind.RAW:
            raise UsageError("this record is raw bytes, not an Example or SequenceExample")
        self.kind = decoded.kind
        self.message = decoded.message

    def to_bytes(self) -> bytes:
        return self.message.SerializeToString(deterministic=True)

    # -- addressing ---------------------------------------------------------
    def _map(self, scope: str):
        if scope == "features" and self.kind is RecordKind.EXAMPLE:
            return self.message.features.feature
        if scope == "context" and self.kind is RecordKind.SEQUENCE_EXAMPLE:
            return self.message.context.feature
        if scope == "feature_lists" and self.kind is RecordKind.SEQUENCE_EXAMPLE:
            return self.message.feature_lists.feature_list
        raise UsageError(f"a {self.kind.value} has no {scope}")

    def feature(self, path: Sequence) -> Any:
        """The Feature at a feature path, or a feature-list step path."""
        scope, key = path[0], path[1]
        container = self._map(scope)
        if key not in container:
            raise UsageError(f"no feature {key!r} in {scope}")
        if scope == "feature_lists":
            if len(path) < 3:
                raise UsageError(f"{key!r} is a feature list: pick one of its steps")
            steps = container[key].feature
            step = path[2]
            if not 0 <= step < len(steps):
                raise UsageError(f"feature list {key!r} has no step {step}")
            return steps[step]
        return container[key]

    @staticmethod
    def _values(feature: Any):
        kind = feature.WhichOneof("kind")
        if kind is None:
            raise UsageError("this feature has no type yet")
        return getattr(feature, kind).value

    def dtype(self, path: Sequence) -> str | None:
        return feature_values(self.feature(path))[0]

    # -- values ---------------------------------------------------------------
    def set_values(self, path: Sequence, values: Sequence) -> None:
        feature = self.feature(path)
        dtype = feature_values(feature)[0]
        if dtype is None:
            raise UsageError("this feature has no type: change its type first")
        new = make_feature(dtype, values)
        feature.CopyFrom(new)

    def set_value(self, path: Sequence, index: int, value) -> None:
        values = self._values(self.feature(path))
        if not 0 <= index < len(values):
            raise UsageError(f"no value {index}: the feature has {len(values)}")
        values[index] = value

    def insert_value(self, path: Sequence, index: int, value) -> None:
        values = list(self._values(self.feature(path)))
        values.insert(index, value)
        self.set_values(path, values)

    def remove_value(self, path: Sequence, index: int) -> None:
        values = self._values(self.feature(path))
        if not 0 <= index < len(values):
            raise UsageError(f"no value {index}: the feature has {len(values)}")
        del values[index]

    # -- features -------------------------------------------------------------
    def add_feature(self, scope: str, key: str, dtype: str, values: Sequence = ()) -> None:
        if not key:
            raise UsageError("a feature needs a name")
        container = self._map(scope)
        if key in container:
            raise UsageError(f"feature {key!r} already exists")
        if scope == "feature_lists":
            flist = container[key]
            for v in values:  # one step per value
                flist.feature.add().CopyFrom(make_feature(dtype, [v]))
        else:
            container[key].CopyFrom(make_feature(dtype, values))

    def delete_feature(self, path: Sequence) -> None:
        container = self._map(path[0])
        if path[1] not in container:
            raise UsageError(f"no feature {path[1]!r} in {path[0]}")
        del container[path[1]]

    def rename_feature(self, path: Sequence, new_key: str) -> None:
        container = self._map(path[0])
        old = path[1]
        if not new_key:
            raise UsageError("a feature needs a name")
        if new_key == old:
            return
        if old not in container:
            raise UsageError(f"no feature {old!r} in {path[0]}")
        if new_key in container:
            raise UsageError(f"feature {new_key!r} already exists")
        value = type(container[old])()
        value.CopyFrom(container[old])
        del container[old]
        container[new_key].CopyFrom(value)

    def change_type(self, path: Sequence, dtype: str) -> None:
        """Convert a feature (or every step of a feature list) to ``dtype``."""
        if path[0] == "feature_lists" and len(path) == 2:
            steps = self._map("feature_lists")[path[1]].feature
            converted = [convert_values(*_typed(step), dtype) for step in steps]
            for step, values in zip(steps, converted):
                step.CopyFrom(make_feature(dtype, values))
            return
        feature = self.feature(path)
        source, values = feature_values(feature)
        feature.CopyFrom(make_feature(dtype, convert_values(values, source or dtype, dtype)))

    # -- feature-list steps ---------------------------------------------------
    def insert_step(self, key: str, index: int, dtype: str, values: Sequence = ()) -> None:
        steps = self._map("feature_lists")[key].feature
        if not 0 <= index <= len(steps):
            raise UsageError(f"feature list {key!r} has {len(steps)} steps")
        new = [make_feature(dtype, values)]
        existing = [Feature.FromString(s.SerializeToString()) for s in steps]
        del steps[:]
        for f in existing[:index] + new + existing[index:]:
            steps.add().CopyFrom(f)

    def remove_step(self, key: str, index: int) -> None:
        steps = self._map("feature_lists")[key].feature
        if not 0 <= index < len(steps):
            raise UsageError(f"feature list {key!r} has no step {index}")
        del steps[index]


def _typed(feature: Any) -> tuple[list, str]:
    dtype, values = feature_values(feature)
    return values, dtype or "bytes"
