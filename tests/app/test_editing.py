"""Editing through the real main window: every edit kind with undo/redo, save, export.

Each test works on a copy of a reference fixture, drives the GUI (tree
editors, the tree's edit requests, table actions, the window's actions) and
asserts on the tab's Document; then it saves and reads the file back through
the codec with every CRC checked. Dialogs are replaced by the answers a user
would give (``edit_dialogs.ask_*``), so nothing modal ever blocks.
"""
from __future__ import annotations

import csv
import errno
import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLineEdit  # noqa: E402

from codec.decode.decoder import RecordKind, decode_record, feature_values, record_features  # noqa: E402
from codec.editing.record_editor import RecordEditor, empty_example  # noqa: E402
from codec.format.framing import Compression  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402

from app.dialogs import edit_dialogs  # noqa: E402
from app.dialogs.edit_dialogs import BatchEdit, BytesEditor, ValuesDialog  # noqa: E402
from app.models.record_table_model import Column  # noqa: E402
from app.models.settings import Settings  # noqa: E402
from app.shell import record_edits  # noqa: E402
from app.shell.file_tab import FileTab  # noqa: E402
from app.shell.main_window import MainWindow  # noqa: E402
from app.views.tree_edit_requests import (AddFeature, ChangeType, EditValues, InsertStep, InsertValue,  # noqa: E402
                                         RenameFeature, ReplaceRecord)
from tests.builders import FIXTURES  # noqa: E402

pytestmark = pytest.mark.gui

TIMEOUT = 20000


# -- helpers -------------------------------------------------------------------
@pytest.fixture
def window(qtbot) -> MainWindow:
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.edit_actions.ask_unsaved = lambda parent, name: "discard"  # a test never blocks on the prompt
    w.show()
    yield w
    for tab in w.file_tabs():
        tab.editing.wait()


@pytest.fixture
def copy(tmp_path):
    """``copy("name.tfrecord")`` -> the path of a private copy of a fixture."""
    def make(name: str) -> str:
        target = tmp_path / os.path.basename(name)
        shutil.copy(FIXTURES / name, target)
        return str(target)
    return make


def open_editable(window: MainWindow, qtbot, path: str) -> FileTab:
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    return tab


def show(qtbot, tab: FileTab, row: int) -> None:
    """Make ``row`` current and wait until the detail shows it."""
    if tab.current_record() == row and tab.detail.loaded() is not None:
        return
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(row)


def tree_index(tab: FileTab, *names: str, column: int = 0):
    """The tree row reached by following row names from the record's root."""
    model = tab.detail.tree_model
    index = model.root_index()
    for name in names:
        tab.detail.tree.expand(index)
        rows = [model.index(r, 0, index) for r in range(model.rowCount(index))]
        matches = [i for i in rows if i.data() == name]
        assert matches, f"no row {name!r} under {index.data()!r}: {[i.data() for i in rows]}"
        index = matches[0]
    return index.siblingAtColumn(column)


def values(tab: FileTab, row: int, key: str, scope: str = "features"):
    """(dtype, values) of a feature of document record ``row`` (None when absent)."""
    editor = RecordEditor(tab.editing.document.data(row))
    try:
        return feature_values(editor.feature((scope, key)) if scope != "steps" else editor.feature(key))
    except Exception:  # noqa: BLE001 - absent
        return None


def undo(window: MainWindow) -> None:
    window.edit_actions.undo_action.trigger()


def redo(window: MainWindow) -> None:
    window.edit_actions.redo_action.trigger()


def save(qtbot, tab: FileTab, path: str | None = None, compression: str | None = None) -> None:
    """Save and wait until the saved file is indexed and editable again."""
    done: list[bool] = []
    assert tab.editing.save(path, compression, on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [True], tab.window().message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)


def read_back(path: str) -> list[bytes]:
    """Every record of ``path``, read with the codec after checking every CRC."""
    with TFRecordFile(path, use_cache=False) as f:
        assert f.verify() == []
        return [f.read(i).data for i in range(len(f))]


def original(path: str) -> list[bytes]:
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        return [f.read(i).data for i in range(len(f))]


def feature_of(data: bytes, key: str):
    return feature_values(record_features(decode_record(data))[key])


