"""The command line reads only as far as a command needs, and writes no binary to a terminal."""
from __future__ import annotations

import base64
import io
import json
import os
import random
import subprocess
import sys

import pytest

from codec import TFRecordFile
from codec.cli.main import main
from codec.decode.example_proto import Example, Feature, Int64List
from codec.format.framing import Compression
from codec.index import cache as index_cache
from codec.ops.export import records_stop
from codec.sources.cached_records import range_stop
from codec.storage.file_identity import FileIdentity
from codec.storage.writer import write_records
from tests.builders import fixture_path

from .conftest import ROOT, flip_in_place, record_offset


def _run_on_a_terminal(*argv: str) -> tuple[int, bytes, str]:
    """``tfrlens-cli argv`` as a whole process whose stdout is a pseudo-terminal: (exit code, what
    reached the terminal, stderr)."""
    leader, follower = os.openpty()
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-m", "codec.cli.main", *argv], stdout=follower, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, cwd=ROOT, env=env, timeout=60, text=True)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other side is closed and everything was read
                break
            if not chunk:
                break
            shown += chunk
        return proc.returncode, shown, proc.stderr
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)


def test_index_refuses_to_write_binary_to_a_terminal():
    code, shown, err = _run_on_a_terminal("index", fixture_path("structured.tfrecord"))
    assert code == 2
    assert shown == b""
    assert err == "tfrlens-cli: refusing to write a binary index to a terminal; use -o FILE or redirect\n"


def test_index_in_dali_text_is_written_to_a_terminal():
    code, shown, err = _run_on_a_terminal("index", "--format", "dali", fixture_path("flowers_jpeg.tfrecord"))
    assert code == 0 and err == ""
    first = shown.decode().splitlines()[0].split()
    assert first[0] == "0" and int(first[1]) > 0


def test_index_redirected_is_written(tmp_path):
    out = tmp_path / "structured.index"
    with open(out, "wb") as sink:
        proc = subprocess.run([sys.executable, "-m", "codec.cli.main", "index", fixture_path("structured.tfrecord")],
                              stdout=sink, stderr=subprocess.PIPE, cwd=ROOT, timeout=60,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0 and proc.stderr == b""
    expected = io.BytesIO()
    with TFRecordFile(fixture_path("structured.tfrecord")) as f:
        f.build_index()
        index_cache.write_native_index(f, expected)
    assert out.read_bytes() == expected.getvalue()


# -- commands that need only the first records read only as far as those ------------------------------

def _big_records(n: int, size: int) -> list[bytes]:
    rng = random.Random(5)
    block = rng.randbytes(size + 4096)
    return [i.to_bytes(4, "little") + block[i % 4096:i % 4096 + size - 4] for i in range(n)]


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A 20 MB plain file and its GZIP twin of 200 records of 100 KB, served over HTTP."""
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    root = tmp_path_factory.mktemp("lazy")
    records = _big_records(200, 100_000)
    write_records(root / "big.tfrecord", records)
    write_records(root / "big.tfrecord.gz", records, "gzip")
    with range_server(root) as srv:
        yield srv, root, records


@pytest.mark.network
@pytest.mark.parametrize("name", ["big.tfrecord", "big.tfrecord.gz"])
def test_cat_of_the_first_records_of_a_url_fetches_only_those(capsys, served, name):
    srv, root, records = served
    srv.stats.reset()
    code, out, err = _cli(capsys, "cat", "--json", "--range", "0:2", srv.url_for(name))
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["index"], x["length"]) for x in lines] == [(0, 100_000), (1, 100_000)]
    assert [base64.b64decode(x["value"]["base64"]) for x in lines] == records[:2]
    assert srv.stats.bytes <= 8 << 20, srv.stats.bytes  # of a 20 MB file: the bar (the pass reads ahead)


@pytest.mark.network
def test_export_of_the_first_records_of_a_url_fetches_only_those(capsys, served, tmp_path):
    srv, _, records = served
    srv.stats.reset()
    out = tmp_path / "first.tfrecord"
    code, _, err = _cli(capsys, "export", "--records", "1,3:5", "--to", str(out), srv.url_for("big.tfrecord"))
    assert code == 0 and "wrote 3 records" in err
    assert list(TFRecordFile(out).build_index()) == [records[1], records[3], records[4]]
    assert srv.stats.bytes <= 8 << 20, srv.stats.bytes


def test_cat_of_the_first_records_stops_before_damage_further_on(capsys, tmp_path):
    records = _big_records(2000, 2_000)
    path = tmp_path / "damaged_tail.tfrecord"
    write_records(path, records)
    flip_in_place(path, record_offset(records, 1990) + 1)  # the length of record 1990: its length CRC fails
    code, out, _ = _cli(capsys, "cat", "--json", "--range", "5:7", str(path))
    assert code == 0  # what was read is intact; nothing past it was read
    assert [json.loads(line)["index"] for line in out.splitlines()] == [5, 6]
    assert not index_cache.has_entry(str(path), path.stat().st_size, FileIdentity.of(path.stat()).stamp, Compression.NONE)
    code, out, _ = _cli(capsys, "cat", "--json", "--range", "1988:1991", str(path))  # reads past the damage
    assert code == 1 and [json.loads(line)["index"] for line in out.splitlines()] == [1988, 1989, 1990]
    code, _, _ = _cli(capsys, "cat", "--json", "--range=-1:", str(path))  # an open end: the whole pass
    assert code == 1
    assert index_cache.has_entry(str(path), path.stat().st_size, FileIdentity.of(path.stat()).stamp, Compression.NONE)


@pytest.mark.parametrize("text,stop", [("0:1", 1), ("5", 6), (":3", 3), ("2:2", 2), ("-1:", None), ("3:", None),
                                       ("-5:-2", None), ("0:-1", None), (None, None), ("x", None)])
def test_the_end_of_a_range_known_without_counting(text, stop):
    assert range_stop(text) == stop


@pytest.mark.parametrize("spec,stop", [("1,3,10:20", 20), ("7", 8), (":4", 4), ("2:", None), ("-1", None),
                                       ("1,-2:", None), ("a", None), (None, None)])
def test_the_end_of_a_records_spec_known_without_counting(spec, stop):
    assert records_stop(spec) == stop


def test_a_range_read_lazily_prints_what_the_whole_pass_prints(capsys, tmp_path):
    path = tmp_path / "examples.tfrecord"
    write_records(path, [Example(features={"feature": {"i": Feature(int64_list=Int64List(value=[i]))}})
                         .SerializeToString() for i in range(3000)])
    for argv in (["cat", "--json"], ["cat"]):
        everything = _cli(capsys, *argv, "--no-cache", str(path))[1].splitlines(keepends=True)
        per_record = len(everything) // 3000
        lazy = _cli(capsys, *argv, "--no-cache", "--range", "1200:1203", str(path))[1]
        assert lazy == "".join(everything[1200 * per_record:1203 * per_record])
