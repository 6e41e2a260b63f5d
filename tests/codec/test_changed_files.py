"""Files that change while they are open: a save refuses to replace another program's file, copies
no damaged bytes, and the index cache tells a same-size, same-mtime copy from the file it indexed."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

from codec.cli.main import main
from codec.editing.document import Document
from codec.errors import CorruptRecordError, FileChangedError, TargetChangedError
from codec.format.framing import HEADER_SIZE
from codec.index import cache as index_cache
from codec.sources.tfrecord_file import TFRecordFile, open_tfrecord
from codec.storage.file_identity import Change, FileIdentity, identity_at
from codec.storage.writer import write_records

from .conftest import ROOT, flip_in_place, record_offset


def records(n: int, size: int = 40, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [b"record %04d " % i + rng.randbytes(size) for i in range(n)]


def read_all(path) -> list[bytes]:
    with open_tfrecord(path) as f:
        return list(f)


def rewrite_in_place(path, content: bytes) -> None:
    """What ``cp -p`` does over an existing file: the same inode rewritten, its mtime put back."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.write(content)
        f.truncate()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.fixture
def opened(tmp_path):
    """A 100-record file open as a document with its first record deleted (the issue's walk)."""
    path = tmp_path / "data.tfrecord"
    write_records(path, records(100))
    source = open_tfrecord(path)
    doc = Document(source)
    doc.delete([0])
    yield path, doc
    source.close()


