"""Remote files over HTTP, measured in seconds, bytes and round trips.

    .venv/bin/python benchmarks/bench_remote.py [--latency 0.02] [--small 1000000] [--big 10000]

Serves two files from benchmarks/_data (made on first run, kept) with the tests'
range-serving HTTP server on 127.0.0.1, every request delayed by ``--latency``:

- ``remote_big``: ``--big`` records of 100 KB (10,000: a 1 GB file);
- ``remote_small``: ``--small`` records of about 100 bytes (1M: ~116 MB).

For each it prints: a plain download of the file (one GET, streamed and dropped:
the floor for any pass over it; best of 3); the first record (open, the first
progress of the index pass, record 0); the full index pass (no cache entry;
best of 3) and its ratio to the download; every record read in order after indexing (what ``cat``, ``export``
and ``repair`` do); 100 random records after indexing; and the last record
after a reopen from the index cache. Bytes and requests are counted by the server.
TensorFlow has no HTTP filesystem (it reads gs:// and s3:// only front to back),
so there is no TensorFlow figure here.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, peak_rss_mb  # noqa: E402
from codec import TFRecordFile, index_cache, write_records  # noqa: E402
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


def ensure(name: str, records) -> str:
    path = data_path(name)
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
    for run in range(RUNS):
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.02, help="seconds added to every request (default 0.02)")
    ap.add_argument("--big", type=int, default=10_000, help="records of 100 KB (default 10,000: 1 GB)")
    ap.add_argument("--small", type=int, default=1_000_000, help="records of ~100 B (default 1,000,000)")
    args = ap.parse_args(argv)
    os.environ["TFRLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")
    files = [("remote_big", ensure(f"remote_big_{args.big}.tfrecord", big_records(args.big))),
             ("remote_small", ensure(f"remote_small_{args.small}.tfrecord", small_records(args.small)))]
    rows = []
    srv = ServerProcess(os.path.dirname(files[0][1]))
    try:
        for name, path in files:
            rows.append(run(srv, name, path, args.latency))
    finally:
        srv.stop()
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
    print(f"\npeak RSS {peak_rss_mb():.0f} MiB (the reader's process; the server runs in another)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
