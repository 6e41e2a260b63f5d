"""TFDS dataset folders and class names through the real main window: the shards list with each shard's
split, the set decoded per its features.json, and the gallery's thumbnails with their boxes and names."""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402

from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.models.shard_list_model import NAME, SPLIT  # noqa: E402
from app.shell.shard_set_tab import ShardSetTab  # noqa: E402
from app.views.record_detail import IMAGES_TAB, TREE_TAB  # noqa: E402
from codec.cli.main import main  # noqa: E402
from codec.datasets.payload_choice import Choice, choose_for  # noqa: E402
from codec.datasets.tfds import TfdsPayload  # noqa: E402
from codec.decode.decoder import decode_record  # noqa: E402
from codec.decode.example_proto import Example  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done, wait_done  # noqa: E402

TIMEOUT = 20000
DATASET = FIXTURES / "payloads" / "tfds" / "lens_tfds_demo" / "1.2.0"
MANIFEST = json.loads((FIXTURES / "payloads" / "MANIFEST.json").read_text())["tfds/lens_tfds_demo/1.2.0"]


def manifest_records(tab: ShardSetTab) -> list[tuple[str, dict]]:
    """(split, what the reference library reads) of each of the set's records, in the set's order."""
    by_file = {name: split for split, entry in MANIFEST["splits"].items() for name in entry["files"]}
    out = []
    for shard in tab.shard_set.shards:
        split = by_file[os.path.basename(shard.path)]
        out.extend((split, record) for record in MANIFEST["splits"][split]["records"])
    return out


def open_dataset(window, qtbot, path=DATASET) -> ShardSetTab:
    tab = window.open_set([os.fspath(path)])
    assert isinstance(tab, ShardSetTab), window.message_bar.text()
    return wait_done(qtbot, tab, TIMEOUT)


def tree_rows(qtbot, tab, record: int) -> tuple:
    """Show ``record`` in the Tree tab; its tree model and {feature key: row index} of the Example's features."""
    tab.select_record(record)
    tab.detail.tabs.setCurrentIndex(TREE_TAB)
    model = tab.detail.tree_model
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and model.root_index().isValid(),
                    timeout=TIMEOUT)
    root = model.root_index()
    return model, {model.index(r, 0, root).data(): model.index(r, 0, root) for r in range(model.rowCount(root))}


def gallery_tiles(qtbot, tab, side: int = 160) -> list:
    """Show the gallery and wait until every record's tile and caption are made; the tiles in row order."""
    gallery = tab.qa.gallery
    gallery.set_side(side)
    tab.qa.show_gallery()
    model = gallery.model

    def done() -> None:
        assert model.rowCount() == tab.model.rowCount() and model.pending() == 0
        assert all(model.cached_tile(model.record_at(r)) is not None and model.index(r, 0).data(TILE_ROLE).caption
                   for r in range(model.rowCount()))
    qtbot.waitUntil(done, timeout=TIMEOUT)
    return [model.index(r, 0).data(TILE_ROLE) for r in range(model.rowCount())]


def expected_boxes(record: dict) -> list[tuple[float, float, float, float, str]]:
    """The MANIFEST's objects/bbox (ymin, xmin, ymax, xmax, normalised) in pixels as (xmin, ymin, xmax, ymax)."""
    height, width = record["image"]["shape"][:2]
    values = record["objects/bbox"]["values"]
    names = record["objects/label"]["name"]
    return [(xmin * width, ymin * height, xmax * width, ymax * height, name)
            for (ymin, xmin, ymax, xmax), name in zip(zip(*[iter(values)] * 4), names)]


def as_tuples(boxes, sx: float = 1.0, sy: float = 1.0) -> list[tuple]:
    return [(b.xmin * sx, b.ymin * sy, b.xmax * sx, b.ymax * sy, b.label) for b in boxes]


def assert_boxes(found: list[tuple], expected: list[tuple]) -> None:
    assert [b[4] for b in found] == [b[4] for b in expected]
    for got, want in zip(found, expected):
        assert got[:4] == pytest.approx(want[:4], abs=1e-3)


