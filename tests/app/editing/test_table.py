"""Editing records from the table: delete, duplicate, insert, move, shortcuts, edits over a selection."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.dialogs.edit_dialogs import BatchEdit
from app.models.record_table_model import Column
from app.shell import record_edits
from codec.decode.decoder import decode_record, record_features
from codec.editing.record_editor import empty_example
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
    select_rows,
    show,
    tree_index,
    undo,
    values,
)

pytestmark = pytest.mark.gui


# -- table ----------------------------------------------------------------------------

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
