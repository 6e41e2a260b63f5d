"""Shard sets: several files read as one, lazily, with bounded open files."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from codec import TFRecordFile, write_records
from codec.cli.main import main
from codec.format.names import shard_pattern
from codec.ops.export import export
from codec.query.filter import compile_filter, matching_indices
from codec.sources.shard_set import ShardSet
from codec.stats.file_stats import compute_stats
from codec.storage.listing import looks_like_shard_set
from tests.builders import MANIFEST, fixture_path

SHARDS = [f"shards/train-0000{k}-of-00004.tfrecord" for k in range(4)]


def expected_records() -> list[str]:
    return [r["sha256"] for name in SHARDS for r in MANIFEST[name]["records"]]


def write_shards(folder, n: int, records, gzip_every: int = 0) -> list[str]:
    """``n`` shards ``part-0000k-of-0000n.tfrecord``; shard k holds ``records(k)``; every
    ``gzip_every``-th is GZIP."""
    paths = []
    for k in range(n):
        path = folder / f"part-{k:05d}-of-{n:05d}.tfrecord"
        write_records(path, records(k), "gzip" if gzip_every and k % gzip_every == 0 else "none")
        paths.append(os.fspath(path))
    return paths


def test_records_are_numbered_across_shards_in_order():
    with ShardSet([fixture_path(n) for n in SHARDS]) as s:
        s.build_index()
        assert len(s) == 100 and s.indexed_shards == 4
        assert [hashlib.sha256(r).hexdigest() for r in s] == expected_records()
        assert s.shard_of(24) == 0 and s.shard_of(25) == 1
        assert s.read(25).info.offset == 0 and s.read(25).info.index == 25


def test_opening_reads_nothing_and_indexing_is_in_order():
    s = ShardSet([fixture_path(n) for n in SHARDS])
    assert s.open_files == 0 and len(s) == 0
    seen = []
    for p in s.index_iter():
        seen.append(p.records)
    assert seen == sorted(seen) and seen[-1] == 100 and s.indexed
    s.close()


def test_a_shard_asked_for_is_indexed_next_and_joins_the_numbering_at_its_place(tmp_path):
    paths = write_shards(tmp_path, 5, lambda k: [b"%d-%d" % (k, i) for i in range(k + 1)])  # k + 1 records
    s = ShardSet(paths)
    passes = s.index_iter()
    next(passes)
    while s.indexed_shards < 1:  # shard 0 first, as nothing was asked for
        next(passes)
    assert s.numbered_shards() == [0] and len(s) == 1
    s.prioritize(3)
    while s.indexed_shards < 2:
        next(passes)
    assert s.numbered_shards() == [0, 3] and not s.is_numbered(1)
    assert len(s) == 5 and [s[i] for i in range(5)] == [b"0-0", b"3-0", b"3-1", b"3-2", b"3-3"]
    assert s.record_start(3) == 1 and s.shard_of(4) == 3
    for _ in passes:
        pass
    assert s.indexed and s.numbered_shards() == [0, 1, 2, 3, 4]
    assert [s[i] for i in range(len(s))] == [b"%d-%d" % (k, i) for k in range(5) for i in range(k + 1)]
    assert s.record_start(3) == 6  # final numbers once every shard before is indexed
    # Each shard was published with the place it took at the time: replaying them rebuilds the order.
    assert s.insertions == [(0, 1), (1, 4), (1, 2), (3, 3), (10, 5)]
    s.close()


def test_without_publish_the_numbering_waits_for_the_consumer(tmp_path):
    s = ShardSet(write_shards(tmp_path, 3, lambda k: [b"%d" % k] * 2))
    s.prioritize(2)
    progress = list(s.index_iter(publish=False))
    assert progress[-1].done and progress[-1].records == 6
    assert len(s) == 0 and not s.indexed  # indexed, but nothing numbered yet
    assert s.publish() == [(0, 2), (0, 2), (2, 2)]  # shard 2 first, then 0 before it, then 1 between
    assert s.indexed and [s[i] for i in range(6)] == [b"0", b"0", b"1", b"1", b"2", b"2"]
    assert s.publish() == []
    s.close()


def test_at_most_max_open_files_are_held(tmp_path):
    paths = write_shards(tmp_path, 30, lambda k: [b"%d-%d" % (k, i) for i in range(5)], gzip_every=3)
    with ShardSet(paths, max_open=4) as s:
        s.build_index()
        assert s.open_files <= 4
        for i in [149, 0, 77, 3, 120, 64, 149]:  # random access reopens released shards
            k, j = divmod(i, 5)
            assert s[i] == b"%d-%d" % (k, j)
            assert s.open_files <= 4


def test_reads_from_another_thread_while_indexing_stay_within_max_open(tmp_path):
    # The GUI reads rows while a worker indexes: a shard in use by a read must
    # never be released under it (it would reopen uncounted), and the count of
    # open files must never pass max_open.
    import random
    import threading
    paths = write_shards(tmp_path, 60, lambda k: [b"%d-%d" % (k, i) for i in range(5)], gzip_every=4)
    s = ShardSet(paths, max_open=3)
    peak, wrong, stop = [0], [], threading.Event()

    def reader():
        rng = random.Random(7)
        while not stop.is_set():
            n = len(s)
            if n:
                i = rng.randrange(n)
                if s[i] != b"%d-%d" % divmod(i, 5):
                    wrong.append(i)
            peak[0] = max(peak[0], s.open_files)

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in s.index_iter():
            peak[0] = max(peak[0], s.open_files)
    finally:
        stop.set()
        t.join()
    assert len(s) == 300 and not wrong
    assert 1 <= peak[0] <= 3 and s.open_files <= 3
    s.close()


def test_verify_stats_filter_and_export_across_the_set(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(fixture_path("structured.tfrecord"), folder / "a.tfrecord")
    shutil.copy(fixture_path("corrupt_data_crc.tfrecord"), folder / "b.tfrecord")
    shutil.copy(fixture_path("structured.tfrecord.gz"), folder / "c.tfrecord.gz")
    with ShardSet.from_args([os.fspath(folder)]) as s:
        s.verify()
        assert len(s) == 230
        (problem,) = s.problems
        assert problem.index == 105 and problem.path.endswith("b.tfrecord") and problem.offset == 350
        stats = compute_stats(s).to_json()
        assert stats["features"]["int_col"]["present"] == 200 and stats["damaged_records"] == 1
        hits = matching_indices(s, compile_filter("int_col == 7"))
        assert list(hits) == [7, 137]
        out = tmp_path / "subset.tfrecord"
        export(s, str(out), "tfrecord", list(hits))
        with TFRecordFile(out) as g:
            assert list(g.build_index()) == [s[7], s[137]]


def test_unusable_shard_is_skipped_and_named(tmp_path):
    shutil.copy(fixture_path("structured.tfrecord"), tmp_path / "good.tfrecord")
    shutil.copy(fixture_path("not_a_tfrecord.jpg"), tmp_path / "bad.tfrecord")
    with ShardSet([os.fspath(tmp_path / "bad.tfrecord"), os.fspath(tmp_path / "good.tfrecord")]) as s:
        s.build_index()
        assert len(s) == 100
        ((path, reason),) = s.unusable
        assert path.endswith("bad.tfrecord") and "not a TFRecord file" in reason


def test_pattern_helpers():
    assert shard_pattern("/d/train-00003-of-01024.tfrecord") == "/d/train-*-of-01024.tfrecord"
    assert looks_like_shard_set(["a", "b"]) and not looks_like_shard_set([fixture_path(SHARDS[0])])
    assert looks_like_shard_set([fixture_path("shards/train-*-of-00004.tfrecord")])


def test_cli_reads_a_glob_as_one_dataset(capsys):
    code = main(["cat", "--json", "--range", "24:26", fixture_path("shards/train-*-of-00004.tfrecord")])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and [x["index"] for x in lines] == [24, 25]
    assert lines[1]["value"] == MANIFEST[SHARDS[1]]["records"][0]["json"]
    code = main(["info", fixture_path("shards")])
    out = capsys.readouterr().out
    assert code == 0 and "shards:      4" in out and "records:     100 (100 ok)" in out


@pytest.mark.parametrize("name", ["structured.tfrecord"])
def test_a_released_file_refuses_to_read_after_it_changed(tmp_path, name):
    path = tmp_path / name
    shutil.copy(fixture_path(name), path)
    f = TFRecordFile(path)
    f.build_index()
    assert f.release() and not f.is_open
    assert f[3] == f[3] and f.is_open  # reopened on demand
    f.release()
    with open(path, "ab") as out:
        out.write(b"more")
    with pytest.raises(OSError, match="changed on disk"):
        f[3]
    f.close()
