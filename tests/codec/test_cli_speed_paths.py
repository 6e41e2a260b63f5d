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
from codec.cli.main import main
from codec.format.framing import HEADER_SIZE
from codec.index import cache as index_cache
from codec.storage.file_identity import FileIdentity
from codec.storage.writer import write_records

from .conftest import flip_in_place, record_offset, run_fresh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("numpy", "google.protobuf", "PIL", "indexed_gzip")


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def records(n: int, size: int, seed: int = 3) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(size) for _ in range(n)]


# -- verify and the cache ---------------------------------------------------------------
def test_verify_reads_the_data_again_despite_a_cached_verified_index(capsys, tmp_path):
    recs = records(3000, 500)  # over index_cache.MIN_CACHED_BYTES: the index is cached
    path = str(tmp_path / "big.tfrecord")
    write_records(path, recs)
    st = os.stat(path)
    assert st.st_size >= index_cache.MIN_CACHED_BYTES

    code, out = run(capsys, "verify", "--json", path)
    assert code == 0 and json.loads(out)["ok"] == 3000
    assert index_cache.has_entry(path, st.st_size, FileIdentity.of(st).stamp, codec.Compression.NONE)

    offset = record_offset(recs, 1234)
    flip_in_place(path, offset + HEADER_SIZE + 100)
    assert index_cache.has_entry(path, st.st_size, FileIdentity.of(os.stat(path)).stamp, codec.Compression.NONE)  # bit rot: "valid"

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
    assert index_cache.has_entry(path, st.st_size, FileIdentity.of(st).stamp, codec.Compression.GZIP)

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
    assert not index_cache.has_entry(path, st.st_size, FileIdentity.of(st).stamp, codec.Compression.NONE)


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
    assert not index_cache.has_entry(path, st.st_size, FileIdentity.of(st).stamp, codec.Compression.NONE)


# -- start-up: what gets imported ------------------------------------------------------------
def test_help_imports_no_heavy_module():
    out = run_fresh(
        "import contextlib, io, sys\n"
        "from codec.cli.main import build_parser\n"
        "for argv in (['--help'], ['verify', '--help'], ['export', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            build_parser().parse_args(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n")
    assert out.strip() == "[]"


def test_import_codec_imports_no_heavy_module():
    out = run_fresh(f"import sys, codec\nprint([m for m in {HEAVY!r} if m in sys.modules])")
    assert out.strip() == "[]"


