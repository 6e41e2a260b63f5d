"""File > Decode As… and File > Label Map… through the real main window.

Each test works on copies in ``tmp_path`` (the choices are remembered per
file, in the private settings conftest gives every test). The Decode As
dialog is driven through its methods and accept(): it opens window-modal
without a modal loop, so nothing blocks.
"""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtWidgets import QDialog

from app.models.record_table_model import KIND_ROLE, Column
from app.models.settings import Settings
from app.shell import payload_actions
from codec.decode.decoder import RecordKind, decode_record, feature_values, record_features
from codec.sources.tfrecord_file import TFRecordFile
from tests.builders import FIXTURES
from tests.gui_helpers import open_done

pytestmark = pytest.mark.gui
TIMEOUT = 10000
MESSAGES = FIXTURES / "payloads" / "messages"
LABEL_MAPS = FIXTURES / "payloads" / "label_maps"
LABEL_KEY = "image/object/class/label"
TEXT_KEY = "image/object/class/text"


@pytest.fixture
def frames(tmp_path):
    """frames.tfrecord with its descriptor set and .proto, copied to a folder of their own."""
    folder = tmp_path / "frames"
    folder.mkdir()
    for name in ("frames.tfrecord", "frames.desc", "frames.proto"):
        shutil.copy(MESSAGES / name, folder / name)
    return folder


def kinds(tab) -> list:
    model = tab.model
    return [model.data(model.index(i, Column.KIND), KIND_ROLE) for i in range(model.rowCount())]


def open_dialog(window):
    window.payloads.decode_as_action.trigger()
    dialog = window.payloads.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def decode_as(window, schema: str, type_name: str):
    dialog = open_dialog(window)
    assert dialog.load_schema(schema), dialog.error_text()
    assert dialog.select_type(type_name)
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    return dialog


def expected_names(path: str) -> dict[int, str]:
    """id -> class text, as each record of detection.tfrecord pairs them (the reference the map must agree with)."""
    f = TFRecordFile(path)
    try:
        list(f.index_iter())
        names: dict[int, str] = {}
        for i in range(len(f)):
            features = record_features(decode_record(f.read(i).data))
            ids = feature_values(features[LABEL_KEY])[1]
            texts = feature_values(features[TEXT_KEY])[1]
            names.update(zip(ids, (t.decode() for t in texts)))
        return names
    finally:
        f.close()


def assert_names(labels, path: str) -> None:
    reference = expected_names(path)
    assert reference
    assert labels is not None and LABEL_KEY in labels
    for class_id, text in reference.items():
        assert (labels.name(LABEL_KEY, class_id) or "").casefold() == text.casefold()


@pytest.mark.parametrize("schema", ["frames.desc", "frames.proto"])
def test_decode_as_a_message_type_switches_every_row_and_the_detail(window, qtbot, frames, schema):
    path = os.fspath(frames / "frames.tfrecord")
    tab = open_done(window, qtbot, path)
    assert tab.session.source.payload is None
    assert set(kinds(tab)) == {RecordKind.PROTOBUF}  # schema-less until a type is chosen

    dialog = open_dialog(window)
    assert dialog.load_schema(os.fspath(frames / schema)), dialog.error_text()
    assert sorted(dialog.types()) == ["lens.demo.Box", "lens.demo.Frame"]
    dialog.filter_edit.setText("fra")  # typing filters the list
    assert dialog.shown_types() == ["lens.demo.Frame"]
    assert dialog.choice() == (os.fspath(frames / schema), "lens.demo.Frame")
    assert "Message lens.demo.Frame" in dialog.preview_title.text()
    assert '"imageId"' in dialog.preview.toPlainText()  # the first lines of the record's JSON
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        dialog.accept()

    assert tab.session.source.payload.name == "lens.demo.Frame"
    assert set(kinds(tab)) == {RecordKind.MESSAGE} and len(kinds(tab)) == len(tab.session.source)
    assert tab.detail.loaded().decoded.kind is RecordKind.MESSAGE
    assert "lens.demo.Frame" in window.statusBar().currentMessage()
    assert window.payload_label.isVisibleTo(window) and window.payload_label.text() == "as lens.demo.Frame"


def test_a_file_that_is_no_schema_is_one_line_in_the_dialog_and_changes_nothing(window, qtbot, frames):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    before = kinds(tab)
    dialog = open_dialog(window)
    assert not dialog.load_schema(os.fspath(frames / "frames.tfrecord"))
    error = dialog.error_text()
    assert error and "\n" not in error and "Traceback" not in error
    assert dialog.error_label.isVisibleTo(dialog)
    assert dialog.types() == [] and not dialog.is_valid()
    dialog.accept()  # OK does nothing while no type loads
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    dialog.reject()
    assert tab.session.source.payload is None and kinds(tab) == before
    assert Settings().decode_as(tab.path) is None