# -- the set -------------------------------------------------------------------
def test_a_tfds_folder_opens_split_by_split_with_its_payload_and_names(window, qtbot):
    tab = open_dataset(window, qtbot)
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "lens_tfds_demo 1.2.0"
    assert window.payload_label.text() == "as TFDS lens_tfds_demo 1.2.0"
    assert window.message_bar.isHidden()  # features.json and the rest are not "skipped" shards
    source = tab.shard_set
    assert isinstance(source.payload, TfdsPayload) and source.payload.name == choose_for([os.fspath(DATASET)]).payload.name
    assert tab.model.rowCount() == 22 == sum(len(e["records"]) for e in MANIFEST["splits"].values())

    # each record's split, as the shards list shows it, and the record the reference reads there
    panel = tab.shards_panel
    model = panel.model
    split_col, name_col = model.section(SPLIT), model.section(NAME)
    assert split_col == 0 and model.headerData(split_col, Qt.Orientation.Horizontal) == "Split"
    expected = manifest_records(tab)
    for i, (split, record) in enumerate(expected):
        k = source.shard_of(i)
        assert model.data(model.index(k, split_col)) == split, f"record {i}"
        decoded = decode_record(source.read(i).data, source.payload)
        assert decoded.value["id"].array.tolist() == record["id"]["values"][0], f"record {i}"
    assert [model.data(model.index(k, name_col)) for k in range(model.rowCount())] == ["00000-of-00001"] * 2
    counts = {name: entry["num_examples"] for name, entry in MANIFEST["splits"].items()}
    assert panel.summary.text().splitlines() == [
        "lens_tfds_demo 1.2.0", f"train {counts['train']} · test {counts['test']} examples",
        "2 shards · 2 indexed · 22 records"]
    shard_col = next(c for c in range(tab.model.columnCount())
                     if tab.model.headerData(c, Qt.Orientation.Horizontal) == "Shard")
    assert [tab.model.data(tab.model.index(i, shard_col)) for i in range(22)] == \
        [f"{split} 00000-of-00001" for split, _record in expected]
    assert "16 examples per dataset_info.json" in model.data(model.index(0, split_col), Qt.ItemDataRole.ToolTipRole)

    # class names in the table and in the tree
    tab.model.set_feature_columns(["label"])
    label_col = next(c for c in range(tab.model.columnCount())
                     if tab.model.headerData(c, Qt.Orientation.Horizontal) == "label")
    for i, (_split, record) in enumerate(expected):
        assert tab.model.data(tab.model.index(i, label_col)) == f"{record['label']['value']} ({record['label']['name']})"
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(16)
    tab.detail.tabs.setCurrentIndex(TREE_TAB)
    tree = tab.detail.tree_model
    root = tree.root_index()
    rows = {tree.data(tree.index(r, 0, root)): tree.index(r, 2, root) for r in range(tree.rowCount(root))}
    assert tree.data(rows["label"]) == f"{expected[16][1]['label']['value']} ({expected[16][1]['label']['name']})"


def test_a_plain_folder_has_no_split_column(window, qtbot):
    tab = open_dataset(window, qtbot, FIXTURES / "shards")
    model = tab.shards_panel.model
    assert model.dataset is None and model.columnCount() == 3 and model.section(SPLIT) == -1
    assert tab.shard_set.payload is None and window.tabs.tabText(0) == "shards"


