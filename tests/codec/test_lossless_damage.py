"""Bytes deleted, duplicated or inserted inside a record never cost another intact record.

A record is intact when its framed bytes (header, data, footer) survive
contiguous in the damaged stream; for GZIP/ZLIB, in the part of the stream
that still inflates. After such damage the damaged record's header (still
valid) claims a span that the next records start inside: the scan must look
there too.
"""
from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from codec import NotTFRecordError, RecordStatus, TFRecordFile, encode_record
from codec.ops.repair import repair

from .test_damage import frames

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Distinct records (a number first), sizes from empty to a few hundred bytes, and
# empty payloads after the number: 16-byte frames make lengths line up often.
records_st = st.lists(st.one_of(st.binary(max_size=0), st.binary(max_size=8), st.binary(max_size=300)),
                      min_size=3, max_size=14).map(lambda rs: [bytes([k]) + r for k, r in enumerate(rs)])


def damaged_stream(records: list[bytes], data) -> bytes:
    """The records' stream with 1-3 byte runs deleted, duplicated or inserted inside records."""
    blob = b"".join(encode_record(r) for r in records)
    for _ in range(data.draw(st.integers(1, 3), label="damages")):
        spans = frames(records)
        start, end = spans[data.draw(st.integers(0, len(spans) - 1), label="record")]
        end = min(end, len(blob))
        if start >= end:
            continue
        at = data.draw(st.integers(start, end - 1), label="at")
        run = data.draw(st.one_of(st.integers(1, 20), st.sampled_from([16, 17, 32, 33, 48])), label="run")
        kind = data.draw(st.sampled_from(["delete", "duplicate", "insert"]), label="kind")
        if kind == "delete":
            blob = blob[:at] + blob[at + run:]
        elif kind == "duplicate":
            blob = blob[:at + run] + blob[at:at + run] + blob[at + run:]
        else:
            filler = data.draw(st.one_of(st.binary(min_size=run, max_size=run),
                                         st.just(bytes(run))), label="inserted")
            blob = blob[:at] + filler + blob[at:]
    return blob


def inflatable(data: bytes, compression: str) -> bytes:
    """What a cut GZIP/ZLIB file still gives: everything it holds up to the cut."""
    d = zlib.decompressobj(31 if compression == "gzip" else 15)
    return d.decompress(data) + d.flush()


def intact_offsets(stream: bytes, records: list[bytes]) -> dict[int, bytes]:
    """{offset: data} of every record whose framed bytes occur whole in ``stream``, except one that
    begins inside an earlier such frame: two valid frames that overlap cannot both be records of one
    stream (a deleted byte that the byte before it happens to restore: either record could be the
    damaged one), and a reader keeps the earlier, as TensorFlow does."""
    found = {}
    for r in records:
        frame = encode_record(r)
        at = stream.find(frame)
        while at >= 0:
            found[at] = r
            at = stream.find(frame, at + 1)
    kept, end = {}, 0
    for at in sorted(found):
        if at >= end:
            kept[at] = found[at]
            end = at + 16 + len(found[at])
    return kept


def phantom_records(stream: bytes, records: list[bytes]) -> list[int]:
    """Offsets of whole, CRC-valid frames in ``stream`` whose data was never written.

    Damage can line bytes up into one: an 8-byte record whose data is the next
    frame's length field and whose CRC is that field's length CRC. TensorFlow
    reads it as a record, and so does the codec; no reader can tell it apart.
    """
    written = set(records)
    found = []
    for at in range(len(stream) - 15):
        n = int.from_bytes(stream[at:at + 8], "little")
        end = at + 16 + n
        if end <= len(stream) and stream[at + 12:end - 4] not in written \
                and encode_record(stream[at + 12:end - 4]) == stream[at:end]:
            found.append(at)
    return found


