"""Infer the feature spec of a file for ``tf.io.parse_example`` and friends.

Rules (over the records whose data is intact; raw records are counted apart,
since no spec parses them):

- a feature present in every record with the same number n >= 1 of values
  -> ``FixedLenFeature([] if n == 1 else [n], dtype)``; otherwise
  ``VarLenFeature(dtype)``;
- SequenceExample files: context features likewise; a feature list whose
  every step has the same number n >= 1 of values ->
  ``FixedLenSequenceFeature([] if n == 1 else [n], dtype)``, with
  ``allow_missing=True`` when some records lack the list; otherwise
  ``VarLenFeature(dtype)``;
- dtype: int64 -> ``tf.int64``, float -> ``tf.float32``, bytes ->
  ``tf.string``. A feature with several types across records gets the most
  common one and a ``mixed types`` note (TensorFlow rejects the others).

:meth:`FileSchema.to_python` gives code ready to paste (``features_spec =
{...}``, or ``context_features`` and ``sequence_features``);
:meth:`FileSchema.to_json` the ``tfrlens-cli schema --json`` object
``{"records", "raw_records", "features": {NAME: {"type", "shape", "dtype"}}}``
(``"context"`` and ``"sequence"`` for SequenceExample files; VarLenFeature
has no ``shape``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from codec.decode.decoder import RecordKind
from codec.decode.payloads import record_fields
from codec.index.scan import IndexProgress
from codec.sources.record_pass import PassCounts, quick_decode, record_pass

__all__ = ["FeatureSpec", "FileSchema", "infer_schema", "schema_from_stats", "schema_iter"]

TF_DTYPES = ("int64", "float32", "string")  # the order of _Shape.dtypes


@dataclass
class FeatureSpec:
    """One entry of the spec: ``type`` is FixedLenFeature, VarLenFeature or FixedLenSequenceFeature."""

    name: str
    type: str
    dtype: str  # int64 | float32 | string
    shape: list[int] | None = None  # None for VarLenFeature
    allow_missing: bool = False
    mixed_types: dict[str, int] | None = None
    note: str = ""  # why VarLen, or what else to know; a comment in the Python code

    def to_json(self) -> dict:
        out: dict = {"type": self.type}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        out["dtype"] = self.dtype
        if self.allow_missing:
            out["allow_missing"] = True
        if self.mixed_types:
            out["mixed_types"] = dict(self.mixed_types)
        return out

    def to_python(self) -> str:
        """``tf.io.FixedLenFeature([], dtype=tf.int64)`` and the like."""
        args = [] if self.shape is None else [repr(list(self.shape))]
        args.append(f"dtype=tf.{self.dtype}")
        if self.allow_missing:
            args.append("allow_missing=True")
        return f"tf.io.{self.type}({', '.join(args)})"


_FLAT_TYPES = {"int64": 0, "float": 1, "bytes": 2}  # a flat view's dtype -> _Shape.dtypes slot


class _Shape:
    """What the inference needs to know of one feature or feature list."""

    __slots__ = ("present", "dtypes", "none", "vmin", "vmax")

    def __init__(self) -> None:
        self.present = 0
        self.dtypes = [0, 0, 0]  # int64, float32, string: records (or steps) with that type
        self.none = 0  # Feature messages with no value list set
        self.vmin: int | None = None  # values per record (or per step)
        self.vmax: int | None = None

    def add(self, feature) -> None:
        kind = feature.WhichOneof("kind")
        if kind == "int64_list":
            self.dtypes[0] += 1
            n = len(feature.int64_list.value)
        elif kind == "float_list":
            self.dtypes[1] += 1
            n = len(feature.float_list.value)
        elif kind == "bytes_list":
            self.dtypes[2] += 1
            n = len(feature.bytes_list.value)
        else:
            self.none += 1
            n = 0
        self._count(n)

    def add_values(self, dtype: str, n: int) -> None:
        """A payload's value list (see codec.decode.payloads): ``dtype`` "int64", "float" or "bytes", ``n`` values."""
        self.dtypes[_FLAT_TYPES[dtype]] += 1
        self._count(n)

    def merge(self, other: _Shape) -> None:
        """Fold in ``other`` (the same feature, over other records), as if its records had been added here."""
        self.present += other.present
        self.none += other.none
        self.dtypes = [a + b for a, b in zip(self.dtypes, other.dtypes)]
        if other.vmin is not None:
            if self.vmin is None:
                self.vmin, self.vmax = other.vmin, other.vmax
            else:
                self.vmin, self.vmax = min(self.vmin, other.vmin), max(self.vmax, other.vmax)

    def _count(self, n: int) -> None:
        if self.vmin is None:
            self.vmin = self.vmax = n
        elif n < self.vmin:
            self.vmin = n
        elif n > self.vmax:
            self.vmax = n


