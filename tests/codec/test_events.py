"""TensorBoard event files: Event messages (kind ``event``), log folders as runs, files still being written.

tests/fixtures/formats/logs was written by TensorFlow's summary writers; its
MANIFEST.json holds each file's event count and first events (protobuf's JSON).
Other logs are written here with the Event class the codec loads (TensorBoard's
own .proto files) and the project's TFRecord writer.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest

from codec.cli.main import main
from codec.datasets.event_logs import is_event_file, log_runs, runs_of
from codec.decode.decoder import RecordKind, decode_record
from codec.decode.events import EventPayload, event_class, is_event_file_name, is_file_version_event
from codec.errors import UsageError
from codec.storage.writer import write_records
from tests.builders import FIXTURES

LOGS = FIXTURES / "formats" / "logs"
MANIFEST = json.loads((LOGS / "MANIFEST.json").read_text())["logs"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def fixture_file(run_name: str) -> str:
    (name,) = [key for key in MANIFEST["files"] if key.startswith(f"logs/{run_name}/")]
    return os.fspath(LOGS.parent / name)


def event_bytes(**fields) -> bytes:
    return event_class()(**fields).SerializeToString()


def test_the_first_events_of_each_file_are_the_reference_json(capsys):
    for name, expected in MANIFEST["files"].items():
        code, out, _ = run(capsys, "cat", "--json", LOGS.parent / name)
        lines = json_lines(out)
        assert code == 0 and len(lines) == expected["events"]
        assert {line["kind"] for line in lines} == {"event"}
        assert [line["value"] for line in lines[:len(expected["first"])]] == expected["first"]
        assert all("run" not in line for line in lines)  # a file named on its own is no folder's run


def test_a_log_folder_is_its_runs_in_the_order_they_started(capsys):
    code, out, _ = run(capsys, "cat", "--json", LOGS)
    lines = json_lines(out)
    assert code == 0 and [line["index"] for line in lines] == list(range(100))
    # train's file was started a second before eval's: train first, though "eval" sorts first by name
    assert [line["run"] for line in lines] == ["train"] * 50 + ["eval"] * 50
    assert lines[50]["value"] == MANIFEST["files"][
        "logs/eval/events.out.tfevents.1795775432.vm.29503.1.v2"]["first"][0]


def test_info_names_the_folder_and_the_kind(capsys):
    code, out, _ = run(capsys, "info", LOGS)
    assert code == 0
    assert f"path:        {LOGS}" in out and "kinds: event 100" in out
    assert "decoded as:  TensorBoard events" in out


def test_filters_see_an_events_fields_by_path(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--workers", "1", "--where", 'step == 3 and summary.value.tag == "loss"',
                       LOGS)
    lines = json_lines(out)
    assert code == 0 and [(line["run"], line["value"]["step"]) for line in lines] == [("train", "3"), ("eval", "3")]
    assert {line["value"]["summary"]["value"][0]["tag"] for line in lines} == {"loss"}


def test_nested_runs_are_named_by_their_path_below_the_folder(tmp_path):
    for rel, started in (("a/b", 30), (".", 20), ("c", 10), ("a/b", 40)):
        folder = tmp_path / rel
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture_file("train"), folder / f"events.out.tfevents.{started}.host.1.0.v2")
    (tmp_path / ".hidden").mkdir()
    shutil.copy(fixture_file("train"), tmp_path / ".hidden" / "events.out.tfevents.1.host.1.0.v2")
    (tmp_path / "c" / "notes.txt").write_text("not an event file")
    runs = log_runs(str(tmp_path))
    assert [(r.name, [os.path.basename(f) for f in r.files]) for r in runs] == [
        ("c", ["events.out.tfevents.10.host.1.0.v2"]),
        (".", ["events.out.tfevents.20.host.1.0.v2"]),
        ("a/b", ["events.out.tfevents.30.host.1.0.v2", "events.out.tfevents.40.host.1.0.v2"]),
    ]


def test_an_event_file_is_known_by_its_name_or_its_first_record(tmp_path):
    renamed = tmp_path / "run.log"
    shutil.copy(fixture_file("eval"), renamed)
    assert is_event_file_name("logs/events.out.tfevents.1.host") and not is_event_file_name("train.tfrecord")
    assert is_event_file(str(renamed))
    assert is_file_version_event(event_bytes(wall_time=1.0, file_version="brain.Event:2"))
    assert not is_file_version_event(event_bytes(wall_time=1.0, step=3))
    other = tmp_path / "data.tfrecord"
    write_records(other, [event_bytes(wall_time=1.0, file_version="something else")])
    assert not is_event_file(str(other))
    with pytest.raises(UsageError, match="not a TensorBoard event file"):
        runs_of([str(other)])


def test_a_file_sniffed_by_content_decodes_as_events(capsys, tmp_path):
    renamed = tmp_path / "run.log"
    shutil.copy(fixture_file("eval"), renamed)
    code, out, _ = run(capsys, "cat", "--json", "--range", "0:1", renamed)
    assert code == 0 and json_lines(out)[0]["kind"] == "event"


def test_a_record_that_is_not_an_event_is_raw_with_a_note():
    decoded = EventPayload().decode(b"\xff\xff\xff")
    assert decoded.kind is RecordKind.RAW and decoded.note.startswith("not a tensorboard.Event")
    decoded = decode_record(event_bytes(wall_time=2.5, step=7), EventPayload())
    assert decoded.kind is RecordKind.EVENT and decoded.message.step == 7


def cut_copy(tmp_path, keep: int) -> str:
    data = open(fixture_file("train"), "rb").read()
    folder = tmp_path / "logs" / "train"
    folder.mkdir(parents=True)
    path = folder / "events.out.tfevents.1795775431.vm.29503.0.v2"
    path.write_bytes(data[:len(data) - keep])
    return str(path)


def test_an_unfinished_last_record_is_being_written_not_damage(capsys, tmp_path):
    path = cut_copy(tmp_path, keep=20)  # the last record (46 bytes of data) cut in its data
    for target in (path, tmp_path / "logs"):
        code, out, err = run(capsys, "cat", "--json", target)
        lines = json_lines(out)
        assert code == 0 and err == ""
        assert [line["status"] for line in lines] == ["ok"] * 49 + ["writing"]
    code, out, _ = run(capsys, "info", path)
    assert code == 0 and "problems:    none" in out


def test_a_crc_mismatch_in_the_middle_is_still_damage(capsys, tmp_path):
    path = cut_copy(tmp_path, keep=0)
    data = bytearray(open(path, "rb").read())
    data[3000] ^= 0xFF
    open(path, "wb").write(bytes(data))
    code, out, _ = run(capsys, "cat", "--json", path)
    assert code == 1 and "data_crc" in [line["status"] for line in json_lines(out)]


def test_the_checked_in_descriptor_set_is_the_vendored_protos_compiled():
    pytest.importorskip("grpc_tools")
    from codec.decode.events import _DESCRIPTOR_SET, compiled_descriptor_set

    with open(_DESCRIPTOR_SET, "rb") as f:
        assert f.read() == compiled_descriptor_set()
