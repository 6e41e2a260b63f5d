"""Remote files over HTTP, measured in seconds, bytes and round trips.

    .venv/bin/python benchmarks/bench_remote.py [--latency 0.02] [--small 1000000] [--big 10000] [--cli-only]

Serves two files, written to a folder under /tmp and removed at the end, with the tests'
range-serving HTTP server on 127.0.0.1, every request delayed by ``--latency``:

- ``remote_big``: ``--big`` records of 100 KB (10,000: a 1 GB file);
- ``remote_small``: ``--small`` records of about 100 bytes (1M: ~116 MB).

For each it prints: a plain download of the file (one GET, streamed and dropped:
the floor for any pass over it; best of 3); the first record (open, the first
progress of the index pass, record 0); the full index pass (no cache entry;
best of 3) and its ratio to the download; every record read in order after indexing (what ``cat``, ``export``
and ``repair`` do); 100 random records after indexing; and the last record
after a reopen from the index cache. Bytes and requests are counted by the server.
Then the command line as a user runs it (whole processes, no index cache), beside ``curl``
downloading the whole file: ``cat --json --range 0:1 URL`` (bar: 1.5 s and 8 MiB) and
``info URL``, the full index pass (bar: 1.5x curl's time + 1 s).
TensorFlow has no HTTP filesystem (it reads gs:// and s3:// only front to back),
so there is no TensorFlow figure here.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import peak_rss_mb  # noqa: E402
from codec import TFRecordFile, write_records  # noqa: E402
from codec.index import cache as index_cache  # noqa: E402
from tests.remote_servers import RangeServer  # noqa: E402

MiB = 1 << 20
RUNS = 3  # the download and the index pass: best of


def big_records(n: int):
    block = os.urandom(1 << 20)
    for i in range(n):
        start = (i * 7919) % (len(block) - 100_000)
        yield i.to_bytes(8, "little") + block[start:start + 100_000 - 8]


def small_records(n: int):
    for i in range(n):
        yield i.to_bytes(8, "little") + b"s" * (60 + i % 80)


def ensure(folder: str, name: str, records) -> str:
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        write_records(path + ".part", records)
        os.replace(path + ".part", path)
    return path


class ServerProcess:
    """The range server in a child process, so that its work does not share this process's
    GIL with the reader (a real server is another machine); driven over a pipe."""

    def __init__(self, root: str) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(root, child), daemon=True)
        self._proc.start()
        self.url: str = self._conn.recv()

    def url_for(self, name: str) -> str:
        return f"{self.url}/{name}"

    def call(self, *command):
        self._conn.send(command)
        return self._conn.recv()

    def stop(self) -> None:
        self.call("stop")
        self._proc.join(5)


def _serve(root: str, conn) -> None:
    with RangeServer(root) as srv:
        conn.send(srv.url_for("").rstrip("/"))
        while True:
            command = conn.recv()
            if command[0] == "stop":
                conn.send(None)
                return
            if command[0] == "latency":
                srv.latency = command[1]
            elif command[0] == "reset":
                srv.stats.reset()
            conn.send((srv.stats.requests, srv.stats.bytes))


def download_seconds(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url) as r:
        while r.read(8 * MiB):
            pass
    return time.perf_counter() - start


def _mib_requests(srv: ServerProcess) -> tuple[float, int]:
    requests, fetched = srv.call("stats")
    return fetched / MiB, requests


def run(srv: ServerProcess, name: str, path: str, latency: float) -> dict:
    url = srv.url_for(os.path.basename(path))
    size = os.path.getsize(path)
    out: dict = {"file": name, "size_mib": size / MiB}
    srv.call("latency", latency)
    out["download_s"] = min(download_seconds(url) for _ in range(RUNS))

    srv.call("reset")
    start = time.perf_counter()
    f = TFRecordFile(url, use_cache=False)
    passing = f.index_iter()
    next(passing)
    f[0]
    out["first_s"] = time.perf_counter() - start
    out["first_mib"], out["first_req"] = _mib_requests(srv)
    passing.close()

    best = float("inf")
    for _run in range(RUNS):
        index_cache.invalidate(url)
        srv.call("reset")
        start = time.perf_counter()
        f = TFRecordFile(url)  # the cache is on: the last pass fills it
        f.build_index()
        best = min(best, time.perf_counter() - start)
    out["index_s"] = best
    out["index_mib"], out["index_req"] = _mib_requests(srv)
    out["records"] = len(f)

    srv.call("reset")
    start = time.perf_counter()
    for i in range(len(f)):  # what cat, export and repair do
        f.read(i)
    out["in_order_s"] = time.perf_counter() - start
    out["in_order_mib"], out["in_order_req"] = _mib_requests(srv)

    rng = random.Random(1)
    picks = [rng.randrange(len(f)) for _ in range(100)]
    srv.call("reset")
    start = time.perf_counter()
    for i in picks:
        f[i]
    out["random_ms"] = (time.perf_counter() - start) * 1000 / len(picks)
    requests, fetched = srv.call("stats")
    out["random_kib"], out["random_req"] = fetched / 1024 / len(picks), requests / len(picks)

    srv.call("reset")
    start = time.perf_counter()
    g = TFRecordFile(url)
    g.build_index()
    g[-1]
    out["reopen_last_s"] = time.perf_counter() - start
    out["reopen_last_mib"], out["reopen_last_req"] = _mib_requests(srv)
    srv.call("latency", 0.0)
    return out


CAT_FIRST_BAR_S, CAT_FIRST_BAR_MIB = 1.5, 8.0


def _timed_process(cmd: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed


def run_cli(srv: ServerProcess, path: str, latency: float) -> dict:
    """Whole processes: curl's download, ``cat --json --range 0:1`` and ``info`` (best of RUNS each)."""
    url = srv.url_for(os.path.basename(path))
    env = dict(os.environ, PYTHONPATH=ROOT, TFRLENS_CACHE_DIR=tempfile.mkdtemp(prefix="tfrlens-bench-cli-"))
    # As an installed package runs: from compiled bytecode (kept under a temporary folder, not the
    # checkout), not compiling every module at each start as PYTHONDONTWRITEBYTECODE would have it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(env["TFRLENS_CACHE_DIR"], "bytecode")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "codec")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    cli = [sys.executable, "-m", "codec.cli.main"]
    srv.call("latency", latency)
    out: dict = {"file": os.path.basename(path), "size_mib": os.path.getsize(path) / MiB}
    curl = shutil.which("curl")
    if curl:
        out["curl_s"] = min(_timed_process([curl, "-sf", "-o", os.devnull, url]) for _ in range(RUNS))
    for key, argv in (("cat_first", ["cat", "--json", "--no-cache", "--range", "0:1", url]),
                      ("info", ["info", "--no-cache", url])):
        best = None
        for _ in range(RUNS):
            srv.call("reset")
            took = _timed_process(cli + argv, env)
            requests, fetched = srv.call("stats")
            if best is None or took < best[0]:
                best = (took, fetched / MiB, requests)
        out[key + "_s"], out[key + "_mib"], out[key + "_req"] = best
    srv.call("latency", 0.0)
    shutil.rmtree(env["TFRLENS_CACHE_DIR"], ignore_errors=True)
    return out


