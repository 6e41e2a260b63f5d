"""ArrayRecord files and TFDS ArrayRecord folders through the real main window: the table (offsets as the
codec defines them), tree, images and boxes, gallery, filters, sorting, statistics, the dataset check,
export, Go To, a damaged chunk in the Problems panel, a renamed file, and the writer options (status bar,
File Info, the group_size warning); editing, following and salvage off, each with its reason."""
from __future__ import annotations

import io
import json
import os
import shutil

import pytest
from PIL import Image

pytest.importorskip("PySide6.QtWidgets")
array_record_module = pytest.importorskip("array_record.python.array_record_module")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from app.__main__ import build_window, parse_args  # noqa: E402
from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.models.problem_list_model import ProblemColumn  # noqa: E402
from app.models.record_format import FOLLOW_REASON, READ_ONLY_REASON, SALVAGE_REASON  # noqa: E402
from app.models.record_table_model import BASE_COLUMNS, Column  # noqa: E402
from app.models.shard_list_model import SPLIT  # noqa: E402
from app.shell.shard_set_tab import ShardSetTab  # noqa: E402
from app.views.record_detail import IMAGES_TAB, TREE_TAB  # noqa: E402
from codec.sources.array_record_file import ArrayRecordFile  # noqa: E402
from codec.sources.record_file import open_record_file  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from tests.builders import FIXTURES, example  # noqa: E402
from tests.gui_helpers import open_done, wait_done  # noqa: E402

TIMEOUT = 30000
FORMATS = FIXTURES / "formats"
TFDS = FORMATS / "tfds_array_record" / "lens_ar_demo" / "2.0.0"
N = 12
LABELS = ["cat", "dog", "bird"]


def image_bytes(k: int) -> bytes:
    """A 32x24 picture, JPEG for even ``k`` and PNG for odd."""
    img = Image.new("RGB", (32, 24), ((k * 40) % 256, 120, 200))
    out = io.BytesIO()
    img.save(out, "JPEG" if k % 2 == 0 else "PNG")
    return out.getvalue()


def detection_record(k: int) -> bytes:
    """An Example in the Object Detection API's keys: one image, ``k % 3 + 1`` boxes with class names."""
    boxes = k % 3 + 1
    return example({
        "image/encoded": image_bytes(k), "image/format": "jpeg" if k % 2 == 0 else "png",
        "image/height": 24, "image/width": 32,
        "image/object/bbox/xmin": [0.1 * b for b in range(boxes)],
        "image/object/bbox/xmax": [0.1 * b + 0.3 for b in range(boxes)],
        "image/object/bbox/ymin": [0.05 * b for b in range(boxes)],
        "image/object/bbox/ymax": [0.05 * b + 0.5 for b in range(boxes)],
        "image/object/class/label": [(k + b) % 3 + 1 for b in range(boxes)],
        "image/object/class/text": [LABELS[(k + b) % 3] for b in range(boxes)],
        "score": [N - k],
    }, deterministic=True)


RECORDS = [detection_record(k) for k in range(N)]


def write(path, options: str = "group_size:1", records: list[bytes] = RECORDS):
    """An ArrayRecord file written by Google's own writer with ``options``."""
    writer = array_record_module.ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    return path


@pytest.fixture
def images_file(tmp_path):
    return write(tmp_path / "detection.array_record")


def column(tab, col: int) -> list[str]:
    return [tab.proxy.index(r, col).data() for r in range(tab.proxy.rowCount())]


def shown(tab) -> list[int]:
    return [tab.proxy.record_at(r) for r in range(tab.proxy.rowCount())]


def show_record(qtbot, tab, record: int, detail_tab: int):
    tab.select_record(record)
    detail = tab.detail
    qtbot.waitUntil(lambda: detail.current_record() == record and detail.loaded() is not None, timeout=TIMEOUT)
    detail.tabs.setCurrentIndex(detail_tab)
    return detail


