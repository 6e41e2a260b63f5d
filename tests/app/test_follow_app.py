"""View > Follow through the real main window: rows come as the file is written."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.models.record_table_model import STATUS_ROLE, Column
from codec.format.framing import HEADER_SIZE, RecordStatus, encode_record
from tests.builders import example
from tests.gui_helpers import open_done

pytestmark = pytest.mark.gui


def record(i: int) -> bytes:
    return encode_record(example(id=i))


def status_cell(tab, row: int) -> str:
    return tab.model.index(row, Column.STATUS).data()


def test_follow_adds_rows_keeps_the_selection_and_shows_the_record_being_written(window, qtbot, tmp_path):
    path = tmp_path / "growing.tfrecord"
    path.write_bytes(b"".join(record(i) for i in range(5)))
    tab = open_done(window, qtbot, str(path))
    assert tab.model.rowCount() == 5 and window.follow_action.isEnabled()
    tab.select_record(2)

    window.follow_action.trigger()
    assert window.follow_action.isChecked() and tab.follow.active
    more = b"".join(record(i) for i in range(5, 12))
    unfinished = record(12)[:HEADER_SIZE + 4]  # the 13th record: its header and a few bytes of its data
    with open(path, "ab") as f:
        f.write(more + unfinished)
    qtbot.waitUntil(lambda: tab.model.rowCount() == 13, timeout=10000)
    assert tab.current_record() == 2  # the selection stayed where it was
    assert status_cell(tab, 12) == "being written"
    assert tab.model.index(12, 0).data(STATUS_ROLE) is RecordStatus.WRITING
    assert [status_cell(tab, r) for r in range(12)] == ["ok"] * 12
    assert tab.session.source.problems == [] and tab.model.flagged_rows().size == 0
    assert window.records_label.text() == "following · 12 records · 1 being written"

    with open(path, "ab") as f:
        f.write(record(12)[HEADER_SIZE + 4:])
    qtbot.waitUntil(lambda: status_cell(tab, 12) == "ok", timeout=10000)
    assert tab.model.rowCount() == 13 and tab.current_record() == 2
    qtbot.waitUntil(lambda: window.records_label.text() == "following · 13 records", timeout=10000)

    with qtbot.waitSignal(tab.follow.changed, timeout=10000):
        window.follow_action.trigger()  # off: polling stops, editing comes back
    assert not tab.follow.active and not tab.follow.timer.isActive() and not window.follow_action.isChecked()
    assert tab.session.edited is not None


def test_follow_is_offered_only_where_it_makes_sense(window, qtbot, tmp_path, fixture_file):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(record(0) + record(1))
    tab = open_done(window, qtbot, str(path))
    assert window.follow_action.isEnabled()
    tab.select_record(0)
    assert tab.editing.edits.delete_selected()  # an unsaved edit: following would lose it
    assert tab.session.modified and not window.follow_action.isEnabled()
    with qtbot.waitSignal(tab.message, check_params_cb=lambda text: "unsaved edits" in text):
        assert not tab.start_follow()
    shards = window.open_set([fixture_file("shards/train-00000-of-00004.tfrecord"),
                              fixture_file("shards/train-00001-of-00004.tfrecord")])
    qtbot.waitUntil(lambda: not shards.is_running(), timeout=30000)
    assert window.current_tab() is shards and not window.follow_action.isEnabled()


def test_a_followed_file_that_is_replaced_stops_following_with_a_message(window, qtbot, tmp_path):
    import os

    path = tmp_path / "f.tfrecord"
    path.write_bytes(record(0) + record(1))
    tab = open_done(window, qtbot, str(path))
    window.follow_action.trigger()
    other = tmp_path / "other"
    other.write_bytes(record(5) * 4)
    with qtbot.waitSignal(tab.message, timeout=10000, check_params_cb=lambda text: "stopped following" in text):
        os.replace(other, path)
    qtbot.waitUntil(lambda: not tab.follow.active, timeout=10000)
    assert not window.follow_action.isChecked() and tab.model.rowCount() == 2
    qtbot.waitUntil(tab.change_bar.isVisible, timeout=10000)  # it offers to open the file as it is now


def test_reopening_the_file_ends_following_quietly(window, qtbot, tmp_path):
    path = tmp_path / "f.tfrecord"
    path.write_bytes(record(0) + record(1))
    tab = open_done(window, qtbot, str(path))
    window.follow_action.trigger()
    assert tab.follow.active
    with qtbot.waitSignal(tab.follow.changed, timeout=10000, check_params_cb=lambda on: on is False):
        assert tab.reopen_changed()
    assert not tab.follow.timer.isActive() and not tab.session.source.following
    qtbot.waitUntil(lambda: tab.model.rowCount() == 2 and not window.follow_action.isChecked(), timeout=10000)
