"""The Export dialog's ArrayRecord choice through the real main window: the file Google's reader reads, and
the note that names the extra when Google's package is missing."""
from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6.QtWidgets")

from codec.sources.array_record_file import array_record_available
from codec.storage.writer import write_records
from tests.gui_helpers import export_with, open_done

pytestmark = pytest.mark.skipif(not array_record_available(), reason="Google's array-record package is not installed")
TIMEOUT = 20000
RECORDS = [b"record %d" % i * (i % 3) for i in range(30)]


def test_the_dialog_exports_an_array_record_file_googles_reader_reads(qtbot, window, tmp_path) -> None:
    from array_record.python import array_record_module

    source = tmp_path / "data.tfrecord"
    write_records(source, RECORDS)
    open_done(window, qtbot, str(source))
    dialog = window.edit_actions.export_current()
    dialog.set_format("array_record")
    assert dialog.output.text().endswith("data-export.array_record") and "group_size:1" in dialog.note.text()
    assert not dialog.compression.isEnabled() and dialog.export_button.isEnabled()
    out = tmp_path / "data.array_record"
    assert export_with(qtbot, dialog, out, TIMEOUT).records == 30 and dialog.message == f"wrote 30 records to {out}"
    reader = array_record_module.ArrayRecordReader(str(out))
    assert list(reader.read(list(range(30)))) == RECORDS
    assert reader.writer_options_string().startswith("group_size:1,")


def test_without_googles_package_the_dialog_names_the_extra(qtbot, window, tmp_path, monkeypatch) -> None:
    import array_record.python

    source = tmp_path / "data.tfrecord"
    write_records(source, RECORDS)
    open_done(window, qtbot, str(source))
    monkeypatch.setitem(sys.modules, "array_record.python.array_record_module", None)
    monkeypatch.delattr(array_record.python, "array_record_module")
    dialog = window.edit_actions.export_current()
    dialog.set_format("array_record")
    assert dialog.note.text() == ("writing ArrayRecord files needs Google's array-record package: "
                                  "pip install 'tfrecord-lens[array-record]'")
    assert not dialog.export_button.isEnabled()
