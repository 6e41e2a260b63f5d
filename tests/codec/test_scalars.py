"""``tfrlens-cli scalars``: the scalar points of TensorBoard logs.

The shared log folder (TensorFlow's TF2 summary writer) must give exactly the
points of its MANIFEST.json. TF1-style logs (``simple_value``) and the other
cases are written here with the Event class the codec loads from TensorBoard's
own .proto files, through the project's TFRecord writer: the bytes TensorFlow writes.
"""
from __future__ import annotations

import csv
import io
import json
import os
import struct

from codec.cli.main import main
from codec.decode.events import event_class
from codec.storage.writer import write_records
from tests.builders import FIXTURES
from tests.codec.test_events import json_lines, run

LOGS = FIXTURES / "formats" / "logs"
MANIFEST = json.loads((LOGS / "MANIFEST.json").read_text())["logs"]
Event = event_class()


def file_version(wall_time: float = 1.0) -> bytes:
    return Event(wall_time=wall_time, file_version="brain.Event:2").SerializeToString()


def simple(step: int, wall_time: float, **values: float) -> bytes:
    """A TF1 ``tf.summary.scalar`` event (``simple_value``)."""
    event = Event(wall_time=wall_time, step=step)
    for tag, value in values.items():
        event.summary.value.add(tag=tag, simple_value=value)
    return event.SerializeToString()


def tensor_scalar(step: int, tag: str, *, metadata: bool = True, plugin: str = "scalars", **tensor) -> bytes:
    """A TF2 tensor summary of one value: ``tensor`` holds the TensorProto's fields."""
    event = Event(wall_time=100.0 + step, step=step)
    value = event.summary.value.add(tag=tag)
    if metadata:
        value.metadata.plugin_data.plugin_name = plugin
    value.tensor.dtype = tensor.pop("dtype")
    value.tensor.tensor_shape.SetInParent()
    for name, v in tensor.items():
        field = getattr(value.tensor, name)
        if isinstance(v, bytes):
            setattr(value.tensor, name, v)
        else:
            field.extend(v)
    return event.SerializeToString()


def write_log(folder, name: str, records: list[bytes]) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    write_records(path, records)
    return path


def test_the_shared_logs_give_the_manifests_points_exactly(capsys):
    code, out, err = run(capsys, "scalars", "--json", LOGS)
    assert code == 0 and err == ""
    assert json_lines(out) == MANIFEST["scalars"]
    keys = ("run", "tag", "step", "wall_time", "value")
    assert out.splitlines() == [json.dumps({key: p[key] for key in keys}) for p in MANIFEST["scalars"]]


def test_tf1_simple_values(capsys, tmp_path):
    write_log(tmp_path / "run1", "events.out.tfevents.5.host", [
        file_version(),
        Event(wall_time=2.0, graph_def=b"\x0a\x00").SerializeToString(),  # a graph: no points
        simple(1, 10.5, loss=0.25, acc=0.5),
        simple(2, 11.5, loss=float("nan")),
        simple(3, float("inf"), loss=float("-inf")),
    ])
    code, out, _ = run(capsys, "scalars", "--json", tmp_path)
    assert code == 0
    assert json_lines(out) == [
        {"run": "run1", "tag": "loss", "step": 1, "wall_time": 10.5, "value": 0.25},
        {"run": "run1", "tag": "acc", "step": 1, "wall_time": 10.5, "value": 0.5},
        {"run": "run1", "tag": "loss", "step": 2, "wall_time": 11.5, "value": "NaN"},
        {"run": "run1", "tag": "loss", "step": 3, "wall_time": "Infinity", "value": "-Infinity"},
    ]
    code, out, _ = run(capsys, "scalars", tmp_path)
    assert code == 0 and out.splitlines()[-1].split() == ["run1", "loss", "3", "inf", "-inf"]


