"""Index pass, full verify and index memory over generated files.

    .venv/bin/python benchmarks/bench_codec.py [--records 1000000]

Builds its data in benchmarks/_data (kept between runs), prints records/s and
bytes per record, and TensorFlow's tf_record_iterator time where TensorFlow is
installed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import ensure_file, row, rss_mb, small_records, tf_iterate_seconds
from codec import TFRecordFile


def bench_file(label: str, path: str, n: int) -> None:
    print(f"{label}: {n:,} records, {os.path.getsize(path) / 2**20:.1f} MiB")
    best_index = best_verify = float("inf")
    for _ in range(3):
        import gc

        gc.collect()
        with TFRecordFile(path, use_cache=False) as f:
            before = rss_mb()
            t = time.perf_counter()
            f.build_index()
            best_index = min(best_index, time.perf_counter() - t)
            assert len(f) == n, (len(f), n)
            mem = f.index.nbytes / n
            rss = (rss_mb() - before) * 2**20 / n
        with TFRecordFile(path, use_cache=False) as f:
            t = time.perf_counter()
            f.build_index(verify=True)
            best_verify = min(best_verify, time.perf_counter() - t)
            assert not f.problems
    tf_time = tf_iterate_seconds(path)
    tf_text = f"TensorFlow tf_record_iterator: {n / tf_time:,.0f} rec/s ({tf_time:.2f} s)" if tf_time else \
        "TensorFlow not installed"
    best_after = float("inf")
    for _ in range(3):
        with TFRecordFile(path, use_cache=False) as f:
            f.build_index()
            t = time.perf_counter()
            f.verify()
            best_after = min(best_after, time.perf_counter() - t)
    row("index pass (length CRCs)", f"{n / best_index:,.0f} rec/s", f"{best_index:.3f} s")
    row("index + verify in one pass", f"{n / best_verify:,.0f} rec/s", f"{best_verify:.3f} s")
    row("verify of an indexed file (GUI's Verify)", f"{n / best_after:,.0f} rec/s", f"{best_after:.3f} s")
    row("index memory", f"{mem:.2f} B/record", f"heap growth {rss:.2f} B/record")
    print(f"  {tf_text}")
    with TFRecordFile(path) as f:  # warm the cache, then time a reopen
        f.build_index()
    t = time.perf_counter()
    with TFRecordFile(path) as f:
        f.build_index()
    row("reopen with the cached index", f"{time.perf_counter() - t:.4f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=2000, help="number of 100 KB records")
    args = ap.parse_args()
    n = args.records
    small = ensure_file(f"small_{n}.tfrecord", lambda: small_records(n, 100))
    bench_file("small records (~100 B)", small, n)
    big = ensure_file(f"big_{args.big}.tfrecord", lambda: small_records(args.big, 100_000))
    bench_file("large records (100 KB)", big, args.big)


if __name__ == "__main__":
    main()
