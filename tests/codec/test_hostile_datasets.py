"""Hostile datasets: a planted cache link, huge TFDS metadata, a folder of thousands of shards,
Beam against the local run, and Ctrl-C (issue 24, items 8, 9, 10, 13 and 14)."""
from __future__ import annotations

import os
import stat

import pytest

from codec import TFRecordFile, write_records
from codec.index import cache as index_cache
from codec.storage.file_identity import FileIdentity

EXAMPLE = b"\n\x0c\n\n\n\x01x\x12\x05\x1a\x03\n\x01\x07"  # an Example: x = [7]


@pytest.fixture(autouse=True)
def _fresh_folder_verdicts(monkeypatch):
    monkeypatch.setattr(index_cache, "_folders", {})


def _cached_file(path, n=40):
    write_records(path, [bytes([i % 251]) * 100 for i in range(n)])
    return os.fspath(path)


@pytest.fixture
def cached_everything(monkeypatch):
    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)


# -- the index cache -----------------------------------------------------------------
def test_a_link_planted_at_a_cache_entry_is_replaced_not_followed(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    outside = tmp_path / "victim.txt"
    outside.write_bytes(b"precious")
    entry = index_cache.cache_path(data)
    os.makedirs(os.path.dirname(entry), mode=0o700)
    os.symlink(outside, entry)

    with TFRecordFile(data) as f:
        assert len(f.build_index()) == 40

    assert outside.read_bytes() == b"precious"
    assert stat.S_ISREG(os.lstat(entry).st_mode)  # the link itself was renamed over
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]  # nothing written beside the victim
    assert not [n for n in os.listdir(os.path.dirname(entry)) if n.endswith(".tmp")]
    assert index_cache.load(data, os.path.getsize(data), FileIdentity.of(os.stat(data)).stamp, f.compression) is not None