def test_tensor_dtypes_and_a_tags_plugin_remembered_from_its_first_value(capsys, tmp_path):
    write_log(tmp_path, "events.out.tfevents.1.host", [
        file_version(),
        tensor_scalar(0, "f32", dtype=1, tensor_content=struct.pack("<f", 0.1)),
        tensor_scalar(1, "f32", metadata=False, dtype=1, float_val=[0.5]),  # no metadata: still scalars
        tensor_scalar(2, "f64", dtype=2, double_val=[0.1]),
        tensor_scalar(3, "i64", dtype=9, int64_val=[-7]),
        tensor_scalar(4, "half", dtype=19, tensor_content=struct.pack("<e", 1.5)),
        tensor_scalar(5, "bf16", dtype=14, half_val=[0x3FC0]),  # 1.5 in bfloat16
        tensor_scalar(6, "hist", plugin="histograms", dtype=1, float_val=[1.0]),  # another plugin
        tensor_scalar(7, "hist", metadata=False, dtype=1, float_val=[2.0]),  # remembered as histograms
        tensor_scalar(8, "text", plugin="text", dtype=7, string_val=[b"hello"]),
    ])
    code, out, _ = run(capsys, "scalars", "--json", tmp_path)
    assert code == 0
    assert [(p["run"], p["tag"], p["step"], p["value"]) for p in json_lines(out)] == [
        (".", "f32", 0, struct.unpack("<f", struct.pack("<f", 0.1))[0]),
        (".", "f32", 1, 0.5), (".", "f64", 2, 0.1), (".", "i64", 3, -7.0), (".", "half", 4, 1.5),
        (".", "bf16", 5, 1.5)]


def test_nested_runs_and_files_in_order(capsys, tmp_path):
    write_log(tmp_path / "a" / "b", "events.out.tfevents.20.host", [file_version(), simple(2, 2.0, x=2.0)])
    write_log(tmp_path / "a" / "b", "events.out.tfevents.10.host", [file_version(), simple(1, 1.0, x=1.0)])
    write_log(tmp_path / "z", "events.out.tfevents.5.host", [file_version(), simple(9, 9.0, y=9.0)])
    code, out, _ = run(capsys, "scalars", "--json", tmp_path)
    assert code == 0
    assert [(p["run"], p["step"]) for p in json_lines(out)] == [("z", 9), ("a/b", 1), ("a/b", 2)]


def test_a_file_cut_mid_record_gives_the_points_before_it_without_damage(capsys, tmp_path):
    data = open(LOGS / "train" / os.listdir(LOGS / "train")[0], "rb").read()
    folder = tmp_path / "train"
    folder.mkdir()
    (folder / "events.out.tfevents.1795775431.vm.29503.0.v2").write_bytes(data[:-20])
    code, out, err = run(capsys, "scalars", "--json", tmp_path)
    expected = [p for p in MANIFEST["scalars"] if p["run"] == "train"][:-1]
    assert code == 0 and err == ""
    assert json_lines(out) == expected


def test_a_corrupted_crc_in_the_middle_is_one_line_and_exit_1(capsys, tmp_path):
    folder = tmp_path / "train"
    path = write_log(folder, "events.out.tfevents.1.host",
                     [file_version()] + [simple(step, float(step), loss=step / 10) for step in range(10)])
    data = bytearray(open(path, "rb").read())
    data[data.index(simple(5, 5.0, loss=0.5)) + 3] ^= 0x01  # a byte of record 6's data
    open(path, "wb").write(bytes(data))
    code, out, err = run(capsys, "scalars", "--json", tmp_path)
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tfrlens-cli: problem: {path}: offset ") and "data_crc" in lines[0]
    steps = [p["step"] for p in json_lines(out)]
    assert len(steps) == 9 and steps == sorted(steps)  # every intact point, one lost
    code, out, _ = run(capsys, "scalars", "--json", "--no-crc", tmp_path)
    assert code == 0 and len(json_lines(out)) == 10


def test_a_damaged_header_in_the_middle_is_read_past(capsys, tmp_path):
    records = [file_version()] + [simple(step, float(step), loss=step / 10) for step in range(10)]
    path = write_log(tmp_path / "train", "events.out.tfevents.1.host", records)
    data = bytearray(open(path, "rb").read())
    data[data.index(simple(5, 5.0, loss=0.5)) - 12] ^= 0x01  # record 6's length
    open(path, "wb").write(bytes(data))
    code, out, err = run(capsys, "scalars", "--json", tmp_path)
    assert code == 1 and len(err.splitlines()) == 1 and f"problem: {path}: offset " in err
    assert [p["step"] for p in json_lines(out)] == [0, 1, 2, 3, 4, 6, 7, 8, 9]  # found again after it


