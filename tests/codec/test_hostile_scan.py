"""Hostile input: huge length headers, long zero and garbage runs, and small read windows.

The index pass must finish, find the records around the damage, and never
hold what a header claims: memory stays bounded by its windows.
"""
from __future__ import annotations

import gzip
import os
import random
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codec.format.header_search as header_search
import codec.index.scan as scan
import codec.index.scan_sources as scan_sources
import codec.storage.inflate as inflate
from codec import ProblemKind, RecordStatus, TFRecordFile, encode_record
from codec.format.crc import masked_crc
from codec.format.framing import CRC, LENGTH
from codec.format.header_search import candidate_headers
from codec.index.record_index import RecordIndex
from codec.index.scan import MAX_RECORD, Scanner
from codec.index.scan_sources import PlainSource

MIB = 1 << 20


def header(length: int) -> bytes:
    packed = LENGTH.pack(length)
    return packed + CRC.pack(masked_crc(packed))


def records(tag: bytes, n: int) -> list[bytes]:
    return [tag + b" %d " % k * 7 for k in range(n)]


def write(path, parts: list[bytes], compression: str) -> None:
    """Write ``parts`` to ``path`` without ever joining them."""
    if compression == "gzip":
        with gzip.open(path, "wb", compresslevel=6) as f:
            for part in parts:
                f.write(part)
    else:
        with open(path, "wb") as f:
            for part in parts:
                f.write(part)


def zeros(total: int) -> list[bytes]:
    block = bytes(MIB)
    return [block] * (total // MIB)


def index_with_peak(path, verify: bool) -> tuple[TFRecordFile, int]:
    """Index ``path``; return the file and the peak of Python-allocated memory meanwhile."""
    f = TFRecordFile(path, use_cache=False)
    tracemalloc.start()
    try:
        f.build_index(verify=verify)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return f, peak


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_huge_length_header_holds_nothing_it_claims(tmp_path, compression):
    """5 records, a valid header claiming 2**31 - 1 bytes, 64 MiB of zeros, 3 records."""
    before, after = records(b"before", 5), records(b"after", 3)
    path = tmp_path / f"huge.{compression}.tfrecord"
    parts = [encode_record(r) for r in before] + [header((1 << 31) - 1)] + zeros(64 * MIB) + \
        [encode_record(r) for r in after]
    write(path, parts, compression)
    huge_at = sum(len(p) for p in parts[:5])
    for verify in (False, True):
        f, peak = index_with_peak(path, verify)
        with f:
            assert peak < 48 * MIB, f"{peak / MIB:.0f} MiB held for a 64 MiB run"
            assert [f.read(i).data for i in range(len(f))] == before + after
            assert all(f.read(i).status is RecordStatus.OK for i in range(len(f)))
            (p,) = f.problems
            assert p.kind is ProblemKind.GARBAGE and p.offset == huge_at
            assert f"claims {(1 << 31) - 1} bytes" in p.detail and p.size == 12 + 64 * MIB


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_records_after_a_long_zero_run_are_found(tmp_path, compression):
    """What a preallocated file looks like after a crash: records, zeros, then records again."""
    before, after = records(b"before", 5), records(b"after", 5)
    path = tmp_path / f"zeros.{compression}.tfrecord"
    parts = [encode_record(r) for r in before] + zeros(24 * MIB) + [encode_record(r) for r in after]
    write(path, parts, compression)
    zero_at = sum(len(p) for p in parts[:5])
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert [f.read(i).data for i in range(len(f))] == before + after
        (p,) = f.problems
        assert p.kind is ProblemKind.LENGTH_CRC and p.offset == zero_at and p.size == 24 * MIB
        assert f"skipped {24 * MIB} bytes" in p.detail


def test_a_zero_length_record_inside_zeros_is_still_a_record(tmp_path):
    """Eight zero bytes are a valid length (0); their CRC is not zero, so a zero run is no record,
    but an empty record framed among zeros is found."""
    parts = [encode_record(b"first")] + zeros(2 * MIB) + [encode_record(b"")] + zeros(MIB) + [encode_record(b"last")]
    path = tmp_path / "empty.tfrecord"
    write(path, parts, "none")
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert [f.read(i).data for i in range(len(f))] == [b"first", b"", b"last"]
        assert [f.index.offset(i) for i in range(len(f))] == [0, 21 + 2 * MIB, 21 + 3 * MIB + 16]


def test_garbage_run_is_skipped_to_the_next_record(tmp_path):
    rng = random.Random(3)
    before, after = records(b"before", 3), records(b"after", 3)
    garbage = rng.randbytes(6 * MIB)
    path = tmp_path / "garbage.tfrecord"
    write(path, [encode_record(r) for r in before] + [garbage] + [encode_record(r) for r in after], "none")
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert [f.read(i).data for i in range(len(f))] == before + after
        assert sum(p.size for p in f.problems) == len(garbage)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(
    st.binary(max_size=40),
    st.integers(0, 40).map(bytes),
    st.binary(max_size=20).map(encode_record),
    st.integers(0, 300).map(header),
    st.lists(st.sampled_from([0, 1, 255]), max_size=30).map(bytes)), max_size=8))
