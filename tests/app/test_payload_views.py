"""Tensors, messages and schema-less protobuf as the app shows them: the tree, the grid, images, labels.

Tensor records come from the reference file (``payloads/tensors.tfrecord``, written by TensorFlow) and
are checked against its MANIFEST through the real main window; message and schema-less trees are built
by hand in the shapes ``codec.decode.decoder.TreeNode`` documents (and from the codec once its builders exist).
"""
from __future__ import annotations

import base64
import json
import shutil

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402

from app.models.labels import kind_text  # noqa: E402
from app.models.record_table_model import Column, RecordTableModel  # noqa: E402
from app.models.record_tree_model import FIRST_CHUNK, RecordTreeModel  # noqa: E402
from app.models.records_owner import HeldRecords  # noqa: E402
from app.models.tensor_table_model import MAX_CELLS  # noqa: E402
from app.models.tiles import ThumbRequest  # noqa: E402
from app.models.value_text import summarize  # noqa: E402
from app.views.record_detail import IMAGES_TAB, TREE_TAB, RecordDetail  # noqa: E402
from app.views.tree_edit_requests import ReadOnly  # noqa: E402
from app.workers.thumbnail_loader import make_thumbnail  # noqa: E402
from codec.decode.decoder import DecodedRecord, RecordKind, TreeNode, build_tree, decode_record  # noqa: E402
from codec.decode.example_proto import Example, Feature, Int64List  # noqa: E402
from codec.decode.tensors import DATA_TYPES, TensorProto  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000
TENSORS = FIXTURES / "payloads" / "tensors.tfrecord"
MANIFEST = json.loads((FIXTURES / "payloads" / "MANIFEST.json").read_text())
EXPECTED = [r["json"] for r in MANIFEST["tensors.tfrecord"]["records"]]


class Names:
    """A stand-in for ``codec.datasets.label_maps.LabelNames``: class names by feature key and id."""

    def __init__(self, names: dict[str, dict[int, str]]) -> None:
        self.names = names

    def name(self, key: str, id_: int) -> str | None:
        return self.names.get(key, {}).get(id_)


# -- helpers -------------------------------------------------------------------
def cells(model, index) -> list[str]:
    return [model.data(index.siblingAtColumn(c)) for c in range(3)]


def children(model, parent) -> list[QModelIndex]:
    return [model.index(r, 0, parent) for r in range(model.rowCount(parent))]


def by_name(model, parent) -> dict[str, QModelIndex]:
    return {model.data(i): i for i in children(model, parent)}


def tensor_bytes(dtype: str, array: np.ndarray) -> bytes:
    proto = TensorProto(dtype=DATA_TYPES[dtype])
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    proto.tensor_content = np.ascontiguousarray(array).tobytes()
    return proto.SerializeToString()


def tree_model(qtbot, decoded: DecodedRecord, tree: TreeNode | None = None, labels=None) -> RecordTreeModel:
    model = RecordTreeModel()
    tree = tree if tree is not None else build_tree(decoded)
    model.set_record(decoded, tree, summarize(tree, decoded, labels=labels), labels)
    return model


def expected_text(value, dtype: str) -> object:
    """A MANIFEST value as the tree shows it, for comparing (floats as float32/float16/float64 numbers)."""
    if dtype == "string":
        return '"' + base64.b64decode(value).decode("utf-8") + '"' if value else '"" (0 bytes)'
    if dtype == "bool":
        return "true" if value else "false"
    return str(value) if dtype.startswith(("int", "uint")) else float(np.dtype(dtype).type(value))


def shown(text: str, dtype: str) -> object:
    return float(np.dtype(dtype).type(text)) if dtype.startswith("float") else text


def select(qtbot, tab, record: int) -> None:
    if tab.current_record() != record or tab.detail.loaded() is None:
        with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
            tab.select_record(record)
    qtbot.waitUntil(lambda: tab.detail.current_record() == record and tab.detail.loaded() is not None,
                    timeout=TIMEOUT)


