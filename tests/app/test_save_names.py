"""Compression follows the file name in Save As, Export and Salvage, through the real main window.

A name ending in ``.gz`` (``.zz``/``.zlib``) gets GZIP (ZLIB) unless the user
picks otherwise in the dialog, and a pick that disagrees with the name asks
before writing. Dialogs run their real code; only their ``exec`` (what the
user types and clicks) and the disagreement question are stood in for.
"""
from __future__ import annotations

import os
import shutil
import time

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.dialogs import salvage_dialog, save_names
from app.dialogs.edit_dialogs import SaveAsDialog
from app.models.settings import Settings
from app.shell.main_window import MainWindow
from codec.format.framing import Compression
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.opening import sniff_compression
from codec.storage.temp_files import temp_name
from tests.builders import FIXTURES

pytestmark = pytest.mark.gui

TIMEOUT = 20000


@pytest.fixture
def copy(tmp_path):
    def make(name: str) -> str:
        target = tmp_path / "in" / os.path.basename(name)
        target.parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURES / name, target)
        return str(target)
    return make


def open_editable(window: MainWindow, qtbot, path: str):
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    return tab


def pick(combo, value: str) -> None:
    """Choose ``value`` in a compression combo as a user does (``activated`` comes only from the user)."""
    index = combo.findData(value)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def records_of(path: str) -> int:
    with TFRecordFile(path, use_cache=False) as f:
        assert f.verify() == []
        return len(f)


def user_saves_as(monkeypatch, target: str, choice: str | None = None) -> list[str]:
    """The Save As dialog: the user types ``target``, optionally picks a compression, clicks OK.

    Returns the compressions the dialog showed when OK was clicked.
    """
    shown: list[str] = []

    def exec_(dialog: SaveAsDialog) -> int:
        dialog.path.setText(target)
        if choice is not None:
            pick(dialog.compression, choice)
        dialog.accept()
        shown.append(dialog.compression.currentData())
        return dialog.result()

    monkeypatch.setattr(SaveAsDialog, "exec", exec_)
    return shown


def mismatch_answers(monkeypatch, answer: str) -> list[tuple[str, Compression]]:
    asked: list[tuple[str, Compression]] = []

    def ask(parent, path, compression):
        asked.append((os.path.basename(path), compression))
        return answer

    monkeypatch.setattr(save_names, "ask_name_mismatch", ask)
    return asked


def save_as(window: MainWindow, qtbot, tab, target: str) -> None:
    window.edit_actions.save_as_action.trigger()
    qtbot.waitUntil(lambda: tab.path == target and tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)


# -- Save As --------------------------------------------------------------------------
def test_save_as_gz_name_with_compression_left_alone_writes_gzip(window, qtbot, copy, monkeypatch, tmp_path):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    assert tab.session.source.compression is Compression.NONE
    target = str(tmp_path / "trap.tfrecord.gz")
    asked = mismatch_answers(monkeypatch, "write")
    shown = user_saves_as(monkeypatch, target)
    save_as(window, qtbot, tab, target)
    assert sniff_compression(target) is Compression.GZIP and records_of(target) == 100
    assert asked == []  # name and compression agree: nothing to ask
    assert shown == ["gzip"]
    # the same for ZLIB names, from the GZIP file now shown
    target = str(tmp_path / "trap.tfrecord.zz")
    user_saves_as(monkeypatch, target)
    save_as(window, qtbot, tab, target)
    assert sniff_compression(target) is Compression.ZLIB and records_of(target) == 100


