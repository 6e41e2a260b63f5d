"""Message bars: an error goes away once the user does something that works, and a file that
changes on disk while it is read gets the tab's bar (with Reload), never a traceback."""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from app.dialogs import edit_dialogs
from app.models.settings import Settings
from app.shell.main_window import MainWindow
from codec.storage.writer import write_records
from tests.builders import FIXTURES

pytestmark = pytest.mark.gui

TIMEOUT = 20000
NOT_AN_INTEGER = "'abc' is not an integer"


@pytest.fixture
def window(qtbot) -> MainWindow:
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.resize(1200, 780)
    w.show()
    yield w
    for tab in w.file_tabs():
        tab.editing.wait()


def open_editable(window: MainWindow, qtbot, path: str):
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    return tab


def value_index(tab, key: str):
    """The value cell of single-valued feature ``key`` in the detail tree."""
    model = tab.detail.tree_model
    root = model.root_index()
    tab.detail.tree.expand(root)
    return next(model.index(r, 2, root) for r in range(model.rowCount(root)) if model.index(r, 0, root).data() == key)


def type_value(qtbot, tab, key: str, text: str) -> None:
    """F2 on the feature's value, type ``text``, Enter: what a user does to edit it in place."""
    tree = tab.detail.tree
    tree.setCurrentIndex(value_index(tab, key))
    tree.setFocus()
    qtbot.waitUntil(tree.hasFocus, timeout=2000)
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    editors = [e for e in tree.findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1, "F2 opened no editor"
    editors[0].setText(text)
    qtbot.keyClick(editors[0], Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: tree.state() != tree.State.EditingState, timeout=2000)  # the delegate commits queued


def show(qtbot, tab, row: int) -> None:
    if tab.current_record() != row or tab.detail.loaded() is None:
        with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
            tab.select_record(row)


def error_shown(window: MainWindow) -> bool:
    return NOT_AN_INTEGER in window.message_bar.text() or NOT_AN_INTEGER in window.statusBar().currentMessage()


def test_an_error_goes_away_after_the_next_edit_add_and_save(window, qtbot, tmp_path, monkeypatch):
    path = tmp_path / "structured.tfrecord"
    shutil.copy(FIXTURES / "structured.tfrecord", path)
    tab = open_editable(window, qtbot, str(path))
    show(qtbot, tab, 2)

    type_value(qtbot, tab, "int_col", "abc")
    assert NOT_AN_INTEGER in window.message_bar.text()
    assert NOT_AN_INTEGER in window.statusBar().currentMessage()
    assert tab.editing.stack.count() == 0
    # a successful edit
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        type_value(qtbot, tab, "int_col", "5")
    assert tab.editing.stack.count() == 1 and not error_shown(window)

    # Add Feature
    type_value(qtbot, tab, "int_col", "abc")
    assert error_shown(window)
    monkeypatch.setattr(edit_dialogs, "ask_new_feature", lambda parent, scope: ("note", "bytes", [b"x"]))
    window.edit_actions.add_feature_action.trigger()
    assert tab.editing.stack.count() == 2 and not error_shown(window)

    # Save As
    type_value(qtbot, tab, "int_col", "abc")
    assert error_shown(window)
    target = str(tmp_path / "saved.tfrecord")
    monkeypatch.setattr(edit_dialogs, "ask_save_as", lambda parent, p, c: (target, "none"))
    window.edit_actions.save_as_action.trigger()
    qtbot.waitUntil(lambda: tab.path == target and tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    assert not error_shown(window) and window.message_bar.isHidden()


def test_an_error_that_still_holds_stays(window, qtbot, tmp_path):
    """Only something that worked clears it: another failed edit shows its own message."""
    path = tmp_path / "structured.tfrecord"
    shutil.copy(FIXTURES / "structured.tfrecord", path)
    tab = open_editable(window, qtbot, str(path))
    show(qtbot, tab, 1)
    type_value(qtbot, tab, "int_col", "abc")
    type_value(qtbot, tab, "float_col", "x")
    assert "not a number" in window.message_bar.text() or "float" in window.message_bar.text()
    assert tab.editing.stack.count() == 0


# -- a file that changes while it is read ---------------------------------------------------
def test_a_file_cut_short_while_open_shows_the_tab_bar_and_reopens(window, qtbot, tmp_path):
    path = str(tmp_path / "changing.tfrecord")
    write_records(path, (b"record %05d " % i + bytes(200) for i in range(2000)))
    tab = window.open_file(path)
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=TIMEOUT)
    assert tab.model.rowCount() == 2000 and tab.change_bar.isHidden()
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2 + 100)  # in the middle of a record
    tab.select_record(1500)  # past the new end: the detail (and the table's rows) read it
    qtbot.waitUntil(lambda: "changed while reading" in tab.change_bar.text(), timeout=TIMEOUT)
    assert "reload it" in tab.change_bar.text() and "cannot read" in tab.detail.header_text()
    assert window.message_bar.isHidden()  # the tab's own bar: other tabs are not concerned

    tab.change_bar.action_button.click()  # Reload
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=TIMEOUT)
    assert tab.change_bar.isHidden(), tab.change_bar.text()
    assert 0 < tab.model.rowCount() < 2000
    assert tab.state().problems == 1  # the record cut in two is truncated now
