"""ArrayRecord reading against Google's own reader, on the same files.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_array_record.py [--records 200000] [--reads 5000]

Writes (once, in benchmarks/_data) two files of ``--records`` distinct 100-byte records with Google's
writer (the ``array-record`` package is needed): zstd with group_size 1 and with group_size 64. For each
it prints the open (postscript and footer), ``--reads`` random reads one record at a time, and a full
pass in order, for :class:`codec.sources.array_record_file.ArrayRecordFile` and for Google's
``ArrayRecordReader`` (random reads with ``readahead_buffer_size:0``, as ``tfds.data_source`` and Grain
open it, and its ``ArrayRecordDataSource``, which ``tfds.data_source`` returns; the pass as one ``read`` of
every index). Targets (issue 28): random reads within 2x of
Google's per record, a full pass within 1.5x.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path, small_records
from codec.index.scan import IndexProgress
from codec.sources.array_record_file import ArrayRecordFile
from codec.sources.record_pass import iter_records


def ensure(name: str, options: str, n: int) -> str:
    """The file ``name`` of ``n`` records written by Google's writer with ``options``."""
    from array_record.python import array_record_module

    path = data_path(f"{name}-{n}.array_record")
    if not os.path.exists(path):
        writer = array_record_module.ArrayRecordWriter(path + ".part", options)
        for record in small_records(n):
            writer.write(record)
        writer.close()
        os.replace(path + ".part", path)
    return path


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(path: str, reads: int) -> None:
    from array_record.python import array_record_module

    print(f"\n{os.path.basename(path)}: {os.path.getsize(path):,} bytes")
    f = ArrayRecordFile(path)
    print(f"  open (postscript + footer): ours {seconds(f.build_index) * 1e3:.1f} ms, "
          f"Google's {seconds(lambda: array_record_module.ArrayRecordReader(path)) * 1e3:.1f} ms")
    n = len(f)
    order = random.Random(0).sample(range(n), min(reads, n))
    ours = seconds(lambda: [f.read(i).data for i in order]) / len(order)
    google = array_record_module.ArrayRecordReader(path, "readahead_buffer_size:0")
    theirs = seconds(lambda: [google.read([i]) for i in order]) / len(order)
    from array_record.python.array_record_data_source import ArrayRecordDataSource

    source = ArrayRecordDataSource([path])
    data_source = seconds(lambda: [source[i] for i in order]) / len(order)
    print(f"  random reads ({len(order):,}): ours {ours * 1e6:.1f} us/record, Google's {theirs * 1e6:.1f} us/record "
          f"({ours / theirs:.2f}x), its ArrayRecordDataSource (tfds.data_source's) {data_source * 1e6:.1f} us/record")
    fresh = ArrayRecordFile(path).build_index()
    ours = seconds(lambda: [x for x in iter_records(fresh) if not isinstance(x, IndexProgress)])
    google = array_record_module.ArrayRecordReader(path)
    theirs = seconds(lambda: google.read(list(range(n))))
    print(f"  full pass ({n:,} records): ours {ours:.2f} s ({ours / n * 1e6:.1f} us/record), Google's {theirs:.2f} s "
          f"({ours / theirs:.2f}x)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--reads", type=int, default=5_000)
    args = parser.parse_args(argv)
    for name, options in (("zstd-g1", "group_size:1,zstd"), ("zstd-g64", "group_size:64,zstd")):
        bench(ensure(name, options, args.records), args.reads)


if __name__ == "__main__":
    main()