def test_a_proto_that_does_not_compile_is_one_line(window, qtbot, frames):
    open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    dialog = open_dialog(window)
    assert not dialog.load_schema(os.fspath(MESSAGES / "broken.proto"))
    assert "broken.proto" in dialog.error_text() and "\n" not in dialog.error_text()
    dialog.reject()


def test_a_type_the_file_does_not_hold_lists_the_types_it_does(window, qtbot, frames):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    assert not window.payloads.decode_as(tab, os.fspath(frames / "frames.desc"), "lens.demo.Nope")
    text = window.message_bar.text()
    assert "lens.demo.Frame" in text and len(text.splitlines()) == 1
    assert tab.session.source.payload is None


def test_a_record_that_is_not_the_type_previews_why(window, qtbot, frames):
    open_done(window, qtbot, "detection.tfrecord")
    dialog = open_dialog(window)
    assert dialog.load_schema(os.fspath(frames / "frames.desc"))
    dialog.select_type("lens.demo.Frame")
    headline = dialog.preview_title.text()
    # an Example's bytes do not parse as a Frame, or parse with unknown fields: the preview says which
    assert "does not parse" in headline or "unknown field" in headline
    dialog.set_automatic()
    assert "Example" in dialog.preview_title.text() and dialog.choice() is None
    dialog.reject()


