"""Editing values through the real main window: the whole session (edit, undo, redo, save, reopen), typed values, lists."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.dialogs.edit_dialogs import BytesEditor
from app.models.record_table_model import Column
from app.views.tree_edit_requests import EditValues, InsertValue
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
    type_into_editor,
    undo,
    values,
)

pytestmark = pytest.mark.gui


# -- the session ---------------------------------------------------------
def test_edit_a_label_undo_redo_save_reopen(window, qtbot, copy):
    path = copy("flowers_jpeg.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 4)
    label = tree_index(tab, "label", column=2)
    assert tab.detail.tree_model.flags(label) & Qt.ItemFlag.ItemIsEditable
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        type_into_editor(qtbot, tab, label, "3")
    assert feature_of(tab.editing.document.data(4), "label") == ("int64", [3])
    # the table and the detail show the edit, marked
    assert tab.model.index(4, Column.STATUS).data() == "edited"
    assert tab.model.index(4, Column.OFFSET).data() == "—"
    assert tab.model.index(4, 0).data(Qt.ItemDataRole.FontRole).italic()
    assert tab.model.index(3, 0).data(Qt.ItemDataRole.FontRole) is None
    assert "edited · not saved yet" in tab.detail.header_text()
    assert "not in the file yet" in tab.detail.hex.summary_text()  # no file offset to show
    assert "file offset" not in tab.detail.hex.summary_text()
    assert tree_index(tab, "label", column=2).data() == "3"
    assert tab.detail.tree.current_path() == ("features", "label")  # the tree stays where the user was
    assert window.isWindowModified() and window.windowTitle().startswith("flowers_jpeg.tfrecord[*]")
    assert window.tabs.tabText(0) == "flowers_jpeg.tfrecord *"
    assert window.edit_actions.save_action.isEnabled()

    undo(window)
    assert not tab.editing.document.modified and not window.isWindowModified()
    assert tab.editing.document.data(4) == before[4]
    assert tab.model.index(4, Column.STATUS).data() == "ok"
    assert tree_index(tab, "label", column=2).data() == str(feature_of(before[4], "label")[1][0])
    redo(window)
    assert feature_of(tab.editing.document.data(4), "label") == ("int64", [3])

    window.edit_actions.save_action.trigger()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running() and not tab.editing.modified,
                    timeout=TIMEOUT)
    assert not window.isWindowModified() and window.tabs.tabText(0) == "flowers_jpeg.tfrecord"
    assert tab.editing.stack.count() == 1 and tab.editing.stack.isClean()  # the history stays: undo goes on
    assert tab.model.rowCount() == 25 and tab.model.index(4, Column.STATUS).data() == "ok"
    assert tab.session.source is not None and tab.session.source.path == path and tab.session.source.indexed
    saved = read_back(path)
    assert feature_of(saved[4], "label") == ("int64", [3])
    assert saved[:4] == before[:4] and saved[5:] == before[5:]
    assert feature_of(saved[4], "encoded") == feature_of(before[4], "encoded")


# -- values ------------------------------------------------------------------------
def test_values_are_type_checked_and_errors_change_nothing(window, qtbot, copy):
    path = copy("structured.tfrecord")
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 2)
    model = tab.detail.tree_model
    doc = tab.editing.document
    for key, text in [("int_col", "abc"), ("int_col", "9223372036854775808"), ("int_col", "1.5"),
                      ("float_col", "1e40"), ("float_col", "x"), ("byte_col", "hex:zz"), ("byte_col", "base64:@@")]:
        with qtbot.waitSignal(model.failed, timeout=1000) as blocker:
            assert not model.setData(tree_index(tab, key, column=2), text)
        assert "\n" not in blocker.args[0]
        assert blocker.args[0] in window.message_bar.text()
        assert not doc.modified and tab.editing.stack.count() == 0
    for key, text, expected in [("int_col", "-9223372036854775808", ("int64", [-(1 << 63)])),
                                ("int_col", "0x10", ("int64", [16])),
                                ("float_col", "-inf", ("float", [float("-inf")])),
                                ("byte_col", "hex:00ff", ("bytes", [b"\x00\xff"])),
                                ("byte_col", "base64:aGk=", ("bytes", [b"hi"])),
                                ("byte_col", "plain text", ("bytes", [b"plain text"]))]:
        with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
            assert model.setData(tree_index(tab, key, column=2), text)
        assert values(tab, 2, key) == expected
    nan_index = tree_index(tab, "float_col", column=2)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        model.setData(nan_index, "nan")
    dtype, (value,) = values(tab, 2, "float_col")
    assert value != value  # nan
    assert tab.editing.stack.count() == 7
    save(qtbot, tab)
    saved = read_back(path)
    assert feature_of(saved[2], "int_col") == ("int64", [16])
    assert feature_of(saved[2], "byte_col") == ("bytes", [b"plain text"])


def test_binary_value_goes_through_the_bytes_dialog(window, qtbot, copy, monkeypatch, tmp_path):
    path = copy("flowers_jpeg.tfrecord")
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 0)
    image = tree_index(tab, "encoded", column=2)
    assert not tab.detail.tree_model.flags(image) & Qt.ItemFlag.ItemIsEditable  # binary: a dialog, not a line
    picture = tmp_path / "new.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    editor = BytesEditor()
    editor.load_file(str(picture))
    new = editor.value()
    assert new == picture.read_bytes()
    calls = answer(monkeypatch, "ask_value", new)
    tab.detail.tree.setCurrentIndex(image)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        press(qtbot, tab.detail.tree, Qt.Key.Key_F2)
    assert calls and calls[0][2] == "bytes"
    assert values(tab, 0, "encoded") == ("bytes", [new])
    undo(window)
    assert values(tab, 0, "encoded")[1][0].startswith(b"\xff\xd8")
    redo(window)
    save(qtbot, tab)
    assert feature_of(read_back(path)[0], "encoded") == ("bytes", [new])


def test_add_and_remove_values_in_a_list(window, qtbot, copy, monkeypatch):
    path = copy("my_example.tfrecords")
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 0)
    tree = tab.detail.tree
    assert values(tab, 0, "my_ints") == ("int64", [5, 6])
    answer(monkeypatch, "ask_value", 7)
    tree.edit_requested.emit(InsertValue(("features", "my_ints"), 2, "int64"))
    assert values(tab, 0, "my_ints") == ("int64", [5, 6, 7])
    answer(monkeypatch, "ask_value", 4)
    tree.edit_requested.emit(InsertValue(("features", "my_ints"), 0, "int64"))
    assert values(tab, 0, "my_ints") == ("int64", [4, 5, 6, 7])
    # Delete on a value row removes that value
    value_row = tree_index(tab, "my_ints", "[1]")
    tree.setCurrentIndex(value_row)
    press(qtbot, tree, Qt.Key.Key_Delete)
    assert values(tab, 0, "my_ints") == ("int64", [4, 6, 7])
    # a whole list at once
    answer(monkeypatch, "ask_values", ("int64", [10, 20, 30, 40, 50]))
    tree.edit_requested.emit(EditValues(("features", "my_ints"), "int64"))
    assert values(tab, 0, "my_ints") == ("int64", [10, 20, 30, 40, 50])
    assert tab.editing.stack.count() == 4
    for expected in ([4, 6, 7], [4, 5, 6, 7], [5, 6, 7], [5, 6]):
        undo(window)
        assert values(tab, 0, "my_ints") == ("int64", expected)
    for expected in ([5, 6, 7], [4, 5, 6, 7], [4, 6, 7], [10, 20, 30, 40, 50]):
        redo(window)
        assert values(tab, 0, "my_ints") == ("int64", expected)
    save(qtbot, tab)
    assert feature_of(read_back(path)[0], "my_ints") == ("int64", [10, 20, 30, 40, 50])
