"""A file whose name says another compression than its bytes: it opens, and the window says what TensorFlow does."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")

from tests.builders import fixture_path

pytestmark = pytest.mark.gui

TIMEOUT = 20000
NOTE = "stored as ZLIB although named .gz: TensorFlow with compression_type='GZIP' fails on it; use 'ZLIB'"


def test_zlib_data_under_a_gz_name_opens_with_a_note(window, qtbot, tmp_path):
    path = tmp_path / "data.tfrecord.gz"
    shutil.copyfile(fixture_path("structured.zlib.tfrecord"), path)
    tab = window.open_file(str(path))
    assert tab is not None
    qtbot.waitUntil(lambda: not tab.is_running() and tab.model.rowCount() == 100, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: NOTE in window.statusBar().currentMessage(), timeout=TIMEOUT)
    assert window.compression_label.text() == "ZLIB ⚠" and window.compression_label.toolTip() == NOTE


def test_a_name_that_fits_has_no_note(window, qtbot):
    tab = window.open_file(fixture_path("structured.tfrecord.gz"))
    qtbot.waitUntil(lambda: not tab.is_running() and tab.model.rowCount() == 100, timeout=TIMEOUT)
    assert window.compression_label.text() == "GZIP" and "TensorFlow" not in window.compression_label.toolTip()
    assert "TensorFlow" not in window.statusBar().currentMessage()
