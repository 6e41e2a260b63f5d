"""Feature spec inference on every readable fixture, its Python code and JSON."""
from __future__ import annotations

import os
import subprocess
from collections import Counter
from types import SimpleNamespace

import pytest

from codec import TFRecordFile, write_records
from codec.stats.file_stats import compute_stats
from codec.stats.schema import FileSchema, infer_schema, schema_from_stats, schema_iter
from tests.builders import MANIFEST, fixture_path

from .test_query import example, sequence_example

READABLE = [name for name, entry in MANIFEST.items() if not entry.get("corruption", {}).get("not_a_tfrecord")]
UNDAMAGED = [name for name in READABLE if "corruption" not in MANIFEST[name]]
_JSON_DTYPES = {"int64List": "int64", "floatList": "float32", "bytesList": "string"}


def schema_of(path: str) -> FileSchema:
    with TFRecordFile(path) as f:
        f.build_index()
        return infer_schema(f)


def _typed(feature_json: dict) -> tuple[str | None, int]:
    for key, dtype in _JSON_DTYPES.items():
        if key in feature_json:
            return dtype, len(feature_json[key].get("value", []))
    return None, 0


def reference_spec(entry: dict) -> dict:
    """The spec the rules give, worked out from TensorFlow's own JSON of every record."""
    records = [r for r in entry["records"] if r["kind"] != "raw"]
    sequence = any(r["kind"] == "sequence_example" for r in records)
    plain: dict[str, list] = {}
    lists: dict[str, list] = {}
    present_lists: Counter = Counter()
    for r in records:
        value = r["json"]
        features = value.get("context" if r["kind"] == "sequence_example" else "features", {}).get("feature", {})
        for name, feature in features.items():
            plain.setdefault(name, []).append(_typed(feature))
        for name, flist in value.get("featureLists", {}).get("featureList", {}).items():
            present_lists[name] += 1
            lists.setdefault(name, []).extend(_typed(step) for step in flist.get("feature", []))

    def spec(entries, present, seq):
        dtype = Counter(d for d, _ in entries if d).most_common(1)[0][0]
        counts = {n for _, n in entries}
        same = len(counts) == 1 and min(counts) >= 1
        shape = [] if same and min(counts) == 1 else [min(counts)] if same else None
        if seq and same:
            out = {"type": "FixedLenSequenceFeature", "shape": shape, "dtype": dtype}
            if present < len(records):
                out["allow_missing"] = True
            return out
        if not seq and same and present == len(records):
            return {"type": "FixedLenFeature", "shape": shape, "dtype": dtype}
        return {"type": "VarLenFeature", "dtype": dtype}

    base = {name: spec(e, len(e), False) for name, e in plain.items()}
    out = {"records": len(records), "raw_records": len(entry["records"]) - len(records)}
    if sequence:
        out["context"] = base
        out["sequence"] = {name: spec(e, present_lists[name], True) for name, e in lists.items()}
    else:
        out["features"] = base
    return out


FAKE_TF = SimpleNamespace(
    int64="int64", float32="float32", string="string",
    io=SimpleNamespace(
        FixedLenFeature=lambda shape, dtype: {"type": "FixedLenFeature", "shape": shape, "dtype": dtype},
        VarLenFeature=lambda dtype: {"type": "VarLenFeature", "dtype": dtype},
        FixedLenSequenceFeature=lambda shape, dtype, allow_missing=False: dict(
            {"type": "FixedLenSequenceFeature", "shape": shape, "dtype": dtype},
            **({"allow_missing": True} if allow_missing else {})),
    ))