def print_cli(r: dict) -> None:
    print(f"\n{r['file']}, {r['size_mib']:,.0f} MiB: the command line, whole processes (no index cache)")
    curl = r.get("curl_s")
    if curl is not None:
        print(f"  curl (the whole file)           {curl:7.2f} s")
    ok = r["cat_first_s"] <= CAT_FIRST_BAR_S and r["cat_first_mib"] <= CAT_FIRST_BAR_MIB
    print(f"  cat --json --range 0:1          {r['cat_first_s']:7.2f} s  {r['cat_first_mib']:8.2f} MiB  "
          f"{r['cat_first_req']:5} requests  bar {CAT_FIRST_BAR_S} s, {CAT_FIRST_BAR_MIB:.0f} MiB: "
          f"{'ok' if ok else 'OVER'}")
    bar = "" if curl is None else (f"  = {r['info_s'] / curl:.2f}x curl; bar 1.5x curl + 1 s = {1.5 * curl + 1:.2f} s: "
                                   f"{'ok' if r['info_s'] <= 1.5 * curl + 1 else 'OVER'}")
    print(f"  info (the full index pass)      {r['info_s']:7.2f} s  {r['info_mib']:8.1f} MiB  "
          f"{r['info_req']:5} requests{bar}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.02, help="seconds added to every request (default 0.02)")
    ap.add_argument("--big", type=int, default=10_000, help="records of 100 KB (default 10,000: 1 GB)")
    ap.add_argument("--small", type=int, default=1_000_000, help="records of ~100 B (default 1,000,000)")
    ap.add_argument("--cli-only", action="store_true", help="only the command line's figures, of the big file")
    args = ap.parse_args(argv)
    os.environ["TFRLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")
    folder = tempfile.mkdtemp(prefix="tfrlens-bench-remote-", dir="/tmp")  # a 1 GB file: removed at the end
    rows, cli_rows = [], []
    try:
        files = [("remote_big", ensure(folder, f"remote_big_{args.big}.tfrecord", big_records(args.big)))]
        if not args.cli_only:
            files.append(("remote_small", ensure(folder, f"remote_small_{args.small}.tfrecord",
                                                 small_records(args.small))))
        srv = ServerProcess(folder)
        try:
            cli_rows.append(run_cli(srv, files[0][1], args.latency))
            if not args.cli_only:
                for name, path in files:
                    rows.append(run(srv, name, path, args.latency))
        finally:
            srv.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(os.environ["TFRLENS_CACHE_DIR"], ignore_errors=True)
    print(f"HTTP on 127.0.0.1, {args.latency * 1000:.0f} ms per request; bytes and requests counted by the server")
    for r in rows:
        print(f"\n{r['file']}: {r['records']:,} records, {r['size_mib']:,.0f} MiB")
        print(f"  plain download (1 GET)        {r['download_s']:7.2f} s")
        print(f"  first record                  {r['first_s']:7.2f} s  {r['first_mib']:8.2f} MiB  "
              f"{r['first_req']:5} requests")
        print(f"  full index (no cache)         {r['index_s']:7.2f} s  {r['index_mib']:8.1f} MiB  "
              f"{r['index_req']:5} requests  = {r['index_s'] / r['download_s']:.2f}x the download")
        print(f"  every record, in order        {r['in_order_s']:7.2f} s  {r['in_order_mib']:8.1f} MiB  "
              f"{r['in_order_req']:5} requests")
        print(f"  random record after indexing  {r['random_ms']:7.1f} ms {r['random_kib']:8.1f} KiB "
              f"{r['random_req']:5.2f} requests each")
        print(f"  reopen from cache + last rec  {r['reopen_last_s']:7.2f} s  {r['reopen_last_mib']:8.2f} MiB  "
              f"{r['reopen_last_req']:5} requests")
    for r in cli_rows:
        print_cli(r)
    print(f"\npeak RSS {peak_rss_mb():.0f} MiB (the reader's process; the server runs in another)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
