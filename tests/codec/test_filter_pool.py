"""``--where`` on the process pool: ``export``/``cat`` and the pooled filter give exactly what one process gives."""
from __future__ import annotations

import multiprocessing
from array import array
from pathlib import Path

import pytest

from codec import TFRecordFile
from codec.cli.main import main
from codec.query.filter import compile_filter, matching_indices
from codec.sources.shard_set import ShardSet
from codec.stats.filter_pool import filter_tasks, pool_filter_iter
from codec.stats.pool import MIN_RANGE

from .test_parallel_stats import SHARDS, _big_file

DAMAGED = 2 * MIN_RANGE + 5  # the record _big_file damages


def _setup(where: str) -> dict:
    return {"named": [], "where": where}


def _pooled(source, where: str) -> tuple[array, bool]:
    flt = compile_filter(where)
    tasks = filter_tasks(source, flt, 2)
    assert len(tasks) > 1
    found = array("Q")
    steps = pool_filter_iter(source, flt, found, tasks, _setup(where), 2)
    progress = []
    while True:
        try:
            progress.append(next(steps))
        except StopIteration as stop:
            problems = stop.value
            break
    assert progress[-1].done and progress[-1].records == len(source)
    assert [p.records for p in progress] == sorted(p.records for p in progress)
    return found, problems


@pytest.mark.slow
def test_record_ranges_of_a_damaged_file_match_one_process(tmp_path):
    path = _big_file(tmp_path)
    where = "label == 3 or index < 10 or name == 'n7'"
    with TFRecordFile(path) as f:
        f.build_index()
        expected = matching_indices(f, compile_filter(where))
    with TFRecordFile(path) as f:
        f.build_index()
        assert f.problems == []  # the data CRC failure is not known before a pass reads the record
        found, problems = _pooled(f, where)
        assert found == expected and len(found) > 3 * MIN_RANGE // 7
        assert list(range(10)) == list(found[:10])
        # The record a worker found damaged is now one of this file's problems, as after a pass here.
        assert problems and [p.offset for p in f.problems] == [f.index.offset(DAMAGED)]
        assert f.index.status(DAMAGED).damaged
    assert multiprocessing.active_children() == []


def test_a_shard_set_numbers_records_across_shards():
    where = "index >= 30 and shard != 2 and idx != 3"
    with ShardSet.from_args([SHARDS]) as shards:
        shards.build_index()
        expected = matching_indices(shards, compile_filter(where))
        found, problems = _pooled(shards, where)
    assert found == expected and not problems
    assert 0 < len(found) < 70 and min(found) >= 30


def test_filters_the_index_answers_and_edited_views_stay_in_this_process(tmp_path):
    path = _big_file(tmp_path)
    with TFRecordFile(path) as f:
        f.build_index()
        assert filter_tasks(f, compile_filter("index > 5"), 2) == []  # no record data needed
        assert filter_tasks(f, compile_filter(""), 2) == []
        assert filter_tasks(f, compile_filter("label == 3"), 1) == []
        assert len(filter_tasks(f, compile_filter("label == 3"), 2)) == 3


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_export_and_cat_where_on_two_workers_equal_one(tmp_path, capsys):
    path = str(_big_file(tmp_path))
    where = ("--where", "label == 3 and index > 100")
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.tfrecord"
        code, _ = _run(capsys, "export", path, "--to", str(out), "--workers", workers, *where)
        assert code == 1  # the damaged record is a problem either way
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    with TFRecordFile(tmp_path / "out2.tfrecord") as f:
        f.build_index()
        assert len(f) == sum(1 for k in range(101, 3 * MIN_RANGE) if k % 7 == 3 and k != DAMAGED)
    one = _run(capsys, "cat", "--json", path, "--workers", "1", *where)
    two = _run(capsys, "cat", "--json", path, "--workers", "2", *where)
    assert one == two and one[1].count("\n") == len(f)
    assert multiprocessing.active_children() == []


def test_an_unknown_feature_is_refused_before_any_worker_starts(tmp_path, capsys):
    path = str(_big_file(tmp_path))
    code = main(["export", path, "--to", str(tmp_path / "x.tfrecord"), "--workers", "2", "--where", "lable == 3"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown feature 'lable'" in err and "label" in err
    assert not Path(tmp_path / "x.tfrecord").exists()
