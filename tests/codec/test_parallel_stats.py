"""``stats`` on a process pool: shards and record ranges of one file give the single process's report, byte for byte."""
from __future__ import annotations

import gzip
import json
import multiprocessing
import os
from collections import Counter
from pathlib import Path

import pytest

from codec import TFRecordFile, write_records
from codec.cli.main import main
from codec.parallel.pool import run_tasks
from codec.stats.pool import MIN_RANGE, StatsRunner, StatsTask, plan_stats

from .test_query import example

SHARDS = str(Path(__file__).parent.parent / "fixtures" / "shards")


def _stats(capsys, *argv: str) -> tuple[int, str]:
    code = main(["stats", "--json", *argv])
    out = capsys.readouterr().out
    json.loads(out)
    return code, out


def _big_file(tmp_path) -> Path:
    """Enough records for ranges, one of them damaged (data CRC) in the second half."""
    records = [example(label=[k % 7], score=[k / 3.0 - 100.0], name=[f"n{k % 50}"]) for k in range(3 * MIN_RANGE)]
    path = tmp_path / "big.tfrecord"
    write_records(str(path), records)
    with TFRecordFile(path) as f:
        f.build_index()
        offset = f.index.offset(2 * MIN_RANGE + 5)
    data = bytearray(path.read_bytes())
    data[offset + 12 + 3] ^= 0x40  # a byte of the record's data: its data CRC fails
    path.write_bytes(bytes(data))
    return path


@pytest.mark.slow
def test_shard_folder_on_two_workers_equals_one(capsys):
    one = _stats(capsys, SHARDS, "--workers", "1")
    two = _stats(capsys, SHARDS, "--workers", "2")
    assert one == two and one[0] == 0
    assert json.loads(one[1])["records"] == 100
    # The filter runs in the workers on the set's record numbers, not each shard's own.
    where = ("--where", "index >= 30 and shard != 2")
    one = _stats(capsys, SHARDS, "--workers", "1", *where)
    two = _stats(capsys, SHARDS, "--workers", "2", *where)
    assert one == two
    report = json.loads(two[1])
    assert report["records"] == 45 and report["where"] == "index >= 30 and shard != 2"
    assert multiprocessing.active_children() == []


@pytest.mark.slow
def test_record_ranges_of_one_file_with_damage_and_a_filter(tmp_path, capsys):
    path = str(_big_file(tmp_path))
    one = _stats(capsys, path, "--workers", "1")
    two = _stats(capsys, path, "--workers", "2")
    assert one == two and one[0] == 1  # the damaged record is a problem in both
    report = json.loads(one[1])
    assert report["damaged_records"] == 1 and report["records"] == 3 * MIN_RANGE - 1
    expected = Counter(k % 7 for k in range(3 * MIN_RANGE) if k != 2 * MIN_RANGE + 5)
    assert dict(report["features"]["label"]["top"]) == expected
    where = ("--where", "label == 3 or name == 'n7'")
    assert _stats(capsys, path, "--workers", "1", *where) == _stats(capsys, path, "--workers", "2", *where)


def test_plan_splits_plain_files_only(tmp_path):
    path = _big_file(tmp_path)
    with TFRecordFile(path) as f:
        f.build_index()
        tasks = plan_stats(f, 2)
        assert plan_stats(f, 1) == [] and plan_stats(f, None) == []  # small: one process by default
    assert [(t.start, t.stop) for t in tasks] == [(0, MIN_RANGE), (MIN_RANGE, 2 * MIN_RANGE),
                                                  (2 * MIN_RANGE, 3 * MIN_RANGE)]
    packed = tmp_path / "big.tfrecord.gz"
    packed.write_bytes(gzip.compress(Path(path).read_bytes()))
    with TFRecordFile(packed, check_crc=False) as f:
        f.build_index()
        assert plan_stats(f, 2) == []  # a compressed file is read in order, by one process


def test_runner_in_process_reports_progress_and_missing_files(tmp_path):
    path = str(_big_file(tmp_path))
    setup = {"named": [path]}
    items = list(run_tasks([StatsTask(path, None, 0, 5000), StatsTask(str(tmp_path / "gone.tfrecord"))],
                           StatsRunner, setup, 1))
    done, part, _, missing = items
    assert done == 5000 and part.result.records == 5000 and part.error is None
    assert missing.result is None and "gone.tfrecord" in missing.error


@pytest.mark.parametrize("workers", ["0", "1"])
def test_one_worker_is_todays_path(capsys, workers):
    code, out = _stats(capsys, SHARDS, "--workers", workers)
    assert code == 0 and json.loads(out)["features"]["shard"]["top"] == [[0, 25], [1, 25], [2, 25], [3, 25]]


class _Dying:
    """A pool runner whose process dies on its task (as when the OOM killer takes a worker)."""

    def __init__(self) -> None:
        pass

    def run(self, task, progress):
        os._exit(3)


def test_a_worker_that_dies_is_an_error_not_a_hang():
    from codec.parallel.pool import WorkerLostError, run_tasks

    with pytest.raises(WorkerLostError, match="ended unexpectedly"):
        for _ in run_tasks([1, 2], _Dying, {}, workers=2):
            pass
    assert multiprocessing.active_children() == []  # the other worker is stopped too
