"""What tests are built from: the reference fixtures' folder, and tf.train.Example bytes from plain values.

Importable without PySide6 (the codec's tests run with Qt blocked).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from codec.decode.decoder import DecodedRecord, decode_record
from codec.decode.example_proto import BytesList, Example, Feature, FloatList, Int64List, SequenceExample

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MANIFEST: dict = json.loads((FIXTURES / "MANIFEST.json").read_text())


def fixture_path(name: str) -> str:
    """The path of the reference fixture ``name`` (written by TensorFlow: see MANIFEST.json)."""
    return os.fspath(FIXTURES / name)


def ints(*values: int) -> Feature:
    """An int64_list Feature (empty when no values)."""
    return Feature(int64_list=Int64List(value=list(values)))


def floats(*values: float) -> Feature:
    """A float_list Feature (empty when no values)."""
    return Feature(float_list=FloatList(value=list(values)))


def bytestrings(*values: bytes) -> Feature:
    """A bytes_list Feature (empty when no values)."""
    return Feature(bytes_list=BytesList(value=list(values)))


def fill(feature: Feature, values) -> None:
    """Put ``values`` in ``feature``: ints -> int64, floats -> float, bytes/str -> bytes, [] -> an empty int64 list.

    A single value stands for a list of one; a Feature is copied as it is.
    """
    if isinstance(values, Feature):
        feature.CopyFrom(values)
        return
    if hasattr(values, "dtype"):  # a numpy array: the list kind by dtype, empty or not
        flat = values.reshape(-1).tolist()
        (feature.float_list if values.dtype.kind == "f" else feature.int64_list).value.extend(flat)
        return
    if isinstance(values, (int, float, bytes, str)):
        values = [values]
    if values and all(isinstance(v, int) for v in values):
        feature.int64_list.value.extend(values)
    elif values and all(isinstance(v, float) for v in values):
        feature.float_list.value.extend(values)
    elif values:
        feature.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
    else:
        feature.int64_list.SetInParent()


def example_message(features: dict | None = None, /, **named) -> Example:
    """A tf.train.Example of ``features`` (key -> values for :func:`fill`); in ``named`` keys ``__`` spells ``/``."""
    ex = Example()
    for key, values in {**(features or {}), **{k.replace("__", "/"): v for k, v in named.items()}}.items():
        fill(ex.features.feature[key], values)
    return ex


def example(features: dict | None = None, /, *, deterministic: bool = False, **named) -> bytes:
    """A serialized tf.train.Example: ``example(id=3, label="cat", image__encoded=jpeg)``."""
    return example_message(features, **named).SerializeToString(deterministic=deterministic)


def decoded_example(**named) -> DecodedRecord:
    """:func:`example` decoded by the codec, for tests of what reads a decoded record."""
    return decode_record(example(**named))


def sequence_example(context: dict | None, lists: dict | None) -> bytes:
    """A serialized tf.train.SequenceExample: context key -> values, list key -> one values per step."""
    se = SequenceExample()
    for key, values in (context or {}).items():
        fill(se.context.feature[key], values)
    for key, steps in (lists or {}).items():
        fl = se.feature_lists.feature_list[key]
        for step in steps:
            fill(fl.feature.add(), step)
    return se.SerializeToString()

