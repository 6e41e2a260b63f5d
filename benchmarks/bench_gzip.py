"""GZIP/ZLIB files: index pass vs plain zlib, checkpoint memory, random access.

    .venv/bin/python benchmarks/bench_gzip.py [--records 200000]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, row, rss_mb  # noqa: E402
from codec import TFRecordFile, index_cache, write_records  # noqa: E402
from codec.inflate import READ_CHUNK, wbits_for  # noqa: E402


def records(n: int):
    rng = random.Random(5)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon"]
    for i in range(n):
        yield b" ".join(rng.choice(words) for _ in range(40)) + i.to_bytes(4, "little")


def plain_zlib_seconds(path: str, compression) -> float:
    d = zlib.decompressobj(wbits_for(compression))
    t = time.perf_counter()
    with open(path, "rb") as f:
        while chunk := f.read(READ_CHUNK):
            d.decompress(chunk)
    return time.perf_counter() - t


def tf_last_record_seconds(path: str, compression: str) -> float | None:
    import subprocess

    python = os.environ.get("TFRLENS_TF_PYTHON")
    if not python:
        return None
    script = ("import os,sys,time;os.environ['TF_CPP_MIN_LOG_LEVEL']='3';import tensorflow as tf;"
              "t=time.perf_counter();last=None\n"
              "for r in tf.compat.v1.io.tf_record_iterator(sys.argv[1], options=sys.argv[2]): last=r\n"
              "print(time.perf_counter()-t)")
    out = subprocess.run([python, "-c", script, path, compression.upper()], capture_output=True, text=True)
    return float(out.stdout.split()[-1]) if out.returncode == 0 else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    args = ap.parse_args()
    n = args.records
    for comp in ("gzip", "zlib"):
        path = data_path(f"text_{n}.{comp}.tfrecord")
        if not os.path.exists(path):
            write_records(path, records(n), comp)
        with TFRecordFile(path, use_cache=False) as f:
            base = plain_zlib_seconds(path, f.compression)
            before = rss_mb()
            t = time.perf_counter()
            f.build_index()
            index_s = time.perf_counter() - t
            ckpts = len(f._inflate.checkpoints)
            mem = rss_mb() - before
            out_gb = f._data_end() / 2**30
            order = random.Random(1).sample(range(len(f)), 200)
            t = time.perf_counter()
            for i in order:
                f.read(i)
            random_ms = (time.perf_counter() - t) / len(order) * 1000
        print(f"{comp}: {n:,} records, {os.path.getsize(path) / 2**20:.1f} MiB compressed, "
              f"{out_gb * 1024:.0f} MiB uncompressed")
        row("plain zlib decompression of the file", f"{base:.2f} s")
        row("index pass", f"{index_s:.2f} s", f"{base / index_s:.0%} of plain zlib speed")
        row("checkpoints", f"{ckpts}", f"~{mem / max(out_gb, 1e-9):.0f} MiB per GB uncompressed")
        row("random record in an indexed file", f"{random_ms:.1f} ms")
        index_cache.invalidate(path)
        t = time.perf_counter()
        with TFRecordFile(path) as f:  # warm the index cache
            f.build_index()
            cache_s = time.perf_counter() - t
            f.wait_for_cache()  # GZIP: the zran index, built on a thread after the pass
            zran_s = time.perf_counter() - t - cache_s
        row("index pass, saved to the cache", f"{cache_s:.2f} s", f"{base / cache_s:.0%} of plain zlib speed")
        if os.path.exists(index_cache.zran_path(path)):
            row("then the zran index, in the background", f"{zran_s:.2f} s",
                f"{os.path.getsize(index_cache.zran_path(path)) / 2**20 / max(out_gb, 1e-9):.0f} MiB per GB "
                "uncompressed (cache file)")
        t = time.perf_counter()
        with TFRecordFile(path) as f:
            f.build_index()
            f[-1]
            via = type(f._inflate).__name__
        cached = time.perf_counter() - t
        tf_s = tf_last_record_seconds(path, comp)
        row(f"last record, index from the cache ({via})", f"{cached:.3f} s",
            f"TensorFlow skipping to it: {tf_s:.2f} s ({cached / tf_s:.0%})" if tf_s else "TensorFlow not available")


if __name__ == "__main__":
    main()
