"""Sorting the table's records: the key pass (on the process pool) and the sort, over one big plain file.

Generates (once, cached in benchmarks/_data) a file of small Examples (an
int64 ``label`` spread over 1 to 3 varint bytes, a float ``score``), then for
``score``, ``label`` and ``size`` times the key pass (one worker per core,
record ranges of the file) and the sort of the keys, then the reverse (no
pass), and reports the peak memory of the sort (tracemalloc, numpy's
allocations included), the process's peak RSS and the bytes per record of
the order kept. TensorFlow has no sort to compare with.

    python -m benchmarks.bench_sort                      # 10,000,000 records
    python -m benchmarks.bench_sort --records 1000000
"""
from __future__ import annotations

import argparse
import os
import resource
import struct
import time
import tracemalloc

from benchmarks.common import ensure_file, peak_rss_mb


def _templates() -> dict[int, tuple[bytes, bytes, bytes, bool]]:
    """For each varint length of the label (1-3 bytes): the Example's bytes before, between and after
    its two values (protobuf's own serialization, cut where the values go), and whether the score comes first."""
    from codec.decode.example_proto import Example

    out = {}
    for width, label in ((1, 1), (2, 1 << 7), (3, 1 << 14)):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(label)
        ex.features.feature["score"].float_list.value.append(1.0)
        data = ex.SerializeToString()
        varint = _varint(label)
        packed = b"\x1a" + bytes([width + 2, 0x0A, width]) + varint  # int64_list { packed value }
        at, fat = data.index(packed) + 4, data.index(struct.pack("<f", 1.0))
        assert data.count(packed) == data.count(struct.pack("<f", 1.0)) == 1 and width == len(varint)
        if fat < at:
            out[width] = (data[:fat], data[fat + 4:at], data[at + width:], True)
        else:
            out[width] = (data[:at], data[at + width:fat], data[fat + 4:], False)
    return out


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _records(n: int):
    import numpy as np

    templates = _templates()
    rng = np.random.default_rng(0)
    step = 1 << 20
    for first in range(0, n, step):
        m = min(step, n - first)
        labels = (rng.integers(0, 1 << 21, m) >> rng.integers(0, 21, m)).tolist()  # 1-3 varint bytes
        scores = rng.random(m, dtype=np.float32).tolist()
        pack = struct.Struct("<f").pack
        for label, score in zip(labels, scores):
            varint = _varint(label)
            pre, mid, post, score_first = templates[len(varint)]
            yield pre + pack(score) + mid + varint + post if score_first else pre + varint + mid + pack(score) + post


def main() -> None:
    from codec.parallel.pool import available_cores
    from codec.sources.tfrecord_file import TFRecordFile
    from codec.stats.pool import plan_stats, pool_merge_iter
    from codec.stats.sort_keys import SortKey, SortKeys, SortRunner

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    args = parser.parse_args()
    t = time.perf_counter()
    path = os.path.abspath(ensure_file(f"sort_{args.records}.tfrecord", lambda: _records(args.records)))
    made = time.perf_counter() - t
    cores = available_cores()
    size = os.path.getsize(path) / 2**20
    print(f"{args.records:,} records ({size:.0f} MiB, plain; made or found in {made:.0f} s), {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    with TFRecordFile(path) as f:
        t = time.perf_counter()
        f.build_index()
        print(f"  index (cached after the first run): {time.perf_counter() - t:.2f} s")
        n = len(f)
        for key in (SortKey("feature", "score"), SortKey("feature", "label"), SortKey("size")):
            tasks = plan_stats(f, cores)
            keys = SortKeys()
            t, cpu = time.perf_counter(), _cpu()
            for _ in pool_merge_iter(f, keys, SortRunner, tasks, {"named": [], "key": key}, cores):
                pass
            passed, pass_cpu = time.perf_counter() - t, _cpu() - cpu
            tracemalloc.start()
            t, cpu = time.perf_counter(), time.process_time()
            order = keys.order(n)
            sorted_in, sort_cpu = time.perf_counter() - t, time.process_time() - cpu
            del keys
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            t = time.perf_counter()
            back = order.reversed()
            reversed_in = time.perf_counter() - t
            print(f"{key} ({len(tasks)} tasks on {cores} workers):")
            print(f"  key pass {passed:6.2f} s wall, {pass_cpu:6.2f} s CPU ({n / passed:,.0f} records/s)   "
                  f"sort {sorted_in:5.2f} s wall, {sort_cpu:5.2f} s CPU   reverse {reversed_in:5.2f} s")
            print(f"  order kept: {order.nbytes / n:.3f} bytes per record ({order.order.dtype}, "
                  f"{order.nbytes / 2**20:.0f} MiB; reversed too: {(order.nbytes + back.nbytes) / n:.3f})   "
                  f"sort's peak {peak / n:.1f} bytes per record ({peak / 2**20:.0f} MiB)")
            del order, back
    print(f"peak RSS of this process: {peak_rss_mb():.0f} MiB (the workers' own not included)")


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the pool's workers, once joined)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
