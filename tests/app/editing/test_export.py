"""Exporting from an edited tab: every format, the index files, the filtered rows, cancel."""
from __future__ import annotations

import csv
import json
import os

import pytest

pytest.importorskip("PySide6.QtWidgets")

from codec.format.framing import Compression
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.app.editing.helpers import (
    TIMEOUT,
    feature_of,
    open_editable,
    original,
    read_back,
    run_export,
    select_rows,
    show,
    tree_index,
)

pytestmark = pytest.mark.gui


# -- export -----------------------------------------------------------------------------------
def test_export_the_selection_in_every_format(window, qtbot, copy, tmp_path):
    path = copy("flowers_jpeg.tfrecord")
    tab = open_editable(window, qtbot, path)
    before = original(path)
    show(qtbot, tab, 3)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.detail.tree_model.setData(tree_index(tab, "label", column=2), "7")  # exports show the edits
    select_rows(tab, [1, 3, 6])
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_selected.isChecked() and dialog.indices() == [1, 3, 6]

    report = run_export(qtbot, dialog, "tfrecord", str(tmp_path / "sel.tfrecord.gz"), "gzip")
    assert report.records == 3
    with TFRecordFile(str(tmp_path / "sel.tfrecord.gz"), use_cache=False) as f:
        assert f.compression is Compression.GZIP
    saved = read_back(str(tmp_path / "sel.tfrecord.gz"))
    assert saved[0] == before[1] and saved[2] == before[6] and feature_of(saved[1], "label") == ("int64", [7])

    run_export(qtbot, dialog, "jsonl", str(tmp_path / "sel.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "sel.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == [1, 3, 6]
    assert lines[1]["value"]["features"]["feature"]["label"]["int64List"]["value"] == ["7"]

    run_export(qtbot, dialog, "csv", str(tmp_path / "sel.csv"))
    rows = list(csv.DictReader((tmp_path / "sel.csv").open()))
    assert [r["index"] for r in rows] == ["1", "3", "6"] and rows[1]["label"] == "7"
    assert rows[0]["text"] == feature_of(before[1], "text")[1][0].decode()

    report = run_export(qtbot, dialog, "images", str(tmp_path / "images"))
    assert sorted(os.listdir(tmp_path / "images")) == ["000001_encoded.jpg", "000003_encoded.jpg",
                                                       "000006_encoded.jpg"]
    assert report.files == 3
    assert "wrote 3 image files" in window.statusBar().currentMessage()

    # all records
    dialog.scope_all.setChecked(True)
    assert run_export(qtbot, dialog, "jsonl", str(tmp_path / "all.jsonl")).records == 25

    # the index describes the file on disk: not while there are unsaved edits
    dialog.set_format("index-dali")
    assert not dialog.export_button.isEnabled() and "save first" in dialog.note.text()
    dialog.close()


def test_export_the_index_native_and_dali(window, qtbot, copy, tmp_path):
    path = copy("structured.tfrecord")
    tab = open_editable(window, qtbot, path)
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.output.text().endswith("structured-export.tfrecord")
    dialog.set_format("index-native")
    assert dialog.output.text().endswith("structured.tfrecord.tfri")
    out = run_export(qtbot, dialog, "index-dali", str(tmp_path / "structured.idx"))
    assert out == str(tmp_path / "structured.idx")
    lines = (tmp_path / "structured.idx").read_text().splitlines()
    assert len(lines) == 100
    offset, size = map(int, lines[1].split())
    info = tab.session.source.record_info(1)
    assert (offset, size) == (info.offset, info.end - info.offset)
    run_export(qtbot, dialog, "index-native", str(tmp_path / "structured.tfri"))
    assert (tmp_path / "structured.tfri").read_bytes().startswith(b"TFRLIDX1")


def test_dali_index_needs_a_plain_file(window, qtbot, copy):
    open_editable(window, qtbot, copy("structured.tfrecord.gz"))
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("index-dali")
    assert not dialog.export_button.isEnabled() and "uncompressed" in dialog.note.text()


def test_cancelled_export_writes_nothing(window, qtbot, tmp_path):
    path = str(tmp_path / "many.tfrecord")
    write_records(path, (b"record %d" % i for i in range(30000)))
    open_editable(window, qtbot, path)
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("jsonl")
    dialog.output.setText(str(tmp_path / "out.jsonl"))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        dialog.start()
        dialog.cancel()
    assert blocker.args[0] is None and "cancelled" in dialog.message
    assert not (tmp_path / "out.jsonl").exists()




def test_export_offers_the_filtered_rows(window, qtbot, copy, tmp_path):
    tab = open_editable(window, qtbot, copy("structured.tfrecord"))
    view_model = tab.table.model()
    if not hasattr(view_model, "set_matches"):
        pytest.skip("the table has no filter proxy")
    view_model.set_matches([2, 5, 9], "int_col in (2, 5, 9)")
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    assert dialog.scope_filtered.isEnabled() and "(3)" in dialog.scope_filtered.text()
    dialog.scope_filtered.setChecked(True)
    run_export(qtbot, dialog, "jsonl", str(tmp_path / "filtered.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "filtered.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == [2, 5, 9]
    # a selection through the filter is of records, not of view rows
    select_rows(tab, [5, 9])
    assert tab.editing.selected_records() == [5, 9]
    window.edit_actions.delete_action.trigger()
    assert len(tab.editing.document) == 98
