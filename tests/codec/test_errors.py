"""The errors a damaged file raises, in msgpack's and fastavro's style: write a good file, flip
one bit or cut its end, and assert the exact error, its built-in base, and what its message names."""
from __future__ import annotations

import os
import random
import struct

import pytest

from codec.editing.document import Document
from codec.errors import (
    CorruptRecordError,
    ImageDecodeError,
    RecordIndexError,
    TFRecordError,
    TruncatedRecordError,
    UsageError,
)
from codec.format.crc import masked_crc
from codec.format.framing import HEADER_SIZE
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records

from .conftest import flip_in_place, record_offset


def records(n: int = 6, size: int = 300, seed: int = 11) -> list[bytes]:
    """Random (incompressible) records, so a cut at the end of a compressed file cuts record data."""
    rng = random.Random(seed)
    return [rng.randbytes(size + i) for i in range(n)]


@pytest.fixture
def good(tmp_path) -> tuple[str, list[bytes]]:
    recs = records()
    path = str(tmp_path / "good.tfrecord")
    write_records(path, recs)
    with open_tfrecord(path) as f:
        assert list(f) == recs  # the file is good before it is damaged
    return path, recs


# -- a flipped bit: CorruptRecordError, a ValueError ------------------------------------------
@pytest.mark.parametrize("i", [0, 3, 5])
@pytest.mark.parametrize("where", ["first data byte", "last data byte", "stored CRC"])
def test_a_flipped_bit_makes_the_record_a_corrupt_record_error(good, i, where):
    path, recs = good
    offset = record_offset(recs, i)
    data_start = offset + HEADER_SIZE
    pos = {"first data byte": data_start, "last data byte": data_start + len(recs[i]) - 1,
           "stored CRC": data_start + len(recs[i])}[where]
    flip_in_place(path, pos)
    with open(path, "rb") as fh:
        fh.seek(data_start)
        damaged = fh.read(len(recs[i]))
        (stored,) = struct.unpack("<I", fh.read(4))

    with open_tfrecord(path) as f:
        with pytest.raises(CorruptRecordError) as caught:
            f[i]
        exc = caught.value
        assert type(exc) is CorruptRecordError
        assert isinstance(exc, ValueError) and isinstance(exc, TFRecordError)
        assert not isinstance(exc, EOFError)
        assert (exc.offset, exc.index) == (offset, i)
        message = str(exc)
        assert path in message and f"record {i} at offset {offset}" in message
        # what was expected and what was found
        assert f"stored {stored:#010x}" in message and f"computed {masked_crc(damaged):#010x}" in message
        assert stored != masked_crc(damaged)
        # the damage stays in its record: every other one reads as written
        assert [f[j] for j in range(len(recs)) if j != i] == [r for j, r in enumerate(recs) if j != i]


def test_iterating_stops_at_the_corrupt_record_with_the_same_error(good):
    path, recs = good
    flip_in_place(path, record_offset(recs, 2) + HEADER_SIZE + 7)
    seen = []
    with open_tfrecord(path) as f:
        with pytest.raises(CorruptRecordError) as caught:
            for data in f:
                seen.append(data)
    assert seen == recs[:2]
    assert (caught.value.index, caught.value.offset) == (2, record_offset(recs, 2))


def test_with_crc_checks_off_a_flipped_bit_is_read_as_it_is(good):
    path, recs = good
    pos = record_offset(recs, 4) + HEADER_SIZE + 9
    flip_in_place(path, pos)
    with open_tfrecord(path, check_crc=False) as f:
        data = f[4]
    expected = bytearray(recs[4])
    expected[9] ^= 0x01
    assert data == bytes(expected)


