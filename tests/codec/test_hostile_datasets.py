"""Hostile datasets: a planted cache link, huge TFDS metadata, a folder of thousands of shards,
Beam against the local run, and Ctrl-C (issue 24, items 8, 9, 10, 13 and 14)."""
from __future__ import annotations

import os
import stat

import pytest

from codec import TFRecordFile, index_cache, write_records


@pytest.fixture(autouse=True)
def _fresh_folder_verdicts(monkeypatch):
    monkeypatch.setattr(index_cache, "_folders", {})


def _cached_file(path, n=40):
    write_records(path, [bytes([i % 251]) * 100 for i in range(n)])
    return os.fspath(path)


@pytest.fixture
def cached_everything(monkeypatch):
    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)


# -- the index cache -----------------------------------------------------------------
def test_a_link_planted_at_a_cache_entry_is_replaced_not_followed(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    outside = tmp_path / "victim.txt"
    outside.write_bytes(b"precious")
    entry = index_cache.cache_path(data)
    os.makedirs(os.path.dirname(entry), mode=0o700)
    os.symlink(outside, entry)

    with TFRecordFile(data) as f:
        assert len(f.build_index()) == 40

    assert outside.read_bytes() == b"precious"
    assert stat.S_ISREG(os.lstat(entry).st_mode)  # the link itself was renamed over
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]  # nothing written beside the victim
    assert not [n for n in os.listdir(os.path.dirname(entry)) if n.endswith(".tmp")]
    assert index_cache.load(data, os.path.getsize(data), os.stat(data).st_mtime_ns, f.compression) is not None


def test_a_cache_entry_that_is_a_link_is_not_read(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
        compression = f.compression
    entry = index_cache.cache_path(data)
    elsewhere = tmp_path / "entry-elsewhere"
    os.replace(entry, elsewhere)
    os.symlink(elsewhere, entry)
    st = os.stat(data)
    assert index_cache.load(data, st.st_size, st.st_mtime_ns, compression) is None
    assert index_cache.open_entry(data, st.st_size, st.st_mtime_ns) is None
    assert not index_cache.has_entry(data, st.st_size, st.st_mtime_ns, compression)
    os.replace(elsewhere, entry)  # the same bytes as a plain file are read
    assert index_cache.load(data, st.st_size, st.st_mtime_ns, compression) is not None


def test_a_cache_folder_open_to_others_is_made_private(tmp_path, cached_everything):
    folder = tmp_path / "index-cache"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert os.path.exists(index_cache.cache_path(data))


def test_a_new_cache_folder_is_private(tmp_path, cached_everything):
    data = _cached_file(tmp_path / "a.tfrecord")
    with TFRecordFile(data) as f:
        f.build_index()
    assert stat.S_IMODE(os.stat(tmp_path / "index-cache").st_mode) == 0o700


def test_a_cache_folder_of_another_user_is_not_used(tmp_path, cached_everything, monkeypatch, capsys):
    folder = tmp_path / "index-cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)
    paths = [_cached_file(tmp_path / f"{k}.tfrecord") for k in range(3)]
    for path in paths:
        with TFRecordFile(path) as f:
            assert len(f.build_index()) == 40
    assert os.listdir(folder) == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "index cache not used" in err and "another user" in err