# -- the table, the status bar and File Info -------------------------------------
def test_the_table_shows_offsets_sizes_and_statuses_as_the_codec_reads_them(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    source = tab.session.source
    assert isinstance(source, ArrayRecordFile)
    reference = open_record_file(images_file).build_index()
    assert tab.model.rowCount() == N
    assert column(tab, Column.OFFSET) == [f"{reference.index.offset(i):,}" for i in range(N)]
    assert column(tab, Column.SIZE) == [f"{len(r):,}" for r in RECORDS]
    assert set(column(tab, Column.STATUS)) == {"ok"} and set(column(tab, Column.KIND)) == {"Example"}
    # the status bar: the format and writer options where a TFRecord file shows its compression
    assert window.compression_label.text() == "ArrayRecord · zstd · group_size 1"
    assert "group_size:1" in window.compression_label.toolTip()
    assert window.status.problems_label.text() == "✓ all chunks ok"  # a small file is checked at once
    assert window.message_bar.isHidden()  # group_size 1: nothing to warn of


def test_file_info_shows_the_writer_options(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    dialog = window.file_info_current()
    qtbot.addWidget(dialog)
    assert dialog.values["format"].text() == "ArrayRecord (12 chunks, zstd, group_size 1)"
    assert dialog.values["writer"].text().startswith("group_size:1,")
    assert dialog.values["records"].text() == "12 (12 ok)"
    assert dialog.values["problems"].text() == "none" and "warning" not in dialog.values
    assert dialog.windowTitle() == f"File Info — {tab.title}"
    assert dialog.text().splitlines()[0] == f"path:        {images_file}"


def test_a_group_size_above_1_is_warned_of_with_its_reason(window, qtbot, tmp_path):
    path = write(tmp_path / "grouped.array_record", "group_size:4")
    tab = open_done(window, qtbot, str(path))
    assert window.compression_label.text() == "ArrayRecord · zstd · group_size 4"
    # the tab's message bar, as its other notes
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=TIMEOUT)
    text = window.message_bar.text()
    assert text.startswith("grouped.array_record: group_size 4 > 1: each chunk holds 4 records compressed together")
    assert "write with group_size:1 for random access" in text
    dialog = window.file_info_current()
    qtbot.addWidget(dialog)
    assert dialog.values["warning"].text().startswith("group_size 4 > 1: ")
    assert dialog.values["format"].text() == "ArrayRecord (3 chunks, zstd, group_size 4)"
    # records of one chunk have consecutive offsets, from where their chunk begins
    offsets = [int(o.replace(",", "")) for o in column(tab, Column.OFFSET)]
    assert offsets[1:4] == [offsets[0] + 1, offsets[0] + 2, offsets[0] + 3] and offsets[4] > offsets[3] + 1


def test_a_renamed_file_opens_by_its_content(window, qtbot, images_file, tmp_path):
    renamed = tmp_path / "train-00000-of-00001.tfrecord"
    shutil.copyfile(images_file, renamed)
    tab = open_done(window, qtbot, str(renamed))
    assert isinstance(tab.session.source, ArrayRecordFile) and tab.model.rowCount() == N
    assert window.compression_label.text() == "ArrayRecord · zstd · group_size 1"


def test_the_command_line_a_drop_and_recent_files_open_it(window, qtbot, images_file, tmp_path):
    other = write(tmp_path / "grouped.bin", "group_size:4")
    w = build_window(parse_args([str(images_file)]))
    qtbot.addWidget(w)
    assert [t.title for t in w.file_tabs()] == ["detection.array_record"]
    assert wait_done(qtbot, w.file_tabs()[0]).model.rowCount() == N
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(other))])
    window.dropEvent(QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier))
    tab = wait_done(qtbot, window.current_tab())
    assert tab.title == "grouped.bin" and isinstance(tab.session.source, ArrayRecordFile)
    window.close_current()
    assert window.settings.recent_files()[0] == os.path.abspath(other)
    item = window.start_page.recent_list.item(0)
    window.start_page.recent_list.itemActivated.emit(item)
    tab = wait_done(qtbot, window.current_tab())
    assert tab.model.rowCount() == N and window.compression_label.text() == "ArrayRecord · zstd · group_size 4"


