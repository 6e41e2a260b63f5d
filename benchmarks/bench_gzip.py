"""GZIP/ZLIB files: index pass vs plain zlib, checkpoint memory, random access, each beside TensorFlow.

    TFRLENS_TF_PYTHON=/path/to/venv-with-tensorflow/bin/python .venv/bin/python benchmarks/bench_gzip.py

Timings are the best of ``--repeat`` runs. The index pass inflates on one thread and
walks the records on another: on a loaded two-core machine it loses its second core,
so the load average is printed beside each file's figures.
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
import tracemalloc
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, row, tf_iterate_seconds
from codec import TFRecordFile, write_records
from codec.index import cache as index_cache
from codec.storage.inflate import READ_CHUNK, wbits_for


def records(n: int):
    rng = random.Random(5)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon"]
    for i in range(n):
        yield b" ".join(rng.choice(words) for _ in range(40)) + i.to_bytes(4, "little")


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def plain_zlib(path: str, compression) -> None:
    d = zlib.decompressobj(wbits_for(compression))
    with open(path, "rb") as f:
        while chunk := f.read(READ_CHUNK):
            d.decompress(chunk)


def index_pass(path: str) -> None:
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()


def checkpoint_memory(path: str) -> tuple[int, int, int]:
    """(checkpoints, bytes they hold, uncompressed bytes) after an uncached pass.

    tracemalloc sees zlib's own allocations (CPython routes them through
    PyMem_RawMalloc): the bytes freed by dropping the checkpoints are exactly
    what they kept (decompressor state, window, any unconsumed input).
    """
    with TFRecordFile(path, use_cache=False) as f:
        gc.collect()
        tracemalloc.start()
        try:
            f.build_index()
            reader = f.stream_reader
            count = len(reader.checkpoints)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0]
            reader.checkpoints = []
            gc.collect()
            held -= tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        return count, held, f.data_end


def bench(comp: str, n: int, repeat: int) -> None:
    path = data_path(f"text_{n}.{comp}.tfrecord")
    if not os.path.exists(path):
        write_records(path, records(n), comp)
    tf_s = tf_iterate_seconds(path, comp)

    def tf_note(what: str) -> str:
        return f"TensorFlow {what}: {tf_s:.2f} s" if tf_s else "TensorFlow not available"

    with TFRecordFile(path, use_cache=False) as f:
        compression = f.compression
    base = best_of(repeat, lambda: plain_zlib(path, compression))
    index_s = best_of(repeat, lambda: index_pass(path))
    count, held, out = checkpoint_memory(path)
    out_gb = out / 2**30
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        order = random.Random(1).sample(range(len(f)), 200)
        t = time.perf_counter()
        for i in order:
            f.read(i)
        random_ms = (time.perf_counter() - t) / len(order) * 1000
    print(f"{comp}: {n:,} records, {os.path.getsize(path) / 2**20:.1f} MiB compressed, "
          f"{out / 2**20:.0f} MiB uncompressed (best of {repeat}; load average {os.getloadavg()[0]:.1f})")
    row("plain zlib decompression of the file", f"{base:.3f} s", tf_note("reading every record"))
    row("index pass", f"{index_s:.3f} s",
        f"{base / index_s:.0%} of plain zlib speed; " + tf_note("reading every record"))
    row("checkpoint memory (tracemalloc)", f"{held / 2**20 / out_gb:.0f} MiB per GB",
        f"{count} checkpoints, {held / max(count, 1) / 1024:.0f} KiB each; TensorFlow keeps none")
    row("random record in an indexed file", f"{random_ms:.1f} ms",
        tf_note("to the last record") + " (no random access)")
    cache_s = zran_s = float("inf")
    for _ in range(repeat):
        index_cache.invalidate(path)
        t = time.perf_counter()
        with TFRecordFile(path) as f:  # warm the index cache
            f.build_index()
            pass_s = time.perf_counter() - t
            f.wait_for_cache()  # the zran index, built on a thread after the pass
            zran_s = min(zran_s, time.perf_counter() - t - pass_s)
            cache_s = min(cache_s, pass_s)
    row("index pass, saved to the cache", f"{cache_s:.3f} s",
        f"{base / cache_s:.0%} of plain zlib speed; " + tf_note("reading every record"))
    zpath = index_cache.zran_path(path)
    if os.path.exists(zpath):
        row("then the zran index, in the background", f"{zran_s:.3f} s",
            f"{os.path.getsize(zpath) / 2**20 / out_gb:.0f} MiB per GB uncompressed (cache file; "
            "about as much in memory once loaded); TensorFlow keeps none")

    def cached_last() -> str:
        with TFRecordFile(path) as f:
            f.build_index()
            f[-1]
            return type(f.stream_reader).__name__

    via = cached_last()
    cached = best_of(repeat, cached_last)
    row(f"last record, index from the cache ({via})", f"{cached:.3f} s",
        (tf_note("skipping to it") + f" ({cached / tf_s:.0%})") if tf_s else tf_note(""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for comp in ("gzip", "zlib"):
        bench(comp, args.records, args.repeat)


if __name__ == "__main__":
    main()