# -- tensors through the main window ------------------------------------------
def test_tensor_records_show_dtype_shape_and_values_as_the_manifest_says(window, qtbot):
    tab = open_done(window, qtbot, str(TENSORS))
    table = tab.model
    assert table.rowCount() == len(EXPECTED)
    assert [table.data(table.index(r, Column.KIND)) for r in range(table.rowCount())] == ["Tensor"] * len(EXPECTED)
    for record, want in enumerate(EXPECTED):
        select(qtbot, tab, record)
        model = tab.detail.tree_model
        root = model.root_index()
        dtype, shape = want["dtype"], want["shape"]
        name, type_text, _ = cells(model, root)
        assert name == f"Tensor {dtype} [{', '.join(map(str, shape))}]"
        assert type_text == f"{dtype} · {len(want['values']):,}"
        assert f"Record {record:,} · Tensor ·" in tab.detail.header_text()
        values = want["values"]
        if len(values) == 1:  # a scalar shows on the root row
            assert model.rowCount(root) == 0
            assert shown(cells(model, root)[2], dtype) == expected_text(values[0], dtype)
            continue
        model.show_more(root, len(values))
        rows = children(model, root)
        assert len(rows) == len(values)
        assert [shown(model.data(i.siblingAtColumn(2)), dtype) for i in rows] == \
            [expected_text(v, dtype) for v in values]
        if len(shape) > 1:  # rows named by their place in the shape
            assert model.data(rows[-1]) == "[" + ", ".join(str(n - 1) for n in shape) + "]"
        else:
            assert model.data(rows[-1]) == f"[{len(values) - 1}]"


def test_uint8_image_tensor_shows_its_pixels_in_the_images_tab(window, qtbot):
    record = next(i for i, w in enumerate(EXPECTED) if w["dtype"] == "uint8")
    array = np.array(EXPECTED[record]["values"], np.uint8).reshape(EXPECTED[record]["shape"])
    tab = open_done(window, qtbot, str(TENSORS))
    select(qtbot, tab, record)
    detail = tab.detail
    qtbot.waitUntil(lambda: detail.images.pending() == 0 and detail.images.image_count() == 1, timeout=TIMEOUT)
    assert detail.tabs.isTabEnabled(IMAGES_TAB)
    detail.tabs.setCurrentIndex(IMAGES_TAB)
    image = detail.images.image(0)
    assert (image.width(), image.height()) == (8, 8) and detail.images.image_error(0) is None
    for y, x in [(0, 0), (3, 5), (7, 7), (6, 1)]:
        color = image.pixelColor(x, y)
        assert (color.red(), color.green(), color.blue()) == tuple(int(v) for v in array[y, x])
    assert not detail.grid.isVisibleTo(detail)  # a 3-D tensor has no grid


def test_float32_matrix_fills_the_grid_and_a_scalar_has_none(window, qtbot):
    tab = open_done(window, qtbot, str(TENSORS))
    record = next(i for i, w in enumerate(EXPECTED) if w["dtype"] == "float32" and len(w["shape"]) == 2)
    want = np.array(EXPECTED[record]["values"], np.float32).reshape(EXPECTED[record]["shape"])
    select(qtbot, tab, record)
    grid = tab.detail.grid
    tab.detail.tabs.setCurrentIndex(TREE_TAB)
    assert grid.isVisibleTo(tab.detail)
    model = grid.model
    assert (model.rowCount(), model.columnCount()) == want.shape
    got = np.array([[float(model.data(model.index(r, c))) for c in range(3)] for r in range(2)], np.float32)
    assert np.array_equal(got, want)
    assert grid.caption.text() == "float32 [2, 3] · 6 values"
    one_d = next(i for i, w in enumerate(EXPECTED) if w["dtype"] == "int64")
    select(qtbot, tab, one_d)
    assert (model.rowCount(), model.columnCount()) == (5, 1)
    assert [model.data(model.index(r, 0)) for r in range(5)] == [str(v) for v in EXPECTED[one_d]["values"]]
    scalar = next(i for i, w in enumerate(EXPECTED) if w["shape"] == [])
    select(qtbot, tab, scalar)
    assert not grid.isVisibleTo(tab.detail) and model.rowCount() == 0


