"""A filter pass hands its matches over as it finds them: in record order, every one, the same as ``filter_iter``."""
from __future__ import annotations

from array import array

import numpy as np

from codec import TFRecordFile, write_records
from codec.parallel.pool import run_tasks
from codec.query.filter import MatchStream, compile_filter, matching_indices, streamed
from codec.sources.shard_set import ShardSet
from codec.stats.filter_pool import filter_tasks, finer, pool_filter_iter, pooled_filter_iter
from codec.stats.pool import MIN_RANGE

from .test_filter_pool import _setup
from .test_parallel_stats import SHARDS, _big_file
from .test_query import example

WHERE = "label == 3 or index < 10 or name == 'n7'"


def _batches(steps, stream: MatchStream, matches: array, expected: array) -> list[np.ndarray]:
    """Run ``steps``, taking the stream's new matches at every step; each time, what came so far
    is exactly the prefix of ``matches`` the pass has appended, and holds every match before ``through``."""
    batches = []
    for _ in steps:
        batch = stream.take()
        if batch.size:
            batches.append(batch)
        so_far = np.concatenate(batches) if batches else np.zeros(0, dtype=np.int64)
        assert so_far.tolist() == matches[:len(so_far)].tolist()
        assert so_far.tolist()[:len([m for m in expected if m < stream.through])] == \
            [m for m in expected if m < stream.through]
    last = stream.take()
    if last.size:
        batches.append(last)
    return batches


def _check(batches: list[np.ndarray], expected: array) -> None:
    assert all(b.dtype == np.int64 for b in batches)
    joined = np.concatenate(batches)
    assert joined.tolist() == expected.tolist()  # every match, in record order, once
    assert all(b[0] > a[-1] for a, b in zip(batches, batches[1:]))


def test_in_this_process_matches_come_with_each_progress_step(tmp_path):
    path = tmp_path / "wide.tfrecord"  # 3.5 MB: progress every 4,096 records (1 MB reads)
    write_records(str(path), [example(label=[k % 7], name=[f"n{k % 50}"], pad=[b"x" * 300]) for k in range(10000)])
    flt = compile_filter(WHERE)
    with TFRecordFile(path) as f:
        f.build_index()
        expected = matching_indices(f, flt)
        found, stream = array("Q"), MatchStream()
        batches = _batches(pooled_filter_iter(f, flt, found, workers=1, stream=stream), stream, found, expected)
    _check(batches, expected)
    assert len(batches) >= 3 and stream.count == len(expected) and found == expected and stream.through == len(f)


def test_streamed_puts_nothing_for_no_matches(tmp_path):
    path = _big_file(tmp_path)
    with TFRecordFile(path) as f:
        f.build_index()
        found, stream = array("Q"), MatchStream()
        from codec.query.filter import filter_iter

        steps = list(streamed(filter_iter(f, compile_filter("label == 99"), found), found, stream))
    assert steps[-1].done and stream.count == 0 and stream.take().size == 0


def _out_of_order(order: list[int]):
    """A stand-in for the pool whose tasks finish in ``order`` (in this process)."""
    def run(tasks, factory, setup, workers):
        return run_tasks([tasks[k] for k in order], factory, setup, 1)
    return run


def test_pool_tasks_finishing_out_of_order_are_handed_on_as_a_prefix(tmp_path):
    path = _big_file(tmp_path)
    flt = compile_filter(WHERE)
    with TFRecordFile(path) as f:
        f.build_index()
        expected = matching_indices(f, flt)
        tasks = finer(filter_tasks(f, flt, 2), 2)
        assert len(tasks) == 3  # at least MIN_RANGE records each
        found, stream = array("Q"), MatchStream()
        steps = pool_filter_iter(f, flt, found, tasks, _setup(WHERE), 2, run=_out_of_order([1, 0, 2]), stream=stream)
        seen = []  # how many matches had come at each step
        for _ in steps:
            seen.append(stream.count)
            assert stream.through in (0, MIN_RANGE, 2 * MIN_RANGE, 3 * MIN_RANGE)  # task 0 done: 2 waited
        batches = [stream.take()]
    _check(batches, expected)
    assert found == expected
    # task 1 finished first and waited for task 0: nothing was handed on before that
    first_part = sum(1 for m in expected if m < MIN_RANGE)
    assert seen[0] == 0 and first_part < len(expected)
    assert first_part not in seen  # task 0 never came alone: 1 was waiting, both went on together
    assert stream.through == 3 * MIN_RANGE


def test_a_shard_set_on_the_pool_streams_in_order():
    where = "index >= 30 and shard != 2 and idx != 3"
    flt = compile_filter(where)
    with ShardSet.from_args([SHARDS]) as shards:
        shards.build_index()
        expected = matching_indices(shards, flt)
        tasks = filter_tasks(shards, flt, 2)
        assert finer(tasks, 2) == tasks  # shards stay whole
        order = list(range(len(tasks)))[::-1]
        found, stream = array("Q"), MatchStream()
        batches = _batches(pool_filter_iter(shards, flt, found, tasks, _setup(where), 2, run=_out_of_order(order),
                                            stream=stream), stream, found, expected)
    _check(batches, expected)


def test_an_empty_shard_finishing_after_the_shard_behind_it_loses_no_match(tmp_path):
    """An empty shard starts at the same record as the next one: both tasks' results are awaited."""
    paths = []
    for k, n in enumerate([3, 0, 3]):
        paths.append(str(tmp_path / f"data-{k:05d}-of-00003.tfrecord"))
        write_records(paths[-1], [example(v=[k * 10 + i]) for i in range(n)])
    flt = compile_filter("v >= 0")
    with ShardSet(paths) as shards:
        shards.build_index()
        tasks = filter_tasks(shards, flt, 2)
        assert len(tasks) == 3
        found, stream = array("Q"), MatchStream()
        batches = _batches(pool_filter_iter(shards, flt, found, tasks, _setup("v >= 0"), 2, run=_out_of_order([2, 1, 0]),
                                            stream=stream), stream, found, array("Q", range(6)))
    _check(batches, array("Q", range(6)))
    assert found.tolist() == list(range(6))


def test_finer_cuts_one_file_into_more_ranges(tmp_path):
    path = _big_file(tmp_path)
    with TFRecordFile(path) as f:
        f.build_index()
        tasks = filter_tasks(f, compile_filter("label == 3"), 2)
    cut = finer(tasks, 2)
    assert cut[0].start == 0 and cut[-1].stop == len(f) == 3 * MIN_RANGE
    assert all(a.stop == b.start for a, b in zip(cut, cut[1:]))
    assert all(t.stop - t.start >= MIN_RANGE for t in cut)
