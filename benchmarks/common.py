"""Helpers shared by the benchmarks: data generation, timing, TensorFlow if present."""
from __future__ import annotations

import os
import resource
import time
from contextlib import contextmanager

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")


def data_path(name: str) -> str:
    os.makedirs(DATA_DIR, exist_ok=True)
    return os.path.join(DATA_DIR, name)


def small_records(n: int, size: int = 100):
    """``n`` distinct records of ``size`` bytes (cheap to make)."""
    pad = b"x" * (size - 8)
    for i in range(n):
        yield i.to_bytes(8, "little") + pad


def ensure_file(name: str, records_fn, compression: str = "none") -> str:
    from codec import write_records

    path = data_path(name)
    if not os.path.exists(path):
        write_records(path, records_fn(), compression)
    return path


@contextmanager
def timed(label: str, results: dict):
    t = time.perf_counter()
    yield
    results[label] = time.perf_counter() - t


def best_ms(fn, repeat: int = 5) -> float:
    """The fastest of ``repeat`` calls of ``fn()``, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def rss_mb() -> float:
    """Anonymous resident memory (MiB): the heap, not the mmap'd file's page cache."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tensorflow():
    """TensorFlow's module if it happens to be installed (never a dependency)."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        return tf
    except Exception:  # noqa: BLE001 — an optional comparison: any failure to import means it is skipped
        return None


_TF_SCRIPT = """
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
path, compression, skip_to_last = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    n = 0
    for _ in tf.compat.v1.io.tf_record_iterator(path, options=compression or None):
        n += 1
    best = min(best, time.perf_counter() - t)
print(best)
"""


def tf_iterate_seconds(path: str, compression: str = "") -> float | None:
    """Best of 3 of TensorFlow's tf_record_iterator over ``path``, or None.

    Uses TensorFlow in this interpreter if importable, else the interpreter
    named by $TFRLENS_TF_PYTHON (a separate venv with TensorFlow), else None.
    """
    import subprocess
    import sys

    python = sys.executable if tensorflow() is not None else os.environ.get("TFRLENS_TF_PYTHON")
    if not python:
        return None
    proc = subprocess.run([python, "-c", _TF_SCRIPT, path, compression.upper() if compression != "none" else "", "0"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return float(proc.stdout.strip().splitlines()[-1])


def row(what: str, value: str, tf_value: str = "") -> None:
    print(f"  {what:<44} {value:>18}   {tf_value}")


class GapWatch:
    """The GUI thread's stalls: a timer every ``interval_ms`` notes the time since its last tick (``gaps``, ms);
    with BENCH_VERBOSE set, a gap over ``say_over_ms`` is printed with what ``context()`` says then."""

    def __init__(self, interval_ms: int, say_over_ms: int, context=lambda: "") -> None:
        from PySide6.QtCore import QElapsedTimer, QTimer

        self.gaps: list[int] = []
        self._clock, self._timer, self._last = QElapsedTimer(), QTimer(), 0
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._say_over = say_over_ms if os.environ.get("BENCH_VERBOSE") else None
        self._context = context

    def start(self) -> None:
        self._clock.start()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now = self._clock.elapsed()
        gap, self._last = now - self._last, now
        self.gaps.append(gap)
        if self._say_over is not None and gap > self._say_over:
            print(f"    gap {gap} ms at {now} ms, {self._context()}", flush=True)