def test_a_cache_entry_that_is_a_link_is_not_read(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
        compression = f.compression
    entry = index_cache.cache_path(data)
    elsewhere = tmp_path / "entry-elsewhere"
    os.replace(entry, elsewhere)
    os.symlink(elsewhere, entry)
    st = os.stat(data)
    assert index_cache.load(data, st.st_size, FileIdentity.of(st).stamp, compression) is None
    assert index_cache.open_entry(data, st.st_size, FileIdentity.of(st).stamp) is None
    assert not index_cache.has_entry(data, st.st_size, FileIdentity.of(st).stamp, compression)
    os.replace(elsewhere, entry)  # the same bytes as a plain file are read
    assert index_cache.load(data, st.st_size, FileIdentity.of(st).stamp, compression) is not None


def test_a_cache_folder_open_to_others_is_made_private(tmp_path, cached_everything):
    folder = tmp_path / "index-cache"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert os.path.exists(index_cache.cache_path(data))


def test_a_new_cache_folder_is_private(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
    assert stat.S_IMODE(os.stat(tmp_path / "index-cache").st_mode) == 0o700


def test_a_cache_folder_of_another_user_is_not_used(tmp_path, cached_everything, monkeypatch, capsys):
    folder = tmp_path / "index-cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)
    paths = [_cached_file(tmp_path / f"{k}.tfrecord") for k in range(3)]
    for path in paths:
        with TFRecordFile(path) as f:
            assert len(f.build_index()) == 40
    assert os.listdir(folder) == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "index cache not used" in err and "another user" in err


# -- TFDS metadata ---------------------------------------------------------------------
def _tfds_folder(folder, splits: int, shards: int, record: bytes, description: str = "") -> None:
    """``splits`` splits, each with its own ``filepathTemplate``, of ``shards`` one-record shards."""
    import json

    folder.mkdir()
    one = folder.parent / "one.tfrecord"
    write_records(one, [record])
    entries = []
    for k in range(splits):
        entries.append({"name": f"s{k}", "filepathTemplate": "{DATASET}-{SPLIT}-t%d.{FILEFORMAT}-{SHARD_X_OF_Y}" % k,
                        "shardLengths": ["1"] * shards})
        for i in range(shards):
            os.link(one, folder / f"ds-s{k}-t{k}.tfrecord-{i:05d}-of-{shards:05d}")
    (folder / "dataset_info.json").write_text(json.dumps({"name": "ds", "version": "1.0.0", "splits": entries,
                                                                "description": description}))
    x = {"pythonClassName": "tensorflow_datasets.core.features.tensor_feature.Tensor",
         "tensor": {"dtype": "int64", "encoding": "none", "shape": {"dimensions": ["1"]}}}
    (folder / "features.json").write_text(json.dumps({
        "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "featuresDict": {"features": {"x": x}}}))


def test_thousands_of_split_templates_match_each_file_to_its_split(tmp_path):
    from codec.datasets.tfds import TfdsDataset

    folder = tmp_path / "ds"
    _tfds_folder(folder, 600, 3, EXAMPLE)
    (folder / "ds-extra.tfrecord-00000-of-00001").write_bytes(b"")  # an unlisted split, default template
    dataset = TfdsDataset.open(folder)
    assert len(dataset.splits) == 601
    assert [p.name for p in dataset.splits["s417"].files] == [
        f"ds-s417-t417.tfrecord-{i:05d}-of-00003" for i in range(3)]
    assert dataset.splits["s417"].num_examples == 3
    assert [p.name for p in dataset.splits["extra"].files] == ["ds-extra.tfrecord-00000-of-00001"]
    assert dataset.split_of(folder / "ds-s9-t9.tfrecord-00002-of-00003") == "s9"
    assert dataset.split_of(folder / "unrelated.txt") is None


def test_metadata_over_the_cap_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from codec.cli.main import main
    from codec.datasets import tfds

    folder = tmp_path / "ds"
    _tfds_folder(folder, 2, 1, EXAMPLE, description="x" * 2000)
    monkeypatch.setattr(tfds, "MAX_METADATA_BYTES", 1000)  # features.json is under it, dataset_info.json over
    assert main(["info", os.fspath(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dataset_info.json is larger than" in err and "Traceback" not in err


# -- a folder of thousands of one-record shards --------------------------------------
def _many_shards(tmp_path, monkeypatch, n: int):
    """``n`` one-record shards (hard links of one file), with the real cache threshold: none is cached."""
    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 1 << 20)
    folder = tmp_path / "many"
    folder.mkdir()
    one = tmp_path / "one.tfrecord"
    write_records(one, [EXAMPLE])
    for i in range(n):
        os.link(one, folder / f"train-{i:05d}-of-{n:05d}.tfrecord")
    return folder


@pytest.fixture
def many_shards(tmp_path, monkeypatch):
    return _many_shards(tmp_path, monkeypatch, 5000)


def test_a_folder_of_5000_one_record_shards_indexes_in_one_read_each(many_shards):
    from codec.sources.shard_set import MAX_OPEN, ShardSet

    with ShardSet.from_args([os.fspath(many_shards)]) as s:
        s.build_index(verify=True)
        assert len(s) == 5000 and s.indexed and s.verified and not s.problems
        assert s.open_files == 0  # each shard was read whole and closed
        assert sum(s.shards[k].file.index.nbytes for k in range(5000)) <= 5000 * 4 * 9
        assert s[4999] == EXAMPLE and s.location(4999)[1] == 0
        assert all(s[i] == EXAMPLE for i in range(0, 5000, 7))
        assert s.open_files <= MAX_OPEN


def test_a_damaged_small_shard_goes_to_the_full_reader(many_shards):
    from codec.format.framing import ProblemKind
    from codec.sources.shard_set import ShardSet

    damaged = many_shards / "train-00017-of-05000.tfrecord"
    data = bytearray(damaged.read_bytes())
    damaged.unlink()  # (a hard link: the others keep the good bytes)
    data[14] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with ShardSet.from_args([os.fspath(many_shards)]) as s:
        s.build_index(verify=True)
        assert len(s) == 5000
        assert [(p.kind, p.path, p.index) for p in s.problems] == [(ProblemKind.DATA_CRC, os.fspath(damaged), 17)]


def test_statistics_of_many_shards_run_as_a_few_batches_and_match_one_process(tmp_path, monkeypatch):
    from codec.sources.shard_set import ShardSet
    from codec.stats.file_stats import compute_stats
    from codec.stats.pool import StatsBatch, plan_stats, pool_stats

    many_shards = _many_shards(tmp_path, monkeypatch, 800)
    with ShardSet.from_args([os.fspath(many_shards)]) as s:
        s.build_index()
        tasks = plan_stats(s, 2)
        assert len(tasks) == 32 and all(isinstance(t, StatsBatch) for t in tasks)
        assert [t.base for batch in tasks for t in batch.tasks] == list(range(800))
        pooled, problems = pool_stats(s, tasks, {"named": [os.fspath(many_shards)]}, workers=1)
        assert not problems
        assert pooled.to_json() == compute_stats(s).to_json()


# -- Beam against the local run, and Ctrl-C ------------------------------------------------
@pytest.fixture
def with_a_random_shard(tmp_path):
    """Three good shards and a file of random bytes named like the fourth."""
    import random

    folder = tmp_path / "set"
    folder.mkdir()
    for k in range(3):
        write_records(folder / f"part-{k:05d}-of-00004.tfrecord", [EXAMPLE] * (k + 2))
    (folder / "part-00003-of-00004.tfrecord").write_bytes(random.Random(13).randbytes(5000))
    return os.fspath(folder)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["stats", "schema"])
def test_beam_gives_the_local_report_and_exit_code_beside_an_unusable_shard(with_a_random_shard, capsys, command):
    """One direct-runner pipeline each (a few seconds): the promise is the same answer."""
    pytest.importorskip("apache_beam")
    from codec.cli.main import main

    answers = []
    for runner in (["--workers", "1"], ["--workers", "2"],
                   ["--runner", "direct", "--beam-option", "direct_num_workers=1"]):
        code = main([command, *runner, with_a_random_shard])
        out, err = capsys.readouterr()
        answers.append((code, out, err))
    assert [code for code, _, _ in answers] == [1, 1, 1]
    assert answers[0][1] == answers[1][1] == answers[2][1] and answers[0][1]
    for _, _, err in answers:
        assert err.count("\n") == 1 and "skipped" in err and "part-00003-of-00004" in err


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _mapped(pid: int, name: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return name in f.read()
    except OSError:
        return False


def _interrupted(argv: list[str], underway) -> tuple[int, str]:
    """Run the command line in its own process group; once ``underway(pid)``, Ctrl-C the group."""
    import signal
    import subprocess
    import sys
    import time

    from .conftest import ROOT

    env = dict(os.environ, PYTHONPATH=os.fspath(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "codec.cli.main", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while not underway(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the condition, not waiting a fixed time
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.stderr.read().decode(errors="replace")
        return proc.wait(timeout=60), err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def busy_set(tmp_path):
    """Two shards of 300,000 small Examples each: seconds of statistics."""
    from codec.format.framing import encode_record

    folder = tmp_path / "busy"
    folder.mkdir()
    for k in range(2):
        (folder / f"part-{k:05d}-of-00002.tfrecord").write_bytes(encode_record(EXAMPLE) * 300_000)
    return os.fspath(folder)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads the process tree from /proc")
def test_ctrl_c_to_the_group_during_pooled_stats_is_exit_130_in_one_line(busy_set):
    """A whole process with two spawned workers (a few seconds)."""
    code, err = _interrupted(["stats", "--workers", "2", busy_set], lambda pid: len(_children(pid)) >= 2)
    assert code == 130 and err == "tfrlens-cli: interrupted\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads the process from /proc")
def test_ctrl_c_during_stats_on_the_direct_runner_is_exit_130_in_one_line(busy_set):
    """A whole process running a Beam pipeline (a few seconds); Ctrl-C once Beam is loaded."""
    pytest.importorskip("apache_beam")
    code, err = _interrupted(["stats", "--runner", "direct", busy_set],
                             lambda pid: _mapped(pid, "apache_beam/runners"))
    assert code == 130 and err == "tfrlens-cli: interrupted\n"
