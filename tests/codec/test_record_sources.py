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
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
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


def test_each_source_declares_what_the_app_would_otherwise_probe(sources):
    one, shards, edited = sources["file"], sources["shards"], sources["edited"]
    for source in (one, shards, edited):
        assert not source.is_remote and source.bytes_fetched is None
        assert source.pinned(2).is_remote is False
        assert source.unusable == []
    assert (one.is_set, shards.is_set, edited.is_set) == (False, True, False)
    assert (one.numbered_out_of_order, shards.numbered_out_of_order, edited.numbered_out_of_order) == \
        (False, True, False)
    assert one.files == edited.files == [one.path] and shards.files == [s.path for s in shards.shards]
    assert one.publish() == edited.publish() == [] and shards.publish() == []  # verify() numbered them all
    for source in (one, shards, edited):  # TFRecord framing: nothing an ArrayRecord footer would say
        assert source.container == "tfrecord" and source.pinned(2).container == "tfrecord"
        assert source.complete_records == len(source) and source.info_lines() == []
        assert source.layout is None and not source.hashes_checked and source.group_size_warning() is None


def test_each_source_finds_the_row_of_a_files_record(sources):
    one, shards, edited = sources["file"], sources["shards"], sources["edited"]
    assert [one.file_row(0, j) for j in (0, 11, 12, -1)] == [0, 11, None, None]
    assert one.file_row(1, 0) is None
    assert [shards.file_row(1, j) for j in (0, 7, 8)] == [4, 11, None]
    assert shards.file_row(0, 3) == 3
    assert edited.file_row(0, 0) is None and edited.file_row(0, 1) == 1  # record 0 was edited away


def test_only_an_edited_row_says_it_is_edited(sources):
    assert [sources["edited"].is_edited(i) for i in (0, 1)] == [True, False]
    assert sources["edited"].index.offset(0) == NO_OFFSET
    assert not any(sources[k].is_edited(0) for k in ("file", "shards"))


def test_a_shard_set_publishes_shards_indexed_out_of_order(tmp_path):
    paths = [str(tmp_path / f"s-0000{k}-of-00002.tfrecord") for k in range(2)]
    write_records(paths[0], RECORDS[:3])
    write_records(paths[1], RECORDS[3:])
    with ShardSet(paths, use_cache=False) as shards:
        shards.prioritize(1)
        published = []
        for _ in shards.index_iter(publish=False):
            if not published:
                assert len(shards) == 0 and shards.file_row(1, 0) is None  # nothing numbered until published
            published += shards.publish()
        # the second shard was indexed first; the first one lands before its rows
        assert published == [(0, len(RECORDS) - 3), (0, 3)]
        assert shards.file_row(1, 0) == 3


def test_a_url_and_what_is_built_on_it_are_remote(tmp_path):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    local = str(tmp_path / "one.tfrecord")
    write_records(local, RECORDS)
    with range_server(tmp_path) as srv:
        remote = TFRecordFile(srv.url_for("one.tfrecord"), use_cache=False).build_index()
        assert remote.is_remote and remote.bytes_fetched and remote.bytes_fetched >= os.path.getsize(local)
        assert remote.files == [remote.path] and remote.pinned(0).is_remote
        edited = EditedFile(Document(remote))
        assert edited.is_remote and edited.bytes_fetched == remote.bytes_fetched
        with ShardSet([srv.url_for("one.tfrecord")], use_cache=False) as shards:
            assert shards.is_remote and shards.bytes_fetched == 0  # nothing read yet
            shards.build_index()
            assert shards.bytes_fetched and shards.pinned(0).is_remote
        remote.close()
    with ShardSet([local], use_cache=False) as shards:
        assert not shards.is_remote and shards.bytes_fetched is None
