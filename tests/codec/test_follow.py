"""Following a file that is still being written: the index grows with it, its unfinished end is no problem."""
from __future__ import annotations

import os
import zlib

import pytest

from codec.errors import FollowStopped, TruncatedRecordError
from codec.format.framing import HEADER_SIZE, OVERHEAD, Compression, ProblemKind, RecordStatus, encode_record
from codec.sources.byte_sources import LocalBytes
from codec.sources.tfrecord_file import TFRecordFile


def payloads(n: int = 60) -> list[bytes]:
    return [bytes([i % 251]) * (40 + 7 * i) + i.to_bytes(4, "little") for i in range(n)]


def packed(records: list[bytes], compression: str) -> bytes:
    """The file's bytes; a compressed stream is flushed often, as a writer's buffer empties while it writes."""
    blob = b"".join(encode_record(r) for r in records)
    if compression == "none":
        return blob
    co = zlib.compressobj(6, zlib.DEFLATED, 31 if compression == "gzip" else 15)
    out = []
    for k in range(0, len(blob), 97):
        out.append(co.compress(blob[k:k + 97]) + co.flush(zlib.Z_SYNC_FLUSH))
    out.append(co.flush())
    return b"".join(out)


def append(path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def complete(f: TFRecordFile) -> list[bytes]:
    return [f.read(i).data for i in range(f.complete_records)]


_FOLLOWED: list[TFRecordFile] = []


@pytest.fixture(autouse=True)
def _close_followed():
    """Every file a test followed is closed after it (its readers' file handles too)."""
    yield
    while _FOLLOWED:
        _FOLLOWED.pop().close()


def followed(path, head: bytes) -> TFRecordFile:
    """``path`` holding ``head``, opened, indexed and followed."""
    path.write_bytes(head)
    f = TFRecordFile(path, use_cache=False)
    _FOLLOWED.append(f)
    f.build_index()
    f.start_follow()
    return f


def cut_points(records: list[bytes]) -> list[int]:
    """Plain-file offsets that stop mid-header, mid-data and mid-footer of several records, and at ends."""
    cuts, pos = [], 0
    for k, r in enumerate(records):
        if k % 5 == 1:
            cuts.append(pos + 5)  # in the header
        elif k % 5 == 2:
            cuts.append(pos + HEADER_SIZE + len(r) // 2)  # in the data
        elif k % 5 == 3:
            cuts.append(pos + HEADER_SIZE + len(r) + 2)  # in the data CRC
        elif k % 5 == 4:
            cuts.append(pos)  # on a record boundary
        pos += OVERHEAD + len(r)
    return cuts + [pos]


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_the_index_grows_with_the_file_and_its_unfinished_end_is_being_written(tmp_path, compression):
    records = payloads()
    data = packed(records, compression)
    cuts = cut_points(records) if compression == "none" else list(range(61, len(data), 61)) + [len(data)]
    path = tmp_path / f"growing.{compression}"
    f = followed(path, data[:cuts[0]])
    assert f.compression is Compression(compression)
    done = cuts[0]
    seen = 0
    for cut in cuts[1:]:
        append(path, data[done:cut])
        done = cut
        n = f.grow()
        assert n >= seen
        seen = n
        assert complete(f) == records[:n]
        assert f.problems == []
        writing = f.writing()
        if writing is not None:
            assert len(f) == n + 1 and f.index.status(n) is RecordStatus.WRITING
            assert f.read(n).status is RecordStatus.WRITING and not f.read(n).status.damaged
            with pytest.raises(TruncatedRecordError, match="still being written"):
                f[n]
    assert seen == len(records) and f.writing() is None
    f.close()


def test_a_file_cut_mid_record_at_open_is_followed_from_that_record(tmp_path):
    records = payloads(10)
    data = packed(records, "none")
    cut = sum(OVERHEAD + len(r) for r in records[:6]) + HEADER_SIZE + 3
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(data[:cut])
    f = TFRecordFile(path, use_cache=False)
    f.build_index()
    assert [p.kind for p in f.problems] == [ProblemKind.TRUNCATED]  # an ordinary open: damage
    f.start_follow()
    assert f.problems == [] and f.index.status(6) is RecordStatus.WRITING
    assert f.grow() == 6
    append(path, data[cut:])
    assert f.grow() == 10 and len(f) == 10 and f.problems == []
    assert complete(f) == records


def test_mid_file_damage_is_still_reported_while_following(tmp_path):
    records = payloads(12)
    data = bytearray(packed(records, "none"))
    start = sum(OVERHEAD + len(r) for r in records[:4])
    data[start + HEADER_SIZE + 10] ^= 0xFF  # record 4's data: its data CRC fails, records follow it
    cut = sum(OVERHEAD + len(r) for r in records[:3])
    path = tmp_path / "damaged.tfrecord"
    f = followed(path, bytes(data[:cut]))
    append(path, bytes(data[cut:start + HEADER_SIZE + 20]))  # record 4 only partly there: no problem yet
    f.grow()
    assert f.problems == [] and f.writing().index == 4
    append(path, bytes(data[start + HEADER_SIZE + 20:]))
    f.grow()
    bad = [f.read(i).status for i in range(len(f))]
    assert bad[4] is RecordStatus.DATA_CRC and bad.count(RecordStatus.DATA_CRC) == 1
    assert [(p.kind, p.index) for p in f.problems] == [(ProblemKind.DATA_CRC, 4)]
    assert len(f) == 12 and f.writing() is None


def test_a_damaged_header_with_records_after_it_is_damage_once_they_arrive(tmp_path):
    records = payloads(8)
    good = packed(records, "none")
    garbage = b"\x07" * 30
    path = tmp_path / "garbage.tfrecord"
    f = followed(path, good[:100])
    append(path, good[100:] + garbage)
    f.grow()
    assert f.problems == [] and len(f) == 8  # garbage at the end: perhaps a header still being written
    more = packed(payloads(3), "none")
    append(path, more)
    f.grow()
    assert [p.kind for p in f.problems] == [ProblemKind.LENGTH_CRC] and f.problems[0].offset == len(good)
    assert len(f) == 11 and f.writing() is None


@pytest.mark.parametrize("change", ["shrink", "replace", "rewrite", "remove"])
def test_following_stops_when_the_file_is_not_the_one_followed(tmp_path, change):
    records = payloads(8)
    data = packed(records, "none")
    path = tmp_path / "f.tfrecord"
    f = followed(path, data[:300])
    f.grow()
    if change == "shrink":
        os.truncate(path, 100)
    elif change == "replace":
        other = tmp_path / "other"
        other.write_bytes(data)
        os.replace(other, path)
    elif change == "rewrite":
        with open(path, "r+b") as w:
            w.write(bytes(len(data)))
    else:
        os.remove(path)
    with pytest.raises(FollowStopped, match="^stopped following: .*(shrank|replaced|rewritten|removed)"):
        f.grow()
    assert not f.following


def test_stopping_reads_the_end_as_an_ordinary_open_does(tmp_path):
    records = payloads(5)
    data = packed(records, "none")
    path = tmp_path / "f.tfrecord"
    f = followed(path, data[:-10])
    f.grow()
    assert f.problems == [] and f.index.status(4) is RecordStatus.WRITING
    for _ in f.stop_follow():
        pass
    assert not f.following and f.index.status(4) is RecordStatus.TRUNCATED
    assert [p.kind for p in f.problems] == [ProblemKind.TRUNCATED]


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_a_stream_is_inflated_on_not_read_again(tmp_path, compression, monkeypatch):
    records = payloads(40)
    data = packed(records, compression)
    path = tmp_path / "s.tfrecord"
    half = len(data) // 2
    f = followed(path, data[:half])
    reads = []
    real = LocalBytes.read_at

    def spy(self, pos, n):
        reads.append(pos)
        return real(self, pos, n)

    monkeypatch.setattr(LocalBytes, "read_at", spy)
    append(path, data[half:])
    assert f.grow() == 40 and f.problems == []
    assert min(reads) >= half - 64  # the mark before the old end, then only the new bytes
    assert complete(f) == records


def test_another_gzip_member_appended_is_followed(tmp_path):
    first, second = payloads(5), payloads(9)[5:]
    path = tmp_path / "members.gz"
    f = followed(path, packed(first, "gzip"))
    member = packed(second, "gzip")
    append(path, member[:1])  # one byte of the next member's magic: nothing to tell yet
    assert f.grow() == 5 and f.problems == []
    append(path, member[1:])
    assert f.grow() == 9 and complete(f) == first + second and f.problems == []


def test_a_remote_file_is_not_followed():
    from types import SimpleNamespace

    from codec.errors import UsageError

    f = TFRecordFile.__new__(TFRecordFile)
    f.byte_source, f.path, f._follower = SimpleNamespace(is_remote=True), "s3://bucket/x.tfrecord", None
    with pytest.raises(UsageError, match="only a local file"):
        f.start_follow()


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_a_file_followed_from_its_first_bytes_may_turn_out_compressed(tmp_path, compression):
    records = payloads(6)
    data = packed(records, compression)
    path = tmp_path / "new.tfrecord"
    f = followed(path, b"")
    assert f.grow() == 0 and f.compression is Compression.NONE
    append(path, data[:1])
    assert f.grow() == 0 and f.problems == []
    append(path, data[1:])
    assert f.grow() == 6 and f.compression is Compression(compression)
    assert complete(f) == records and f.problems == []


def test_a_compressed_file_whose_index_came_from_the_cache_is_followed_too(tmp_path, monkeypatch):
    from codec.index import cache as index_cache

    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)
    records = payloads(30)
    data = packed(records, "gzip")
    path = tmp_path / "cached.gz"
    path.write_bytes(data[:len(data) // 2])
    TFRecordFile(path).build_index().close()  # writes the cache entry
    f = TFRecordFile(path)
    f.build_index()
    assert f.stream_state is None  # loaded from the cache: no decompressor to go on with
    f.start_follow()  # inflates the file once to find where its stream stopped
    append(path, data[len(data) // 2:])
    assert f.grow() == 30 and complete(f) == records and f.problems == []


def test_a_growth_pass_stopped_half_way_is_taken_up_by_the_next(tmp_path):
    records = [bytes([i % 256]) * 1000 for i in range(4000)]  # 4 MB: the pass shows progress on the way
    data = packed(records, "none")
    path = tmp_path / "f.tfrecord"
    f = followed(path, data[:5000])
    f.grow()
    append(path, data[5000:-500])
    passes = f.grow_iter()
    next(passes)
    passes.close()  # stopped, as a tab's worker is when Follow is turned off
    assert 0 < f.complete_records < len(records) - 1
    assert f.grow() == len(records) - 1 and f.writing().index == len(records) - 1
    assert complete(f) == records[:-1] and f.problems == []
