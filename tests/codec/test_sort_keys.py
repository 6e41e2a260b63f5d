"""The sort's keys and order (codec.stats.sort_keys): first values, empty last both ways, stable
ties, exact ints, bytes as bytes, damaged records, shard sets and the pool's ranges."""
from __future__ import annotations

import glob
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from codec import TFRecordFile
from codec.parallel.pool import run_tasks
from codec.sources.shard_set import ShardSet
from codec.stats import sort_keys
from codec.stats.sort_keys import SortKey, SortOrder, order_from_keys, sort_iter
from codec.storage.writer import write_records
from tests.builders import example, fixture_path, sequence_example

from .test_parallel_stats import _big_file

SHARDS = sorted(glob.glob(str(Path(__file__).parent.parent / "fixtures" / "shards" / "*.tfrecord")))


def in_process(tasks, factory, setup, workers):
    """The pool's tasks run here (what the workers run, without starting processes)."""
    return run_tasks(tasks, factory, setup, 1)


def sort(source, key: SortKey, **options) -> SortOrder:
    into: list[SortOrder] = []
    progress = list(sort_iter(source, key, into, **options))
    assert progress[-1].done and len(into) == 1
    return into[0]


def ordered(path, key: SortKey, **options) -> tuple[list[int], SortOrder]:
    with TFRecordFile(path) as f:
        f.build_index()
        order = sort(f, key, **options)
    return order.order.tolist(), order


def stable(keys: dict[int, object]) -> list[int]:
    """Records with a key by key (ties in record order), then those without, in record order."""
    have = sorted((k for k in keys if keys[k] is not None), key=lambda k: keys[k])
    return have + [k for k in sorted(keys) if keys[k] is None]


def test_multi_valued_features_sort_by_their_first_value_and_empty_ones_last_both_ways(tmp_path):
    labels = [[3, 1], [], [1], None, [-5], [3], [1, 9], [], [2**62]]
    path = tmp_path / "f.tfrecord"
    write_records(str(path), [example(label=v) if v is not None else example(other=[1]) for v in labels])
    keys = {k: (v[0] if v else None) for k, v in enumerate(labels)}
    got, order = ordered(path, SortKey("feature", "label"))
    assert got == stable(keys) == [4, 2, 6, 0, 5, 8, 1, 3, 7]
    assert order.empty == 3 and order.order.dtype == np.uint32
    back = order.reversed()
    assert back.order.tolist() == [8, 0, 5, 2, 6, 4, 1, 3, 7]  # ties (0, 5), (2, 6) in record order; empty last
    assert back.descending and back.reversed().order.tolist() == got


def test_ints_sort_exactly_where_float64_would_tie(tmp_path):
    big = 2**62 + 2**10
    values = [big + 1, big, big - 1, -(2**63), 2**63 - 1, big]  # float64 cannot tell big +/- 1 apart
    path = tmp_path / "i.tfrecord"
    write_records(str(path), [example(n=[v]) for v in values])
    got, order = ordered(path, SortKey("feature", "n"))
    assert got == [3, 2, 1, 5, 0, 4]
    assert order.reversed().order.tolist() == [4, 0, 1, 5, 2, 3]  # the equal pair (1, 5) stays in order


def test_uint64_int64_and_floats_compare_as_numbers_before_bytes_and_empty():
    k = sort_keys
    cls = np.array([k.UINT, k.INT, k.FLOAT, k.BYTES, k.EMPTY, k.INT, k.UINT, k.FLOAT, k.FLOAT], dtype=np.uint8)
    bits = np.array([2**64 - 1, (-3) & (2**64 - 1), 0, 0, 0, 2**63 - 1, 2**63, 0, 0], dtype=np.uint64)
    bits[2] = np.float64(-2.5).view(np.uint64)
    bits[7] = np.float64(np.nan).view(np.uint64)
    bits[8] = np.float64(1e300).view(np.uint64)
    order = order_from_keys(cls, bits, np.array([3]), np.array([b"a"]), np.array([1]))
    # -3, -2.5, 2^63-1, 2^63, 2^64-1, 1e300, NaN (after every number), then bytes, then the empty one
    assert order.order.tolist() == [1, 2, 5, 6, 0, 8, 7, 3, 4]
    assert order.empty == 1


