"""The index cache: reused when the file is the same, ignored when it changed."""
from __future__ import annotations

import os
import sys

import pytest

from codec import TFRecordFile, write_records
from codec.index import cache as index_cache


def make(path, n=50):
    write_records(path, [f"record {i}".encode() * 3 for i in range(n)])


def indexed_by_scan(path) -> bool:
    """True when opening ``path`` had to scan it (the cache did not answer)."""
    with TFRecordFile(path) as f:
        return not f._load_cache()


def test_second_open_uses_the_cache(tmp_path):
    path = tmp_path / "a.tfrecord"
    make(path)
    with TFRecordFile(path) as f:
        f.build_index()
    assert os.path.exists(index_cache.cache_path(os.fspath(path)))
    assert not indexed_by_scan(path)
    with TFRecordFile(path) as f:
        f.build_index()
        assert len(f) == 50 and f[49] == b"record 49" * 3


def test_files_under_the_threshold_are_not_cached(tmp_path, monkeypatch):
    # (the tests' autouse fixture caches every file; here the real threshold applies)
    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 4096)
    small, large = tmp_path / "small.tfrecord", tmp_path / "large.tfrecord"
    make(small, 10)  # ~400 bytes
    make(large, 200)  # ~6 KB
    for path in (small, large):
        with TFRecordFile(path) as f:
            f.build_index()
    assert not os.path.exists(index_cache.cache_path(os.fspath(small)))
    assert os.path.exists(index_cache.cache_path(os.fspath(large))) and not indexed_by_scan(large)


def test_changed_size_invalidates(tmp_path):
    path = tmp_path / "a.tfrecord"
    make(path, 50)
    with TFRecordFile(path) as f:
        f.build_index()
    st = os.stat(path)
    make(path, 60)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime, other size
    assert indexed_by_scan(path)
    with TFRecordFile(path) as f:
        assert len(f.build_index()) == 60


def test_changed_mtime_invalidates(tmp_path):
    path = tmp_path / "a.tfrecord"
    make(path, 50)
    with TFRecordFile(path) as f:
        f.build_index()
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert indexed_by_scan(path)


def test_cached_problems_and_statuses_survive(tmp_path):
    from codec import encode_record

    path = tmp_path / "bad.tfrecord"
    blob = bytearray(b"".join(encode_record(bytes([i]) * 20) for i in range(10)))
    blob[36 * 4 + 15] ^= 1  # data of record 4
    path.write_bytes(bytes(blob))
    with TFRecordFile(path) as f:
        f.verify()
        first = [(p.offset, p.kind, p.index) for p in f.problems]
    assert not indexed_by_scan(path)
    with TFRecordFile(path) as f:
        f.build_index()
        assert [(p.offset, p.kind, p.index) for p in f.problems] == first
        assert f.verified and f.index.status(4).damaged


def test_unwritable_cache_folder_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    monkeypatch.setenv("TFRLENS_CACHE_DIR", str(blocker / "sub"))
    path = tmp_path / "a.tfrecord"
    make(path)
    with TFRecordFile(path) as f:
        assert len(f.build_index()) == 50


def test_garbage_cache_entry_is_a_miss(tmp_path):
    path = tmp_path / "a.tfrecord"
    make(path)
    target = index_cache.cache_path(os.fspath(path))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as f:
        f.write(b"TFRLIDX1\xff\xff\xff\x00garbage")
    assert indexed_by_scan(path)
    with TFRecordFile(path) as f:
        assert len(f.build_index()) == 50


@pytest.mark.skipif(sys.platform != "linux", reason="the environment is read directly on Linux only")
@pytest.mark.parametrize("xdg", [None, "", "/x/cache", "/x/cache/", "relative/cache"])
@pytest.mark.parametrize("home", [None, "", "/home/u", "/home/u/", "/", "relative-home"])
def test_the_cache_folder_is_the_one_platformdirs_gives(monkeypatch, xdg, home):
    """``user_cache_root`` reads the XDG variables itself (start-up time): it must agree with platformdirs."""
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv("TFRLENS_CACHE_DIR", raising=False)
    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected = platformdirs.user_cache_dir("tfrecord-lens")
    except RuntimeError:  # no home folder platformdirs accepts: neither may we answer otherwise
        with pytest.raises(RuntimeError):
            index_cache.user_cache_root()
        return
    assert index_cache.user_cache_root() == expected
    assert index_cache.cache_dir() == os.path.join(expected, "index")
