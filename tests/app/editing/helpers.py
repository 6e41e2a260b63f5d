"""What the editing tests share: open a file editable, drive the tree and the window's actions, read files back."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from app.dialogs import edit_dialogs
from app.shell.file_tab import FileTab
from app.shell.main_window import MainWindow
from codec.decode.decoder import decode_record, feature_values, record_features
from codec.editing.record_editor import RecordEditor
from codec.sources.tfrecord_file import TFRecordFile

TIMEOUT = 20000


def open_editable(window: MainWindow, qtbot, path: str) -> FileTab:
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    return tab


def show(qtbot, tab: FileTab, row: int) -> None:
    """Make ``row`` current and wait until the detail shows it."""
    if tab.current_record() == row and tab.detail.loaded() is not None:
        return
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(row)


def tree_index(tab: FileTab, *names: str, column: int = 0):
    """The tree row reached by following row names from the record's root."""
    model = tab.detail.tree_model
    index = model.root_index()
    for name in names:
        tab.detail.tree.expand(index)
        rows = [model.index(r, 0, index) for r in range(model.rowCount(index))]
        matches = [i for i in rows if i.data() == name]
        assert matches, f"no row {name!r} under {index.data()!r}: {[i.data() for i in rows]}"
        index = matches[0]
    return index.siblingAtColumn(column)


def values(tab: FileTab, row: int, key: str, scope: str = "features"):
    """(dtype, values) of a feature of document record ``row`` (None when absent)."""
    editor = RecordEditor(tab.editing.document.data(row))
    try:
        return feature_values(editor.feature((scope, key)) if scope != "steps" else editor.feature(key))
    except Exception:  # noqa: BLE001 - absent
        return None


def undo(window: MainWindow) -> None:
    window.edit_actions.undo_action.trigger()


def redo(window: MainWindow) -> None:
    window.edit_actions.redo_action.trigger()


def save(qtbot, tab: FileTab, path: str | None = None, compression: str | None = None) -> None:
    """Save and wait until the saved file is indexed and editable again."""
    done: list[bool] = []
    assert tab.editing.save(path, compression, on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [True], tab.window().message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)


def read_back(path: str) -> list[bytes]:
    """Every record of ``path``, read with the codec after checking every CRC."""
    with TFRecordFile(path, use_cache=False) as f:
        assert f.verify() == []
        return [f.read(i).data for i in range(len(f))]


def original(path: str) -> list[bytes]:
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        return [f.read(i).data for i in range(len(f))]


def feature_of(data: bytes, key: str):
    return feature_values(record_features(decode_record(data))[key])


def answer(monkeypatch, name: str, value) -> list:
    """Make ``edit_dialogs.<name>`` answer ``value`` (recording its arguments)."""
    calls: list = []

    def fake(*args, **kwargs):
        calls.append(args)
        return value

    monkeypatch.setattr(edit_dialogs, name, fake)
    return calls


def press(qtbot, widget, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press where the user would make it: with ``widget`` focused (shortcuts follow focus)."""
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=2000)
    qtbot.keyClick(widget, key, modifiers)


def type_into_editor(qtbot, tab: FileTab, index, text: str) -> None:
    """Open the tree's in-place editor on ``index`` (F2), type ``text``, press Enter."""
    tree = tab.detail.tree
    tree.setCurrentIndex(index)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_F2)
    editors = [e for e in tree.findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1, "F2 opened no editor"
    editors[0].setText(text)
    qtbot.keyClick(editors[0], Qt.Key.Key_Return)


def select_rows(tab: FileTab, rows: list[int]) -> None:
    tab.editing.select_records(rows)


def run_export(qtbot, dialog, fmt: str, out: str, compression: str = "none"):
    dialog.set_format(fmt)
    dialog.output.setText(out)
    dialog.compression.setCurrentIndex(dialog.compression.findData(compression))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    return blocker.args[0]
