"""RecordDetail over the reference fixtures: tree, images, hex and text, as a person sees them."""
from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PIL import Image  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.models.hex_model import ASCII_COLUMN, CRC_BAD_BG, CRC_OK_BG, HIGHLIGHT_BG, LENGTH_BG, ROW_COLORS_ROLE  # noqa: E402
from app.models.record_tree_model import FIRST_CHUNK, KIND_ROLE, NEXT_CHUNK  # noqa: E402
from app.views import image_preview, record_detail  # noqa: E402
from app.views.record_detail import HEX_TAB, IMAGES_TAB, TEXT_TAB, TREE_TAB, RecordDetail  # noqa: E402
from codec.decode.example_proto import Feature  # noqa: E402
from codec.format.crc import masked_crc  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES, MANIFEST, example  # noqa: E402


@pytest.fixture
def open_file():
    opened: list[TFRecordFile] = []

    def _open(path) -> TFRecordFile:
        f = TFRecordFile(path)
        f.build_index()
        opened.append(f)
        return f

    yield _open
    for f in opened:
        f.close()


@pytest.fixture
def detail(qtbot):
    widget = RecordDetail()
    qtbot.addWidget(widget)
    widget.resize(720, 560)
    widget.show()
    yield widget
    widget.wait()


def show(qtbot, detail: RecordDetail, tfile: TFRecordFile, index: int) -> None:
    with qtbot.waitSignal(detail.record_shown, timeout=10000) as blocker:
        detail.show_record(tfile, index)
    assert blocker.args == [index]


def fixture(name: str) -> str:
    return os.fspath(FIXTURES / name)


def children(model, parent) -> dict[str, object]:
    """Name -> index of the rows under ``parent``."""
    return {model.index(r, 0, parent).data(): model.index(r, 0, parent) for r in range(model.rowCount(parent))}


def cell(index, column: int) -> str:
    return index.siblingAtColumn(column).data()


def json_values(feature: dict) -> tuple[str, list]:
    (kind, body), = feature.items()
    return kind, body.get("value", [])




# ------------------------------------------------------------------ tree


def test_example_tree_shows_keys_types_and_values(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("my_example.tfrecords")), 0)
    model = detail.tree_model
    root = model.root_index()
    assert root.data() == "Example"
    assert cell(root, 2) == "3 features"
    features = children(model, root)
    expected = MANIFEST["my_example.tfrecords"]["records"][0]["json"]["features"]["feature"]
    assert sorted(features) == sorted(expected) == ["my_bytes", "my_float", "my_ints"]
    assert cell(features["my_bytes"], 1) == "bytes · 1"
    assert cell(features["my_bytes"], 2) == '"data"'
    assert cell(features["my_float"], 1) == "float · 1"
    assert cell(features["my_float"], 2) == "2.7"
    assert cell(features["my_ints"], 1) == "int64 · 2"
    assert cell(features["my_ints"], 2) == "[5, 6]"
    values = children(model, features["my_ints"])
    assert [cell(values[k], 2) for k in ("[0]", "[1]")] == ["5", "6"]
    assert detail.tabs.currentIndex() == TREE_TAB
    assert detail.header_text().startswith("Record 0 · Example · 65 bytes · ok")


