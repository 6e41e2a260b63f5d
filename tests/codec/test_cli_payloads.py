"""tfrlens-cli on records that are not Examples: --proto/--type, TFDS folders and label maps,
checked against the shared payloads' MANIFEST (what the reference library reads)."""
from __future__ import annotations

import csv
import json
import shutil

import pytest

from codec.cli.main import main
from tests.builders import FIXTURES, fixture_path

PAYLOADS = FIXTURES / "payloads"
REFERENCE = json.loads((PAYLOADS / "MANIFEST.json").read_text())
MESSAGES = PAYLOADS / "messages"
FRAMES = REFERENCE["frames.tfrecord"]
TFDS = PAYLOADS / "tfds" / "lens_tfds_demo" / "1.2.0"
TFDS_REF = REFERENCE["tfds/lens_tfds_demo/1.2.0"]
LABEL_MAP = PAYLOADS / "label_maps" / "label_map.pbtxt"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("schema", [FRAMES["descriptor_set"], FRAMES["proto"]])
def test_cat_proto_is_the_reference_json(capsys, schema):
    code, out, err = run(capsys, "cat", "--json", "--proto", MESSAGES / schema, "--type", FRAMES["type"],
                         MESSAGES / "frames.tfrecord")
    assert code == 0, err
    lines = json_lines(out)
    assert [line["value"] for line in lines] == [r["json"] for r in FRAMES["records"]]
    assert {line["kind"] for line in lines} == {"message"}


def test_without_proto_frames_are_schema_less_protobuf(capsys):
    code, out, _ = run(capsys, "cat", "--json", "--range", "0:3", MESSAGES / "frames.tfrecord")
    assert code == 0
    lines = json_lines(out)
    assert {line["kind"] for line in lines} == {"protobuf"}
    first = lines[0]["value"]["fields"][0]
    assert (first["number"], first["value"]["text"]) == (1, FRAMES["records"][0]["json"]["imageId"])


def test_proto_on_info_stats_schema_export_and_where(capsys, tmp_path):
    proto = ["--proto", MESSAGES / "frames.desc", "--type", "Frame"]  # the package may be left out
    frames = MESSAGES / "frames.tfrecord"
    code, out, _ = run(capsys, "info", *proto, frames)
    assert code == 0
    assert "decoded as:  lens.demo.Frame from frames.desc" in out
    assert f"message {len(FRAMES['records'])}" in out
    code, out, _ = run(capsys, "stats", "--json", *proto, frames)
    stats = json.loads(out)
    with_boxes = sum(1 for r in FRAMES["records"] if r["json"].get("boxes"))
    assert stats["kinds"] == {"message": len(FRAMES["records"])}
    assert stats["features"]["boxes.xmin"]["present"] == with_boxes
    code, out, _ = run(capsys, "schema", "--json", *proto, frames)
    assert {"image_id", "boxes.label", "captured_at.seconds"} <= set(json.loads(out)["features"])
    code, out, _ = run(capsys, "cat", "--json", *proto, "--where", 'split == "EVAL"', frames)
    expected = [i for i, r in enumerate(FRAMES["records"]) if r["json"].get("split") == "EVAL"]
    assert expected and [line["index"] for line in json_lines(out)] == expected
    target = tmp_path / "frames.csv"
    code, _, err = run(capsys, "export", "--format", "csv", "--to", target, *proto, frames)
    assert code == 0, err
    rows = list(csv.DictReader(target.open()))
    assert [row["image_id"] for row in rows] == [r["json"]["imageId"] for r in FRAMES["records"]]


def test_a_wrong_type_lists_the_types_in_one_line(capsys):
    code, out, err = run(capsys, "cat", "--proto", MESSAGES / "frames.desc", "--type", "lens.demo.Frames",
                         MESSAGES / "frames.tfrecord")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "lens.demo.Frame" in err and "lens.demo.Box" in err


def test_proto_and_type_go_together(capsys):
    code, _, err = run(capsys, "cat", "--proto", MESSAGES / "frames.desc", MESSAGES / "frames.tfrecord")
    assert code == 2 and "--type" in err and err.count("\n") == 1


