"""The gallery of 10,000 audio records, next to the same gallery of 10,000 images.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_audio_gallery.py [--records 10000]

Builds two files in benchmarks/_data (kept between runs):

- ``gallery_audio_N.tfrecord``: N Examples, each a 1-5 s clip at 16 kHz, in turn a 16-bit WAV
  (``audio/encoded``), an int16 PCM list and a float PCM list (``audio/samples`` with ``audio/sample_rate``);
  ``--kinds wav`` (or ``int``, ``float``, or two of them) makes a file of those only;
- ``gallery_photos_cycled_N.tfrecord``: N detection Examples, 640x480 JPEGs with boxes as
  bench_gallery.py makes them (500 distinct pictures, repeated).

Prints, for each file:

- tiles/s on one thread (read + decode + find the clip or image + waveform or thumbnail + QImage) at 128 px;
- through the real main window (offscreen): open, wait for the index, show the gallery, then scroll
  from the top to the bottom at half a screen every 16 ms frame (a fast fling, the view painted each
  frame), and then, from the middle with its screen drawn, 300 frames of two scroll steps (a mouse
  wheel), while the loader makes tiles. For each: tiles made per second, the share of the tiles on
  screen already drawn at each frame, the longest GUI-thread stall (the longest gap a 5 ms timer
  saw, less its 5 ms) and the frames' time (scroll + paint).

``BENCH_ONLY=audio`` (or ``images``) runs one of the two; ``BENCH_VERBOSE=1`` prints each gap over 100 ms.
"""
from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from benchmarks.common import GapWatch, ensure_file, row

RATE = 16000
SIDE = 128
FRAME_MS = 16
TICK_MS = 5
WHEEL_FRAMES = 300


def _clip(i: int) -> np.ndarray:
    """1-5 s of a tone with a swell and some noise, as int16 (different for each record)."""
    rng = np.random.default_rng(i)
    frames = int(RATE * (1 + 4 * rng.random()))
    t = np.arange(frames, dtype=np.float32) / RATE
    swell = 0.2 + 0.6 * np.sin(np.pi * t / t[-1]) ** 2
    wave = swell * np.sin(2 * np.pi * (180 + 40 * (i % 10)) * t) + 0.05 * rng.standard_normal(frames)
    return (np.clip(wave, -1, 1) * 32767).astype(np.int16)


KINDS = ("wav", "int", "float")


def audio_records(n: int, kinds: tuple[str, ...] = KINDS):
    import soundfile as sf

    from codec.decode.example_proto import Example

    for i in range(n):
        samples = _clip(i)
        ex = Example()
        f = ex.features.feature
        kind = kinds[i % len(kinds)]
        if kind == "wav":
            out = io.BytesIO()
            sf.write(out, samples, RATE, format="WAV", subtype="PCM_16")
            f["audio/encoded"].bytes_list.value.append(out.getvalue())
        elif kind == "int":
            f["audio/samples"].int64_list.value.extend(samples.tolist())
        else:
            f["audio/samples"].float_list.value.extend((samples / 32768).tolist())
        f["audio/sample_rate"].int64_list.value.append(RATE)
        f["label"].int64_list.value.append(i % 10)
        yield ex.SerializeToString()


def photo_records(n: int, distinct: int = 500):
    from benchmarks.bench_gallery import records

    pictures = list(records(min(n, distinct)))
    for i in range(n):
        yield pictures[i % len(pictures)]


def one_thread(path: str, count: int) -> float:
    """Tiles per second on one thread, at SIDE px."""
    from app.models.tiles import ThumbRequest
    from app.workers.thumbnail_loader import make_thumbnail
    from codec import TFRecordFile

    with TFRecordFile(path) as f:
        f.build_index()
        t = time.perf_counter()
        results = [make_thumbnail(f.read, ThumbRequest(i, SIDE, None, None)) for i in range(count)]
        elapsed = time.perf_counter() - t
    assert all(r.state == "ok" for r in results), {r.state for r in results}
    return count / elapsed


