"""Dataset QA through the real main window: gallery, filter bar, statistics and the feature spec."""
from __future__ import annotations

from array import array

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402
from PySide6.QtGui import QStandardItemModel  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.models.filtered_table_model import FilteredTableModel  # noqa: E402
from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.models.record_table_model import RECORD_ROLE, RecordTableModel  # noqa: E402
from app.models.records_owner import HeldRecords  # noqa: E402
from app.models.tiles import ThumbRequest  # noqa: E402
from app.shell.file_tab import FileTab  # noqa: E402
from app.shell.qa_views import GALLERY_VIEW, TABLE_VIEW  # noqa: E402
from app.views.stats_panel import CHART, PRESENT, TOP_ROLE, TYPE  # noqa: E402
from app.workers.thumbnail_loader import caption_for, make_thumbnail  # noqa: E402
from codec.decode.example_proto import Example, Feature, Features  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from resources import demo_path  # noqa: E402
from tests.builders import FIXTURES, example  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000


def show_gallery(qtbot, tab: FileTab, side: int = 64) -> None:
    """The gallery tab, with thumbnails small enough that every fixture record is on screen."""
    gallery = tab.qa.gallery
    gallery.set_side(side)
    tab.qa.show_gallery()
    assert tab.qa.views.currentIndex() == GALLERY_VIEW


def wait_tiles(qtbot, tab: FileTab, count: int) -> None:
    model = tab.qa.gallery.model

    def done() -> None:
        missing = [r for r in range(model.rowCount()) if model.cached_tile(model.record_at(r)) is None]
        assert model.tile_count() >= count and model.pending() == 0, \
            f"{model.tile_count()} tiles, {model.pending()} pending, missing rows {missing[:10]}, " \
            f"visible {tab.qa.gallery.view.isVisible()}"
    qtbot.waitUntil(done, timeout=TIMEOUT)


def filter_done(qtbot, tab: FileTab, text: str) -> None:
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run(text)


# -- the rows proxy ----------------------------------------------------------
def test_filtered_rows_map_records_both_ways(qtbot):
    f = TFRecordFile(str(FIXTURES / "structured.tfrecord"))
    f.build_index()
    try:
        source = RecordTableModel(HeldRecords(f))
        source.sync()
        rows = FilteredTableModel(source)
        assert rows.rowCount() == rows.total() == 100 and not rows.is_filtered
        assert rows.record_at(42) == 42 and rows.row_for_record(42) == 42
        rows.set_matches(array("Q", [3, 10, 50]), "x")
        assert rows.rowCount() == 3 and rows.shown() == 3 and rows.total() == 100
        assert [rows.record_at(r) for r in range(3)] == [3, 10, 50]
        assert rows.index(1, 0).data() == "10" and rows.index(1, 0).data(RECORD_ROLE) == 10
        assert rows.row_for_record(10) == 1 and rows.row_for_record(11) == -1
        assert rows.row_for_record(12, nearest=True) == 1 and rows.row_for_record(99, nearest=True) == 2
        assert rows.mapToSource(rows.index(2, 1)).row() == 50
        assert rows.mapFromSource(source.index(50, 0)).row() == 2
        assert not rows.mapFromSource(source.index(51, 0)).isValid()
        assert rows.headerData(2, Qt.Orientation.Vertical) == "50"
        rows.clear_filter()
        assert rows.rowCount() == 100 and rows.matches() is None
    finally:
        f.close()


