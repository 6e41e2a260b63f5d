"""Plain words through the real window: damage in the status bar, disabled actions saying why, the Open
dialog's TFRecord filter, and a TFDS folder named by its dataset in Recent."""
from __future__ import annotations

import fnmatch

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.shell.opening import file_filters
from codec.format.names import looks_like_tfrecord_name
from tests.builders import FIXTURES
from tests.gui_helpers import open_done, wait_done

pytestmark = pytest.mark.gui
TFDS = FIXTURES / "payloads" / "tfds" / "lens_tfds_demo" / "1.2.0"


def test_a_damaged_record_is_said_in_words_in_the_status_bar(window, qtbot):
    tab = open_done(window, qtbot, "corrupt_data_crc.tfrecord")
    tab.select_record(4)
    tab.select_record(5)
    message = window.statusBar().currentMessage()
    assert message.startswith("record 5: data CRC: the record's bytes changed after it was written: "
                              "a bad copy or bit rot")
    assert 'tf.data stops with DataLossError ("corrupted record") at record 5, after yielding records 0–4' in message
    assert "data_crc" not in message
    tip = tab.model.index(5, 0).data(3)  # the row's tooltip
    assert tip.startswith("data CRC: data CRC stored 0x") and "data_crc" not in tip


def test_skipped_bytes_are_said_at_the_record_after_them(window, qtbot):
    tab = open_done(window, qtbot, "garbage_middle.tfrecord")
    tab.select_record(10)
    message = window.statusBar().currentMessage()
    assert message.startswith("before record 10: length CRC: a record's header changed")
    assert "at record 10, after yielding records 0–9" in message and "length_crc" not in message


def test_statistics_spec_and_undo_history_need_a_file(window, qtbot):
    actions = (window.qa.stats_action, window.qa.spec_action, window.edit_actions.history_action)
    for action in actions:
        assert not action.isEnabled()
        assert action.toolTip().endswith(": open a file first")
    tab = open_done(window, qtbot, "structured.tfrecord")
    for action in actions:
        assert action.isEnabled() and "open a file first" not in action.toolTip()
    window.qa.stats_action.trigger()
    assert window.qa.stats_dock.isVisible()
    window.close_tab(window.tabs.indexOf(tab))
    assert window.tabs.count() == 0
    assert not any(action.isEnabled() for action in actions)
    assert window.qa.stats_dock.stack.currentWidget() is window.qa.stats_dock.hint  # an open dock says why it is empty


def test_edit_actions_say_why_they_are_off(window, qtbot):
    assert window.edit_actions.save_action.toolTip() == "Save: open a file first"
    tab = wait_done(qtbot, window.open_set([str(FIXTURES / "shards")]))
    tab.select_record(0)
    delete = window.edit_actions.delete_action
    assert not delete.isEnabled()
    assert delete.toolTip().startswith("Delete Records: read-only: a dataset of several shards cannot be edited")
    assert delete.statusTip() == delete.toolTip()


def test_the_open_dialog_shows_tfrecord_files_first():
    filters = file_filters().split(";;")
    assert filters[0].startswith("TFRecord files (") and filters[-1] == "All files (*)"
    globs = filters[0][len("TFRecord files ("):-1].split()
    names = ["a.tfrecord", "a.tfrecords", "a.tfrec", "a.tfr", "train-00003-of-01024", "a.tfrecord.gz",
             "b.tfrecord.zlib", "c.tfrec.zz", "train-00000-of-00004.gzip"]
    for name in names:
        assert looks_like_tfrecord_name(name)
        assert any(fnmatch.fnmatch(name, g) for g in globs), name


def test_recent_shows_a_tfds_folder_by_its_dataset_name(window, qtbot):
    wait_done(qtbot, window.open_set([str(TFDS)]))
    window.recent.fill_menu()
    assert window.recent_menu.actions()[0].text() == "lens_tfds_demo 1.2.0"
    first = window.start_page.recent_list.item(0)
    assert first.text().splitlines()[0] == "lens_tfds_demo 1.2.0 · TFDS dataset"
    assert first.toolTip() == str(TFDS)


def test_window_actions_say_why_they_are_off(window, qtbot):
    assert window.goto_action.toolTip() == "Go to Record…: open a file first"
    tab = wait_done(qtbot, window.open_set([str(FIXTURES / "shards")]))
    goto = window.goto_action
    assert goto.isEnabled() and goto.statusTip() == "Jump to a record number or a byte offset"
    assert goto.toolTip() == "Go to Record (Ctrl+G)\nJump to a record number or a byte offset"  # the toolbar's own
    assert not window.follow_action.isEnabled()
    assert window.follow_action.toolTip() == "Follow: only a single file can be followed, not a set of shards"
    assert not window.cancel_action.isEnabled() and window.cancel_action.toolTip() == "Stop: nothing is running"
    window.close_tab(window.tabs.indexOf(tab))
    assert window.follow_action.toolTip().endswith(": open a file first")
