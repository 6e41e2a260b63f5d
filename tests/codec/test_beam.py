"""``verify`` and ``repair`` on Apache Beam's direct runner print what the local commands print.

Each Beam run takes a second or two, so the module runs few pipelines: one
``verify --json`` and one human ``verify`` over a mixed set of inputs (the
shard folder, damaged files, an unreadable file, a generated dataset), one
single damaged file, and one ``repair`` into a folder.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from codec.cli.main import main
from tests.builders import fixture_path

from .conftest import ROOT

pytest.importorskip("apache_beam")

DIRECT = ["--runner", "direct", "--beam-option", "direct_num_workers=1"]
DAMAGED = ["corrupt_data_crc.tfrecord", "garbage_middle.tfrecord", "truncated.tfrecord.gz"]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _generated(folder) -> list[str]:
    """Five shards of Examples of random sizes, one of them with a flipped data byte."""
    from codec.storage.writer import TFRecordWriter
    from tests.builders import example

    rng = random.Random(15)
    paths = []
    for k in range(5):
        path = os.fspath(folder / f"gen-{k:05d}-of-00005.tfrecord")
        with TFRecordWriter(path) as w:
            for i in range(rng.randrange(5, 40)):
                w.write(example(id=k * 1000 + i, blob=rng.randbytes(rng.randrange(0, 300))))
        paths.append(path)
    with open(paths[2], "r+b") as f:  # a data byte of the first record: its data CRC fails
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 0xFF]))
    return paths


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated")
    return [fixture_path("shards"), *map(fixture_path, DAMAGED), fixture_path("not_a_tfrecord.jpg"),
            os.fspath(folder)], _generated(folder)


@pytest.mark.slow
@pytest.mark.parametrize("flags", [["--json"], ["--max-problems", "2"]], ids=["json", "text"])
def test_verify_direct_equals_local(capsys, inputs, flags):
    args, generated = inputs
    local = _run(capsys, ["verify", *flags, *args])
    beam = _run(capsys, ["verify", *flags, *args, *DIRECT])
    assert beam == local
    code, out, err = local
    assert code == 2  # the unreadable file
    assert err.count("not a TFRecord file") == 1
    if flags == ["--json"]:
        reports = [json.loads(line) for line in out.splitlines()]
        assert [r["path"] for r in reports][-5:] == generated
        assert [r["path"] for r in reports][:4] == sorted(
            os.path.join(fixture_path("shards"), name) for name in os.listdir(fixture_path("shards")))
        damaged = {os.path.basename(r["path"]): r for r in reports if r["problems"]}
        assert set(damaged) == {*DAMAGED, "gen-00002-of-00005.tfrecord"}
        assert damaged["gen-00002-of-00005.tfrecord"]["problems"][0]["index"] == 0
        assert damaged["gen-00002-of-00005.tfrecord"]["problems"][0]["problem"] == "data_crc"
    else:
        assert out.splitlines()[-1].endswith(", 1 unusable")


def test_verify_direct_one_damaged_file(capsys, tmp_path):
    path = fixture_path("corrupt_data_crc.tfrecord")
    report = tmp_path / "report.jsonl"
    local = _run(capsys, ["verify", "--json", path])
    # Beam's own options may also follow a lone --, as Beam spells them.
    beam = _run(capsys, ["verify", "--json", path, "--runner", "direct", "--out", os.fspath(report),
                         "--", "--direct_num_workers", "1", "--save_main_session"])
    assert beam == local
    assert local[0] == 1
    assert report.read_text() == local[1]
    assert [p["problem"] for p in json.loads(local[1])["problems"]] == ["data_crc"]


def test_repair_direct_writes_one_shard_per_input(capsys, tmp_path, inputs):
    args, _ = inputs
    args = [a for a in args if not a.endswith(".jpg")]
    local_out, beam_out = tmp_path / "local", tmp_path / "beam"
    code, out, err = _run(capsys, ["repair", "-o", os.fspath(local_out), *args])
    beam = _run(capsys, ["repair", "-o", os.fspath(beam_out), *args, *DIRECT])
    assert beam == (code, out.replace(os.fspath(local_out), os.fspath(beam_out)), err)
    names = sorted(os.listdir(local_out))
    assert sorted(os.listdir(beam_out)) == names  # no temporary file or second copy left
    assert len(names) == 4 + len(DAMAGED) + 5
    for name in names:
        assert (beam_out / name).read_bytes() == (local_out / name).read_bytes()
    assert "dropped 1 (#5 data_crc)" in out


def test_local_out_writes_the_json_report(capsys, tmp_path):
    report = tmp_path / "r.jsonl"
    local = _run(capsys, ["verify", "--json", fixture_path("shards")])
    assert _run(capsys, ["verify", "--json", fixture_path("shards"), "--out", os.fspath(report)]) == local
    assert report.read_text() == local[1]
    assert [json.loads(line)["records"] for line in local[1].splitlines()] == [25, 25, 25, 25]


def test_without_beam_one_line_says_how_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "apache_beam", None)
    code, out, err = _run(capsys, ["verify", "--runner", "direct", fixture_path("shards")])
    assert code == 2 and out == ""
    assert err == "tfrlens-cli: --runner direct needs Apache Beam: pip install 'tfrecord-lens[beam]'\n"


@pytest.mark.parametrize("argv, message", [
    (["--beam-option", "x=1"], "--beam-option needs a Beam --runner"),
    (["--runner", "direct", "--beam-option", "=1"], "bad --beam-option '=1'"),
    (["--runner", "direct", "--beam-option", "runner=DataflowRunner"], "give the runner with --runner"),
    (["--runner", "dataflow"], "temp_location=gs://"),
    (["--runner", "dataflow", "--", "--project=p"], "temp_location=gs://"),
    (["--", "--project=p"], "--beam-option needs a Beam --runner"),
    (["--runner", "direct", "--", "project=p"], "after --, expected Beam pipeline options"),
])
def test_bad_beam_options_are_one_line_usage_errors(capsys, argv, message):
    code, out, err = _run(capsys, ["verify", fixture_path("shards"), *argv])
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_options_after_dashes_become_beam_options():
    from codec.cli.beam import options_after_dashes

    assert options_after_dashes(["--project=p", "--num_workers", "10", "--save_main_session", "--region", "r"]) == [
        "project=p", "num_workers=10", "save_main_session", "region=r"]


def test_beam_flags_pass_options_through():
    from codec.beam.options import RUNNERS, beam_flags
    from codec.cli.beam import RUNNERS as CLI_RUNNERS

    assert CLI_RUNNERS == RUNNERS
    assert beam_flags("dataflow", ["project=p", "region=europe-west1", "temp_location=gs://b/t",
                                   "save_main_session"]) == [
        "--runner=DataflowRunner", "--project=p", "--region=europe-west1", "--temp_location=gs://b/t",
        "--save_main_session"]


def test_help_does_not_import_beam():
    code = ("import sys\nfrom codec.cli.main import main\n"
            "for argv in (['--help'], ['verify', '--help'], ['repair', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "sys.stderr.write(str(sorted(m for m in sys.modules if m.startswith('apache_beam'))))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stderr == "[]"
    assert "--runner {local,direct,prism,dataflow,flink,spark}" in done.stdout


@pytest.mark.slow
def test_check_tasks_on_beam_equal_the_pool(monkeypatch):
    """The doctor's tasks run on the direct runner through the stand-in for codec.parallel.pool.run_tasks."""
    import codec.doctor.pool as pool
    from codec.beam.parallel import task_runner
    from codec.doctor import CheckOptions, run_check

    options = CheckOptions(workers=1)
    local = run_check([fixture_path("doctor")], options).to_json()
    monkeypatch.setattr(pool, "_run_tasks", task_runner("direct", ["direct_num_workers=1"]))
    assert run_check([fixture_path("doctor")], options).to_json() == local
    assert local["records"] == 150
    assert {f["check"] for f in local["findings"]} >= {"exact_duplicate", "split_leak"}