def test_sequence_example_context_then_feature_lists_with_steps(qtbot, detail, open_file):
    tfile = open_file(fixture("sequence_examples.tfrecord"))
    show(qtbot, detail, tfile, 2)
    expected = MANIFEST["sequence_examples.tfrecord"]["records"][2]["json"]
    model = detail.tree_model
    root = model.root_index()
    assert root.data() == "SequenceExample"
    top = children(model, root)
    assert list(top) == ["context", "feature_lists"]
    context = children(model, top["context"])
    assert sorted(context) == sorted(expected["context"]["feature"])
    assert cell(context["length"], 2) == expected["context"]["feature"]["length"]["int64List"]["value"][0]
    lists = children(model, top["feature_lists"])
    assert sorted(lists) == sorted(expected["featureLists"]["featureList"]) == ["frames", "my_ints"]
    my_ints = expected["featureLists"]["featureList"]["my_ints"]["feature"]
    steps = children(model, lists["my_ints"])
    assert list(steps) == [f"step {i}" for i in range(len(my_ints))]
    assert cell(lists["my_ints"], 2) == f"{len(my_ints)} steps"
    for i, step in enumerate(my_ints):
        want = [int(v) for v in step["int64List"]["value"]]
        row = steps[f"step {i}"]
        assert cell(row, 1) == f"int64 · {len(want)}"
        got = [int(cell(v, 2)) for v in children(model, row).values()]
        assert got == want
    frame = children(model, lists["frames"])["step 0"]
    assert cell(frame, 2).startswith("<PNG 24x24>")


def test_long_value_list_is_elided_and_expands_on_demand(qtbot, detail, open_file, tmp_path):
    path = tmp_path / "long.tfrecord"
    values = list(range(1000))
    write_records(path, [example({"many": Feature(int64_list={"value": values}),
                                        "one": Feature(int64_list={"value": [7]})})])
    show(qtbot, detail, open_file(path), 0)
    model, view = detail.tree_model, detail.tree
    many = children(model, model.root_index())["many"]
    assert cell(many, 1) == "int64 · 1,000"
    assert model.rowCount(many) == FIRST_CHUNK + 1
    more = model.index(FIRST_CHUNK, 0, many)
    assert more.data(KIND_ROLE) == "more"
    assert more.data().startswith(f"… {1000 - FIRST_CHUNK} more")
    assert detail.tree.isFirstColumnSpanned(FIRST_CHUNK, many) is False  # not laid out until expanded

    view.expand(many)
    assert view.isFirstColumnSpanned(FIRST_CHUNK, many)
    view.scrollTo(more)
    rect = view.visualRect(more)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert model.rowCount(many) == FIRST_CHUNK + NEXT_CHUNK + 1
    assert cell(model.index(FIRST_CHUNK, 0, many), 2) == str(FIRST_CHUNK)
    assert model.index(FIRST_CHUNK + NEXT_CHUNK, 0, many).data().startswith(
        f"… {1000 - FIRST_CHUNK - NEXT_CHUNK:,} more")
    assert view.isFirstColumnSpanned(FIRST_CHUNK + NEXT_CHUNK, many)
    assert not view.isFirstColumnSpanned(FIRST_CHUNK, many)

    view.setCurrentIndex(model.index(FIRST_CHUNK + NEXT_CHUNK, 0, many))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert model.rowCount(many) == FIRST_CHUNK + 2 * NEXT_CHUNK + 1

    while model.hidden_count(many):
        model.show_more(many)
    assert model.rowCount(many) == 1000
    assert model.index(999, 0, many).data(KIND_ROLE) == "value"
    assert not view.isFirstColumnSpanned(999, many)
    assert [cell(model.index(r, 0, many), 2) for r in (0, 500, 999)] == ["0", "500", "999"]
    # a single value stays on its feature's row
    one = children(model, model.root_index())["one"]
    assert model.rowCount(one) == 0 and cell(one, 2) == "7"


def test_ctrl_c_copies_the_selected_value(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("my_example.tfrecords")), 0)
    model, view = detail.tree_model, detail.tree
    features = children(model, model.root_index())
    clipboard = QApplication.clipboard()
    view.setFocus()

    view.setCurrentIndex(children(model, features["my_ints"])["[1]"])
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "6"

    view.setCurrentIndex(features["my_bytes"])
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == "data"

    view.setCurrentIndex(features["my_ints"])
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert json.loads(clipboard.text()) == [5, 6]

    view.setCurrentIndex(features["my_float"])
    assert view.copy_json() == "[2.7]"
    view.setCurrentIndex(model.root_index())
    assert json.loads(view.copy_json()) == {"my_bytes": ["data"], "my_float": [2.7], "my_ints": [5, 6]}