def test_save_as_asks_before_plain_data_goes_under_a_gz_name(window, qtbot, copy, monkeypatch, tmp_path):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    target = str(tmp_path / "plain.tfrecord.gz")
    # Cancel: the dialog stays open (here: is not accepted) and nothing is written
    asked = mismatch_answers(monkeypatch, "cancel")
    user_saves_as(monkeypatch, target, choice="none")
    assert not window.edit_actions.save_as_current()
    assert asked == [("plain.tfrecord.gz", Compression.NONE)] and not os.path.exists(target)
    # "Use GZIP": written as the name says
    asked = mismatch_answers(monkeypatch, "fix")
    user_saves_as(monkeypatch, target, choice="none")
    save_as(window, qtbot, tab, target)
    assert asked and sniff_compression(target) is Compression.GZIP
    # "Write Anyway": the user's choice, plain under the .gz name
    other = str(tmp_path / "really-plain.tfrecord.gz")
    mismatch_answers(monkeypatch, "write")
    user_saves_as(monkeypatch, other, choice="none")
    save_as(window, qtbot, tab, other)
    assert sniff_compression(other) is Compression.NONE and records_of(other) == 100


def test_save_as_dialog_follows_the_name_until_the_user_picks(qtbot, tmp_path):
    dialog = SaveAsDialog(None, str(tmp_path / "data.tfrecord"), "none")
    qtbot.addWidget(dialog)
    for name, expected in (("a.tfrecord.gz", "gzip"), ("a.zlib", "zlib"), ("a.tfrecord.zz", "zlib"),
                           ("a.tfrecord", "none")):
        dialog.path.setText(str(tmp_path / name))
        assert dialog.compression.currentData() == expected, name
    pick(dialog.compression, "gzip")
    dialog.path.setText(str(tmp_path / "b.tfrecord"))
    assert dialog.compression.currentData() == "gzip"  # picked: the name no longer decides
    assert "no .gz/.zz suffix" in dialog.compression_note.text()  # and the dialog says they disagree


# -- Export ---------------------------------------------------------------------------
def export(qtbot, dialog) -> str:
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    return blocker.args[0].path


def test_export_name_and_compression_follow_each_other(window, qtbot, copy, monkeypatch, tmp_path):
    open_editable(window, qtbot, copy("structured.tfrecord"))
    asked = mismatch_answers(monkeypatch, "cancel")
    dialog = window.edit_actions.export_current()  # (the window owns it)
    dialog.set_format("tfrecord")
    assert dialog.output.text().endswith("structured-export.tfrecord")
    pick(dialog.compression, "gzip")  # the default name takes the suffix
    assert dialog.output.text().endswith("structured-export.tfrecord.gz")
    out = export(qtbot, dialog)
    assert out.endswith(".tfrecord.gz") and sniff_compression(out) is Compression.GZIP
    assert records_of(out) == 100 and asked == []

    dialog = window.edit_actions.export_current()  # (the window owns it)
    dialog.set_format("tfrecord")
    dialog.output.clear()
    qtbot.keyClicks(dialog.output, str(tmp_path / "typed.tfrecord.zz"))  # a typed name decides the compression
    assert dialog.compression.currentData() == "zlib"
    assert sniff_compression(export(qtbot, dialog)) is Compression.ZLIB

    dialog = window.edit_actions.export_current()  # (the window owns it)
    dialog.set_format("tfrecord")
    dialog.output.clear()
    qtbot.keyClicks(dialog.output, str(tmp_path / "plain.tfrecord.gz"))
    pick(dialog.compression, "none")
    assert "named like a GZIP file" in dialog.note.text()
    assert not dialog.start() and asked == [("plain.tfrecord.gz", Compression.NONE)]
    assert not os.path.exists(tmp_path / "plain.tfrecord.gz")


# -- Salvage --------------------------------------------------------------------------
def status(dialog) -> str:
    """The dialog's status line as plain text."""
    from PySide6.QtGui import QTextDocument

    text = QTextDocument()
    text.setHtml(dialog.status.text())
    return text.toPlainText()


def test_salvage_goes_beside_the_file_when_it_can(window, qtbot, copy, tmp_path):
    window.settings.add_output_directory(str(tmp_path))
    source = copy("corrupt_length.tfrecord")
    tab = window.open_file(source)
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=TIMEOUT)
    dialog = window.damage.salvage_current()
    assert os.path.dirname(dialog.output_path()) == os.path.dirname(source) and "read-only" not in status(dialog)


