"""tfrlens-cli stats, schema and --where on cat and export: outputs and exit codes."""
from __future__ import annotations

import json

import pytest

from codec.cli.main import main
from tests.builders import fixture_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_json_contract(capsys):
    code, out, err = run(capsys, "stats", "--json", fixture_path("flowers_jpeg.tfrecord"))
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["records"] == 25 and set(report["features"]) == {"encoded", "label", "text"}
    label = report["features"]["label"]
    assert label["present"] == 25 and label["dtype"] == "int64"
    assert sorted(label["top"]) == [[0, 5], [1, 5], [2, 5], [3, 5], [4, 5]]
    assert {"min", "max", "mean", "std", "nan", "inf", "histogram", "values_per_record"} <= set(label)
    assert report["features"]["encoded"]["image_formats"] == {"JPEG": 25}


def test_stats_json_for_sequence_examples(capsys):
    code, out, _ = run(capsys, "stats", "--json", fixture_path("sequence_examples.tfrecord"))
    report = json.loads(out)
    assert code == 0 and "features" not in report
    assert set(report["context"]) == {"length", "my_bytes"} and set(report["sequence"]) == {"frames", "my_ints"}
    assert report["sequence"]["my_ints"]["length"]["max"] == 10


def test_stats_human_table(capsys):
    code, out, _ = run(capsys, "stats", fixture_path("structured.tfrecord"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith("structured.tfrecord: 100 records (example 100)")
    assert "  int_col  [int64]  in 100 of 100 records (100%)" in lines
    assert any(line.strip().startswith("values             min 0  max 99  mean 49.5") for line in lines)


def test_stats_where(capsys):
    code, out, _ = run(capsys, "stats", "--json", "--where", "label == 2 or text == 'roses'",
                       fixture_path("flowers_jpeg.tfrecord"))
    report = json.loads(out)
    assert code == 0 and report["where"] == "label == 2 or text == 'roses'"
    assert report["records"] == 5  # roses is label 2
    assert report["features"]["text"]["top"] == [["roses", 5]]
    code, out, _ = run(capsys, "stats", "--where", "label == 2", fixture_path("flowers_jpeg.tfrecord"))
    assert out.splitlines()[0].endswith("5 records (example 5), where label == 2")


def test_stats_on_damaged_file_exits_1(capsys):
    code, out, _ = run(capsys, "stats", "--json", fixture_path("corrupt_data_crc.tfrecord"))
    report = json.loads(out)
    assert code == 1 and report["damaged_records"] == 1 and report["records"] == 29


def test_schema_python_and_json(capsys):
    code, out, _ = run(capsys, "schema", fixture_path("flowers_jpeg.tfrecord"))
    assert code == 0
    assert out.splitlines()[-5:] == [
        "features_spec = {",
        '    "encoded": tf.io.FixedLenFeature([], dtype=tf.string),',
        '    "label": tf.io.FixedLenFeature([], dtype=tf.int64),',
        '    "text": tf.io.FixedLenFeature([], dtype=tf.string),',
        "}",
    ]
    code, out, _ = run(capsys, "schema", "--json", fixture_path("flowers_jpeg.tfrecord"))
    assert json.loads(out)["features"]["label"] == {"type": "FixedLenFeature", "shape": [], "dtype": "int64"}
    code, out, _ = run(capsys, "schema", "--json", fixture_path("sequence_examples.tfrecord"))
    report = json.loads(out)
    assert report["sequence"]["frames"]["type"] == "FixedLenSequenceFeature"


def test_schema_where_changes_the_spec(capsys):
    path = fixture_path("zero_length_record.tfrecord")
    _, out, _ = run(capsys, "schema", "--json", path)
    assert json.loads(out)["features"]["a"]["type"] == "VarLenFeature"
    _, out, _ = run(capsys, "schema", "--json", "--where", "has(a)", path)
    report = json.loads(out)
    assert report["features"]["a"]["type"] == "FixedLenFeature" and report["where"] == "has(a)"
    _, out, _ = run(capsys, "schema", "--where", "has(a)", path)
    assert "records where has(a)" in out.splitlines()[0]


def test_cat_where(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--where", '"roses" in text', fixture_path("flowers_jpeg.tfrecord"))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 5
    assert all(line["value"]["features"]["feature"]["text"]["bytesList"]["value"] == ["cm9zZXM="] for line in lines)
    code, out, _ = run(capsys, "cat", "--json", "--range", "90:", "--where", "int_col < 95",
                       fixture_path("structured.tfrecord"))
    assert [json.loads(line)["index"] for line in out.splitlines()] == [90, 91, 92, 93, 94]
    code, out, _ = run(capsys, "cat", "--where", "kind == 'raw'", fixture_path("raw_strings.tfrecord"))
    assert out.count("# record ") == 2


def test_cat_where_on_status(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--where", 'status != "ok"', fixture_path("corrupt_data_crc.tfrecord"))
    assert code == 1 and [json.loads(line)["index"] for line in out.splitlines()] == [5]


def test_export_records_and_where_combine(capsys, tmp_path):
    out_path = tmp_path / "subset.jsonl"
    code, _, err = run(capsys, "export", fixture_path("structured.tfrecord"), "--to", str(out_path), "--format",
                       "jsonl", "--records", "50,10:20,3", "--where", "int_col >= 15 or int_col == 3")
    assert code == 0 and "wrote 7 records" in err
    indexes = [json.loads(line)["index"] for line in out_path.read_text().splitlines()]
    assert indexes == [50, 15, 16, 17, 18, 19, 3]  # the spec's order


def test_export_where_alone(capsys, tmp_path):
    out_path = tmp_path / "two.tfrecord"
    code, _, _ = run(capsys, "export", fixture_path("flowers_jpeg.tfrecord"), "--to", str(out_path),
                     "--where", "label == 4")
    assert code == 0
    code, out, _ = run(capsys, "stats", "--json", str(out_path))
    assert json.loads(out)["features"]["label"]["top"] == [[4, 5]]


@pytest.mark.parametrize("command", [["stats"], ["schema"], ["cat"], ["export", "--to", "unused.jsonl"]])
def test_bad_expression_is_a_usage_error_naming_the_position(capsys, command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *command, "--where", "label ==", fixture_path("flowers_jpeg.tfrecord"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "expected a value after '==' at position 8" in err and err.startswith("tfrlens-cli: bad --where")
    assert not (tmp_path / "unused.jsonl").exists()


def test_unreadable_input_exits_2(capsys):
    code, _, err = run(capsys, "stats", fixture_path("not_a_tfrecord.jpg"))
    assert code == 2 and "not a TFRecord file" in err
    code, _, err = run(capsys, "schema", fixture_path("no-such-file.tfrecord"))
    assert code == 2 and "no such file" in err
