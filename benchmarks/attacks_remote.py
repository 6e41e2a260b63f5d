"""Hostile remote servers and secrets in URLs, against the command line as whole processes.

Reruns the remote attacks at full scale (the default timeouts, a 64 MB file) on loopback
servers and prints one line per attack (see benchmarks/attacks.py): exit code, stderr's
line, time, the child's peak memory, and PASS/FAIL against the bar: one line, no
traceback, no secret on stderr, stdout or in the cache folder, at most 200 MB, no hang,
no cache entry of bytes that were not the object's.

    .venv/bin/python benchmarks/attacks_remote.py       (about 2 minutes; the drip takes 34 s)
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.attacks import CLI, MEMORY_BAR_MB, ROOT, records, report, run, summary, write  # noqa: E402
from tests.remote_servers import RangeServer  # noqa: E402

SECRET = "S3CR3TSIG0123456789"
QUERY = f"?X-Amz-Credential=AKIDEXAMPLE&X-Amz-Signature={SECRET}"


def _env(cache: str) -> dict:
    return {"TFRLENS_CACHE_DIR": cache, "PYTHONPATH": ROOT, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


def _secret_in(cache: str, *texts: bytes) -> bool:
    if any(SECRET.encode() in t for t in texts):
        return True
    for folder, _, names in os.walk(cache):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                if SECRET.encode() in f.read():
                    return True
    return False


def _cached(cache: str) -> int:
    return sum(name.endswith(".tfri") for _, _, names in os.walk(cache) for name in names)


def attack(root: str, tmp: str, name: str, mode: str, expect: int, args=("verify",), timeout=300, **server):
    """One attack: ``mode`` served, the CLI run on the signed URL, the bar checked."""
    cache = tempfile.mkdtemp(dir=tmp)
    with RangeServer(root, hostile=mode, **server) as srv:
        code, out, err, secs, peak = run([*args, srv.url_for("big.tfrecord") + QUERY], timeout, _env(cache))
    lines = err.decode(errors="replace").strip().splitlines()
    line = lines[-1] if lines else ""
    one = len(lines) == (1 if expect == 2 else 0) and b"Traceback" not in err
    leak = _secret_in(cache, out, err)
    entries = _cached(cache)
    ok = code == expect and one and not leak and peak <= MEMORY_BAR_MB and (entries == 0 or mode == "")
    report(name, ok, f"exit {code}, {secs:.1f} s, peak {peak:.0f} MB, {entries} cache entries"
           f"{', SECRET LEAKED' if leak else ''}: {line[:110]}")


def attack_refused(tmp: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = tempfile.mkdtemp(dir=tmp)
    code, out, err, secs, _ = run(["info", f"http://127.0.0.1:{port}/big.tfrecord{QUERY}"], 120, _env(cache))
    line = err.decode(errors="replace").strip()
    ok = code == 2 and "\n" not in line and "connection refused" in line and "AWS_ENDPOINT_URL" not in line \
        and not _secret_in(cache, out, err)
    report("connection refused over http://", ok, f"exit {code}, {secs:.1f} s: {line[:110]}")


def interruptible() -> None:
    """In the child: SIGINT as a terminal sends it (a shell's background job inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def attack_ctrl_c(root: str, tmp: str) -> None:
    cache = tempfile.mkdtemp(dir=tmp)
    with RangeServer(root, hostile="drip", drip=2.0) as srv:
        proc = subprocess.Popen(CLI + ["verify", srv.url_for("big.tfrecord") + QUERY], cwd=ROOT,
                                env={**os.environ, **_env(cache)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=interruptible)
        deadline = time.monotonic() + 60
        while not srv.stats.ranges and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.0)  # a byte or two dripped
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    text = err.decode(errors="replace")
    report("Ctrl-C while a drip is being read", proc.returncode == 130 and text == "tfrlens-cli: interrupted\n",
           f"exit {proc.returncode}: {text.strip()[:110]}")


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="tfrlens-attacks-remote-")
    try:
        root = os.path.join(tmp, "served")
        os.makedirs(root)
        write(os.path.join(root, "big.tfrecord"), records(64_000, 1000))  # 64 MB
        attack(root, tmp, "honest server, signed URL (baseline)", "", 0)
        attack(root, tmp, "206, no Content-Length, endless body", "endless", 2)
        attack(root, tmp, "206, endless chunks", "chunked", 2)
        attack(root, tmp, "one byte every 2 s (default timeouts)", "drip", 2)
        attack(root, tmp, "Content-Range naming other bytes", "lying", 2)
        attack(root, tmp, "honest headers, bytes 4099 further on", "shifted", 1)
        attack(root, tmp, "503 to every GET of a signed URL", "5xx", 2)
        attack_refused(tmp)
        attack_ctrl_c(root, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
