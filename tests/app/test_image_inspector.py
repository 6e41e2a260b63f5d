"""The Images tab through the real main window: the pixel inspector reads decoded values (16-bit ones in
full), a box says what it is when hovered, an invalid box is drawn as one."""
from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PIL import Image  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, QRect  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QStyleOptionViewItem  # noqa: E402

from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.style import palette  # noqa: E402
from app.views.box_painting import INVALID_NOTE, box_rect  # noqa: E402
from app.views.record_detail import IMAGES_TAB  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import bytestrings, example, floats, ints  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _images_of(qtbot, window, path, record: int = 0):
    """Open ``path``, show ``record``'s Images tab and wait until its images are decoded."""
    tab = open_done(window, qtbot, str(path))
    tab.select_record(record)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    preview = tab.detail.images
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and preview.image_count() > 0
                    and preview.pending() == 0 and preview.image(0) is not None, timeout=TIMEOUT)
    return preview


def _point_at(qtbot, canvas, x: int, y: int) -> None:
    """Move the pointer over image pixel (x, y) of ``canvas``."""
    size = canvas.natural_size()
    pos = QPoint(int((x + 0.5) * canvas.width() / size.width()), int((y + 0.5) * canvas.height() / size.height()))
    assert canvas.pixel_at(pos) == (x, y)
    qtbot.mouseMove(canvas, pos)


def test_the_inspector_reads_sixteen_bit_values_and_the_images_range(window, qtbot, tmp_path):
    pixels = (1000 + np.arange(48 * 64, dtype=np.uint32) * 19).reshape(48, 64).astype(np.uint16)
    path = tmp_path / "img16.tfrecord"
    write_records(path, [example(image__encoded=bytestrings(_png(Image.fromarray(pixels))), label=ints(1))])
    preview = _images_of(qtbot, window, path)
    values = preview.pixel_values(0)
    assert values is not None and values.bits == 16
    lowest, highest = f"{int(pixels.min()):,}", f"{int(pixels.max()):,}"
    # before pointing: the image, its depth and range (not only "PNG 64×48")
    assert preview.pixel_text().startswith(f"PNG 64×48 · 16-bit · values {lowest}–{highest}")
    canvas = preview.canvas(0)
    _point_at(qtbot, canvas, 40, 30)
    want = f"x 40, y 30 · {int(pixels[30, 40]):,} · PNG 64×48 · 16-bit · values {lowest}–{highest}"
    qtbot.waitUntil(lambda: preview.pixel_text() == want, timeout=TIMEOUT)
    assert int(pixels[30, 40]) > 255  # the decoded value, not the 8 bits drawn
    _point_at(qtbot, canvas, 0, 47)
    qtbot.waitUntil(lambda: preview.pixel_text().startswith(f"x 0, y 47 · {int(pixels[47, 0]):,} ·"),
                    timeout=TIMEOUT)


def test_hovering_a_box_says_what_it_is_and_an_invalid_box_is_marked(window, qtbot, tmp_path):
    image = Image.fromarray(np.full((100, 200, 3), 90, np.uint8))
    path = tmp_path / "boxes.tfrecord"
    write_records(path, [example(
        image__encoded=bytestrings(_png(image)),
        image__object__bbox__xmin=floats(0.1, 0.8), image__object__bbox__xmax=floats(0.4, 0.6),
        image__object__bbox__ymin=floats(0.2, 0.1), image__object__bbox__ymax=floats(0.6, 0.5),
        image__object__class__label=ints(3, 2), image__object__class__text=bytestrings(b"cat", b"dog"),
        image__object__score=floats(0.875, 0.5))])
    preview = _images_of(qtbot, window, path)
    good, flipped = preview.boxes(0)
    assert good.problem is None and flipped.problem == "xmin 0.8 > xmax 0.6"
    canvas = preview.canvas(0)
    size = canvas.natural_size()
    sx, sy = canvas.width() / size.width(), canvas.height() / size.height()
    inside = box_rect(good, canvas.rect().toRectF(), sx, sy).center().toPoint()
    tip = canvas.tooltip_at(inside)
    assert tip == ("cat (label 3) · score 0.875\n"
                   "xmin 0.1, ymin 0.2, xmax 0.4, ymax 0.6 (normalised)\n"
                   "x 20–80, y 20–60 px")
    bad_tip = canvas.tooltip_at(box_rect(flipped, canvas.rect().toRectF(), sx, sy).center().toPoint())
    assert bad_tip.startswith("dog (label 2) · score 0.5\n") and bad_tip.endswith(f"{INVALID_NOTE}: xmin 0.8 > xmax 0.6")
    assert canvas.tooltip_at(QPoint(canvas.width() - 2, canvas.height() - 2)) is None  # over no box

    # drawn: the invalid box dashed in the warning colour; the good one solid, one colour all along
    shot = canvas.grab().toImage()

    def colours_along_top(box) -> set:
        r = box_rect(box, canvas.rect().toRectF(), sx, sy)
        return {shot.pixelColor(QPointF(r.left() + f * r.width(), r.top()).toPoint()).getRgb()[:3]
                for f in np.linspace(0.2, 0.8, 25)}

    dashed, solid = colours_along_top(flipped), colours_along_top(good)
    assert len(solid) == 1 and len(dashed) > 1
    warm = palette.WARN_TEXT
    assert any(r - b > (warm.red() - warm.blue()) // 3 for r, _g, b in dashed)  # the warning colour shows


def test_one_bit_and_one_colour_thumbnails_get_a_frame(window, qtbot, tmp_path):
    bilevel = Image.new("1", (40, 30), 1)
    bilevel.paste(0, (5, 5, 12, 12))  # mostly white, a few black pixels
    gradient = Image.fromarray(np.tile(np.linspace(0, 255, 40, dtype=np.uint8), (30, 1)))
    path = tmp_path / "plain.tfrecord"
    write_records(path, [example(image__encoded=bytestrings(_png(im))) for im in
                         (bilevel, Image.new("RGB", (40, 30), "white"), Image.new("L", (40, 30), 0), gradient)])
    tab = open_done(window, qtbot, str(path))
    gallery = tab.qa.gallery
    gallery.set_side(96)
    tab.qa.show_gallery()
    model = gallery.model
    qtbot.waitUntil(lambda: model.rowCount() == 4 and model.pending() == 0
                    and all(model.cached_tile(r) is not None for r in range(4)), timeout=TIMEOUT)
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(4)]
    assert [t.state for t in tiles] == ["ok"] * 4
    assert [t.framed for t in tiles] == [True, True, True, False]

    # painted: a white image on a white cell shows a frame in the palette's mid tone
    delegate = gallery.delegate
    option = QStyleOptionViewItem()
    option.rect = QRect(QPoint(0, 0), delegate.cell_size())
    option.palette = gallery.palette()
    shot = QImage(option.rect.size(), QImage.Format.Format_RGB32)
    for r, framed in ((1, True), (3, False)):
        shot.fill(QColor("white"))
        painter = QPainter(shot)
        delegate.paint(painter, option, model.index(r, 0))
        painter.end()
        frame = delegate.frame_color().rgb()
        has_frame = any(shot.pixel(x, y) == frame for x in range(shot.width()) for y in range(shot.height()))
        assert has_frame == framed