def test_other_commands_get_a_task_runner():
    import argparse

    from codec.cli.beam import add_runner_arguments

    seen = []
    parser = argparse.ArgumentParser()
    add_runner_arguments(parser, "stats", lambda args: seen.append(args.task_runner) or 0)
    for argv in ([], ["--runner", "direct"]):
        args = parser.parse_args(argv)
        assert args.func(args) == 0
    assert seen[0] is None and callable(seen[1])


def test_a_failing_runner_is_one_line(capsys, monkeypatch):
    import apache_beam

    class Broken:
        def __init__(self, options):
            raise RuntimeError("Traceback ...\n  somewhere\nUnable to fetch remote prism binary: offline")

    monkeypatch.setattr(apache_beam, "Pipeline", Broken)
    code, out, err = _run(capsys, ["verify", fixture_path("shards"), "--runner", "prism"])
    assert (code, out) == (2, "")
    assert err == "tfrlens-cli: the prism runner failed: Unable to fetch remote prism binary: offline\n"


@pytest.mark.slow
def test_stats_and_check_direct_equal_local(capsys, tmp_path):
    """The statistics of a shard set and the dataset doctor's report, run on Beam: the local
    report byte for byte (per-shard statistics merged exactly; the doctor's per-record pass on
    Beam, its grouping on the driver)."""
    shards = fixture_path("shards")
    local = _run(capsys, ["stats", "--json", "--workers", "1", shards])
    beam = _run(capsys, ["stats", "--json", shards, *DIRECT, "--out", os.fspath(tmp_path / "stats.json")])
    assert beam == local and local[0] == 0
    assert json.loads((tmp_path / "stats.json").read_text()) == json.loads(local[1])
    assert json.loads(local[1])["records"] == sum(len(list(open_shard(p))) for p in _shard_paths(shards))
    doctor = fixture_path("doctor")
    local = _run(capsys, ["check", "--json", "--workers", "1", doctor])
    beam = _run(capsys, ["check", "--json", doctor, *DIRECT])
    assert beam == local and local[0] == 1
    assert {f["check"] for f in json.loads(local[1])["findings"]} >= {"split_leak", "bbox", "image_decode"}


def _shard_paths(folder: str) -> list[str]:
    return sorted(os.path.join(folder, n) for n in os.listdir(folder))


def open_shard(path: str):
    from codec import TFRecordFile

    return TFRecordFile(path).build_index()


@pytest.mark.slow
def test_stats_and_schema_direct_equal_local_on_damaged_data(capsys, tmp_path, inputs):
    """A generated set with a damaged shard (one task per shard), and one big damaged file (record
    ranges, with a filter on the set's record numbers): the local reports, byte for byte."""
    from .test_parallel_stats import _big_file

    folder = os.path.dirname(inputs[1][0])
    for command in ("stats", "schema"):
        local = _run(capsys, [command, "--json", "--workers", "1", folder])
        beam = _run(capsys, [command, "--json", folder, *DIRECT])
        assert beam == local and local[0] == 1  # the damaged shard is a problem either way
    assert json.loads(local[1])["features"].keys() == {"id", "blob"}
    big = os.fspath(_big_file(tmp_path))
    where = ["--where", "index > 100 and label != 2"]
    local = _run(capsys, ["stats", "--json", "--workers", "1", big, *where])
    beam = _run(capsys, ["stats", "--json", big, *where, *DIRECT])
    assert beam == local and local[0] == 1
    assert json.loads(local[1])["damaged_records"] == 1
