"""The inferred spec merged from parts (any split, any order) is one pass's, byte for byte; so ``schema``
on the process pool and on Beam prints what one process prints."""
from __future__ import annotations

import json
import multiprocessing
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec.cli.main import main
from codec.decode.example_proto import Example, SequenceExample
from codec.sources.shard_set import ShardSet
from codec.stats.pool import plan_stats
from codec.stats.schema import FileSchema
from tests.builders import fixture_path

NAMES = ("a", "b", "c")
RAW = b"\xff\xfe not a proto"


def _fill(feature, kind: str, n: int) -> None:
    if kind == "int64":
        feature.int64_list.value.extend(range(n))
    elif kind == "float":
        feature.float_list.value.extend([0.5] * n)
    elif kind == "bytes":
        feature.bytes_list.value.extend([b"x"] * n)
    # "none": a Feature with no value list set


value_list = st.tuples(st.sampled_from(["int64", "float", "bytes", "none"]), st.integers(0, 3))
features = st.dictionaries(st.sampled_from(NAMES), value_list, max_size=3)


@st.composite
def records(draw) -> bytes:
    shape = draw(st.sampled_from(["example", "sequence", "raw"]))
    if shape == "raw":
        return RAW
    if shape == "example":
        ex = Example()
        for name, (kind, n) in draw(features).items():
            _fill(ex.features.feature[name], kind, n)
        return ex.SerializeToString()
    se = SequenceExample()
    for name, (kind, n) in draw(features).items():
        _fill(se.context.feature[name], kind, n)
    for name, steps in draw(st.dictionaries(st.sampled_from(NAMES), st.lists(value_list, max_size=3),
                                            max_size=3)).items():
        fl = se.feature_lists.feature_list[name]
        for kind, n in steps:
            _fill(fl.feature.add(), kind, n)
    return se.SerializeToString()


def _schema(data: list[bytes]) -> FileSchema:
    out = FileSchema()
    for d in data:
        out.add(d)
    return out


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(records(), max_size=12), st.data())
def test_any_split_merged_in_any_order_is_one_pass(data, draw):
    whole = _schema(data)
    cuts = sorted(draw.draw(st.lists(st.integers(0, len(data)), max_size=4)))
    edges = [0, *cuts, len(data)]
    parts = [_schema(data[a:b]) for a, b in zip(edges, edges[1:])]
    order = draw.draw(st.permutations(range(len(parts))))
    merged = FileSchema()
    for k in order:
        merged.merge(parts[k])
    assert json.dumps(merged.to_json()) == json.dumps(whole.to_json())
    assert merged.to_python("x") == whole.to_python("x")
    assert merged.records + merged.raw_records == len(data)


def test_merge_keeps_the_value_count_range_and_mixed_types():
    one, two = FileSchema(), FileSchema()
    for k in (1, 3):
        ex = Example()
        _fill(ex.features.feature["a"], "int64", k)
        one.add(ex.SerializeToString())
    ex = Example()
    _fill(ex.features.feature["a"], "float", 2)
    _fill(ex.features.feature["b"], "bytes", 1)
    two.add(ex.SerializeToString())
    one.merge(two)
    assert one.to_json() == {"records": 3, "raw_records": 0, "features": {
        "a": {"type": "VarLenFeature", "dtype": "int64", "mixed_types": {"int64": 2, "float32": 1}},
        "b": {"type": "VarLenFeature", "dtype": "string"}}}
    assert "1 to 3 values" in one.to_python()
    assert "in 1 of 3 records" in one.to_python()


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["schema", *argv])
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_shards_on_two_workers_equal_one(capsys, tmp_path):
    shards = fixture_path("shards")
    with ShardSet.from_args([shards]) as f:
        f.build_index()
        assert len(plan_stats(f, 2)) == 4  # one task per shard: the pool runs
    one = _run(capsys, "--json", "--workers", "1", shards)
    out = tmp_path / "schema.json"
    two = _run(capsys, "--json", "--workers", "2", shards, "--out", os.fspath(out))
    assert one == two and one[0] == 0
    report = json.loads(one[1])
    assert report["records"] == 100 and report["features"]
    assert json.loads(out.read_text()) == report
    # The Python code, and a filter on the set's record numbers run in the workers.
    assert _run(capsys, "--workers", "1", shards) == _run(capsys, "--workers", "2", shards)
    where = ("--where", "index >= 30 and shard != 2")
    one = _run(capsys, "--json", "--workers", "1", shards, *where)
    two = _run(capsys, "--json", "--workers", "2", shards, *where)
    assert one == two and json.loads(one[1])["records"] == 45
    assert multiprocessing.active_children() == []


def test_shards_on_beam_direct_equal_local(capsys):
    pytest.importorskip("apache_beam")
    shards = fixture_path("shards")
    local = _run(capsys, "--json", "--workers", "1", shards)
    beam = _run(capsys, "--json", shards, "--runner", "direct", "--beam-option", "direct_num_workers=1")
    assert beam == local and local[0] == 0