def run_python(code: str) -> dict:
    namespace = {"tf": FAKE_TF}
    exec(compile(code, "<schema>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name", READABLE)
def test_schema_on_every_fixture(name):
    schema = schema_of(fixture_path(name))
    got = schema.to_json()
    entry = MANIFEST[name]
    intact = len([r for r in entry["records"] if r["kind"] != "raw"])
    if name in UNDAMAGED and all("json" in r or r["kind"] == "raw" for r in entry["records"]):
        assert got == reference_spec(entry)  # every record's JSON is in the manifest
    else:
        assert got["records"] >= intact  # records after the damage are read too
        first = reference_spec(dict(entry, records=[r for r in entry["records"] if "json" in r]))
        assert set(got["features"]) == set(first["features"])
        assert {k: v["dtype"] for k, v in got["features"].items()} == \
            {k: v["dtype"] for k, v in first["features"].items()}
    # the Python code is valid and says the same as the JSON
    namespace = run_python(schema.to_python(name))
    if schema.is_sequence:
        assert namespace["context_features"] == got["context"]
        assert namespace["sequence_features"] == got["sequence"]
    else:
        assert namespace["features_spec"] == got["features"]
    # a pass of statistics gives the same spec
    with TFRecordFile(fixture_path(name)) as f:
        f.build_index()
        assert schema_from_stats(compute_stats(f)).to_json() == got


def test_flowers_and_structured_specs():
    code = schema_of(fixture_path("structured.tfrecord")).to_python("structured.tfrecord")
    assert code.splitlines()[-5:] == [
        "features_spec = {",
        '    "byte_col": tf.io.FixedLenFeature([], dtype=tf.string),',
        '    "float_col": tf.io.FixedLenFeature([], dtype=tf.float32),',
        '    "int_col": tf.io.FixedLenFeature([], dtype=tf.int64),',
        "}",
    ]
    assert code.startswith("# Inferred by tfrlens from 100 records of structured.tfrecord.\n")
    assert schema_of(fixture_path("my_example.tfrecords")).to_json()["features"]["my_ints"] == \
        {"type": "FixedLenFeature", "shape": [2], "dtype": "int64"}


def test_detection_boxes_are_var_len():
    features = schema_of(fixture_path("detection.tfrecord")).features
    assert features["image/object/bbox/xmin"].type == "VarLenFeature"
    assert features["image/object/bbox/xmin"].dtype == "float32"
    assert features["image/object/bbox/xmin"].note == "1 to 3 values"
    assert features["image/encoded"].to_python() == "tf.io.FixedLenFeature([], dtype=tf.string)"


def test_sequence_examples_spec():
    schema = schema_of(fixture_path("sequence_examples.tfrecord"))
    assert schema.to_json() == {
        "records": 10, "raw_records": 0,
        "context": {"length": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"},
                    "my_bytes": {"type": "FixedLenFeature", "shape": [], "dtype": "string"}},
        "sequence": {"frames": {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string"},
                     "my_ints": {"type": "VarLenFeature", "dtype": "int64"}},
    }
    code = schema.to_python()
    assert "context_features = {" in code and "sequence_features = {" in code
    assert '    "my_ints": tf.io.VarLenFeature(dtype=tf.int64),  # 2 to 4 values per step' in code


def test_zero_length_records_make_features_var_len():
    schema = schema_of(fixture_path("zero_length_record.tfrecord"))
    assert schema.to_json()["features"] == {"a": {"type": "VarLenFeature", "dtype": "int64"}}
    assert schema.features["a"].note == "in 1 of 3 records"


def test_raw_records_are_left_out_with_a_note():
    schema = schema_of(fixture_path("raw_strings.tfrecord"))
    assert schema.to_json() == {"records": 0, "raw_records": 2, "features": {}}
    assert "# 2 raw record(s) are not Examples" in schema.to_python()
    assert "features_spec = {}" in schema.to_python()


def _schema_of_records(tmp_path, records) -> FileSchema:
    path = tmp_path / "data.tfrecord"
    write_records(path, records)
    return schema_of(str(path))


def test_mixed_types_pick_the_most_common(tmp_path):
    schema = _schema_of_records(tmp_path, [example(v=[1]), example(v=[2]), example(v=["x"])])
    assert schema.to_json()["features"]["v"] == {"type": "FixedLenFeature", "shape": [], "dtype": "int64",
                                                 "mixed_types": {"int64": 2, "string": 1}}
    assert "# mixed types: int64 in 2 records, string in 1 records" in schema.to_python()


def test_fixed_shapes_and_empty_lists(tmp_path):
    schema = _schema_of_records(tmp_path, [example(p=[1.0, 2.0, 3.0], e=[]), example(p=[4.0, 5.0, 6.0], e=[])])
    assert schema.features["p"].to_python() == "tf.io.FixedLenFeature([3], dtype=tf.float32)"
    assert schema.features["e"].type == "VarLenFeature" and schema.features["e"].note == "no values"


def test_feature_lists_missing_in_some_records_allow_missing(tmp_path):
    schema = _schema_of_records(tmp_path, [
        sequence_example({"id": [1]}, {"tok": [[1, 2], [3, 4]], "seen": [[b"a"]]}),
        sequence_example({"id": [2]}, {"tok": [[5, 6]]}),
        sequence_example({"id": [3]}, {"tok": []}),
    ])
    seq = schema.to_json()["sequence"]
    assert seq["tok"] == {"type": "FixedLenSequenceFeature", "shape": [2], "dtype": "int64"}
    assert seq["seen"] == {"type": "FixedLenSequenceFeature", "shape": [], "dtype": "string", "allow_missing": True}
    assert schema.sequence_features["seen"].to_python() == \
        "tf.io.FixedLenSequenceFeature([], dtype=tf.string, allow_missing=True)"


def test_schema_iter_over_chosen_records():
    with TFRecordFile(fixture_path("zero_length_record.tfrecord")) as f:
        f.build_index()
        result = FileSchema()
        progress = list(schema_iter(f, [1], result))
    assert progress[-1].done and progress[-1].total == 1
    assert result.to_json()["features"] == {"a": {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}}


_TF_CHECK = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
path, code, sequence = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
ns = {"tf": tf}
exec(code, ns)
n = 0
for record in tf.data.TFRecordDataset(path, compression_type=sys.argv[4]):
    if sequence:
        tf.io.parse_single_sequence_example(record, ns["context_features"], ns["sequence_features"])
    else:
        tf.io.parse_single_example(record, ns["features_spec"])
    n += 1
print(n)
"""


@pytest.mark.skipif(not os.environ.get("TFRLENS_TF_PYTHON"), reason="needs TensorFlow: set TFRLENS_TF_PYTHON")
@pytest.mark.parametrize("name", [n for n in UNDAMAGED if n != "raw_strings.tfrecord"])
def test_tensorflow_parses_every_record_with_the_inferred_spec(name):
    schema = schema_of(fixture_path(name))
    compression = {"NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}[MANIFEST[name]["compression"]]
    proc = subprocess.run([os.environ["TFRLENS_TF_PYTHON"], "-c", _TF_CHECK, fixture_path(name), schema.to_python(),
                           "1" if schema.is_sequence else "0", compression], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) == MANIFEST[name]["tf_records_read"]


GENERATED = {
    "lists_missing_and_empty": [sequence_example({"id": [1]}, {"tok": [[1, 2], [3, 4]], "seen": [[b"a"]]}),
                                sequence_example({"id": [2]}, {"tok": [[5, 6]]}),
                                sequence_example({"id": [3]}, {"tok": []})],
    "shapes_and_empty_lists": [example(p=[1.0, 2.0, 3.0], e=[], s=["a"]), example(p=[4.0, 5.0, 6.0], e=[])],
    "examples_among_sequence_examples": [example(id=[3]), sequence_example({"id": [1]}, {"f": [[0.5]]})],
}


@pytest.mark.skipif(not os.environ.get("TFRLENS_TF_PYTHON"), reason="needs TensorFlow: set TFRLENS_TF_PYTHON")
@pytest.mark.parametrize("case", sorted(GENERATED))
def test_tensorflow_parses_generated_records_with_the_inferred_spec(tmp_path, case):
    path = tmp_path / f"{case}.tfrecord"
    write_records(path, GENERATED[case])
    schema = schema_of(str(path))
    proc = subprocess.run([os.environ["TFRLENS_TF_PYTHON"], "-c", _TF_CHECK, str(path), schema.to_python(),
                           "1" if schema.is_sequence else "0", ""], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) == len(GENERATED[case])