def test_fast_candidate_search_matches_the_full_one(parts):
    """Both quick searches (the scalar one for short windows, the one over runs of zero
    pairs for long ones) find exactly the headers the full CRC-per-offset search finds."""
    win = b"".join(parts)
    full = [c for c in candidate_headers(win).tolist() if LENGTH.unpack_from(win, c)[0] <= MAX_RECORD]
    assert candidate_headers(win, MAX_RECORD).tolist() == full
    if len(win) >= 12:
        arr = np.frombuffer(win, dtype=np.uint8)
        assert header_search._short_headers(arr, len(win) - 11, MAX_RECORD).tolist() == full


def scan_bytes(blob: bytes, verify: bool, window: int) -> tuple[list[int], list[int], list[tuple]]:
    index, problems = RecordIndex(), []
    source = PlainSource(lambda pos, n: blob[pos:pos + n], len(blob), window=window)
    for _ in Scanner(source, index, problems, len(blob), verify=verify).run():
        pass
    return (index.offsets().tolist(), index.statuses().tolist(),
            sorted((p.offset, p.kind.value, p.size) for p in problems))


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 200), min_size=1, max_size=30), data=st.data())
def test_small_read_windows_give_the_same_index(sizes, data):
    """The plain file is read through ``read_at`` in windows: where they fall changes nothing."""
    rng = random.Random(len(sizes))
    blob = bytearray(b"".join(encode_record(rng.randbytes(n)) for n in sizes))
    for _ in range(data.draw(st.integers(0, 2), label="damages")):
        if not blob:  # a first cut took every byte
            break
        at = data.draw(st.integers(0, len(blob) - 1), label="at")
        if data.draw(st.booleans(), label="cut"):
            del blob[at:at + data.draw(st.integers(1, 40), label="run")]
        else:
            blob[at] ^= 0x40
    blob = bytes(blob)
    window = data.draw(st.integers(1, 300), label="window")
    for verify in (False, True):
        assert scan_bytes(blob, verify, window) == scan_bytes(blob, verify, 1 << 20)


def test_a_large_damaged_record_in_a_stream_is_searched_by_reading_back(tmp_path, monkeypatch):
    """A GZIP stream walked in small steps with a tiny ``HOLD``: a large record whose data CRC
    fails is checked piece by piece and dropped from memory, then read again (through the
    decompressor's checkpoints) to find the records that start inside it."""
    monkeypatch.setattr(inflate, "MIN_STEP", 64)
    monkeypatch.setattr(inflate, "MAX_STEP", 256)
    monkeypatch.setattr(inflate, "OUT_TARGET", 512)
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 2048)
    monkeypatch.setattr(scan, "HOLD", 1000)
    monkeypatch.setattr(scan_sources, "PIECE", 700)
    monkeypatch.setattr(scan, "RESYNC_WINDOW", 900)
    rng = random.Random(7)
    before = [rng.randbytes(300) for _ in range(10)]
    big = rng.randbytes(20000)
    inner = [rng.randbytes(rng.randrange(500)) for _ in range(30)]
    after = [rng.randbytes(100) for _ in range(10)]
    # The large record's data loses 3000 bytes from its middle, so its header claims
    # bytes into the records after it, which now start inside its claimed span.
    framed_big = encode_record(big)
    shortened = framed_big[:5000] + framed_big[8000:]
    stream = b"".join([*map(encode_record, before), shortened, *map(encode_record, inner + after)])
    path = tmp_path / "stream.tfrecord.gz"
    path.write_bytes(gzip.compress(stream, mtime=0))
    for verify in (False, True):
        with TFRecordFile(path, use_cache=False) as f:
            f.build_index(verify=verify)
            f.verify()
            intact = [f.read(i).data for i in range(len(f)) if f.read(i).status is RecordStatus.OK]
            assert intact == before + inner + after
            offsets = f.index.offsets()
            assert np.all(np.diff(offsets.astype(np.int64)) > 0)
            damaged = [p for p in f.problems if p.kind is ProblemKind.DATA_CRC]
            assert [p.offset for p in damaged] == [sum(16 + len(r) for r in before)]


def test_plain_source_reads_a_file_through_pread(tmp_path):
    """``PlainSource(read_at, size)`` over ``os.pread``: the interface the reader uses."""
    recs = records(b"r", 50)
    path = tmp_path / "p.tfrecord"
    write(path, [encode_record(r) for r in recs], "none")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        index, problems = RecordIndex(), []
        source = PlainSource(lambda pos, n: os.pread(fd, n, pos), size, window=100)
        for _ in Scanner(source, index, problems, size, verify=True).run():
            pass
    finally:
        os.close(fd)
    assert not problems
    assert index.statuses().tolist() == [RecordStatus.OK] * len(recs)
    assert index.offsets().tolist() == np.cumsum([0] + [16 + len(r) for r in recs[:-1]]).tolist()


def test_large_records_stepped_over_by_their_headers_lose_nothing(tmp_path):
    """Without verifying, a plain file's large records are stepped over by their headers
    (their data is never read); one shortened inside still gives up the records it hides."""
    rng = random.Random(11)
    recs = [rng.randbytes(70_000 + k) for k in range(12)]
    framed = [encode_record(r) for r in recs]
    framed[4] = framed[4][:30_000] + framed[4][50_000:]  # record 4 loses 20,000 bytes of its data
    path = tmp_path / "large.tfrecord"
    write(path, framed, "none")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert [f.index.offset(i) for i in range(len(f))] == np.cumsum([0] + [len(b) for b in framed[:-1]]).tolist()
        assert f.index.status(4) is RecordStatus.DATA_CRC
        f.verify()
        assert [f.read(i).data for i in range(len(f)) if i != 4] == recs[:4] + recs[5:]
