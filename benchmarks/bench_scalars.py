"""``tfrlens-cli scalars`` over a generated TensorBoard log folder, beside TensorBoard's EventAccumulator.

    .venv/bin/python benchmarks/bench_scalars.py [--mb 200] [--tensorboard-python PYTHON]

The folder (benchmarks/_data/tb_logs_<MB>mb, made once) holds 4 runs written as TF2's summary
writer writes them: per step 4 scalar summaries (one event each), a histogram (a tensor of the
histograms plugin), and every 25 steps a 64 KiB image summary, so most bytes are not scalars, as
in real logs. Figures: the best of --repeat runs (2) of the command (`scalars --json` to /dev/null,
a process each), of the library's pass alone, and of TensorBoard's own reader,
plugin_event_accumulator.EventAccumulator (the one its server uses; every scalar kept, other plugins'
data sampled down to one), timed when tensorboard imports, in this Python or in the one given with
--tensorboard-python (tensorboard is never a dependency).
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import best_ms, data_path
from codec import encode_record

RUNS = ("train", "eval", "sweep/lr_0.1", "sweep/lr_0.01")
TAGS = ("loss", "accuracy", "learning_rate", "grad_norm")
IMAGE_EVERY, IMAGE_BYTES = 25, 64 << 10
BUCKETS = 30

ACCUMULATOR = r"""
import sys, time
from tensorboard.backend.event_processing import plugin_event_accumulator as ea
folder, repeat, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    n = 0
    for run in runs:
        acc = ea.EventAccumulator(f"{folder}/{run}", size_guidance={ea.TENSORS: 0},
                                  tensor_size_guidance={"images": 1, "histograms": 1})
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            if acc.SummaryMetadata(tag).plugin_data.plugin_name == "scalars":
                n += len(acc.Tensors(tag))
    best = min(best, time.perf_counter() - t)
print(f"{best:.3f} {n}")
"""


def make_logs(folder: str, megabytes: int) -> int:
    """Write the log folder (once); return the number of scalar points it holds."""
    from codec.decode.events import event_class

    Event = event_class()
    pool = random.Random(5).randbytes(IMAGE_BYTES * 2)
    per_run = megabytes * (1 << 20) // len(RUNS)
    points = 0
    for r, run in enumerate(RUNS):
        path = os.path.join(folder, run, f"events.out.tfevents.{1700000000 + r}.bench.1.0.v2")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        done = os.path.exists(path)
        size, step, wall = 0, 0, 1700000000.0 + r
        chunk = [encode_record(Event(wall_time=wall, file_version="brain.Event:2").SerializeToString())]
        out = None if done else open(path + ".tmp", "wb")
        while size < per_run:
            for k, tag in enumerate(TAGS):
                event = Event(wall_time=wall + step + k / 10, step=step)
                value = event.summary.value.add(tag=tag)
                if step == 0:
                    value.metadata.plugin_data.plugin_name = "scalars"
                value.tensor.dtype = 1
                value.tensor.tensor_shape.SetInParent()
                value.tensor.float_val.append(1.0 / (step + k + 1))
                chunk.append(encode_record(event.SerializeToString()))
                points += 1
            event = Event(wall_time=wall + step + 0.5, step=step)
            value = event.summary.value.add(tag="weights")
            value.metadata.plugin_data.plugin_name = "histograms"
            value.tensor.dtype = 2
            value.tensor.tensor_shape.dim.add(size=BUCKETS)
            value.tensor.tensor_shape.dim.add(size=3)
            value.tensor.double_val.extend(float(i) for i in range(BUCKETS * 3))
            chunk.append(encode_record(event.SerializeToString()))
            if step % IMAGE_EVERY == 0:
                event = Event(wall_time=wall + step + 0.7, step=step)
                value = event.summary.value.add(tag="samples")
                value.metadata.plugin_data.plugin_name = "images"
                value.tensor.dtype = 7
                value.tensor.string_val.extend([b"64", b"64", pool[step % IMAGE_BYTES:][:IMAGE_BYTES]])
                chunk.append(encode_record(event.SerializeToString()))
            size += sum(len(c) for c in chunk)
            if out is not None:
                out.write(b"".join(chunk))
            chunk = []
            step += 1
        if out is not None:
            out.close()
            os.replace(path + ".tmp", path)
    return points


def best_of(fn, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``fn()``, in seconds."""
    return best_ms(fn, repeat) / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the log folder (MiB)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each reader; the best is shown")
    parser.add_argument("--tensorboard-python", metavar="PYTHON", default=sys.executable,
                        help="a Python where tensorboard imports, for EventAccumulator (default: this one)")
    args = parser.parse_args()
    folder = data_path(f"tb_logs_{args.mb}mb")
    t = time.perf_counter()
    points = make_logs(folder, args.mb)
    made = time.perf_counter() - t
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files)
    print(f"log folder: {folder}: {size / (1 << 20):.0f} MiB, {len(RUNS)} runs, {points:,} scalar points "
          f"(made or checked in {made:.1f} s)")

    from codec.datasets.event_logs import runs_of
    from codec.ops.scalars import scalar_points

    counted = []
    library = best_of(lambda: counted.append(sum(1 for _ in scalar_points(runs_of([folder])))), args.repeat)
    assert counted[-1] == points, (counted[-1], points)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def command() -> None:
        with open(os.devnull, "wb") as sink:
            subprocess.run([sys.executable, "-m", "codec.cli", "scalars", "--json", folder], stdout=sink, check=True,
                           env=env)

    cli = best_of(command, args.repeat)
    print(f"scalars, library pass:          {library:7.2f} s  {size / (1 << 20) / library:6.0f} MiB/s")
    print(f"scalars --json (the command):   {cli:7.2f} s  {size / (1 << 20) / cli:6.0f} MiB/s")
    found = subprocess.run([args.tensorboard_python, "-c", ACCUMULATOR, folder, str(args.repeat), *RUNS], capture_output=True,
                           text=True)
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["?"])[-1]
        print(f"EventAccumulator: not measured ({last})")
        return 0
    seconds, n = found.stdout.split()
    accumulator = float(seconds)
    print(f"EventAccumulator (tensorboard): {accumulator:7.2f} s  {size / (1 << 20) / accumulator:6.0f} MiB/s  "
          f"({n} points; the command is {accumulator / cli:.1f}x as fast)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
