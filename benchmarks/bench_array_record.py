"""ArrayRecord reading against Google's own reader, on the same files.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_array_record.py [--records 1000000] [--reads 5000] [--repeat 3]

Writes (once, in benchmarks/_data) two files of ``--records`` distinct 100-byte records with Google's
writer (the ``array-record`` package is needed): zstd with group_size 1 and with group_size 64. For each
it prints the open (postscript and footer), ``--reads`` random reads one record at a time, and a full
pass in order (``iter_records``, the pass of ``cat``, ``stats`` and ``verify``), for
:class:`codec.sources.array_record_file.ArrayRecordFile` and for Google's ``ArrayRecordReader`` (random
reads with ``readahead_buffer_size:0``, as ``tfds.data_source`` and Grain open it, its
``ArrayRecordDataSource``, which ``tfds.data_source`` returns, and ``seek(i)`` + ``read()`` on a reader
opened with ``readahead_buffer_size:0,max_parallelism:0``, its fastest single-record path; the pass as ``read_all()`` and as one
``read`` of every index, on its C++ threads, the faster of the two compared). Each figure is the best of
``--repeat`` runs, the machine's load average printed with them. Targets (issue 28, a file of 1M records,
group_size 1): random reads within 2x of Google's per record, a full pass within 1.5x.
"""
from __future__ import annotations

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import best_ms, data_path, small_records
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


def seconds(fn, repeat: int = 1) -> float:
    """The best of ``repeat`` timings of ``fn()`` (each on what ``fn`` makes afresh), in seconds."""
    return best_ms(fn, repeat) / 1e3


def bench(path: str, reads: int, repeat: int) -> None:
    from array_record.python import array_record_module
    from array_record.python.array_record_data_source import ArrayRecordDataSource

    print(f"\n{os.path.basename(path)}: {os.path.getsize(path):,} bytes (load average {os.getloadavg()[0]:.1f})")
    ours = seconds(lambda: ArrayRecordFile(path).build_index(), repeat)
    theirs = seconds(lambda: array_record_module.ArrayRecordReader(path), repeat)
    print(f"  open (postscript + footer): ours {ours * 1e3:.1f} ms, Google's {theirs * 1e3:.1f} ms")
    f = ArrayRecordFile(path).build_index()
    n = len(f)
    order = random.Random(0).sample(range(n), min(reads, n))
    ours = seconds(lambda: [f.read(i).data for i in order], repeat) / len(order)
    google = array_record_module.ArrayRecordReader(path, "readahead_buffer_size:0")
    theirs = seconds(lambda: [google.read([i]) for i in order], repeat) / len(order)
    source = ArrayRecordDataSource([path])
    data_source = seconds(lambda: [source[i] for i in order], repeat) / len(order)
    lean = array_record_module.ArrayRecordReader(path, "readahead_buffer_size:0,max_parallelism:0")

    def seek_read(i: int) -> bytes:
        lean.seek(i)
        return lean.read()

    seeking = seconds(lambda: [seek_read(i) for i in order], repeat) / len(order)
    print(f"  random reads ({len(order):,}): ours {ours * 1e6:.1f} us/record; Google's read([i]) {theirs * 1e6:.1f} "
          f"us/record (ours {ours / theirs:.2f}x), its ArrayRecordDataSource (tfds.data_source's) "
          f"{data_source * 1e6:.1f} us/record, its seek(i) + read() with max_parallelism:0 {seeking * 1e6:.1f} "
          f"us/record (ours {ours / seeking:.2f}x)")

    def our_pass() -> None:
        fresh = ArrayRecordFile(path).build_index()
        for _ in iter_records(fresh):
            pass

    ours = seconds(our_pass, repeat)
    read_all = seconds(lambda: array_record_module.ArrayRecordReader(path).read_all(), repeat)
    read_list = seconds(lambda: array_record_module.ArrayRecordReader(path).read(list(range(n))), repeat)
    theirs = min(read_all, read_list)
    print(f"  full pass ({n:,} records): ours {ours:.2f} s ({ours / n * 1e6:.2f} us/record), Google's "
          f"read_all() {read_all:.2f} s, read(every index) {read_list:.2f} s (ours {ours / theirs:.2f}x the faster)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--reads", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each figure (the best is printed)")
    args = parser.parse_args(argv)
    for name, options in (("zstd-g1", "group_size:1,zstd"), ("zstd-g64", "group_size:64,zstd")):
        bench(ensure(name, options, args.records), args.reads, args.repeat)


if __name__ == "__main__":
    main()
