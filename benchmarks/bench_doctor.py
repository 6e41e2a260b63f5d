"""The dataset doctor on a million records: time and peak memory of ``codec.doctor.run_check``.

Generates (once, cached in benchmarks/_data) a detection dataset of distinct
16x16 greyscale JPEGs with Object Detection API features, in seven train shards
and one eval shard, then checks it with every check on every core.

    python -m benchmarks.bench_doctor                    # 250,000 records (about a minute)
    python -m benchmarks.bench_doctor --records 1000000  # the README's figure
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import time

from benchmarks.common import data_path


def _shard(args: tuple[str, int, int, int]) -> str:
    path, start, count, seed = args
    import numpy as np
    from PIL import Image

    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    rng = np.random.default_rng(seed)

    def records():
        for n in range(count):
            pixels = rng.integers(0, 256, size=(16, 16), dtype=np.uint8)
            out = io.BytesIO()
            Image.fromarray(pixels, "L").save(out, "JPEG", quality=80)
            ex = Example()
            f = ex.features.feature
            f["image/encoded"].bytes_list.value.append(out.getvalue())
            f["image/format"].bytes_list.value.append(b"jpeg")
            f["image/width"].int64_list.value.append(16)
            f["image/height"].int64_list.value.append(16)
            x0, y0 = rng.uniform(0, 0.5, 2).tolist()
            f["image/object/bbox/xmin"].float_list.value.append(x0)
            f["image/object/bbox/ymin"].float_list.value.append(y0)
            f["image/object/bbox/xmax"].float_list.value.append(x0 + 0.4)
            f["image/object/bbox/ymax"].float_list.value.append(y0 + 0.4)
            f["image/object/class/label"].int64_list.value.append(int(rng.integers(1, 4)))
            f["image/object/class/text"].bytes_list.value.append(b"thing")
            f["id"].int64_list.value.append(start + n)
            yield ex.SerializeToString()

    write_records(path + ".part", records())
    os.replace(path + ".part", path)
    return path


def dataset(records: int, shards: int) -> str:
    """The folder of ``records`` records in ``shards`` shards (the last one eval), made if missing."""
    folder = data_path(f"doctor_{records}")
    os.makedirs(folder, exist_ok=True)
    names = [f"train-{k:05d}-of-{shards - 1:05d}.tfrecord" for k in range(shards - 1)] + [
        "eval-00000-of-00001.tfrecord"]
    jobs, start = [], 0
    for k, name in enumerate(names):
        count = records // shards + (1 if k < records % shards else 0)
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            jobs.append((path, start, count, k))
        start += count
    if jobs:
        import multiprocessing

        t = time.perf_counter()
        with multiprocessing.get_context("spawn").Pool() as pool:
            pool.map(_shard, jobs)
        print(f"generated {len(jobs)} shard(s) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=250_000,
                        help="records to generate and check (1000000 for the README figure; about 4x longer)")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--workers", type=int, default=0, help="0: one per core")
    args = parser.parse_args()
    folder = dataset(args.records, args.shards)
    from codec.doctor import CheckOptions, CheckProgress, CheckReport, check_iter

    t = time.perf_counter()
    last = 0.0
    report = None
    compared = None
    for item in check_iter([folder], CheckOptions(workers=args.workers)):
        if isinstance(item, CheckReport):
            report = item
        elif item.phase == "compare" and compared is None:
            compared = time.perf_counter()
        elif isinstance(item, CheckProgress) and time.perf_counter() - last > 5:
            last = time.perf_counter()
            print(f"  {last - t:6.1f} s  {item.phase}: {item.done:,} of ~{item.total:,}", file=sys.stderr)
    elapsed = time.perf_counter() - t
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    counts: dict[str, int] = {}
    for f in report.findings:
        counts[f.check] = counts.get(f.check, 0) + 1
    print(f"records: {report.records:,}  cores: {os.cpu_count()}  time: {elapsed:.1f} s "
          f"({report.records / elapsed:,.0f} records/s)")
    print(f"  per-record pass (pool): {compared - t:.1f} s; comparing across records: "
          f"{t + elapsed - compared:.1f} s")
    print(f"peak RSS: parent {parent:.0f} MiB, largest worker {worker:.0f} MiB")
    print(f"findings: {counts}")


if __name__ == "__main__":
    main()