def test_tensor_rows_are_read_only_while_the_file_is_editable(window, qtbot, tmp_path):
    path = tmp_path / "tensors.tfrecord"
    shutil.copy(TENSORS, path)
    tab = window.open_file(str(path))
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    select(qtbot, tab, 1)
    model, view = tab.detail.tree_model, tab.detail.tree
    assert not model.editable
    value = children(model, model.root_index())[0].siblingAtColumn(2)
    assert not model.flags(value) & Qt.ItemFlag.ItemIsEditable
    assert not model.setData(value, "5")
    asked = []
    view.edit_requested.connect(asked.append)
    view.setCurrentIndex(value)
    view._edit_at(value)
    view.request_remove(value)
    view.request_remove(model.root_index())
    assert asked and all(isinstance(a, ReadOnly) for a in asked)
    assert tab.editing.stack.count() == 0 and "cannot be edited" in window.statusBar().currentMessage()
    original = TFRecordFile(str(TENSORS))
    original.build_index()
    assert tab.editing.document.data(1) == original.read(1).data
    original.close()


# -- tensors in the detail and the gallery (no window) -------------------------
def test_a_million_values_stay_lazy_and_the_grid_is_capped(qtbot, tmp_path):
    array = np.arange(1_000_000, dtype=np.float32)
    path = tmp_path / "big.tfrecord"
    write_records(path, [tensor_bytes("DT_FLOAT", array)])
    f = TFRecordFile(str(path))
    f.build_index()
    detail = RecordDetail()
    qtbot.addWidget(detail)
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        detail.show_record(f, 0)
    model = detail.tree_model
    root = model.root_index()
    assert model.rowCount(root) == FIRST_CHUNK + 1 and model.hidden_count(root) == 1_000_000 - FIRST_CHUNK
    assert model.data(model.index(FIRST_CHUNK - 1, 2, root)) == f"{FIRST_CHUNK - 1}.0"
    grid = detail.grid.model
    assert grid.shown_cells == MAX_CELLS and grid.rowCount() == MAX_CELLS
    assert float(grid.data(grid.index(MAX_CELLS - 1, 0))) == MAX_CELLS - 1
    assert "first 10,000 of 1,000,000 values shown" in detail.grid.caption.text()
    f.close()


def test_uint16_tensor_is_scaled_to_8_bits_in_the_detail_and_its_thumbnail(qtbot, tmp_path):
    array = np.full((6, 4), 65535, np.uint16)
    array[0, 0] = 0
    path = tmp_path / "depth.tfrecord"
    write_records(path, [tensor_bytes("DT_UINT16", array)])
    f = TFRecordFile(str(path))
    f.build_index()
    detail = RecordDetail()
    qtbot.addWidget(detail)
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        detail.show_record(f, 0)
    qtbot.waitUntil(lambda: detail.images.pending() == 0 and detail.images.image_count() == 1, timeout=TIMEOUT)
    shown_image = detail.images.image(0)
    assert shown_image.pixelColor(0, 0).red() == 0 and shown_image.pixelColor(3, 5).red() == 255
    assert detail.grid.model.rowCount() == 6 and detail.grid.model.data(detail.grid.model.index(0, 1)) == "65535"
    result = make_thumbnail(f.read, ThumbRequest(0, 64, None, None), f)
    f.close()
    assert result.state == "ok", result.note
    assert (result.image.width(), result.image.height()) == (4, 6)  # small images are not enlarged
    assert result.image.pixelColor(0, 0).red() == 0 and result.image.pixelColor(3, 5).red() == 255
    assert result.caption == "uint16 [6, 4]"


