"""Masks, keypoints and class maps in the app: what building and painting them costs.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_overlays.py [--masks 20]

Makes one detection Example in memory: a 1024×768 image with N objects, each a box, a class and a PNG
instance mask (an ellipse), 17 keypoints per object (some not visible) and a PNG segmentation class map.
Prints the time to build the layers on a worker (the Images tab's job, and a 128 px thumbnail's), and to
paint them over the image at 1024×768: the first paint (colouring the layers) and a repaint.
"""
from __future__ import annotations

import argparse
import io
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from PIL import Image, ImageDraw

from benchmarks.common import best_ms

W, H = 1024, 768


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def record(objects: int) -> bytes:
    """A detection Example with ``objects`` masked objects, their keypoints and a class map."""
    from codec.decode.example_proto import Example

    rng = np.random.default_rng(0)
    ex = Example()
    f = ex.features.feature
    classes = Image.new("L", (W, H), 0)
    for k in range(objects):
        x0, y0 = int(rng.integers(0, W - 200)), int(rng.integers(0, H - 200))
        x1, y1 = x0 + int(rng.integers(40, 200)), y0 + int(rng.integers(40, 200))
        mask = Image.new("L", (W, H), 0)
        ImageDraw.Draw(mask).ellipse((x0, y0, x1, y1), fill=1)
        ImageDraw.Draw(classes).ellipse((x0, y0, x1, y1), fill=1 + k % 20)
        f["image/object/mask"].bytes_list.value.append(_png(mask))
        for key, value in (("xmin", x0 / W), ("xmax", x1 / W), ("ymin", y0 / H), ("ymax", y1 / H)):
            f[f"image/object/bbox/{key}"].float_list.value.append(value)
        f["image/object/class/label"].int64_list.value.append(1 + k % 5)
        for _ in range(17):
            f["image/object/keypoint/x"].float_list.value.append(float(rng.uniform(x0, x1)) / W)
            f["image/object/keypoint/y"].float_list.value.append(float(rng.uniform(y0, y1)) / H)
            f["image/object/keypoint/visibility"].int64_list.value.append(int(rng.integers(0, 3)))
    f["image/segmentation/class/encoded"].bytes_list.value.append(_png(classes))
    f["image/encoded"].bytes_list.value.append(_png(Image.new("RGB", (W, H), (90, 120, 150))))
    f["image/height"].int64_list.value.append(H)
    f["image/width"].int64_list.value.append(W)
    return ex.SerializeToString()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--masks", type=int, default=20)
    args = parser.parse_args()
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtWidgets import QApplication

    from app.models.overlay_layers import build_layers
    from app.views.overlay_painting import LayerToggles, paint_overlays
    from codec.decode.decoder import decode_record
    from codec.decode.image_boxes import find_boxes
    from codec.decode.images import find_images, main_image

    QApplication.instance() or QApplication([])
    decoded = decode_record(record(args.masks))
    boxes = find_boxes(decoded, main_image(find_images(decoded)))
    full = best_ms(lambda: build_layers(decoded, boxes))
    thumb = best_ms(lambda: build_layers(decoded, boxes, scale=(128 / W, 128 / W), side=128))
    layers = build_layers(decoded, boxes)
    canvas = QImage(W, H, QImage.Format.Format_RGB32)

    def paint() -> None:
        painter = QPainter(canvas)
        paint_overlays(painter, layers, boxes, QRectF(0, 0, W, H), 1.0, 1.0, LayerToggles())
        painter.end()

    first = best_ms(lambda: (layers.tints.clear(), paint()))
    again = best_ms(paint)
    points = layers.keypoint_count
    print(f"{args.masks} masks, {points} keypoints, one class map at {W}×{H}")
    print(f"build the layers (the Images tab's worker job):  {full:8.1f} ms")
    print(f"build them for a 128 px thumbnail:                {thumb:8.1f} ms")
    print(f"paint them at {W}×{H}, first time (colouring):   {first:8.1f} ms")
    print(f"repaint:                                          {again:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
