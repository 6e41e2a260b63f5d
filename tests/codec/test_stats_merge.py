"""FileStats.merge: statistics of any split of the records, merged in any order, equal one pass, byte for byte."""
from __future__ import annotations

import io
import json
import math
import random
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from codec import ShardSet, TFRecordFile, write_records
from codec.decode.example_proto import Example
from codec.stats import file_stats as stats_module
from codec.stats import numbers as stats_numbers
from codec.stats.file_stats import FileStats, compute_stats
from codec.stats.numbers import EXACT_VALUES, Numbers

from .test_query import example, sequence_example

SHARDS = Path(__file__).parent.parent / "fixtures" / "shards"


def _image(fmt: str, size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(out, fmt)
    return out.getvalue()


IMAGES = [_image("PNG", (3, 5)), _image("JPEG", (8, 2)), _image("PNG", (7, 7))]


def _no_list(name: str) -> bytes:
    """An Example whose feature ``name`` has no value list set."""
    ex = Example()
    ex.features.feature[name].SetInParent()
    return ex.SerializeToString()


def _stats(records: list[bytes]) -> FileStats:
    """One pass over records, as stats_iter makes it (every record intact)."""
    result = FileStats()
    for data in records:
        result.add(data)
        result.counts.visited += 1
    return result


def _merged(records: list[bytes], cuts: list[int], order: list[int]) -> FileStats:
    edges = [0] + sorted(cuts) + [len(records)]
    parts = [_stats(records[a:b]) for a, b in zip(edges, edges[1:])]
    parts = [parts[k] for k in order]
    result = parts[0]
    for part in parts[1:]:
        result.merge(part)
    return result


def _dump(stats: FileStats) -> str:
    return json.dumps(stats.to_json(), ensure_ascii=False)


ints = st.one_of(st.integers(-2**63, 2**63 - 1), st.sampled_from([-2**63, 2**63 - 1, 0, -1, 1]),
                 st.integers(-5, 5))
floats = st.one_of(st.floats(width=32), st.sampled_from([-0.0, 0.0, 3.4e38, -3.4e38, 1e-45, -1e-45]),
                   st.floats(-3, 3, width=32))
blobs = st.one_of(st.binary(max_size=6), st.sampled_from([b"cat", b"dog", "é".encode(), b"x" * 300] + IMAGES))
values = st.one_of(st.lists(ints, max_size=8), st.lists(floats, max_size=8), st.lists(blobs, max_size=4))
names = st.sampled_from(["a", "b", "img"])
features = st.dictionaries(names, values, max_size=4)
records = st.one_of(
    features.map(lambda fs: example(**fs)),
    st.tuples(features, st.dictionaries(names, st.lists(values, max_size=3), max_size=2))
    .map(lambda t: sequence_example(*t)),
    st.sampled_from([b"\x08\x96\x01", b"not a proto \xff", b"", _no_list("a")]),  # raw, empty, a Feature unset
)


@pytest.mark.slow
@pytest.mark.parametrize("small", [False, True], ids=["limits", "tiny-limits"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.lists(records, min_size=1, max_size=25), seed=st.integers(0, 2**32 - 1))
def test_any_split_merged_in_any_order_equals_one_pass(small, data, seed):
    rng = random.Random(seed)
    with ExitStack() as stack:
        if small:  # exact values, fine bins and the tracked values all overflow on a few records
            for target, name, value in ((stats_numbers, "EXACT_VALUES", 6), (stats_numbers, "FINE_BINS", 8),
                                        (stats_numbers, "MAX_TRACKED", 3), (stats_module, "MAX_TRACKED", 3),
                                        (stats_module, "_rank", lambda v: len(v) % 2)):  # ranks tie
                stack.enter_context(mock.patch.object(target, name, value))
        one = _dump(_stats(data))
        cuts = [rng.randrange(len(data) + 1) for _ in range(rng.randrange(4))]
        order = list(range(len(cuts) + 1))
        rng.shuffle(order)
        assert _dump(_merged(data, cuts, order)) == one
    json.loads(one)


def _numbers_json(values: list, integer: bool, cuts: list[int], order: list[int]) -> tuple[str, str]:
    """(one pass, parts merged) of a Numbers accumulator over ``values``."""
    dtype = np.int64 if integer else np.float64
    one = Numbers(integer, top=integer)
    one.add(np.array(values, dtype=dtype))
    edges = [0] + sorted(cuts) + [len(values)]
    parts = []
    for a, b in zip(edges, edges[1:]):
        part = Numbers(integer, top=integer)
        for chunk in (values[a:(a + b) // 2], values[(a + b) // 2:b]):  # several adds per part, too
            part.add(np.array(chunk, dtype=dtype))
        parts.append(part)
    parts = [parts[k] for k in order]
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    return json.dumps(one.to_json()), json.dumps(merged.to_json())


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.lists(floats, max_size=40).map(lambda v: (v, False)),
                      st.lists(st.sampled_from([0.0, -0.0, 1.0]), max_size=6).map(lambda v: (v, False)),
                      st.lists(st.one_of(ints, st.integers(-40, 40)), max_size=40).map(lambda v: (v, True))),
       seed=st.integers(0, 2**32 - 1))
def test_numbers_any_split_equals_one_pass(data, seed):
    values, integer = data
    rng = random.Random(seed)
    cuts = [rng.randrange(len(values) + 1) for _ in range(rng.randrange(5))]
    order = list(range(len(cuts) + 1))
    rng.shuffle(order)
    with mock.patch.object(stats_numbers, "EXACT_VALUES", 5), mock.patch.object(stats_numbers, "FINE_BINS", 8), \
            mock.patch.object(stats_numbers, "MAX_TRACKED", 6):
        one, merged = _numbers_json(values, integer, cuts, order)
    assert merged == one


def test_signed_zeros_and_fine_bins_of_other_ranges_merge_exactly():
    zeros = _numbers_json([0.0, -0.0, 0.0, -0.0], False, [1, 2, 3], [3, 0, 2, 1])
    assert zeros[0] == zeros[1] and json.loads(zeros[0])["min"] == 0.0
    with mock.patch.object(stats_numbers, "EXACT_VALUES", 3), mock.patch.object(stats_numbers, "FINE_BINS", 4):
        one, merged = _numbers_json([0.5, 0.6, 0.7, 0.8, 100.0, 101.0, 102.0, 103.0, -7.0], False, [4], [1, 0])
    assert merged == one and sum(json.loads(one)["histogram"]["counts"]) == 9


def test_merge_is_the_same_whichever_side_it_starts_from():
    a = [example(x=[1.5, -0.0], t=["a", "b"]), example(x=[0.0])]
    b = [example(x=[2**40 + 0.5], t=["b"], img=[IMAGES[0]]), sequence_example({"x": [7]}, {"s": [[1], [2, 3]]})]
    left, right = _stats(a), _stats(b)
    left.merge(right)
    other_left, other_right = _stats(b), _stats(a)
    other_left.merge(other_right)
    assert _dump(left) == _dump(other_left) == _dump(_stats(a + b))
    report = left.to_json()
    assert report["kinds"] == {"example": 3, "sequence_example": 1}
    assert report["context"]["x"]["min"] == 0.0  # -0.0 and 0.0 are one value; min shows 0.0 either way


def test_shard_folder_per_shard_merged_equals_the_set_in_one_pass():
    with ShardSet(sorted(str(p) for p in SHARDS.iterdir())) as shards:
        shards.build_index()
        one = json.dumps(compute_stats(shards).to_json())
        total = len(shards)
    parts = []
    for path in sorted(SHARDS.iterdir()):
        with TFRecordFile(path) as f:
            f.build_index()
            parts.append(compute_stats(f))
    merged = parts[-1]
    for part in reversed(parts[:-1]):
        merged.merge(part)
    assert json.dumps(merged.to_json()) == one
    assert merged.records == total > 0


def test_300k_values_cross_exact_values_and_merge_exactly(tmp_path):
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(0, 1e3, 250_000), rng.uniform(-1e-3, 1e9, 50_000)]).astype(np.float32)
    ids = rng.integers(-2**62, 2**62, 300_000)
    assert values.size > EXACT_VALUES
    path = tmp_path / "big.tfrecord"
    write_records(path, [example(v=values[k:k + 1000].tolist(), id=ids[k:k + 1000].tolist())
                         for k in range(0, values.size, 1000)])
    with TFRecordFile(path) as f:
        f.build_index()
        whole = compute_stats(f)
        one = whole.to_json()
        parts = [compute_stats(f, range(a, b)) for a, b in ((170, 300), (0, 3), (3, 170))]
    merged = parts[0]
    merged.merge(parts[1])
    merged.merge(parts[2])
    assert json.dumps(merged.to_json()) == json.dumps(one)
    v = one["features"]["v"]
    exact = values.astype(np.float64)
    assert v["count"] == exact.size and sum(v["histogram"]["counts"]) == exact.size
    assert v["mean"] == pytest.approx(math.fsum(exact) / exact.size, rel=1e-15)
    assert v["std"] == pytest.approx(exact.std(), rel=1e-12)
    assert whole.features["v"].floats.target.hist._fine is not None  # fine bins, not 300k values in memory
    assert one["features"]["id"]["distinct"] is None  # more than MAX_TRACKED: no top list


def test_exact_sums_are_exact_for_extremes():
    nums = Numbers(True)
    nums.add(np.array([2**63 - 1, 2**63 - 1, -2**63], dtype=np.int64))
    assert nums.total == 2**63 - 2 and nums.squares == 2 * (2**63 - 1) ** 2 + 2**126
    floats = Numbers(False)
    x = np.array([1e308, 1e308, -1e308, 5e-324, -0.0])
    floats.add(x)
    assert floats.mean == 1e308 / 5 and floats.min == -1e308 and floats.max == 1e308
    assert floats.std() == pytest.approx(np.std(x / 1e300) * 1e300)
    json.dumps(floats.to_json(), allow_nan=False)  # the overflowing span still gives finite edges
