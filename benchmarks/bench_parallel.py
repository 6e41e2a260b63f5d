"""``tfrlens-cli stats`` and ``export --where`` in one process and on the local process pool, over one big plain file.

Generates (once, cached in benchmarks/_data) a file of Examples shaped like a
tabular dataset (an int label, an int id, three floats, a short text), then
times ``stats --json`` and a filtered ``export`` with ``--workers 1`` and with
one worker per core (record ranges of the file, merged exactly), and checks
that both give the same bytes.

    python -m benchmarks.bench_parallel                    # 1,000,000 records
    python -m benchmarks.bench_parallel --records 200000
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

from benchmarks.common import data_path


def _records(n: int):
    import numpy as np

    from codec.proto import Example

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, n).tolist()
    values = rng.normal(0, 1, (n, 3)).astype(np.float32).tolist()
    words = [f"word{k}".encode() for k in range(500)]
    picks = rng.integers(0, len(words), n).tolist()
    for i in range(n):
        ex = Example()
        f = ex.features.feature
        f["label"].int64_list.value.append(labels[i])
        f["id"].int64_list.value.append(i)
        f["x"].float_list.value.extend(values[i])
        f["text"].bytes_list.value.append(words[picks[i]])
        yield ex.SerializeToString()


def dataset(records: int) -> str:
    path = data_path(f"parallel_{records}.tfrecord")
    if not os.path.exists(path):
        from codec.writer import write_records

        write_records(path + ".part", _records(records))
        os.replace(path + ".part", path)
    return path


def _run(command: list[str], workers: str) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the command and its workers, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "codec.cli", *command, "--workers", workers],
                         check=True, capture_output=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


# What these commands took before records were read a run at a time, decoded a batch at a time and
# filtered on the pool (commit d684085, this machine, 1,000,000 records, one process): the "today".
BEFORE = {"stats": 19.2, "export --where": 13.7}


def main() -> None:
    from codec.parallel import available_cores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args()
    path = dataset(args.records)
    cores = available_cores()
    target = data_path("parallel_where.tfrecord")
    commands = {"stats": ["stats", "--json", path],
                "export --where": ["export", path, "--where", "label == 3 and x > 0.5", "--to", target]}
    _run(commands["stats"], "1")  # the index cache and the page cache, warm for both
    size = os.path.getsize(path) / 2**20
    print(f"{args.records:,} records ({size:.0f} MiB, plain), {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f} (other work on the machine slows both)")
    for name, command in commands.items():
        single, single_cpu, one = _run(command, "1")
        first = open(target, "rb").read() if name.startswith("export") else one
        pooled, pooled_cpu, many = _run(command, str(cores))
        second = open(target, "rb").read() if name.startswith("export") else many
        print(f"{name}:")
        print(f"  one process   {single:6.2f} s wall {single_cpu:6.2f} s CPU  {args.records / single:9,.0f} records/s")
        print(f"  {cores} workers     {pooled:6.2f} s wall {pooled_cpu:6.2f} s CPU  {args.records / pooled:9,.0f} "
              f"records/s  ({single / pooled:.2f}x one process)")
        if args.records == 1_000_000:
            print(f"  before: {BEFORE[name]:.1f} s in one process; now {BEFORE[name] / pooled:.1f}x faster")
        print(f"  same output: {first == second}")
    os.remove(target)


if __name__ == "__main__":
    main()
