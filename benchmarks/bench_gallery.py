"""Gallery throughput: thumbnails of JPEG records, and the grid over 100,000 records.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gallery.py [--images 1000]

Builds ``gallery_photos_N.tfrecord`` in benchmarks/_data (kept between runs):
N detection-style Examples, each a 640x480 JPEG (gradient, shapes and grain,
~50 KB, like a photo at quality 85) with boxes and class texts. Prints:

- thumbnails/s on one thread: read + decode record + find image and boxes +
  ``codec.decode.images.thumbnail`` (JPEG draft) + QImage, at 128 px; and the same
  without draft (full decode, then scale), to show what draft saves;
- thumbnails/s through the gallery's ``ThumbnailLoader`` thread pool;
- the grid over 100,000 records (the N records repeated): time to the first
  screen and to the whole layout (done in batches between events), to jump
  and paint a screen (thumbnails asked for: only the tiles on screen and a
  screenful around them), and frames/s of wheel scrolling while thumbnails
  are being made.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from PIL import Image, ImageDraw

from benchmarks.common import ensure_file, row
from codec import TFRecordFile
from codec.decode.example_proto import Example

SIDE = 128
CLASSES = (b"cat", b"dog", b"bird", b"car", b"tree")


def jpeg(i: int, width: int = 640, height: int = 480) -> bytes:
    """A photo-like JPEG: a gradient, a few shapes, grain."""
    img = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(img)
    r, g, b = (i * 37) % 256, (i * 91) % 256, (i * 53) % 256
    for y in range(height):
        t = y / height
        draw.line([(0, y), (width, y)], fill=(int(r * (1 - t) + 40 * t), int(g * (1 - t) + 90 * t),
                                              int(b * (1 - t) + 60 * t)))
    for k in range(4):
        x0, y0 = (i * 97 + k * 151) % (width - 120), (i * 61 + k * 89) % (height - 120)
        draw.ellipse([x0, y0, x0 + 60 + k * 15, y0 + 60 + k * 10], fill=((k * 80) % 256, 200 - k * 40, 90 + k * 30))
    grain = Image.effect_noise((width, height), 24).convert("RGB")  # film grain: photo-like entropy
    img = Image.blend(img, grain, 0.12)
    out = io.BytesIO()
    img.save(out, "JPEG", quality=85)
    return out.getvalue()


def records(n: int):
    for i in range(n):
        ex = Example()
        f = ex.features.feature
        f["image/encoded"].bytes_list.value.append(jpeg(i))
        f["image/format"].bytes_list.value.append(b"jpeg")
        f["image/height"].int64_list.value.append(480)
        f["image/width"].int64_list.value.append(640)
        boxes = 1 + i % 3
        for k in range(boxes):
            f["image/object/bbox/xmin"].float_list.value.append(0.1 + 0.25 * k)
            f["image/object/bbox/xmax"].float_list.value.append(0.3 + 0.25 * k)
            f["image/object/bbox/ymin"].float_list.value.append(0.2)
            f["image/object/bbox/ymax"].float_list.value.append(0.6)
            f["image/object/class/text"].bytes_list.value.append(CLASSES[(i + k) % len(CLASSES)])
        f["label"].int64_list.value.append(i % len(CLASSES))
        yield ex.SerializeToString()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--grid", type=int, default=100_000)
    args = ap.parse_args()
    n = args.images
    path = ensure_file(f"gallery_photos_{n}.tfrecord", lambda: records(n))
    print(f"{n:,} Examples with a 640x480 JPEG each, {os.path.getsize(path) / 2**20:.1f} MiB")

    from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, Qt, QThread
    from PySide6.QtWidgets import QApplication

    from app.models.filtered_table_model import FilteredTableModel
    from app.models.tiles import ThumbRequest
    from app.views.gallery import Gallery
    from app.workers import thumbnail_loader
    from app.workers.thumbnail_loader import ThumbnailLoader, make_thumbnail

    app = QApplication.instance() or QApplication([])
    with TFRecordFile(path) as f:
        f.build_index()
        assert len(f) == n
        f.verify()

        # -- one thread -------------------------------------------------------
        t = time.perf_counter()
        results = [make_thumbnail(f.read, ThumbRequest(i, SIDE, None, None)) for i in range(n)]
        one = time.perf_counter() - t
        assert all(r.state == "ok" and r.boxes for r in results)
        assert max(max(r.image.width(), r.image.height()) for r in results) <= SIDE
        row(f"thumbnails {SIDE}px, one thread (draft)", f"{n / one:,.0f} thumbs/s", f"{one * 1000 / n:.2f} ms each")

        real = thumbnail_loader.thumbnail

        def no_draft(ref, side, stretch=None):  # 8-bit JPEGs: nothing to stretch
            from codec.decode.images import decode_image

            image = decode_image(ref)
            image.thumbnail((side, side))
            return image

        thumbnail_loader.thumbnail = no_draft
        try:
            count = min(n, 300)
            t = time.perf_counter()
            for i in range(count):
                make_thumbnail(f.read, ThumbRequest(i, SIDE, None, None))
            full = time.perf_counter() - t
        finally:
            thumbnail_loader.thumbnail = real
        row(f"thumbnails {SIDE}px, one thread, no draft", f"{count / full:,.0f} thumbs/s",
            f"draft is {full / count / (one / n):.1f}x faster")

        # -- the loader's pool ------------------------------------------------
        threads = max(2, min(4, QThread.idealThreadCount() - 1))
        loader = ThumbnailLoader(f.read, threads)
        done = []
        loader.ready.connect(done.append)
        t = time.perf_counter()
        loader.want(ThumbRequest(i, SIDE + 1, None, None) for i in range(n))  # not cached from above
        while len(done) < n:
            QCoreApplication.processEvents()
            QThread.msleep(1)
        pool = time.perf_counter() - t
        loader.close()
        row(f"thumbnails {SIDE}px, ThumbnailLoader ({threads} threads)", f"{n / pool:,.0f} thumbs/s",
            f"{pool:.2f} s for {n:,}, {os.cpu_count()} CPUs")

        # -- the grid over many records --------------------------------------
        class Rows(QAbstractTableModel):
            def rowCount(self, parent=QModelIndex()):
                return 0 if parent.isValid() else args.grid

            def columnCount(self, parent=QModelIndex()):
                return 0 if parent.isValid() else 1

            def data(self, index, role=Qt.ItemDataRole.DisplayRole):
                return str(index.row()) if role == Qt.ItemDataRole.DisplayRole else None

        read_count = [0]

        def read(i: int):
            read_count[0] += 1
            return f.read(i % n)

        source = Rows()
        rows = FilteredTableModel(source)
        t = time.perf_counter()
        gallery = Gallery(rows, read, None, threads=threads)
        gallery.resize(1000, 800)
        gallery.show()
        app.processEvents()
        first = time.perf_counter() - t
        bar = gallery.view.verticalScrollBar()
        stable, last = 0, -1
        while stable < 20:  # the grid lays tiles out in batches between events
            app.processEvents()
            stable = stable + 1 if bar.maximum() == last else 0
            last = bar.maximum()
        layout = time.perf_counter() - t
        row(f"gallery over {args.grid:,} records: first screen", f"{first * 1000:,.0f} ms",
            f"whole grid laid out in the background: {layout * 1000:,.0f} ms")
        wanted: list[int] = []
        real_want = gallery.model.loader.want

        def want(requests) -> None:
            requests = list(requests)
            wanted.append(len(requests))
            real_want(requests)

        gallery.model.loader.want = want

        def settle() -> None:
            while gallery.model.pending():
                app.processEvents()
                QThread.msleep(1)

        settle()
        steps, paint = 50, 0.0
        for k in range(steps):
            bar.setValue(int(bar.maximum() * (k + 1) / (steps + 1)))
            t = time.perf_counter()
            gallery.view.viewport().repaint()
            paint += time.perf_counter() - t
            app.processEvents()
        row("  jump anywhere and paint a screen", f"{paint * 1000 / steps:.1f} ms",
            f"then {sum(wanted[-steps:]) / steps:,.0f} thumbnails asked (screen + margin)")
        settle()
        frames, step, value = 0, bar.singleStep() * 2, bar.value()
        t = time.perf_counter()
        while frames < 200:
            value = max(0, value - step)
            bar.setValue(value)
            gallery.view.viewport().repaint()
            app.processEvents()
            frames += 1
        wheel = time.perf_counter() - t
        row("  wheel-scroll, thumbnails made meanwhile", f"{frames / wheel:,.0f} frames/s",
            f"{wheel * 1000 / frames:.1f} ms per frame")
        settle()
        row("  thumbnails made in all", f"{read_count[0]:,}", f"of {args.grid:,} records")
        gallery.stop()


if __name__ == "__main__":
    main()