# -- a cut end: TruncatedRecordError, an EOFError --------------------------------------------
@pytest.mark.parametrize("compression, suffix", [("none", ""), ("gzip", ".gz"), ("zlib", ".zz")])
def test_a_cut_end_makes_the_last_record_a_truncated_record_error(tmp_path, compression, suffix):
    recs = records()
    path = str(tmp_path / f"cut.tfrecord{suffix}")
    write_records(path, recs, compression)
    os.truncate(path, os.path.getsize(path) - 100)  # inside the last record's data (300+ random bytes)
    last = len(recs) - 1
    offset = record_offset(recs, last)  # compressed files: the offset in the decompressed stream

    with open_tfrecord(path) as f:
        assert len(f) == len(recs)
        with pytest.raises(TruncatedRecordError) as caught:
            f[last]
        exc = caught.value
        assert type(exc) is TruncatedRecordError
        assert isinstance(exc, EOFError) and isinstance(exc, ValueError)
        assert isinstance(exc, CorruptRecordError) and isinstance(exc, TFRecordError)
        assert (exc.offset, exc.index) == (offset, last)
        assert path in str(exc) and f"record {last} at offset {offset}" in str(exc)
        assert f[:last] == recs[:last]  # what comes before the cut is whole


def test_a_cut_end_is_reported_while_iterating(tmp_path):
    recs = records(3)
    path = str(tmp_path / "cut.tfrecord")
    write_records(path, recs)
    os.truncate(path, os.path.getsize(path) - 5)  # the stored CRC and one data byte of the last record
    with open_tfrecord(path) as f:
        it = iter(f)
        assert [next(it), next(it)] == recs[:2]
        with pytest.raises(EOFError):  # what a caller that knows only the built-ins catches
            next(it)


# -- a record number out of range: an IndexError ----------------------------------------------
@pytest.mark.parametrize("i", [6, -7, 100])
def test_a_record_number_out_of_range_is_a_record_index_error(good, i):
    path, recs = good
    with open_tfrecord(path) as f:
        with pytest.raises(RecordIndexError) as caught:
            f[i]
        assert isinstance(caught.value, IndexError) and isinstance(caught.value, UsageError)
        assert str(caught.value) == f"record {i} out of range: {path} has {len(recs)} records"
        assert f[-1] == recs[-1]
        assert list(f) == recs  # iteration still ends on the IndexError


@pytest.mark.parametrize("i", [6, -7, 100])
def test_a_document_record_out_of_range_is_a_record_index_error(good, i):
    path, recs = good
    with open_tfrecord(path) as f:
        doc = Document(f)
        with pytest.raises(RecordIndexError) as caught:
            doc.data(i)
        assert isinstance(caught.value, IndexError) and isinstance(caught.value, UsageError)
        assert str(caught.value) == f"record {i} out of range: the document has {len(recs)} records"
        with pytest.raises(IndexError):
            doc.replace(i, b"x")
        assert list(doc) == recs and not doc.modified  # a refused edit changes nothing


# -- images and arguments ------------------------------------------------------------------------
def test_an_image_that_cannot_be_decoded_is_an_image_decode_error():
    from codec.decode.images import ImageRef, decode_image

    ref = ImageRef("image/encoded", 0, None, "encoded", "PNG", 4, 4, 3, b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    with pytest.raises(ImageDecodeError, match="cannot decode PNG image in 'image/encoded' value 0") as caught:
        decode_image(ref)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TFRecordError)


@pytest.mark.parametrize("call", ["parse_raw_shape", "stretch", "max_side"])
def test_bad_image_arguments_are_usage_errors(call):
    from codec.decode.images import ImageRef, parse_raw_shape, thumbnail

    ref = ImageRef("image", 0, None, "raw", "RAW", 2, 2, 1, b"\0" * 4)
    with pytest.raises(UsageError) as caught:
        if call == "parse_raw_shape":
            parse_raw_shape("3 by 4")
        elif call == "stretch":
            thumbnail(ref, 8, stretch="loud")
        else:
            thumbnail(ref, 0)
    assert isinstance(caught.value, ValueError)


def test_writing_to_a_closed_writer_is_a_usage_error(tmp_path):
    from codec.storage.writer import TFRecordWriter

    path = tmp_path / "w.tfrecord"
    with TFRecordWriter(path) as w:
        w.write(b"one")
    with pytest.raises(UsageError, match="closed") as caught:
        w.write(b"two")
    assert isinstance(caught.value, ValueError)
    with open_tfrecord(path) as f:
        assert list(f) == [b"one"]
