"""TabEditing without the window: a session over a small real file, its table, selection and detail.

Edits go through TabEditing's methods; the tests assert on the session's records, the undo stack, the
table model and the file a save writes (read back through the codec, every CRC checked).
"""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.dialogs.edit_dialogs import BatchEdit
from app.shell.tab_editing import TabEditing
from codec.decode.decoder import decode_record, feature_values, record_features
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.app.tab_parts import TIMEOUT, TabParts
from tests.builders import example

pytestmark = pytest.mark.gui

RECORDS = [example(id=i, name=f"row-{i}", deterministic=True) for i in range(5)]


def ids(source) -> list[int]:
    return [feature_values(record_features(decode_record(source.read(i).data))["id"])[1][0]
            for i in range(len(source))]


class Editing:
    """A TabEditing with the parts a tab gives it."""

    def __init__(self, parts: TabParts) -> None:
        self.parts = parts
        self.editing = TabEditing(parts.session, parts.selection, parts.model, parts.detail, parts.host)
        parts.closing(self.editing.close)
        parts.closing(self.editing.wait)

    @property
    def records(self):
        return self.parts.session.records


@pytest.fixture
def five_records(tmp_path) -> str:
    path = tmp_path / "five.tfrecord"
    write_records(path, RECORDS)
    return str(path)


@pytest.fixture
def five(tab_parts, five_records):
    return Editing(tab_parts(five_records, editing=True))


def test_a_replaced_record_is_shown_and_undone(qtbot, five):
    editing, parts = five.editing, five.parts
    assert editing.editable and editing.read_only_reason() == "" and not editing.modified
    new = example(id=99, deterministic=True)
    assert editing.replace_record(2, new)
    assert five.records.read(2).data == new and ids(five.records) == [0, 1, 99, 3, 4]
    assert editing.modified and editing.stack.count() == 1
    parts.select(2)
    shown = parts.detail.loaded()  # the detail reads the edited record
    assert feature_values(record_features(shown.decoded)["id"]) == ("int64", [99])
    editing.stack.undo()
    assert five.records.read(2).data == RECORDS[2] and not editing.modified
    editing.stack.redo()
    assert five.records.read(2).data == new


def test_table_edits_are_one_step_each_and_the_table_follows(qtbot, five):
    editing, parts = five.editing, five.parts
    editing.select_records([1, 3])
    assert editing.selected_records() == [1, 3]
    assert editing.delete_selected()
    assert ids(five.records) == [0, 2, 4] and parts.model.rowCount() == 3
    editing.select_records([0])
    assert editing.duplicate_selected()
    assert ids(five.records) == [0, 0, 2, 4] and parts.model.rowCount() == 4
    editing.select_records([3])
    assert editing.move_selected(-1)
    assert ids(five.records) == [0, 0, 4, 2] and editing.selected_records() == [2]  # the selection moved along
    assert editing.stack.count() == 3
    for expected in ([0, 0, 2, 4], [0, 2, 4], [0, 1, 2, 3, 4]):
        editing.stack.undo()
        assert ids(five.records) == expected and parts.model.rowCount() == len(expected)
    assert not editing.modified


def test_a_batch_edit_sets_a_feature_on_the_rows_given_in_one_step(five):
    editing = five.editing
    assert editing.apply_batch([0, 2, 4], BatchEdit("set", "label", "int64", (7,)))
    labels = [record_features(decode_record(five.records.read(i).data)).get("label") for i in range(5)]
    assert [feature_values(f) if f is not None else None for f in labels] == [
        ("int64", [7]), None, ("int64", [7]), None, ("int64", [7])]
    assert editing.stack.count() == 1
    editing.stack.undo()
    assert [five.records.read(i).data for i in range(5)] == RECORDS


def test_save_as_writes_the_edited_records_and_the_tab_reads_the_new_file(qtbot, five, tmp_path):
    editing, parts = five.editing, five.parts
    editing.select_records([0])
    assert editing.delete_selected()
    out = str(tmp_path / "saved.tfrecord")
    done: list[bool] = []
    assert editing.save(out, None, on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [True]
    parts.wait_passes()
    with TFRecordFile(out, use_cache=False) as f:
        assert f.verify() == []
        assert [f.read(i).data for i in range(len(f))] == RECORDS[1:]
    assert parts.session.source.path == out and not editing.modified
    with TFRecordFile(str(tmp_path / "five.tfrecord"), use_cache=False) as f:
        f.build_index()
        assert len(f) == 5  # the original is untouched


def test_before_editing_starts_nothing_changes_and_it_says_why(tab_parts, five_records):
    e = Editing(tab_parts(five_records))
    editing = e.editing
    assert not editing.editable and editing.read_only_reason()
    editing.select_records([0])
    assert not editing.delete_selected()
    assert not editing.save()
    assert e.records.read(0).data == RECORDS[0] and editing.stack.count() == 0
