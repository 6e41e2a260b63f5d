"""The app's Scalars view over a generated TensorBoard log folder: reading, keeping, smoothing, drawing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_scalars_view.py [--mb 200]

The folder is bench_scalars.py's (4 runs, 4 scalar tags, a histogram per step, an image every 25
steps; made once in benchmarks/_data). Figures, the best of --repeat (2):
- the worker's pass (codec.ops.scalar_series.log_points_iter over the indexed set, as the view runs it),
- keeping its batches in a LogSeries (what the GUI thread does with them, all batches together),
- the view's refresh with every point (x per axis, TensorBoard's smoothing of every series at 0.6),
- painting every plot once (grabbed offscreen, each line thinned to its width).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.bench_scalars import make_logs
from benchmarks.common import best_ms, data_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the log folder (MiB)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each step; the best is shown")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.views.scalars_view import ScalarsView
    from codec.datasets.payload_choice import choose_for
    from codec.ops.scalar_series import EventPoints, LogSeries, log_points_iter
    from codec.sources.open import open_paths

    folder = data_path(f"tb_logs_{args.mb}mb")
    make_logs(folder, args.mb)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
    source = open_paths([folder], lambda *_: choose_for([folder]), use_cache=False).source
    source.build_index()
    batches: list = []

    def read() -> None:
        batches[:] = [b.found for b in log_points_iter(source, EventPoints())]

    read_s = best_ms(read, args.repeat) / 1000
    series = LogSeries()

    def keep() -> None:
        nonlocal series
        series = LogSeries()
        for batch in batches:
            series.merge(batch)

    keep_s = best_ms(keep, args.repeat) / 1000
    app = QApplication.instance() or QApplication([])
    view = ScalarsView(lambda: source, lambda: False)
    view.resize(1600, 700)
    view.loader.series = series
    view.smoothing.setValue(60)
    refresh_s = best_ms(lambda: (view._smoothing_kept.clear(), view.refresh()), args.repeat) / 1000
    plots = [view.plot(tag) for tag in view.shown_tags()]

    def paint() -> None:
        for plot in plots:
            plot.grab()

    paint_s = best_ms(paint, args.repeat) / 1000
    points = len(series.points)
    print(f"log folder: {size / (1 << 20):.0f} MiB, {len(source):,} events, {len(series.runs)} runs, "
          f"{len(series.scalars)} scalar tags, {points:,} points, "
          f"{sum(len(v) for h in series.histograms.values() for v in h.values()):,} histograms")
    print(f"worker pass (read, parse, group): {read_s:.2f} s ({size / (1 << 20) / read_s:.0f} MiB/s)")
    print(f"kept on the GUI thread (all batches): {keep_s * 1000:.0f} ms")
    print(f"refresh, every point smoothed at 0.6: {refresh_s * 1000:.0f} ms")
    print(f"painting the {len(plots)} plots once: {paint_s * 1000:.0f} ms")
    source.close()
    app.processEvents()
    del app
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"(total {time.perf_counter() - started:.0f} s)")
    sys.exit(code)
