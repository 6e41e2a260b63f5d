"""GalleryModel without a view: one item per shown row, thumbnails made in the background, captions,
and statuses, over the rows of a session of a reference fixture."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.models.gallery_model import DEFAULT_SIDE, TILE_ROLE, GalleryModel
from app.models.record_table_model import RECORD_ROLE
from app.workers.thumbnail_loader import ThumbnailLoader
from codec.decode.decoder import decode_record, feature_values, record_features
from tests.app.tab_parts import TIMEOUT, TabParts

pytestmark = pytest.mark.gui


@pytest.fixture
def gallery_over(tab_parts):
    def make(name: str, **options) -> tuple[TabParts, GalleryModel]:
        parts = tab_parts(name, **options)
        records = parts.session.records
        loader = ThumbnailLoader(records.read, 1, source=lambda: records)
        model = GalleryModel(parts.rows, loader, parts.host, status=lambda i: records.index.status(i))
        parts.closing(model.close)
        return parts, model

    return make


def tiles(qtbot, model: GalleryModel) -> list:
    """Every item's tile once its thumbnail has been made (asking for them as a view's painting does)."""
    for row in range(model.rowCount()):
        model.index(row, 0).data(TILE_ROLE)
    qtbot.waitUntil(lambda: all(model.cached_tile(model.record_at(r)) is not None for r in range(model.rowCount())),
                    timeout=TIMEOUT)
    return [model.index(row, 0).data(TILE_ROLE) for row in range(model.rowCount())]


def test_the_gallery_fills_with_a_thumbnail_and_a_caption_per_record(qtbot, gallery_over):
    parts, model = gallery_over("flowers_jpeg.tfrecord")
    model.set_active(True)
    assert model.rowCount() == 25
    first = model.index(0, 0).data(TILE_ROLE)
    assert first.state in ("pending", "ok") and first.record == 0
    made = tiles(qtbot, model)
    assert [t.record for t in made] == list(range(25))
    assert all(t.state == "ok" and 0 < t.image.width() <= DEFAULT_SIDE and 0 < t.image.height() <= DEFAULT_SIDE
               for t in made)
    texts = [feature_values(record_features(decode_record(parts.session.records.read(i).data))["text"])[1][0]
             for i in range(25)]
    assert [t.caption for t in made] == [text.decode() for text in texts]
    assert model.index(3, 0).data(Qt.ItemDataRole.DisplayRole) == made[3].caption
    assert model.index(3, 0).data(RECORD_ROLE) == 3


def test_the_items_are_the_rows_shown_and_a_hidden_gallery_catches_up_when_shown(gallery_over):
    parts, model = gallery_over("structured.tfrecord")
    assert model.rowCount() == 0 and not model.active  # hidden: follows nothing yet
    model.set_active(True)
    assert model.rowCount() == 100
    parts.rows.set_matches([2, 5, 9], "int_col in (2, 5, 9)")
    assert model.rowCount() == 3 and [model.record_at(r) for r in range(3)] == [2, 5, 9]
    model.set_active(False)
    parts.rows.clear_filter()
    assert model.rowCount() == 3  # hidden: the view is not told of the rows until shown
    model.set_active(True)
    assert model.rowCount() == 100 and model.record_at(99) == 99


def test_a_record_without_an_image_is_a_tile_saying_so_with_its_damage(qtbot, gallery_over):
    _, model = gallery_over("corrupt_data_crc.tfrecord", verify=True)
    model.set_active(True)
    made = tiles(qtbot, model)
    assert {t.state for t in made} == {"none"}  # records without an image feature
    assert [t.record for t in made if t.status.damaged] == [5]
    assert "record damaged" in model.index(5, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "record damaged" not in model.index(4, 0).data(Qt.ItemDataRole.ToolTipRole)
