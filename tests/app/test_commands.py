"""The undo commands against a real Document and QUndoStack, with no window.

Each test pushes commands over a small file of tf.train.Example records,
asserts what the document holds and what :attr:`EditTarget.changed` told the
views, then undoes (the document is the file again, byte for byte: a copy saved
from it equals the original file) and redoes.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtGui")

from PySide6.QtGui import QUndoStack

from app.models.commands import (
    DeleteRecords,
    DocumentChange,
    DuplicateRecords,
    EditTarget,
    InsertRecords,
    MoveRecords,
    ReplaceRecords,
)
from codec.decode.example_proto import Example
from codec.editing.document import Document
from codec.errors import UsageError
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records
from tests.builders import example

pytestmark = pytest.mark.gui

LABELS = ["cat", "dog", "cat", "bird", "dog", "fish"]


def labelled(n: int, label: str) -> bytes:
    """A tf.train.Example with an int64 ``id`` and a bytes ``label``."""
    return example(id=n, label=label, deterministic=True)


ORIGINAL = [labelled(i, label) for i, label in enumerate(LABELS)]
R = ORIGINAL  # short name for expected record lists


def ids(doc: Document) -> list[int]:
    """Each record's ``id`` feature, in document order."""
    out = []
    for data in doc:
        ex = Example()
        ex.ParseFromString(data)
        out.append(ex.features.feature["id"].int64_list.value[0])
    return out