def answer(monkeypatch, name: str, value) -> list:
    """Make ``edit_dialogs.<name>`` answer ``value`` (recording its arguments)."""
    calls: list = []

    def fake(*args, **kwargs):
        calls.append(args)
        return value

    monkeypatch.setattr(edit_dialogs, name, fake)
    return calls


def press(qtbot, widget, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press where the user would make it: with ``widget`` focused (shortcuts follow focus)."""
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=2000)
    qtbot.keyClick(widget, key, modifiers)


def type_into_editor(qtbot, tab: FileTab, index, text: str) -> None:
    """Open the tree's in-place editor on ``index`` (F2), type ``text``, press Enter."""
    tree = tab.detail.tree
    tree.setCurrentIndex(index)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    editors = [e for e in tree.findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1, "F2 opened no editor"
    editors[0].setText(text)
    qtbot.keyClick(editors[0], Qt.Key.Key_Return)


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
    assert tab.editing.stack.count() == 0 and tab.editing.stack.isClean()
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
        with qtbot.waitSignal(model.error, timeout=1000) as blocker:
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


# -- table ----------------------------------------------------------------------------
def select_rows(tab: FileTab, rows: list[int]) -> None:
    tab.editing.select_records(rows)


def test_table_delete_duplicate_insert_move_as_single_steps(window, qtbot, copy):
    path = copy("structured.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    doc = tab.editing.document
    actions = window.edit_actions
    # delete three records (two runs): one step
    select_rows(tab, [2, 3, 7])
    actions.delete_action.trigger()
    assert list(doc) == [r for i, r in enumerate(before) if i not in (2, 3, 7)]
    assert tab.model.rowCount() == 97 and tab.editing.stack.count() == 1
    assert tab.current_record() == 2  # the row that moved into the first deleted place
    undo(window)
    assert list(doc) == before and tab.model.rowCount() == 100
    assert tab.editing.selected_records() == [2, 3, 7]  # undo selects the records again
    redo(window)
    undo(window)
    # duplicate two records: copies land after each run
    select_rows(tab, [0, 1])
    actions.duplicate_action.trigger()
    assert list(doc)[:4] == [before[0], before[1], before[0], before[1]] and len(doc) == 102
    assert tab.editing.selected_records() == [2, 3]
    undo(window)
    # insert an empty Example after the current record
    tab.select_record(9)
    actions.insert_action.trigger()
    assert doc.data(10) == empty_example() and len(doc) == 101
    assert tab.model.index(10, Column.KIND).data() == "Example" and tab.current_record() == 10
    assert tab.model.index(10, Column.STATUS).data() == "edited"
    undo(window)
    # move up and down
    select_rows(tab, [4, 5])
    actions.move_up_action.trigger()
    assert list(doc)[3:6] == [before[4], before[5], before[3]]
    assert tab.editing.selected_records() == [3, 4]
    actions.move_down_action.trigger()
    actions.move_down_action.trigger()
    assert list(doc)[3:7] == [before[3], before[6], before[4], before[5]]
    assert tab.editing.stack.count() == 3
    select_rows(tab, [0])
    assert not tab.editing.move_selected(-1)  # already at the top: nothing pushed
    assert tab.editing.stack.count() == 3
    for _ in range(3):
        undo(window)
    assert list(doc) == before and not doc.modified
    # one of everything, then save
    select_rows(tab, [98, 99])
    actions.delete_action.trigger()
    select_rows(tab, [0])
    actions.duplicate_action.trigger()
    actions.insert_action.trigger()
    select_rows(tab, [50])
    actions.move_up_action.trigger()
    expected = list(doc)
    save(qtbot, tab)
    assert read_back(path) == expected and len(expected) == 100
    assert tab.model.rowCount() == 100


def test_table_shortcuts_work_where_the_table_has_focus(window, qtbot, copy):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    select_rows(tab, [10])
    press(qtbot, tab.table, Qt.Key.Key_Delete)
    assert len(tab.editing.document) == 99
    press(qtbot, tab.table, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    assert len(tab.editing.document) == 100
    press(qtbot, tab.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    press(qtbot, tab.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not tab.editing.document.modified
    press(qtbot, tab.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert len(tab.editing.document) == 99
    # Delete in the tree is the tree's (a feature), never the table's (a record)
    show(qtbot, tab, 0)
    tab.detail.tree.setCurrentIndex(tree_index(tab, "int_col"))
    press(qtbot, tab.detail.tree, Qt.Key.Key_Delete)
    assert len(tab.editing.document) == 99 and values(tab, 0, "int_col") is None


def test_apply_to_selection_is_one_step(window, qtbot, copy, monkeypatch):
    path = copy("flowers_jpeg.tfrecord")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    doc = tab.editing.document
    select_rows(tab, [2, 3, 4, 5, 9])
    calls = answer(monkeypatch, "ask_batch_edit", BatchEdit("set", "label", "int64", (3,)))
    window.edit_actions.batch_action.trigger()
    assert calls[0][1] == 5 and "label" in calls[0][2]  # the dialog was told the count and the keys
    assert [feature_of(doc.data(i), "label")[1] for i in (2, 3, 4, 5, 9)] == [[3]] * 5
    assert doc.data(1) == before[1] and tab.editing.stack.count() == 1
    assert tab.editing.stack.text(0) == "Set label on 5 records"
    # a new feature on some, then deleted from all selected (skipping those without it)
    select_rows(tab, [0, 1])
    tab.editing.apply_batch([0, 1], BatchEdit("set", "split", "bytes", (b"train",)))
    select_rows(tab, [0, 1, 2, 3])
    answer(monkeypatch, "ask_batch_edit", BatchEdit("delete", "split"))
    window.edit_actions.batch_action.trigger()
    assert all("split" not in record_features(decode_record(doc.data(i))) for i in range(4))
    assert "2 records skipped" in window.statusBar().currentMessage()
    assert tab.editing.stack.count() == 3
    undo(window)
    assert feature_of(doc.data(0), "split") == ("bytes", [b"train"])
    undo(window)
    undo(window)
    assert list(doc) == before
    redo(window)
    save(qtbot, tab)
    saved = read_back(path)
    assert [feature_of(saved[i], "label")[1] for i in (2, 3, 4, 5, 9)] == [[3]] * 5
    assert saved[0] == before[0]


def test_large_selection_edit_runs_on_a_worker(window, qtbot, copy, monkeypatch):
    monkeypatch.setattr(record_edits, "INLINE_EDIT_ROWS", 4)
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    rows = list(range(0, 100, 2))
    with qtbot.waitSignal(tab.editing.stack.indexChanged, timeout=TIMEOUT):
        assert tab.editing.apply_batch(rows, BatchEdit("set", "int_col", "int64", (-1,)))
        assert tab.editing.busy and not tab.editing.editable  # nothing else may edit meanwhile
    assert [values(tab, i, "int_col")[1] for i in rows] == [[-1]] * 50
    assert values(tab, 1, "int_col") == ("int64", [1])
    assert tab.editing.stack.count() == 1 and not tab.editing.busy


def test_raw_records_are_skipped_by_selection_edits(window, qtbot, copy):
    tab = open_editable(window, qtbot, copy("raw_strings.tfrecord"))
    select_rows(tab, [0, 1])
    assert not tab.editing.apply_batch([0, 1], BatchEdit("set", "label", "int64", (1,)))
    assert "nothing changed" in window.statusBar().currentMessage()
    assert tab.editing.stack.count() == 0


# -- saving -----------------------------------------------------------------------------
def test_interrupted_save_leaves_the_original_byte_identical(window, qtbot, copy, monkeypatch):
    path = copy("structured.tfrecord")
    content = Path(path).read_bytes()
    tab = open_editable(window, qtbot, path)
    select_rows(tab, [4])
    window.edit_actions.delete_action.trigger()
    import codec.storage.writer as writer_module

    real_put = writer_module.TFRecordWriter._put
    calls = {"n": 0}

    def failing_put(self, chunk):
        calls["n"] += 1
        if calls["n"] == 30:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_put(self, chunk)

    monkeypatch.setattr(writer_module.TFRecordWriter, "_put", failing_put)
    done: list[bool] = []
    assert tab.editing.save(on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [False]
    assert Path(path).read_bytes() == content
    assert [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")] == []
    text = window.message_bar.text()
    assert "save failed" in text and "No space left" in text and "structured.tfrecord is unchanged" in text
    # the edits are still there, still unsaved, and editing goes on
    assert tab.editing.modified and len(tab.editing.document) == 99 and tab.editing.editable
    monkeypatch.setattr(writer_module.TFRecordWriter, "_put", real_put)
    save(qtbot, tab)
    assert len(read_back(path)) == 99


def test_cancelled_save_writes_nothing(window, qtbot, tmp_path):
    path = str(tmp_path / "many.tfrecord")
    write_records(path, (b"record %d" % i for i in range(20000)))
    content = Path(path).read_bytes()
    tab = open_editable(window, qtbot, path)
    tab.editing.replace_record(0, b"changed")
    done: list[bool] = []
    assert tab.editing.save(on_done=done.append)
    tab.editing.cancel()
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [False] and "save cancelled" in window.statusBar().currentMessage()
    assert Path(path).read_bytes() == content and tab.editing.modified


def test_save_as_with_compression_shows_the_new_file(window, qtbot, copy, monkeypatch, tmp_path):
    path = copy("structured.tfrecord")
    content = Path(path).read_bytes()
    tab = open_editable(window, qtbot, path)
    tab.editing.replace_record(0, empty_example())
    target = str(tmp_path / "out" / "copy.tfrecord.gz")
    os.makedirs(os.path.dirname(target))
    answer(monkeypatch, "ask_save_as", (target, "gzip"))
    window.edit_actions.save_as_action.trigger()
    qtbot.waitUntil(lambda: tab.path == target and tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    assert tab.session.source.compression is Compression.GZIP and window.tabs.tabText(0) == "copy.tfrecord.gz"
    assert window.windowTitle().startswith("copy.tfrecord.gz") and not window.isWindowModified()
    assert window.tabs.tabToolTip(0) == target
    assert Path(path).read_bytes() == content  # the original is left alone
    saved = read_back(target)
    assert len(saved) == 100 and saved[0] == empty_example() and saved[1:] == original(path)[1:]
    for compression in ("zlib", "none"):
        other = str(tmp_path / f"copy-{compression}.tfrecord")
        save(qtbot, tab, other, compression)
        with TFRecordFile(other, use_cache=False) as f:
            assert f.compression.value == compression
        assert read_back(other) == saved


def test_save_as_refuses_a_file_open_in_another_tab(window, qtbot, copy, monkeypatch):
    first = open_editable(window, qtbot, copy("structured.tfrecord"))
    second = open_editable(window, qtbot, copy("my_example.tfrecords"))
    answer(monkeypatch, "ask_save_as", (first.path, "none"))
    assert not window.edit_actions.save_as_current()
    assert "open in another tab" in window.message_bar.text() and second.path != first.path


# -- read-only, modified mark, prompts ----------------------------------------------------
def test_editing_is_off_while_indexing_and_says_so(window, qtbot, tmp_path):
    path = str(tmp_path / "big.tfrecord")
    write_records(path, (b"\x0a\x00" for _ in range(300000)))
    tab = window.open_file(path)
    assert not tab.editing.editable and "indexing" in tab.editing.read_only_reason()
    assert not window.edit_actions.delete_action.isEnabled() and not window.edit_actions.save_as_action.isEnabled()
    assert window.edit_actions.mode_label.text() == "read-only"
    assert not tab.editing.delete_selected()
    assert "read-only while" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: tab.editing.editable, timeout=60000)
    assert window.edit_actions.mode_label.isHidden()
    assert tab.detail.tree_model.editable


def test_modified_mark_and_close_prompt(window, qtbot, copy):
    path = copy("structured.tfrecord")
    tab = open_editable(window, qtbot, path)
    assert not window.isWindowModified()
    tab.editing.replace_record(3, empty_example())
    assert window.isWindowModified() and window.tabs.tabText(0).endswith(" *")
    asked: list[str] = []

    def ask(answer_text):
        def prompt(parent, name):
            asked.append(name)
            return answer_text
        return prompt

    window.edit_actions.ask_unsaved = ask("cancel")
    window.close_current()
    assert window.tabs.count() == 1 and asked == ["structured.tfrecord"]
    window.close()
    assert window.isVisible() and window.tabs.count() == 1  # quitting was cancelled too
    # Save from the prompt: it saves, then the tab closes
    window.edit_actions.ask_unsaved = ask("save")
    window.close_current()
    qtbot.waitUntil(lambda: window.tabs.count() == 0, timeout=TIMEOUT)
    assert original(path)[3] == empty_example()
    # Discard: closes, the file stays as it was
    tab = open_editable(window, qtbot, path)
    tab.editing.replace_record(0, b"")
    window.edit_actions.ask_unsaved = ask("discard")
    window.close_current()
    assert window.tabs.count() == 0 and original(path)[0] != b""
    # an unmodified tab closes without a question
    asked.clear()
    open_editable(window, qtbot, path)
    window.close_current()
    assert asked == []


def test_quit_saves_every_modified_tab_when_asked(window, qtbot, copy):
    a = open_editable(window, qtbot, copy("structured.tfrecord"))
    b = open_editable(window, qtbot, copy("my_example.tfrecords"))
    a.editing.replace_record(0, empty_example())
    b.editing.replace_record(0, empty_example())
    paths = [a.path, b.path]
    window.edit_actions.ask_unsaved = lambda parent, name: "save"
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=TIMEOUT)
    assert [original(p)[0] for p in paths] == [empty_example(), empty_example()]


def test_undo_history_dock_follows_the_current_tab(window, qtbot, copy):
    a = open_editable(window, qtbot, copy("structured.tfrecord"))
    a.editing.replace_record(0, empty_example())
    a.editing.replace_record(1, empty_example())
    b = open_editable(window, qtbot, copy("my_example.tfrecords"))
    history = window.edit_actions.history
    assert history.isHidden()
    history.toggleViewAction().trigger()
    assert history.isVisible()
    assert history.view.model().rowCount() == 1  # b: only "<as opened>"
    window.tabs.setCurrentWidget(a)
    assert history.view.model().rowCount() == 3
    history.view.setCurrentIndex(history.view.model().index(1, 0))  # back to the first edit
    assert a.editing.stack.index() == 1 and a.editing.document.data(1) != empty_example()
    assert b.editing.stack.count() == 0


# -- export -----------------------------------------------------------------------------------
def run_export(qtbot, dialog, fmt: str, out: str, compression: str = "none"):
    dialog.set_format(fmt)
    dialog.output.setText(out)
    dialog.compression.setCurrentIndex(dialog.compression.findData(compression))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    return blocker.args[0]


def test_export_the_selection_in_every_format(window, qtbot, copy, tmp_path):
    path = copy("flowers_jpeg.tfrecord")
    tab = open_editable(window, qtbot, path)
    before = original(path)
    show(qtbot, tab, 3)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.detail.tree_model.setData(tree_index(tab, "label", column=2), "7")  # exports show the edits
    select_rows(tab, [1, 3, 6])
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_selected.isChecked() and dialog.indices() == [1, 3, 6]

    report = run_export(qtbot, dialog, "tfrecord", str(tmp_path / "sel.tfrecord.gz"), "gzip")
    assert report.records == 3
    with TFRecordFile(str(tmp_path / "sel.tfrecord.gz"), use_cache=False) as f:
        assert f.compression is Compression.GZIP
    saved = read_back(str(tmp_path / "sel.tfrecord.gz"))
    assert saved[0] == before[1] and saved[2] == before[6] and feature_of(saved[1], "label") == ("int64", [7])

    run_export(qtbot, dialog, "jsonl", str(tmp_path / "sel.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "sel.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == [1, 3, 6]
    assert lines[1]["value"]["features"]["feature"]["label"]["int64List"]["value"] == ["7"]

    run_export(qtbot, dialog, "csv", str(tmp_path / "sel.csv"))
    rows = list(csv.DictReader((tmp_path / "sel.csv").open()))
    assert [r["index"] for r in rows] == ["1", "3", "6"] and rows[1]["label"] == "7"
    assert rows[0]["text"] == feature_of(before[1], "text")[1][0].decode()

    report = run_export(qtbot, dialog, "images", str(tmp_path / "images"))
    assert sorted(os.listdir(tmp_path / "images")) == ["000001_encoded.jpg", "000003_encoded.jpg",
                                                       "000006_encoded.jpg"]
    assert report.files == 3
    assert "wrote 3 image files" in window.statusBar().currentMessage()

    # all records
    dialog.scope_all.setChecked(True)
    assert run_export(qtbot, dialog, "jsonl", str(tmp_path / "all.jsonl")).records == 25

    # the index describes the file on disk: not while there are unsaved edits
    dialog.set_format("index-dali")
    assert not dialog.export_button.isEnabled() and "save first" in dialog.note.text()
    dialog.close()


def test_export_the_index_native_and_dali(window, qtbot, copy, tmp_path):
    path = copy("structured.tfrecord")
    tab = open_editable(window, qtbot, path)
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.output.text().endswith("structured-export.tfrecord")
    dialog.set_format("index-native")
    assert dialog.output.text().endswith("structured.tfrecord.tfri")
    out = run_export(qtbot, dialog, "index-dali", str(tmp_path / "structured.idx"))
    assert out == str(tmp_path / "structured.idx")
    lines = (tmp_path / "structured.idx").read_text().splitlines()
    assert len(lines) == 100
    offset, size = map(int, lines[1].split())
    info = tab.session.source.record_info(1)
    assert (offset, size) == (info.offset, info.end - info.offset)
    run_export(qtbot, dialog, "index-native", str(tmp_path / "structured.tfri"))
    assert (tmp_path / "structured.tfri").read_bytes().startswith(b"TFRLIDX1")


def test_dali_index_needs_a_plain_file(window, qtbot, copy):
    open_editable(window, qtbot, copy("structured.tfrecord.gz"))
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("index-dali")
    assert not dialog.export_button.isEnabled() and "uncompressed" in dialog.note.text()


def test_cancelled_export_writes_nothing(window, qtbot, tmp_path):
    path = str(tmp_path / "many.tfrecord")
    write_records(path, (b"record %d" % i for i in range(30000)))
    open_editable(window, qtbot, path)
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("jsonl")
    dialog.output.setText(str(tmp_path / "out.jsonl"))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        dialog.start()
        dialog.cancel()
    assert blocker.args[0] is None and "cancelled" in dialog.message
    assert not (tmp_path / "out.jsonl").exists()


# -- dialogs ----------------------------------------------------------------------------------
def test_values_dialog_checks_input_with_the_codec(qtbot):
    dialog = ValuesDialog(None, "Add", "int64", (), choose_type=True, name="")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert not ok.isEnabled() and "needs a name" in dialog.error_label.text()
    dialog.name.setText("label")
    dialog.values.setPlainText("1, 2, x")
    assert not ok.isEnabled() and "not an integer" in dialog.error_label.text()
    dialog.values.setPlainText("1, 2, 3")
    assert ok.isEnabled() and dialog.result_value() == ("int64", [1, 2, 3])
    dialog.type.setCurrentText("bytes")
    dialog.values.setPlainText("cat\nhex:00ff")
    assert dialog.result_value() == ("bytes", [b"cat", b"\x00\xff"])
    assert edit_dialogs.values_text([b"a\nb", b"c"], "bytes") == "hex:610a62\nc"


# -- the pieces without a window ----------------------------------------------------------------
def test_commands_undo_and_redo_change_only_the_document(qapp, fixture_file):
    from PySide6.QtGui import QUndoStack

    from app.models.commands import (DeleteRecords, DuplicateRecords, EditTarget, InsertRecords, MoveRecords,
                                     ReplaceRecords)
    from codec.editing.document import Document

    with TFRecordFile(fixture_file("structured.tfrecord"), use_cache=False) as f:
        f.build_index()
        before = [f.read(i).data for i in range(len(f))]
        target = EditTarget(Document(f))
        doc = target.document
        changes: list = []
        target.changed.connect(changes.append)
        stack = QUndoStack()
        steps = [
            (ReplaceRecords(target, {1: b"one", 50: b"fifty"}, "replace"),
             lambda r: r[1] == b"one" and r[50] == b"fifty" and len(r) == 100),
            (DeleteRecords(target, [0, 2, 3]), lambda r: len(r) == 97 and r[0] == b"one"),
            (DuplicateRecords(target, [0]), lambda r: r[:2] == [b"one", b"one"]),
            (InsertRecords(target, 98, [b"end"]), lambda r: r[98] == b"end" and len(r) == 99),
            (MoveRecords(target, [98], -1), lambda r: r[97] == b"end"),
        ]
        states = [before]
        for command, check in steps:
            stack.push(command)
            assert check(list(doc)), command.text()
            states.append(list(doc))
        assert changes[0].rows == (1, 50) and changes[1].rows is None and changes[1].select == (0,)
        for state in reversed(states[:-1]):
            stack.undo()
            assert list(doc) == state
        assert not doc.modified
        for state in states[1:]:
            stack.redo()
            assert list(doc) == state


def test_edited_file_maps_rows_statuses_and_problems(qapp, fixture_file):
    from app.models.record_table_model import RecordTableModel
    from codec.editing.document import Document
    from codec.editing.edited import EditedFile

    with TFRecordFile(fixture_file("corrupt_data_crc.tfrecord"), use_cache=False) as f:
        f.verify()
        (bad,) = [p.index for p in f.problems if p.index is not None]
        records = EditedFile(Document(f))
        model = RecordTableModel(f)
        model.sync()
        model.set_file(records)
        records.document.delete([0, 1])
        records.document.insert(0, [b"new"])
        model.records_changed(None)
        row = bad - 1  # two deleted before it, one inserted
        assert model.rowCount() == len(f) - 1
        assert list(model.flagged_rows()) == [row]
        assert records.problems[0].index == row and records.index.offset(row) == f.index.offset(bad)
        assert model.index(row, Column.STATUS).data() == "data CRC bad"
        assert model.index(0, Column.STATUS).data() == "edited" and model.index(0, Column.OFFSET).data() == "—"
        assert records.read(0).data == b"new" and records.read(0).info.offset == -1
        assert records.find_record(f.index.offset(bad)) == row
        assert records.row_of(0) is None  # deleted
        pinned = records.pinned(0)
        assert pinned.note.startswith("edited") and pinned.read_bytes(12, 3) == b"new"
        moved = records.pinned(row)
        assert moved.read(row).data == f.read(bad).data and moved.note.startswith(f"record {bad:,} in the file")


def test_compressed_file_keeps_its_compression_on_save(window, qtbot, copy):
    path = copy("structured.tfrecord.gz")
    before = original(path)
    tab = open_editable(window, qtbot, path)
    show(qtbot, tab, 1)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        assert tab.detail.tree_model.setData(tree_index(tab, "int_col", column=2), "1001")
    select_rows(tab, [0])
    window.edit_actions.delete_action.trigger()
    save(qtbot, tab)
    assert tab.session.source.compression is Compression.GZIP
    saved = read_back(path)
    assert feature_of(saved[0], "int_col") == ("int64", [1001]) and saved[1:] == before[2:]


def test_export_offers_the_filtered_rows(window, qtbot, copy, tmp_path):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    view_model = tab.table.model()
    if not hasattr(view_model, "set_matches"):
        pytest.skip("the table has no filter proxy")
    view_model.set_matches([2, 5, 9], "int_col in (2, 5, 9)")
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_filtered.isEnabled() and "(3)" in dialog.scope_filtered.text()
    dialog.scope_filtered.setChecked(True)
    run_export(qtbot, dialog, "jsonl", str(tmp_path / "filtered.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "filtered.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == [2, 5, 9]
    # a selection through the filter is of records, not of view rows
    select_rows(tab, [5, 9])
    assert tab.editing.selected_records() == [5, 9]
    window.edit_actions.delete_action.trigger()
    assert len(tab.editing.document) == 98


def test_apply_dialog_takes_the_type_of_a_known_feature(qtbot):
    from app.dialogs.edit_dialogs import ApplyToSelectionDialog

    dialog = ApplyToSelectionDialog(None, 4, {"label": "int64", "text": "bytes"})
    qtbot.addWidget(dialog)
    assert dialog.key.currentText() == "label" and dialog.type.currentText() == "int64"
    dialog.key.setCurrentText("text")
    dialog.values.setPlainText("cat")
    assert dialog.result_value() == BatchEdit("set", "text", "bytes", (b"cat",))
    dialog.delete_radio.setChecked(True)
    assert not dialog.values.isEnabled() and dialog.result_value() == BatchEdit("delete", "text")
