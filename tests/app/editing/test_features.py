"""Editing features through the real main window: add, delete, rename, retype; SequenceExample steps; raw records."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.dialogs.edit_dialogs import BytesEditor
from app.models.record_table_model import Column
from app.views.tree_edit_requests import AddFeature, ChangeType, InsertStep, RenameFeature, ReplaceRecord
from codec.decode.decoder import RecordKind, decode_record, feature_values, record_features
from codec.editing.record_editor import RecordEditor
from tests.app.editing.helpers import (
    TIMEOUT,
    answer,
    feature_of,
    open_editable,
    original,
    press,
    read_back,
    redo,
    save,
    show,
    tree_index,
    undo,
    values,
)

pytestmark = pytest.mark.gui


# -- features ----------------------------------------------------------------------
def test_add_delete_rename_and_retype_features(window, qtbot, copy, monkeypatch):
    path = copy("structured.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 5)
    tree = tab.detail.tree
    doc = tab.editing.document

    answer(monkeypatch, "ask_new_feature", ("weights", "float", [0.5, float("inf")]))
    tree.edit_requested.emit(AddFeature("features"))
    assert values(tab, 5, "weights") == ("float", [0.5, float("inf")])
    assert "weights" in [tree_index(tab).model().index(r, 0, tree_index(tab)).data()
                         for r in range(tab.detail.tree_model.rowCount(tree_index(tab)))]
    answer(monkeypatch, "ask_new_feature", ("int_col", "int64", [1]))  # exists: a one-line error, no change
    count = tab.editing.stack.count()
    tree.edit_requested.emit(AddFeature("features"))
    assert "already exists" in window.message_bar.text() and tab.editing.stack.count() == count

    answer(monkeypatch, "ask_text", "identifier")
    tree.edit_requested.emit(RenameFeature(("features", "int_col")))
    assert values(tab, 5, "int_col") is None and values(tab, 5, "identifier") == ("int64", [5])

    tree.edit_requested.emit(ChangeType(("features", "identifier"), "float"))
    assert values(tab, 5, "identifier") == ("float", [5.0])
    tree.edit_requested.emit(ChangeType(("features", "identifier"), "bytes"))
    assert values(tab, 5, "identifier") == ("bytes", [b"5.0"])
    count = tab.editing.stack.count()
    tree.edit_requested.emit(ChangeType(("features", "byte_col"), "int64"))  # "row-5"
    assert "does not convert" in window.message_bar.text() or "not an integer" in window.message_bar.text()
    assert tab.editing.stack.count() == count and values(tab, 5, "byte_col") == ("bytes", [b"row-5"])

    tree.setCurrentIndex(tree_index(tab, "float_col"))
    press(qtbot, tree, Qt.Key.Key_Delete)
    assert values(tab, 5, "float_col") is None
    assert tab.editing.stack.count() == 5
    texts = [tab.editing.stack.text(i) for i in range(5)]
    assert texts[0].startswith("Add feature weights") and texts[-1].startswith("Delete feature float_col")

    for _ in range(5):
        undo(window)
    assert doc.data(5) == before[5] and not doc.modified
    for _ in range(5):
        redo(window)
    save(qtbot, tab)
    saved = read_back(path)
    features = record_features(decode_record(saved[5]))
    assert sorted(features) == ["byte_col", "identifier", "weights"]
    assert feature_of(saved[5], "identifier") == ("bytes", [b"5.0"])
    assert saved[:5] == before[:5] and saved[6:] == before[6:]


def test_sequence_example_context_features_and_steps(window, qtbot, copy, monkeypatch):
    path = copy("sequence_examples.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 1)
    tree = tab.detail.tree
    model = tab.detail.tree_model
    steps = lambda: [feature_values(s)[1] for s in  # noqa: E731
                     RecordEditor(tab.editing.document.data(1)).message.feature_lists.feature_list["my_ints"].feature]
    first = steps()
    # a context feature's value, in place
    length = tree_index(tab, "context", "length", column=2)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        assert model.setData(length, "99")
    assert values(tab, 1, "length", "context") == ("int64", [99])
    # a step's value, in place
    value = tree_index(tab, "feature_lists", "my_ints", "step 0", "[1]", column=2)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        assert model.setData(value, "-5")
    assert steps()[0][1] == -5
    # add and remove steps
    answer(monkeypatch, "ask_values", ("int64", [7, 8, 9]))
    tree.edit_requested.emit(InsertStep("my_ints", 0, "int64"))
    assert steps()[0] == [7, 8, 9] and len(steps()) == len(first) + 1
    tree.setCurrentIndex(tree_index(tab, "feature_lists", "my_ints", "step 1"))
    press(qtbot, tree, Qt.Key.Key_Delete)
    assert len(steps()) == len(first) and steps()[0] == [7, 8, 9]
    # a context feature and a feature list, added
    answer(monkeypatch, "ask_new_feature", ("speaker", "bytes", [b"anna"]))
    tree.edit_requested.emit(AddFeature("context"))
    assert values(tab, 1, "speaker", "context") == ("bytes", [b"anna"])
    answer(monkeypatch, "ask_new_feature", ("scores", "float", [0.25, 0.75]))
    tree.edit_requested.emit(AddFeature("feature_lists"))
    lists = RecordEditor(tab.editing.document.data(1)).message.feature_lists.feature_list
    assert [feature_values(s) for s in lists["scores"].feature] == [("float", [0.25]), ("float", [0.75])]
    # retype a whole feature list
    tree.edit_requested.emit(ChangeType(("feature_lists", "my_ints"), "float"))
    assert all(isinstance(v, float) for step in steps() for v in step)
    count = tab.editing.stack.count()
    assert count == 7
    for _ in range(count):
        undo(window)
    assert tab.editing.document.data(1) == before[1]
    for _ in range(count):
        redo(window)
    save(qtbot, tab)
    saved = read_back(path)
    message = decode_record(saved[1]).message
    assert decode_record(saved[1]).kind is RecordKind.SEQUENCE_EXAMPLE
    assert list(message.context.feature["speaker"].bytes_list.value) == [b"anna"]
    assert list(message.context.feature["length"].int64_list.value) == [99]
    assert list(message.feature_lists.feature_list["my_ints"].feature[0].float_list.value) == [7.0, 8.0, 9.0]
    assert saved[0] == before[0] and saved[2:] == before[2:]


def test_raw_records_are_replaced_by_hex_or_a_file(window, qtbot, copy, monkeypatch, tmp_path):
    path = copy("raw_strings.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 1)
    # hex typed in the dialog's editor
    editor = BytesEditor(before[1])
    editor.mode.setCurrentIndex(1)  # hex
    editor.edit.setPlainText("de ad be ef")
    assert editor.value() == b"\xde\xad\xbe\xef"
    editor.edit.setPlainText("de ad b")
    with pytest.raises(Exception, match="hex"):
        editor.value()
    answer(monkeypatch, "ask_record_bytes", b"\xde\xad\xbe\xef")
    tab.detail.tree.edit_requested.emit(ReplaceRecord())
    assert tab.editing.document.data(1) == b"\xde\xad\xbe\xef"
    assert tab.model.index(1, Column.SIZE).data() == "4"
    # a file's bytes, through the Edit menu's action
    blob = tmp_path / "payload.bin"
    blob.write_bytes(bytes(range(256)) * 3)
    editor = BytesEditor()
    editor.load_file(str(blob))
    answer(monkeypatch, "ask_record_bytes", editor.value())
    tab.select_record(0)
    window.edit_actions.replace_action.trigger()
    assert tab.editing.document.data(0) == blob.read_bytes()
    undo(window)
    undo(window)
    assert list(tab.editing.document) == before
    redo(window)
    redo(window)
    save(qtbot, tab)
    assert read_back(path) == [blob.read_bytes(), b"\xde\xad\xbe\xef"]


def test_an_added_feature_gets_a_column_unless_columns_were_chosen(window, qtbot, copy, monkeypatch):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    show(qtbot, tab, 3)
    assert "weights" not in tab.model.feature_columns()
    answer(monkeypatch, "ask_new_feature", ("weights", "float", [0.5]))
    window.edit_actions.add_feature_action.trigger()
    assert tab.model.feature_columns()[-1] == "weights"
    column = tab.model.columnCount() - 1
    assert tab.model.headerData(column, Qt.Orientation.Horizontal) == "weights"
    qtbot.waitUntil(lambda: tab.model.index(3, column).data() == "0.5", timeout=TIMEOUT)
    tab.toggle_column("weights", False)  # the user chooses the columns: a new key no longer joins them
    answer(monkeypatch, "ask_new_feature", ("extra", "int64", [7]))
    window.edit_actions.add_feature_action.trigger()
    assert values(tab, 3, "extra") == ("int64", [7]) and "extra" not in tab.model.feature_columns()
