"""``tfrlens-cli stats`` and ``export --where`` in one process and on the local process pool, over one big plain file.

Generates (once, cached in benchmarks/_data) a file of Examples shaped like a
tabular dataset (an int label, an int id, three floats, a short text), then
times ``stats --json`` and a filtered ``export`` with ``--workers 1`` and with
one worker per core (record ranges of the file, merged exactly), and checks
that both give the same bytes.

    python -m benchmarks.bench_parallel                    # 1,000,000 records
    python -m benchmarks.bench_parallel --records 200000
    git worktree add /tmp/before d684085 && python -m benchmarks.bench_parallel --before /tmp/before
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

    from codec.decode.example_proto import Example

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
        from codec.storage.writer import write_records

        write_records(path + ".part", _records(records))
        os.replace(path + ".part", path)
    return path


def _run(command: list[str], workers: str | None, checkout: str | None = None) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the command and its workers, its output); ``checkout``: the
    command line of that (earlier) checkout of the project instead of this one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    flags = [] if workers is None else ["--workers", workers]
    env = dict(os.environ, PYTHONPATH=checkout) if checkout else None
    out = subprocess.run([sys.executable, "-m", "codec.cli.main", *command, *flags], check=True, capture_output=True,
                         cwd=checkout, env=env).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


def main() -> None:
    from codec.parallel.pool import available_cores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--before", metavar="CHECKOUT",
                        help="also time an earlier checkout of the project in one process, e.g. "
                             "git worktree add /tmp/before d684085 (before runs of records, batches and the filter pool)")
    args = parser.parse_args()
    path = os.path.abspath(dataset(args.records))
    cores = available_cores()
    target = os.path.abspath(data_path("parallel_where.tfrecord"))
    # (command, how the earlier checkout runs it in one process: stats had --workers, export did not)
    commands = {"stats": (["stats", "--json", path], "1"),
                "export --where": (["export", path, "--where", "label == 3 and x > 0.5", "--to", target], None)}
    _run(commands["stats"][0], "1")  # the index cache and the page cache, warm for both
    size = os.path.getsize(path) / 2**20
    print(f"{args.records:,} records ({size:.0f} MiB, plain), {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f} (other work on the machine slows both)")
    for name, (command, old_workers) in commands.items():
        single, single_cpu, one = _run(command, "1")
        first = open(target, "rb").read() if name.startswith("export") else one
        pooled, pooled_cpu, many = _run(command, str(cores))
        second = open(target, "rb").read() if name.startswith("export") else many
        print(f"{name}:")
        print(f"  one process   {single:6.2f} s wall {single_cpu:6.2f} s CPU  {args.records / single:9,.0f} records/s")
        print(f"  {cores} workers     {pooled:6.2f} s wall {pooled_cpu:6.2f} s CPU  {args.records / pooled:9,.0f} "
              f"records/s  ({single / pooled:.2f}x one process)")
        same = first == second
        if args.before:
            old, _, old_out = _run(command, old_workers, args.before)
            old_out = open(target, "rb").read() if name.startswith("export") else old_out
            same = same and old_out == first
            print(f"  before        {old:6.2f} s wall in one process: now {old / single:.1f}x faster in one "
                  f"process, {old / pooled:.1f}x on {cores} workers")
        print(f"  same output{' (all three)' if args.before else ''}: {same}")
    os.remove(target)


if __name__ == "__main__":
    main()