def test_automatic_goes_back_to_the_kind_rule(window, qtbot, frames):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    decode_as(window, os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    assert set(kinds(tab)) == {RecordKind.MESSAGE}

    dialog = open_dialog(window)  # opens on the type chosen
    assert dialog.choice() == (os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    dialog.set_automatic()
    dialog.accept()
    assert tab.session.source.payload is None
    assert set(kinds(tab)) == {RecordKind.PROTOBUF}
    assert Settings().decode_as(tab.path) is None


def test_the_choice_is_remembered_per_file_and_reapplied_on_open(window, qtbot, frames, tmp_path):
    path = os.fspath(frames / "frames.tfrecord")
    other = tmp_path / "other.tfrecord"
    shutil.copy(frames / "frames.tfrecord", other)
    tab = open_done(window, qtbot, path)
    decode_as(window, os.fspath(frames / "frames.proto"), "lens.demo.Frame")
    assert Settings().decode_as(path) == (os.fspath(frames / "frames.proto"), "lens.demo.Frame")
    window.close_current()

    tab = open_done(window, qtbot, path)
    assert tab.session.source.payload.name == "lens.demo.Frame"
    assert set(kinds(tab)) == {RecordKind.MESSAGE}
    assert not window.message_bar.isVisible()
    other_tab = open_done(window, qtbot, os.fspath(other))  # the same bytes elsewhere: its own choice (none)
    assert other_tab.session.source.payload is None


def test_a_remembered_schema_that_is_gone_opens_normally_and_says_so(window, qtbot, frames):
    path = os.fspath(frames / "frames.tfrecord")
    open_done(window, qtbot, path)
    decode_as(window, os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    window.close_current()
    os.remove(frames / "frames.desc")

    tab = open_done(window, qtbot, path)
    assert tab.session.source.payload is None
    assert set(kinds(tab)) == {RecordKind.PROTOBUF}
    text = window.message_bar.text()
    assert window.message_bar.isVisible() and "frames.desc" in text and "gone" in text
    assert len(text.splitlines()) == 1


def test_unsaved_edits_survive_a_switch_and_saving_as_keeps_the_type(window, qtbot, frames, tmp_path):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    qtbot.waitUntil(lambda: tab.editing.editable, timeout=TIMEOUT)
    n = tab.model.rowCount()
    document = tab.session.document
    tab.editing.select_records([0, 1])
    window.edit_actions.delete_action.trigger()
    assert tab.model.rowCount() == n - 2 and tab.session.modified

    decode_as(window, os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    assert tab.session.document is document and tab.session.modified
    assert tab.model.rowCount() == n - 2 and tab.session.records.payload.name == "lens.demo.Frame"
    assert set(kinds(tab)) == {RecordKind.MESSAGE}
    window.edit_actions.undo_action.trigger()
    assert tab.model.rowCount() == n and set(kinds(tab)) == {RecordKind.MESSAGE}

    window.edit_actions.redo_action.trigger()
    saved = os.fspath(tmp_path / "saved.tfrecord")
    done: list[bool] = []
    assert tab.editing.save(saved, on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT)
    assert done == [True], window.message_bar.text()
    qtbot.waitUntil(lambda: tab.editing.editable and not tab.is_running(), timeout=TIMEOUT)
    assert tab.path == saved and tab.model.rowCount() == n - 2
    assert tab.session.source.payload.name == "lens.demo.Frame" and set(kinds(tab)) == {RecordKind.MESSAGE}
    assert Settings().decode_as(saved) == (os.fspath(frames / "frames.desc"), "lens.demo.Frame")


def test_a_label_map_beside_the_file_is_found_on_open(window, qtbot, tmp_path):
    path = tmp_path / "detection.tfrecord"
    shutil.copy(FIXTURES / "detection.tfrecord", path)
    tab = open_done(window, qtbot, os.fspath(path))
    assert tab.session.source.labels is None  # nothing beside it yet
    window.close_current()

    shutil.copy(LABEL_MAPS / "label_map.pbtxt", tmp_path / "label_map.pbtxt")
    tab = open_done(window, qtbot, os.fspath(path))
    assert_names(tab.session.source.labels, os.fspath(path))


def test_file_label_map_sets_the_names_and_remembers_them(window, qtbot, tmp_path, monkeypatch):
    path = tmp_path / "detection.tfrecord"
    shutil.copy(FIXTURES / "detection.tfrecord", path)
    chosen = tmp_path / "maps" / "classes.json"
    chosen.parent.mkdir()
    shutil.copy(LABEL_MAPS / "label_map.json", chosen)
    tab = open_done(window, qtbot, os.fspath(path))
    assert tab.session.source.labels is None
    monkeypatch.setattr(payload_actions.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *args, **kwargs: (os.fspath(chosen), "")))
    window.payloads.label_map_action.trigger()
    assert_names(tab.session.source.labels, os.fspath(path))
    assert Settings().label_map(os.fspath(path)) == os.fspath(chosen)
    window.close_current()

    tab = open_done(window, qtbot, os.fspath(path))
    assert_names(tab.session.source.labels, os.fspath(path))


def test_a_label_map_that_does_not_load_is_one_line_and_changes_nothing(window, qtbot, tmp_path):
    path = tmp_path / "detection.tfrecord"
    shutil.copy(FIXTURES / "detection.tfrecord", path)
    tab = open_done(window, qtbot, os.fspath(path))
    assert not window.payloads.set_label_map(tab, os.fspath(LABEL_MAPS / "bad_syntax.pbtxt"))
    text = window.message_bar.text()
    assert "bad_syntax.pbtxt" in text and len(text.splitlines()) == 1
    assert tab.session.source.labels is None
    assert Settings().label_map(os.fspath(path)) is None


def test_open_statistics_follow_the_switch(window, qtbot, frames):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    assert panel.stats_json()["kinds"] == {"protobuf": len(tab.session.source)}
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):  # the shown panel goes over the records again
        decode_as(window, os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    stats = panel.stats_json()
    assert stats["kinds"] == {"message": len(tab.session.source)}
    descriptor = tab.session.source.payload.descriptor
    scalars = {field.name for field in descriptor.fields if field.message_type is None}
    assert scalars and scalars <= set(stats["features"])  # fields by name now, not by number


def test_a_tfds_shard_opens_as_the_command_line_reads_it(window, qtbot):
    from codec.datasets.payload_choice import choose_for

    shard = next((FIXTURES / "payloads" / "tfds").rglob("*-train.tfrecord-*"))
    tab = open_done(window, qtbot, os.fspath(shard))
    cli = choose_for([os.fspath(shard)])
    assert cli.payload is not None  # the codec reads it per its dataset's features.json
    assert tab.session.source.payload.name == cli.payload.name
    assert tab.session.source.labels.keys == cli.labels.keys
    assert window.payload_label.text() == f"as {cli.payload.name}"


def test_a_filter_shown_runs_again_on_the_new_decoding(window, qtbot, frames):
    tab = open_done(window, qtbot, os.fspath(frames / "frames.tfrecord"))
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        bar.run('kind == "protobuf"')
    assert tab.qa.rows.matches() is not None and len(tab.qa.rows.matches()) == len(tab.session.source)
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        decode_as(window, os.fspath(frames / "frames.desc"), "lens.demo.Frame")
    assert len(tab.qa.rows.matches()) == 0  # every record is a message now
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        bar.run('kind == "message" and split == "EVAL"')
    eval_rows = len(tab.qa.rows.matches())
    assert 0 < eval_rows < len(tab.session.source)
