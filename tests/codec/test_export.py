"""Exports over the reference fixtures, and the CLI export command."""
from __future__ import annotations

import csv
import json
import os

import pytest
from PIL import Image

from codec import TFRecordFile, UsageError, open_tfrecord
from codec.cli.main import main
from codec.editing.document import Document
from codec.ops.export import export, parse_records_spec
from tests.builders import MANIFEST, fixture_path


def test_records_spec():
    assert parse_records_spec("1,3,10:13", 20) == [1, 3, 10, 11, 12]
    assert parse_records_spec("-1,:2", 5) == [4, 0, 1]
    assert parse_records_spec(None, 3) == [0, 1, 2]
    assert parse_records_spec("2,2,1:3", 5) == [2, 1]
    with pytest.raises(UsageError, match="out of range"):
        parse_records_spec("7", 5)
    with pytest.raises(UsageError, match="bad record spec 'x'"):
        parse_records_spec("1,x", 5)


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_tfrecord_export_follows_tensorflows_reading_rules(tmp_path, compression):
    out = tmp_path / "subset.tfrecord"
    with open_tfrecord(fixture_path("flowers_jpeg.tfrecord")) as f:
        report = export(f, str(out), "tfrecord", [0, 5, 6, 24], compression)
        expected = [f[i] for i in (0, 5, 6, 24)]
    assert report.records == 4
    with TFRecordFile(out, use_cache=False) as g:  # the reader with every CRC checked
        g.verify()
        assert g.problems == [] and g.compression.value == compression and list(g) == expected


@pytest.mark.parametrize("name", ["structured.tfrecord", "sequence_examples.tfrecord", "raw_strings.tfrecord"])
def test_jsonl_export_equals_cat_json(tmp_path, capsys, name):
    out = tmp_path / "out.jsonl"
    with open_tfrecord(fixture_path(name)) as f:
        export(f, str(out), "jsonl")
    main(["cat", "--json", fixture_path(name)])
    assert out.read_text() == capsys.readouterr().out
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for got, want in zip(lines, MANIFEST[name]["records"]):
        if "json" in want:
            assert got["value"] == want["json"]


def test_csv_export_of_flat_features(tmp_path):
    out = tmp_path / "out.csv"
    with open_tfrecord(fixture_path("structured.tfrecord")) as f:
        report = export(f, str(out), "csv")
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 100 and report.notes == []
    first = MANIFEST["structured.tfrecord"]["records"][7]["json"]["features"]["feature"]
    assert rows[7]["int_col"] == first["int64List" and "int_col"]["int64List"]["value"][0]
    assert rows[7]["byte_col"] == "row-7"
    assert float(rows[7]["float_col"]) == pytest.approx(first["float_col"]["floatList"]["value"][0])


def test_csv_says_what_it_could_not_represent(tmp_path):
    out = tmp_path / "seq.csv"
    with open_tfrecord(fixture_path("sequence_examples.tfrecord")) as f:
        report = export(f, str(out), "csv")
    assert any("feature lists of 10 SequenceExample" in n for n in report.notes)
    out2 = tmp_path / "flowers.csv"
    with open_tfrecord(fixture_path("flowers_jpeg.tfrecord")) as f:
        report = export(f, str(out2), "csv")
    assert any("25 binary bytes value(s) written as base64" in n for n in report.notes)
    rows = list(csv.DictReader(out2.open()))
    import base64

    assert base64.b64decode(rows[0]["encoded"])[:2] == b"\xff\xd8"  # JPEG magic


def test_csv_lists_are_json_arrays(tmp_path):
    out = tmp_path / "det.csv"
    with open_tfrecord(fixture_path("detection.tfrecord")) as f:
        export(f, str(out), "csv", [0])
    row = next(csv.DictReader(out.open()))
    xmins = json.loads(row["image/object/bbox/xmin"]) if row["image/object/bbox/xmin"].startswith("[") else \
        [float(row["image/object/bbox/xmin"])]
    want = MANIFEST["detection.tfrecord"]["records"][0]["json"]["features"]["feature"]["image/object/bbox/xmin"]
    assert xmins == pytest.approx(want["floatList"]["value"])


@pytest.mark.parametrize("name, count, ext, size", [
    ("flowers_jpeg.tfrecord", 25, ".jpg", None),
    ("raw_pixels_32x32x3.tfrecord", 40, ".png", (32, 32)),
    ("sequence_examples.tfrecord", None, ".png", None),
])
def test_images_export(tmp_path, name, count, ext, size):
    out = tmp_path / "imgs"
    with open_tfrecord(fixture_path(name)) as f:
        report = export(f, str(out), "images")
    files = sorted(os.listdir(out))
    assert files and all(x.endswith(ext) for x in files) and report.files == len(files)
    if count is not None:
        assert len(files) == count
    assert files[0].startswith("000000_")
    with Image.open(out / files[0]) as im:
        im.load()
        if size:
            assert im.size == size
    if name.startswith("sequence"):
        assert any("_step1" in x for x in files)


def test_export_from_an_edited_document(tmp_path):
    with open_tfrecord(fixture_path("structured.tfrecord")) as f:
        d = Document(f)
        d.delete(range(10, 100))
        d.replace(0, b"not a proto \xff")
        out = tmp_path / "doc.jsonl"
        export(d, str(out), "jsonl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 10 and lines[0]["kind"] == "raw" and "offset" not in lines[0]


def test_cli_export(tmp_path, capsys):
    out = tmp_path / "o.tfrecord.gz"
    code = main(["export", fixture_path("structured.tfrecord"), "--to", str(out), "--format", "tfrecord",
                 "--compression", "gzip", "--records", "1,3,10:20"])
    assert code == 0 and "wrote 12 records" in capsys.readouterr().err
    with TFRecordFile(out, use_cache=False) as g:
        assert len(g.build_index()) == 12 and g.compression.value == "gzip"
    code = main(["export", fixture_path("structured.tfrecord"), "--to", str(out), "--records", "500"])
    assert code == 2 and "out of range" in capsys.readouterr().err