def test_bytes_sort_byte_by_byte_a_prefix_first(tmp_path):
    names = [b"b", b"a\x00", b"a", b"ab", b"\xff", b"", b"a"]
    path = tmp_path / "b.tfrecord"
    write_records(str(path), [example(name=[v]) for v in names])
    got, order = ordered(path, SortKey("feature", "name"))
    assert got == sorted(range(len(names)), key=lambda k: names[k]) == [5, 2, 6, 1, 3, 0, 4]
    assert order.reversed().order.tolist() == [4, 0, 3, 1, 2, 6, 5]


def test_long_bytes_compare_on_their_first_key_bytes_then_tie(tmp_path):
    head = b"x" * sort_keys.KEY_BYTES
    names = [head + b"b", head + b"a", head, b"x"]
    path = tmp_path / "long.tfrecord"
    write_records(str(path), [example(name=[v]) for v in names])
    got, _ = ordered(path, SortKey("feature", "name"))
    assert got == [3, 2, 0, 1]  # a prefix first; past KEY_BYTES bytes the two agree: record order


def test_size_kind_and_a_sequence_examples_features(tmp_path):
    records = [example(a=[1]), sequence_example({"c": [5]}, {"steps": [[1], [2], [3]]}), b"\x00raw", example(),
               sequence_example({"c": [2]}, {"steps": [[1]]})]
    path = tmp_path / "kinds.tfrecord"
    write_records(str(path), records)
    got, _ = ordered(path, SortKey("size"))
    assert got == sorted(range(len(records)), key=lambda k: len(records[k]))
    got, _ = ordered(path, SortKey("kind"))
    assert got == [0, 3, 1, 4, 2]  # Examples, SequenceExamples, then raw
    assert ordered(path, SortKey("feature", "c"))[0] == [4, 1, 0, 2, 3]  # the context's feature
    assert ordered(path, SortKey("feature", "steps"))[0] == [4, 1, 0, 2, 3]  # a feature list: by its steps


def test_damaged_records_sort_by_status_and_count_as_empty_for_features():
    with TFRecordFile(fixture_path("corrupt_data_crc.tfrecord")) as f:
        f.build_index()
        n = len(f)
        by_id = sort(f, SortKey("feature", "id"))  # the pass finds the damage
        damaged = [i for i in range(n) if f.index.status(i).damaged]
        assert damaged and 0 < by_id.empty < n
        assert by_id.order[n - by_id.empty:].tolist() == \
            [i for i in range(n) if i in damaged or "id" not in _features(f, i)]
        by_status = sort(f, SortKey("status")).order.tolist()
        assert by_status == [i for i in range(n) if i not in damaged] + damaged
        assert sort(f, SortKey("number")).order.tolist() == list(range(n))


def _features(f, i: int) -> set[str]:
    from codec.decode.decoder import decode_record, feature_keys

    return set(feature_keys(decode_record(f.read(i).data)))


def test_a_shard_set_sorts_as_one_on_the_pool_tasks_and_here():
    shards = ShardSet(SHARDS).build_index()
    n = len(shards)
    here = sort(shards, SortKey("feature", "shard"), workers=1)
    pooled = sort(shards, SortKey("feature", "shard"), workers=2, run=in_process)
    assert pooled.order.tolist() == here.order.tolist()
    from codec.decode.decoder import decode_record, record_features

    firsts = [record_features(decode_record(shards.read(i).data))["shard"].int64_list.value[0] for i in range(n)]
    assert here.order.tolist() == sorted(range(n), key=lambda i: firsts[i])
    assert here.reversed().order.tolist() == sorted(range(n), key=lambda i: -firsts[i])


