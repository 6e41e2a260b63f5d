"""The edit overlay: every operation, snapshots for undo, atomic save."""
from __future__ import annotations

import errno
import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec import FileAccessError, TFRecordFile, open_tfrecord, write_records
from codec.editing.document import Document
from tests.builders import fixture_path


@pytest.fixture
def doc(tmp_path):
    path = tmp_path / "ten.tfrecord"
    write_records(path, [b"r%d" % i for i in range(10)])
    f = open_tfrecord(path)
    yield Document(f)
    f.close()


def contents(doc):
    return list(doc)


def test_untouched_document_is_the_file(doc):
    assert not doc.modified and len(doc) == 10 and contents(doc)[3] == b"r3"
    assert doc.origin(7) == 7


def test_replace_delete_insert_move_duplicate(doc):
    doc.replace(2, b"two")
    assert contents(doc)[:4] == [b"r0", b"r1", b"two", b"r3"] and doc.is_modified(2) and doc.modified
    doc.delete([0, 5, 6])
    assert contents(doc) == [b"r1", b"two", b"r3", b"r4", b"r7", b"r8", b"r9"]
    doc.insert(1, [b"new-a", b"new-b"])
    assert contents(doc)[:4] == [b"r1", b"new-a", b"new-b", b"two"]
    moved = doc.move([0], 3)
    assert contents(doc)[:5] == [b"new-a", b"new-b", b"two", b"r1", b"r3"] and moved == [3]
    copies = doc.duplicate([1, 2])
    assert contents(doc)[:6] == [b"new-a", b"new-b", b"two", b"new-b", b"two", b"r1"] and copies == [3, 4]


def test_snapshot_restore_is_undo_and_redo(doc):
    before = doc.snapshot()
    doc.delete(range(3, 8))
    doc.replace(0, b"zero")
    after = doc.snapshot()
    doc.restore(before)
    assert contents(doc) == [b"r%d" % i for i in range(10)] and not doc.modified
    doc.restore(after)
    assert contents(doc) == [b"zero", b"r1", b"r2", b"r8", b"r9"]


def test_one_edit_of_a_big_file_costs_one_record(tmp_path):
    path = tmp_path / "big.tfrecord"
    write_records(path, (b"x" * 50 for _ in range(20000)))
    with open_tfrecord(path) as f:
        d = Document(f)
        d.replace(12345, b"changed")
        assert len(d._store) == 1 and len(d._pieces) == 3
        assert d.data(12345) == b"changed" and d.data(12346) == b"x" * 50


def _edit(d, model, op, a, b, n):
    """One random edit of ``d`` and of the plain list ``model`` alike."""
    if not model and op != "insert":
        return model
    a %= max(len(model), 1)
    if op == "replace":
        d.replace(a, b"x%d" % n)
        model[a] = b"x%d" % n
    elif op == "delete":
        idx = {a, b % len(model)}
        d.delete(idx)
        model = [r for k, r in enumerate(model) if k not in idx]
    elif op == "insert":
        at = b % (len(model) + 1)
        d.insert(at, [b"i%d" % n])
        model[at:at] = [b"i%d" % n]
    elif op == "move":
        rest = [r for k, r in enumerate(model) if k != a]
        to = b % (len(rest) + 1)
        d.move([a], to)
        model = rest[:to] + [model[a]] + rest[to:]
    else:
        d.duplicate([a])
        model[a + 1:a + 1] = [model[a]]
    return model


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["replace", "delete", "insert", "move", "duplicate"]),
                              st.integers(0, 30), st.integers(0, 30)), max_size=12))
def test_matches_a_plain_list_model(tmp_path_factory, ops):
    path = tmp_path_factory.mktemp("m") / "m.tfrecord"
    model = [b"r%d" % i for i in range(12)]
    write_records(path, model)
    with open_tfrecord(path) as f:
        d = Document(f)
        for n, (op, a, b) in enumerate(ops):
            model = _edit(d, model, op, a, b, n)
            assert list(d) == model


def test_save_over_the_source_copies_untouched_records_verbatim(tmp_path):
    path = tmp_path / "flowers.tfrecord"
    shutil.copy(fixture_path("flowers_jpeg.tfrecord"), path)
    original = path.read_bytes()
    with open_tfrecord(path) as f:
        d = Document(f)
        d.delete([0])
        report = d.save()
    assert report.copied == 24 and report.written == 0
    start = len(open(fixture_path("flowers_jpeg.tfrecord"), "rb").read()) - len(path.read_bytes())
    assert path.read_bytes() == original[start:]
    with TFRecordFile(path, use_cache=False) as g:
        g.verify()
        assert len(g) == 24 and g.problems == []


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_save_as_any_compression_reads_back_with_crcs(tmp_path, compression):
    with open_tfrecord(fixture_path("structured.tfrecord.gz")) as f:
        d = Document(f)
        d.replace(1, b"changed")
        out = tmp_path / "out.tfrecord"
        d.save(out, compression)
        expected = list(d)
    with TFRecordFile(out, use_cache=False) as g:
        g.verify()
        assert g.compression.value == compression and g.problems == [] and list(g) == expected