# -- gallery -----------------------------------------------------------------
def test_hidden_gallery_follows_nothing_until_shown(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    gallery = tab.qa.gallery
    assert gallery.model.rowCount() == 0 and gallery.model.tile_count() == 0
    tab.select_record(9)
    show_gallery(qtbot, tab)
    assert gallery.model.rowCount() == 25 and gallery.current_record() == 9
    tab.qa.show_table()
    filter_done(qtbot, tab, "label == 0")
    assert gallery.model.rowCount() == 25  # hidden: not yet
    tab.qa.show_gallery()
    assert gallery.model.rowCount() == 5


def test_gallery_shows_a_thumbnail_per_flower(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    show_gallery(qtbot, tab)
    wait_tiles(qtbot, tab, 25)
    model = tab.qa.gallery.model
    assert model.rowCount() == 25
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(25)]
    assert all(t.state == "ok" and t.image is not None for t in tiles)
    assert max(t.image.width() for t in tiles) <= model.side
    # captions: the class text, chosen automatically
    assert {t.caption for t in tiles} == {"daisy", "dandelion", "roses", "sunflowers", "tulips"}


def test_gallery_draws_detection_boxes(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    show_gallery(qtbot, tab, side=160)
    wait_tiles(qtbot, tab, 12)
    model = tab.qa.gallery.model
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(model.rowCount())]
    assert len(tiles) == 12 and all(t.state == "ok" for t in tiles)
    assert all(t.boxes for t in tiles)
    # boxes are in thumbnail pixels: inside the thumbnail
    for t in tiles:
        for b in t.boxes:
            assert 0 <= b.xmin <= b.xmax <= t.image.width() + 0.5
            assert 0 <= b.ymin <= b.ymax <= t.image.height() + 0.5
    # painted: a tile with boxes differs from the same tile without them
    view = tab.qa.gallery.view
    with_boxes = view.viewport().grab().toImage()
    tab.qa.gallery.boxes_check.setChecked(False)
    without = view.viewport().grab().toImage()
    assert with_boxes != without


def test_sequence_examples_show_their_first_step(window, qtbot):
    tab = open_done(window, qtbot, "sequence_examples.tfrecord")
    show_gallery(qtbot, tab)
    wait_tiles(qtbot, tab, 10)
    model = tab.qa.gallery.model
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(10)]
    assert all(t.state == "ok" for t in tiles)
    assert all("step 0" in t.note for t in tiles)


def test_undecodable_and_imageless_records_are_marked(qtbot, tmp_path):
    flowers = TFRecordFile(str(FIXTURES / "flowers_jpeg.tfrecord"))
    flowers.build_index()
    with flowers:
        jpeg = Example.FromString(flowers.read(0).data).features.feature["encoded"].bytes_list.value[0]

    path = tmp_path / "mixed.tfrecord"
    write_records(path, [
        example(**{"image/encoded": Feature(bytes_list={"value": [jpeg]})}),
        example(**{"image/encoded": Feature(bytes_list={"value": [jpeg[:-150]]})}),  # cut short
        example(label=Feature(int64_list={"value": [7]})),
    ])
    f = TFRecordFile(str(path))
    f.build_index()
    try:
        states = [make_thumbnail(f.read, ThumbRequest(i, 64, None, None)).state for i in range(3)]
    finally:
        f.close()
    assert states == ["ok", "error", "none"]


