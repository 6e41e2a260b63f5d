"""``tfrlens-cli cat --follow`` as a whole process, while another thread appends to the file in pieces.

Each test runs the command as a process (~1-2 s to start on a loaded 2-core machine, which is the
point: the real command, signals and pipes); those that write in pieces append ~50 times 20 ms
apart, so that the command (looking every 0.2 s) meets the file stopped inside records many times.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import zlib

import pytest

from codec.format.framing import OVERHEAD, encode_record
from tests.builders import example

from .conftest import ROOT

WAIT = 60  # seconds a record may take to show up before the test fails (a loaded 2-core machine)


def numbered(i: int) -> bytes:
    return example(id=i, even=int(i % 2 == 0))


class Cat:
    """``cat --follow`` running on ``path``; its stdout lines arrive on a queue."""

    def __init__(self, path, *extra: str) -> None:
        env = dict(os.environ, PYTHONPATH=os.fspath(ROOT), PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "codec.cli.main", "cat", os.fspath(path), "--follow", *extra],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def take(self, n: int) -> list[dict]:
        """The next ``n`` JSON lines (fails if they do not come)."""
        got = []
        deadline = time.monotonic() + WAIT
        while len(got) < n:
            try:
                got.append(json.loads(self.lines.get(timeout=max(0.1, deadline - time.monotonic()))))
            except queue.Empty:
                self.proc.kill()
                pytest.fail(f"only {len(got)} of {n} records printed; stderr: {self.proc.stderr.read()}")
        return got

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=WAIT)
        return code, self.proc.stderr.read()


def write_in_pieces(path, data: bytes, record_ends: list[int], done: int, co=None) -> None:
    """Append ``data`` from ``done`` on in pieces that mostly stop inside a record (a header, its data,
    its CRC), with pauses so the reader looks at the file in between; through the compressor ``co``
    (flushed after each piece)."""
    cuts = []
    for k, end in enumerate(record_ends):
        cuts.append(end - (1 + (k * 7) % (OVERHEAD + 5)))  # inside the record that ends at ``end``
        if k % 3 == 0:
            cuts.append(end)
    for cut in sorted(set(c for c in cuts if c > done)) + [len(data)]:
        piece = data[done:cut]
        with open(path, "ab") as f:
            f.write(piece if co is None else co.compress(piece) + co.flush(zlib.Z_SYNC_FLUSH))
        done = cut
        time.sleep(0.02)


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_cat_follow_json_prints_each_appended_record_once_in_order(tmp_path, compression):
    records = [encode_record(numbered(i)) for i in range(40)]
    data = b"".join(records)
    ends = [sum(map(len, records[:k + 1])) for k in range(len(records))]
    path = tmp_path / "growing.tfrecord"
    co = zlib.compressobj(6, zlib.DEFLATED, 31) if compression == "gzip" else None
    head = data[:ends[4] + 7]  # five records and a few bytes of the sixth
    path.write_bytes(head if co is None else co.compress(head) + co.flush(zlib.Z_SYNC_FLUSH))
    cat = Cat(path, "--json")
    first = cat.take(5)
    writer = threading.Thread(target=write_in_pieces, args=(path, data, ends, len(head), co))
    writer.start()
    rest = cat.take(35)
    writer.join()
    code, err = cat.interrupt()
    printed = first + rest
    assert [r["index"] for r in printed] == list(range(40))
    assert all(r["status"] == "ok" for r in printed)
    ids = [r["value"]["features"]["feature"]["id"]["int64List"]["value"] for r in printed]
    assert ids == [[str(i)] for i in range(40)]
    assert cat.lines.empty()
    assert code == 130
    assert "Traceback" not in err and len(err.splitlines()) <= 1 and "problem" not in err


def test_cat_follow_where_prints_only_matches(tmp_path):
    records = [encode_record(numbered(i)) for i in range(20)]
    data = b"".join(records)
    ends = [sum(map(len, records[:k + 1])) for k in range(len(records))]
    path = tmp_path / "growing.tfrecord"
    path.write_bytes(data[:ends[1]])
    cat = Cat(path, "--json", "--where", "even == 1")
    assert [r["index"] for r in cat.take(1)] == [0]
    write_in_pieces(path, data, ends, ends[1])
    assert [r["index"] for r in cat.take(9)] == list(range(2, 20, 2))
    code, err = cat.interrupt()
    assert code == 130 and "Traceback" not in err


def test_cat_follow_range_ends_at_its_last_record(tmp_path):
    records = [encode_record(numbered(i)) for i in range(6)]
    path = tmp_path / "f.tfrecord"
    path.write_bytes(b"".join(records[:2]))
    cat = Cat(path, "--json", "--range", "1:4")
    assert [r["index"] for r in cat.take(1)] == [1]
    with open(path, "ab") as f:
        f.write(b"".join(records[2:]))
    assert [r["index"] for r in cat.take(2)] == [2, 3]
    assert cat.proc.wait(timeout=WAIT) == 0


def test_cat_follow_stops_with_one_line_when_the_file_is_replaced(tmp_path):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(encode_record(numbered(0)))
    cat = Cat(path, "--json")
    cat.take(1)
    other = tmp_path / "other"
    other.write_bytes(encode_record(numbered(1)) * 3)
    os.replace(other, path)
    code = cat.proc.wait(timeout=WAIT)
    err = cat.proc.stderr.read()
    assert code == 2 and err.startswith("tfrlens-cli: stopped following: ") and "replaced" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--range=-3:"], "bad --range '-3:' with --follow"),
    (["https://example.com/x.tfrecord"], "not a URL"),
])
def test_cat_follow_refuses_what_it_cannot_follow(tmp_path, capsys, argv, message):
    from codec.cli.main import main

    path = tmp_path / "f.tfrecord"
    path.write_bytes(encode_record(numbered(0)))
    args = [a for a in argv if a.startswith("http")] or [os.fspath(path)]
    code = main(["cat", *args, "--follow", *[a for a in argv if not a.startswith("http")]])
    assert code == 2 and message in capsys.readouterr().err


def test_cat_follow_ends_quietly_when_head_has_enough(tmp_path):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(b"".join(encode_record(numbered(i)) for i in range(3)))
    env = dict(os.environ, PYTHONPATH=os.fspath(ROOT))
    shell = f"set -o pipefail; {sys.executable} -m codec.cli.main cat {path} --follow --json | head -n 2"
    proc = subprocess.Popen(["bash", "-c", shell], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT
    i = 3
    while proc.poll() is None and time.monotonic() < deadline:  # records keep coming until one meets the closed pipe
        with open(path, "ab") as f:
            f.write(encode_record(numbered(i)))
        i += 1
        time.sleep(0.1)
    out, err = proc.communicate(timeout=WAIT)
    assert len(out.splitlines()) == 2 and proc.returncode == 0
    assert err == ""