def test_binary_bytes_copy_as_base64(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("flowers_jpeg.tfrecord")), 0)
    model, view = detail.tree_model, detail.tree
    encoded = children(model, model.root_index())["encoded"]
    assert cell(encoded, 2).startswith("<JPEG 96x72>")
    view.setCurrentIndex(encoded)
    copied = view.copy_value()
    expected = MANIFEST["flowers_jpeg.tfrecord"]["records"][0]["json"]["features"]["feature"]["encoded"]
    assert copied == expected["bytesList"]["value"][0]
    assert QApplication.clipboard().text() == copied


# ------------------------------------------------------------------ images


def test_flowers_jpeg_image_is_shown_at_its_size(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("flowers_jpeg.tfrecord")), 0)
    data = base64.b64decode(MANIFEST["flowers_jpeg.tfrecord"]["records"][0]["json"]["features"]["feature"]
                            ["encoded"]["bytesList"]["value"][0])
    width, height = Image.open(io.BytesIO(data)).size
    images = detail.images
    assert images.image_count() == 1
    size = images.image_size(0)
    assert (size.width(), size.height()) == (width, height)
    assert images.box_count(0) == 0
    assert detail.tabs.tabText(IMAGES_TAB) == "Images (1)"
    assert detail.tabs.isTabEnabled(IMAGES_TAB)
    assert images._cards[0].caption.text() == f"encoded · JPEG · {width}×{height}"


def test_raw_pixels_show_as_a_32x32_image(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("raw_pixels_32x32x3.tfrecord")), 0)
    images = detail.images
    assert images.image_count() == 1
    size = images.image_size(0)
    assert (size.width(), size.height()) == (32, 32)
    assert images.image_refs()[0].kind == "raw"
    assert "32×32×3" in images._cards[0].caption.text()


def test_detection_boxes_match_the_bbox_features(qtbot, detail, open_file):
    tfile = open_file(fixture("detection.tfrecord"))
    for i, record in enumerate(MANIFEST["detection.tfrecord"]["records"][:6]):
        show(qtbot, detail, tfile, i)
        features = record["json"]["features"]["feature"]
        boxes = len(json_values(features["image/object/bbox/xmin"])[1])
        assert detail.images.image_count() == 1
        assert detail.images.box_count(0) == boxes
        noun = "box" if boxes == 1 else "boxes"
        assert detail.images._cards[0].caption.text().endswith(f"{boxes} {noun}")


def test_sequence_example_frames_show_as_a_strip(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("sequence_examples.tfrecord")), 4)
    frames = MANIFEST["sequence_examples.tfrecord"]["records"][4]["json"]["featureLists"]["featureList"]["frames"]
    images = detail.images
    refs = images.image_refs()
    n = len(frames["feature"])
    assert n > 1
    assert images.image_count() == n
    assert [(r.key, r.step) for r in refs] == [("frames", s) for s in range(n)]
    assert len(images._strips) == 1 and len(images._strips[0].cards) == n
    cards = images._strips[0].cards
    xs = [card.mapTo(images.content, card.rect().topLeft()) for card in cards]
    assert len({p.y() for p in xs}) == 1 and [p.x() for p in xs] == sorted({p.x() for p in xs})  # side by side
    assert [c.caption.text() for c in cards] == [f"step {s}" for s in range(n)]


def test_zoom_to_fit_and_actual_size(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("flowers_jpeg.tfrecord")), 0)
    detail.tabs.setCurrentIndex(IMAGES_TAB)
    images = detail.images
    assert images.zoom_factor() > 1  # 96x72 fitted into the view
    images.actual_button.click()
    assert images.zoom_factor() == 1.0
    assert images._cards[0].canvas.size().width() == 96
    images.set_zoom(2.0)
    assert images._cards[0].canvas.size().width() == 192
    images.fit_button.click()
    assert images.zoom_factor() > 1