def test_salvage_refuses_a_folder_it_cannot_write_in_one_line(window, qtbot, copy, monkeypatch, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    real = salvage_dialog.writable
    monkeypatch.setattr(salvage_dialog, "writable", lambda folder: folder != str(locked) and real(folder))
    tab = window.open_file(copy("corrupt_length.tfrecord"))
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=TIMEOUT)
    dialog = window.damage.salvage_current()
    for folder, why in ((locked, "it is read-only"), (tmp_path / "gone", "it does not exist")):
        dialog.path_edit.setText(str(folder / "clean.tfrecord"))
        assert not dialog.start() and not dialog.is_running()
        assert dialog.error == f"cannot write to {folder}: {why}; choose another folder"
    assert not os.listdir(locked)


def test_salvage_goes_to_the_last_output_folder_and_follows_the_name(window, qtbot, copy, monkeypatch, tmp_path):
    out_folder = tmp_path / "outputs"
    out_folder.mkdir()
    window.settings.add_output_directory(str(out_folder))
    source = copy("corrupt_length.tfrecord")
    beside = os.path.dirname(source)
    real = salvage_dialog.writable
    monkeypatch.setattr(salvage_dialog, "writable", lambda folder: folder != beside and real(folder))  # read-only
    tab = window.open_file(source)
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=TIMEOUT)
    dialog = window.damage.salvage_current()  # (the window owns it)
    assert os.path.dirname(dialog.output_path()) == str(out_folder)  # not beside the source: it is read-only
    assert status(dialog) == f"{beside} is read-only: the copy goes to {out_folder}."
    assert dialog.output_path().endswith("corrupt_length.salvaged.tfrecord")
    pick(dialog.compression_box, "zlib")  # the default name follows a picked compression
    assert dialog.output_path().endswith("corrupt_length.salvaged.tfrecord.zlib")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dialog.path_edit.setText(str(elsewhere / "clean.tfrecord.gz"))
    assert dialog.compression() is Compression.ZLIB  # picked: the name does not change it...
    asked = mismatch_answers(monkeypatch, "fix")  # ...so the user is asked, and lets the name decide
    with qtbot.waitSignal(dialog.salvage_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start()
    result = blocker.args[0]
    assert asked == [("clean.tfrecord.gz", Compression.ZLIB)]
    assert result is not None and sniff_compression(result.report.output) is Compression.GZIP
    assert window.settings.last_output_directory() == str(elsewhere)


def test_start_sweeps_stale_temp_files_from_output_folders(qtbot, tmp_path):
    folder = tmp_path / "outputs"
    folder.mkdir()
    stale = folder / temp_name(str(folder / "big.tfrecord"))
    stale.write_bytes(b"half a file")
    old = time.time() - 30 * 24 * 3600
    os.utime(stale, (old, old))
    keep = folder / "big.tfrecord"
    keep.write_bytes(b"")
    settings = Settings()
    settings.add_output_directory(str(folder))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.sweep_thread.join(10)
    assert not stale.exists() and keep.exists()



def test_the_copy_name_keeps_extension_and_compression_and_is_free():
    from app.dialogs.save_names import proposed_copy

    taken = {"/d/x-edited.tfrecord.gz"}
    assert proposed_copy("/d/x.tfrecord.gz", taken.__contains__) == "/d/x-edited-2.tfrecord.gz"
    assert proposed_copy("/d/x-edited-2.tfrecord.gz", taken.__contains__) == "/d/x-edited-3.tfrecord.gz"
    assert proposed_copy("/d/train-00001-of-00004.zz", taken.__contains__) == "/d/train-edited-00001-of-00004.zz"
    assert proposed_copy("/d/raw", taken.__contains__) == "/d/raw-edited"
    assert proposed_copy("s3://b/k/x.tfrecord") == "s3://b/k/x-edited.tfrecord"
