"""Following a file being written: one look after a few records were appended, beside indexing it whole.

    .venv/bin/python benchmarks/bench_follow.py [--records N]

A followed file is looked at every 0.2 s; each look indexes only what was appended (a GZIP or ZLIB
file is inflated on from where its stream stopped), so its cost follows what was appended, not the
file's size. Figures are the median of 20 looks, each after 5 records (and half of a sixth) were
appended, beside the best of 3 whole index passes of the same file.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, row
from codec import TFRecordFile, encode_record

RECORD = 1000  # bytes of data per record
LOOKS = 20
POOL = random.Random(7).randbytes(1 << 16)  # record data: little to compress, as images would be


def record(i: int) -> bytes:
    at = (i * 7919) % (len(POOL) - RECORD)
    return encode_record(i.to_bytes(8, "little") + POOL[at:at + RECORD - 8])


def make(path: str, n: int, compression: str):
    """Write ``n`` records; return the compressor (None: plain) to go on writing with."""
    co = None if compression == "none" else zlib.compressobj(6, zlib.DEFLATED, 31 if compression == "gzip" else 15)
    with open(path, "wb") as f:
        for start in range(0, n, 10_000):
            chunk = b"".join(record(i) for i in range(start, min(n, start + 10_000)))
            f.write(chunk if co is None else co.compress(chunk))
        if co is not None:
            f.write(co.flush(zlib.Z_SYNC_FLUSH))
    return co


def whole_pass(path: str) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        with TFRecordFile(path, use_cache=False) as f:
            f.build_index()
        best = min(best, time.perf_counter() - t)
    return best


def looks(path: str, n: int, co) -> tuple[float, int]:
    """Median seconds of one look after an append, and the records complete at the end."""
    size = len(record(0))
    tail = b"".join(record(k) for k in range(n, n + 5 * LOOKS + 1))
    times = []
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        f.start_follow()
        f.grow()
        done = 0
        for j in range(LOOKS):
            cut = 5 * (j + 1) * size + size // 2  # five more records, and half of the next one
            piece, done = tail[done:cut], cut
            with open(path, "ab") as out:
                out.write(piece if co is None else co.compress(piece) + co.flush(zlib.Z_SYNC_FLUSH))
            t = time.perf_counter()
            f.grow()
            times.append(time.perf_counter() - t)
        return statistics.median(times), f.complete_records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="records in the file before following")
    args = parser.parse_args()
    print(f"follow: a look after 5 appended records, files of {args.records:,} records of {RECORD:,} bytes")
    for compression in ("none", "gzip", "zlib"):
        path = data_path(f"follow.{compression}")
        co = make(path, args.records, compression)
        whole = whole_pass(path)
        look, n = looks(path, args.records, co)
        assert n == args.records + 5 * LOOKS, n
        size = os.path.getsize(path)
        print(f"{compression} ({size / 1e6:,.1f} MB on disk):")
        row("index the whole file", f"{whole * 1000:,.0f} ms")
        row("one look after an append (median)", f"{look * 1000:,.2f} ms")
        os.remove(path)


if __name__ == "__main__":
    main()
