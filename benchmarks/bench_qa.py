"""Dataset QA throughput: statistics, schema inference and filters over small Examples.

    .venv/bin/python benchmarks/bench_qa.py [--records 1000000]

Builds ``qa_examples_N.tfrecord`` in benchmarks/_data (kept between runs):
N Examples of ~60 bytes with an int64 ``label`` (0..9), a float ``score``,
a two-value float ``bbox`` and a bytes ``name`` (one of 10 class names). Prints
records/s of ``stats``, ``schema`` and a few filters (best of 3), and the
peak Python heap of a stats pass over a tenth of the file and over all of it
(bounded memory: the two should be close).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
from array import array

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import ensure_file, row
from codec import TFRecordFile
from codec.decode.example_proto import Example
from codec.query.filter import compile_filter, filter_iter
from codec.stats.file_stats import compute_stats
from codec.stats.schema import infer_schema

NAMES = [n.encode() for n in ("cat", "dog", "bird", "fish", "horse", "sheep", "cow", "lion", "bear", "zebra")]
FILTERS = ("label == 3", "score > 0.5 and name == \"dog\"", "\"cat\" in name or len(bbox) > 2",
           "name ~ \"^b\"", "status != \"ok\" or size > 60", "offset >= 1000")


def qa_examples(n: int):
    """``n`` small Examples; the message is reused, so generation stays cheap."""
    ex = Example()
    feats = ex.features.feature
    label = feats["label"].int64_list.value
    score = feats["score"].float_list.value
    bbox = feats["bbox"].float_list.value
    name = feats["name"].bytes_list.value
    for i in range(n):
        del label[:], score[:], bbox[:], name[:]
        k = (i * 7919) % 10
        label.append(k)
        score.append(((i * 2654435761) % 1000) / 1000.0)
        bbox.extend([k / 10.0, (k + 1) / 10.0])
        name.append(NAMES[k])
        yield ex.SerializeToString()


def best_of(fn, runs: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def heap_peak(fn) -> float:
    """Peak Python heap (MiB) while ``fn`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    n = args.records
    path = ensure_file(f"qa_examples_{n}.tfrecord", lambda: qa_examples(n))
    print(f"{n:,} Examples of 4 features, {os.path.getsize(path) / 2**20:.1f} MiB")
    with TFRecordFile(path) as f:
        f.build_index()
        assert len(f) == n
        t, stats = best_of(lambda: compute_stats(f), args.runs)
        report = stats.to_json()
        assert report["records"] == n and report["features"]["label"]["distinct"] == 10
        row("stats, whole file", f"{n / t:,.0f} rec/s", f"{t:.2f} s")
        for count in (n // 10, n):
            peak = heap_peak(lambda: compute_stats(f, range(count)))  # noqa: B023
            row(f"stats heap peak over {count:,} records", f"{peak:.1f} MiB", "(tracemalloc)")
        t, _ = best_of(lambda: infer_schema(f), args.runs)
        row("schema inference, whole file", f"{n / t:,.0f} rec/s", f"{t:.2f} s")
        for text in FILTERS:
            flt = compile_filter(text)

            def run() -> array:
                out = array("Q")
                for _ in filter_iter(f, flt, out):  # noqa: B023
                    pass
                return out
            t, hits = best_of(run, args.runs)
            row(f"filter {text}", f"{n / t:,.0f} rec/s", f"{t:.2f} s, {len(hits):,} matches")


if __name__ == "__main__":
    main()
