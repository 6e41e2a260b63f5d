"""An index pass that was stopped goes on from where it stopped (TFRecordFile.resume_iter): the records
found are kept, a plain file's walk continues after the last of them, and the result is the whole index."""
from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from codec.format.framing import encode_record
from codec.sources.tfrecord_file import TFRecordFile

RECORDS = [b"record %06d " % i + bytes(200 + i % 97) for i in range(12000)]  # ~3 MB: a step per MiB
GARBAGE = b"\x07garbage" * 300


def damaged_file(path: Path) -> str:
    """The records with garbage between its two halves (a problem, and the records after it found again)."""
    half = len(RECORDS) // 2
    path.write_bytes(b"".join(map(encode_record, RECORDS[:half])) + GARBAGE
                     + b"".join(map(encode_record, RECORDS[half:])))
    return str(path)


def whole(path: str):
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index(verify=True)
        return [f.record_info(i) for i in range(len(f))], [(p.offset, p.kind, p.size) for p in f.problems]


def stopped(f: TFRecordFile, steps: int, verify: bool = True) -> int:
    """Run ``steps`` progress steps of a pass, then stop it (as Cancel does); the records found."""
    passes = f.index_iter(verify=verify)
    for _ in range(steps):
        next(passes)
    passes.close()
    assert not f.indexed
    return len(f)


@pytest.mark.parametrize("steps", [1, 3])
def test_a_stopped_pass_resumes_after_its_last_record_and_ends_whole(tmp_path, steps):
    path = damaged_file(tmp_path / "d.tfrecord")
    infos, problems = whole(path)
    with TFRecordFile(path, use_cache=False) as f:
        found = stopped(f, steps)
        assert 0 < found < len(RECORDS)
        kept = [f.record_info(i) for i in range(found)]
        progress = list(f.resume_iter(verify=True))
        assert progress[0].records >= found  # counts go on, not from zero
        assert f.indexed and f.verified and progress[-1].done
        assert [f.record_info(i) for i in range(len(f))] == infos and infos[:found] == kept
        assert [(p.offset, p.kind, p.size) for p in f.problems] == problems
        assert [f.read(i).data for i in (0, found, len(f) - 1)] == [RECORDS[0], RECORDS[found], RECORDS[-1]]


def settled(srv, quiet: float = 0.5, limit: float = 10) -> None:
    """Wait until the stopped pass's reads ahead, still in flight on their threads, have reached the server."""
    import time

    seen, since, began = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() - began < limit:
        if len(srv.stats.ranges) != seen:
            seen, since = len(srv.stats.ranges), time.monotonic()
        time.sleep(0.05)


def test_resume_reads_only_the_rest_of_a_remote_file(tmp_path):
    pytest.importorskip("fsspec")
    from tests.remote_servers import range_server

    path = damaged_file(tmp_path / "r.tfrecord")
    infos, _ = whole(path)
    with range_server(tmp_path) as srv, TFRecordFile(srv.url_for("r.tfrecord"), use_cache=False) as f:
        found = stopped(f, 2, verify=False)
        settled(srv)
        resume_at = f.record_info(found - 1).end
        asked_before = sorted(start for start, _ in srv.stats.ranges if start < resume_at)
        list(f.resume_iter())
        # nothing before the point it stopped is asked again but the window around it
        again = Counter(start for start, _ in srv.stats.ranges if start < resume_at) - Counter(asked_before)
        assert all(start >= resume_at - (256 << 10) for start in again), (resume_at, again)
        assert [(i.offset, i.length) for i in map(f.record_info, range(len(f)))] == \
            [(i.offset, i.length) for i in infos]


def test_a_compressed_stream_resumes_from_its_start(tmp_path):
    plain = damaged_file(tmp_path / "p.tfrecord")
    path = tmp_path / "c.tfrecord.gz"
    path.write_bytes(gzip.compress(Path(plain).read_bytes()))
    with TFRecordFile(str(path), use_cache=False) as f:
        stopped(f, 2)
        list(f.resume_iter(verify=True))
        assert f.indexed and len(f) == len(RECORDS)
        assert [f.read(i).data for i in (0, len(f) - 1)] == [RECORDS[0], RECORDS[-1]]
