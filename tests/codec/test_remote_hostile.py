"""Hostile remote servers and secrets in URLs, against the command line as a whole process: a body
that never ends, a drip, wrong bytes, 5xx, a refused connection, Ctrl-C. Every one ends with its
exit code and exactly one line on stderr, no traceback, no secret anywhere, in bounded time and
memory (the child's peak RSS), and no cache entry for bytes that were not the object's.
Each test runs whole processes (the issue's bar is the process's), so each takes 2-7 s:
the interpreter's start, and the retries' backoff of a 5xx or a refused connection."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

from benchmarks.attacks import CLI, ROOT, run
from benchmarks.attacks_remote import interruptible
from codec import TFRecordWriter
from codec.storage.url_secrets import carries_credentials, redact, redact_text, without_credentials
from tests.remote_servers import RangeServer

SECRET = "S3CR3TSIG0123456789"
QUERY = f"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE&X-Amz-Signature={SECRET}"
COUNT = 1500
MEMORY_MB = 400  # the interpreter with numpy and aiohttp is ~120 MB; an uncapped body grew to GBs


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    """A folder holding a 1.5 MB TFRecord file (over the cache's minimum size: it is cached)."""
    root = tmp_path_factory.mktemp("hostile")
    with TFRecordWriter(str(root / "data.tfrecord"), "none") as w:
        for i in range(COUNT):
            w.write(i.to_bytes(8, "little") + bytes([i % 251]) * 992)
    return root


def _cli(cache: Path, args: list[str], timeout: float = 60, **env: str):
    """(exit code, stdout, stderr, seconds, peak MiB) of the CLI with a private cache and ``env``."""
    env = {"TFRLENS_CACHE_DIR": str(cache), "PYTHONPATH": ROOT, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
           **env}
    code, out, err, secs, peak = run(args, timeout=timeout, env=env)
    return code, out.decode(), err.decode(), secs, peak


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("tfrlens-cli: "), err
    return lines[0]


def _no_secret(cache: Path, *texts: str) -> None:
    for text in texts:
        assert SECRET not in text and "AKIDEXAMPLE" not in text, text
    for path in cache.rglob("*") if cache.exists() else ():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def _entries(cache: Path) -> list[Path]:
    return list(cache.rglob("*.tfri")) if cache.exists() else []


@pytest.mark.network
@pytest.mark.parametrize("mode", ["endless", "chunked"])
def test_a_body_that_never_ends_costs_the_bytes_asked(served, tmp_path, mode):
    with RangeServer(served, hostile=mode) as srv:
        code, out, err, secs, peak = _cli(tmp_path, ["verify", srv.url_for("data.tfrecord") + QUERY])
    line = _one_line(err)
    assert code == 2 and "bytes 0-262143" in line and "longer than the 262144 bytes asked" in line, line
    assert "data.tfrecord?…" in line
    assert peak < MEMORY_MB and secs < 30, (peak, secs)
    _no_secret(tmp_path, out, err)
    assert not _entries(tmp_path)


@pytest.mark.network
def test_a_drip_meets_the_deadline(served, tmp_path):
    # One byte every 0.2 s never trips the idle timeout; the deadline (1 s + the size at the rate) does.
    with RangeServer(served, hostile="drip", drip=0.2) as srv:
        code, _, err, secs, _ = _cli(tmp_path, ["verify", srv.url_for("data.tfrecord") + QUERY],
                                     TFRLENS_REMOTE_TIMEOUT="1", TFRLENS_REMOTE_MIN_RATE="1e9")
    line = _one_line(err)
    assert code == 2 and line.startswith("tfrlens-cli: timed out reading http://") and secs < 15, (line, secs)
    assert "data.tfrecord?… bytes 0-262143 after 1 s" in line and "TFRLENS_REMOTE_MIN_RATE" in line, line
    _no_secret(tmp_path, err)


@pytest.mark.network
def test_silence_trips_the_idle_timeout_and_is_tried_once_more(served, tmp_path):
    with RangeServer(served, hostile="drip", drip=30) as srv:
        code, _, err, secs, _ = _cli(tmp_path, ["info", srv.url_for("data.tfrecord")],
                                     TFRLENS_REMOTE_TIMEOUT="0.5")
        gets = len(srv.stats.ranges)
    line = _one_line(err)
    assert code == 2 and "timed out reading" in line and "no data for 0.5 s (TFRLENS_REMOTE_TIMEOUT)" in line, line
    assert gets == 2 and secs < 15, (gets, secs)


@pytest.mark.network
def test_a_bad_timeout_setting_is_a_usage_error(served, tmp_path):
    with RangeServer(served) as srv:
        code, _, err, _, _ = _cli(tmp_path, ["info", srv.url_for("data.tfrecord")], TFRLENS_REMOTE_TIMEOUT="soon")
    assert code == 2 and "TFRLENS_REMOTE_TIMEOUT='soon': expected a positive number" in _one_line(err)


@pytest.mark.network
def test_a_content_range_naming_other_bytes_is_an_error_and_nothing_is_cached(served, tmp_path):
    with RangeServer(served, hostile="lying") as srv:
        code, out, err, _, _ = _cli(tmp_path, ["verify", srv.url_for("data.tfrecord") + QUERY])
    line = _one_line(err)
    assert code == 2 and "the server answered with other bytes (Content-Range: bytes 0-" in line, line
    assert not _entries(tmp_path)
    _no_secret(tmp_path, out, err)


@pytest.mark.network
def test_wrong_bytes_under_honest_headers_are_problems_never_a_cached_index(served, tmp_path):
    with RangeServer(served, hostile="shifted") as srv:
        url = srv.url_for("data.tfrecord")
        code, out, err, _, _ = _cli(tmp_path, ["verify", url])
        assert code == 1 and "problem" in out and not err
        assert not _entries(tmp_path)  # the next open reads again


@pytest.mark.network
def test_a_5xx_with_a_presigned_url_is_said_once_without_the_secret(served, tmp_path):
    with RangeServer(served, hostile="5xx") as srv:
        url = srv.url_for("data.tfrecord") + QUERY
        code, out, err, _, _ = _cli(tmp_path, ["verify", "--json", url])
    line = _one_line(err)
    assert code == 2 and "the server answered 503" in line and line.count("http://") == 1, line
    _no_secret(tmp_path, out, err)


def test_a_refused_connection_says_so_and_hints_aws_only_for_s3(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    url = f"http://user:hunter2pass@127.0.0.1:{port}/data.tfrecord{QUERY}"
    code, _, err, secs, _ = _cli(tmp_path, ["info", url])
    line = _one_line(err)
    assert code == 2 and secs < 30
    assert f"cannot connect to http://user:…@127.0.0.1:{port}/data.tfrecord?… (connection refused)" in line, line
    assert "AWS_ENDPOINT_URL" not in line and "hunter2pass" not in line
    _no_secret(tmp_path, err)


@pytest.mark.network
def test_ctrl_c_while_reading_is_exit_130_and_one_line(served, tmp_path):
    with RangeServer(served, hostile="drip", drip=0.5) as srv:
        env = {**os.environ, "TFRLENS_CACHE_DIR": str(tmp_path), "PYTHONPATH": ROOT, "NO_PROXY": "127.0.0.1"}
        proc = subprocess.Popen(CLI + ["verify", srv.url_for("data.tfrecord") + QUERY], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
        deadline = time.monotonic() + 30
        while not srv.stats.ranges and time.monotonic() < deadline:  # a ranged read is in flight
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.decode() == "tfrlens-cli: interrupted\n", err


def test_redaction_of_queries_passwords_and_chains():
    signed = f"https://h.example/b/data.tfrecord{QUERY}"
    assert redact(signed) == "https://h.example/b/data.tfrecord?…"
    assert redact("simplecache::https://u:pw@h/p?sig=1#frag") == "simplecache::https://u:…@h/p?…#…"
    assert redact("s3://bucket/key") == "s3://bucket/key" and redact("https://h/p?") == "https://h/p?"
    assert without_credentials("simplecache::https://u:pw@h:8443/p?sig=1") == "simplecache::https://h:8443/p"
    assert carries_credentials(f"simplecache::{signed}") and carries_credentials("filecache::https://u:p@h/x")
    assert not carries_credentials("s3://bucket/key?versionId=3")
    text = f"503 for url='{signed}'; quoted {QUERY[1:]}: see {signed}."
    scrubbed = redact_text(text, [signed])
    assert SECRET not in scrubbed and "url='https://h.example/b/data.tfrecord?…'" in scrubbed
    assert scrubbed.endswith("see https://h.example/b/data.tfrecord?….")


@pytest.mark.network
def test_a_chained_signed_url_is_verified_and_cached_without_its_secret(served, tmp_path):
    with RangeServer(served) as srv:
        url = f"simplecache::{srv.url_for('data.tfrecord')}{QUERY}"
        code, out, err, _, _ = _cli(tmp_path / "cache", ["verify", url],
                                    TMPDIR=str(tmp_path))
    assert code == 0 and not err and f"{COUNT:,} records, {COUNT:,} ok, 0 problem(s)" in out, err
    assert "data.tfrecord?…:" in out
    entries = _entries(tmp_path / "cache")
    assert len(entries) == 1 and b'"verified": true' in entries[0].read_bytes()
    _no_secret(tmp_path / "cache", out)


if sys.platform != "linux":  # the peak memory is read from /proc
    pytestmark = pytest.mark.skip(reason="Linux only")
