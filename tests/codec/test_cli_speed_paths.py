"""The command line's fast paths keep their behaviour: lazy imports, counting with numpy,
a verify that reads the data again despite the cache, and an index streamed to its output."""
from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys

import pytest

import codec
from codec import index_cache
from codec.cli import main
from codec.framing import HEADER_SIZE, OVERHEAD
from codec.writer import write_records

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("numpy", "google.protobuf", "PIL", "indexed_gzip")


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def fresh_python(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing imported yet) and return its stdout."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def records(n: int, size: int, seed: int = 3) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(size) for _ in range(n)]


def record_offset(recs: list[bytes], i: int) -> int:
    return sum(len(r) + OVERHEAD for r in recs[:i])


def flip_in_place(path: str, pos: int) -> None:
    """Change one byte without changing the file's size or mtime (what bit rot looks like)."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x5A]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


# -- verify and the cache ---------------------------------------------------------------
def test_verify_reads_the_data_again_despite_a_cached_verified_index(capsys, tmp_path):
    recs = records(3000, 500)  # over index_cache.MIN_CACHED_BYTES: the index is cached
    path = str(tmp_path / "big.tfrecord")
    write_records(path, recs)
    st = os.stat(path)
    assert st.st_size >= index_cache.MIN_CACHED_BYTES

    code, out = run(capsys, "verify", "--json", path)
    assert code == 0 and json.loads(out)["ok"] == 3000
    assert index_cache.has_entry(path, st.st_size, st.st_mtime_ns, codec.Compression.NONE)

    offset = record_offset(recs, 1234)
    flip_in_place(path, offset + HEADER_SIZE + 100)
    assert index_cache.has_entry(path, st.st_size, st.st_mtime_ns, codec.Compression.NONE)  # still "valid"

    code, out = run(capsys, "verify", "--json", path)
    report = json.loads(out)
    assert code == 1
    assert report["records"] == 3000 and report["ok"] == 2999
    assert [(p["problem"], p["index"], p["offset"]) for p in report["problems"]] == [("data_crc", 1234, offset)]

    code, out = run(capsys, "verify", path)  # the human report says the same
    assert code == 1 and "data_crc" in out and f"offset {offset:,} (record 1234)" in out


def test_verify_of_a_cached_gzip_file_reads_it_again(capsys, tmp_path):
    recs = records(1500, 1000, seed=4)  # random bytes: the GZIP file stays over 1 MiB
    path = str(tmp_path / "big.tfrecord.gz")
    write_records(path, recs, "gzip")
    st = os.stat(path)
    assert st.st_size >= index_cache.MIN_CACHED_BYTES
    code, out = run(capsys, "verify", "--json", path)
    assert code == 0 and json.loads(out)["ok"] == 1500
    assert index_cache.has_entry(path, st.st_size, st.st_mtime_ns, codec.Compression.GZIP)

    flip_in_place(path, st.st_size // 2)
    code, out = run(capsys, "verify", "--json", path)
    report = json.loads(out)
    assert code == 1 and report["problems"]
    assert report["ok"] < 1500


def test_verify_no_cache_leaves_the_cache_alone(capsys, tmp_path):
    path = str(tmp_path / "big.tfrecord")
    write_records(path, records(3000, 500))
    st = os.stat(path)
    code, _ = run(capsys, "verify", "--no-cache", path)
    assert code == 0
    assert not index_cache.has_entry(path, st.st_size, st.st_mtime_ns, codec.Compression.NONE)


# -- counts -----------------------------------------------------------------------------
def damaged_file(tmp_path, name: str = "damaged.tfrecord", bad=(3, 7), n: int = 12) -> tuple[str, list[bytes]]:
    recs = records(n, 40, seed=len(name))
    path = str(tmp_path / name)
    write_records(path, recs)
    data = bytearray(open(path, "rb").read())
    for i in bad:
        data[record_offset(recs, i) + HEADER_SIZE + 5] ^= 0xFF
    open(path, "wb").write(bytes(data))
    return path, recs


def test_verify_and_info_count_damaged_records(capsys, tmp_path):
    path, _ = damaged_file(tmp_path)
    code, out = run(capsys, "verify", "--json", path)
    report = json.loads(out)
    assert code == 1
    assert (report["records"], report["ok"]) == (12, 10)
    assert sorted(p["index"] for p in report["problems"]) == [3, 7]

    code, out = run(capsys, "info", path)
    assert code == 1
    assert "records:     12 (10 ok, 2 data_crc)" in out


def test_info_and_verify_count_across_shards(capsys, tmp_path):
    a, _ = damaged_file(tmp_path, "part-00000-of-00002.tfrecord", bad=(1,), n=5)
    b, _ = damaged_file(tmp_path, "part-00001-of-00002.tfrecord", bad=(0, 2, 4), n=6)
    code, out = run(capsys, "info", a, b)
    assert code == 1
    assert "records:     11 (7 ok, 4 data_crc)" in out

    code, out = run(capsys, "verify", a, b)
    assert code == 1
    assert "total: 2 file(s), 11 records, 7 ok, 4 problem(s)" in out


def test_info_counts_truncated_and_ok(capsys, tmp_path):
    recs = records(6, 30, seed=9)
    path = str(tmp_path / "cut.tfrecord")
    write_records(path, recs)
    size = os.path.getsize(path)
    os.truncate(path, size - 10)  # the last record loses its tail
    code, out = run(capsys, "info", path)
    assert code == 1
    assert "records:     6 (5 ok, 1 truncated)" in out


# -- the native index --------------------------------------------------------------------
def parse_native(blob: bytes) -> tuple[dict, list[int], bytes]:
    assert blob[:8] == b"TFRLIDX1"
    (n,) = struct.unpack_from("<I", blob, 8)
    header = json.loads(blob[12:12 + n])
    count = header["count"]
    body = blob[12 + n:]
    assert len(body) == count * 9
    return header, list(struct.unpack_from(f"<{count}Q", body)), body[count * 8:]


def test_native_index_to_a_file_and_to_stdout_are_the_same(capsysbinary, tmp_path):
    recs = records(40, 50)
    path = str(tmp_path / "small.tfrecord")
    write_records(path, recs)
    out_path = tmp_path / "out.tfri"
    assert main(["index", "-o", str(out_path), path]) == 0
    capsysbinary.readouterr()
    assert main(["index", path]) == 0
    streamed = capsysbinary.readouterr().out
    written = out_path.read_bytes()
    assert streamed == written
    header, offsets, statuses = parse_native(written)
    assert offsets == [record_offset(recs, i) for i in range(40)]
    assert header["count"] == 40 and len(statuses) == 40


def test_index_no_cache_writes_no_cache_entry(capsys, tmp_path):
    path = str(tmp_path / "big.tfrecord")
    write_records(path, records(3000, 500))
    st = os.stat(path)
    out_path = tmp_path / "out.tfri"
    assert main(["index", "--no-cache", "-o", str(out_path), path]) == 0
    assert parse_native(out_path.read_bytes())[0]["count"] == 3000
    assert not index_cache.has_entry(path, st.st_size, st.st_mtime_ns, codec.Compression.NONE)


# -- start-up: what gets imported ------------------------------------------------------------
def test_help_imports_no_heavy_module():
    out = fresh_python(
        "import contextlib, io, sys\n"
        "from codec.cli import build_parser\n"
        "for argv in (['--help'], ['verify', '--help'], ['export', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            build_parser().parse_args(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n")
    assert out.strip() == "[]"


def test_import_codec_imports_no_heavy_module():
    out = fresh_python(f"import sys, codec\nprint([m for m in {HEAVY!r} if m in sys.modules])")
    assert out.strip() == "[]"


def test_every_public_name_resolves_in_a_fresh_process():
    out = fresh_python(
        "import codec, inspect\n"
        "missing = [n for n in codec.__all__ if getattr(codec, n, None) is None]\n"
        "import codec.export, codec.repair\n"  # the submodules named like the functions
        "print(missing, callable(codec.export), callable(codec.repair), inspect.isfunction(codec.repair))\n"
        "from codec import *\n"
        "names = dir()\n"
        "print(sorted(n for n in codec.__all__ if n not in names))\n")
    assert out.splitlines() == ["[] True True True", "[]"]


def test_every_public_name_is_its_modules_own():
    for name in codec.__all__:
        value = getattr(codec, name)
        module = getattr(value, "__module__", None)
        assert module is not None and module.startswith("codec."), name
    assert set(codec.__all__) <= set(dir(codec))
    with pytest.raises(AttributeError):
        codec.no_such_name  # noqa: B018


def test_parser_choices_are_the_codecs_own():
    from codec import cli
    from codec.export import FORMATS

    assert cli.COMPRESSIONS == tuple(c.value for c in codec.Compression)
    assert cli.FORMATS == tuple(FORMATS)