def test_record_ranges_of_one_file_on_the_pool_tasks_match_one_process(tmp_path):
    path = _big_file(tmp_path)  # one record's data CRC fails
    for key in (SortKey("feature", "score"), SortKey("feature", "name"), SortKey("size")):
        with TFRecordFile(path) as f:
            f.build_index()
            here = sort(f, key, workers=1)
        with TFRecordFile(path) as f:
            f.build_index()
            pooled = sort(f, key, workers=2, run=in_process)
            assert f.problems  # the damage a task found is this file's, as after a pass here
        assert pooled.order.tolist() == here.order.tolist()
        assert np.array_equal(pooled.starts, here.starts) and pooled.empty == here.empty
    assert here.empty == 0 and pooled.empty == 0  # (size: a damaged record has one)


@pytest.mark.slow
def test_on_two_worker_processes(tmp_path):
    path = _big_file(tmp_path)
    with TFRecordFile(path) as f:
        f.build_index()
        here = sort(f, SortKey("feature", "label"), workers=1)
    with TFRecordFile(path) as f:
        f.build_index()
        pooled = sort(f, SortKey("feature", "label"), workers=2)
    assert pooled.order.tolist() == here.order.tolist() and here.empty == 1  # the damaged record
    assert multiprocessing.active_children() == []


def test_no_records_or_no_keys_reverse_to_themselves():
    for cls in (np.zeros(0, np.uint8), np.full(3, sort_keys.EMPTY, np.uint8)):
        order = order_from_keys(cls, np.zeros(cls.shape[0], np.uint64))
        back = order.reversed()
        assert back.order.tolist() == order.order.tolist() == list(range(cls.shape[0])) and back.descending


def test_the_order_is_uint64_only_past_uint32():
    from codec.stats.sort_keys import _index_dtype

    assert _index_dtype(2**32 - 1) == np.uint32 and _index_dtype(2**32) == np.uint64


def _labelled(path) -> list[int]:
    labels = [(k * 7) % 5 for k in range(30)]
    write_records(str(path), [example(label=[v]) for v in labels])
    return sorted(range(30), key=lambda k: labels[k])


def test_edited_records_sort_as_the_table_shows_them(tmp_path):
    from codec.editing.document import Document
    from codec.editing.edited import EditedFile

    expected = _labelled(tmp_path / "e.tfrecord")
    with TFRecordFile(tmp_path / "e.tfrecord") as f:
        f.build_index()
        doc = Document(f)
        doc.replace(expected[0], example(label=[100]))  # the smallest becomes the largest
        doc.delete([29])
        edited = EditedFile(doc)
        got = sort(edited, SortKey("feature", "label")).order.tolist()
    kept = [k for k in expected[1:] if k != 29]
    assert got == kept + [expected[0]]


@pytest.mark.network
def test_a_url_sorts_as_the_local_file(tmp_path):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    expected = _labelled(tmp_path / "r.tfrecord")
    with range_server(tmp_path) as srv:
        with TFRecordFile(srv.url_for("r.tfrecord"), use_cache=False) as remote:
            remote.build_index()
            assert remote.is_remote
            assert sort(remote, SortKey("feature", "label"), workers=2).order.tolist() == expected


def test_ints_and_whole_floats_past_2_53_compare_exactly_and_nans_tie(tmp_path):
    """float32 2^60 is a whole number; int 2^60 - 1 rounds to it as float64 but is smaller."""
    values = [[2.0**60], [2**60 - 1], [2**60], [float("nan")], [1.0], [1], [float("nan")]]
    path = tmp_path / "mixed.tfrecord"
    write_records(str(path), [example(x=v) for v in values])
    got, order = ordered(path, SortKey("feature", "x"))
    assert got == [4, 5, 1, 0, 2, 3, 6]  # 1.0 ties with 1, 2^60 (float) with 2^60 (int): file order; NaN last
    assert order.reversed().order.tolist() == [3, 6, 0, 2, 1, 4, 5]  # NaN is above every number; ties in file order
