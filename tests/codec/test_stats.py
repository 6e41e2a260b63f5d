"""Per-feature statistics: the reference fixtures, edge values, bounded memory."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

from codec import TFRecordFile, write_records
from codec.cli.stats_text import sparkline, stats_text
from codec.index.scan import IndexProgress
from codec.query.filter import compile_filter, matching_indices
from codec.stats.file_stats import FileStats, compute_stats, stats_iter
from codec.stats.numbers import EXACT_VALUES, MAX_TRACKED
from codec.stats.numbers import Histogram as _Histogram
from tests.builders import MANIFEST, fixture_path

from .test_query import example, sequence_example


def stats_of(name: str, indices=None) -> dict:
    with TFRecordFile(fixture_path(name)) as f:
        f.build_index()
        report = compute_stats(f, indices).to_json()
    json.dumps(report, allow_nan=False)  # always valid JSON
    return report


def stats_of_records(tmp_path, records: list[bytes]) -> dict:
    path = tmp_path / "data.tfrecord"
    write_records(path, records)
    with TFRecordFile(path) as f:
        f.build_index()
        report = compute_stats(f).to_json()
    json.dumps(report, allow_nan=False)
    return report


def test_flowers_has_five_labels_of_five_records():
    s = stats_of("flowers_jpeg.tfrecord")
    assert s["records"] == 25 and s["kinds"] == {"example": 25} and s["raw_records"] == 0
    label = s["features"]["label"]
    assert label["present"] == 25 and label["dtype"] == "int64"
    assert len(label["top"]) == 5 and all(count == 5 for _, count in label["top"])
    assert sorted(v for v, _ in label["top"]) == [0, 1, 2, 3, 4]
    assert all(type(v) is int for v, _ in label["top"])  # int64 values stay JSON integers
    assert label["distinct"] == 5
    assert (label["min"], label["max"], label["mean"]) == (0, 4, 2.0)
    assert type(label["min"]) is int and type(label["max"]) is int
    assert label["histogram"] == {"edges": [0, 1, 2, 3, 4, 5], "counts": [5, 5, 5, 5, 5]}
    assert label["values_per_record"] == {"min": 1, "max": 1, "mean": 1.0}
    text = s["features"]["text"]
    assert text["dtype"] == "bytes" and text["text_share"] == 1.0 and text["image_share"] == 0.0
    assert sorted(text["top"]) == [[n, 5] for n in ("daisy", "dandelion", "roses", "sunflowers", "tulips")]
    assert text["top_complete"] is True


def test_flowers_images():
    enc = stats_of("flowers_jpeg.tfrecord")["features"]["encoded"]
    assert enc["image_share"] == 1.0 and enc["text_share"] == 0.0
    assert enc["image_formats"] == {"JPEG": 25}
    assert enc["image_height"]["min"] == enc["image_height"]["max"] == 72
    assert sum(enc["image_width"]["histogram"]["counts"]) == 25
    assert enc["top"] == [] and enc["top_complete"] is False  # long values are not counted


def test_structured_numbers():
    for name in ("structured.tfrecord", "structured.tfrecord.gz", "structured.zlib.tfrecord"):
        s = stats_of(name)
        assert s["records"] == 100
        ints = s["features"]["int_col"]
        assert (ints["min"], ints["max"], ints["mean"], ints["count"]) == (0, 99, 49.5, 100)
        assert ints["std"] == pytest.approx(np.std(np.arange(100)))
        assert ints["nan"] == ints["inf"] == 0
        assert sum(ints["histogram"]["counts"]) == 100 and ints["histogram"]["edges"][0] == 0
        floats = s["features"]["float_col"]
        expected = [r["json"]["features"]["feature"]["float_col"]["floatList"]["value"][0]
                    for r in MANIFEST["structured.tfrecord"]["records"][:50]]
        assert floats["dtype"] == "float32" and floats["min"] == min(expected) == 0.0
        assert floats["max"] >= max(expected)
        assert sum(floats["histogram"]["counts"]) == 100 and len(floats["histogram"]["edges"]) == 21
        byte_col = s["features"]["byte_col"]
        assert byte_col["text_share"] == 1.0 and byte_col["top_complete"] is True
        assert byte_col["value_bytes"]["min"] == len("row-0") and byte_col["value_bytes"]["max"] == len("row-99")


def test_detection_images_boxes_and_classes():
    s = stats_of("detection.tfrecord")["features"]
    enc = s["image/encoded"]
    assert enc["image_formats"] == {"JPEG": 12}
    assert (enc["image_width"]["min"], enc["image_width"]["max"]) == (160, 160)
    assert (enc["image_height"]["min"], enc["image_height"]["max"]) == (120, 120)
    classes = s["image/object/class/text"]
    counts = dict(classes["top"])
    assert set(counts) == {"cat", "dog", "bird"} and sum(counts.values()) == classes["count"]
    labels = s["image/object/class/label"]
    assert sum(c for _, c in labels["top"]) == labels["count"] == classes["count"]
    boxes = s["image/object/bbox/xmin"]
    assert boxes["dtype"] == "float32" and 0 <= boxes["min"] <= boxes["max"] <= 1
    assert boxes["values_per_record"]["min"] == 1 and boxes["values_per_record"]["max"] == 3
    assert s["image/format"]["top"] == [["jpeg", 12]]


def test_sequence_examples_context_and_lengths():
    s = stats_of("sequence_examples.tfrecord")
    assert "features" not in s and set(s) >= {"context", "sequence"}
    assert s["kinds"] == {"sequence_example": 10}
    length = s["context"]["length"]
    assert (length["min"], length["max"]) == (1, 10)
    my_ints = s["sequence"]["my_ints"]
    assert my_ints["present"] == 10 and my_ints["dtype"] == "int64"
    assert (my_ints["length"]["min"], my_ints["length"]["max"], my_ints["length"]["mean"]) == (1, 10, 5.5)
    assert my_ints["length"]["histogram"]["counts"] == [1] * 10
    assert my_ints["values_per_step"]["min"] >= 1
    assert my_ints["count"] == sum(my_ints["histogram"]["counts"])
    frames = s["sequence"]["frames"]
    assert frames["image_formats"] == {"PNG": frames["count"]} and frames["image_share"] == 1.0
    assert frames["values_per_step"] == {"min": 1, "max": 1, "mean": 1.0}


def test_raw_damaged_and_empty_files():
    raw = stats_of("raw_strings.tfrecord")
    assert raw["records"] == 2 and raw["raw_records"] == 2 and raw["features"] == {}
    damaged = stats_of("corrupt_data_crc.tfrecord")
    assert damaged["records"] == 29 and damaged["damaged_records"] == 1
    assert damaged["features"]["id"]["present"] == 29
    empty = stats_of("empty.tfrecord")
    assert empty == {"records": 0, "kinds": {}, "raw_records": 0, "damaged_records": 0, "features": {}}
    zero = stats_of("zero_length_record.tfrecord")
    assert zero["records"] == 3 and zero["features"]["a"]["present"] == 1


def test_stats_of_filtered_records():
    with TFRecordFile(fixture_path("flowers_jpeg.tfrecord")) as f:
        f.build_index()
        picked = matching_indices(f, compile_filter("label >= 3"))
        s = compute_stats(f, picked).to_json()
    assert s["records"] == 10
    assert sorted(s["features"]["label"]["top"]) == [[3, 5], [4, 5]]


def test_stats_iter_yields_progress_and_fills_the_result():
    with TFRecordFile(fixture_path("structured.tfrecord")) as f:
        f.build_index()
        result = FileStats()
        progress = list(stats_iter(f, None, result))
    assert all(isinstance(p, IndexProgress) for p in progress)
    assert progress[-1].done and progress[-1].records == progress[-1].total == 100
    assert result.records == 100 and result.features["int_col"].present == 100


def test_nan_inf_and_floats(tmp_path):
    s = stats_of_records(tmp_path, [example(x=[1.5, math.nan]), example(x=[math.inf, -math.inf, 0.1]),
                                    example(x=[-2.0])])["features"]["x"]
    assert (s["count"], s["nan"], s["inf"]) == (6, 1, 2)
    assert (s["min"], s["max"]) == (-2.0, 1.5)
    assert s["mean"] == pytest.approx((1.5 + np.float32(0.1) - 2.0) / 3)
    assert sum(s["histogram"]["counts"]) == 3
    only_nan = stats_of_records(tmp_path, [example(y=[math.nan])])["features"]["y"]
    assert only_nan["min"] is None and only_nan["std"] is None and only_nan["histogram"] == {"edges": [], "counts": []}
    one = stats_of_records(tmp_path, [example(z=[0.1]), example(z=[0.1])])["features"]["z"]
    assert one["min"] == one["max"] == 0.1 and one["histogram"] == {"edges": [0.1, 0.1], "counts": [2]}


def test_mixed_types_are_flagged(tmp_path):
    s = stats_of_records(tmp_path, [example(v=[1]), example(v=[2]), example(v=["two"]), example(w=[])])["features"]
    v = s["v"]
    assert v["mixed_types"] is True and v["dtypes"] == {"int64": 2, "bytes": 1} and v["dtype"] == "int64"
    assert (v["min"], v["max"]) == (1, 2)
    assert v["by_dtype"]["bytes"]["top"] == [["two", 1]]
    assert "mixed_types" not in s["w"] and s["w"]["values_per_record"]["max"] == 0


def test_bytes_top_binary_values_are_base64(tmp_path):
    s = stats_of_records(tmp_path, [example(b=[b"\x00\x01"]), example(b=[b"\x00\x01"]), example(b=[b""])])
    top = s["features"]["b"]["top"]
    assert top[0] == ["base64:" + base64.b64encode(b"\x00\x01").decode(), 2]
    assert top[1] == ["", 1]


def test_int_top_stops_past_the_distinct_limit(tmp_path):
    n = MAX_TRACKED + 5
    s = stats_of_records(tmp_path, [example(i=[k]) for k in range(n)])["features"]["i"]
    assert "top" not in s and s["distinct"] is None
    assert (s["min"], s["max"], s["count"]) == (0, n - 1, n)
    assert sum(s["histogram"]["counts"]) == n


def test_bytes_top_is_bounded(tmp_path):
    n = MAX_TRACKED + 10
    records = [example(t=[f"v{k}", "common"]) for k in range(n)]
    s = stats_of_records(tmp_path, records)["features"]["t"]
    assert s["top_complete"] is False and s["top"][0] == ["common", n]
    assert s["count"] == 2 * n and s["text_share"] == 1.0


def test_histogram_switches_to_fine_bins_with_exact_totals():
    rng = np.random.default_rng(1)
    values = rng.normal(size=5 * EXACT_VALUES)
    hist = _Histogram()
    for chunk in np.array_split(values, 40):
        hist.add(chunk)
    assert hist._fine is not None and hist._fine.size == 4096  # bounded memory
    got = hist.result(float(values.min()), float(values.max()), False)
    exact, _ = np.histogram(values, bins=np.array(got["edges"]))
    assert sum(got["counts"]) == values.size
    assert np.abs(np.array(got["counts"]) - exact).max() <= 0.01 * values.size


def test_histogram_grows_both_ways():
    hist = _Histogram()
    hist.add(np.linspace(0, 1, EXACT_VALUES + 1))
    hist.add(np.array([-1000.0, 5000.0]))
    got = hist.result(-1000.0, 5000.0, False)
    assert sum(got["counts"]) == EXACT_VALUES + 3
    assert got["counts"][0] == 1 and got["counts"][-1] == 1  # [-1000, -700) and [4700, 5000]
    assert got["counts"][3] == EXACT_VALUES + 1  # [-100, 200) holds the first values


def test_human_text(tmp_path):
    report = stats_of("flowers_jpeg.tfrecord")
    text = stats_text(report, "flowers_jpeg.tfrecord")
    assert text.splitlines()[0] == "flowers_jpeg.tfrecord: 25 records (example 25)"
    assert "label  [int64]  in 25 of 25 records (100%)" in text
    assert '"daisy" ×5' in text and "JPEG 25" in text
    seq = stats_text(stats_of("sequence_examples.tfrecord"))
    assert "context features:" in seq and "feature lists:" in seq and "steps per record" in seq
    assert sparkline([0, 1, 2, 4]) == " ▂▄█" and sparkline([]) == ""


def test_sequence_stats_from_generated_records(tmp_path):
    records = [sequence_example({"id": [1]}, {"tok": [[1, 2], [3, 4]]}),
               sequence_example({"id": [2]}, {"tok": [], "other": [[b"x"]]}),
               example(id=[3])]
    s = stats_of_records(tmp_path, records)
    assert s["kinds"] == {"example": 1, "sequence_example": 2}
    assert s["context"]["id"]["present"] == 3
    tok = s["sequence"]["tok"]
    assert tok["present"] == 2 and (tok["length"]["min"], tok["length"]["max"]) == (0, 2)
    assert tok["values_per_step"] == {"min": 2, "max": 2, "mean": 2.0} and tok["count"] == 4
    assert s["sequence"]["other"]["present"] == 1
