"""Saving edits: interrupted and cancelled saves, save as, compression kept, the modified mark and prompts."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtWidgets")

from codec.editing.record_editor import empty_example
from codec.format.framing import Compression
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.app.editing.helpers import (
    TIMEOUT,
    answer,
    feature_of,
    open_editable,
    original,
    read_back,
    save,
    select_rows,
    show,
    tree_index,
)

pytestmark = pytest.mark.gui


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


def test_save_as_proposes_a_new_name_beside_the_file(window, qtbot, copy, monkeypatch):
    path = copy("structured.tfrecord")
    tab = open_editable(window, qtbot, path)
    asked = answer(monkeypatch, "ask_save_as", None)
    window.edit_actions.save_as_action.trigger()
    folder = os.path.dirname(path)
    assert asked[0][1] == os.path.join(folder, "structured-edited.tfrecord")  # never the file itself
    Path(folder, "structured-edited.tfrecord").write_bytes(b"")
    window.edit_actions.save_as_action.trigger()
    assert asked[1][1] == os.path.join(folder, "structured-edited-2.tfrecord")
    assert not tab.editing.modified


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




def test_undo_goes_on_after_a_save_and_saving_again_gives_the_original_bytes(window, qtbot, copy):
    path = copy("structured.tfrecord")
    content, before = Path(path).read_bytes(), original(path)
    tab = open_editable(window, qtbot, path)
    select_rows(tab, [4, 5])
    window.edit_actions.delete_action.trigger()
    tab.editing.replace_record(0, empty_example())
    save(qtbot, tab)
    assert read_back(path) == [empty_example()] + before[1:4] + before[6:]
    stack, history = tab.editing.stack, window.edit_actions.history
    assert stack.count() == 2 and stack.isClean() and not window.isWindowModified()
    assert history.row_text(2).endswith(" · saved") and not history.row_text(1).endswith(" · saved")
    window.edit_actions.undo_action.trigger()  # the replace, undone over the saved file
    assert tab.editing.modified and window.tabs.tabText(0).endswith(" *")
    assert tab.editing.document.data(0) == before[0] and len(tab.editing.document) == 98
    window.edit_actions.undo_action.trigger()  # the delete: the records the save left out come back
    assert list(tab.editing.document) == before and history.row_text(2).endswith(" · saved")
    save(qtbot, tab)
    assert Path(path).read_bytes() == content  # byte for byte the file as it was first opened
    assert read_back(path) == before  # every CRC checked, as TensorFlow reads it
    assert stack.isClean() and stack.index() == 0 and history.row_text(0).endswith(" · saved")
    window.edit_actions.redo_action.trigger()
    window.edit_actions.redo_action.trigger()  # and forward again, over the file saved twice
    assert list(tab.editing.document) == [empty_example()] + before[1:4] + before[6:] and tab.editing.modified


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
