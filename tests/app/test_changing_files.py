"""An open file that another program replaces, deletes, grows or rewrites: the tab's bar says so
(Reload · Keep mine, Follow for a grown file), and Save over it asks and never writes silently."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QMessageBox

from app.dialogs import edit_dialogs
from codec.format.framing import encode_record
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records

pytestmark = pytest.mark.gui

TIMEOUT = 20000


def records(n: int, tag: bytes = b"ours") -> list[bytes]:
    return [tag + b" record %03d " % i + bytes(64) for i in range(n)]


def read_all(path) -> list[bytes]:
    with open_tfrecord(path) as f:
        return list(f)


@pytest.fixture
def opened(window, qtbot, tmp_path):
    """A 100-record file open in the window (tests/conftest.py's), indexed and editable."""
    path = str(tmp_path / "data.tfrecord")
    write_records(path, records(100))
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    yield path, tab
    tab.editing.wait()


def replace_with(path: str, n: int) -> bytes:
    """Another program writes its own file and renames it over ours (n records)."""
    write_records(path, records(n, b"theirs"))
    with open(path, "rb") as f:
        return f.read()


def delete_first(window, tab) -> None:
    tab.select_record(0)
    window.edit_actions.delete_action.trigger()
    assert tab.editing.modified and tab.model.rowCount() == 99


def bar_buttons(tab) -> tuple[bool, bool, bool]:
    """(Follow, Reload, Keep mine) shown."""
    return (tab.disk.follow_button.isVisibleTo(tab), tab.change_bar.action_button.isVisibleTo(tab),
            tab.disk.keep_button.isVisibleTo(tab))


def test_a_replaced_file_shows_the_bar_and_reload_shows_the_new_records(window, qtbot, opened):
    path, tab = opened
    tab.select_record(57)
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT) as changed:
        replace_with(path, 70)
    assert changed.args == ["replaced"]
    assert tab.change_bar.text().startswith("Changed on disk: data.tfrecord was replaced by another file")
    assert bar_buttons(tab) == (False, True, True)
    assert tab.model.rowCount() == 100  # the tab still shows the file it opened

    tab.change_bar.action_button.click()  # Reload
    qtbot.waitUntil(lambda: not tab.is_running() and tab.model.rowCount() == 70, timeout=TIMEOUT)
    assert tab.change_bar.isHidden()
    assert tab.current_record() == 57  # the same record number, where the new file has it
    assert tab.session.records.read(57).data == records(70, b"theirs")[57]


def test_a_deleted_file_shows_the_bar_and_keep_mine_hides_it(window, qtbot, opened):
    path, tab = opened
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT) as changed:
        os.unlink(path)
    assert changed.args == ["deleted"]
    assert tab.change_bar.text() == "Deleted on disk: data.tfrecord was deleted since it was opened."
    assert bar_buttons(tab) == (False, False, True)  # nothing to reload

    tab.disk.keep_button.click()
    assert tab.change_bar.isHidden()
    window.disk_watch.check_all()  # the same state again: no bar
    assert tab.change_bar.isHidden()
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT) as changed:  # it comes back: another change
        replace_with(path, 3)
    assert changed.args == ["replaced"] and not tab.change_bar.isHidden()


def test_a_grown_file_offers_follow(window, qtbot, opened):
    path, tab = opened
    more = b"".join(encode_record(r) for r in records(5, b"more"))
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT) as changed:
        with open(path, "ab") as f:
            f.write(more)
    assert changed.args == ["grew"]
    assert tab.change_bar.text() == f"Grew on disk ({len(more):,} bytes more): data.tfrecord."
    assert bar_buttons(tab) == (True, True, True)
    with qtbot.waitSignal(tab.follow_requested, timeout=TIMEOUT):
        tab.disk.follow_button.click()