def test_every_public_name_resolves_in_a_fresh_process():
    out = run_fresh(
        "import codec, inspect\n"
        "missing = [n for n in codec.__all__ if getattr(codec, n, None) is None]\n"
        "import codec.ops.export, codec.ops.repair\n"  # the modules that hold the functions
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
    from codec.cli import main as cli
    from codec.ops.export import FORMATS

    assert cli.COMPRESSIONS == tuple(c.value for c in codec.Compression)
    assert cli.FORMATS == tuple(FORMATS)


# -- cat through the cache alone -----------------------------------------------------------
def example_records(n: int, size: int, seed: int = 5) -> list[bytes]:
    """tf.train.Example records with random bytes (they do not compress: a GZIP file stays large)."""
    from codec.decode.example_proto import Example

    rng = random.Random(seed)
    out = []
    for i in range(n):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(i)
        ex.features.feature["data"].bytes_list.value.append(rng.randbytes(size))
        out.append(ex.SerializeToString())
    return out


def cached_gzip_file(tmp_path, capsys) -> str:
    """A GZIP file over MIN_CACHED_BYTES whose record index and zran index are both cached."""
    path = str(tmp_path / "examples.tfrecord.gz")
    write_records(path, example_records(1200, 1000), "gzip")
    assert os.path.getsize(path) >= index_cache.MIN_CACHED_BYTES
    st = os.stat(path)
    # an open range indexes the whole file (a known one stops where it ends): the record index is cached
    assert run(capsys, "cat", "--range=-1:", path)[0] == 0
    assert run(capsys, "cat", "--range=1", path)[0] == 0  # the first cached open caches the zran index
    assert index_cache.has_entry(path, st.st_size, FileIdentity.of(st).stamp, codec.Compression.GZIP)
    assert os.path.exists(index_cache.zran_path(path))
    return path


CAT_AND_REPORT = (
    "import contextlib, io, sys\n"
    "from codec.cli.main import main\n"
    "out = io.StringIO()\n"
    "with contextlib.redirect_stdout(out):\n"
    "    code = main(sys.argv[1:])\n"
    "print(repr((code, out.getvalue(), sorted(m for m in ('numpy', 'indexed_gzip', 'indexed_gzip.indexed_gzip',\n"
    "                                                     'codec.sources.tfrecord_file', 'codec.index.scan', 'codec.decode.decoder',\n"
    "                                                     'google.protobuf.descriptor_pool') if m in sys.modules))))\n")


def cat_in_run_fresh(*argv: str) -> tuple[int, str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", CAT_AND_REPORT, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    import ast

    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def test_cat_of_a_cached_gzip_file_reads_through_the_cache_alone(capsys, tmp_path):
    path = cached_gzip_file(tmp_path, capsys)
    expected = {}
    for spec in ("-1:", "-3:", "600"):
        code, out = run(capsys, "cat", "--no-cache", f"--range={spec}", path)
        assert code == 0
        expected[spec] = out
    assert expected["-1:"].startswith("# record 1199  offset ")
    assert 'key: "label"' in expected["-1:"] and "value: 1199" in expected["-1:"]
    from codec.datasets.payload_choice import record_text
    from codec.decode.decoder import decode_record

    # the text protobuf's text_format gives the record cached_gzip_file wrote last
    assert expected["-1:"].split("\n", 1)[1] == record_text(decode_record(example_records(1200, 1000)[-1])) + "\n"

    for spec in ("-1:", "-3:", "600"):
        code, out, imported = cat_in_run_fresh("cat", f"--range={spec}", path)
        assert (code, out) == (0, expected[spec])
        # neither numpy nor the reader nor protobuf's message classes (the Examples are printed
        # straight from their bytes); indexed_gzip's extension without its package's __init__
        assert imported == ["indexed_gzip.indexed_gzip"]


def test_cat_prints_every_kind_as_protobuf_text_format_does(capsys, tmp_path, monkeypatch):
    """Examples printed straight from their bytes read exactly as through protobuf (the only path for
    any other record, and for Examples in another layout)."""
    from codec.decode.example_proto import SequenceExample

    seq = SequenceExample()
    seq.context.feature["id"].bytes_list.value.append(b"clip-7")
    seq.feature_lists.feature_list["frames"].feature.add().float_list.value.extend([0.5, -1.25])
    from .test_example_columns import entry, example, ld

    unpacked = example(entry(b"k", ld(0x1A, b"\x08\x01\x08\x02")))  # int64 values not packed
    recs = example_records(3, 20) + [seq.SerializeToString(), unpacked, b"\x08\x01\x10\x02", b"raw bytes", b""]
    path = str(tmp_path / "mixed.tfrecord")
    write_records(path, recs)
    code, fast = run(capsys, "cat", path)
    monkeypatch.setattr("codec.decode.example_text.example_text", lambda data: None)
    assert run(capsys, "cat", path) == (code, fast)
    assert code == 0 and fast.count("# record ") == len(recs)
    kinds = [line.rsplit("  ", 1)[1] for line in fast.splitlines() if line.startswith("# record ")]
    assert kinds == ["example"] * 3 + ["sequence_example", "example", "protobuf", "raw", "example"]


def test_cat_json_through_the_cache_matches_the_ordinary_path(capsys, tmp_path):
    path = cached_gzip_file(tmp_path, capsys)
    code, uncached = run(capsys, "cat", "--json", "--no-cache", "--range=-2:", path)
    assert code == 0 and len(uncached.splitlines()) == 2
    code, out, _ = cat_in_run_fresh("cat", "--json", "--range=-2:", path)
    assert (code, out) == (0, uncached)  # the same bytes from another process: feature maps in key order
    assert list(json.loads(out.splitlines()[0])["value"]["features"]["feature"]) == ["data", "label"]


def test_cat_through_the_cache_still_checks_the_data_crc(capsys, tmp_path):
    recs = example_records(1200, 1000, seed=6)
    path = str(tmp_path / "plain.tfrecord")
    write_records(path, recs)
    assert run(capsys, "cat", "--range=-1:", path)[0] == 0  # the whole file indexed: the index is cached
    last = record_offset(recs, len(recs) - 1)
    flip_in_place(path, last + HEADER_SIZE + len(recs[-1]) - 1)  # bit rot the cache cannot see

    code, out, imported = cat_in_run_fresh("cat", "--range=-1:", path)
    assert code == 1
    assert out.splitlines()[0] == f"# record 1199  offset {last:,}  length {len(recs[-1]):,}  data_crc  example"
    assert "numpy" not in imported
    assert run(capsys, "cat", "--no-cache", "--range=-1:", path) == (code, out)
    code, out, _ = cat_in_run_fresh("cat", "--no-crc", "--range=-1:", path)
    assert code == 0 and "  ok  " in out.splitlines()[0]


def test_cat_of_a_changed_file_does_not_use_its_stale_cache_entry(capsys, tmp_path):
    recs = example_records(1200, 1000, seed=7)
    path = str(tmp_path / "plain.tfrecord")
    write_records(path, recs)
    assert run(capsys, "cat", "--range=0", path)[0] == 0
    write_records(path, recs[:-1])  # one record fewer: another size and mtime
    code, out, _ = cat_in_run_fresh("cat", "--range=-1:", path)
    assert code == 0 and out.startswith("# record 1198  ")


# -- main: signals and outputs ---------------------------------------------------------------
def test_index_over_its_own_input_is_refused(capsys, tmp_path):
    path = str(tmp_path / "small.tfrecord")
    write_records(path, records(10, 30))
    before = open(path, "rb").read()
    for fmt in ("native", "dali"):
        assert main(["index", "--format", fmt, "-o", path, path]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "must not replace its source" in err and path in err
    assert open(path, "rb").read() == before


def test_sigterm_during_any_command_leaves_no_temporary_file(capsys, tmp_path, monkeypatch):
    import signal

    work = tmp_path / "work"
    work.mkdir()
    path = str(work / "small.tfrecord")
    write_records(path, records(50, 30))
    out_path = work / "out.tfri"
    real = index_cache.write_native_index

    def write_then_terminated(tfile, out):
        real(tfile, out)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(index_cache, "write_native_index", write_then_terminated)
    code = main(["index", "-o", str(out_path), path])
    assert code == 128 + signal.SIGTERM
    assert capsys.readouterr().err == "tfrlens-cli: stopped by SIGTERM\n"
    assert sorted(os.listdir(work)) == ["small.tfrecord"]  # neither the index nor its temporary file
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_cache_write_cut_short_leaves_nothing_and_old_leftovers_are_swept(tmp_path):
    import time

    from codec.storage import temp_files

    folder = tmp_path / "index-cache"
    folder.mkdir()
    leftover = folder / f".x.tfri.tfrlens-{os.getpid()}-{temp_files._host_tag()}-0123abcd.tmp"
    leftover.write_bytes(b"half an entry")
    day_old = time.time() - 2 * temp_files.STALE_AGE
    os.utime(leftover, (day_old, day_old))

    with pytest.raises(TypeError):  # a write that fails half-way (not an OSError: it is raised)
        index_cache._write_entry(str(folder / "x.tfri"), index_cache.MAGIC, {"count": 0}, [b"ok", object()])
    assert os.listdir(folder) == []  # the failed entry's temporary file and the stale one are gone

    assert index_cache._write_entry(str(folder / "x.tfri"), index_cache.MAGIC, {"count": 0}, []) is not None
    assert os.listdir(folder) == ["x.tfri"]


def test_a_parser_of_one_command_reads_as_the_whole_one(capsys):
    from codec.cli import main as cli

    whole = cli.build_parser()
    subparsers = next(a for a in whole._actions if a.dest == "command")
    assert tuple(subparsers.choices) == cli.COMMANDS
    for name in cli.COMMANDS:
        one = cli.build_parser(name)
        assert one.format_usage() == whole.format_usage()
        assert one._subparsers._group_actions[0].choices[name].format_help() == subparsers.choices[name].format_help()
    with pytest.raises(SystemExit) as exc:
        main(["cat", "x.tfrecord", "--bogus"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "tfrlens-cli: error: unrecognized arguments: --bogus\n"