def test_a_payload_note_shows_under_the_header(qtbot, tmp_path):
    class NotAFrame:
        name = "lens.demo.Frame"

        def decode(self, data: bytes) -> DecodedRecord:
            return DecodedRecord(RecordKind.RAW, data, note="not a lens.demo.Frame: field 3 has wire type 5")

    path = tmp_path / "one.tfrecord"
    write_records(path, [b"\x1d\x00\x00\x80\x3f"])
    f = TFRecordFile(str(path))
    f.build_index()
    f.payload = NotAFrame()
    detail = RecordDetail()
    qtbot.addWidget(detail)
    detail.show()
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        detail.show_record(f, 0)
    assert detail.note_text() == "not a lens.demo.Frame: field 3 has wire type 5"
    assert "raw" in detail.header_text()
    f.payload = None
    with qtbot.waitSignal(detail.record_shown, timeout=TIMEOUT):
        detail.show_record(f, 0)
    assert detail.note_text() == ""
    f.close()


# -- class names -------------------------------------------------------------
def test_label_ids_show_their_names_in_the_tree_and_the_table(qtbot, tmp_path):
    example = Example()
    example.features.feature["label"].CopyFrom(Feature(int64_list=Int64List(value=[1])))
    example.features.feature["objects/label"].CopyFrom(Feature(int64_list=Int64List(value=[2, 1, 9])))
    example.features.feature["count"].CopyFrom(Feature(int64_list=Int64List(value=[1])))
    names = Names({"label": {1: "cat", 2: "dog"}, "objects/label": {1: "cat", 2: "dog"}})
    decoded = decode_record(example.SerializeToString())
    model = tree_model(qtbot, decoded, labels=names)
    features = by_name(model, model.root_index())
    assert cells(model, features["label"])[2] == "1 (cat)"
    assert cells(model, features["count"])[2] == "1"  # not a label key
    assert cells(model, features["objects/label"])[2] == "[2 (dog), 1 (cat), 9]"
    assert [model.data(i.siblingAtColumn(2)) for i in children(model, features["objects/label"])] == \
        ["2 (dog)", "1 (cat)", "9"]

    path = tmp_path / "labels.tfrecord"
    write_records(path, [example.SerializeToString()])
    f = TFRecordFile(str(path))
    f.build_index()
    f.labels = names
    table = RecordTableModel(HeldRecords(f))
    table.sync()
    table.set_feature_columns(["label", "objects/label"])
    assert [table.data(table.index(0, Column.STATUS + 1 + c)) for c in range(2)] == \
        ["1 (cat)", "[2 (dog), 1 (cat), 9]"]
    f.close()


# -- messages and schema-less protobuf (trees in the documented shapes) --------
def message_tree() -> TreeNode:
    """lens.demo.Frame as a message tree builder makes it: fields, a nested message, repeated, a map."""
    def box(i: int, label: int, score: float) -> TreeNode:
        return TreeNode(f"[{i}]", "message", "lens.demo.Box", path=("boxes", i), children=[
            TreeNode("label", "field", "int64", [label], path=("boxes", i, "label")),
            TreeNode("score", "field", "float", [score], path=("boxes", i, "score")),
        ])

    return TreeNode("lens.demo.Frame", "message", "lens.demo.Frame", children=[
        TreeNode("image_id", "field", "string", ["frame-0001"], path=("image_id",)),
        TreeNode("split", "field", "enum", ["EVAL"], path=("split",)),
        TreeNode("taken", "field", "timestamp", [1_700_000_000], path=("taken",)),
        TreeNode("sensor", "message", "lens.demo.Sensor", path=("sensor",), children=[
            TreeNode("name", "field", "string", ["cam\nfront"], path=("sensor", "name")),
            TreeNode("exposure", "field", "double", [0.1], path=("sensor", "exposure")),
            TreeNode("ok", "field", "bool", [True], path=("sensor", "ok")),
        ]),
        TreeNode("boxes", "repeated", "lens.demo.Box", path=("boxes",),
                 children=[box(0, 1, 0.5), box(1, 2, 0.25)]),
        TreeNode("scores", "map", "float", path=("scores",), children=[
            TreeNode("sharpness", "field", "float", [0.75], path=("scores", "sharpness")),
        ]),
        TreeNode("deltas", "field", "sint32", [0, -1, 5], path=("deltas",)),
    ])


