"""Hostile payloads in the app: a tensor splat and an image bomb say what was not decoded; the Export
dialog escapes CSV cells a spreadsheet would run as formulas unless unticked."""
from __future__ import annotations

import csv

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.models.settings import Settings
from app.shell.main_window import MainWindow
from benchmarks.attacks_payloads import FORMULA, formula_file, png_chunk, splat_file
from codec.decode.example_proto import Example
from codec.storage.writer import write_records
from tests.gui_helpers import open_done

pytestmark = pytest.mark.gui
TIMEOUT = 20000


@pytest.fixture
def window(qtbot) -> MainWindow:
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.show()
    return w


def _export(qtbot, dialog, out) -> dict:
    dialog.set_format("csv")
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    with open(out, newline="") as f:
        return next(csv.DictReader(f))


def test_the_export_dialog_escapes_formula_cells_by_default(window, qtbot, tmp_path):
    open_done(window, qtbot, str(formula_file(tmp_path)))
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("tfrecord")
    assert not dialog.escape_formulas.isEnabled()  # a CSV choice only
    dialog.set_format("csv")
    assert dialog.escape_formulas.isEnabled() and dialog.escape_formulas.isChecked()
    row = _export(qtbot, dialog, tmp_path / "escaped.csv")
    assert row["link"] == "'" + FORMULA.decode() and row["count"] == "-3"
    assert "cell(s) starting with =" in window.statusBar().currentMessage()
    dialog.escape_formulas.setChecked(False)
    row = _export(qtbot, dialog, tmp_path / "kept.csv")
    assert row["link"] == FORMULA.decode()
    dialog.close()


def _show(qtbot, window, path, row: int = 0):
    tab = open_done(window, qtbot, str(path))
    if tab.current_record() != row:
        tab.select_record(row)
    qtbot.waitUntil(lambda: tab.detail.loaded() is not None and tab.current_record() == row, timeout=TIMEOUT)
    return tab.detail


def test_a_string_splat_shows_raw_with_its_note(window, qtbot, tmp_path):
    detail = _show(qtbot, window, splat_file(tmp_path))
    assert detail.loaded().decoded.kind.value == "raw"
    assert "16,777,216 elements" in detail.note_text()


def test_an_image_bomb_preview_says_it_is_not_decoded(window, qtbot, tmp_path):
    import struct
    import zlib

    header = struct.pack(">IIBBBBB", 13000, 13000, 8, 2, 0, 0, 0)
    png = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(bytes(39001)))
           + png_chunk(b"IEND", b""))
    example = Example()
    example.features.feature["image/encoded"].bytes_list.value.append(png)
    path = tmp_path / "bomb.tfrecord"
    write_records(path, [example.SerializeToString()])
    detail = _show(qtbot, window, path)
    images = detail.images
    qtbot.waitUntil(lambda: images.pending() == 0, timeout=TIMEOUT)
    assert images.image_count() == 1 and images.image(0) is None
    assert "13000x13000 image not decoded" in images.image_error(0)
