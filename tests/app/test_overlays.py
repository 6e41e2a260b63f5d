"""Masks, keypoints and segmentation class maps drawn through the real main window: the Images tab tints a
mask's pixels in its class's colour and only them, each layer has its toggle, the legend names the classes,
the gallery's tiles carry them, and the dark theme still tints."""
from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PIL import Image  # noqa: E402
from PySide6.QtCore import QPoint, QRect, QRectF  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QStyleOptionViewItem  # noqa: E402

from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.models.overlay_layers import OverlayLayers  # noqa: E402
from app.style import palette  # noqa: E402
from app.views.overlay_painting import LayerToggles, keypoint_color, paint_overlays  # noqa: E402
from app.views.record_detail import IMAGES_TAB  # noqa: E402
from codec import open_tfrecord  # noqa: E402
from codec.decode.decoder import decode_record  # noqa: E402
from codec.decode.masks import instance_masks  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES, bytestrings, example, ints  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000
MASKS = FIXTURES / "media" / "masks_keypoints.tfrecord"


def _preview(qtbot, window, path, record: int):
    tab = open_done(window, qtbot, str(path))
    tab.select_record(record)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    preview = tab.detail.images
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and preview.image_count() > 0
                    and preview.pending() == 0 and preview.image(0) is not None
                    and preview.overlays(0) is not None, timeout=TIMEOUT)
    return tab, preview


def _masks(record: int) -> list[np.ndarray]:
    with open_tfrecord(str(MASKS)) as source:
        return [m.inside for m in instance_masks(decode_record(source.read(record).data))]