def test_records_that_are_not_the_type_are_a_note_each(capsys, tmp_path):
    code, out, _ = run(capsys, "cat", "--json", "--proto", MESSAGES / "frames.desc", "--type", "lens.demo.Frame",
                       fixture_path("raw_pixels_32x32x3.tfrecord"))
    assert code == 0
    lines = json_lines(out)
    assert lines and all(line["kind"] == "raw" and "lens.demo.Frame" in line["note"] for line in lines)


def test_cat_of_a_tfds_folder_is_the_reference(capsys):
    code, out, err = run(capsys, "cat", "--json", TFDS)
    assert code == 0, err
    lines = json_lines(out)
    splits = list(TFDS_REF["splits"])
    order = sorted(splits, key=lambda s: ["train", "test"].index(s) if s in ("train", "test") else 2)
    expected = [(s, r) for s in order for r in TFDS_REF["splits"][s]["records"]]
    assert [(line["split"], line["features"]) for line in lines] == expected
    names = TFDS_REF["class_names"]
    assert all(line["names"]["label"] == [r["label"]["name"]] for line, (_, r) in zip(lines, expected))
    assert all(n in names for line in lines for n in line["names"]["label"])


def test_cat_of_one_tfds_shard_knows_its_split(capsys):
    shard = TFDS / TFDS_REF["splits"]["test"]["files"][0]
    code, out, _ = run(capsys, "cat", "--json", "--range", "0:2", shard)
    assert code == 0
    lines = json_lines(out)
    assert [line["split"] for line in lines] == ["test", "test"]
    assert [line["features"] for line in lines] == TFDS_REF["splits"]["test"]["records"][:2]


def test_info_of_a_tfds_folder_checks_the_counts(capsys, tmp_path):
    code, out, _ = run(capsys, "info", TFDS)
    assert code == 0
    assert f"tfds:        {TFDS_REF['name']} {TFDS_REF['version']}" in out
    for name, split in TFDS_REF["splits"].items():
        assert f"{name}: {split['num_examples']} examples" in out
    copy = tmp_path / "1.2.0"
    shutil.copytree(TFDS, copy)
    info = json.loads((copy / "dataset_info.json").read_text())
    info["splits"][0]["shardLengths"] = ["17"]
    (copy / "dataset_info.json").write_text(json.dumps(info))
    code, out, _ = run(capsys, "info", copy)
    assert code == 1
    assert "mismatch:" in out and "17" in out
    code, out, _ = run(capsys, "info", copy / TFDS_REF["splits"]["train"]["files"][0])
    assert code == 1 and "says 17" in out


def test_stats_of_a_tfds_folder_name_the_classes(capsys):
    code, out, _ = run(capsys, "stats", "--json", TFDS)
    assert code == 0
    label = json.loads(out)["features"]["label"]
    counts = {}
    for split in TFDS_REF["splits"].values():
        for r in split["records"]:
            counts[r["label"]["value"]] = counts.get(r["label"]["value"], 0) + 1
    assert {v: c for v, c in label["top"]} == counts
    assert label["names"] == {str(v): TFDS_REF["class_names"][v] for v in counts}


def detection_with_map(tmp_path):
    shutil.copy(fixture_path("detection.tfrecord"), tmp_path)
    shutil.copy(LABEL_MAP, tmp_path)
    return tmp_path / "detection.tfrecord"


def test_a_label_map_beside_the_file_names_the_classes(capsys, tmp_path):
    names = REFERENCE["label_map.pbtxt"]["names"]
    path = detection_with_map(tmp_path)
    code, out, _ = run(capsys, "cat", "--json", path)
    lines = json_lines(out)
    for line in lines:
        ids = [int(i) for i in line["value"]["features"]["feature"]["image/object/class/label"]["int64List"]["value"]]
        assert line["names"]["image/object/class/label"] == [names[str(i)] for i in ids]
    code, out, _ = run(capsys, "cat", "--json", "--where", 'image/object/class/label == "dog"', path)
    by_name = [line["index"] for line in json_lines(out)]
    code, out, _ = run(capsys, "cat", "--json", "--where", "image/object/class/label == 2", path)
    assert by_name and by_name == [line["index"] for line in json_lines(out)]
    code, out, _ = run(capsys, "stats", path)
    assert "1 (Cat)" in out


