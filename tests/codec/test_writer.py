"""The writer: TensorFlow's exact bytes, every compression, atomic saves."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec import Compression, FileAccessError, TFRecordWriter, open_tfrecord, write_records
from tests.builders import fixture_path

records_st = st.lists(st.binary(max_size=300), max_size=30)


@pytest.mark.parametrize("name", ["structured.tfrecord", "flowers_jpeg.tfrecord", "sequence_examples.tfrecord",
                                  "zero_length_record.tfrecord", "raw_strings.tfrecord", "my_example.tfrecords"])
def test_plain_output_is_byte_identical_to_tensorflows(tmp_path, name):
    with open_tfrecord(fixture_path(name)) as f:
        out = tmp_path / "copy.tfrecord"
        write_records(out, f)
    assert out.read_bytes() == open(fixture_path(name), "rb").read()


@settings(max_examples=60, deadline=None)
@given(records=records_st, compression=st.sampled_from(list(Compression)))
def test_round_trip_every_compression(tmp_path_factory, records, compression):
    out = tmp_path_factory.mktemp("rt") / "out.tfrecord"
    write_records(out, records, compression)
    with open_tfrecord(out, use_cache=False) as f:
        assert f.compression is compression
        f.verify()
        assert f.problems == []
        assert list(f) == records


def test_failure_half_way_leaves_the_target_untouched(tmp_path):
    target = tmp_path / "data.tfrecord"
    write_records(target, [b"original"])
    before = target.read_bytes()
    with pytest.raises(RuntimeError):
        with TFRecordWriter(target) as w:
            w.write(b"new record")
            raise RuntimeError("crash in the middle")
    assert target.read_bytes() == before
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []  # no temporary left behind


def test_disk_full_is_one_clear_error_and_nothing_is_lost(tmp_path, monkeypatch):
    import errno

    target = tmp_path / "data.tfrecord"
    write_records(target, [b"original"])
    before = target.read_bytes()
    w = TFRecordWriter(target)

    def full(_chunk):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(w._f, "write", full)
    with pytest.raises(FileAccessError, match="disk full while writing .*data.tfrecord"):
        w.write(b"x")
    assert target.read_bytes() == before
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []


def test_writing_into_a_directory_path_is_refused(tmp_path):
    with pytest.raises(FileAccessError, match="is a directory"):
        TFRecordWriter(tmp_path)
