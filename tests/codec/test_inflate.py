"""GZIP/ZLIB random access through decompressor checkpoints."""
from __future__ import annotations

import random

import pytest

from codec import TFRecordFile, write_records
from codec.storage import inflate


def records(n=3000):
    rng = random.Random(7)
    return [rng.randbytes(rng.randint(200, 4000)) for _ in range(n)]  # incompressible, ~6 MB


def text_records(n=1000):
    """Highly compressible, ~6 MB: the decompressor often stops at its output limit with input left over."""
    rng = random.Random(3)
    words = [b"alpha", b"beta", b"gamma", b"delta"]
    return [b" ".join(rng.choice(words) for _ in range(1000)) + b"%d" % i for i in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("compression", ["gzip", "zlib"])
@pytest.mark.parametrize("make", [records, text_records])
def test_random_order_equals_sequential_over_many_checkpoints(tmp_path, compression, make, monkeypatch):
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)  # several checkpoints in a 6 MB file
    recs = make()
    path = tmp_path / f"big.{compression}"
    write_records(path, recs, compression)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert len(f.stream_reader.checkpoints) >= 5, "the file should span several checkpoints"
        sequential = list(f)
        assert sequential == recs
        order = list(range(len(recs)))
        random.Random(1).shuffle(order)
        for i in order:
            assert f[i] == recs[i]


def test_reading_the_last_record_does_not_start_from_the_beginning(tmp_path, monkeypatch):
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)
    recs = records()
    path = tmp_path / "big.gz"
    write_records(path, recs, "gzip")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        reader = f.stream_reader
        decoded = []
        original = reader._block

        def spy(k, need):
            decoded.append(k)
            return original(k, need)

        monkeypatch.setattr(reader, "_block", spy)
        assert f[-1] == recs[-1]
        assert decoded and min(decoded) >= len(reader.checkpoints) - 2
        assert all(reader.checkpoints[k + 1].out_pos - reader.checkpoints[k].out_pos <= 2 * inflate.CHECKPOINT_EVERY
                   for k in range(len(reader.checkpoints) - 1))


def test_random_access_after_a_cached_open(tmp_path):
    recs = records(800)
    path = tmp_path / "c.zlib"
    write_records(path, recs, "zlib")
    with TFRecordFile(path) as f:
        f.build_index()
    with TFRecordFile(path) as f:
        f.build_index()
        assert f.stream_reader is None  # came from the cache
        assert f[500] == recs[500] and f[3] == recs[3]


def test_concatenated_gzip_members(tmp_path):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    write_records(a, [b"one", b"two"], "gzip")
    write_records(b, [b"three"], "gzip")
    both = tmp_path / "both.gz"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    with TFRecordFile(both, use_cache=False) as f:
        f.verify()
        assert list(f) == [b"one", b"two", b"three"] and f.problems == []


def test_an_abandoned_pass_stops_its_decompressing_thread(tmp_path):
    import threading

    path = tmp_path / "big.gz"
    write_records(path, text_records(), "gzip")
    f = TFRecordFile(path, use_cache=False)
    passes = f.index_iter()
    next(passes)
    next(passes)
    passes.close()  # e.g. the GUI's Cancel
    assert not [t for t in threading.enumerate() if t.name == "tfrlens-inflate"]
    f.close()


@pytest.mark.parametrize("make", [records, text_records])
def test_checkpoints_keep_only_zlib_state_and_stay_evenly_spaced(tmp_path, make, monkeypatch):
    import tracemalloc

    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)
    path = tmp_path / "big.zlib"
    write_records(path, make(), "zlib")
    with TFRecordFile(path, use_cache=False) as f:
        tracemalloc.start()
        try:
            f.build_index()
            reader = f.stream_reader
            count = len(reader.checkpoints)
            assert all(not c.state.unconsumed_tail for c in reader.checkpoints)  # no copy of input kept
            held = tracemalloc.get_traced_memory()[0]
            reader.checkpoints = []
            held -= tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert count >= 5 and held / count < 48 * 1024  # zlib's state (~7 KB) and window (32 KB)


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_a_wrong_checksum_is_reported_as_damage_not_truncation(tmp_path, compression):
    from codec.format.framing import ProblemKind

    recs = text_records(200)
    path = tmp_path / f"a.{compression}"
    write_records(path, recs, compression)
    blob = bytearray(path.read_bytes())
    blob[-8 if compression == "gzip" else -2] ^= 0x10  # the CRC-32 / Adler-32 at the end
    path.write_bytes(bytes(blob))
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        (problem,) = f.problems
        assert problem.kind is ProblemKind.DECOMPRESS and "incorrect data check" in problem.detail
        assert len(blob) - 8 <= problem.compressed_offset <= len(blob)  # in the trailer
        assert list(f) == recs  # every record was inflated before the check failed


@pytest.mark.parametrize("flush", [True, False])
def test_after_damage_random_reads_give_what_the_pass_saw(tmp_path, flush, monkeypatch):
    monkeypatch.setattr(inflate, "_FLUSH_CONTINUES", flush and inflate._FLUSH_CONTINUES)
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)
    path = tmp_path / "bad.gz"
    write_records(path, text_records(), "gzip")
    blob = bytearray(path.read_bytes())
    mid = len(blob) * 2 // 3
    blob[mid:mid + 16] = bytes(16)
    path.write_bytes(bytes(blob))
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        damage = [p for p in f.problems if p.compressed_offset is not None]
        assert damage and damage[0].compressed_offset >= mid - 4  # zeros may inflate for a while
        seen = [f.read(i).data for i in range(len(f))]
        reader = f.stream_reader
        reader._blocks.clear()  # read again from the checkpoints, in another order
        order = list(range(len(f)))
        random.Random(2).shuffle(order)
        for i in order:
            assert f.read(i).data == seen[i]


def test_the_index_pass_without_flush_finds_the_same_records(tmp_path, monkeypatch):
    path = tmp_path / "a.zlib"
    recs = text_records(300) + records(300)
    write_records(path, recs, "zlib")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        with_flush = f.index.offsets().tolist()
    monkeypatch.setattr(inflate, "_FLUSH_CONTINUES", False)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert f.index.offsets().tolist() == with_flush and list(f) == recs and not f.problems


def test_a_read_inflates_only_as_far_as_it_needs_and_the_next_one_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 21)
    path = tmp_path / "big.zlib"
    recs = text_records()
    write_records(path, recs, "zlib")
    started = []

    class Counting(inflate._Inflating):
        __slots__ = ()

        def __init__(self, ck):
            started.append(ck.out_pos)
            super().__init__(ck)

    monkeypatch.setattr(inflate, "_Inflating", Counting)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        reader = f.stream_reader
        reader._blocks.clear()
        started.clear()
        assert f[0] == recs[0]
        assert len(reader._blocks[0].out) <= len(recs[0]) + 16 + inflate.READ_AHEAD  # not the whole block
        assert list(f) == recs
        assert started == [c.out_pos for c in reader.checkpoints]  # each block inflated once, in one go