def scroll_through(app, path: str) -> dict:
    """Open ``path`` in the main window, show its gallery, fling through it top to bottom, then
    wheel-scroll from the middle: each phase's figures (:func:`_scroll`)."""
    from PySide6.QtCore import QThread

    from app.models.settings import Settings
    from app.shell.main_window import MainWindow

    window = MainWindow(Settings())
    window.resize(1300, 860)
    window.show()
    tab = window.open_file(path)
    while tab.is_running() or tab.state().phase not in ("done", "failed", "cancelled"):
        app.processEvents()
        QThread.msleep(2)
    gallery = tab.qa.gallery
    gallery.set_side(SIDE)
    tab.qa.show_gallery()
    bar = gallery.view.verticalScrollBar()
    stable, last = 0, -1
    while stable < 20:  # the grid lays tiles out in batches between events
        app.processEvents()
        stable = stable + 1 if bar.maximum() == last and bar.maximum() > 0 else 0
        last = bar.maximum()
    model = gallery.model
    while model.pending():  # the first screen, so both files start alike
        app.processEvents()
        QThread.msleep(1)
    fling = _scroll(app, gallery, max(1, gallery.view.viewport().height() // 2), start=0)
    fling["records"] = model.rowCount()
    while model.pending():  # the fling's last screen
        app.processEvents()
        QThread.msleep(1)
    middle = bar.maximum() // 2
    bar.setValue(middle)
    gallery.view.viewport().repaint()  # painting asks for the screen's tiles
    app.processEvents()
    while model.pending():  # a screen drawn, then the wheel
        app.processEvents()
        QThread.msleep(1)
    wheel = _scroll(app, gallery, bar.singleStep() * 2, start=middle, frames_max=WHEEL_FRAMES)
    gallery.stop()
    window.close()
    window.deleteLater()
    app.processEvents()
    return {"fling": fling, "wheel": wheel}


def _scroll(app, gallery, step: int, start: int, frames_max: int | None = None) -> dict:
    """Scroll ``step`` pixels every FRAME_MS (the view painted each frame) from ``start`` to the bottom
    or for ``frames_max`` frames, while the loader makes tiles; what the GUI thread went through."""
    from PySide6.QtCore import QEventLoop, QTimer

    from app.models.gallery_model import TILE_ROLE

    model, bar = gallery.model, gallery.view.verticalScrollBar()
    made = [0]

    def count(_record: int) -> None:
        made[0] += 1

    model.tile_ready.connect(count)
    frames: list[float] = []
    filled: list[float] = []
    loop = QEventLoop()

    def frame() -> None:
        t = time.perf_counter()
        bar.setValue(min(bar.maximum(), bar.value() + step))
        gallery.view.viewport().repaint()
        frames.append(time.perf_counter() - t)
        screen = gallery.view.visible_rows()
        if screen is not None:
            tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(screen[0], screen[1] + 1)]
            filled.append(sum(tile.state != "pending" for tile in tiles) / max(1, len(tiles)))
        if bar.value() >= bar.maximum() or (frames_max is not None and len(frames) >= frames_max):
            loop.quit()

    watch = GapWatch(TICK_MS, 100, lambda: f"frame {len(frames)}, made {made[0]}")
    scroller = QTimer()
    scroller.setInterval(FRAME_MS)
    scroller.timeout.connect(frame)
    bar.setValue(start)
    app.processEvents()
    t0 = time.perf_counter()
    watch.start()
    scroller.start()
    loop.exec()
    elapsed = time.perf_counter() - t0
    scroller.stop()
    watch.stop()
    model.tile_ready.disconnect(count)
    return {
        "seconds": elapsed,
        "frames": len(frames),
        "tiles_per_s": made[0] / elapsed,
        "filled": statistics.mean(filled) if filled else 0.0,
        "stall_ms": max(0, max(watch.gaps[1:] or [0]) - TICK_MS),
        "frame_ms_median": statistics.median(frames) * 1000,
        "frame_ms_worst": max(frames) * 1000,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--kinds", default=",".join(KINDS), help="the audio records' kinds, in turn: wav, int, float")
    args = ap.parse_args()
    n = args.records
    kinds = tuple(args.kinds.split(","))
    assert set(kinds) <= set(KINDS), f"--kinds: {args.kinds}"
    os.environ["TFRLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="tfrlens-bench-cache-")
    name = "" if kinds == KINDS else "_" + "_".join(kinds)
    audio = ensure_file(f"gallery_audio{name}_{n}.tfrecord", lambda: audio_records(n, kinds))
    photos = ensure_file(f"gallery_photos_cycled_{n}.tfrecord", lambda: photo_records(n))

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    which = os.environ.get("BENCH_ONLY")
    for name, path in (("audio", audio), ("images", photos)):
        if which and which != name:
            continue
        size = os.path.getsize(path) / 2**20
        print(f"{name}: {n:,} records, {size:,.0f} MiB")
        row(f"  {name} tiles {SIDE}px, one thread", f"{one_thread(path, min(n, 600)):,.0f} tiles/s")
        phases = scroll_through(app, path)
        r = phases["fling"]
        row(f"  {name}: fling through {r['records']:,} tiles in the main window",
            f"{r['seconds']:.1f} s", f"{r['frames']:,} frames of half a screen")
        _phase_rows(r)
        r = phases["wheel"]
        row(f"  {name}: wheel-scroll from the middle", f"{r['seconds']:.1f} s",
            f"{r['frames']:,} frames of two scroll steps")
        _phase_rows(r)


def _phase_rows(r: dict) -> None:
    row("    tiles made while scrolling", f"{r['tiles_per_s']:,.0f} tiles/s",
        f"on screen drawn at each frame: {r['filled'] * 100:.0f}% on average")
    row("    longest GUI-thread stall", f"{r['stall_ms']:.0f} ms",
        f"frame (scroll + paint): median {r['frame_ms_median']:.1f} ms, worst {r['frame_ms_worst']:.1f} ms")


if __name__ == "__main__":
    main()