def test_a_gzip_event_file_is_read_through_the_codecs_reader(capsys, tmp_path):
    records = [file_version()] + [simple(step, float(step), loss=1.0) for step in range(3)]
    (tmp_path / "r").mkdir()
    write_records(tmp_path / "r" / "events.out.tfevents.1.host.gz", records, "gzip")
    code, out, _ = run(capsys, "scalars", "--json", tmp_path)
    assert code == 0 and [p["step"] for p in json_lines(out)] == [0, 1, 2]


def test_a_record_that_is_not_an_event_is_a_problem_line(capsys, tmp_path):
    write_log(tmp_path / "r", "events.out.tfevents.1.host",
              [file_version(), simple(1, 1.0, loss=1.0), b"\x2a\xff\xff", b"\x2a\x05ab", simple(2, 2.0, loss=2.0)])
    code, out, err = run(capsys, "scalars", "--json", tmp_path)
    assert code == 1 and [p["step"] for p in json_lines(out)] == [1, 2]
    assert err.splitlines() == [f"tfrlens-cli: problem: {tmp_path / 'r' / 'events.out.tfevents.1.host'}: 2 intact "
                                "records not an Event (the first: intact record 2), left out"]


def test_tag_glob(capsys):
    code, out, _ = run(capsys, "scalars", "--json", "--tag", "metrics/*", LOGS)
    assert code == 0
    assert json_lines(out) == [p for p in MANIFEST["scalars"] if p["tag"].startswith("metrics/")]
    code, out, _ = run(capsys, "scalars", "--json", "--tag", "lo?s", LOGS)
    assert json_lines(out) == [p for p in MANIFEST["scalars"] if p["tag"] == "loss"]
    code, out, _ = run(capsys, "scalars", "--json", "--tag", "nothing", LOGS)
    assert code == 0 and out == ""


def test_csv_header_and_quoting(capsys, tmp_path):
    write_log(tmp_path / "run, one", "events.out.tfevents.1.host",
              [file_version(), simple(3, 1.25, **{'say "hi"': 0.5, "=cmd": 1.0})])
    code, out, _ = run(capsys, "scalars", "--csv", tmp_path)
    assert code == 0
    assert out.splitlines()[0] == "run,tag,step,wall_time,value"
    assert out.splitlines()[1] == '"run, one","say ""hi""",3,1.25,0.5'
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[2] == ["run, one", "'=cmd", "3", "1.25", "1.0"]  # a formula is escaped
    code, out, _ = run(capsys, "scalars", "--csv", "--csv-formulas", "keep", tmp_path)
    assert list(csv.reader(io.StringIO(out)))[2][1] == "=cmd"
    code, out, _ = run(capsys, "scalars", "--csv", LOGS)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [{"run": r["run"], "tag": r["tag"], "step": int(r["step"]), "wall_time": float(r["wall_time"]),
             "value": float(r["value"])} for r in rows] == MANIFEST["scalars"]


def test_the_table_has_a_header_and_a_line_per_point(capsys):
    code, out, _ = run(capsys, "scalars", LOGS)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(MANIFEST["scalars"])
    assert lines[0].split() == ["run", "tag", "step", "wall_time", "(UTC)", "value"]
    assert lines[1].split() == ["train", "loss", "0", "2026-11-27", "10:30:32.105Z", "1.0"]


def test_bad_paths_are_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    other = tmp_path / "data.tfrecord"
    write_records(other, [b"not an event"])
    for path, words in ((tmp_path / "missing", "no such file"), (tmp_path / "empty", "no TensorBoard event files"),
                        (other, "not a TensorBoard event file"), ("gs://bucket/logs", "not URLs")):
        code, out, err = run(capsys, "scalars", path)
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and words in err


def test_json_and_csv_go_alone(capsys):
    try:
        main(["scalars", "--json", "--csv", str(LOGS)])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--json with --csv was accepted")
    assert "not allowed with" in capsys.readouterr().err