def test_message_tree_shows_names_nesting_enums_and_dates(qtbot):
    tree = message_tree()
    decoded = DecodedRecord(RecordKind.MESSAGE, b"")
    names = Names({"boxes.label": {1: "cat", 2: "dog"}})
    model = tree_model(qtbot, decoded, tree, labels=names)
    root = model.root_index()
    assert cells(model, root) == ["lens.demo.Frame", "lens.demo.Frame", "7 fields"]
    fields = by_name(model, root)
    assert list(fields) == ["image_id", "split", "taken", "sensor", "boxes", "scores", "deltas"]
    assert cells(model, fields["image_id"]) == ["image_id", "string", '"frame-0001"']
    assert cells(model, fields["split"])[2] == "EVAL"
    assert cells(model, fields["taken"])[2] == "2023-11-14T22:13:20Z"
    sensor = by_name(model, fields["sensor"])
    assert cells(model, sensor["name"])[2] == '"cam\\nfront"'
    assert cells(model, sensor["exposure"])[2] == "0.1"
    assert cells(model, sensor["ok"])[2] == "true"
    assert cells(model, fields["boxes"]) == ["boxes", "lens.demo.Box · 2", "2 items"]
    items = by_name(model, fields["boxes"])
    assert list(items) == ["[0]", "[1]"]
    assert cells(model, by_name(model, items["[1]"])["label"])[2] == "2 (dog)"
    assert cells(model, by_name(model, fields["scores"])["sharpness"])[2] == "0.75"
    assert cells(model, fields["scores"])[2] == "1 entry"
    assert [model.data(i.siblingAtColumn(2)) for i in children(model, fields["deltas"])] == ["0", "-1", "5"]
    assert json.loads(model.json_text(fields["boxes"])) == [{"label": 1, "score": 0.5}, {"label": 2, "score": 0.25}]
    model.set_editable(True)
    assert not model.editable and not model.setData(sensor["name"].siblingAtColumn(2), "x")


def test_schema_less_tree_shows_numbers_wire_types_and_nesting(qtbot):
    tree = TreeNode("protobuf", "protobuf", children=[
        TreeNode("1", "field", "varint", [150], path=("1",)),
        TreeNode("2", "field", "bytes", [b"\x00\xff"], path=("2",)),
        TreeNode("3", "message", path=("3",), children=[
            TreeNode("1", "field", "fixed32", [7], path=("3", "1")),
            TreeNode("2", "field", "string", ["hi"], path=("3", "2")),
        ]),
        TreeNode("4", "repeated", path=("4",), children=[
            TreeNode("[0]", "message", path=("4", 0),
                     children=[TreeNode("1", "field", "varint", [1], path=("4", 0, "1"))]),
        ]),
    ])
    model = tree_model(qtbot, DecodedRecord(RecordKind.PROTOBUF, b""), tree)
    root = model.root_index()
    assert cells(model, root) == ["protobuf", "protobuf", "4 fields"]
    fields = by_name(model, root)
    assert cells(model, fields["1"]) == ["1", "varint", "150"]
    assert cells(model, fields["2"]) == ["2", "bytes", "hex: 00 ff (2 bytes)"]
    nested = by_name(model, fields["3"])
    assert cells(model, nested["1"]) == ["1", "fixed32", "7"]
    assert cells(model, nested["2"]) == ["2", "string", '"hi"']
    assert cells(model, by_name(model, by_name(model, fields["4"])["[0]"])["1"]) == ["1", "varint", "1"]


