"""Colours for embeddings: a vector as a heat strip, and the colour of each label in a projection.

The strip maps each value to a diverging scale (negative: ``palette.SERIES_1``,
zero: ``palette.CANVAS_BG``, positive: ``palette.SERIES_5``), scaled by the
vector's largest magnitude, so its pattern shows whatever its range.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from app.style import palette

STRIP_SIZE = (160, 12)  # pixels: the Tree's Value column holds it before the text
STRIP_VALUES = 512  # a longer vector is averaged down to this many cells


def _rgb(color: QColor) -> np.ndarray:
    return np.array([color.red(), color.green(), color.blue()], dtype=np.float32)


def diverging(t: np.ndarray) -> np.ndarray:
    """ARGB32 words for ``t`` in [-1, 1] on the diverging scale (NaN: the neutral middle)."""
    t = np.nan_to_num(np.clip(np.asarray(t, dtype=np.float32), -1, 1))[..., None]
    low, mid, high = _rgb(palette.SERIES_1), _rgb(palette.CANVAS_BG), _rgb(palette.SERIES_5)
    rgb = np.where(t < 0, mid + (low - mid) * -t, mid + (high - mid) * t).round().astype(np.uint32)
    return (0xFF000000 | (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]).astype(np.uint32)


def heat_strip(values, size: tuple[int, int] = STRIP_SIZE) -> QImage:
    """The values of a vector as a strip of ``size`` pixels, one cell per value (cells averaged past STRIP_VALUES)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size > STRIP_VALUES:
        edges = np.linspace(0, v.size, STRIP_VALUES + 1).astype(np.int64)
        v = np.add.reduceat(v, edges[:-1]) / np.diff(edges)
    finite = np.isfinite(v)
    scale = float(np.abs(v[finite]).max()) if finite.any() else 0.0
    words = diverging(v / scale if scale > 0 else np.zeros_like(v))[None, :]
    cells = QImage(words.tobytes(), words.shape[1], 1, words.shape[1] * 4, QImage.Format.Format_ARGB32).copy()
    return cells.scaled(size[0], size[1], Qt.AspectRatioMode.IgnoreAspectRatio,
                        Qt.TransformationMode.FastTransformation)


def label_colors(count: int) -> list[QColor]:
    """A colour for each of ``count`` labels: the chart series in turn, darker then lighter on later rounds."""
    out = []
    for i in range(count):
        base = QColor(palette.SERIES[i % len(palette.SERIES)])
        turn = i // len(palette.SERIES)
        out.append(base if turn == 0 else base.darker(100 + 40 * turn) if turn % 2 else base.lighter(100 + 30 * turn))
    return out
