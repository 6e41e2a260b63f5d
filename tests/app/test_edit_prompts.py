"""The record tree's typed edit requests, dispatched by type to an edit on the document (no window)."""
from __future__ import annotations

import typing

import pytest

pytest.importorskip("PySide6.QtWidgets")


from app.dialogs import edit_dialogs
from app.shell.edit_prompts import EditPrompts
from app.shell.progress_worker import ProgressWorker
from app.shell.record_edits import RecordEdits
from app.views import tree_edit_requests as requests
from codec.decode.decoder import decode_record, feature_values, record_features
from codec.storage.writer import write_records
from tests.app.tab_parts import TabParts
from tests.builders import example

pytestmark = pytest.mark.gui
TIMEOUT = 10000


def numbered(n: int) -> bytes:
    return example(id=[n, n + 1, n + 2], name=b"row-%d" % n, deterministic=True)


class Parts:
    """What a tab gives its editing (a session, the table's selection, a dialog parent), with the
    record edits on a worker and the prompts over them."""

    def __init__(self, parts: TabParts) -> None:
        self.session, self.selection, self.host = parts.session, parts.selection, parts.host
        self.edits = RecordEdits(self.session, self.selection, ProgressWorker(self.host, self.host), self.host)
        self.prompts = EditPrompts(self.edits, self.selection, self.host, self.host)

    def features(self, row: int) -> dict:
        return {k: feature_values(v)[1]
                for k, v in record_features(decode_record(self.session.records.read(row).data)).items()}


@pytest.fixture
def parts(tab_parts, tmp_path):
    path = tmp_path / "three.tfrecord"
    write_records(path, [numbered(i) for i in (0, 10, 20)])
    return Parts(tab_parts(str(path), editing=True))


def test_every_request_type_has_a_handler(parts):
    kinds = set(typing.get_args(requests.TreeEditRequest))
    assert kinds == {cls for cls in vars(requests).values()
                     if isinstance(cls, type) and cls.__module__ == requests.__name__}
    assert set(parts.prompts._handlers) | {requests.ReadOnly} == kinds  # ReadOnly is answered before dispatch


def test_requests_without_a_dialog_edit_the_current_record(qtbot, parts):
    parts.selection.select_record(1)
    assert parts.selection.current_record() == 1
    parts.prompts.request(requests.RemoveValue(("features", "id"), 0))
    assert parts.features(1)["id"] == [11, 12]
    parts.prompts.request(requests.ChangeType(("features", "id"), "float"))
    assert parts.features(1)["id"] == [11.0, 12.0]
    parts.prompts.request(requests.DeleteFeature(("features", "name")))
    assert "name" not in parts.features(1) and parts.features(0)["name"] == [b"row-0"]
    assert [parts.session.stack.text(i) for i in range(parts.session.stack.count())] == [
        "Remove id[0] (record 1)", "Change id to float (record 1)", "Delete feature name (record 1)"]


def test_requests_with_a_dialog_ask_then_edit(qtbot, parts, monkeypatch):
    monkeypatch.setattr(edit_dialogs, "ask_value", lambda parent, title, dtype, current=None: 99)
    monkeypatch.setattr(edit_dialogs, "ask_text", lambda parent, title, label, text="": "ident")
    parts.selection.select_record(2)
    parts.prompts.request(requests.InsertValue(("features", "id"), 0, "int64"))
    assert parts.features(2)["id"] == [99, 20, 21, 22]
    parts.prompts.request(requests.RenameFeature(("features", "id")))
    assert parts.features(2)["ident"] == [99, 20, 21, 22] and "id" not in parts.features(2)


def test_a_codec_refusal_is_an_error_and_read_only_a_message(qtbot, parts):
    parts.selection.select_record(0)
    with qtbot.waitSignal(parts.edits.failed, timeout=TIMEOUT) as error:
        parts.prompts.request(requests.RemoveValue(("features", "missing"), 0))
    assert "missing" in error.args[0] and parts.session.stack.count() == 0
    with qtbot.waitSignal(parts.edits.message, timeout=TIMEOUT) as note:
        parts.prompts.request(requests.ReadOnly())
    assert note.args[0] == "this cannot be edited"  # editing is on: nothing says why not


def test_requests_before_editing_starts_are_refused_with_the_reason(qtbot, tab_parts, tmp_path):
    path = tmp_path / "one.tfrecord"
    write_records(path, [numbered(0)])
    p = Parts(tab_parts(str(path), start=False))
    with qtbot.waitSignal(p.edits.message, timeout=TIMEOUT) as note:
        p.prompts.request(requests.DeleteFeature(("features", "id")))
    assert note.args[0].startswith("read-only while indexing") and p.session.document is None
