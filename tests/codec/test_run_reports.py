"""Run reports read back: each kind written by the real command line with ``--out``, recognised by its
shape and parsed into what the command printed; anything else refused in one line naming the path."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codec.errors import FileAccessError, TFRecordError, UsageError
from codec.format.framing import ProblemKind
from codec.ops import reports as run_reports
from codec.ops.reports import load_report, local_path, parse_report, schema_python
from codec.sources.tfrecord_file import TFRecordFile
from tests.builders import FIXTURES, MANIFEST
from tests.codec.conftest import ROOT

SHARDS = FIXTURES / "shards"
DOCTOR = FIXTURES / "doctor"
VERIFIED = ("corrupt_data_crc.tfrecord", "garbage_middle.tfrecord", "structured.tfrecord")
REPAIRED = ("corrupt_data_crc.tfrecord", "truncated.tfrecord")


def _cli(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TFRLENS_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "codec.cli.main", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)


def write_reports(folder: Path) -> dict[str, tuple[Path, str]]:
    """Each kind's report, written by the command line with ``--out`` into ``folder``: kind -> (report,
    what the same run printed on stdout)."""
    cache = folder / "cache"
    runs = {
        "stats": ["stats", "--json", str(SHARDS)],
        "schema": ["schema", "--json", str(SHARDS)],
        "check": ["check", "--json", str(DOCTOR)],
        "verify": ["verify", "--json", *(str(FIXTURES / name) for name in VERIFIED)],
        "repair": ["repair", "--output", str(folder / "repaired"), *(str(FIXTURES / name) for name in REPAIRED)],
    }
    out = {}
    for kind, args in runs.items():
        report = folder / f"{kind}.json"
        proc = _cli([*args, "--out", str(report)], cache)
        assert proc.returncode in (0, 1), proc.stderr
        assert report.is_file(), proc.stderr
        out[kind] = (report, proc.stdout)
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return write_reports(tmp_path_factory.mktemp("reports"))


@pytest.mark.slow
def test_check_report_is_the_check_json(reports):
    path, printed = reports["check"]
    report = load_report(path)
    assert report.kind == "check" and report.path == str(path)
    assert report.data.to_json() == json.loads(printed)  # every finding, its records and detail, in order
    manifest = json.loads((DOCTOR / "MANIFEST.json").read_text())
    assert report.data.records == sum(len(TFRecordFile(str(DOCTOR / name)).build_index())
                                      for name in manifest["shards"])
    found = {(f.check, frozenset((os.path.basename(r.path), r.index) for r in f.records))
             for f in report.data.findings}
    for planted in manifest["planted"]:  # each planted problem is a finding naming its records
        refs = frozenset((r["path"], r["index"]) for r in planted["records"])
        assert any(check == planted["check"] and refs <= named for check, named in found), planted
    errors = sum(1 for f in report.data.findings if f.severity == "error")
    assert report.summary() == (f"{len(report.data.findings)} findings ({errors} errors, "
                                f"{len(report.data.findings) - errors} warnings) in {report.data.records} records")


def test_stats_report_is_the_stats_json(reports):
    path, printed = reports["stats"]
    report = load_report(path)
    assert report.kind == "stats"
    assert report.data == json.loads(printed)
    total = sum(len(TFRecordFile(str(p)).build_index()) for p in sorted(SHARDS.iterdir()))
    assert report.data["records"] == total
    assert report.summary() == f"{total} records, {len(report.data['features'])} features"


def test_schema_report_gives_the_python_the_command_prints(reports, tmp_path):
    path, printed = reports["schema"]
    report = load_report(path)
    assert report.kind == "schema"
    assert report.data == json.loads(printed)
    python = _cli(["schema", str(SHARDS)], tmp_path / "cache")
    assert schema_python(report.data, os.path.basename(SHARDS)) == python.stdout


def test_verify_report_lists_each_file_with_its_problems(reports):
    path, printed = reports["verify"]
    report = load_report(path)
    assert report.kind == "verify"
    lines = [json.loads(line) for line in printed.splitlines()]
    assert [os.path.basename(f.path) for f in report.data] == list(VERIFIED)
    for entry, line in zip(report.data, lines):
        assert (entry.path, entry.compression, entry.records, entry.ok) == \
            (line["path"], line["compression"], line["records"], line["ok"])
        assert [p.to_json() for p in entry.problems] == line["problems"]
        assert entry.problems_total == len(line["problems"])
    damaged = report.data[0]
    planted = MANIFEST["corrupt_data_crc.tfrecord"]["corruption"]
    assert [(p.index, p.offset, p.kind) for p in damaged.problems] == \
        [(planted["record"], planted["offset"], ProblemKind.DATA_CRC)]
    assert report.data[2].records == len(MANIFEST["structured.tfrecord"]["records"])
    assert report.data[2].problems == []


def test_repair_report_counts_what_the_clean_copies_hold(reports):
    path, _ = reports["repair"]
    report = load_report(path)
    assert report.kind == "repair"
    assert [os.path.basename(f.source) for f in report.data] == list(REPAIRED)
    for entry in report.data:
        with TFRecordFile(entry.output) as clean:
            assert len(clean.build_index()) == entry.kept
        with TFRecordFile(entry.source) as source:
            source.verify()
            assert sorted(p.index for p in source.problems if p.index is not None) == \
                [index for index, _ in entry.dropped]
    assert report.data[0].dropped == [(MANIFEST["corrupt_data_crc.tfrecord"]["corruption"]["record"], "data_crc")]


def test_a_reformatted_report_still_reads(reports, tmp_path):
    path, _ = reports["check"]
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(path.read_text()), indent=2))
    assert load_report(pretty).data.to_json() == load_report(path).data.to_json()
    lines = [json.loads(line) for line in reports["verify"][0].read_text().splitlines()]
    as_array = tmp_path / "verify-array.json"
    as_array.write_text(json.dumps(lines, indent=1))
    assert [f.path for f in load_report(as_array).data] == [line["path"] for line in lines]


# -- what is not a report -------------------------------------------------------------------------
def _refused(path, error=UsageError) -> str:
    with pytest.raises(error) as caught:
        load_report(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


@pytest.mark.parametrize("content, why", [
    (b"hello, world\n", "not JSON"),
    (b'{"records": 3, "findings": [\n', "not JSON"),
    (b"", "empty"),
    (b"[1, 2]", "not an object"),
    (b'{"a": 1}', "keys a"),
    (b'{"records": 3, "findings": [{"check": "bbox", "records": []}]}', "finding 1: 'severity' is missing"),
    (b'{"records": 3, "kinds": {}, "features": {"x": 5}}', "feature 'x' is number"),
    (b'{"path": "a", "compression": "none", "records": 1, "ok": 1, "problems": []}\n{"b": 2}\n',
     "line 2: an object with keys b, not a file's verify report"),
    (b'{"path": "a", "compression": "none", "records": 1, "ok": 1, "problems": [{"problem": "cosmic_ray"}]}',
     "unknown problem 'cosmic_ray'"),
    (b'{"source": "a", "output": "b", "kept": -1, "dropped": []}', "'kept' is number, not a count"),
    (b"[" * 100_000, "nested too deeply"),
])
def test_other_content_is_refused_in_one_line(tmp_path, content, why):
    path = tmp_path / "report.json"
    path.write_bytes(content)
    assert why in _refused(path)


def test_a_tfrecord_file_is_not_a_report():
    assert "not UTF-8" in _refused(FIXTURES / "structured.tfrecord")


def test_a_missing_file_or_a_folder_is_an_access_error(tmp_path):
    assert "no such file" in _refused(tmp_path / "nope.json", FileAccessError)
    assert "folder" in _refused(tmp_path, FileAccessError)


def test_a_huge_report_is_refused_before_it_is_read(tmp_path, monkeypatch, reports):
    monkeypatch.setattr(run_reports, "MAX_REPORT_BYTES", 100)
    assert "too large" in _refused(reports["check"][0])
    with pytest.raises(UsageError, match="too large"):
        parse_report(b" " * 101)


def test_files_a_report_names_are_found_beside_it(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.tfrecord").write_bytes(b"")
    report = str(tmp_path / "report.json")
    assert local_path(report, os.path.join("data", "a.tfrecord")) == str(tmp_path / "data" / "a.tfrecord")
    assert local_path(report, str(tmp_path / "data" / "a.tfrecord")) == str(tmp_path / "data" / "a.tfrecord")
    assert local_path(report, "data/missing.tfrecord") is None
    assert local_path(report, "gs://bucket/a.tfrecord") == "gs://bucket/a.tfrecord"


# -- over the network ---------------------------------------------------------------------------------
@pytest.mark.network
def test_a_report_reads_from_a_url_and_a_404_says_so(reports):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    folder = reports["check"][0].parent
    with range_server(folder) as srv:
        for kind in ("check", "verify"):
            url = srv.url_for(f"{kind}.json")
            remote, local = load_report(url), load_report(reports[kind][0])
            assert remote.kind == kind and remote.path == url
            assert remote.summary() == local.summary()
        missing = srv.url_for("missing.json")
        with pytest.raises(FileAccessError) as caught:
            load_report(missing)
        assert missing in str(caught.value) and "not found" in str(caught.value)
        assert "\n" not in str(caught.value)
        with pytest.raises(TFRecordError, match="not UTF-8"):  # served, but not a report
            load_report(srv.url_for("repaired/truncated.tfrecord"))
