"""A filter over batches of columnar-decoded Examples selects exactly the records ``Filter.matches`` selects
one at a time through protobuf, for odd values, odd layouts and records that are no Examples at all."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codec import TFRecordFile, write_records
from codec.decode.example_proto import Example
from codec.query.columns import BatchFeatures, ColumnView
from codec.query.compiler import RecordView
from codec.query.filter import compile_filter, matching_indices

EXPRESSIONS = [
    "label == 3", "label in [1, 2, -5]", "label > 0 and label < 1000", "score > 0.5", "score == 0.1",
    "score < -1e30 or score > 1e30", "has(score) and not has(label)", "len(label) == 2", "len(name) == 0",
    "name == 'a'", "name == 'é'", "name in ['a', 'b'] or label == 0", "name > 'a'", "has(empty)",
    "len(empty) == 0 and has(empty)", "label == score", "index > 3 and label != 1", "size > 20",
    "name ~ '^[ab]'",
]

ints = st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-3, 5), max_size=3)
floats = st.lists(st.floats(width=32) | st.sampled_from([0.1, 0.5, -0.0, math.inf]), max_size=3)
texts = st.lists(st.sampled_from([b"a", b"b", b"", "é".encode(), b"\xff\xfe", b"ab" * 40]), max_size=3)


@st.composite
def records(draw) -> bytes:
    """An Example with some of label (int64), score (float), name (bytes), empty (no list), or other bytes."""
    shape = draw(st.sampled_from(["example", "example", "example", "raw", "sequence-like"]))
    if shape == "raw":
        return draw(st.binary(max_size=30))
    ex = Example()
    feature = ex.features.feature
    for key, values, kind in (("label", ints, "int64"), ("score", floats, "float"), ("name", texts, "bytes")):
        if draw(st.booleans()):
            chosen = draw(values)
            getattr(feature[key], f"{kind}_list").value.extend(chosen)
    if draw(st.booleans()):
        feature["empty"].SetInParent()
    data = ex.SerializeToString()
    if shape == "sequence-like":
        data += b"\x12\x00"  # a second field: not the canonical layout, decoded record by record
    return data


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(records(), min_size=1, max_size=40))
def test_batched_filters_select_what_one_record_at_a_time_selects(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("q") / "q.tfrecord"
    write_records(str(path), data)
    with TFRecordFile(path) as f:
        f.build_index()
        for text in EXPRESSIONS:
            flt = compile_filter(text)
            one_by_one = [i for i, d in enumerate(data) if flt.matches(i, d)]
            assert list(matching_indices(f, flt)) == one_by_one, text


def test_column_views_answer_as_protobuf_views():
    ex = Example()
    ex.features.feature["label"].int64_list.value.extend([7, -1])
    ex.features.feature["score"].float_list.value.append(0.1)
    ex.features.feature["name"].bytes_list.value.extend([b"a", b""])
    ex.features.feature["empty"].SetInParent()
    data = [b"\x00garbage", ex.SerializeToString()]
    names = frozenset(["label", "score", "name", "empty", "missing"])
    batch = BatchFeatures(data, names)
    assert batch.ok == [False, True]  # no Example: decoded by the caller
    mine = ColumnView(1, data[1], "ok", 0, len(data[1]), batch, 1)
    theirs = RecordView(1, data[1], "ok", 0, len(data[1]), None)
    for name in names:
        assert mine.has(name) == theirs.has(name)
        assert mine.length(name) == theirs.length(name)
        assert [(d, list(v)) for d, v in mine.groups(name)] == [(d, list(v)) for d, v in theirs.groups(name)]
