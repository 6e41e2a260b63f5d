"""verify on two cores: the forked child, the numpy-free proof for files of large records, and
a pass walked in two halves. Each must give exactly what the one-process reader gives."""
from __future__ import annotations

import json
import os
import random
import sys

import numpy as np
import pytest

from codec.cli.main import main
from codec.format.framing import HEADER_SIZE, encode_record
from codec.index import halves, quick_verify
from codec.parallel import forked
from codec.sources import verification
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records

from .conftest import flip_in_place, record_offset, run_fresh

needs_fork = pytest.mark.skipif(not forked.can_fork(), reason="no fork on this platform")


def big_records(n: int, size: int, seed: int = 5) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(size) for _ in range(n)]


@pytest.fixture(scope="module")
def large_file(tmp_path_factory):
    """40 MB of 100 KB records: over SPLIT_BYTES, so both proofs and passes run in two processes."""
    recs = big_records(400, 100_000)
    path = str(tmp_path_factory.mktemp("large") / "large.tfrecord")
    write_records(path, recs)
    assert os.path.getsize(path) >= quick_verify.SPLIT_BYTES
    return path, recs


def copy_of(path: str, tmp_path, name: str = "copy.tfrecord") -> str:
    target = str(tmp_path / name)
    with open(path, "rb") as src, open(target, "wb") as dst:
        dst.write(src.read())
    return target


def full_reader_report(capsys, path: str, *flags: str) -> tuple[int, str]:
    """What verify prints when the quick proof is not tried (the one-process reader)."""
    saved = quick_verify.intact_records
    quick_verify.intact_records = lambda _path: None
    try:
        code = main(["verify", *flags, path])
    finally:
        quick_verify.intact_records = saved
    return code, capsys.readouterr().out


# -- the forked child ---------------------------------------------------------------------
@needs_fork
def test_a_child_returns_its_result_and_a_failing_one_says_so():
    child = forked.beside(lambda a, b: {"sum": a + b, "array": np.arange(3)}, 2, 3)
    done, result = child.result()
    assert done and result["sum"] == 5 and result["array"].tolist() == [0, 1, 2]

    def boom():
        raise ValueError("no")

    assert forked.beside(boom).result() == (False, None)


@needs_fork
def test_a_cancelled_child_is_gone():
    child = forked.beside(lambda: __import__("time").sleep(60))
    child.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


# -- the quick proof: large records, no numpy ---------------------------------------------
@needs_fork
def test_a_large_clean_file_is_proven_in_two_processes(large_file):
    path, recs = large_file
    assert quick_verify.intact_records(path) == len(recs)


def test_the_proof_prints_exactly_what_the_reader_prints(capsys, large_file):
    path, recs = large_file
    for flags in ([], ["--json"], ["--json", "--max-problems", "2"], ["--max-problems", "1"]):
        code, out = full_reader_report(capsys, path, *flags)
        assert (main(["verify", *flags, path]), capsys.readouterr().out) == (code, out)
        assert code == 0
    assert run_cli_json(capsys, path) == (0, {"path": path, "compression": "none", "records": len(recs),
                                              "ok": len(recs), "problems": []})


def test_verify_of_a_clean_file_of_large_records_imports_no_numpy(large_file):
    path, recs = large_file
    out = run_fresh("import sys; from codec.cli.main import main; main(['verify', %r]); "
                    "print('numpy' in sys.modules, 'codec.sources.tfrecord_file' in sys.modules)" % path)
    assert out.splitlines() == [f"{path}: {len(recs):,} records, {len(recs):,} ok, 0 problem(s) [none]",
                                "False False"]


@pytest.mark.parametrize("where", ["data_first_half", "data_second_half", "length_crc", "data_crc"])
def test_damage_anywhere_declines_the_proof_and_the_reader_reports_it(capsys, tmp_path, large_file, where):
    path = copy_of(large_file[0], tmp_path)
    recs = large_file[1]
    k = {"data_first_half": 10, "data_second_half": 350, "length_crc": 200, "data_crc": 399}[where]
    start = record_offset(recs, k)
    pos = {"length_crc": start + 9, "data_crc": start + HEADER_SIZE + len(recs[k]) + 1}.get(
        where, start + HEADER_SIZE + 5000)
    flip_in_place(path, pos)
    assert quick_verify.intact_records(path) is None
    code, out = run_cli_json(capsys, path)
    assert code == 1
    assert [p["index"] for p in out["problems"]] == [k]
    assert out["records"] == len(recs)


def run_cli_json(capsys, path: str) -> tuple[int, dict]:
    code = main(["verify", "--json", path])
    return code, json.loads(capsys.readouterr().out)