def _infer(name: str, shape: _Shape, records: int, sequence: bool) -> FeatureSpec:
    typed = [(n, k) for k, n in enumerate(shape.dtypes) if n]
    notes = []
    if typed:
        dtype = TF_DTYPES[max(typed, key=lambda t: (t[0], -t[1]))[1]]
    else:
        dtype = "string"
        notes.append("no values seen: dtype is a guess")
    mixed = {TF_DTYPES[k]: n for n, k in sorted(typed, key=lambda t: (-t[0], t[1]))} if len(typed) > 1 else None
    if mixed:
        unit = "steps" if sequence else "records"
        notes.append("mixed types: " + ", ".join(f"{d} in {n:,} {unit}" for d, n in mixed.items()))
    same = shape.vmin is not None and shape.vmin == shape.vmax and shape.vmin >= 1
    fixed_shape = ([] if shape.vmin == 1 else [shape.vmin]) if same else None
    if sequence:
        if fixed_shape is not None:
            missing = shape.present < records
            if missing:
                notes.append(f"in {shape.present:,} of {records:,} records")
            return FeatureSpec(name, "FixedLenSequenceFeature", dtype, fixed_shape, missing, mixed, "; ".join(notes))
        if shape.vmin is None:
            notes.append("no steps seen")
        else:
            notes.append(f"{shape.vmin:,} to {shape.vmax:,} values per step")
        return FeatureSpec(name, "VarLenFeature", dtype, None, False, mixed, "; ".join(notes))
    if fixed_shape is not None and shape.present == records:
        return FeatureSpec(name, "FixedLenFeature", dtype, fixed_shape, False, mixed, "; ".join(notes))
    if shape.present < records:
        notes.append(f"in {shape.present:,} of {records:,} records")
    if shape.vmin is not None and shape.vmin != shape.vmax:
        notes.append(f"{shape.vmin:,} to {shape.vmax:,} values")
    elif shape.vmin == 0:
        notes.append("no values")
    return FeatureSpec(name, "VarLenFeature", dtype, None, False, mixed, "; ".join(notes))


