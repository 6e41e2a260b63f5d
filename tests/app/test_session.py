"""A tab's session without any widget: what it shows (``records``), its passes, its document and its signals."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtCore")

from app.models.commands import DeleteRecords, DocumentChange, ReplaceRecords
from app.shell.session import PassProgress, TabSession
from app.shell.shard_set_tab import ShardSetSession
from codec.editing.edited import EditedFile
from codec.editing.record_editor import empty_example
from codec.format.framing import RecordStatus
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.builders import example

pytestmark = pytest.mark.gui
TIMEOUT = 10000




RECORDS = [example(id=i, deterministic=True) for i in range(5)]


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "five.tfrecord"
    write_records(p, RECORDS)
    return str(p)


@pytest.fixture
def session(path, qtbot):
    s = TabSession(TFRecordFile(path), auto_verify=True)
    yield s
    s.close()
    s.close_source()


def indexed(qtbot, s: TabSession) -> TabSession:
    """Run the session's passes to their end, as a tab does when it opens."""
    with qtbot.waitSignal(s.finished, timeout=TIMEOUT):
        s.start()
    return s


def test_the_passes_add_rows_then_end_and_the_records_shown_are_the_file(qtbot, session):
    progress: list[PassProgress] = []
    session.rows_added.connect(progress.append)
    with qtbot.waitSignals([session.pass_started, session.pass_finished, session.finished], timeout=TIMEOUT,
                           order="strict"):
        session.start()
    assert session.phase == "done" and not session.is_running() and session.fraction == 1.0
    assert progress and progress[0].phase == "index" and {p.phase for p in progress} <= {"index", "verify"}
    assert progress[-1].progress.records == 5
    assert session.records is session.source and session.source.indexed and session.source.verified
    assert session.records.read(3).data == RECORDS[3]
    assert session.target is None and session.document is None and session.edited is None


def test_start_editing_shows_the_edited_view_and_says_so(qtbot, session):
    indexed(qtbot, session)
    file = session.source
    with qtbot.waitSignal(session.source_changed, timeout=TIMEOUT):
        assert session.start_editing()
    assert isinstance(session.records, EditedFile) and session.records is session.edited
    assert session.edited.source is file and session.document is session.target.document
    assert session.records.read(2).data == RECORDS[2]
    pinned = session.records.pinned(2)
    assert pinned.read(2).data == RECORDS[2] and not pinned.unsaved
    assert session.start_editing()  # already on: nothing changes
    assert session.records is session.edited


def test_editing_waits_for_the_whole_index_and_is_refused_when_blocked(qtbot, path):
    s = TabSession(TFRecordFile(path))
    try:
        assert not s.start_editing() and s.records is s.source  # not indexed yet
        indexed(qtbot, s)
        assert s.start_editing()
    finally:
        s.close()
        s.close_source()
    blocked = TabSession(TFRecordFile(path), edit_block="read-only here")
    try:
        indexed(qtbot, blocked)
        assert not blocked.start_editing() and blocked.records is blocked.source
    finally:
        blocked.close()
        blocked.close_source()


def test_an_edit_changes_the_records_and_announces_what_changed(qtbot, session):
    indexed(qtbot, session)
    session.start_editing()
    changes: list[DocumentChange] = []
    session.records_changed.connect(changes.append)
    with qtbot.waitSignals([session.records_changed, session.state_changed], timeout=TIMEOUT, order="strict"):
        session.stack.push(ReplaceRecords(session.target, {1: empty_example()}, "Clear record 1"))
    assert changes == [DocumentChange((1,), (1,))]
    assert session.records.read(1).data == empty_example() and session.modified
    assert session.records.pinned(1).unsaved  # not in the file yet: framed on its own
    with qtbot.waitSignal(session.records_changed, timeout=TIMEOUT) as undone:
        session.stack.undo()
    assert undone.args[0].rows == (1,) and session.records.read(1).data == RECORDS[1]
    assert not session.modified


def test_discard_and_stop_editing_show_the_file_again(qtbot, session):
    indexed(qtbot, session)
    session.start_editing()
    session.stack.push(DeleteRecords(session.target, [0, 1]))
    assert len(session.records) == 3
    with qtbot.waitSignal(session.records_changed, timeout=TIMEOUT) as discarded:
        session.discard(select=2)
    assert discarded.args[0] == DocumentChange(None, (2,))
    assert len(session.records) == 5 and not session.modified and session.stack.count() == 0
    with qtbot.waitSignal(session.source_changed, timeout=TIMEOUT):
        session.stop_editing()
    assert session.records is session.source and session.target is None


def test_reopen_drops_the_document_and_indexes_the_new_file(qtbot, session, tmp_path):
    indexed(qtbot, session)
    session.start_editing()
    session.stack.push(DeleteRecords(session.target, [0]))
    other = tmp_path / "two.tfrecord"
    write_records(other, RECORDS[:2])
    old = session.source
    with qtbot.waitSignals([session.about_to_reopen, session.source_changed, session.reopened],
                           timeout=TIMEOUT, order="strict"):
        session.reopen(str(other))
    assert session.source is not old and not old.is_open
    assert session.records is session.source and session.target is None and session.stack.count() == 0
    qtbot.waitUntil(lambda: session.phase == "done" and not session.is_running(), timeout=TIMEOUT)
    assert len(session.records) == 2


def test_reopen_of_a_missing_file_changes_nothing(qtbot, session, tmp_path):
    indexed(qtbot, session)
    session.start_editing()
    edited = session.records
    with pytest.raises(OSError):
        session.reopen(str(tmp_path / "missing.tfrecord"))
    assert session.records is edited


def test_a_verify_pass_reports_the_damage_it_finds(qtbot, tmp_path):
    p = tmp_path / "damaged.tfrecord"
    write_records(p, RECORDS)
    data = bytearray(p.read_bytes())
    data[12 + 3] ^= 0xFF  # a byte of record 0's data: its data CRC fails
    p.write_bytes(bytes(data))
    s = TabSession(TFRecordFile(str(p)))
    try:
        indexed(qtbot, s)
        assert s.records.index.status(0) is not RecordStatus.DATA_CRC  # the index pass reads no data
        with qtbot.waitSignals([s.problems_changed, s.finished], timeout=TIMEOUT, order="strict"):
            assert s.verify()
        assert s.records.index.status(0) is RecordStatus.DATA_CRC and s.records.problem_count() == 1
    finally:
        s.close()
        s.close_source()


def test_a_shard_set_session_numbers_its_shards_as_the_table_publishes_them(qtbot, tmp_path):
    for k in range(2):
        write_records(tmp_path / f"part-{k}.tfrecord", RECORDS)
    s = ShardSetSession(ShardSet.from_args([str(tmp_path)]), edit_block="a set")
    try:
        indexed(qtbot, s)
        assert len(s.records) == 0 and s.source.indexed_shards == 0  # nothing published yet
        assert s.source.publish() == [(0, 5), (5, 5)]
        assert s.source.indexed_shards == 2 and len(s.records) == 10 and s.records.pinned(7).read(7).data == RECORDS[2]
        assert not s.start_editing()
    finally:
        s.close()
        s.close_source()
