"""What the Scalars view plots, without Qt: smoothing, ticks, points per tag and run, histograms."""
from __future__ import annotations

import io
import json
import math
import struct

import pytest

from codec.decode.events import event_class
from codec.ops.scalar_series import (
    RELATIVE,
    STEP,
    WALL,
    LogSeries,
    nice_ticks,
    smooth,
    tag_matcher,
    tick_label,
    time_ticks,
)
from codec.ops.scalars import write_csv
from codec.sources.record_pass import iter_records
from codec.sources.tfrecord_file import TFRecordFile
from tests.builders import FIXTURES
from tests.codec.test_events import run
from tests.codec.test_scalars import file_version, simple

LOGS = FIXTURES / "formats" / "logs"
Event = event_class()


def tensorboard_smoothing(values, weight):
    """TensorBoard's own code (tf-smoothing, resampleData), transcribed line for line."""
    last = 0 if values else math.nan
    num_accum = 0
    constant = all(v == values[0] for v in values)
    out = []
    for v in values:
        if constant or not math.isfinite(v):
            out.append(v)
        else:
            last = last * weight + (1 - weight) * v
            num_accum += 1
            debias = 1 - weight ** num_accum if weight != 1 else 1
            out.append(last / debias)
    return out


def test_smoothing_is_tensorboards_debiased_average_on_known_numbers():
    values = [1.0, 2.0, 3.0, 4.0]
    # weight 0.5: averages 0.5, 1.25, 2.125, 3.0625 debiased by 0.5, 0.75, 0.875, 0.9375
    assert smooth(values, 0.5) == pytest.approx([1.0, 5 / 3, 17 / 7, 49 / 15])
    noisy = [5.0, 3.0, float("nan"), 4.0, 1.0, float("inf"), 0.5]
    for weight in (0.0, 0.3, 0.6, 0.9, 0.99):
        got, want = smooth(noisy, weight), tensorboard_smoothing(noisy, weight)
        assert [repr(v) for v in got[2::3]] == [repr(v) for v in want[2::3]]  # NaN and inf kept
        assert got == pytest.approx(want, nan_ok=True)
    assert smooth([2.0, 2.0, 2.0], 0.9) == [2.0, 2.0, 2.0]  # a constant series is left alone
    assert smooth([1.0, 3.0], 0.0) == [1.0, 3.0]
    assert smooth([], 0.6) == []


