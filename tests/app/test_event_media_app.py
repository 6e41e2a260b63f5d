"""TensorBoard image, text and audio summaries through the real main window: a log folder's gallery shows the
image summaries (captioned by tag, step and run) and audio tiles, the Images tab the images, the Audio tab the
clip, and the tree the text under its tag."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("soundfile")
pytestmark = pytest.mark.gui

from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.views.record_detail import AUDIO_TAB, IMAGES_TAB, TREE_TAB  # noqa: E402
from tests.event_media_logs import RECORDS, TEXT, write_media_log  # noqa: E402
from tests.gui_helpers import open_done, select_decoded  # noqa: E402

TIMEOUT = 20000
COUNT = 1 + len(RECORDS)  # the file version event, then one event per summary


@pytest.fixture
def log_tab(window, qtbot, tmp_path):
    write_media_log(tmp_path)
    return open_done(window, qtbot, str(tmp_path))


def test_the_gallery_shows_image_summaries_captioned_by_tag_step_and_run_and_audio_tiles(log_tab, qtbot):
    log_tab.qa.show_gallery()
    model = log_tab.qa.gallery.model
    qtbot.waitUntil(lambda: model.rowCount() == COUNT and model.tile_count() == COUNT, timeout=TIMEOUT)
    tiles = [model.index(row, 0).data(TILE_ROLE) for row in range(COUNT)]
    images = tiles[RECORDS["tf2_images"]]
    assert (images.state, images.caption) == ("ok", "samples · step 2 · train"), images.note
    assert (images.image.width(), images.image.height()) != (0, 0)
    assert tiles[RECORDS["tf1_image"]].caption == "input · step 3 · train"
    for name in ("tf2_audio", "tf1_audio"):
        tile = tiles[RECORDS[name]]
        assert (tile.state, tile.medium) == ("ok", "audio"), tile.note
        assert tile.badge == "0:00.1 · 8 kHz"
    assert tiles[RECORDS["scalar"]].state == "none"  # a scalar has nothing to show but its caption
    assert tiles[RECORDS["scalar"]].caption == "loss · step 1 · train"


def test_the_images_tab_shows_both_images_of_a_tf2_image_summary(log_tab, qtbot):
    detail = log_tab.detail
    select_decoded(qtbot, log_tab, RECORDS["tf2_images"], detail.images, IMAGES_TAB, TIMEOUT)
    assert detail.tabs.tabText(IMAGES_TAB) == "Images (2)"
    assert [(detail.images.image_size(i).width(), detail.images.image_size(i).height()) for i in (0, 1)] == [
        (6, 4), (6, 4)]


def test_the_audio_tab_shows_an_audio_summarys_clip(log_tab, qtbot):
    detail = log_tab.detail
    _, view = select_decoded(qtbot, log_tab, RECORDS["tf1_audio"], detail.audio, AUDIO_TAB, TIMEOUT)
    assert detail.tabs.tabText(AUDIO_TAB) == "Audio (1)"
    [panel] = view.panels()
    assert "voice" in panel.header_text() and "8,000 Hz" in panel.header_text()


def _row(model, parent, name: str):
    return next(model.index(r, 0, parent) for r in range(model.rowCount(parent))
                if model.index(r, 0, parent).data() == name)


def test_the_tree_shows_a_text_summary_as_text_under_its_tag(log_tab, qtbot):
    detail = log_tab.detail
    log_tab.select_record(RECORDS["tf2_text"])
    qtbot.waitUntil(lambda: detail.current_record() == RECORDS["tf2_text"] and detail.loaded() is not None,
                    timeout=TIMEOUT)
    detail.tabs.setCurrentIndex(TREE_TAB)
    model = detail.tree_model
    summary = _row(model, model.root_index(), "summary")
    assert detail.tree.isExpanded(summary)  # its tags show without a click
    notes = _row(model, summary, "notes")
    assert notes.siblingAtColumn(1).data() == "text"
    shown = '"' + TEXT.replace("\n", "\\n") + '"'  # the text on one line
    assert notes.siblingAtColumn(2).data() == shown  # on the tag's row
    assert _row(model, notes, "text").siblingAtColumn(2).data() == shown


def test_a_filter_on_a_summary_tag_keeps_its_events(log_tab, qtbot):
    from tests.app.test_filter_feedback import type_and_run

    bar = log_tab.qa.filter_bar
    type_and_run(qtbot, bar, 'summary.value.tag == "samples"')
    assert bar.error_text() == ""
    assert bar.count_text() == f"2 of {COUNT} records match"
    model = log_tab.table.model()
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=TIMEOUT)
