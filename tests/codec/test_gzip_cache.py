"""GZIP random access after a cached open: the zran index kept beside the record index.

An undamaged GZIP file's index pass also stores a zran index (``indexed_gzip``)
in the cache; a later open reads any record from it without decompressing the
whole file again (ZLIB files too: see test_zlib_zran.py). Damaged streams
and a missing or failing ``indexed_gzip`` fall back to rebuilding the zlib
checkpoints.
"""
from __future__ import annotations

import gzip
import os
import random

import pytest

from codec import TFRecordFile, write_records
from codec.index import cache as index_cache
from codec.sources.zran_reads import ZranIndexes
from codec.storage import zran
from codec.storage.file_identity import FileIdentity
from codec.storage.zran import ZranReader


def _zran_cached(path: str, size: int, st: os.stat_result, stream_end: int) -> bool:
    """Whether the cache holds a zran index of this version of ``path`` (the file it gives is closed)."""
    index = index_cache.load_zran(path, size, FileIdentity.of(st).stamp, stream_end)
    if index is None:
        return False
    index.close()
    return True


def _records(n: int, seed: int = 3, scale: int = 1) -> list[bytes]:
    """Records that compress about 2:1, so the file is multi-MB compressed too."""
    rng = random.Random(seed)
    words = [b"alpha", b"beta", b"gamma", b"delta"]
    return [rng.randbytes(rng.randrange(20, 120) * scale)
            + b" ".join(rng.choice(words) for _ in range(rng.randrange(5, 40) * scale))
            + i.to_bytes(4, "little") for i in range(n)]


@pytest.fixture(scope="module")
def big_records() -> list[bytes]:
    return _records(3000, scale=12)  # ~7 MB uncompressed, ~3.5 MB compressed


def _index(path) -> list[bytes]:
    with TFRecordFile(path) as f:
        f.build_index()
        f.wait_for_cache()  # the zran index is built after the pass, on a thread
        return [f[i] for i in range(len(f))]


def _no_rebuild(monkeypatch):
    def fail(self, compression):
        raise AssertionError("ZranIndexes.checkpoints called: a full decompression pass")

    monkeypatch.setattr(ZranIndexes, "checkpoints", fail)


def _count_rebuilds(monkeypatch) -> list[int]:
    calls = [0]
    real = ZranIndexes.checkpoints

    def counting(self, compression):
        calls[0] += 1
        return real(self, compression)

    monkeypatch.setattr(ZranIndexes, "checkpoints", counting)
    return calls


needs_zran = pytest.mark.skipif(not zran.zran_available(), reason="indexed_gzip is not installed")


@pytest.mark.slow
@needs_zran
@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_cached_file_reads_every_record_in_random_order_without_a_full_pass(tmp_path, big_records, monkeypatch,
                                                                            compression):
    # (ZLIB goes through zran too: indexed_gzip reads it through a GZIP view, see test_zlib_zran)
    path = tmp_path / f"big.{compression}.tfrecord"
    write_records(path, big_records, compression)
    assert os.path.getsize(path) > 2 * 2**20  # multi-MB compressed
    assert _index(path) == big_records
    assert os.path.exists(index_cache.zran_path(os.fspath(path)))

    _no_rebuild(monkeypatch)
    order = list(range(len(big_records)))
    random.Random(7).shuffle(order)
    with TFRecordFile(path) as f:
        assert f._load_cache()
        assert f[-1] == big_records[-1]
        assert isinstance(f.stream_reader, ZranReader)
        for i in order:
            assert f[i] == big_records[i]
        assert f.release()  # no handle held; reads reopen as needed
        if compression == "zlib":
            assert f.stream_reader._view._f is None  # release() closed the ZLIB view's handle too
        assert f[order[0]] == big_records[order[0]]
        assert [r for r in f] == big_records


@needs_zran
def test_cached_gzip_of_several_members(tmp_path, monkeypatch):
    recs = _records(3000, seed=9)
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    write_records(a, recs[:1700], "gzip")
    write_records(b, recs[1700:], "gzip")
    path = tmp_path / "joined.gzip.tfrecord"
    path.write_bytes(a.read_bytes() + b.read_bytes())
    assert _index(path) == recs
    _no_rebuild(monkeypatch)
    with TFRecordFile(path) as f:
        f.build_index()
        for i in random.Random(2).sample(range(len(recs)), len(recs)):
            assert f[i] == recs[i]