def test_frames_from_the_descriptor_render_by_field_name(qtbot):
    messages = pytest.importorskip("codec.decode.messages")
    if not hasattr(messages, "message_tree"):
        pytest.skip("codec.decode.messages has no tree builder yet")
    found = [d for d in (FIXTURES / "payloads", FIXTURES / "payloads" / "messages")
             if (d / "frames.desc").exists() and (d / "frames.tfrecord").exists()]
    if not found:
        pytest.skip("the frames fixtures are not in tests/fixtures/payloads yet")
    payload = messages.load_message_type(found[0] / "frames.desc", "lens.demo.Frame")
    f = TFRecordFile(str(found[0] / "frames.tfrecord"))
    f.build_index()
    decoded = decode_record(f.read(1).data, payload)
    f.close()
    assert decoded.kind is RecordKind.MESSAGE
    model = tree_model(qtbot, decoded)
    want = MANIFEST["frames.tfrecord"]["records"][1]["json"]
    root = model.root_index()
    assert cells(model, root)[:2] == ["lens.demo.Frame", "lens.demo.Frame"]
    fields = by_name(model, root)
    camel = {"".join(w.title() if i else w for i, w in enumerate(name.split("_"))): name for name in fields}
    assert set(camel) == set(want)
    assert cells(model, fields["captured_at"])[1:] == ["timestamp", want["capturedAt"]]
    assert cells(model, fields["split"])[2] == want["split"]
    assert cells(model, fields["image_id"])[2] == f'"{want["imageId"]}"'
    box = by_name(model, by_name(model, fields["boxes"])["[0]"])
    assert cells(model, box["label"])[2] == f'"{want["boxes"][0]["label"]}"'
    assert float(cells(model, box["xmin"])[2]) == pytest.approx(want["boxes"][0]["xmin"], rel=1e-6)
    sharpness = by_name(model, fields["scores"])["sharpness"]
    assert float(cells(model, sharpness)[2]) == want["scores"]["sharpness"]
    assert kind_text(decoded) == "Message lens.demo.Frame"


def test_schema_less_records_render_from_the_codec(qtbot):
    wire = pytest.importorskip("codec.decode.schemaless")
    data = b"\x08\x96\x01\x1a\x02\x08\x07\x22\x05hello"  # 1: 150, 3: {1: 7}, 4: "hello"
    assert wire.looks_like_protobuf(data)
    decoded = decode_record(data)
    assert decoded.kind is RecordKind.PROTOBUF
    model = tree_model(qtbot, decoded)
    fields = by_name(model, model.root_index())
    assert cells(model, fields["1"]) == ["1", "varint", "150"]
    assert cells(model, by_name(model, fields["3"])["1"]) == ["1", "varint", "7"]
    assert cells(model, fields["4"]) == ["4", "string", '"hello"']


def test_a_batch_edit_skips_tensor_and_protobuf_records():
    """Selecting every row of a mixed file: the Examples change, the tensor and protobuf records are left alone."""
    from app.shell.record_edits import change_iter
    from codec.decode.example_proto import Example
    from codec.decode.tensors import DATA_TYPES, TensorProto
    from codec.editing.record_editor import RecordEditor

    example = Example()
    example.features.feature["label"].int64_list.value.append(1)
    tensor = TensorProto(dtype=DATA_TYPES["DT_INT32"], int_val=[4])
    tensor.tensor_shape.dim.add(size=1)
    protobuf = b"\x08\x96\x01\x12\x07testing"

    class Rows:
        rows = [example.SerializeToString(), tensor.SerializeToString(), protobuf]

        def data(self, row):
            return self.rows[row]

    def set_label(editor: RecordEditor) -> None:
        editor.set_values(("features", "label"), [7])

    changes, skipped = {}, []
    for _ in change_iter(Rows(), [0, 1, 2], set_label, changes, skipped, skip_raw=True):
        pass
    assert skipped == [1, 2]
    assert list(changes) == [0]
    assert list(Example.FromString(changes[0]).features.feature["label"].int64_list.value) == [7]