def test_selection_follows_between_table_gallery_and_detail(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    show_gallery(qtbot, tab)
    gallery = tab.qa.gallery
    # a thumbnail chosen in the gallery: table and detail follow
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        gallery.view.setCurrentIndex(gallery.model.index(7, 0))
    assert tab.current_record() == 7
    assert tab.table.currentIndex().row() == 7
    assert tab.detail.current_record() == 7
    # a record chosen in the table (or by go-to): the gallery follows
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(19)
    assert gallery.current_record() == 19
    assert gallery.view.selectionModel().isSelected(gallery.model.index(19, 0))
    # switching back to the table keeps the record
    tab.qa.show_table()
    assert tab.qa.views.currentIndex() == TABLE_VIEW and tab.current_record() == 19


# -- filter ------------------------------------------------------------------
def test_filter_shows_n_of_m_in_table_and_gallery(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    filter_done(qtbot, tab, "label == 3")
    bar = tab.qa.filter_bar
    assert "5 of 25" in bar.count_text()
    assert tab.table.model().rowCount() == 5
    records = [tab.table.model().index(r, 0).data(RECORD_ROLE) for r in range(5)]
    assert all(tab.model.index(i, 0).data() == str(i) for i in records)
    assert tab.current_record() in records and tab.detail.current_record() in records
    # the gallery shows the same records: labels are all 3 ("sunflowers")
    show_gallery(qtbot, tab)
    assert tab.qa.gallery.model.rowCount() == 5
    assert tab.qa.gallery.current_record() == tab.current_record()
    wait_tiles(qtbot, tab, 5)
    captions = {tab.qa.gallery.model.index(r, 0).data(TILE_ROLE).caption for r in range(5)}
    assert captions == {"sunflowers"}
    # history, then Show All
    assert bar.history()[0] == "label == 3"
    bar.clear()
    assert tab.table.model().rowCount() == 25 and bar.count_text() == "25 records"


def test_filter_that_matches_nothing_empties_the_views(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    filter_done(qtbot, tab, 'text ~ "orchid"')
    assert tab.qa.filter_bar.count_text().startswith("0 of 25")
    assert tab.table.model().rowCount() == 0 and tab.current_record() == -1
    assert tab.detail.current_record() == -1


def test_bad_expression_points_at_the_position_without_raising(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    bar = tab.qa.filter_bar
    assert bar.run("label == ") is False  # no exception, nothing run
    text = bar.error_text()
    assert "label ==" in text
    assert "         ^" in text  # the caret under position 9
    assert "at position 9" in text and "expected" in text
    assert not bar.is_running() and tab.table.model().rowCount() == 25
    # fixed as the user types: the error goes away
    bar.edit.setText("label == 3")
    bar.edit.textEdited.emit("label == 3")
    assert bar.error_text() == ""


def test_go_to_a_record_outside_the_filter_lands_on_the_nearest(window, qtbot):
    tab = open_done(window, qtbot, "structured.tfrecord")
    filter_done(qtbot, tab, "int_col >= 50")
    assert tab.table.model().rowCount() == 50
    tab.select_record(10)
    assert tab.current_record() == 50


# -- statistics --------------------------------------------------------------
def test_stats_panel_for_flowers(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    assert window.qa.stats_dock.isVisible() and panel.isVisible()
    assert panel.stats_json()["records"] == 25
    label = panel.feature_row("label")
    assert label, "no row for the label feature"
    assert label[CHART].data(TOP_ROLE) == ((0, 5), (1, 5), (2, 5), (3, 5), (4, 5))
    assert "0 ×5" in label[CHART].data() and "4 ×5" in label[CHART].data()
    assert label[TYPE].data() == "int64" and label[PRESENT].data().startswith("25")
    encoded = panel.feature_row("encoded")
    assert encoded[TYPE].data() == "bytes · images" and "JPEG 25" in encoded[CHART].data()
    text = panel.feature_row("text")
    assert '"' not in text[CHART].data() and "daisy ×5" in text[CHART].data()


def test_stats_follow_the_filter(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        filter_done(qtbot, tab, "label >= 3")
    assert panel.stats_json()["records"] == 10
    assert panel.feature_row("label")[CHART].data(TOP_ROLE) == ((3, 5), (4, 5))


def test_stats_of_sequence_examples_list_lengths(window, qtbot):
    tab = open_done(window, qtbot, "sequence_examples.tfrecord")
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    model = panel.model()
    assert isinstance(model, QStandardItemModel)
    groups = [model.index(g, 0).data() for g in range(model.rowCount())]
    assert any(g.startswith("Context") for g in groups) and any(g.startswith("Feature lists") for g in groups)
    frames = panel.feature_row("frames")
    assert frames[3].data().startswith("steps 1–4")


# -- feature spec ------------------------------------------------------------
def test_schema_view_gives_python_and_json(window, qtbot):
    tab = open_done(window, qtbot, "structured.tfrecord")
    view = tab.qa.schema_view()
    with qtbot.waitSignal(view.runner.finished, timeout=TIMEOUT):
        window.qa.show_feature_spec()
    python = view.python_text()
    assert '"int_col": tf.io.FixedLenFeature([], dtype=tf.int64)' in python
    assert "features_spec = {" in python
    assert '"int_col"' in view.json_text() and '"FixedLenFeature"' in view.json_text()
    assert view.python.copy() == python
    assert QApplication.clipboard().text() == python


def test_schema_comes_from_the_statistics_when_they_are_there(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    view = tab.qa.schema_view()
    assert view.schema() is not None  # no second pass
    assert '"label": tf.io.FixedLenFeature([], dtype=tf.int64)' in view.python_text()


def test_caption_words():
    from codec.decode.decoder import decode_record

    data = Example(features=Features(feature={
        "label": Feature(int64_list={"value": [3]}),
        "image/object/class/text": Feature(bytes_list={"value": [b"cat", b"dog"]}),
        "image/filename": Feature(bytes_list={"value": [b"a.jpg"]}),
    })).SerializeToString()
    decoded = decode_record(data)
    assert caption_for(decoded, None) == "label 3"
    assert caption_for(decoded, "image/object/class/text") == "cat, dog"
    assert caption_for(decoded, "image/filename") == "a.jpg"
    assert caption_for(decoded, "missing") == ""


def test_demo_gallery_mixes_examples_and_sequences(window, qtbot):
    tab = open_done(window, qtbot, demo_path())
    show_gallery(qtbot, tab)
    wait_tiles(qtbot, tab, tab.proxy.rowCount())
    model = tab.qa.gallery.model
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(model.rowCount())]
    assert all(t.state == "ok" for t in tiles)
    assert sum(1 for t in tiles if t.boxes) >= 20


def test_closing_a_tab_stops_qa_work(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    show_gallery(qtbot, tab)
    window.qa.show_statistics()
    panel = tab.qa.stats_panel()
    gallery = tab.qa.gallery
    window.close_current()
    assert window.tabs.count() == 0
    assert window.qa.stats_dock.stack.currentWidget() is window.qa.stats_dock.hint
    assert not panel.runner.is_active() and gallery.model.loader.pending() == 0


def test_status_refresh_repaints_tiles_without_remaking_them(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    show_gallery(qtbot, tab)
    wait_tiles(qtbot, tab, 25)
    made = [tab.qa.gallery.model.cached_tile(i) for i in range(25)]
    tab.model.refresh_status()  # what a verify pass does when it finds damage
    assert [tab.qa.gallery.model.cached_tile(i) for i in range(25)] == made


def test_filter_asked_for_while_indexing_runs_when_indexing_ends(window, qtbot):
    tab = window.open_file(str(FIXTURES / "flowers_jpeg.tfrecord"))
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("label == 3 or label == 4")
    assert bar.count_text() == "10 of 25 records match"
    assert tab.table.model().rowCount() == 10


def test_filter_history_is_kept_between_runs(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    filter_done(qtbot, tab, "label == 1")
    filter_done(qtbot, tab, 'text == "roses"')
    other = open_done(window, qtbot, "structured.tfrecord")
    assert other.qa.filter_bar.history()[:2] == ['text == "roses"', "label == 1"]
    assert other.qa.filter_bar.text() == ""


def test_gallery_over_100k_records_makes_only_what_is_seen(qtbot):
    from PySide6.QtCore import QAbstractTableModel

    from app.views.gallery import Gallery

    class Rows(QAbstractTableModel):
        def rowCount(self, parent=QModelIndex()):
            return 0 if parent.isValid() else 100_000

        def columnCount(self, parent=QModelIndex()):
            return 0 if parent.isValid() else 1

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            return None

    f = TFRecordFile(str(FIXTURES / "flowers_jpeg.tfrecord"))
    f.build_index()
    source = Rows()
    rows = FilteredTableModel(source)
    gallery = Gallery(rows, lambda i: f.read(i % 25), None)
    qtbot.addWidget(gallery)
    gallery.resize(900, 700)
    gallery.show()
    try:
        qtbot.waitUntil(lambda: gallery.model.tile_count() > 0 and gallery.model.pending() == 0, timeout=TIMEOUT)
        first = gallery.model.tile_count()
        assert 0 < first < 500
        middle = rows.rowCount() // 2
        gallery.set_current_record(middle)  # as when the table goes there
        qtbot.waitUntil(lambda: gallery.model.cached_tile(middle) is not None, timeout=TIMEOUT)
        qtbot.waitUntil(lambda: gallery.model.pending() == 0, timeout=TIMEOUT)
        assert gallery.model.tile_count() < 1000  # the first screens and the middle, nothing between
        assert gallery.model.cached_tile(middle // 2) is None
    finally:
        gallery.stop()
        f.close()


def test_filter_and_statistics_run_over_unsaved_edits(window, qtbot):
    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    qtbot.waitUntil(lambda: tab.editing.editable, timeout=TIMEOUT)
    tab.select_record(0)
    assert tab.editing.delete_selected()
    assert tab.model.rowCount() == 24
    filter_done(qtbot, tab, "has(label) and index >= 0")
    assert "24 of 24" in tab.qa.filter_bar.count_text()
    tab.qa.filter_bar.clear()
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    assert panel.stats_json()["records"] == 24
