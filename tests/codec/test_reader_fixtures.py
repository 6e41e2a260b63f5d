"""The reader against files TensorFlow wrote: records, bytes, kinds, damage."""
from __future__ import annotations

import hashlib

import pytest
from google.protobuf import json_format

from codec import (
    Compression,
    FileAccessError,
    NotTFRecordError,
    ProblemKind,
    RecordStatus,
    TFRecordFile,
    decode_record,
    open_tfrecord,
)
from tests.builders import MANIFEST, fixture_path

from .conftest import expected_intact

READABLE = [name for name, e in MANIFEST.items() if not e.get("corruption", {}).get("not_a_tfrecord")]
DAMAGED = [name for name in READABLE if "corruption" in MANIFEST[name]]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("name", READABLE)
def test_compression_is_sniffed_from_content(name):
    with TFRecordFile(fixture_path(name)) as f:
        assert f.compression is Compression(MANIFEST[name]["compression"].lower())


@pytest.mark.parametrize("name", READABLE)
def test_intact_records_byte_for_byte_and_nothing_else_ok(name):
    with open_tfrecord(fixture_path(name)) as f:
        f.verify()
        ok = [f.read(i).data for i in range(len(f)) if not f.index.status(i).damaged]
        assert [sha(d) for d in ok] == expected_intact(name)


@pytest.mark.parametrize("name", READABLE)
def test_records_tensorflow_reads_have_its_kind_length_and_json(name):
    with open_tfrecord(fixture_path(name)) as f:
        for rec in MANIFEST[name]["records"]:
            data = f[rec["index"]]
            assert len(data) == rec["length"]
            assert sha(data) == rec["sha256"]
            decoded = decode_record(data)
            assert decoded.kind.value == rec["kind"]
            if "json" in rec:
                assert json_format.MessageToDict(decoded.message) == rec["json"]


@pytest.mark.parametrize("name", DAMAGED)
def test_problem_reported_where_the_manifest_says(name):
    with open_tfrecord(fixture_path(name)) as f:
        f.verify()
        expected = MANIFEST[name]["corruption"]["problems"]
        found = [(p.offset, p.kind.value) for p in f.problems]
        assert len(found) == len(expected)
        for (offset, kind), want in zip(found, expected):
            assert kind == want["problem"]
            if "offset" in want:
                assert offset == want["offset"]


def test_data_crc_damage_is_found_on_read_even_before_verify():
    with open_tfrecord(fixture_path("corrupt_data_crc.tfrecord")) as f:
        assert len(f) == 30
        assert f.index.status(5) is RecordStatus.UNCHECKED  # opening checks headers only
        rec = f.read(5)
        assert rec.status is RecordStatus.DATA_CRC and rec.stored_crc != rec.computed_crc
        with pytest.raises(ValueError, match="record 5 at offset 350"):
            f[5]
        assert f[6] == f.read(6).data


def test_records_after_a_resync_keep_counting():
    with open_tfrecord(fixture_path("corrupt_length.tfrecord")) as f:
        (problem,) = f.problems
        assert problem.index is None and problem.kind is ProblemKind.LENGTH_CRC
        assert f.record_info(3).offset > problem.offset  # file record 4 is our record 3
        assert sha(f[3]) == MANIFEST["corrupt_length.tfrecord"]["corruption"]["intact_sha256"][3]


def test_truncated_record_is_listed_with_its_partial_bytes():
    with open_tfrecord(fixture_path("truncated.tfrecord")) as f:
        assert len(f) == 21
        info = f.record_info(20)
        assert info.status is RecordStatus.TRUNCATED and info.offset == 1550
        rec = f.read(20)
        assert 0 < len(rec.data) < rec.info.length
        with pytest.raises(EOFError):
            f[20]


def test_truncated_gzip_keeps_every_record_decompressed_before_the_cut():
    with open_tfrecord(fixture_path("truncated.tfrecord.gz")) as f:
        (problem,) = f.problems
        assert problem.kind is ProblemKind.TRUNCATED
        assert problem.compressed_offset is not None and problem.compressed_offset <= f.file_size
        assert "GZIP stream ends early" in problem.detail
        assert sum(1 for _ in f.intact()) == MANIFEST["truncated.tfrecord.gz"]["tf_records_read"]


def test_not_a_tfrecord_names_the_path():
    path = fixture_path("not_a_tfrecord.jpg")
    with pytest.raises(NotTFRecordError, match=r"not a TFRecord file: .*not_a_tfrecord\.jpg"):
        TFRecordFile(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileAccessError, match="no such file"):
        TFRecordFile(tmp_path / "nope.tfrecord")
    with pytest.raises(FileAccessError, match="is a directory"):
        TFRecordFile(tmp_path)


def test_unreadable_file(tmp_path):
    import os

    path = tmp_path / "secret.tfrecord"
    path.write_bytes(b"")
    path.chmod(0)
    if os.access(path, os.R_OK):
        pytest.skip("running as a user who can read anything (root)")
    with pytest.raises(FileAccessError, match="cannot read"):
        TFRecordFile(path)


def test_slices_iteration_and_negative_indexes():
    with open_tfrecord(fixture_path("structured.tfrecord")) as f:
        everything = list(f)
        assert len(everything) == 100
        assert f[10:13] == everything[10:13]
        assert f[-1] == everything[-1]
        with pytest.raises(IndexError, match="out of range"):
            f[100]


def test_compressed_random_access_matches_plain():
    with open_tfrecord(fixture_path("structured.tfrecord")) as plain, \
            open_tfrecord(fixture_path("structured.tfrecord.gz")) as gz, \
            open_tfrecord(fixture_path("structured.zlib.tfrecord")) as zl:
        order = [99, 0, 50, 51, 3, 98]
        assert [gz[i] for i in order] == [plain[i] for i in order] == [zl[i] for i in order]
        assert [gz.record_info(i).offset for i in order] == [plain.record_info(i).offset for i in order]