# -- identity ----------------------------------------------------------------------------------
def test_identity_tells_grown_changed_replaced_and_deleted(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    first = identity_at(path)
    assert first.change_to(identity_at(path)) is Change.SAME
    with open(path, "ab") as f:
        f.write(b"more")
    grown = identity_at(path)
    assert first.change_to(grown) is Change.GREW
    rewrite_in_place(path, b"abcdefg")  # same size and mtime: only the ctime moved
    rewritten = identity_at(path)
    assert (rewritten.size, rewritten.mtime_ns) == (grown.size, grown.mtime_ns)
    assert grown.change_to(rewritten) is Change.CHANGED
    (tmp_path / "g").write_bytes(b"abcdefg")
    os.replace(tmp_path / "g", path)
    assert rewritten.change_to(identity_at(path)) is Change.REPLACED
    path.unlink()
    assert identity_at(path) is None and first.change_to(None) is Change.DELETED


def test_a_compressed_file_replaced_while_open_is_not_read_from_the_new_one(tmp_path):
    """GZIP and ZLIB random reads open the path again: the file there must still be the one opened."""
    path = tmp_path / "a.tfrecord.gz"
    write_records(path, records(50), "gzip")
    with open_tfrecord(path, use_cache=False) as f:
        write_records(path, records(50, seed=9), "gzip")  # same count, other bytes: renamed over it
        with pytest.raises(FileChangedError, match="changed on disk since it was opened"):
            f[40]


# -- a save over the source's path ---------------------------------------------------------------
def test_save_over_a_replaced_file_refuses_and_leaves_the_other_programs_file(opened, tmp_path):
    path, doc = opened
    write_records(path, records(40, seed=2))  # another program renames its file over ours
    theirs = path.read_bytes()
    with pytest.raises(TargetChangedError) as caught:
        doc.save()
    exc = caught.value
    assert isinstance(exc, FileChangedError) and exc.change == "replaced" and exc.path == str(path)
    assert str(path) in str(exc) and "replaced by another file" in str(exc)
    assert path.read_bytes() == theirs
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # no temporary file left

    report = doc.save(overwrite_changed=True)  # told to: our 99 records replace theirs
    assert report.records == 99 and read_all(path) == records(100)[1:]


def test_save_over_a_file_rewritten_with_the_same_size_and_mtime_refuses(opened):
    path, doc = opened
    other = records(100, seed=3)  # same lengths: the same size
    write_records(path.with_name("other"), other)
    theirs = path.with_name("other").read_bytes()
    assert len(theirs) == path.stat().st_size
    rewrite_in_place(path, theirs)
    with pytest.raises(TargetChangedError, match="rewritten in place") as caught:
        doc.save()
    assert caught.value.change == "changed"
    assert path.read_bytes() == theirs


def test_save_over_a_deleted_file_refuses_unless_told(opened):
    path, doc = opened
    path.unlink()
    with pytest.raises(TargetChangedError, match="was deleted") as caught:
        doc.save()
    assert caught.value.change == "deleted" and not path.exists()
    doc.save(overwrite_changed=True)  # the records come from the file still open
    assert read_all(path) == records(100)[1:]


def test_a_change_during_the_save_is_caught_before_the_rename(opened, monkeypatch):
    """The check runs again once the new file is written, just before it would replace the target."""
    path, doc = opened
    theirs = records(3, seed=4)
    copy = doc._checked_frame

    def other_program_writes_midway(j, info):
        if j == 50:
            write_records(path, theirs)
        return copy(j, info)

    monkeypatch.setattr(doc, "_checked_frame", other_program_writes_midway)
    with pytest.raises(TargetChangedError, match="replaced"):
        doc.save()
    assert read_all(path) == theirs


def test_saving_twice_over_its_own_save_needs_no_flag(opened):
    path, doc = opened
    doc.save()
    doc.delete([0])
    assert doc.save().records == 98
    assert read_all(path) == records(100)[2:]


def test_save_as_another_file_reads_the_file_opened_even_after_a_replace(opened, tmp_path):
    path, doc = opened
    write_records(path, records(40, seed=2))
    out = tmp_path / "copy.tfrecord"
    assert doc.save(out).records == 99
    assert read_all(out) == records(100)[1:]


# -- attack 7: bytes copied verbatim pass their CRCs ------------------------------------------------
@pytest.mark.parametrize("where, what", [(HEADER_SIZE + 5, "data CRC stored"), (3, "length CRC fails")])
def test_a_source_changed_in_place_stops_the_save_naming_record_and_offset(opened, tmp_path, where, what):
    path, doc = opened
    recs = records(100)
    offset = record_offset(recs, 7)
    before = path.read_bytes()
    flip_in_place(path, offset + where)
    out = tmp_path / "out.tfrecord"
    with pytest.raises(CorruptRecordError) as caught:
        doc.save(out)
    exc = caught.value
    assert (exc.index, exc.offset) == (7, offset)
    assert what in str(exc) and f"record 7 at offset {offset}" in str(exc) and "nothing was written" in str(exc)
    assert not out.exists()
    # over the source, told to overwrite: still no damaged copy, and the file stays as it is
    changed = path.read_bytes()
    with pytest.raises(CorruptRecordError):
        doc.save(overwrite_changed=True)
    assert path.read_bytes() == changed != before


def test_a_record_known_damaged_is_copied_as_it_is(tmp_path):
    path = tmp_path / "damaged.tfrecord"
    recs = records(10)
    write_records(path, recs)
    flip_in_place(path, record_offset(recs, 3) + HEADER_SIZE + 1)
    with open_tfrecord(path) as source:
        source.verify()
        doc = Document(source)
        doc.delete([0])
        out = tmp_path / "out.tfrecord"
        doc.save(out)
    damaged = path.read_bytes()[record_offset(recs, 3):record_offset(recs, 4)]
    assert damaged in out.read_bytes()


def test_crc_checks_off_copy_what_the_file_holds(tmp_path):
    path = tmp_path / "a.tfrecord"
    recs = records(10)
    write_records(path, recs)
    with TFRecordFile(path, check_crc=False) as source:
        source.build_index()
        flip_in_place(path, record_offset(recs, 2) + HEADER_SIZE + 1)
        doc = Document(source)
        doc.delete([0])
        doc.save(tmp_path / "out.tfrecord")
    assert len(read_all_unchecked(tmp_path / "out.tfrecord")) == 9


def read_all_unchecked(path) -> list[bytes]:
    with open_tfrecord(path, check_crc=False) as f:
        return list(f)


# -- attack 15: a same-size, same-mtime copy over a cached file --------------------------------------
def same_size_files(tmp_path):
    """Two files of one size (over the cache's minimum) whose records lie at different offsets."""
    rng = random.Random(5)
    a, b = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write_records(a, [rng.randbytes(1000) for _ in range(1500)])
    write_records(b, [rng.randbytes(2016) for _ in range(750)])
    assert a.stat().st_size == b.stat().st_size >= index_cache.MIN_CACHED_BYTES
    os.utime(b, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns))  # same mtime too
    return a, b


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("how", ["cp -p", "rename"])
def test_a_copy_with_the_same_size_and_mtime_is_indexed_again(tmp_path, capsys, how):
    a, b = same_size_files(tmp_path)
    path = tmp_path / "t.tfrecord"
    shutil.copy2(a, path)
    code, out, _ = cli(capsys, "info", str(path))
    assert code == 0 and "records:     1,500" in out
    st = os.stat(path)
    assert index_cache.has_entry(str(path), st.st_size, FileIdentity.of(st).stamp, index_cache.Compression.NONE)

    if how == "cp -p":  # the same inode rewritten, size and mtime kept
        shutil.copy2(b, path)
    else:  # rsync and tar: a new file renamed over it
        shutil.copy2(b, tmp_path / ".t.partial")
        os.replace(tmp_path / ".t.partial", path)
    now = os.stat(path)
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)

    code, out, err = cli(capsys, "info", str(path))
    assert (code, err) == (0, "") and "records:     750 (750 ok)" in out
    code, out, err = cli(capsys, "verify", "--json", str(path))
    assert (code, err) == (0, "") and json.loads(out)["ok"] == 750
    proc = subprocess.run([sys.executable, "-m", "codec.cli.main", "cat", "--json", "--range=-1:", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.fspath(ROOT)})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["index"] == 749