# -- the gallery and the Images tab ---------------------------------------------
def test_tfds_thumbnails_have_the_bbox_boxes_with_class_names(window, qtbot):
    tab = open_dataset(window, qtbot)
    tiles = gallery_tiles(qtbot, tab)
    expected = manifest_records(tab)
    assert len(tiles) == len(expected) == 22
    boxed = 0
    for i, (tile, (_split, record)) in enumerate(zip(tiles, expected)):
        assert tile.state == "ok", f"record {i}: {tile.note}"
        height, width = record["image"]["shape"][:2]
        sx, sy = width / tile.image.width(), height / tile.image.height()  # thumbnail pixels -> image pixels
        assert_boxes(as_tuples(tile.boxes, sx, sy), expected_boxes(record))
        assert tile.caption == f"label {record['label']['value']} ({record['label']['name']})"
        boxed += bool(tile.boxes)
    assert boxed >= 10  # most records have objects

    # the Images tab draws the same boxes, in image pixels
    record = next(i for i, (_s, r) in enumerate(expected) if len(r["objects/label"]["name"]) >= 2)
    tab.select_record(record)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    images = tab.detail.images
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and images.image_count() == 1, timeout=TIMEOUT)
    assert_boxes(as_tuples(images.boxes(0)), expected_boxes(expected[record][1]))


def test_detection_boxes_are_named_by_the_label_map_beside_the_file(window, qtbot, tmp_path):
    shutil.copy(FIXTURES / "detection.tfrecord", tmp_path / "detection.tfrecord")
    shutil.copy(FIXTURES / "payloads" / "label_maps" / "label_map.pbtxt", tmp_path / "label_map.pbtxt")
    tab = open_done(window, qtbot, os.fspath(tmp_path / "detection.tfrecord"))
    assert tab.session.source.labels is not None
    gallery = tab.qa.gallery
    tiles = gallery_tiles(qtbot, tab)
    names = {b.label for t in tiles for b in t.boxes}
    assert {"Cat", "Dog"} <= names and not {"cat", "dog"} & names  # display names, not the file's class/text
    # captions from the class ids name them too
    qtbot.waitUntil(lambda: gallery.caption_combo.findData("image/object/class/label") >= 0, timeout=TIMEOUT)
    gallery.caption_combo.setCurrentIndex(gallery.caption_combo.findData("image/object/class/label"))
    tiles = gallery_tiles(qtbot, tab)
    assert tiles[0].caption == "label 1 (Cat)"
    assert any("(Dog)" in t.caption for t in tiles)


def test_decode_as_remakes_the_gallery(window, qtbot):
    tab = open_dataset(window, qtbot)
    tiles = gallery_tiles(qtbot, tab)
    assert any(t.boxes for t in tiles)
    with qtbot.waitSignal(tab.session.payload_changed, timeout=TIMEOUT):
        tab.session.set_choice(Choice())  # the kind rule: plain Examples, no TFDS boxes, no names
    tiles = gallery_tiles(qtbot, tab)
    assert all(t.state == "ok" and not t.boxes for t in tiles)  # the PNG bytes still show
    assert all("(" not in t.caption for t in tiles)
    with qtbot.waitSignal(tab.session.payload_changed, timeout=TIMEOUT):
        tab.session.set_choice(choose_for([os.fspath(DATASET)]))
    tiles = gallery_tiles(qtbot, tab)
    assert any(t.boxes for t in tiles) and all(t.caption.endswith(")") for t in tiles)


def test_a_set_whose_remembered_schema_is_gone_opens_by_its_dataset_and_says_so(window, qtbot, tmp_path):
    from app.models.settings import Settings

    folder = tmp_path / "lens_tfds_demo" / "1.2.0"
    shutil.copytree(DATASET, folder)
    Settings().set_decode_as(os.fspath(folder), os.fspath(tmp_path / "gone.desc"), "lens.demo.Frame")
    tab = open_dataset(window, qtbot, folder)
    assert isinstance(tab.shard_set.payload, TfdsPayload) and tab.model.rowCount() == 22
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=TIMEOUT)
    assert "gone.desc is gone" in window.message_bar.text() and "skipped" not in window.message_bar.text()