def test_small_records_compressed_files_tails_and_special_files_are_left_to_the_reader(tmp_path):
    small = str(tmp_path / "small.tfrecord")
    write_records(small, big_records(5000, 100))
    assert quick_verify.intact_records(small) is None  # small records: the reader's batches are faster

    few = str(tmp_path / "few.tfrecord")
    write_records(few, big_records(5, 100))
    assert quick_verify.intact_records(few) == 5  # too few records to judge: proven all the same

    gz = str(tmp_path / "large.tfrecord.gz")
    write_records(gz, big_records(5, 50_000), compression="gzip")
    assert quick_verify.intact_records(gz) is None

    tail = str(tmp_path / "tail.tfrecord")
    with open(tail, "wb") as f:
        f.write(b"".join(encode_record(r) for r in big_records(3, 50_000)) + b"\0" * 7)
    assert quick_verify.intact_records(tail) is None

    cut = str(tmp_path / "cut.tfrecord")
    with open(cut, "wb") as f:
        f.write(b"".join(encode_record(r) for r in big_records(3, 50_000))[:-3])
    assert quick_verify.intact_records(cut) is None

    assert quick_verify.intact_records(str(tmp_path)) is None
    assert quick_verify.intact_records(str(tmp_path / "missing")) is None
    if hasattr(os, "mkfifo"):
        fifo = str(tmp_path / "fifo")
        os.mkfifo(fifo)
        assert quick_verify.intact_records(fifo) is None  # not opened for reading: no hang


# -- a pass in two halves -------------------------------------------------------------------
def small_file(tmp_path, n: int = 16_000, name: str = "small.tfrecord") -> tuple[str, list[bytes]]:
    """Records of 1-4 KB: small enough to be checked in windows of many records, few enough to write fast."""
    rng = random.Random(11)
    recs = [rng.randbytes(rng.randint(1000, 4000)) for _ in range(n)]
    path = str(tmp_path / name)
    write_records(path, recs)
    assert os.path.getsize(path) >= halves.SPLIT_BYTES
    return path, recs


def same_pass(a: TFRecordFile, b: TFRecordFile) -> None:
    assert len(a) == len(b)
    assert np.array_equal(a.index.offsets(), b.index.offsets())
    assert np.array_equal(a.index.statuses(), b.index.statuses())
    assert [p.to_json() for p in a.problems] == [p.to_json() for p in b.problems]


@needs_fork
@pytest.mark.parametrize("damage", [None, 100, 15_000])
def test_two_halves_find_what_one_pass_finds(tmp_path, monkeypatch, damage):
    forks = []

    def counted(fn, *args):
        forks.append(fn.__name__)
        return forked.beside(fn, *args)

    monkeypatch.setattr(verification, "beside", counted)
    monkeypatch.setattr(halves, "beside", counted)
    path, recs = small_file(tmp_path)
    if damage is not None:
        flip_in_place(path, record_offset(recs, damage) + HEADER_SIZE + 3)
    for cached_index in (False, True):
        one = TFRecordFile(path, use_cache=False)
        two = TFRecordFile(path, use_cache=False, fork_halves=True)
        if cached_index:  # the index first, then the data CRCs (a cached index is verified like this)
            one.build_index()
            two.build_index()
        one.verify()
        two.verify()
        same_pass(one, two)
        assert [p.index for p in two.problems] == ([] if damage is None else [damage])
    # a verifying index pass; an index pass, then the check of the built index: each forked once
    assert forks == ["_walk_rest", "_walk_rest", "_second_half"]


@pytest.mark.slow
@needs_fork
def test_a_false_guess_at_the_middle_is_caught(tmp_path):
    """Records holding TFRecord files of their own: the header after the middle may be a nested one."""
    inner = b"".join(encode_record(bytes([i]) * 300) for i in range(40))
    rng = random.Random(2)
    recs = [rng.randbytes(rng.randint(0, 50)) + inner for _ in range(3000)]
    path = str(tmp_path / "nested.tfrecord")
    write_records(path, recs)
    size = os.path.getsize(path)
    assert size >= halves.SPLIT_BYTES
    fd = os.open(path, os.O_RDONLY)
    try:
        def read_at(pos, n):
            return os.pread(fd, min(n, size - pos), pos)

        guess = halves.sync_point(read_at, size, size // 2)
        starts = {record_offset(recs, i) for i in range(len(recs))}
        assert guess is not None and guess not in starts  # the guess is a nested header ...
        assert halves.scan_halves(read_at, size, True) is None  # ... and is refused
    finally:
        os.close(fd)
    one = TFRecordFile(path, use_cache=False)
    two = TFRecordFile(path, use_cache=False, fork_halves=True)
    one.verify()
    two.verify()
    same_pass(one, two)
    assert len(two) == len(recs) and not two.problems


def test_files_below_the_split_size_are_walked_in_one_process(tmp_path):
    path = str(tmp_path / "tiny.tfrecord")
    write_records(path, big_records(100, 1000))
    assert halves.scan_halves(lambda pos, n: b"", os.path.getsize(path), True) is None
    f = TFRecordFile(path, use_cache=False, fork_halves=True)
    f.verify()
    assert len(f) == 100 and not f.problems


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_cli_verify_uses_two_halves_and_reports_like_one_pass(capsys, tmp_path):
    path, recs = small_file(tmp_path)
    flip_in_place(path, record_offset(recs, 12_345) + HEADER_SIZE + 1)
    code, report = run_cli_json(capsys, path)
    assert code == 1 and report["ok"] == len(recs) - 1
    assert [p["index"] for p in report["problems"]] == [12_345]
    code, again = run_cli_json(capsys, path)  # the second run verifies the cached index in halves
    assert (code, again) == (1, report)
