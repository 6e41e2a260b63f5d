"""Every record source (a file, a shard set, the edited records of a document) answers the
declared interface, codec.sources.protocol.RecordSource, the same way: the app never asks which it holds."""
from __future__ import annotations

import os

import numpy as np
import pytest

from codec.editing.document import Document
from codec.editing.edited import EditedFile
from codec.format.framing import HEADER_SIZE, OVERHEAD, RecordStatus
from codec.sources.protocol import NO_OFFSET, RecordReader, RecordSource
from codec.sources.tfrecord_file import TFRecordFile
from codec.sources.shard_set import ShardSet
from codec.storage.writer import write_records

from .conftest import flip_in_place, record_offset


def protocol_members(protocol) -> set[str]:
    """The names a Protocol declares (attributes and methods), its bases' included."""
    names = set()
    for klass in protocol.__mro__:
        if klass in (object,) or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= set(getattr(klass, "__annotations__", {}))
        names |= {n for n, v in vars(klass).items()
                  if (not n.startswith("_") or n in ("__len__", "__iter__"))
                  and (callable(v) or isinstance(v, property))}
    return names


RECORDS = [f"record {i} ".encode() * (i + 1) for i in range(12)]


@pytest.fixture
def sources(tmp_path):
    """A file, a set of two shards of the same records, and an edited document, all indexed; record 5 damaged."""
    path = str(tmp_path / "one.tfrecord")
    write_records(path, RECORDS)
    flip_in_place(path, record_offset(RECORDS, 5) + HEADER_SIZE + 2)
    one = TFRecordFile(path, use_cache=False)
    one.verify()

    first, second = str(tmp_path / "set-00000-of-00002.tfrecord"), str(tmp_path / "set-00001-of-00002.tfrecord")
    write_records(first, RECORDS[:4])
    write_records(second, RECORDS[4:])
    flip_in_place(second, record_offset(RECORDS[4:], 1) + HEADER_SIZE + 2)
    shards = ShardSet([first, second], use_cache=False)
    shards.verify()

    base = TFRecordFile(path, use_cache=False)
    base.verify()
    doc = Document(base)
    doc.replace(0, b"edited first record")
    edited = EditedFile(doc)
    yield {"file": one, "shards": shards, "edited": edited}
    one.close()
    shards.close()
    base.close()


@pytest.mark.parametrize("kind", ["file", "shards", "edited"])
def test_each_source_has_every_declared_member(sources, kind):
    source = sources[kind]
    missing = sorted(n for n in protocol_members(RecordSource) if not hasattr(source, n))
    assert missing == []
    pinned = source.pinned(3)
    assert sorted(n for n in protocol_members(RecordReader) if not hasattr(pinned, n)) == []


@pytest.mark.parametrize("kind", ["file", "shards", "edited"])
def test_each_source_reads_rows_and_their_facts_alike(sources, kind):
    source = sources[kind]
    assert len(source) == len(RECORDS) and source.indexed and source.verified
    expected = list(RECORDS)
    if kind == "edited":
        expected[0] = b"edited first record"
    for i in range(len(source)):
        rec = source.read(i)
        info = source.record_info(i)
        assert info.index == i == rec.info.index
        if i != 5:
            assert rec.data == expected[i]
        path, offset = source.location(i)
        assert offset == source.index.offset(i)
        if kind == "edited" and i == 0:
            assert offset == NO_OFFSET and source.modified
            continue
        # the location is where the record's frame really is
        with open(path, "rb") as f:
            f.seek(offset + HEADER_SIZE)
            on_disk = f.read(len(RECORDS[i]))
        assert on_disk == rec.data or i == 5
    statuses = source.index.statuses()
    assert statuses.dtype == np.uint8 and len(statuses) == len(source)
    assert np.flatnonzero(statuses == RecordStatus.DATA_CRC).tolist() == [5]
    assert source.problem_count() == len(source.problems) == 1


@pytest.mark.parametrize("kind", ["file", "shards", "edited"])
def test_a_problem_leads_back_to_its_row(sources, kind):
    source = sources[kind]
    (problem,) = source.problems
    assert source.record_before(problem) == 5
    assert source.read(5).status is RecordStatus.DATA_CRC


@pytest.mark.parametrize("kind", ["file", "shards", "edited"])
def test_a_pinned_row_reads_like_the_row(sources, kind):
    source = sources[kind]
    for i in (1, 7, 11):
        pinned = source.pinned(i)
        rec, again = source.read(i), pinned.read(i)
        assert (again.data, again.info.index, again.stored_crc) == (rec.data, i, rec.stored_crc)
        frame = pinned.read_bytes(again.info.offset, OVERHEAD + len(rec.data))
        assert frame[HEADER_SIZE:HEADER_SIZE + len(rec.data)] == rec.data
        assert not pinned.unsaved and not pinned.modified
    if kind == "shards":
        assert sources[kind].pinned(4).note.startswith("record 0 of set-00001-of-00002.tfrecord")
        assert sources[kind].pinned(4).record_info(4).offset == 0  # the shard's own offset
    else:
        assert source.pinned(7).note is None


def test_an_edited_row_is_pinned_framed_on_its_own(sources):
    pinned = sources["edited"].pinned(0)
    assert pinned.unsaved and pinned.modified and pinned.note == "edited · not saved yet"
    frame = pinned.read_bytes(0, OVERHEAD + len(b"edited first record"))
    assert frame[HEADER_SIZE:-4] == b"edited first record"
    assert pinned.read(0).stored_crc == pinned.read(0).computed_crc


def test_only_stored_statuses_are_kept_by_a_verify_pass(sources):
    assert sources["file"].statuses_stored and sources["shards"].statuses_stored
    assert not sources["edited"].statuses_stored  # its statuses are the file's, mapped to rows
    assert sources["file"].mtime_ns == os.stat(sources["file"].path).st_mtime_ns
    assert sources["edited"].mtime_ns == sources["file"].mtime_ns
    assert sources["shards"].mtime_ns is None