def _with_depth(tmp_path) -> Path:
    """The demo dataset with a 16-bit ``depth`` Image beside ``image`` in every record (sorting before it)."""
    folder = tmp_path / "lens_tfds_demo" / "1.2.0"
    shutil.copytree(DATASET, folder)
    spec = json.loads((folder / "features.json").read_text())
    spec["featuresDict"]["features"]["depth"] = {
        "pythonClassName": "tensorflow_datasets.core.features.image_feature.Image",
        "image": {"dtype": "uint16", "encodingFormat": "png", "shape": {"dimensions": ["24", "32", "1"]}}}
    (folder / "features.json").write_text(json.dumps(spec))
    depth = io.BytesIO()
    Image.fromarray(np.arange(24 * 32, dtype=np.uint16).reshape(24, 32) * 80).save(depth, "PNG")
    for shard in folder.glob("*.tfrecord-*"):
        with TFRecordFile(os.fspath(shard)) as f:
            messages = [Example.FromString(f.read(i).data) for i in range(len(f.build_index()))]
        for message in messages:
            message.features.feature["depth"].bytes_list.value.append(depth.getvalue())
        write_records(shard, [m.SerializeToString() for m in messages])
    return folder


def test_auto_shows_the_picture_with_its_boxes_not_the_depth_map(window, qtbot, tmp_path):
    tab = open_dataset(window, qtbot, _with_depth(tmp_path))
    tiles = gallery_tiles(qtbot, tab)
    expected = manifest_records(tab)
    for i, (tile, (_split, record)) in enumerate(zip(tiles, expected)):
        assert tile.state == "ok", f"record {i}: {tile.note}"
        assert not tile.image.isGrayscale(), f"record {i}: the depth map was picked"
        height, width = record["image"]["shape"][:2]
        assert_boxes(as_tuples(tile.boxes, width / tile.image.width(), height / tile.image.height()),
                     expected_boxes(record))
    # the Images tab shows both; the boxes are on the picture only
    record = next(i for i, (_s, r) in enumerate(expected) if r["objects/label"]["name"])
    tab.select_record(record)
    tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
    images = tab.detail.images
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and images.image_count() == 2, timeout=TIMEOUT)
    assert [ref.key for ref in images.image_refs()] == ["depth", "image"]
    assert images.box_count(0) == 0 and images.box_count(1) == len(expected_boxes(expected[record][1])) > 0


def test_a_zlib_tensor_shows_in_the_tree_as_cat_json_reads_it(window, qtbot, capsys):
    tab = open_dataset(window, qtbot)
    model, rows = tree_rows(qtbot, tab, 0)
    assert main(["cat", "--json", "--range", "0:1", os.fspath(DATASET)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert rows["id"].siblingAtColumn(2).data() == str(line["features"]["id"]["values"][0])  # the same record
    want = line["features"]["mask"]
    mask = rows["mask"]
    assert mask.siblingAtColumn(1).data() == f"{want['dtype']} [{', '.join(map(str, want['shape']))}] zlib"
    assert not mask.siblingAtColumn(2).data().startswith("78 9c")
    shown = json.loads(model.json_text(mask))
    array = np.array(shown["values"], dtype=shown["dtype"]).reshape(want["shape"])
    assert shown["dtype"] == want["dtype"] and hashlib.sha256(array.tobytes()).hexdigest() == want["sha256"]
    assert model.index(7, 0, mask).data() == "[1, 1]"  # values by their place in the shape
    assert not model.flags(model.index(7, 2, mask)) & Qt.ItemFlag.ItemIsEditable


def test_audio_and_video_show_in_the_tree_as_their_tensors(window, qtbot):
    media = FIXTURES / "tfds_media" / "lens_media_demo" / "1.0.0"
    want = json.loads((FIXTURES / "tfds_media" / "MANIFEST.json").read_text())[
        "tfds_media/lens_media_demo/1.0.0"]["splits"]["train"]["records"][1]
    model, rows = tree_rows(qtbot, open_dataset(window, qtbot, media), 1)
    assert rows["audio"].siblingAtColumn(1).data() == "int16 [6400] audio 16000 Hz"
    assert rows["video"].siblingAtColumn(1).data() == "uint8 [2, 12, 16, 3] video of png frames"
    for key in ("audio", "video"):
        shown = json.loads(model.json_text(rows[key]))
        array = np.array(shown["values"], dtype=shown["dtype"]).reshape(want[key]["shape"])
        assert hashlib.sha256(array.tobytes()).hexdigest() == want[key]["sha256"]