class Session:
    """A document over a six-record file, its EditTarget, a stack, and the changes the views were told."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.path = tmp_path / "six.tfrecord"
        write_records(self.path, ORIGINAL)
        self.file_bytes = self.path.read_bytes()
        self.source = open_tfrecord(self.path)
        self.doc = Document(self.source)
        self.target = EditTarget(self.doc)
        self.changes: list[DocumentChange] = []
        self.target.changed.connect(self.changes.append)
        self.stack = QUndoStack()
        self.stack.setClean()
        self._saves = itertools.count()

    def push(self, command) -> list[DocumentChange]:
        """Push ``command``; return what the views were told."""
        self.changes.clear()
        self.stack.push(command)
        return list(self.changes)

    def undo(self) -> list[DocumentChange]:
        self.changes.clear()
        self.stack.undo()
        return list(self.changes)

    def redo(self) -> list[DocumentChange]:
        self.changes.clear()
        self.stack.redo()
        return list(self.changes)

    def saved_bytes(self) -> bytes:
        """The document saved to a new file, as bytes."""
        out = self.tmp_path / f"saved-{next(self._saves)}.tfrecord"
        self.doc.save(out)
        return out.read_bytes()

    def assert_original(self) -> None:
        """The document is the untouched file: same records, all from the source, saving copies it exactly."""
        assert list(self.doc) == ORIGINAL
        assert [self.doc.origin(i) for i in range(len(self.doc))] == list(range(len(ORIGINAL)))
        assert not self.doc.modified
        assert self.saved_bytes() == self.file_bytes

    def assert_holds(self, records: list[bytes]) -> None:
        """The document holds ``records``, and a saved copy reads back as them with every CRC checked."""
        assert list(self.doc) == records
        out = self.tmp_path / f"saved-{next(self._saves)}.tfrecord"
        self.doc.save(out)
        with open_tfrecord(out) as back:
            assert len(back) == len(records)
            assert [back[i] for i in range(len(back))] == records


@pytest.fixture
def s(tmp_path):
    session = Session(tmp_path)
    yield session
    session.source.close()


# -- ReplaceRecords -------------------------------------------------------------

def test_replace_records_changes_only_the_given_rows_and_undo_restores_the_file(s):
    bird, fish = labelled(1, "bird"), labelled(4, "fish")
    told = s.push(ReplaceRecords(s.target, {4: fish, 1: bird}, "Set label on 2 records"))

    expected = [R[0], bird, R[2], R[3], fish, R[5]]
    s.assert_holds(expected)
    assert [s.doc.is_modified(i) for i in range(6)] == [False, True, False, False, True, False]
    assert told == [DocumentChange((1, 4), (1, 4))]
    assert s.stack.count() == 1 and s.stack.undoText() == "Set label on 2 records"

    assert s.undo() == [DocumentChange((1, 4), (1, 4))]
    s.assert_original()
    assert s.redo() == [DocumentChange((1, 4), (1, 4))]
    s.assert_holds(expected)


def test_replace_records_keeps_its_own_copy_of_the_changes(s):
    changes = {2: labelled(2, "owl")}
    command = ReplaceRecords(s.target, changes, "Set label")
    changes[2] = labelled(2, "not this")
    changes[3] = labelled(3, "nor this")
    s.push(command)
    assert list(s.doc) == [R[0], R[1], labelled(2, "owl"), R[3], R[4], R[5]]


def test_replace_records_does_not_merge_two_edits_of_one_record(s):
    s.push(ReplaceRecords(s.target, {0: labelled(0, "a")}, "first"))
    second = ReplaceRecords(s.target, {0: labelled(0, "b")}, "second")
    s.push(second)
    assert second.id() == -1 and s.stack.count() == 2
    assert s.doc.data(0) == labelled(0, "b")
    s.undo()
    assert s.doc.data(0) == labelled(0, "a") and s.stack.undoText() == "first"
    s.undo()
    s.assert_original()


def test_first_redo_applies_the_edit_and_later_ones_restore_the_snapshot(s):
    applied = []

    class CountingReplace(ReplaceRecords):
        def apply(self, document):
            applied.append(len(document))
            return super().apply(document)

    s.push(CountingReplace(s.target, {5: labelled(5, "eel")}, "Set label"))
    for _ in range(3):
        s.undo()
        s.redo()
    assert applied == [6]
    assert list(s.doc) == R[:5] + [labelled(5, "eel")]


# -- DeleteRecords --------------------------------------------------------------

def test_delete_records_removes_the_rows_and_undo_puts_them_back_in_place(s):
    command = DeleteRecords(s.target, [4, 1, 1, 2])
    assert command.rows == (1, 2, 4) and command.text() == "Delete 3 records"

    assert s.push(command) == [DocumentChange(None, (1,))]
    s.assert_holds([R[0], R[3], R[5]])
    assert [s.doc.origin(i) for i in range(3)] == [0, 3, 5]  # what is left still comes from the file

    assert s.undo() == [DocumentChange(None, (1, 2, 4))]
    s.assert_original()
    assert s.redo() == [DocumentChange(None, (1,))]
    s.assert_holds([R[0], R[3], R[5]])


def test_delete_at_the_end_selects_the_new_last_row_and_deleting_all_selects_none(s):
    assert s.push(DeleteRecords(s.target, [4, 5])) == [DocumentChange(None, (3,))]
    assert ids(s.doc) == [0, 1, 2, 3]

    command = DeleteRecords(s.target, range(4))
    assert command.text() == "Delete 4 records"
    assert s.push(command) == [DocumentChange(None, ())]
    assert len(s.doc) == 0 and list(s.doc) == []
    assert s.saved_bytes() == b""

    assert s.undo() == [DocumentChange(None, (0, 1, 2, 3))]
    assert ids(s.doc) == [0, 1, 2, 3]
    s.undo()
    s.assert_original()


def test_delete_one_record_is_named_in_the_singular(s):
    command = DeleteRecords(s.target, [3])
    assert command.text() == "Delete 1 record"
    s.push(command)
    assert ids(s.doc) == [0, 1, 2, 4, 5]


# -- DuplicateRecords -----------------------------------------------------------

def test_duplicate_records_puts_a_copy_after_each_run(s):
    command = DuplicateRecords(s.target, [4, 2, 1])
    assert command.text() == "Duplicate 3 records"

    assert s.push(command) == [DocumentChange(None, (3, 4, 7))]
    expected = [R[0], R[1], R[2], R[1], R[2], R[3], R[4], R[4], R[5]]
    s.assert_holds(expected)
    # the copies are pieces of the file, not new bytes: saving still copies them verbatim
    assert [s.doc.origin(i) for i in range(9)] == [0, 1, 2, 1, 2, 3, 4, 4, 5]

    assert s.undo() == [DocumentChange(None, (1, 2, 4))]
    s.assert_original()
    assert s.redo() == [DocumentChange(None, (3, 4, 7))]
    s.assert_holds(expected)


# -- InsertRecords --------------------------------------------------------------

def test_insert_records_adds_new_records_at_a_row(s):
    new = [labelled(10, "yak"), labelled(11, "gnu")]
    command = InsertRecords(s.target, 2, new)
    assert command.text() == "Insert 2 records"

    assert s.push(command) == [DocumentChange(None, (2, 3))]
    expected = R[:2] + new + R[2:]
    s.assert_holds(expected)
    assert [s.doc.origin(i) for i in range(8)] == [0, 1, None, None, 2, 3, 4, 5]

    assert s.undo() == [DocumentChange(None, (2,))]
    s.assert_original()
    assert s.redo() == [DocumentChange(None, (2, 3))]
    s.assert_holds(expected)


def test_insert_records_copies_its_records_and_keeps_a_given_text(s):
    record = bytearray(labelled(12, "elk"))
    command = InsertRecords(s.target, 6, [record], "Insert an empty Example")
    record[:] = b"changed afterwards"
    assert command.text() == "Insert an empty Example"

    assert s.push(command) == [DocumentChange(None, (6,))]
    s.assert_holds(R + [labelled(12, "elk")])
    assert s.undo() == [DocumentChange(None, (5,))]  # appended: undo selects the last row left
    s.assert_original()


def test_undoing_an_insert_into_an_empty_document_selects_nothing(s):
    s.push(DeleteRecords(s.target, range(6)))
    assert s.push(InsertRecords(s.target, 0, [labelled(7, "ant")])) == [DocumentChange(None, (0,))]
    assert list(s.doc) == [labelled(7, "ant")]
    assert s.undo() == [DocumentChange(None, ())]
    assert len(s.doc) == 0


# -- MoveRecords ----------------------------------------------------------------

def test_move_records_up_moves_a_run_one_place(s):
    command = MoveRecords(s.target, [3, 2], -1)
    assert command.text() == "Move 2 records up"

    assert s.push(command) == [DocumentChange((1, 2, 3, 4), (1, 2))]
    s.assert_holds([R[0], R[2], R[3], R[1], R[4], R[5]])

    assert s.undo() == [DocumentChange((1, 2, 3, 4), (2, 3))]
    s.assert_original()
    s.redo()
    assert ids(s.doc) == [0, 2, 3, 1, 4, 5]


def test_move_records_down_moves_each_run_past_its_neighbour(s):
    command = MoveRecords(s.target, [0, 3], 1)
    assert command.text() == "Move 2 records down"

    assert s.push(command) == [DocumentChange((0, 1, 2, 3, 4), (1, 4))]
    s.assert_holds([R[1], R[0], R[2], R[4], R[3], R[5]])
    s.undo()
    s.assert_original()


def test_move_leaves_a_run_at_the_edge_and_moves_the_others(s):
    assert s.push(MoveRecords(s.target, [0, 1, 4], -1)) == [DocumentChange((0, 1, 2, 3, 4, 5), (0, 1, 3))]
    assert ids(s.doc) == [0, 1, 2, 4, 3, 5]
    s.undo()

    assert s.push(MoveRecords(s.target, [1, 5], 1)) == [DocumentChange((0, 1, 2, 3, 4, 5), (2, 5))]
    assert ids(s.doc) == [0, 2, 1, 3, 4, 5]
    s.undo()
    s.assert_original()


def test_move_goes_one_place_whatever_the_step(s):
    command = MoveRecords(s.target, [4], -3)
    assert command.step == -1 and command.text() == "Move 1 record up"
    s.push(command)
    assert ids(s.doc) == [0, 1, 2, 4, 3, 5]
    s.push(MoveRecords(s.target, [0], 7))
    assert ids(s.doc) == [1, 0, 2, 4, 3, 5]


@pytest.mark.parametrize(("rows", "step", "possible"), [
    ([], -1, False),
    ([], 1, False),
    ([0], -1, False),
    ([0, 1, 2], -1, False),
    ([0, 2], -1, True),
    ([1], -1, True),
    ([5], 1, False),
    ([4, 5], 1, False),
    ([3, 5], 1, True),
    ([0], 1, True),
    ([0, 1, 2, 3, 4, 5], 1, False),
])
def test_can_move_is_false_only_when_every_row_is_at_the_edge(rows, step, possible):
    assert MoveRecords.can_move(rows, step, 6) is possible


# -- the stack: macros, clean state, branches -------------------------------------

def test_a_macro_of_several_commands_undoes_and_redoes_as_one(s):
    s.stack.beginMacro("Tidy the labels")
    s.stack.push(ReplaceRecords(s.target, {0: labelled(0, "cow")}, "Set label"))
    s.stack.push(DeleteRecords(s.target, [2, 3]))
    s.stack.push(InsertRecords(s.target, 1, [labelled(9, "pig")]))
    s.stack.push(MoveRecords(s.target, [4], -1))
    s.stack.endMacro()

    expected = [labelled(0, "cow"), labelled(9, "pig"), R[1], R[5], R[4]]
    s.assert_holds(expected)
    assert s.stack.count() == 1 and s.stack.undoText() == "Tidy the labels"

    s.undo()
    s.assert_original()
    assert not s.stack.canUndo() and s.stack.isClean()
    s.redo()
    s.assert_holds(expected)
    assert not s.stack.canRedo()


def test_clean_state_follows_the_save_point_not_the_document(s):
    assert s.stack.isClean()
    s.push(ReplaceRecords(s.target, {3: labelled(3, "bat")}, "Set label"))
    assert not s.stack.isClean()
    s.stack.setClean()  # saved here
    s.push(DeleteRecords(s.target, [0]))
    assert not s.stack.isClean()

    s.undo()
    assert s.stack.isClean() and ids(s.doc) == [0, 1, 2, 3, 4, 5] and s.doc.data(3) == labelled(3, "bat")
    assert s.doc.modified  # the document still differs from the file it was opened over
    s.undo()
    s.assert_original()
    assert not s.stack.isClean()  # back past the save point: unsaved relative to what was written
    s.redo()
    assert s.stack.isClean()


def test_pushing_after_an_undo_drops_the_undone_edit(s):
    s.push(ReplaceRecords(s.target, {1: labelled(1, "ape")}, "A"))
    s.push(DeleteRecords(s.target, [5]))
    s.undo()
    s.push(InsertRecords(s.target, 0, [labelled(8, "cod")], "C"))
    assert s.stack.count() == 2 and s.stack.undoText() == "C"
    after_c = [labelled(8, "cod"), R[0], labelled(1, "ape"), R[2], R[3], R[4], R[5]]
    s.assert_holds(after_c)

    s.undo()
    s.undo()
    s.assert_original()
    s.redo()
    s.redo()
    s.assert_holds(after_c)


def test_every_step_of_a_long_history_comes_back_exactly(s):
    commands = [
        ReplaceRecords(s.target, {2: labelled(2, "hen"), 5: labelled(5, "rat")}, "Set label"),
        DuplicateRecords(s.target, [0, 1]),
        MoveRecords(s.target, [2, 3], 1),
        InsertRecords(s.target, 3, [labelled(20, "emu"), labelled(21, "koi")]),
        DeleteRecords(s.target, [0, 4, 7]),
        MoveRecords(s.target, [0], 1),
        ReplaceRecords(s.target, {0: labelled(99, "fox")}, "Set label"),
    ]
    states = [(list(s.doc), s.doc.snapshot())]
    for command in commands:
        s.push(command)
        states.append((list(s.doc), s.doc.snapshot()))
    assert len({tuple(records) for records, _ in states}) == len(states)  # every step changed something
    assert ids(s.doc) == [99, 1, 20, 0, 1, 4, 5]

    for k in range(len(commands) - 1, -1, -1):
        s.undo()
        assert (list(s.doc), s.doc.snapshot()) == states[k]
    s.assert_original()
    for k in range(1, len(commands) + 1):
        s.redo()
        assert (list(s.doc), s.doc.snapshot()) == states[k]
    s.assert_holds(states[-1][0])


@pytest.mark.parametrize("make", [lambda t: DeleteRecords(t, []), lambda t: DuplicateRecords(t, []),
                                  lambda t: MoveRecords(t, [], 1)])
def test_a_command_over_no_rows_is_refused_before_it_reaches_the_stack(s, make):
    with pytest.raises(UsageError, match="no records to edit"):
        make(s.target)
    assert s.stack.count() == 0
    s.assert_original()
