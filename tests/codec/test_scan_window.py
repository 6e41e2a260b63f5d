"""The plain-file index pass through its small read window: first rows at once, memory of the
index alone plus a constant, large records checked one by one, length CRCs checked by a verify
over a cached index."""
from __future__ import annotations

import random
import tracemalloc

from codec import ProblemKind, RecordStatus, TFRecordFile
from codec.index.scan import HOP
from codec.storage.writer import write_records

from .conftest import flip_in_place, record_offset


def small(n: int) -> list[bytes]:
    rng = random.Random(5)
    return [b"record %d " % i + rng.randbytes(rng.randrange(0, 60)) for i in range(n)]


def test_the_first_progress_step_already_has_records(tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(path, small(20_000))
    with TFRecordFile(path, use_cache=False) as f:
        steps = f.index_iter()
        first = next(steps)
        assert 0 < first.records < 20_000 and len(f.index) == first.records
        rest = list(steps)
        assert rest[-1].done and rest[-1].records == 20_000
        counts = [first.records] + [p.records for p in rest]
        assert counts == sorted(counts)


def test_index_pass_holds_little_besides_the_index(tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(path, small(100_000))
    with TFRecordFile(path, use_cache=False) as f:
        tracemalloc.start()
        try:
            f.build_index()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(f) == 100_000
        assert peak < f.index.nbytes + (1 << 20), (peak, f.index.nbytes)


def test_a_damaged_large_record_is_found_by_the_verifying_pass_and_its_neighbours_kept(tmp_path):
    rng = random.Random(7)
    recs = [rng.randbytes(HOP + 1000 * i) for i in range(12)]
    path = tmp_path / "large.tfrecord"
    write_records(path, recs)
    flip_in_place(path, record_offset(recs, 5) + 12 + 500)  # inside record 5's data
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index(verify=True)
        assert len(f) == 12
        assert [f.index.status(i) for i in range(12)] == \
            [RecordStatus.OK] * 5 + [RecordStatus.DATA_CRC] + [RecordStatus.OK] * 6
        assert [(p.index, p.kind) for p in f.problems] == [(5, ProblemKind.DATA_CRC)]
        assert [f.read(i).data for i in (4, 6)] == [recs[4], recs[6]]


def test_verify_over_a_cached_index_checks_the_length_crcs(tmp_path):
    recs = small(3000) + [b"x" * 70_000, b"y" * 70_000, b"tail"]  # small records and large ones
    path = tmp_path / "cached.tfrecord"
    write_records(path, recs)
    with TFRecordFile(path) as f:
        f.build_index()  # cached, without reading any data CRC
    flip_in_place(path, record_offset(recs, 1234) + 9)  # a bit of record 1234's length CRC
    flip_in_place(path, record_offset(recs, 3001) + 10)  # and of the second large record's
    with TFRecordFile(path) as f:
        f.build_index()
        assert f.problems == []  # the cached index, not a new pass
        problems = f.verify()
        assert [(p.index, p.offset, p.kind) for p in problems] == [
            (1234, record_offset(recs, 1234), ProblemKind.LENGTH_CRC),
            (3001, record_offset(recs, 3001), ProblemKind.LENGTH_CRC)]
        assert "recovered" in problems[0].detail
        assert f.index.status(1234) is RecordStatus.LENGTH_CRC and f.index.status(3001) is RecordStatus.LENGTH_CRC
        assert f.read(1234).data == recs[1234] and f.read(3001).data == recs[3001]
        assert f.index.status(1233) is RecordStatus.OK and f.index.status(3002) is RecordStatus.OK
