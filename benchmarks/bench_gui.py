"""The app on a big file: first rows, full count, memory, event-loop gaps.

    .venv/bin/python benchmarks/bench_gui.py [--records 10000000]

Generates a file of small Examples in benchmarks/_data, opens it in the real
main window (offscreen unless $QT_QPA_PLATFORM says otherwise) and prints:
time from open to the first rows painted, to the full count, the longest gap
a 10 ms QTimer saw while indexing, scrolling to the end, the app's
anonymous memory above the empty window, reopening the file with the index
the app cached, and (in a 200k-record GZIP file) the time from selecting a
random record to its detail shown.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks.common import GapWatch, data_path, row, rss_mb


def make_file(n: int, compression: str = "none") -> str:
    from codec import write_records
    from codec.decode.example_proto import Example

    path = data_path(f"examples_{n}.tfrecord" if compression == "none" else f"examples_{n}.{compression}.tfrecord")
    if os.path.exists(path):
        return path
    variants = []
    for label in range(10):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(label)
        ex.features.feature["score"].float_list.value.append(label / 10)
        ex.features.feature["name"].bytes_list.value.append(b"class-%d" % label)
        variants.append(ex.SerializeToString())
    print(f"generating {n:,} records into {path} ...", flush=True)
    write_records(path, (variants[i % 10] for i in range(n)), compression)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000_000)
    args = ap.parse_args()
    path = make_file(args.records)
    os.environ["TFRLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    app = QApplication([])
    from app.shell.main_window import MainWindow

    window = MainWindow()
    window.resize(1300, 800)
    window.show()
    app.processEvents()
    empty_mb = rss_mb()

    watch = GapWatch(10, 30, lambda: f"rows {tab.model.rowCount():,}")
    t0 = time.perf_counter()
    tab = window.open_file(path)
    watch.start()
    first_rows = None
    finished = []
    tab.indexing_finished.connect(lambda: finished.append(time.perf_counter()))
    while not finished or first_rows is None:
        app.processEvents()
        if first_rows is None and tab.model.rowCount() > 0:
            tab.table.viewport().grab()  # paint the visible rows
            first_rows = time.perf_counter() - t0
        time.sleep(0.001)
    full = finished[0] - t0
    watch.stop()
    count = tab.model.rowCount()
    t = time.perf_counter()
    tab.table.scrollToBottom()
    tab.table.viewport().grab()
    scroll = time.perf_counter() - t
    app.processEvents()
    mem = rss_mb() - empty_mb
    print(f"{count:,} records, {os.path.getsize(path) / 2**20:,.0f} MiB, platform {app.platformName()}")
    row("open -> first rows painted", f"{first_rows:.3f} s")
    row("open -> full count (index pass)", f"{full:.2f} s", f"{count / full:,.0f} records/s")
    row("longest event-loop gap while indexing", f"{max(watch.gaps[1:] or [0]):.0f} ms",
        f"mean tick {sum(watch.gaps[1:]) / max(1, len(watch.gaps) - 1):.1f} ms over {len(watch.gaps)} ticks")
    row("scroll to the end and paint", f"{scroll * 1000:.0f} ms")
    row("memory above the empty app", f"{mem:,.0f} MiB", f"{mem * 2**20 / count:.1f} B/record")
    gzip_record_times(app, window)
    window.close()
    from codec import TFRecordFile

    best = float("inf")
    for _ in range(3):  # the app's pass wrote the index cache; reopening loads it
        t = time.perf_counter()
        with TFRecordFile(path) as f:
            f.build_index()
            assert len(f) == count
        best = min(best, time.perf_counter() - t)
    row("reopen with the cached index (codec)", f"{best:.3f} s", f"best of 3, {count:,} records")


def gzip_record_times(app, window, n: int = 200_000, picks: int = 40) -> None:
    """A GZIP file in the app: from selecting a random record to its detail shown (tree, images, hex)."""
    import random

    tab = window.open_file(make_file(n, "gzip"))
    done = []
    tab.indexing_finished.connect(lambda: done.append(True))
    while not done:
        app.processEvents()
        time.sleep(0.001)
    shown = []
    tab.detail.record_shown.connect(shown.append)
    alone, with_table = [], []
    for i in random.Random(7).sample(range(n), picks):
        t = time.perf_counter()
        tab.select_record(i)
        while i not in shown:
            app.processEvents()
        alone.append(time.perf_counter() - t)
        tab.table.viewport().repaint()  # the new screenful of rows, read and decoded
        with_table.append(time.perf_counter() - t)
    for label, times in (("select a random record -> detail shown", alone),
                         ("  ... and the table repainted around it", with_table)):
        times.sort()
        row(label if label.startswith(" ") else f"GZIP, {n:,} records: {label}",
            f"{times[len(times) // 2] * 1000:.1f} ms", f"median of {picks}; slowest {times[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