def test_nice_ticks_are_round_and_cover_the_range():
    assert nice_ticks(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(0.13, 0.92, 4) == [0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(-3, 3, 6) == [-3, -2, -1, 0, 1, 2, 3]
    assert nice_ticks(0.1, 0.30000000000000004, 2) == [0.1, 0.2, 0.3]
    assert nice_ticks(5, 5) == [5]
    assert nice_ticks(0, math.nan) == []
    assert [tick_label(t, 0.2) for t in nice_ticks(0.13, 0.92, 4)] == ["0.2", "0.4", "0.6", "0.8"]
    assert tick_label(2000, 500) == "2000"
    assert tick_label(2e-6, 1e-6) == "2e-06"


def test_time_ticks_fall_on_round_minutes():
    lo = 1_795_775_431.0
    ticks = time_ticks(lo, lo + 3600, 6)
    assert len(ticks) >= 5
    assert all(t % 600 == 0 for t, _ in ticks)
    assert all(len(label) == 5 and label[2] == ":" for _, label in ticks)  # HH:MM


def test_tag_filter_takes_a_glob_or_a_part_of_the_tag():
    assert tag_matcher("metrics/*")("metrics/accuracy")
    assert not tag_matcher("metrics/*")("loss")
    assert tag_matcher("*acc*")("metrics/accuracy")
    assert tag_matcher("acc")("metrics/accuracy")
    assert tag_matcher("")("anything")


def fixture_series() -> LogSeries:
    series = LogSeries()
    for name in ("train", "eval"):
        path = next((LOGS / name).iterdir())
        with TFRecordFile(str(path)) as f:
            f.build_index()
            for item in iter_records(f, intact_only=True):
                if isinstance(item, tuple):
                    series.add_record(name, item[1])
    return series


def test_the_fixture_logs_points_per_tag_and_run_and_the_csv_equals_the_commands(capsys):
    series = fixture_series()
    assert series.scalar_tags() == ["loss", "metrics/accuracy"]
    assert series.scalar_tags("metrics/*") == ["metrics/accuracy"]
    assert series.runs == ["train", "eval"]
    assert set(series.scalars["loss"]) == {"train", "eval"}
    loss = series.scalars["loss"]["train"]
    assert len(loss.steps) == len(loss.values) == 30 and loss.steps == sorted(loss.steps)
    assert loss.xs(STEP, 0) == [float(s) for s in loss.steps]
    assert loss.xs(RELATIVE, series.started["train"])[0] == pytest.approx(
        (loss.wall_times[0] - series.started["train"]) / 3600)
    assert loss.xs(WALL, 0) == loss.wall_times
    out = io.StringIO()
    write_csv(series.shown_points(["loss"], series.runs), out)
    code, cli, _ = run(capsys, "scalars", "--csv", "--tag", "loss", LOGS)
    assert code == 0 and out.getvalue() == cli


def test_histograms_from_the_fixture_tf2_writer():
    series = fixture_series()
    assert series.histogram_tags() == ["weights"]
    points = series.histograms["weights"]["train"]
    assert points and all(len(p.buckets) > 0 for p in points)
    left, right, count = points[0].buckets[0]
    assert left <= right and count >= 0


def test_histograms_from_tf1_and_tf2_summaries():
    tf1 = Event(wall_time=10.0, step=3)
    histo = tf1.summary.value.add(tag="w").histo
    histo.min, histo.max = -1.0, 2.0
    histo.bucket_limit.extend([0.0, 1.0, 1.7976931348623157e308])
    histo.bucket.extend([4, 0, 6])
    tf2 = Event(wall_time=11.0, step=4)
    value = tf2.summary.value.add(tag="h")
    value.metadata.plugin_data.plugin_name = "histograms"
    value.tensor.dtype = 2  # DT_DOUBLE
    value.tensor.tensor_shape.dim.add(size=2)
    value.tensor.tensor_shape.dim.add(size=3)
    value.tensor.tensor_content = struct.pack("<6d", 0.0, 0.5, 3, 0.5, 1.0, 7)
    later = Event(wall_time=12.0, step=5)  # the plugin named on the tag's first value only
    later_value = later.summary.value.add(tag="h")
    later_value.tensor.dtype = 1  # DT_FLOAT, from float_val
    later_value.tensor.tensor_shape.dim.add(size=1)
    later_value.tensor.tensor_shape.dim.add(size=3)
    later_value.tensor.float_val.extend([0.0, 1.0, 9.0])
    series = LogSeries()
    for event in (tf1, tf2, later):
        assert series.add_record("r", event.SerializeToString()) == 1
    assert series.histograms["w"]["r"][0].buckets.tolist() == [[-1.0, 0.0, 4.0], [0.0, 1.0, 0.0], [1.0, 2.0, 6.0]]
    assert [p.buckets.tolist() for p in series.histograms["h"]["r"]] == [[[0.0, 0.5, 3.0], [0.5, 1.0, 7.0]],
                                                                         [[0.0, 1.0, 9.0]]]
    assert [p.step for p in series.histograms["h"]["r"]] == [4, 5]
    assert series.scalars == {}


def test_histograms_kept_per_tag_and_run_are_bounded_and_spread():
    from codec.ops.scalar_series import HISTOGRAMS_KEPT

    series = LogSeries()
    for step in range(5 * HISTOGRAMS_KEPT):
        event = Event(wall_time=1.0 + step, step=step)
        histo = event.summary.value.add(tag="w").histo
        histo.min, histo.max = 0.0, 1.0
        histo.bucket_limit.append(1.0)
        histo.bucket.append(step)
        series.add_record("r", event.SerializeToString())
    steps = [p.step for p in series.histograms["w"]["r"]]
    assert HISTOGRAMS_KEPT <= len(steps) <= 2 * HISTOGRAMS_KEPT
    assert steps[-1] == 5 * HISTOGRAMS_KEPT - 1 and steps[0] < 5  # the latest, and the start still there
    gaps = {b - a for a, b in zip(steps, steps[1:])}
    assert max(gaps) <= 4  # evenly spread


def test_scalars_of_tf1_events_and_what_is_not_an_event():
    series = LogSeries()
    for data in (file_version(), simple(1, 10.0, loss=2.0), simple(2, 11.0, loss=1.0, acc=0.5)):
        series.add_record("run", data)
    assert series.add_record("run", b"\x2a\x05junk!") == 0
    assert series.not_events == 1
    assert series.scalars["loss"]["run"].values == [2.0, 1.0]
    assert series.started == {"run": 10.0}
    assert [json.dumps(p) for p in series.shown_points(["acc"], ["run"])] == ['["run", "acc", 2, 11.0, 0.5]']


def test_points_of_a_log_folder_opened_as_one_set_name_their_runs():
    from codec.datasets.payload_choice import choose_for
    from codec.ops.scalar_series import EventPoints, log_points_iter
    from codec.sources.open import open_paths

    opened = open_paths([str(LOGS)], lambda *_: choose_for([str(LOGS)]))
    with opened.source as source:
        source.build_index()
        series = LogSeries()
        batches = list(log_points_iter(source, EventPoints(), every=7))
        for batch in batches:
            series.merge(batch.found)
    assert batches[-1].fraction == 1.0 and batches[-1].records == 100 and len(batches) > 2
    assert [(p.run, p.tag, p.step, p.value) for p in series.points] == \
           [(p.run, p.tag, p.step, p.value) for p in fixture_series().points]


def test_a_long_line_is_thinned_to_what_shapes_it():
    import numpy as np

    from codec.ops.scalar_series import thinned

    xs = list(range(10_000))
    ys = [((i * 7919) % 1000) / 10 for i in xs]  # jagged
    assert thinned(xs[:200], ys[:200], 0, 200, 100) is None  # few enough: all drawn
    kept = thinned(xs, ys, 0, 10_000, 100)
    assert len(kept) <= 2 * 102 and list(kept) == sorted(kept)
    y, kept = np.asarray(ys), np.asarray(kept)
    for column in range(100):  # each column's lowest and highest values are kept
        values = y[column * 100:(column + 1) * 100]
        drawn = y[kept[(kept >= column * 100) & (kept < (column + 1) * 100)]]
        assert drawn.min() == values.min() and drawn.max() == values.max()
    zoomed = thinned(xs, ys, 5_000, 5_100, 1000)  # zoomed in: the view's points and the nearest on each side
    assert zoomed is not None and zoomed.tolist() == list(range(4_999, 5_102))
    assert thinned(xs, [float("nan")] * 10_000, 0, 10_000, 100).size == 0
