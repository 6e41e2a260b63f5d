"""A GZIP or ZLIB stream that breaks gives every record that inflates before the break, and
names the damage; a GZIP file goes on at the next member. The library and the CLI agree."""
from __future__ import annotations

import gzip
import json
import random
import zlib
from pathlib import Path

import pytest

from benchmarks.bench_damage import run as damage_run
from codec import Compression, ProblemKind, RecordStatus, TFRecordFile, encode_record
from codec.cli.main import main
from codec.storage.opening import sniff_compression
from tests.builders import fixture_path


def cli(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def intact_records(path) -> list[bytes]:
    """The data of every record read from ``path`` with its data CRC holding (verified on a fresh open)."""
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        return [f.read(i).data for i in range(len(f)) if f.read(i).status.data_intact]


def fixture_records(name: str) -> list[bytes]:
    with TFRecordFile(fixture_path(name), use_cache=False) as f:
        return list(f.build_index(verify=True))


@pytest.fixture
def zlib_49_deleted(tmp_path) -> Path:
    """The issue's case: structured.zlib.tfrecord with 49 bytes deleted at byte 206."""
    blob = Path(fixture_path("structured.zlib.tfrecord")).read_bytes()
    path = tmp_path / "structured.zlib.tfrecord"
    path.write_bytes(blob[:206] + blob[206 + 49:])
    return path


def test_seeded_random_damage_loses_no_intact_record():
    """60 seeded cases of bench_damage (20 each plain, GZIP, ZLIB; every damage kind, at random
    and in the first 300 bytes), each opened twice: ~2.5 s, the smallest run that meets every kind."""
    r = damage_run(60, seed=7)
    assert r["cases"] == 60 and not r["crashes"], r["crashes"]
    assert r["intact"] > 1000
    assert r["lost"] == 0, r["losing"]
    assert not r["unnamed"], r["unnamed"]


def test_zlib_broken_before_its_fourth_record_gives_the_three_before(zlib_49_deleted):
    # It was refused as "not a TFRecord file": its stream breaks within the first 256 bytes.
    assert sniff_compression(zlib_49_deleted) is Compression.ZLIB
    want = fixture_records("structured.zlib.tfrecord")[:3]
    with TFRecordFile(zlib_49_deleted, use_cache=False) as f:
        f.verify()
        assert f.compression is Compression.ZLIB
        assert [f.read(i).data for i in range(3)] == want
        assert all(f.index.status(i) is RecordStatus.OK for i in range(3))
        (broken,) = [p for p in f.problems if p.compressed_offset is not None]
        assert broken.kind is ProblemKind.DECOMPRESS and 206 <= broken.compressed_offset < 1386 - 49
        assert "ZLIB stream damaged at compressed byte" in broken.detail and "invalid distance" in broken.detail
    assert intact_records(zlib_49_deleted) == want


def test_the_cli_agrees_on_a_broken_zlib_stream(capsys, tmp_path, zlib_49_deleted):
    want = fixture_records("structured.zlib.tfrecord")[:3]
    code, out = cli(capsys, "info", zlib_49_deleted)
    assert code == 1 and "compression: zlib" in out and "ZLIB stream damaged at compressed byte" in out
    code, out = cli(capsys, "verify", "--json", zlib_49_deleted)
    report = json.loads(out)
    assert code == 1
    assert any(p["problem"] == "decompress" and "ZLIB stream damaged at compressed byte" in p["detail"]
               for p in report["problems"]), report
    code, out = cli(capsys, "cat", "--json", zlib_49_deleted)
    statuses = [json.loads(line)["status"] for line in out.splitlines()]
    assert code == 1 and statuses[:3] == ["ok"] * 3
    fixed = tmp_path / "fixed.tfrecord"
    code, out = cli(capsys, "repair", zlib_49_deleted, "-o", fixed)
    assert code == 0 and "kept 3 record(s)" in out
    assert intact_records(fixed) == want


def test_gzip_damaged_in_its_first_header_after_the_magic_stays_gzip(tmp_path):
    blob = Path(fixture_path("structured.tfrecord.gz")).read_bytes()
    path = tmp_path / "header.tfrecord.gz"
    path.write_bytes(blob[:5] + blob[7:])  # two bytes of the header's time deleted: the deflate data shifts
    assert sniff_compression(path) is Compression.GZIP
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert f.compression is Compression.GZIP and len(f) == 0
        assert [p.kind for p in f.problems] == [ProblemKind.DECOMPRESS]
        assert f.problems[0].compressed_offset is not None and "GZIP stream damaged" in f.problems[0].detail


def test_zlib_broken_before_its_first_record_completes_is_named_not_refused(capsys, tmp_path):
    records = [bytes([k]) * 200 + b"x" * k for k in range(20)]
    blob = bytearray(zlib.compress(b"".join(encode_record(r) for r in records)))
    blob[6] ^= 0x55  # inside the first deflate block, before record 0 has inflated whole
    path = tmp_path / "early.tfrecord.zz"
    path.write_bytes(bytes(blob))
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert f.compression is Compression.ZLIB
        assert not any(f.read(i).status.data_intact for i in range(len(f)))
        assert any(p.kind is ProblemKind.DECOMPRESS and p.compressed_offset is not None for p in f.problems)
    code, out = cli(capsys, "verify", path)
    assert code == 1 and "ZLIB stream damaged" in out


def test_a_file_that_only_starts_like_zlib_is_not_a_tfrecord(capsys, tmp_path):
    # Two bytes pass zlib's header check in about one random file of 1,000: without a record
    # header from the stream or a ZLIB name, the file is refused as before, not called damaged ZLIB.
    blob = b"\x78\x01" + random.Random(7).randbytes(3000)
    plain_name = tmp_path / "photo.dat"
    plain_name.write_bytes(blob)
    code = main(["info", str(plain_name)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a TFRecord file" in err
    zlib_name = tmp_path / "shard.tfrecord.zz"
    zlib_name.write_bytes(blob)
    assert sniff_compression(zlib_name) is Compression.ZLIB


def concatenated(records: list[bytes], cuts: list[int]) -> tuple[bytes, list[int]]:
    """``records`` as one GZIP member per run between ``cuts`` (record numbers); the members' starts."""
    bounds = [0, *cuts, len(records)]
    members = [gzip.compress(b"".join(encode_record(r) for r in records[a:b]), mtime=0)
               for a, b in zip(bounds, bounds[1:])]
    starts = [sum(map(len, members[:k])) for k in range(len(members))]
    return b"".join(members), starts


def test_damage_in_one_gzip_member_keeps_the_members_after_it(capsys, tmp_path):
    records = [b"%03d" % k + bytes(range(k % 50)) * 3 for k in range(60)]
    blob, starts = concatenated(records, [20, 40])
    broken = bytearray(blob)
    broken[starts[1] + 40] ^= 0xFF  # inside the second member's deflate data
    path = tmp_path / "members.tfrecord.gz"
    path.write_bytes(bytes(broken))
    got = intact_records(path)
    assert got[:20] == records[:20] and got[-20:] == records[40:]
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        (broke,) = [p for p in f.problems if p.compressed_offset is not None]
        assert starts[1] < broke.compressed_offset < starts[2]
        assert f"the next GZIP member that inflates starts at compressed byte {starts[2]}" in broke.detail
    # Opened again from the index cache: records read back through rebuilt checkpoints, the same.
    for _ in range(2):
        with TFRecordFile(path) as f:
            f.build_index()
            assert [f.read(i).data for i in range(len(f)) if f.read(i).status.data_intact][-20:] == records[40:]
    fixed = tmp_path / "fixed.tfrecord"
    code, out = cli(capsys, "repair", path, "-o", fixed)
    assert code == 0 and intact_records(fixed) == got


@pytest.mark.parametrize("fill", ["text", "random"])
def test_a_gzip_member_after_garbage_at_the_start_is_read(tmp_path, fill):
    # Random records do not compress: deflate keeps them verbatim in stored blocks, where they
    # look like a plain file's records. The member starts before them: GZIP.
    rnd = random.Random(5)
    records = [b"record %d " % k + (rnd.randbytes(300) if fill == "random" else b"x" * k) for k in range(30)]
    blob, starts = concatenated(records, [10])
    path = tmp_path / "prefixed.tfrecord.gz"
    path.write_bytes(b"\x1f" + bytes(range(200)) + blob[3:starts[1]] + blob[starts[1]:])  # first header broken
    assert sniff_compression(path) is Compression.GZIP
    assert intact_records(path) == records[10:]


def test_a_plain_file_of_gzip_records_damaged_at_its_start_stays_plain(tmp_path):
    # The other way round: a GZIP member inside a record, after the record's header.
    records = [gzip.compress(b"payload %d " % k * 40, mtime=0) for k in range(20)]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    blob[:12] = bytes(12)  # record 0's header gone
    path = tmp_path / "gz_payloads.tfrecord"
    path.write_bytes(bytes(blob))
    assert sniff_compression(path) is Compression.NONE
    assert intact_records(path) == records[1:]
