"""What the QA views show, through the real main window: 16-bit images, int64 extremes in the
statistics, a Feature Spec dock opened before the file, and the gallery scrolled to the selection."""
from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PIL import Image  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.models.settings import Settings  # noqa: E402
from app.models.stretch_preference import StretchPreference, stretch_preference  # noqa: E402
from app.views.record_detail import IMAGES_TAB  # noqa: E402
from app.views.stats_panel import SUMMARY  # noqa: E402
from codec.decode.example_proto import BytesList, Feature, Int64List  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import example  # noqa: E402
from tests.gui_helpers import open_done, wait_done  # noqa: E402

TIMEOUT = 20000
FLAT = 24200
FLAT_GREY = round(FLAT * 255 / 65535)  # 94
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1




def _png16(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def _sixteen_bit_file(tmp_path) -> str:
    """Record 0: a flat I;16 PNG (every pixel 24200); record 1: a low-contrast one (1000..1300)."""
    flat = np.full((24, 32), FLAT, np.uint16)
    ramp = (1000 + np.arange(24 * 32) * 300 // (24 * 32 - 1)).reshape(24, 32).astype(np.uint16)
    path = tmp_path / "depth16.tfrecord"
    write_records(path, [example(image__encoded=Feature(bytes_list=BytesList(value=[_png16(p)])),
                                  label=Feature(int64_list=Int64List(value=[k]))) for k, p in enumerate((flat, ramp))])
    return str(path)


def _greys(image) -> set[int]:
    """The grey levels of a QImage (Grayscale8 or RGB: the red channel)."""
    return {image.pixelColor(x, y).red() for y in range(image.height()) for x in range(image.width())}


def _show_record(qtbot, tab, record: int) -> None:
    """Select ``record`` and wait until the detail shows it, images decoded."""
    if tab.current_record() != record:
        with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
            tab.select_record(record)
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and tab.detail.images.pending() == 0
                    and tab.detail.images.image_count() > 0, timeout=TIMEOUT)


# -- 16-bit images -----------------------------------------------------------
def test_sixteen_bit_png_is_grey_in_the_images_tab_and_the_gallery(window, qtbot, tmp_path):
    tab = open_done(window, qtbot, _sixteen_bit_file(tmp_path))
    _show_record(qtbot, tab, 0)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    preview = tab.detail.images
    assert preview.image_count() == 1 and preview.image_error(0) is None
    assert _greys(preview.image(0)) == {FLAT_GREY}

    tab.qa.gallery.set_side(64)
    tab.qa.show_gallery()
    model = tab.qa.gallery.model
    qtbot.waitUntil(lambda: model.cached_tile(0) is not None and model.cached_tile(1) is not None,
                    timeout=TIMEOUT)
    tile = model.cached_tile(0)
    assert tile.state == "ok" and _greys(tile.image) == {FLAT_GREY}
    assert "I;16" not in tile.note and "PNG" in tile.note


def test_stretch_contrast_is_shared_and_remembered(window, qtbot, tmp_path):
    tab = open_done(window, qtbot, _sixteen_bit_file(tmp_path))
    _show_record(qtbot, tab, 1)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    preview = tab.detail.images
    by_type = _greys(preview.image(0))
    assert min(by_type) == 4 and max(by_type) == 5  # 1000..1300 of 65535: near black
    assert not preview.stretch_action.isChecked() and not tab.qa.gallery.stretch_check.isChecked()

    preview.stretch_button.click()  # the user asks for the image's own range
    assert preview.stretch() == "minmax" and preview.stretch_action.isChecked()
    stretched = _greys(preview.image(0))
    assert min(stretched) == 0 and max(stretched) == 255
    assert tab.qa.gallery.stretch_check.isChecked()  # the gallery follows the same choice
    assert tab.qa.gallery.model.stretch == "minmax"
    assert Settings().stretch_contrast() is True  # and it is remembered

    tab.qa.gallery.stretch_check.setChecked(False)  # switched off in the gallery: the preview follows
    assert preview.stretch() == "dtype" and not preview.stretch_action.isChecked()
    assert max(_greys(preview.image(0))) == 5
    assert Settings().stretch_contrast() is False


def test_stretch_preference_reads_the_settings(qtbot):
    Settings().set_stretch_contrast(True)
    assert stretch_preference().value() is True and StretchPreference().value() is True
    with qtbot.waitSignal(stretch_preference().changed) as changed:
        stretch_preference().set_value(False)
    assert changed.args == [False] and Settings().stretch_contrast() is False


# -- statistics --------------------------------------------------------------
def test_int64_min_and_max_are_shown_whole(window, qtbot, tmp_path):
    path = tmp_path / "extremes.tfrecord"
    write_records(path, [example(big=Feature(int64_list=Int64List(value=[v]))) for v in (INT64_MIN, 0, INT64_MAX)])
    tab = open_done(window, qtbot, str(path))
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    cell = panel.feature_row("big")[SUMMARY]
    lines = cell.data().splitlines()
    assert lines[0] == "min -9,223,372,036,854,775,808"
    assert lines[1] == "max 9,223,372,036,854,775,807"
    # the column is wide enough for each whole line: nothing is elided on screen
    tree = panel.tree
    metrics = tree.fontMetrics()
    width = tree.header().sectionSize(SUMMARY)
    assert all(metrics.horizontalAdvance(line) + 12 <= width for line in lines[:2]), (width, lines)
    assert "-9,223,372,036,854,775,808" in cell.data(0x03)  # the tooltip repeats the whole text


# -- feature spec ------------------------------------------------------------
def test_feature_spec_dock_shown_before_the_file_fills_itself(window, qtbot, fixture_file):
    window.qa.show_feature_spec()
    assert window.qa.spec_dock.isVisible()
    tab = window.open_file(fixture_file("structured.tfrecord"))
    view = tab.qa.schema_view()
    with qtbot.waitSignal(view.runner.finished, timeout=TIMEOUT):
        wait_done(qtbot, tab)
    assert window.qa.spec_dock.stack.currentWidget() is view
    python = view.python_text()
    assert '"int_col": tf.io.FixedLenFeature([], dtype=tf.int64)' in python
    assert "from 0 records" not in view.bar.summary.text()
    assert view.schema().records == tab.model.rowCount() > 0


def test_feature_spec_dock_follows_the_current_tab(window, qtbot, fixture_file):
    first = open_done(window, qtbot, fixture_file("structured.tfrecord"))
    window.qa.show_feature_spec()
    qtbot.waitUntil(lambda: first.qa.schema_view().schema() is not None, timeout=TIMEOUT)
    second = window.open_file(fixture_file("flowers_jpeg.tfrecord"))
    view = second.qa.schema_view()
    qtbot.waitUntil(lambda: view.schema() is not None and not view.runner.is_active(), timeout=TIMEOUT)
    assert window.qa.spec_dock.stack.currentWidget() is view
    assert '"label": tf.io.FixedLenFeature([], dtype=tf.int64)' in view.python_text()
    window.tabs.setCurrentWidget(first)
    assert window.qa.spec_dock.stack.currentWidget() is first.qa.schema_view()
    assert '"int_col"' in first.qa.schema_view().python_text()


# -- gallery -----------------------------------------------------------------
def test_gallery_shown_scrolls_to_the_selected_record(window, qtbot, tmp_path):
    n = 3000
    tab = _open_with_last_selected(window, qtbot, tmp_path, n)
    assert tab.current_record() == n - 1
    tab.qa.show_gallery()
    gallery = tab.qa.gallery
    view = gallery.view

    _wait_until_tile_in_view(qtbot, gallery, n - 1)
    assert view.verticalScrollBar().value() > 0


def test_gallery_shown_scrolls_to_the_selected_record_on_another_page(window, qtbot, tmp_path, monkeypatch):
    # The gallery's tiles are taller than table rows, so it pages sooner (qa_views): with views
    # this small, the table holds all 3,000 records and the gallery pages of a few hundred.
    import app.models.filtered_table_model as ftm

    monkeypatch.setattr(ftm, "MAX_VIEW_PIXELS", 120_000)
    n = 3000
    tab = _open_with_last_selected(window, qtbot, tmp_path, n)
    tab.qa.show_gallery()
    gallery = tab.qa.gallery
    assert tab.proxy.window_rows < n  # paged now

    _wait_until_tile_in_view(qtbot, gallery, n - 1)


# -- raw pixels only when declared or asked for --------------------------------
def test_gallery_of_bytes_without_images_has_no_noise_until_asked(window, qtbot, tmp_path, monkeypatch):
    import app.views.gallery as gallery_module
    from codec.decode.images import RawShape

    path = tmp_path / "hashes.tfrecord"
    pixels = [bytes((i * 9 + k) % 256 for k in range(192)) for i in range(6)]  # 8x8x3 of bytes, or a hash
    write_records(path, [example(digest=Feature(bytes_list=BytesList(value=[p])),
                                  label=Feature(int64_list=Int64List(value=[i]))) for i, p in enumerate(pixels)])
    tab = open_done(window, qtbot, str(path))
    gallery = tab.qa.gallery
    gallery.set_side(64)
    tab.qa.show_gallery()
    model = gallery.model
    qtbot.waitUntil(lambda: all(model.cached_tile(i) is not None for i in range(6)), timeout=TIMEOUT)
    assert {model.cached_tile(i).state for i in range(6)} == {"none"}  # no 8x8 noise tiles
    assert tab.detail.images.image_count() == 0

    asked = []
    monkeypatch.setattr(gallery_module, "ask_raw_shape",
                        lambda parent, current: asked.append(current) or RawShape(8, 8, 3))
    gallery.image_combo.setCurrentIndex(gallery.image_combo.findData(gallery_module.RAW_CHOICE))
    assert asked == [None] and model.raw_shape == RawShape(8, 8, 3)
    assert gallery.image_combo.currentText() == "Raw 8×8×3"
    qtbot.waitUntil(lambda: all(model.cached_tile(i) is not None for i in range(6)), timeout=TIMEOUT)
    tile = model.cached_tile(2)
    assert tile.state == "ok" and "raw uint8 · 8×8×3" in tile.note
    assert tile.image.pixelColor(0, 0).red() == pixels[2][0]  # the bytes themselves, drawn as pixels

    monkeypatch.setattr(gallery_module, "ask_raw_shape", lambda parent, current: None)  # asked again, cancelled
    gallery.image_combo.setCurrentIndex(0)
    assert model.raw_shape is None
    gallery.image_combo.setCurrentIndex(gallery.image_combo.findData(gallery_module.RAW_CHOICE))
    assert gallery.image_combo.currentIndex() == 0 and model.raw_shape is None


def _open_with_last_selected(window, qtbot, tmp_path, n: int):
    """A tab on a file of ``n`` small records, its last record selected and shown."""
    path = tmp_path / "many.tfrecord"
    write_records(path, [example(label=Feature(int64_list=Int64List(value=[i % 7]))) for i in range(n)])
    tab = open_done(window, qtbot, str(path))
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(n - 1)
    return tab


def _wait_until_tile_in_view(qtbot, gallery, record: int) -> None:
    """Wait until ``record`` is the gallery's current tile and inside its viewport, and stays there."""
    view = gallery.view

    def selected_tile_visible() -> None:
        index = view.currentIndex()
        assert index.isValid() and gallery.model.record_at(index.row()) == record
        assert view.visualRect(index).intersects(view.viewport().rect()), (view.visualRect(index),
                                                                            view.viewport().rect())
    qtbot.waitUntil(selected_tile_visible, timeout=TIMEOUT)
    QApplication.processEvents()
    selected_tile_visible()  # and it stays there once the grid has settled
