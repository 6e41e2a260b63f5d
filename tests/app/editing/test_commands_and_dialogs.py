"""The editing pieces without a window: undo commands over a Document, the edited file's rows, the value dialogs."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.dialogs import edit_dialogs
from app.dialogs.edit_dialogs import BatchEdit, ValuesDialog
from app.models.record_table_model import Column
from codec.sources.tfrecord_file import TFRecordFile

pytestmark = pytest.mark.gui


# -- dialogs ----------------------------------------------------------------------------------
def test_values_dialog_checks_input_with_the_codec(qtbot):
    dialog = ValuesDialog(None, "Add", "int64", (), choose_type=True, name="")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert ok.isEnabled() and dialog.error_label.text() == ""  # nothing typed yet: no red
    dialog.accept()  # OK on the empty form says what is missing and stays open
    assert dialog.result() != dialog.DialogCode.Accepted
    assert not ok.isEnabled() and "needs a name" in dialog.error_label.text()
    dialog.name.setText("x")
    dialog.name.setText("")  # typed, then cleared: said at once
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

    from app.models.commands import (
        DeleteRecords,
        DuplicateRecords,
        EditTarget,
        InsertRecords,
        MoveRecords,
        ReplaceRecords,
    )
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
    from app.models.records_owner import HeldRecords
    from codec.editing.document import Document
    from codec.editing.edited import EditedFile

    with TFRecordFile(fixture_file("corrupt_data_crc.tfrecord"), use_cache=False) as f:
        f.verify()
        (bad,) = [p.index for p in f.problems if p.index is not None]
        records = EditedFile(Document(f))
        owner = HeldRecords(f)
        model = RecordTableModel(owner)
        model.sync()
        owner.records = records
        model.records_replaced()
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
