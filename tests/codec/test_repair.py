"""Salvage: the repaired copy holds exactly the intact records, in order."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from codec import TFRecordFile, encode_record, write_records
from codec.cli.main import main
from codec.ops.repair import repair
from tests.builders import MANIFEST, fixture_path

from .conftest import expected_intact

DAMAGED = [n for n, e in MANIFEST.items() if "problems" in e.get("corruption", {})]


def read_back(path) -> list[bytes]:
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert f.problems == [], f.problems
        return list(f)


@pytest.mark.parametrize("name", DAMAGED)
def test_repaired_fixture_holds_exactly_the_intact_records(tmp_path, name):
    out = tmp_path / "fixed.tfrecord"
    with TFRecordFile(fixture_path(name)) as f:
        report = repair(f, out)
    got = [hashlib.sha256(r).hexdigest() for r in read_back(out)]
    assert got == expected_intact(name)
    assert report.kept == len(got)


def test_include_damaged_adds_them_with_fresh_crcs_and_says_so(tmp_path):
    out = tmp_path / "all.tfrecord"
    with TFRecordFile(fixture_path("corrupt_data_crc.tfrecord")) as f:
        report = repair(f, out, include_damaged=True)
        damaged = f.read(5).data
    records = read_back(out)
    assert len(records) == 30 and records[5] == damaged
    assert report.included_damaged == [(5, "data_crc")] and "included 1 damaged" in report.summary()


def test_repair_refuses_to_overwrite_its_source(tmp_path):
    path = tmp_path / "src.tfrecord"
    shutil.copy(fixture_path("garbage_middle.tfrecord"), path)
    with TFRecordFile(path) as f, pytest.raises(OSError, match="must not replace its source"):
        repair(f, path)


def _damage(blob: bytearray, kind: str, at: int, spans) -> None:
    start, end = spans[at]
    if kind == "length":
        blob[start + 3] ^= 0x40
    elif kind == "data":
        blob[start + 12] ^= 0x01
    elif kind == "footer":
        blob[end - 1] ^= 0x80
    elif kind == "garbage":
        blob[start:start + 20] = bytes(range(100, 120))


@pytest.mark.parametrize("kind", ["length", "data", "footer", "garbage"])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_generated_damage_everywhere(tmp_path, kind, where, compression):
    records = [bytes([i]) * (30 + i) for i in range(40)]
    spans, pos = [], 0
    for r in records:
        spans.append((pos, pos + 16 + len(r)))
        pos += 16 + len(r)
    at = {"start": 0, "middle": 20, "end": 39}[where]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    _damage(blob, kind, at, spans)
    plain = tmp_path / "damaged.tfrecord"
    plain.write_bytes(bytes(blob))
    src = plain
    if compression == "gzip":  # damage inside the data, then compressed: the stream itself is fine
        import gzip

        src = tmp_path / "damaged.tfrecord.gz"
        src.write_bytes(gzip.compress(bytes(blob)))
    out = tmp_path / "fixed.tfrecord"
    with TFRecordFile(src, use_cache=False) as f:
        report = repair(f, out, "none")
    expected = [r for k, r in enumerate(records) if k != at]
    assert read_back(out) == expected
    assert report.kept == 39


def test_several_damages_and_a_cut_gzip_stream(tmp_path):
    records = [bytes([i % 256]) * 500 for i in range(300)]
    good = tmp_path / "good.gz"
    write_records(good, records, "gzip")
    blob = good.read_bytes()
    cut = tmp_path / "cut.gz"
    cut.write_bytes(blob[: len(blob) * 2 // 3])
    out = tmp_path / "fixed.tfrecord"
    with TFRecordFile(cut, use_cache=False) as f:
        report = repair(f, out)
    kept = read_back(out)
    assert kept == records[: len(kept)] and 0 < len(kept) < 300 and report.kept == len(kept)


def test_cli_repair_and_verify_over_a_folder(tmp_path, capsys):
    folder = tmp_path / "shards"
    folder.mkdir()
    for name in ("garbage_middle.tfrecord", "structured.tfrecord", "truncated.tfrecord"):
        shutil.copy(fixture_path(name), folder / name)
    (folder / "README.txt").write_text("not a tfrecord")
    code = main(["verify", str(folder)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1 and len(out) == 4
    assert out[-1].startswith("total: 3 file(s), 148 records, 147 ok, 2 problem(s)")
    code = main(["repair", str(folder), "-o", str(tmp_path / "fixed")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[-1] == "total: 3 file(s), kept 147, dropped 1"
    assert len(read_back(tmp_path / "fixed" / "garbage_middle.tfrecord")) == 27


def test_cli_repair_exit_codes(tmp_path, capsys):
    assert main(["repair", fixture_path("truncated.tfrecord"), "-o", str(tmp_path / "o.tfrecord")]) == 0
    assert "kept 20 record(s), dropped 1 (#20 truncated)" in capsys.readouterr().out
    assert main(["repair", fixture_path("not_a_tfrecord.jpg"), "-o", str(tmp_path / "x")]) == 2
    assert "not a TFRecord file" in capsys.readouterr().err


def test_cli_verify_max_problems_and_summary(tmp_path, capsys):
    records = [bytes([i]) * 40 for i in range(20)]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    for k in (2, 5, 9, 14):
        blob[k * 56 + 20] ^= 1
    path = tmp_path / "many.tfrecord"
    path.write_bytes(bytes(blob))
    assert main(["verify", str(path), "--max-problems", "2"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "4 problem(s) (data_crc 4)" in out[0] and out[-1] == "  ... and 2 more" and len(out) == 4
    main(["verify", "--json", "--max-problems", "1", str(path)])
    report = json.loads(capsys.readouterr().out)
    assert len(report["problems"]) == 1 and report["problems_total"] == 4
