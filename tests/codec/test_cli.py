"""tfrlens-cli: the machine-readable contract and exit codes."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys

import pytest

from codec.cli.main import main
from tests.builders import MANIFEST, fixture_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ["structured.tfrecord", "sequence_examples.tfrecord", "structured.tfrecord.gz",
                                  "raw_strings.tfrecord", "zero_length_record.tfrecord"])
def test_cat_json_is_tensorflows_json(capsys, name):
    code, out, _ = run(capsys, "cat", "--json", fixture_path(name))
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    expected = MANIFEST[name]["records"]
    assert len(lines) == MANIFEST[name]["tf_records_read"]
    for got, want in zip(lines, expected):
        assert got["index"] == want["index"] and got["length"] == want["length"]
        assert got["kind"] == want["kind"] and got["status"] == "ok"
        if want["kind"] == "raw":
            assert len(base64.b64decode(got["value"]["base64"])) == want["length"]
        elif "json" in want:  # the manifest keeps JSON for the first 50 records
            assert got["value"] == want["json"]
    offsets = [line["offset"] for line in lines]
    assert offsets == sorted(offsets) and offsets[0] == 0


def test_cat_range_and_damaged_status(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--range", "4:7", fixture_path("corrupt_data_crc.tfrecord"))
    assert code == 1  # the file has problems
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["index"], x["status"]) for x in lines] == [(4, "ok"), (5, "data_crc"), (6, "ok")]
    assert lines[1]["offset"] == 350


def test_cat_after_resync_keeps_counting(capsys):
    code, out, _ = run(capsys, "cat", "--json", fixture_path("garbage_middle.tfrecord"))
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["index"] for x in lines] == list(range(27))
    assert lines[10]["offset"] > 725


@pytest.mark.parametrize("name", [n for n, e in MANIFEST.items() if "problems" in e.get("corruption", {})])
def test_verify_json_contract(capsys, name):
    code, out, _ = run(capsys, "verify", "--json", fixture_path(name))
    report = json.loads(out)
    assert code == 1
    assert set(report) == {"path", "compression", "records", "ok", "problems"}
    assert report["compression"] == MANIFEST[name]["compression"].lower()
    assert report["ok"] == MANIFEST[name]["tf_records_read"] if name == "truncated.tfrecord.gz" else \
        len(MANIFEST[name]["corruption"]["intact_sha256"])
    want = MANIFEST[name]["corruption"]["problems"]
    assert [p["problem"] for p in report["problems"]] == [w["problem"] for w in want]
    for got, w in zip(report["problems"], want):
        assert set(got) == {"index", "offset", "problem", "detail"}
        if "offset" in w:
            assert got["offset"] == w["offset"]


def test_verify_clean_file_exits_zero(capsys):
    code, out, _ = run(capsys, "verify", "--json", fixture_path("flowers_jpeg.tfrecord"))
    assert code == 0 and json.loads(out)["problems"] == [] and json.loads(out)["records"] == 25


def test_info_for_people(capsys):
    code, out, _ = run(capsys, "info", fixture_path("structured.tfrecord.gz"))
    assert code == 0
    assert "compression: gzip" in out and "records:     100 (100 ok)" in out
    for key, dtype in [("int_col", "int64"), ("byte_col", "bytes"), ("float_col", "float")]:
        assert any(line.split()[:2] == [key, dtype] for line in out.splitlines())


@pytest.mark.parametrize("argv, message", [
    (["info", "not_a_tfrecord.jpg"], "not a TFRecord file"),
    (["verify", "missing.tfrecord"], "no such file"),
    (["cat", "--range", "x", "structured.tfrecord"], "bad --range"),
    (["index", "--format", "dali", "structured.tfrecord.gz"], "needs an uncompressed file"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    argv = [fixture_path(a) if a.endswith((".jpg", ".tfrecord", ".gz")) else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_folder_without_tfrecords_is_exit_2(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    code, _, err = run(capsys, "info", str(tmp_path))
    assert code == 2 and "no TFRecord files in" in err


def test_dali_index_matches_the_records(capsys, tmp_path):
    out_path = tmp_path / "idx.txt"
    code, _, _ = run(capsys, "index", "--format", "dali", "-o", str(out_path), fixture_path("flowers_jpeg.tfrecord"))
    assert code == 0
    rows = [tuple(map(int, line.split())) for line in out_path.read_text().splitlines()]
    data = open(fixture_path("flowers_jpeg.tfrecord"), "rb").read()
    assert len(rows) == 25 and rows[0][0] == 0
    assert sum(size for _, size in rows) == len(data)
    for (_off, size), rec in zip(rows, MANIFEST["flowers_jpeg.tfrecord"]["records"]):
        assert size == rec["length"] + 16


def test_native_index_is_the_cache_format(capsys, tmp_path):
    out_path = tmp_path / "idx.tfri"
    code, _, _ = run(capsys, "index", "-o", str(out_path), fixture_path("structured.tfrecord"))
    assert code == 0 and out_path.read_bytes().startswith(b"TFRLIDX1")


def test_usage_error_from_argparse_is_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_console_script_runs_headless():
    """The installed entry point, in a fresh process."""
    exe = os.path.join(os.path.dirname(sys.executable), "tfrlens-cli")
    if not os.path.exists(exe):
        pytest.skip("tfrlens-cli is not installed in this environment")
    proc = subprocess.run([exe, "verify", "--json", fixture_path("corrupt_length.tfrecord")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["problems"][0]["offset"] == 207


@pytest.mark.parametrize("fixture, name, note", [
    ("structured.zlib.tfrecord", "data.tfrecord.gz",
     "stored as ZLIB although named .gz: TensorFlow with compression_type='GZIP' fails on it; use 'ZLIB'"),
    ("structured.tfrecord.gz", "data.zlib",
     "stored as GZIP although named .zlib: TensorFlow with compression_type='ZLIB' fails on it; use 'GZIP'"),
    ("structured.tfrecord.gz", "data.tfrecord",
     "stored as GZIP although its name has no .gz: TensorFlow with no compression_type fails on it; use 'GZIP'"),
    ("structured.tfrecord", "data.gz", "stored uncompressed although named .gz"),
])
def test_info_and_verify_say_when_tensorflow_would_take_the_name_for_another_compression(
        capsys, tmp_path, fixture, name, note):
    path = tmp_path / name
    shutil.copyfile(fixture_path(fixture), path)
    code, out, _ = run(capsys, "info", str(path))
    assert code == 0 and f"note:        {note}" in out and "records:     100 (100 ok)" in out
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 0 and out.splitlines()[1].startswith(f"  note: {note}")



def test_a_urls_name_ends_before_its_query():
    from codec.format.framing import Compression
    from codec.format.names import tensorflow_name_note

    assert tensorflow_name_note("https://h/x.tfrecord.gz?X-Amz-Signature=1", Compression.GZIP) is None
    assert "named .gz" in tensorflow_name_note("s3://b/x.gz", Compression.ZLIB)


def test_info_and_verify_say_nothing_when_the_name_fits(capsys):
    for command in ("info", "verify"):
        code, out, _ = run(capsys, command, fixture_path("structured.tfrecord.gz"))
        assert code == 0 and "note" not in out