def test_editing_following_and_salvage_are_off_with_their_reasons(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    tab.select_record(0)
    delete = window.edit_actions.delete_action
    assert not delete.isEnabled() and delete.toolTip() == f"Delete Records: {READ_ONLY_REASON}"
    assert not window.edit_actions.save_as_action.isEnabled()
    assert window.edit_actions.export_action.isEnabled()  # Export… writes a copy
    assert not window.follow_action.isEnabled() and window.follow_action.toolTip() == f"Follow: {FOLLOW_REASON}"
    assert window.damage.salvage_current() is None
    assert window.statusBar().currentMessage() == f"cannot salvage: {SALVAGE_REASON}"
    assert not tab.corruption.panel.salvage_button.isEnabled()


# -- the tree, images and gallery --------------------------------------------------
def test_tree_and_images_with_their_boxes(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    for k in (0, 1, 5):  # JPEG, PNG, PNG
        detail = show_record(qtbot, tab, k, TREE_TAB)
        model = detail.tree_model
        root = model.root_index()
        keys = {model.index(r, 0, root).data() for r in range(model.rowCount(root))}
        assert {"image/encoded", "image/object/bbox/xmin", "score"} <= keys
        detail.tabs.setCurrentIndex(IMAGES_TAB)
        qtbot.waitUntil(lambda d=detail: d.images.image_count() == 1, timeout=TIMEOUT)
        assert detail.images.box_count(0) == k % 3 + 1
        # the hex view: the record's own bytes, with no TFRecord framing to check
        assert detail.hex.model.record.data == RECORDS[k] and detail.hex.model.record.header == b""
        assert "ArrayRecord chunk" in detail.hex.summary_text()


def test_the_gallery_shows_every_image(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    gallery = tab.qa.gallery
    tab.qa.show_gallery()
    model = gallery.model

    def done() -> None:
        assert model.rowCount() == N and model.pending() == 0
        assert all(model.cached_tile(model.record_at(r)) is not None for r in range(N))
    qtbot.waitUntil(done, timeout=TIMEOUT)
    tiles = [model.index(r, 0).data(TILE_ROLE) for r in range(N)]
    assert [len(t.boxes) for t in tiles] == [k % 3 + 1 for k in range(N)]


# -- filters, sorting, statistics, the check, Go To -----------------------------------
def test_a_filter_finds_its_matches(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("score > 8")
    qtbot.waitUntil(lambda: not bar.is_running(), timeout=TIMEOUT)
    assert shown(tab) == [0, 1, 2, 3]
    assert window.go_to("2") is None and tab.current_record() == 2


def test_sorting_by_a_feature(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    tab._set_columns(["score"], save=False)
    col = BASE_COLUMNS + tab.model.feature_columns().index("score")
    with qtbot.waitSignal(tab.proxy.sort_changed, timeout=TIMEOUT):
        tab.table.horizontalHeader().sectionClicked.emit(col)
    qtbot.waitUntil(lambda: shown(tab) == list(range(N))[::-1], timeout=TIMEOUT)  # score N - k: ascending


def test_statistics(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    assert panel.stats_json()["records"] == N
    from app.views.stats_panel import CHART, TYPE

    encoded = panel.feature_row("image/encoded") or panel.feature_row("encoded")
    assert encoded[TYPE].data() == "bytes · images" and "JPEG 6" in encoded[CHART].data()


def test_the_dataset_check_runs(window, qtbot, tmp_path):
    path = write(tmp_path / "dups.array_record", records=RECORDS + [RECORDS[3]])
    tab = open_done(window, qtbot, str(path))
    check = window.checks.check_for(tab)
    with qtbot.waitSignal(check.runner.finished, timeout=TIMEOUT) as blocker:
        assert window.checks.show_check() is check
    _paths, report, cancelled = blocker.args
    assert not cancelled
    dups = [f for f in report.findings if f.check == "exact_duplicate"]
    assert [sorted(r.index for r in f.records) for f in dups] == [[3, N]]


def test_go_to_a_record(window, qtbot, images_file):
    tab = open_done(window, qtbot, str(images_file))
    assert window.go_to("-1") is None and tab.current_record() == N - 1
    offset = tab.session.source.index.offset(7)
    window.go_to(f"@{offset}")
    assert tab.current_record() == 7


# -- export ----------------------------------------------------------------------
def test_export_as_tfrecord_and_jsonl(window, qtbot, images_file, tmp_path):
    open_done(window, qtbot, str(images_file))
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("tfrecord")
    out = tmp_path / "copy.tfrecord"
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    with TFRecordFile(out) as copy:
        assert list(copy.build_index()) == RECORDS
    dialog.set_format("jsonl")
    out = tmp_path / "copy.jsonl"
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT):
        assert dialog.start(), dialog.note.text()
    assert len(out.read_text().splitlines()) == N
    dialog.close()


# -- damage ----------------------------------------------------------------------
def test_a_damaged_chunk_is_in_the_problems_panel_in_plain_words(window, qtbot, tmp_path):
    data = bytearray((FORMATS / "default.array_record").read_bytes())
    data[0x70] ^= 0xFF  # inside record 0's zstd frame
    path = tmp_path / "damaged.array_record"
    path.write_bytes(bytes(data))
    tab = open_done(window, qtbot, str(path))
    assert tab.model.rowCount() == 60  # nothing lost: the other chunks are read
    assert tab.proxy.index(0, Column.STATUS).data() == "chunk damaged"
    assert set(column(tab, Column.STATUS)[1:]) == {"ok"}
    panel = tab.corruption
    qtbot.waitUntil(panel.panel_visible, timeout=TIMEOUT)
    model = panel.model
    assert model.rowCount() == 1
    assert model.index(0, ProblemColumn.KIND).data() == "damaged chunk"
    tip = model.index(0, ProblemColumn.KIND).data(Qt.ItemDataRole.ToolTipRole)
    assert "The chunk that holds this record does not read back as it was written" in tip
    assert "Google's ArrayRecordReader" in tip and "tf.data" not in tip
    assert window.status.problems_label.text() == "⚠ 1 problem"
    # picking it in the panel selects its record and says what is wrong, with no bytes to mark
    problem = tab.session.source.problems[0]
    with qtbot.waitSignal(panel.problem_shown, timeout=TIMEOUT):
        panel.show_problem(problem)
    assert tab.current_record() == 0
    assert window.statusBar().currentMessage().startswith("damaged chunk near record 0: chunk at offset 64: ")
    tip = tab.proxy.index(0, Column.STATUS).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("damaged chunk: chunk at offset 64: ") and "Google's ArrayRecordReader" in tip


# -- TFDS ArrayRecord folders ------------------------------------------------------
def test_a_tfds_array_record_folder_opens_split_by_split_with_class_names(window, qtbot):
    tab = window.open_set([os.fspath(TFDS)])
    assert isinstance(tab, ShardSetTab), window.message_bar.text()
    wait_done(qtbot, tab)
    info = json.loads((TFDS / "dataset_info.json").read_text())
    counts = {s["name"]: int(s["shardLengths"][0]) for s in info["splits"]}
    assert tab.model.rowCount() == sum(counts.values())
    assert window.payload_label.text() == "as TFDS lens_ar_demo 2.0.0"
    assert window.compression_label.text().startswith("ArrayRecord · ")
    panel = tab.shards_panel
    splits = [panel.model.data(panel.model.index(k, panel.model.section(SPLIT))) for k in range(2)]
    assert sorted(splits) == sorted(counts)
    names = (TFDS / "label.labels.txt").read_text().split()
    detail = show_record(qtbot, tab, 0, TREE_TAB)
    model = detail.tree_model
    root = model.root_index()
    rows = {model.index(r, 0, root).data(): model.index(r, 2, root).data() for r in range(model.rowCount(root))}
    assert any(rows["label"].endswith(f"({name})") for name in names), rows
    dialog = window.file_info_current()
    qtbot.addWidget(dialog)
    assert dialog.values["shards"].text() == "2" and dialog.values["tfds"].text().startswith("lens_ar_demo 2.0.0")