def test_ctrl_wheel_zooms(qtbot, detail, open_file):
    show(qtbot, detail, open_file(fixture("raw_pixels_32x32x3.tfrecord")), 0)
    detail.tabs.setCurrentIndex(IMAGES_TAB)
    images = detail.images
    images.zoom_actual()
    viewport = images.scroll.viewport()
    pos = QPointF(viewport.rect().center())
    wheel = QWheelEvent(pos, viewport.mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.ControlModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, wheel)
    assert images.zoom_factor() == pytest.approx(1.25)
    assert images._cards[0].canvas.width() == 40
    assert images.zoom_label.text() == "125%"


def test_large_images_decode_off_the_gui_thread(qtbot, detail, open_file, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    noise = Image.fromarray(rng.integers(0, 256, (700, 700, 3), dtype=np.uint8))
    buffer = io.BytesIO()
    noise.save(buffer, format="PNG", compress_level=0)
    png = buffer.getvalue()
    assert len(png) > image_preview.INLINE_DECODE_BYTES
    path = tmp_path / "big_image.tfrecord"
    write_records(path, [example({"image/encoded": Feature(bytes_list={"value": [png]})})])
    decoded_on: list[bool] = []
    real = image_preview.decode_to_qimage

    def spy(ref):
        from PySide6.QtCore import QThread
        decoded_on.append(QThread.currentThread() is QApplication.instance().thread())
        return real(ref)

    monkeypatch.setattr(image_preview, "decode_to_qimage", spy)
    show(qtbot, detail, open_file(path), 0)
    assert decoded_on == [False]
    size = detail.images.image_size(0)
    assert (size.width(), size.height()) == (700, 700)


def test_undecodable_image_shows_a_reason(qtbot, detail, open_file, tmp_path):
    good = base64.b64decode(MANIFEST["flowers_jpeg.tfrecord"]["records"][0]["json"]["features"]["feature"]
                            ["encoded"]["bytesList"]["value"][0])
    path = tmp_path / "broken.tfrecord"
    write_records(path, [example({"image": Feature(bytes_list={"value": [good[:-150]]})})])  # cut short
    show(qtbot, detail, open_file(path), 0)
    images = detail.images
    assert images.image_count() == 1
    assert images.image_size(0) is None
    assert images.image_error(0).startswith("cannot decode")
    assert "cannot be decoded" in images.summary.text()


def test_record_without_images_disables_the_tab_and_falls_back(qtbot, detail, open_file):
    flowers = open_file(fixture("flowers_jpeg.tfrecord"))
    show(qtbot, detail, flowers, 0)
    detail.tabs.setCurrentIndex(IMAGES_TAB)
    show(qtbot, detail, open_file(fixture("my_example.tfrecords")), 0)
    assert not detail.tabs.isTabEnabled(IMAGES_TAB)
    assert detail.tabs.tabText(IMAGES_TAB) == "Images"
    assert detail.tabs.currentIndex() == TREE_TAB
    show(qtbot, detail, flowers, 1)  # the user's choice comes back
    assert detail.tabs.currentIndex() == IMAGES_TAB


# ------------------------------------------------------------------ hex and text


def test_hex_view_annotates_header_and_crcs(qtbot, detail, open_file):
    tfile = open_file(fixture("my_example.tfrecords"))
    show(qtbot, detail, tfile, 0)
    raw = Path(fixture("my_example.tfrecords")).read_bytes()
    length = int.from_bytes(raw[:8], "little")
    length_crc = int.from_bytes(raw[8:12], "little")
    data_crc = int.from_bytes(raw[12 + length:16 + length], "little")
    assert length_crc == masked_crc(raw[:8]) and data_crc == masked_crc(raw[12:12 + length])
    summary = detail.hex.summary_text()
    assert f"length {length}" in summary
    assert f"length CRC {length_crc:#010x} ok" in summary
    assert f"data CRC {data_crc:#010x} ok" in summary
    model = detail.hex.model
    assert model.rowCount() == (len(raw) + 15) // 16
    assert [model.index(0, c).data() for c in range(1, 17)] == [f"{b:02x}" for b in raw[:16]]
    assert model.index(0, 0).data() == "0"
    assert model.index(0, 1).data(Qt.ItemDataRole.BackgroundRole) == LENGTH_BG
    assert model.index(0, 9).data(Qt.ItemDataRole.BackgroundRole) == CRC_OK_BG
    assert model.index(0, 13).data(Qt.ItemDataRole.BackgroundRole) is None  # data
    last = len(raw) - 1
    assert model.index(last // 16, last % 16 + 1).data(Qt.ItemDataRole.BackgroundRole) == CRC_OK_BG
    assert "length" in model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole)


def test_data_crc_mismatch_in_corrupt_file(qtbot, detail, open_file):
    tfile = open_file(fixture("corrupt_data_crc.tfrecord"))
    show(qtbot, detail, tfile, 5)
    info = tfile.record_info(5)
    assert info.offset == MANIFEST["corrupt_data_crc.tfrecord"]["corruption"]["offset"]
    raw = Path(fixture("corrupt_data_crc.tfrecord")).read_bytes()
    data = raw[info.offset + 12:info.offset + 12 + info.length]
    stored = int.from_bytes(raw[info.offset + 12 + info.length:info.offset + 16 + info.length], "little")
    computed = masked_crc(data)
    assert stored != computed
    summary = detail.hex.summary_text()
    assert f"data CRC {stored:#010x} stored, {computed:#010x} computed: MISMATCH" in summary
    assert "length CRC" in summary and "ok" in summary
    assert detail.header_text().startswith("Record 5 · raw · 57 bytes · ● data CRC bad")
    model = detail.hex.model
    footer = 12 + info.length
    assert model.index(footer // 16, footer % 16 + 1).data(Qt.ItemDataRole.BackgroundRole) == CRC_BAD_BG
    assert model.index(0, 0).data() == f"{info.offset:,}"

    detail.tabs.setCurrentIndex(HEX_TAB)
    assert detail.hex.highlight(info.offset + 20, info.offset + 22)
    assert model.index(1, 5).data(Qt.ItemDataRole.BackgroundRole) == HIGHLIGHT_BG
    assert model.index(1, 7).data(Qt.ItemDataRole.BackgroundRole) is None
    assert [c[1] for c in model.index(1, ASCII_COLUMN).data(ROW_COLORS_ROLE)[4:6]] == [HIGHLIGHT_BG] * 2
    assert not detail.hex.highlight(0, 10)  # before this record


def test_raw_records_show_as_hex_and_text(qtbot, detail, open_file):
    tfile = open_file(fixture("raw_strings.tfrecord"))
    raw = Path(fixture("raw_strings.tfrecord")).read_bytes()
    show(qtbot, detail, tfile, 0)
    data = tfile.read(0).data
    assert detail.header_text().startswith("Record 0 · raw · 8 bytes · ok")
    assert detail.tabs.isTabVisible(TEXT_TAB)
    assert detail.tabs.currentIndex() == TEXT_TAB
    assert detail.text.toPlainText() == data.decode("utf-8", errors="replace")
    assert detail.tree_model.root_index().data() == "raw"
    assert detail.tree_model.root_index().siblingAtColumn(1).data() == "raw · 8 bytes"
    assert detail.tree_model.root_index().siblingAtColumn(2).data() == '"Record A"'
    model = detail.hex.model
    assert model.rowCount() == 2  # 12 + 8 + 4 bytes
    hex_bytes = [model.index(r, c).data() for r in range(2) for c in range(1, 17)]
    assert [h for h in hex_bytes if h] == [f"{b:02x}" for b in raw[:24]]
    show(qtbot, detail, open_file(fixture("my_example.tfrecords")), 0)
    assert not detail.tabs.isTabVisible(TEXT_TAB)
    assert detail.tabs.currentIndex() == TREE_TAB


def test_invalid_utf8_uses_replacement_characters(qtbot, detail, open_file, tmp_path):
    path = tmp_path / "binary.tfrecord"
    write_records(path, [b"ok \xff\xfe end\x00"])
    show(qtbot, detail, open_file(path), 0)
    assert detail.text.toPlainText() == "ok \ufffd\ufffd end\x00"


# ------------------------------------------------------------------ loading


def test_large_record_loads_off_the_gui_thread(qtbot, detail, open_file, tmp_path):
    payload = bytes(range(256)) * ((record_detail.INLINE_RECORD_BYTES // 256) + 16)
    path = tmp_path / "large.tfrecord"
    write_records(path, [example({"blob": Feature(bytes_list={"value": [payload]})})])
    tfile = open_file(path)
    with qtbot.waitSignal(detail.record_shown, timeout=10000):
        detail.show_record(tfile, 0)
        assert "loading" in detail.header.text()
        detail._show_loading()  # what the loading timer does when the load takes a while
        assert detail.stack.currentWidget() is detail.placeholder
        assert "Loading record 0" in detail.placeholder.text()
    assert detail.stack.currentWidget() is detail.tabs
    blob = children(detail.tree_model, detail.tree_model.root_index())["blob"]
    assert f"({len(payload)} bytes)" in cell(blob, 2)
    assert detail.hex.model.rowCount() == (tfile.record_info(0).length + 16 + 15) // 16


def test_compressed_file_record_is_shown(qtbot, detail, open_file):
    tfile = open_file(fixture("structured.tfrecord.gz"))
    show(qtbot, detail, tfile, 3)
    assert detail.tree_model.root_index().data() == "Example"
    assert "decompressed stream" in detail.hex.summary_text()


def test_small_compressed_records_show_at_once_large_ones_on_the_pool(qtbot, detail, open_file, tmp_path):
    # A small record of a GZIP file is read on the spot (the detail does not wait behind the
    # table's repaint); a large one goes to the pool like a large record of a plain file.
    path = tmp_path / "mixed.tfrecord.gz"
    big = b"y" * (record_detail.INLINE_COMPRESSED_BYTES + 1024)
    write_records(path, [example({"small": Feature(int64_list={"value": [7]})}),
                         example({"blob": Feature(bytes_list={"value": [big]})})], "gzip")
    tfile = open_file(path)
    shown: list[int] = []
    detail.record_shown.connect(shown.append)
    detail.show_record(tfile, 0)
    assert shown == [0] and sorted(children(detail.tree_model, detail.tree_model.root_index())) == ["small"]
    with qtbot.waitSignal(detail.record_shown, timeout=10000):
        detail.show_record(tfile, 1)
        assert shown == [0] and "loading" in detail.header.text()
    assert shown == [0, 1] and sorted(children(detail.tree_model, detail.tree_model.root_index())) == ["blob"]


def test_a_newer_selection_wins(qtbot, detail, open_file, tmp_path):
    payload = b"x" * (record_detail.INLINE_RECORD_BYTES + 1024)
    path = tmp_path / "mixed.tfrecord"
    write_records(path, [example({"blob": Feature(bytes_list={"value": [payload]})}),
                         example({"small": Feature(int64_list={"value": [1]})})])
    tfile = open_file(path)
    detail.show_record(tfile, 0)  # goes to the pool
    show(qtbot, detail, tfile, 1)  # shown at once
    detail.wait()
    qtbot.wait(50)  # let a stale result arrive, if it were to be shown
    assert detail.current_record() == 1
    assert sorted(children(detail.tree_model, detail.tree_model.root_index())) == ["small"]


def test_clear_and_failures(qtbot, detail, open_file):
    tfile = open_file(fixture("my_example.tfrecords"))
    show(qtbot, detail, tfile, 0)
    detail.clear()
    assert detail.current_record() == -1
    assert detail.tree_model.rowCount() == 0
    assert detail.images.image_count() == 0
    assert detail.hex.model.rowCount() == 0
    with qtbot.waitSignal(detail.record_failed) as blocker:
        detail.show_record(tfile, 99)
    assert blocker.args[0] == 99 and "out of range" in blocker.args[1]
    assert "cannot read" in detail.header.text()