def test_truncated_gzip_uses_the_checkpoint_fallback(tmp_path, monkeypatch):
    recs = _records(5000, seed=6)
    whole = tmp_path / "whole.gz"
    write_records(whole, recs, "gzip")
    path = tmp_path / "cut.gzip.tfrecord"
    path.write_bytes(whole.read_bytes()[: os.path.getsize(whole) * 2 // 3])
    with TFRecordFile(path) as f:
        f.build_index()
        first = [f.read(i).data for i in range(len(f))]
        assert f.problems
    assert not os.path.exists(index_cache.zran_path(os.fspath(path)))
    assert_cached_reads_fall_back(path, first, monkeypatch)
    intact = first[:-1]
    assert intact == recs[: len(intact)]


@needs_zran
def test_changing_the_file_invalidates_the_zran_index_with_the_record_index(tmp_path):
    path = tmp_path / "a.gzip.tfrecord"
    old = _records(3000, seed=1)
    write_records(path, old, "gzip")
    _index(path)
    st = os.stat(path)
    assert _zran_cached(os.fspath(path), st.st_size, st, _stream_end(path))

    new = _records(3100, seed=2)
    write_records(path, new, "gzip")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    st2 = os.stat(path)
    assert index_cache.load(os.fspath(path), st2.st_size, FileIdentity.of(st2).stamp, TFRecordFile(path).compression) is None
    assert not _zran_cached(os.fspath(path), st2.st_size, st2, 0)
    assert not _zran_cached(os.fspath(path), st.st_size, st2, _stream_end(path))
    assert _index(path) == new  # rescanned, and a fresh zran index stored
    with TFRecordFile(path) as f:
        assert f._load_cache()
        assert [f[i] for i in random.Random(4).sample(range(len(new)), 200)] == \
            [new[i] for i in random.Random(4).sample(range(len(new)), 200)]
        assert isinstance(f.stream_reader, ZranReader)
    index_cache.invalidate(os.fspath(path))
    assert not os.path.exists(index_cache.zran_path(os.fspath(path)))


def assert_cached_reads_fall_back(path, first: list[bytes], monkeypatch) -> None:
    """A damaged stream after a cached open: no zran, one checkpoint rebuild, the pass's reads in any order."""
    calls = _count_rebuilds(monkeypatch)
    with TFRecordFile(path) as f:
        assert f._load_cache()
        for i in random.Random(8).sample(range(len(f)), len(f)):
            assert f.read(i).data == first[i]
        assert not isinstance(f.stream_reader, ZranReader)
    assert calls[0] == 1


def _stream_end(path) -> int:
    with gzip.open(path, "rb") as g:
        return len(g.read())


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_without_indexed_gzip_everything_still_works(tmp_path, monkeypatch, compression):
    monkeypatch.setattr(zran, "_IndexedGzipFile", None)
    recs = _records(3000, seed=11)
    path = tmp_path / f"a.{compression}.tfrecord"
    write_records(path, recs, compression)
    assert _index(path) == recs
    assert not os.path.exists(index_cache.zran_path(os.fspath(path)))
    with TFRecordFile(path) as f:
        f.build_index()
        assert f[-1] == recs[-1]
        assert not isinstance(f.stream_reader, ZranReader)


@needs_zran
def test_a_failing_zran_read_falls_back(tmp_path, monkeypatch):
    recs = _records(3000, seed=12)
    path = tmp_path / "a.gzip.tfrecord"
    write_records(path, recs, "gzip")
    _index(path)

    def broken(self, k, need=0):
        raise OSError("zran says no")

    monkeypatch.setattr(ZranReader, "_block", broken)
    calls = _count_rebuilds(monkeypatch)
    with TFRecordFile(path) as f:
        f.build_index()
        assert f[1234] == recs[1234]
        assert f[-1] == recs[-1]
    assert calls[0] == 1


@needs_zran
def test_an_unreadable_zran_index_is_a_miss(tmp_path, monkeypatch):
    recs = _records(3000, seed=13)
    path = tmp_path / "a.gzip.tfrecord"
    write_records(path, recs, "gzip")
    _index(path)
    zpath = index_cache.zran_path(os.fspath(path))
    with open(zpath, "rb") as src:
        blob = src.read()
    with open(zpath, "wb") as out:
        out.write(blob[:-100])  # cut short
    _no_rebuild(monkeypatch)
    with TFRecordFile(path) as f:  # a miss: the zran index is built again (C speed) and cached
        f.build_index()
        assert f[-1] == recs[-1]
        assert isinstance(f.stream_reader, ZranReader)
    st = os.stat(path)
    assert _zran_cached(os.fspath(path), st.st_size, st, _stream_end(path))


@needs_zran
def test_a_cache_entry_without_a_zran_index_gets_one_on_the_first_random_read(tmp_path, monkeypatch):
    recs = _records(3000, seed=14)
    path = tmp_path / "a.gzip.tfrecord"
    write_records(path, recs, "gzip")
    _index(path)
    os.unlink(index_cache.zran_path(os.fspath(path)))  # e.g. the app quit before it was written
    _no_rebuild(monkeypatch)
    with TFRecordFile(path) as f:
        assert f._load_cache()
        assert f[1500] == recs[1500]
        assert isinstance(f.stream_reader, ZranReader)
    assert os.path.exists(index_cache.zran_path(os.fspath(path)))


def test_an_uncached_gzip_pass_builds_no_zran_index(tmp_path):
    recs = _records(500, seed=15)
    path = tmp_path / "a.gzip.tfrecord"
    write_records(path, recs, "gzip")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert f._zran.job is None
        assert [f[i] for i in range(len(f))] == recs
    assert not os.path.exists(index_cache.zran_path(os.fspath(path)))
