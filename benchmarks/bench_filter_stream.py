"""A filter's matches as they are found: how soon the first come, and what streaming costs the whole pass.

    .venv/bin/python benchmarks/bench_filter_stream.py [--records 1000000]

Uses ``qa_examples_N.tfrecord`` of :mod:`benchmarks.bench_qa` (built in
benchmarks/_data when missing) and runs ``label == 3 and score > 0.995`` (few
matches, spread over the file) with ``pooled_filter_iter`` on both cores: once
handing nothing over until the end, once with a ``MatchStream`` taken from
every 50 ms as the app does. Prints the time to the first batch, the number of
batches and the whole pass.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from array import array

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.bench_qa import qa_examples
from benchmarks.common import ensure_file, row
from codec import TFRecordFile
from codec.query.filter import MatchStream, compile_filter
from codec.stats.filter_pool import pooled_filter_iter

WHERE = "label == 3 and score > 0.995"
TAKE_EVERY = 0.05  # s: the app's progress interval


def run(path: str, stream: MatchStream | None) -> tuple[float, float | None, int, int]:
    """(whole pass s, first batch s or None, batches, matches)."""
    with TFRecordFile(path) as f:
        f.build_index()
        flt = compile_filter(WHERE)
        found = array("Q")
        t0 = time.perf_counter()
        first, batches, last_take = None, 0, t0
        for _ in pooled_filter_iter(f, flt, found, workers=2, stream=stream):
            now = time.perf_counter()
            if stream is not None and now - last_take >= TAKE_EVERY:
                last_take = now
                if stream.take().size:
                    batches += 1
                    first = first if first is not None else now - t0
        total = time.perf_counter() - t0
        if stream is not None and stream.take().size:
            batches += 1
            first = first if first is not None else total
    return total, first, batches, len(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args()
    path = ensure_file(f"qa_examples_{args.records}.tfrecord", lambda: qa_examples(args.records))
    print(f"{args.records:,} records, {os.path.getsize(path) / 1e6:.0f} MB, filter {WHERE}, 2 workers")
    whole, _, _, n = run(path, None)
    row("whole pass, matches at the end", f"{whole:.2f} s", f"{n:,} matches")
    whole, first, batches, n = run(path, MatchStream())
    row("whole pass, streamed", f"{whole:.2f} s", f"{n:,} matches in {batches} batches")
    row("first batch shown after", f"{first:.2f} s" if first is not None else "-", f"{first / whole:.0%} of the pass"
        if first is not None else "")


if __name__ == "__main__":
    main()