def write_case(tmp_path, records, compression: str, data) -> tuple[str, dict[int, bytes]]:
    stream = damaged_stream(records, data)
    path = tmp_path / f"damaged.{compression}.tfrecord"
    if compression == "none":
        path.write_bytes(stream)
        return str(path), intact_offsets(stream, records)
    packed = gzip.compress(stream, mtime=0) if compression == "gzip" else zlib.compress(stream)
    if data.draw(st.booleans(), label="cut the compressed file"):
        packed = packed[:data.draw(st.integers(len(packed) // 2, len(packed) - 1), label="cut")]
    path.write_bytes(packed)
    return str(path), intact_offsets(inflatable(packed, compression), records)


def assert_all_found(f: TFRecordFile, expected: dict[int, bytes]) -> None:
    listed = {f.index.offset(i): i for i in range(len(f))}
    offsets = [f.index.offset(i) for i in range(len(f))]
    assert offsets == sorted(offsets), "the index is not in file order"
    for offset, data in sorted(expected.items()):
        assert offset in listed, f"intact record at {offset} lost"
        rec = f.read(listed[offset])
        assert rec.status is RecordStatus.OK and rec.data == data, f"intact record at {offset}: {rec.status}"


def opened(path: str, expected: dict[int, bytes]) -> TFRecordFile | None:
    """The damaged file opened; None when nothing in it says TFRecord any more (and nothing is intact)."""
    try:
        return TFRecordFile(path, use_cache=False)
    except NotTFRecordError:
        assert not expected, "intact records in a file refused as not TFRecord"
        return None


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
@SETTINGS
@given(records=records_st, data=st.data())
def test_verify_loses_no_intact_record(tmp_path, compression, records, data):
    path, expected = write_case(tmp_path, records, compression, data)
    f = opened(path, expected)
    if f is not None:
        with f:
            f.verify()
            assert_all_found(f, expected)


@pytest.mark.parametrize("compression", ["none", "gzip"])
@SETTINGS
@given(records=records_st, data=st.data())
def test_repair_keeps_every_intact_record(tmp_path, compression, records, data):
    path, expected = write_case(tmp_path, records, compression, data)
    stream = open(path, "rb").read()
    assume(not phantom_records(stream if compression == "none" else inflatable(stream, compression), records))
    f = opened(path, expected)
    if f is None:
        return
    out = tmp_path / "repaired.tfrecord"
    with f:
        repair(f, out, compression="none")
    with TFRecordFile(out, use_cache=False) as g:
        g.build_index(verify=True)
        kept = list(g)
    # Every intact record is written, in file order. Repair may keep more: a record whose
    # length CRC broke but whose data CRC proves its length is recovered, and kept too.
    wanted = [d for _, d in sorted(expected.items())]
    rest = iter(kept)
    assert all(any(d == k for k in rest) for d in wanted), "an intact record is missing or out of order"
    assert set(kept) <= set(records), "repair wrote a record that was never written"


def test_record_after_a_shortened_record_is_found_without_verifying(tmp_path):
    """Bytes deleted inside record 1: its header claims bytes into record 2 and the header
    found there fails; record 2 starts inside record 1's claimed span. The index pass
    (no data CRCs checked) must still list it, and record 1 as damaged."""
    records = [b"zero" * 5, b"one" * 30, b"two" * 7, b"three" * 9]
    spans = frames(records)
    blob = b"".join(encode_record(r) for r in records)
    cut_at = spans[1][0] + 30
    blob = blob[:cut_at] + blob[cut_at + 10:]
    path = tmp_path / "shortened.tfrecord"
    path.write_bytes(blob)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        starts = [f.index.offset(i) for i in range(len(f))]
        assert starts[:3] == [0, spans[1][0], spans[2][0] - 10]
        assert f.index.status(1) is RecordStatus.DATA_CRC
        assert [f.read(i).data for i in range(len(f)) if f.read(i).status.data_intact] == \
            [records[0], records[2], records[3]]


def hidden_record_file(tmp_path, compression: str = "none") -> tuple[str, list[bytes]]:
    """Bytes deleted inside record 1, exactly as many as record 2's frame: record 1's header now
    claims a span that ends on record 3's header, and record 2 lies hidden inside it."""
    records = [b"zero" * 5, b"one" * 300, b"two" * 11, b"three" * 9]
    spans = frames(records)
    blob = b"".join(encode_record(r) for r in records)
    at = spans[1][0] + 100
    blob = blob[:at] + blob[at + spans[2][1] - spans[2][0]:]
    path = tmp_path / "hidden.tfrecord"
    path.write_bytes({"none": blob, "gzip": gzip.compress(blob, mtime=0), "zlib": zlib.compress(blob)}[compression])
    return str(path), records


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_verify_after_an_index_pass_finds_a_record_hidden_in_a_damaged_ones_span(tmp_path, compression):
    path, records = hidden_record_file(tmp_path, compression)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert len(f) == 3  # record 2 stepped over: record 1's claimed end is record 3's header
        f.verify()
        assert [f.read(i).data for i in range(len(f)) if f.read(i).status.data_intact] == \
            [records[0], records[2], records[3]]
        assert [f.index.status(i) for i in range(len(f))] == \
            [RecordStatus.OK, RecordStatus.DATA_CRC, RecordStatus.OK, RecordStatus.OK]
    with TFRecordFile(path, use_cache=False) as f:  # the same as verifying in one pass
        f.verify()
        assert len(f) == 4 and f.index.status(2) is RecordStatus.OK


def test_a_shard_sets_verify_keeps_its_numbering(tmp_path):
    from codec import ShardSet

    path, records = hidden_record_file(tmp_path)
    with ShardSet([path], use_cache=False) as s:
        s.build_index()
        s.verify()
        assert len(s) == 3 and [s.read(i).data for i in (0, 2)] == [records[0], records[3]]