@dataclass
class FileSchema:
    """The inferred spec of a file; filled record by record by :func:`schema_iter`."""

    counts: PassCounts = field(default_factory=PassCounts)
    kinds: dict = field(default_factory=lambda: {k.value: 0 for k in RecordKind})
    shapes: dict = field(default_factory=dict)  # context / Example features: name -> _Shape
    payload: object = None  # how records are decoded (codec.decode.payloads); None: by the kind rule
    list_shapes: dict = field(default_factory=dict)  # feature lists: name -> _Shape

    # -- feeding ---------------------------------------------------------
    def add(self, data: bytes) -> None:
        decoded = quick_decode(data, self.payload)
        self.kinds[decoded.kind.value] += 1
        if decoded.kind is RecordKind.EXAMPLE and decoded.fields is None:
            self._add_features(decoded.message.features.feature)
        elif decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
            message = decoded.message
            self._add_features(message.context.feature)
            shapes = self.list_shapes
            lists = message.feature_lists.feature_list
            for key in lists:
                shape = shapes.get(key)
                if shape is None:
                    shape = shapes[key] = _Shape()
                shape.present += 1
                for step in lists[key].feature:
                    shape.add(step)
        elif decoded.kind is not RecordKind.RAW:
            fields = record_fields(decoded)
            if fields is not None:
                shapes = self.shapes
                for key, (dtype, values) in fields.items():
                    shape = shapes.get(key)
                    if shape is None:
                        shape = shapes[key] = _Shape()
                    shape.present += 1
                    shape.add_values(dtype, len(values))

    def _add_features(self, features) -> None:
        shapes = self.shapes
        for key in features:
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = _Shape()
            shape.present += 1
            shape.add(features[key])

    def merge(self, other: FileSchema) -> None:
        """Fold in the spec of other records (another shard, another range of this file).

        Any split of the records, merged in any order, gives the ``to_json()``
        and ``to_python()`` of one pass over them all.
        """
        for kind, n in other.kinds.items():
            self.kinds[kind] += n
        self.counts.visited += other.counts.visited
        self.counts.damaged += other.counts.damaged
        for mine, theirs in ((self.shapes, other.shapes), (self.list_shapes, other.list_shapes)):
            for name, shape in theirs.items():
                acc = mine.get(name)
                if acc is None:
                    acc = mine[name] = _Shape()
                acc.merge(shape)

    # -- results ---------------------------------------------------------
    @property
    def records(self) -> int:
        """Records the spec covers: all but raw ones, which cannot be parsed."""
        return sum(self.kinds.values()) - self.kinds[RecordKind.RAW.value]

    @property
    def raw_records(self) -> int:
        return self.kinds[RecordKind.RAW.value]

    @property
    def is_sequence(self) -> bool:
        return self.kinds[RecordKind.SEQUENCE_EXAMPLE.value] > 0

    @property
    def features(self) -> dict[str, FeatureSpec]:
        """Example features, or a SequenceExample's context features, by name."""
        return {name: _infer(name, self.shapes[name], self.records, False) for name in sorted(self.shapes)}

    @property
    def sequence_features(self) -> dict[str, FeatureSpec]:
        return {name: _infer(name, self.list_shapes[name], self.records, True) for name in sorted(self.list_shapes)}

    def to_json(self) -> dict:
        out: dict = {"records": self.records, "raw_records": self.raw_records}
        features = {name: spec.to_json() for name, spec in self.features.items()}
        if self.is_sequence:
            out["context"] = features
            out["sequence"] = {name: spec.to_json() for name, spec in self.sequence_features.items()}
        else:
            out["features"] = features
        return out

    def to_python(self, source: str | None = None) -> str:
        """The spec as Python code to paste into a tf.data pipeline."""
        lines = []
        what = f"{self.records:,} record{'s' if self.records != 1 else ''}"
        lines.append(f"# Inferred by tfrlens from {what}" + (f" of {source}" if source else "") + ".")
        if self.raw_records:
            lines.append(f"# {self.raw_records:,} raw record(s) are not Examples: no spec parses them.")
        if self.counts.damaged:
            lines.append(f"# {self.counts.damaged:,} damaged record(s) left out.")
        if self.is_sequence:
            lines.append("# tf.io.parse_single_sequence_example(serialized, context_features, sequence_features)")
            lines += _dict_code("context_features", self.features)
            lines += _dict_code("sequence_features", self.sequence_features)
        else:
            lines.append("# tf.io.parse_single_example(serialized, features_spec)")
            lines += _dict_code("features_spec", self.features)
        return "\n".join(lines) + "\n"


def _dict_code(var: str, specs: dict[str, FeatureSpec]) -> list[str]:
    if not specs:
        return [f"{var} = {{}}"]
    lines = [f"{var} = {{"]
    for name, spec in specs.items():
        line = f"    {json.dumps(name)}: {spec.to_python()},"
        if spec.note:
            line += f"  # {spec.note}"
        lines.append(line)
    lines.append("}")
    return lines


def schema_iter(tfile, indices: Sequence[int] | None = None,
                result: FileSchema | None = None) -> Iterator[IndexProgress]:
    """Infer the spec of ``tfile``'s records (or of ``indices``) into ``result``, yielding progress."""
    result = result if result is not None else FileSchema()
    result.payload = tfile.payload
    yield from record_pass(tfile, result.add, indices, result.counts)


def infer_schema(tfile, indices: Sequence[int] | None = None) -> FileSchema:
    """:func:`schema_iter` run to the end."""
    result = FileSchema()
    for _ in schema_iter(tfile, indices, result):
        pass
    return result


def schema_from_stats(stats) -> FileSchema:
    """The spec from a finished :class:`codec.stats.file_stats.FileStats` (no second pass over the file)."""
    out = FileSchema(counts=stats.counts, kinds=dict(stats.kinds))
    for target, source in ((out.shapes, stats.features), (out.list_shapes, stats.sequence)):
        for name, fs in source.items():
            shape = _Shape()
            shape.present = fs.present
            kinds = fs.dtypes
            shape.dtypes = [kinds["int64"] + kinds["bool"], kinds["float32"] + kinds["float64"], kinds["bytes"]]
            shape.none = fs.dtypes["none"]
            shape.vmin, shape.vmax = fs.values_min, fs.values_max
            target[name] = shape
    return out
