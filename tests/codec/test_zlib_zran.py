"""ZLIB random access after a cached open, through a zran index.

indexed_gzip reads GZIP only; :class:`ZlibAsGzip` shows it a ZLIB file as a
GZIP one (same deflate data, synthetic header and trailer), so an undamaged
ZLIB file gets a cached zran index like a GZIP file. Damaged streams still fall
back to the zlib checkpoints and read what survived.
"""
from __future__ import annotations

import os
import random
import struct
import zlib

import pytest

from codec import TFRecordFile, write_records
from codec.index import cache as index_cache
from codec.storage import zran
from codec.storage.zran import ZlibAsGzip, ZranReader

from .test_gzip_cache import _count_rebuilds, _index, _records, assert_cached_reads_fall_back

needs_zran = pytest.mark.skipif(not zran.zran_available(), reason="indexed_gzip is not installed")


@pytest.fixture(scope="module")
def big_records() -> list[bytes]:
    return _records(3000, seed=21, scale=12)  # ~7 MB uncompressed, ~3.5 MB compressed


@needs_zran
def test_a_zlib_cache_entry_without_a_zran_index_gets_one_on_the_first_random_read(tmp_path, monkeypatch):
    recs = _records(3000, seed=22)
    path = tmp_path / "a.zlib.tfrecord"
    write_records(path, recs, "zlib")
    _index(path)
    os.unlink(index_cache.zran_path(os.fspath(path)))
    calls = _count_rebuilds(monkeypatch)
    with TFRecordFile(path) as f:
        assert f._load_cache()
        assert f[1500] == recs[1500]
        assert isinstance(f.stream_reader, ZranReader)
    assert calls[0] == 0
    assert os.path.exists(index_cache.zran_path(os.fspath(path)))


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_zlib_file_falls_back_to_checkpoints_and_reads_what_survived(tmp_path, big_records, damage,
                                                                                monkeypatch):
    whole = tmp_path / "whole.zlib"
    write_records(whole, big_records, "zlib")
    raw = bytearray(whole.read_bytes())
    if damage == "truncated":
        raw = raw[: len(raw) * 2 // 3]
    else:
        raw[len(raw) // 2] ^= 0x55
    path = tmp_path / f"{damage}.zlib.tfrecord"
    path.write_bytes(bytes(raw))
    with TFRecordFile(path) as f:
        f.build_index()
        f.wait_for_cache()
        read = [f.read(i) for i in range(len(f))]
        assert any(p.compressed_offset is not None for p in f.problems)
    assert not os.path.exists(index_cache.zran_path(os.fspath(path)))
    first = [r.data for r in read]
    intact = [r.data for r in read if r.stored_crc is not None and r.stored_crc == r.computed_crc]
    originals = iter(big_records)
    assert len(intact) > 100 and all(r in originals for r in intact)  # in order, none invented

    assert_cached_reads_fall_back(path, first, monkeypatch)


def test_the_gzip_view_of_a_zlib_file_is_byte_exact(tmp_path):
    data = random.Random(4).randbytes(50_000) + b"abc" * 40_000
    path = tmp_path / "a.zz"
    path.write_bytes(zlib.compress(data))
    raw = path.read_bytes()
    want = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + raw[2:-4]
            + struct.pack("<II", 0, len(data)))
    view = ZlibAsGzip(os.fspath(path), len(data))
    assert view.read() == want
    assert view.read(10) == b""
    rng = random.Random(5)
    for _ in range(500):
        pos = rng.randrange(len(want) + 4)
        n = rng.choice([0, 1, 7, 10, 11, 100, 4096, len(want)])
        view.seek(pos)
        assert view.read(n) == want[pos:pos + n]
        view.seek(pos)
        buf = bytearray(n)
        assert bytes(buf[:view.readinto(buf)]) == want[pos:pos + n]
    assert view.seek(-8, os.SEEK_END) == len(want) - 8 and view.read() == want[-8:]
    view.close()


def test_a_zlib_stream_with_a_preset_dictionary_is_refused(tmp_path):
    c = zlib.compressobj(zdict=b"alpha beta gamma")
    path = tmp_path / "dict.zz"
    path.write_bytes(c.compress(b"alpha beta " * 100) + c.flush())
    with pytest.raises(ValueError, match="preset dictionary"):
        ZlibAsGzip(os.fspath(path), 1100)