def test_interrupted_save_leaves_the_original_byte_identical(tmp_path, monkeypatch):
    path = tmp_path / "data.tfrecord"
    shutil.copy(fixture_path("structured.tfrecord"), path)
    original = path.read_bytes()
    import codec.storage.writer as writer_mod

    calls = {"n": 0}
    real = writer_mod.TFRecordWriter._put

    def failing_put(self, chunk):
        calls["n"] += 1
        if calls["n"] == 40:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, chunk)

    monkeypatch.setattr(writer_mod.TFRecordWriter, "_put", failing_put)
    with open_tfrecord(path) as f:
        d = Document(f)
        d.replace(0, b"edited")
        with pytest.raises(OSError):
            d.save()
    assert path.read_bytes() == original
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []


def test_disk_full_during_save_is_one_clear_message(tmp_path, monkeypatch):
    path = tmp_path / "data.tfrecord"
    shutil.copy(fixture_path("structured.tfrecord"), path)
    original = path.read_bytes()

    def full(*_a):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with open_tfrecord(path) as f:
        d = Document(f)
        d.delete([3])
        with pytest.raises(FileAccessError, match="disk full while writing .*data.tfrecord"):
            d.save()
    assert path.read_bytes() == original


def test_truncated_record_is_dropped_on_save_and_reported(tmp_path):
    with open_tfrecord(fixture_path("truncated.tfrecord")) as f:
        d = Document(f)
        report = d.save(tmp_path / "fixed.tfrecord")
    assert report.dropped_truncated == 1 and report.records == 20
    with TFRecordFile(tmp_path / "fixed.tfrecord", use_cache=False) as g:
        g.verify()
        assert len(g) == 20 and g.problems == []


def test_index_runs_and_sorted_unique_match_the_plain_definitions():
    import random

    import numpy as np

    from codec.editing.document import index_runs, sorted_unique

    def plain_runs(indices):
        spans = []
        for i in sorted(set(indices)):
            if spans and spans[-1][1] == i:
                spans[-1] = (spans[-1][0], i + 1)
            else:
                spans.append((i, i + 1))
        return spans

    rng = random.Random(5)
    for _ in range(500):
        indices = [rng.randrange(60) for _ in range(rng.randrange(40))]
        assert index_runs(indices) == plain_runs(indices)
        parts = [np.array(sorted(rng.sample(range(60), rng.randrange(10))), dtype=np.int64) for _ in range(3)]
        assert sorted_unique(parts).tolist() == sorted(set(np.concatenate(parts).tolist()))
    assert index_runs(np.arange(10_000_000)) == [(0, 10_000_000)]  # a Select All: one run
    assert sorted_unique([np.array([3, 1, 1])]).tolist() == [1, 3]  # one part, unsorted


def _save_keeping_history(d, snapshots):
    """Save over the source, reopen the saved file and rebase: the snapshots as they read now."""
    plan = d.plan_history(snapshots)
    assert plan is not None
    d.save()
    saved = open_tfrecord(d.source.path)
    old = d.source
    translated = [Document.translate(s, plan) for s in snapshots]
    d.rebase(saved, plan)
    old.close()
    return translated


OPS = st.lists(st.tuples(st.sampled_from(["replace", "delete", "insert", "move", "duplicate"]),
                         st.integers(0, 30), st.integers(0, 30)), max_size=8)


@settings(max_examples=25, deadline=None)
@given(before=OPS, after=OPS)
def test_an_undo_history_survives_saves_over_the_file(tmp_path_factory, before, after):
    path = tmp_path_factory.mktemp("h") / "h.tfrecord"
    model = [b"r%d" % i for i in range(12)]
    write_records(path, model)
    original = path.read_bytes()
    d = Document(open_tfrecord(path))
    snapshots, states = [d.snapshot()], [list(model)]
    for n, (op, a, b) in enumerate(before):
        model = _edit(d, model, op, a, b, n)
        snapshots.append(d.snapshot())
        states.append(list(model))
    snapshots = _save_keeping_history(d, snapshots)
    assert list(d) == model and not d.modified
    for n, (op, a, b) in enumerate(after, start=100):  # edits after the save, then a second save
        model = _edit(d, model, op, a, b, n)
        snapshots.append(d.snapshot())
        states.append(list(model))
    snapshots = _save_keeping_history(d, snapshots)
    for snap, state in zip(snapshots, states):  # every state of the history, undone to and redone
        d.restore(snap)
        assert list(d) == state
    d.restore(snapshots[0])  # all the way back, saved again: the original file, byte for byte
    d.save()
    d.source.close()
    assert path.read_bytes() == original


def test_a_history_is_not_kept_past_a_truncated_record(tmp_path):
    path = tmp_path / "t.tfrecord"
    shutil.copy(fixture_path("truncated.tfrecord"), path)
    with open_tfrecord(path) as f:
        d = Document(f)
        d.replace(0, b"zero")
        assert d.plan_history([d.snapshot()]) is None  # the save drops the truncated record
