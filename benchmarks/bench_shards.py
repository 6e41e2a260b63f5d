"""A dataset of many shards opened as one: open, index, peak open files, cached reopen.

    .venv/bin/python benchmarks/bench_shards.py [--shards 1000] [--records 1000]

Generates ``--shards`` files of ``--records`` small records each in
benchmarks/_data/shards_S_R/ and prints: opening the folder (nothing read),
the index pass over every shard, the most files held open at once, reading a
record of the last shard, and reopening the set (from the index cache; shards
under 1 MiB are not cached, they are indexed again). TensorFlow's
``tf_record_iterator`` over the same files, one after another, runs beside it
where TensorFlow is installed (or $TFRLENS_TF_PYTHON names a Python that has
it).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, row, small_records, tensorflow

_TF_SCRIPT = """
import glob, os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.tfrecord")))
t = time.perf_counter()
n = 0
for f in files:  # the fastest way TensorFlow reads them from Python (tf.data is ~40x slower here)
    for _ in tf.compat.v1.io.tf_record_iterator(f):
        n += 1
print(time.perf_counter() - t, n)
"""


def make_shards(shards: int, records: int) -> str:
    from codec import write_records

    folder = data_path(f"shards_{shards}_{records}")
    done = os.path.join(folder, ".complete")
    if os.path.exists(done):
        return folder
    os.makedirs(folder, exist_ok=True)
    print(f"generating {shards:,} shards of {records:,} records in {folder} ...", flush=True)
    for k in range(shards):
        write_records(os.path.join(folder, f"train-{k:05d}-of-{shards:05d}.tfrecord"), small_records(records))
    open(done, "w").close()
    return folder


def tf_read_seconds(folder: str) -> tuple[float, int] | None:
    python = sys.executable if tensorflow() is not None else os.environ.get("TFRLENS_TF_PYTHON")
    if not python:
        return None
    proc = subprocess.run([python, "-c", _TF_SCRIPT, folder], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    seconds, n = proc.stdout.split()[-2:]
    return float(seconds), int(n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=1000)
    ap.add_argument("--records", type=int, default=1000)
    args = ap.parse_args()
    folder = make_shards(args.shards, args.records)
    os.environ["TFRLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")
    from codec.sources.shard_set import ShardSet

    total = args.shards * args.records
    print(f"{args.shards:,} shards × {args.records:,} records ({total:,} records)")
    t = time.perf_counter()
    s = ShardSet.from_args([folder])
    row("open the folder as a set (nothing read)", f"{time.perf_counter() - t:.3f} s", f"{s.open_files} files open")
    peak = 0
    t = time.perf_counter()
    for _p in s.index_iter():
        peak = max(peak, s.open_files)
    seconds = time.perf_counter() - t
    assert len(s) == total
    tf = tf_read_seconds(folder)
    tf_text = f"TensorFlow reading them: {tf[0]:.2f} s" if tf else "TensorFlow not installed"
    row("index pass over every shard", f"{seconds:.2f} s", f"{total / seconds:,.0f} records/s; {tf_text}")
    row("most files open at once", f"{peak}", f"of {args.shards:,} shards (limit {s.max_open})")
    t = time.perf_counter()
    data = s[total - 1]
    row("a record of the last shard", f"{(time.perf_counter() - t) * 1000:.2f} ms", f"{len(data)} bytes")
    s.close()
    from codec.index.cache import MIN_CACHED_BYTES

    t = time.perf_counter()
    with ShardSet.from_args([folder]) as again:
        again.build_index()
        assert len(again) == total
        cached = again.shards[0].size >= MIN_CACHED_BYTES
    row("reopen and index again" + (" (from the cache)" if cached else ""), f"{time.perf_counter() - t:.2f} s",
        "" if cached else f"shards under {MIN_CACHED_BYTES >> 20} MiB are not cached: indexing them is faster")


if __name__ == "__main__":
    main()
