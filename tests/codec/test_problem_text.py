"""Every kind of damage in plain words, and what TensorFlow does there, checked against TensorFlow's own runs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from codec import ProblemKind, RecordStatus, TFRecordFile
from codec.format.problem_text import (
    DAMAGE,
    KIND_WORDS,
    damage_key,
    damage_line,
    explain,
    explain_problem,
    status_key,
    tensorflow_stops,
)
from codec.sources.record_file import open_record_file
from tests.builders import FIXTURES, MANIFEST, fixture_path

DOCS = Path(__file__).resolve().parents[2] / "docs"
FORMATS = FIXTURES / "formats"
DAMAGED = sorted(name for name, entry in MANIFEST.items()
                 if entry.get("corruption") and not entry["corruption"].get("not_a_tfrecord"))


def test_every_problem_kind_and_damaged_status_has_words():
    for kind in ProblemKind:
        assert kind.value in DAMAGE and KIND_WORDS[kind] == DAMAGE[kind.value].name
        assert "_" not in KIND_WORDS[kind]
    for status in RecordStatus:
        key = status_key(status)
        assert (key is None) == (status <= RecordStatus.OK)
        if key is not None:
            assert key in DAMAGE
    for key, text in DAMAGE.items():
        sentences = explain(key, 12)
        assert sentences.startswith(text.happened[0].upper() + text.happened[1:]) and sentences.endswith(".")
        assert "DataLossError" in sentences and "_" not in text.name, key


def test_tensorflow_stops_at_the_record_it_names():
    assert tensorflow_stops("data_crc", 12) == \
        'tf.data stops with DataLossError ("corrupted record") at record 12, after yielding records 0–11'
    assert tensorflow_stops("truncated", 1).endswith("after yielding record 0")
    assert tensorflow_stops("truncated", 0).endswith("before yielding any record")
    assert "never gets here" in tensorflow_stops("data_crc", 40, first=12) and "record 12" in \
        tensorflow_stops("data_crc", 40, first=12)
    assert tensorflow_stops("decompress", None) == 'tf.data stops here with DataLossError ("inflate() failed")'
    assert damage_line("data_crc", 3).startswith("data CRC: the record's bytes changed after it was written")


@pytest.mark.parametrize("name", DAMAGED)
def test_the_words_match_what_tensorflow_did_on_the_fixtures(name):
    entry = MANIFEST[name]
    f = TFRecordFile(fixture_path(name), use_cache=False)
    f.verify()
    first = f.problems[0]
    record = first.index if first.index is not None else f.record_before(first) + 1
    assert record == entry["tf_records_read"]
    key = damage_key(first)
    assert entry["tf_error"].startswith(f"DataLossError: {DAMAGE[key].tensorflow}")
    assert f"at record {record}," in explain_problem(first, record)


def test_not_a_tfrecord_matches_tensorflow():
    entry = MANIFEST["not_a_tfrecord.jpg"]
    assert entry["tf_records_read"] == 0
    assert entry["tf_error"].startswith(f"DataLossError: {DAMAGE['not_a_tfrecord'].tensorflow}")


def test_damaged_files_page_holds_the_table():
    page = (DOCS / "damage.md").read_text()
    rows = re.findall(r"^\| \*\*(.+?)\*\* \| (.+?) \| (.+?) \|$", page, re.M)
    assert rows == [(t.name, t.happened[0].upper() + t.happened[1:] + ".", f"`DataLossError` ({t.tensorflow})")
                    for t in DAMAGE.values()]


def test_info_says_what_the_problems_mean_and_where_tensorflow_stops(capsys):
    from codec.cli.main import main

    assert main(["info", fixture_path("garbage_middle.tfrecord")]) == 1
    out = capsys.readouterr().out.splitlines()
    at = out.index("meaning:")
    assert out[at + 1] == f"  length_crc: {DAMAGE['length_crc'].happened}"
    assert out[at + 2] == 'tensorflow:  tf.data stops with DataLossError ("corrupted record") at record 10, ' \
                          "after yielding records 0–9"


def test_array_record_damage_is_a_chunks_and_names_googles_reader_not_tf_data():
    from codec.format.problem_text import ARRAY_RECORD, damage_table, kind_words

    f = open_record_file(FORMATS / "default.array_record").build_index()
    assert f.container == ARRAY_RECORD
    for kind in (ProblemKind.DATA_CRC, ProblemKind.TRUNCATED, ProblemKind.GARBAGE):
        text = damage_table(ARRAY_RECORD)[kind.value]
        assert kind_words(kind, ARRAY_RECORD) == text.name and text.name != KIND_WORDS[kind]
        sentences = explain(kind.value, 3, 0, ARRAY_RECORD)
        assert "Google's ArrayRecordReader" in sentences and "tf.data" not in sentences
        assert damage_line(kind.value, 3, 0, ARRAY_RECORD).startswith(f"{text.name}: ")
    assert kind_words(ProblemKind.DATA_CRC) == "data CRC"  # TFRecord's words stay TFRecord's
    assert explain("data_crc", 3, container=ARRAY_RECORD).startswith("The chunk that holds this record")