def test_a_rewrite_with_the_same_size_and_mtime_is_seen_when_the_window_is_active_again(window, qtbot, opened):
    """A change the watcher missed (a network drive): the check when the application is active again."""
    path, tab = opened
    window.disk_watch.watcher.blockSignals(True)
    st = os.stat(path)
    theirs = b"".join(encode_record(r) for r in records(100, b"cp-p"))
    assert len(theirs) == st.st_size
    with open(path, "r+b") as f:  # what cp -p does over an existing file
        f.write(theirs)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    window.disk_watch.watcher.blockSignals(False)
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT) as changed:
        QGuiApplication.instance().applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)
    assert changed.args == ["changed"] and "rewritten in place" in tab.change_bar.text()


def test_save_over_a_replaced_file_asks_and_cancel_leaves_it_byte_identical(window, qtbot, opened, monkeypatch):
    path, tab = opened
    delete_first(window, tab)
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT):
        theirs = replace_with(path, 40)
    asked = []
    monkeypatch.setattr(edit_dialogs, "ask_save_over_changed",
                        lambda parent, name, why: asked.append((name, why)) or "cancel")
    assert window.edit_actions.save_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)  # Ctrl+S
    window.edit_actions.save_action.trigger()
    assert asked == [("data.tfrecord", f"{path} was replaced by another file since it was opened "
                                       f"({len(theirs):,} bytes, was {100 * (16 + 80):,})")]
    assert not tab.editing.busy and tab.editing.modified
    with open(path, "rb") as f:
        assert f.read() == theirs
    assert "not saved" in window.statusBar().currentMessage()

    monkeypatch.setattr(edit_dialogs, "ask_save_over_changed", lambda parent, name, why: "overwrite")
    window.edit_actions.save_action.trigger()
    # saved, then the saved file reopened and indexed (its rows come with the pass, not before it starts)
    qtbot.waitUntil(lambda: not tab.editing.busy and not tab.editing.modified and not tab.is_running()
                    and tab.model.rowCount() == 99, timeout=TIMEOUT)
    assert read_all(path) == records(100)[1:]  # ours, from the file the tab opened
    assert tab.change_bar.isHidden()
    window.disk_watch.check_all()  # our own save is not a change on disk
    assert tab.change_bar.isHidden()


def test_save_over_a_deleted_file_can_go_elsewhere(window, qtbot, opened, monkeypatch, tmp_path):
    path, tab = opened
    delete_first(window, tab)
    os.unlink(path)
    monkeypatch.setattr(edit_dialogs, "ask_save_over_changed", lambda parent, name, why: "save_as")
    other = str(tmp_path / "mine.tfrecord")
    monkeypatch.setattr(edit_dialogs, "ask_save_as", lambda parent, p, c: (other, "none"))
    window.edit_actions.save_action.trigger()
    qtbot.waitUntil(lambda: tab.path == other and not tab.editing.busy and not tab.is_running(), timeout=TIMEOUT)
    assert read_all(other) == records(100)[1:] and not os.path.exists(path)


def test_reload_with_unsaved_edits_asks_first(window, qtbot, opened, monkeypatch):
    path, tab = opened
    delete_first(window, tab)
    with qtbot.waitSignal(tab.disk_changed, timeout=TIMEOUT):
        replace_with(path, 40)
    assert "unsaved edits are kept" in tab.change_bar.text()
    answers = [False]
    monkeypatch.setattr(edit_dialogs, "ask_reload_unsaved", lambda parent, name: answers.pop(0))
    tab.change_bar.action_button.click()
    assert tab.editing.modified and tab.model.rowCount() == 99 and not tab.change_bar.isHidden()
    answers.append(True)
    tab.change_bar.action_button.click()
    qtbot.waitUntil(lambda: not tab.is_running() and tab.model.rowCount() == 40, timeout=TIMEOUT)
    assert not tab.editing.modified and tab.change_bar.isHidden()


@pytest.mark.parametrize("press, answer", [("Overwrite", "overwrite"), ("Save As…", "save_as"), ("Cancel", "cancel")])
def test_the_save_over_a_changed_file_question_answers_what_was_pressed(qtbot, press, answer):
    def press_button():
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox) and "changed on disk" in box.text()
        next(b for b in box.buttons() if b.text() == press).click()

    QTimer.singleShot(0, press_button)
    assert edit_dialogs.ask_save_over_changed(None, "data.tfrecord", "it was deleted since it was opened") == answer
