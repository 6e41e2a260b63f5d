"""The command line reads only as far as a command needs, and writes no binary to a terminal."""
from __future__ import annotations

import io
import os
import subprocess
import sys

from codec import TFRecordFile, index_cache

from .conftest import ROOT, fixture_path


def _run_on_a_terminal(*argv: str) -> tuple[int, bytes, str]:
    """``tfrlens-cli argv`` as a whole process whose stdout is a pseudo-terminal: (exit code, what
    reached the terminal, stderr)."""
    leader, follower = os.openpty()
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-m", "codec.cli", *argv], stdout=follower, stderr=subprocess.PIPE,
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
        proc = subprocess.run([sys.executable, "-m", "codec.cli", "index", fixture_path("structured.tfrecord")],
                              stdout=sink, stderr=subprocess.PIPE, cwd=ROOT, timeout=60,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0 and proc.stderr == b""
    expected = io.BytesIO()
    with TFRecordFile(fixture_path("structured.tfrecord")) as f:
        f.build_index()
        index_cache.write_native_index(f, expected)
    assert out.read_bytes() == expected.getvalue()