def _inside_and_outside(record: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(x, y) well inside the first mask, and one inside no mask, away from every mask's edge."""
    masks = _masks(record)
    anywhere = np.logical_or.reduce(masks)
    grown = anywhere.copy()  # a pixel next to a mask may blend with it when the image is scaled
    for dy in (-2, -1, 0, 1, 2):
        for dx in (-2, -1, 0, 1, 2):
            grown |= np.roll(np.roll(anywhere, dy, 0), dx, 1)
    core = masks[0].copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            core &= np.roll(np.roll(masks[0], dy, 0), dx, 1)
    ys, xs = np.nonzero(core)
    oys, oxs = np.nonzero(~grown)
    return (int(xs[len(xs) // 2]), int(ys[len(ys) // 2])), (int(oxs[0]), int(oys[0]))


def _canvas_pixel(canvas, x: int, y: int) -> QColor:
    """The colour the canvas paints at image pixel (x, y), from a grab of the widget."""
    size = canvas.natural_size()
    shot = canvas.grab().toImage()
    sx, sy = shot.width() / size.width(), shot.height() / size.height()
    return shot.pixelColor(int((x + 0.5) * sx), int((y + 0.5) * sy))


def _only_masks(preview) -> None:
    """Boxes and keypoints off, so a pixel's colour is the image's, or the image's under a mask."""
    preview.boxes_button.setChecked(False)
    preview.keypoints_button.setChecked(False)


def test_masks_are_tinted_in_their_class_colour_and_the_toggle_removes_the_tint(window, qtbot):
    tab, preview = _preview(qtbot, window, MASKS, 1)
    layers = preview.overlays(0)
    assert layers.mask_count == 2 and layers.keypoint_count == 6
    assert list(layers.keypoints[:, 2]).count(0) == 1  # one labelled but not visible: drawn hollow
    assert "2 masks · 6 keypoints" in preview.summary.text()
    assert preview.masks_button.isVisibleTo(preview) and preview.keypoints_button.isVisibleTo(preview)
    assert preview.segmentation_button.isHidden()  # no class map in this record: no toggle for one
    assert [name for name, _ in preview.legend_entries()] == ["1", "2"]  # the classes, as the boxes name them
    assert preview.legend.isVisibleTo(preview) and "■" in preview.legend.text()

    inside, outside = _inside_and_outside(1)
    canvas = preview.canvas(0)
    _only_masks(preview)
    tinted_in, tinted_out = _canvas_pixel(canvas, *inside), _canvas_pixel(canvas, *outside)
    preview.masks_button.setChecked(False)
    plain_in, plain_out = _canvas_pixel(canvas, *inside), _canvas_pixel(canvas, *outside)
    assert tinted_in != plain_in  # inside a mask: tinted
    assert tinted_out == plain_out  # outside every mask: the image as it is
    # the tint leans toward the class's colour, the box's
    colour = dict(preview.legend_entries())["1"]
    lean = [t - p for t, p in zip(tinted_in.getRgb()[:3], plain_in.getRgb()[:3])]
    toward = [c - p for c, p in zip(colour.getRgb()[:3], plain_in.getRgb()[:3])]
    assert sum(a * b for a, b in zip(lean, toward)) > 0

    # remembered: the next record is drawn without masks too
    tab.select_record(2)
    qtbot.waitUntil(lambda: preview.pending() == 0 and preview.overlays(0) is not None
                    and preview.overlays(0).mask_count == 3, timeout=TIMEOUT)
    assert not preview.masks_button.isChecked() and not preview.canvas(0).layers.masks


def test_dark_theme_still_tints_a_mask(window, qtbot):
    _tab, preview = _preview(qtbot, window, MASKS, 1)
    _only_masks(preview)
    inside, _outside = _inside_and_outside(1)
    canvas = preview.canvas(0)
    light = _canvas_pixel(canvas, *inside)
    window.theme.actions[palette.DARK].trigger()
    try:
        assert palette.is_dark()
        tinted = _canvas_pixel(canvas, *inside)
        assert tinted != light  # the dark theme's class colour
        assert dict(preview.legend_entries())["1"].name() in preview.legend.text()  # the swatch follows
        preview.masks_button.setChecked(False)
        assert _canvas_pixel(canvas, *inside) != tinted
    finally:
        window.theme.actions[palette.LIGHT].trigger()


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def test_a_segmentation_map_tints_each_class_but_the_background(window, qtbot, tmp_path):
    classes = np.zeros((20, 30), np.uint8)
    classes[2:9, 2:12] = 3
    classes[10:18, 15:28] = 7
    path = tmp_path / "segmentation.tfrecord"
    write_records(path, [example(image__encoded=bytestrings(_png(np.full((20, 30, 3), 128, np.uint8))),
                                 image__segmentation__class__encoded=bytestrings(_png(classes)),
                                 image__height=ints(20), image__width=ints(30))])
    _tab, preview = _preview(qtbot, window, path, 0)
    assert preview.segmentation_button.isVisibleTo(preview) and preview.masks_button.isHidden()
    assert [name for name, _ in preview.legend_entries()] == ["class map 3", "class map 7"]
    canvas = preview.canvas(0)
    three, seven, background = (_canvas_pixel(canvas, 5, 5), _canvas_pixel(canvas, 20, 14),
                                _canvas_pixel(canvas, 1, 19))
    assert len({three.rgb(), seven.rgb(), background.rgb()}) == 3  # a colour per class, none on class 0
    preview.segmentation_button.setChecked(False)
    assert _canvas_pixel(canvas, 5, 5) == background


def test_a_gallery_tile_draws_its_masks(window, qtbot):
    tab = open_done(window, qtbot, str(MASKS))
    gallery = tab.qa.gallery
    gallery.set_side(120)
    tab.qa.show_gallery()
    model = gallery.model
    qtbot.waitUntil(lambda: model.rowCount() == 8 and model.cached_tile(1) is not None, timeout=TIMEOUT)
    tile = model.index(1, 0).data(TILE_ROLE)
    assert tile.state == "ok" and tile.overlays is not None
    assert tile.overlays.mask_count == 2 and tile.overlays.keypoint_count == 6
    assert gallery.layers_button.isVisibleTo(gallery)  # shown once a tile has layers

    delegate = gallery.delegate
    option = QStyleOptionViewItem()
    option.rect = QRect(QPoint(0, 0), delegate.cell_size())
    option.palette = gallery.palette()

    def shot() -> QImage:
        image = QImage(option.rect.size(), QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        delegate.paint(painter, option, model.index(1, 0))
        painter.end()
        return image

    gallery.boxes_check.setChecked(False)
    gallery.keypoints_action.setChecked(False)
    with_masks = shot()
    gallery.masks_action.setChecked(False)
    without = shot()
    assert with_masks != without  # the masks tint the thumbnail
    gallery.masks_action.setChecked(True)
    assert shot() == with_masks


def test_a_keypoint_not_visible_is_drawn_hollow(qtbot):
    layers = OverlayLayers(keypoints=np.array([[10.0, 10.0, 1.0], [30.0, 10.0, 0.0], [np.nan, np.nan, 0.0]]))
    image = QImage(40, 20, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    paint_overlays(painter, layers, [], QRectF(0, 0, 40, 20), 1.0, 1.0, LayerToggles(), dot=5.0)
    painter.end()
    dot = keypoint_color().rgb()
    assert image.pixel(10, 10) == dot  # visible: filled
    assert image.pixel(30, 10) == QColor("white").rgb()  # not visible: its centre left as it was
    assert any(image.pixel(x, 10) == dot for x in range(24, 37) if x != 30)  # but its ring drawn
