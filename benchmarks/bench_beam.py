"""Dataset-wide passes over many shards: one process, the local process pool, Apache Beam.

    .venv/bin/python benchmarks/bench_beam.py [--shards 100] [--records 10000]

Writes ``--shards`` shards of ``--records`` small Examples each (an int64
label, a float score, a bytes name; kept in benchmarks/_data) and times
``verify --json`` and ``stats --json`` whole-process through the command line:
one process (``--workers 1``, and plain ``verify``), the local process pool
(``stats --workers 0``: one per core), and Beam's direct runner (``--runner
direct``, in-process, and with two worker processes). Each pair of reports is checked to be byte-identical. Where
TensorFlow Data Validation is installed (here, or in the interpreter
``--tfdv-python``/``$TFDV_PYTHON`` names: TFDV pins its own TensorFlow,
protobuf and Beam) it also times ``tfdv.generate_statistics_from_tfrecord`` on
the same shards. From the
measured per-shard cost it prints what a Dataflow run of 10,000 such shards
would need.
"""
from __future__ import annotations

import argparse
import glob
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path

CLI = [sys.executable, "-m", "codec.cli.main"]


def make_shards(shards: int, records: int) -> str:
    from codec.decode.example_proto import Example
    from codec.storage.writer import TFRecordWriter

    folder = data_path(f"beam_{shards}x{records}")
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(15)
    for k in range(shards):
        path = os.path.join(folder, f"train-{k:05d}-of-{shards:05d}.tfrecord")
        if os.path.exists(path):
            continue
        with TFRecordWriter(path + ".part") as w:
            for i in range(records):
                ex = Example()
                ex.features.feature["label"].int64_list.value.append(rng.randrange(10))
                ex.features.feature["score"].float_list.value.append(rng.random())
                ex.features.feature["name"].bytes_list.value.append(b"item-%d" % (k * records + i))
                w.write(ex.SerializeToString())
        os.replace(path + ".part", path)
    return folder


def timed(argv: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(CLI + argv, capture_output=True, env={**os.environ, "TFRLENS_CACHE_DIR": cache})
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed, done.stdout


_TFDV_RUN = """
import os, sys, time
start = time.perf_counter()
import tensorflow_data_validation as tfdv
imported = time.perf_counter()
tfdv.generate_statistics_from_tfrecord(data_location=os.path.join(sys.argv[1], "*.tfrecord"))
print(imported - start, time.perf_counter() - imported)
"""


def tfdv_seconds(folder: str, python: str | None) -> tuple[float, float, float] | None:
    """(whole process, import, generate_statistics_from_tfrecord) seconds of TFDV over ``folder``, run by
    ``python`` (an interpreter with tensorflow-data-validation: it pins its own TensorFlow, protobuf and
    Beam, so it lives in a virtualenv of its own), or None where there is none."""
    python = python or os.environ.get("TFDV_PYTHON")
    if not python:
        try:
            import tensorflow_data_validation  # noqa: F401
        except Exception:  # noqa: BLE001 — an optional comparison: any failure to import means it is skipped
            return None
        python = sys.executable
    start = time.perf_counter()
    done = subprocess.run([python, "-c", _TFDV_RUN, folder], capture_output=True, text=True)
    whole = time.perf_counter() - start
    if done.returncode != 0:
        print(f"  TFDV failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    imported, generated = map(float, done.stdout.split()[-2:])
    return whole, imported, generated


def main(argv=None) -> int:
    global cache
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", type=int, default=100)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--tfdv-python", metavar="PYTHON",
                    help="an interpreter with tensorflow-data-validation installed (default: $TFDV_PYTHON, "
                         "else this one if it has TFDV)")
    args = ap.parse_args(argv)
    import tempfile

    cache = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")
    folder = make_shards(args.shards, args.records)
    n = args.shards * args.records
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "*.tfrecord")))
    print(f"{args.shards} shards x {args.records:,} records ({n:,} records, {size / 2**20:.0f} MiB), "
          f"{os.cpu_count()} cores")
    rows = []
    for name, argv_ in [
        ("verify, one process", ["verify", "--json", "--no-cache", folder]),
        ("verify, Beam direct", ["verify", "--json", "--no-cache", folder, "--runner", "direct"]),
        ("stats, one process", ["stats", "--json", "--no-cache", "--workers", "1", folder]),
        ("stats, process pool", ["stats", "--json", "--no-cache", "--workers", "0", folder]),
        ("stats, Beam direct", ["stats", "--json", "--no-cache", folder, "--runner", "direct"]),
        ("stats, Beam direct x2", ["stats", "--json", "--no-cache", folder, "--runner", "direct",
                                   "--beam-option", "direct_num_workers=2",
                                   "--beam-option", "direct_running_mode=multi_processing"]),
    ]:
        seconds, out = timed(argv_)
        rows.append((name, seconds, out))
        print(f"  {name:<22} {seconds:7.2f} s  {n / seconds:>10,.0f} records/s")
    same = rows[0][2] == rows[1][2] and rows[2][2] == rows[3][2] == rows[4][2] == rows[5][2]
    print(f"  reports byte-identical across runners: {same}")
    tf = tfdv_seconds(folder, args.tfdv_python)
    if tf is None:
        print("  TFDV: not installed here (tensorflow-data-validation; see --tfdv-python), no figure")
    else:
        print(f"  {'TFDV, whole process':<22} {tf[0]:7.2f} s  {n / tf[0]:>10,.0f} records/s  "
              f"(import {tf[1]:.1f} s, generate_statistics_from_tfrecord {tf[2]:.2f} s)")
    per_shard = rows[2][1] / args.shards
    print(f"\nper shard (stats, one process): {per_shard:.3f} s for {args.records:,} records")
    for workers in (10, 50, 100):
        minutes = 10_000 * per_shard / workers / 60
        print(f"  Dataflow, 10,000 such shards on {workers} workers (1 vCPU each): ~{minutes:.1f} min of work "
              f"+ ~3-5 min start-up")
    return 0 if same else 1


cache = ""

if __name__ == "__main__":
    sys.exit(main())
