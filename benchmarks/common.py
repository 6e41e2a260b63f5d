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


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tensorflow():
    """TensorFlow's module if it happens to be installed (never a dependency)."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf  # noqa: F401

        return tf
    except Exception:
        return None


def tf_iterate_seconds(path: str, compression: str = "") -> float | None:
    tf = tensorflow()
    if tf is None:
        return None
    t = time.perf_counter()
    for _ in tf.compat.v1.io.tf_record_iterator(path, options=compression or None):
        pass
    return time.perf_counter() - t


def row(what: str, value: str, tf_value: str = "") -> None:
    print(f"  {what:<44} {value:>18}   {tf_value}")