def test_label_map_option_and_its_errors(capsys, tmp_path):
    detection = fixture_path("detection.tfrecord")
    code, out, _ = run(capsys, "cat", "--json", "--where", 'image/object/class/label == "bird"',
                       "--label-map", LABEL_MAP, detection)
    assert code == 0 and json_lines(out)
    code, _, err = run(capsys, "cat", "--where", 'image/object/class/label == "cta"', "--label-map", LABEL_MAP,
                       detection)
    assert code == 2 and err.count("\n") == 1 and "Cat" in err
    bad = tmp_path / "bad.pbtxt"
    bad.write_text("item {\n  id: 1\n  name 'x'\n}\n")
    code, _, err = run(capsys, "info", "--label-map", bad, detection)
    assert code == 2 and err.count("\n") == 1 and "line 3" in err
    target = tmp_path / "d.csv"
    code, _, _ = run(capsys, "export", "--format", "csv", "--to", target, "--label-map", LABEL_MAP, detection)
    rows = list(csv.DictReader(target.open()))
    assert all(row["image/object/class/label (name)"] for row in rows)


def test_hostile_tensors_are_records_of_another_kind(capsys, tmp_path):
    from codec.decode.tensors import DATA_TYPES, TensorProto
    from codec.storage.writer import write_records

    deep = TensorProto(dtype=DATA_TYPES["DT_FLOAT"], float_val=[1.0])
    for _ in range(100):
        deep.tensor_shape.dim.add(size=1)
    splat = TensorProto(dtype=DATA_TYPES["DT_FLOAT"], float_val=[1.0])
    splat.tensor_shape.dim.add(size=100_000_000)
    path = tmp_path / "hostile.tfrecord"
    write_records(str(path), [deep.SerializeToString(), splat.SerializeToString()])
    for command in (["cat", "--json"], ["stats", "--json"], ["schema"]):
        code, out, err = run(capsys, *command, path)
        assert code == 0 and "Traceback" not in err
    code, out, _ = run(capsys, "cat", "--json", path)
    lines = json_lines(out)
    assert [line["kind"] for line in lines] == ["raw", "raw"]  # too large to expand here: raw, saying why
    assert "rank 100" in lines[0]["note"] and "100,000,000 elements" in lines[1]["note"]


def test_a_tfds_folder_without_its_shards(capsys, tmp_path):
    copy = tmp_path / "1.2.0"
    shutil.copytree(TFDS, copy)
    test_shard = copy / TFDS_REF["splits"]["test"]["files"][0]
    test_shard.unlink()
    code, out, _ = run(capsys, "info", copy)
    assert code == 1 and "'test': 0 records" in out
    for split in TFDS_REF["splits"].values():
        for name in split["files"]:
            (copy / name).unlink(missing_ok=True)
    code, out, err = run(capsys, "info", copy)
    assert code == 2 and out == "" and err.count("\n") == 1 and "no shard files" in err


def test_a_broken_label_map_found_beside_is_a_warning(capsys, tmp_path):
    shutil.copy(fixture_path("detection.tfrecord"), tmp_path)
    (tmp_path / "label_map.pbtxt").write_text("item {\n  id: 1\n  name x\n}\n")
    code, out, err = run(capsys, "cat", "--json", "--range", "0:1", tmp_path / "detection.tfrecord")
    assert code == 0 and "warning" in err and "label_map.pbtxt" in err
    assert "names" not in json_lines(out)[0]


def test_plain_cat_shows_each_records_note(capsys, tmp_path):
    other = tmp_path / "other.proto"
    other.write_text('syntax = "proto3";\npackage t;\nmessage A { string image_id = 1; }\n')
    code, out, _ = run(capsys, "cat", "--range", "0:1", "--proto", other, "--type", "A", MESSAGES / "frames.tfrecord")
    assert code == 0
    assert "# " in out and "unknown field" in out


def test_a_tfds_folder_decoded_as_a_message_keeps_its_splits(capsys):
    code, out, _ = run(capsys, "info", "--proto", MESSAGES / "frames.desc", "--type", "lens.demo.Frame", TFDS)
    assert "decoded as:  lens.demo.Frame" in out and f"tfds:        {TFDS_REF['name']}" in out
    code, out, _ = run(capsys, "cat", "--json", "--proto", MESSAGES / "frames.desc", "--type", "lens.demo.Frame",
                       TFDS)
    lines = json_lines(out)
    total = sum(split["num_examples"] for split in TFDS_REF["splits"].values())
    assert len(lines) == total and lines[0]["offset"] == 0
