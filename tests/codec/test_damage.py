"""Damage never crashes the reader and never costs an intact record.

In msgpack's style: write a good file, then flip a byte or cut it, and check
exactly what the reader reports.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codec import Compression, NotTFRecordError, ProblemKind, RecordStatus, TFRecordFile, encode_record, write_records

records_st = st.lists(st.binary(min_size=0, max_size=200), min_size=1, max_size=25)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def frames(records: list[bytes]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for r in records:
        spans.append((pos, pos + 16 + len(r)))
        pos += 16 + len(r)
    return spans


def open_verified(path) -> TFRecordFile:
    f = TFRecordFile(path, use_cache=False)
    f.verify()
    return f


def problem_extent(f: TFRecordFile, p) -> tuple[int, int]:
    if p.index is not None:
        info = f.record_info(p.index)
        return p.offset, max(info.end, p.offset + p.size)
    return p.offset, p.offset + max(p.size, 1)


@SETTINGS
@given(records=records_st, data=st.data())
def test_single_byte_damage_loses_only_the_damaged_record(tmp_path, records, data):
    blob = bytearray(b"".join(encode_record(r) for r in records))
    pos = data.draw(st.integers(0, len(blob) - 1), label="pos")
    blob[pos] ^= data.draw(st.integers(1, 255), label="xor")
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(blob))
    spans = frames(records)
    hit = next(k for k, (a, b) in enumerate(spans) if a <= pos < b)
    try:
        f = open_verified(path)
    except NotTFRecordError:
        # Only acceptable when the only record's length is gone: nothing says TFRecord any more.
        assert len(records) == 1 and pos < 8
        return
    with f:
        found = {f.record_info(i).offset: f.read(i) for i in range(len(f))}
        for k, (start, _end) in enumerate(spans):
            if k == hit:
                continue
            rec = found.get(start)
            assert rec is not None, f"intact record {k} at {start} lost"
            assert rec.status is RecordStatus.OK and rec.data == records[k]
        if hit_rec := found.get(spans[hit][0]):
            assert hit_rec.status is not RecordStatus.OK or hit_rec.data == records[hit]
        assert f.problems, "damage went unreported"
        assert any(a <= pos < b for a, b in (problem_extent(f, p) for p in f.problems)), \
            "no problem covers the damaged byte"


@SETTINGS
@given(records=records_st, data=st.data())
def test_cut_anywhere_keeps_every_record_before_the_cut(tmp_path, records, data):
    blob = b"".join(encode_record(r) for r in records)
    cut = data.draw(st.integers(1, len(blob) - 1))
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(blob[:cut])
    complete = [r for r, (a, b) in zip(records, frames(records)) if b <= cut]
    with open_verified(path) as f:
        ok = [f.read(i).data for i in range(len(f)) if f.index.status(i) is RecordStatus.OK]
        assert ok == complete
        if cut not in {b for _, b in frames(records)}:
            assert [p.kind for p in f.problems] == [ProblemKind.TRUNCATED]


@pytest.mark.slow
@SETTINGS
@given(records=records_st, compression=st.sampled_from([Compression.GZIP, Compression.ZLIB]), data=st.data())
def test_damaged_compressed_stream_never_crashes_or_invents_records(tmp_path, records, compression, data):
    good = tmp_path / "good.tfrecord"
    write_records(good, records, compression)
    blob = bytearray(good.read_bytes())
    mode = data.draw(st.sampled_from(["flip", "cut"]))
    if mode == "flip":
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] ^= data.draw(st.integers(1, 255))
    else:
        blob = blob[: data.draw(st.integers(1, len(blob) - 1))]
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(blob))
    try:
        f = open_verified(bad)
    except ValueError as exc:  # the header itself was destroyed: a clear error, not a crash
        assert "not a TFRecord file" in str(exc)
        return
    with f:
        ok = [f.read(i).data for i in range(len(f)) if f.index.status(i) is RecordStatus.OK]
        # A flipped bit in deflate data can turn a literal into a back-reference that
        # repeats earlier output, whole frames included: TensorFlow reads those too.
        # What must never happen is a CRC-valid record that was never written.
        assert all(o in records for o in ok), "a record was invented"
        if len(ok) < len(records):
            assert f.problems, "records lost without a reported problem"


def test_garbage_between_records_is_skipped_and_reported(tmp_path):
    records = [b"a" * 10, b"b" * 20, b"c" * 30]
    garbage = bytes(range(7)) * 5
    blob = encode_record(records[0]) + garbage + encode_record(records[1]) + encode_record(records[2])
    path = tmp_path / "g.tfrecord"
    path.write_bytes(blob)
    with open_verified(path) as f:
        assert list(f) == records
        (p,) = f.problems
        assert p.offset == 26 and p.size == len(garbage) and p.index is None
        assert f"skipped {len(garbage)} bytes" in p.detail


def test_damaged_length_crc_with_right_length_is_recovered(tmp_path):
    records = [b"first", b"second", b"third"]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    blob[21 + 8] ^= 0xFF  # the length CRC of record 1 (record 0 is 21 bytes)
    path = tmp_path / "lc.tfrecord"
    path.write_bytes(bytes(blob))
    with open_verified(path) as f:
        assert [f.read(i).data for i in range(3)] == records
        assert f.index.status(1) is RecordStatus.LENGTH_CRC
        (p,) = f.problems
        assert p.kind is ProblemKind.LENGTH_CRC and p.index == 1 and "recovered" in p.detail


def test_huge_claimed_length_is_damage_not_an_allocation(tmp_path):
    import struct

    from codec.format.crc import masked_crc

    length = struct.pack("<Q", 1 << 60)
    blob = length + struct.pack("<I", masked_crc(length)) + b"tiny"
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(blob)
    with open_verified(path) as f:
        (p,) = f.problems
        assert p.kind is ProblemKind.TRUNCATED and p.offset == 0
        assert f"claims {1 << 60} bytes" in p.detail


def test_several_damages_in_one_file(tmp_path):
    records = [bytes([i]) * (10 + i) for i in range(12)]
    spans = frames(records)
    blob = bytearray(b"".join(encode_record(r) for r in records))
    blob[spans[2][0] + 2] ^= 1  # length of record 2
    blob[spans[6][0] + 14] ^= 1  # data of record 6
    blob[spans[10][0] + 5] ^= 1  # length of record 10
    path = tmp_path / "many.tfrecord"
    path.write_bytes(bytes(blob))
    with open_verified(path) as f:
        kinds = [(p.offset, p.kind) for p in f.problems]
        assert kinds == [(spans[2][0], ProblemKind.LENGTH_CRC), (spans[6][0], ProblemKind.DATA_CRC),
                         (spans[10][0], ProblemKind.LENGTH_CRC)]
        ok = [d for _, d in f.intact()]
        assert ok == [r for k, r in enumerate(records) if k not in (2, 6, 10)]


def test_stream_damage_reports_the_compressed_offset(tmp_path):
    records = [bytes([i % 251]) * 3000 for i in range(200)]
    good = tmp_path / "good.gz"
    write_records(good, records, "gzip")
    blob = bytearray(good.read_bytes())
    mid = len(blob) // 2
    blob[mid:mid + 40] = b"\x00" * 40
    bad = tmp_path / "bad.gz"
    bad.write_bytes(bytes(blob))
    with open_verified(bad) as f:
        damage = [p for p in f.problems if p.kind in (ProblemKind.DECOMPRESS, ProblemKind.TRUNCATED)]
        assert damage and damage[0].compressed_offset is not None
        assert damage[0].compressed_offset <= mid + 40 + 65536
        ok = [d for _, d in f.intact()]
        assert ok == records[: len(ok)] and len(ok) < len(records)
