"""TFRecordFile over URLs, against a loopback HTTP range server that counts what it sends:
the first records come after reading little, the index pass costs about one download,
random reads fetch their record, a cached reopen reads no record data, and a changed
object is re-indexed or refused, never misread."""
from __future__ import annotations

import gzip
import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

from codec.errors import FileAccessError, FileChangedError
from codec.format.framing import Compression
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.remote import RemoteFile
from codec.storage.remote_io import AHEAD_RAMP, CHUNK, FIRST_CHUNK
from codec.storage.writer import write_records
from tests.remote_servers import range_server

pytestmark = pytest.mark.network

MiB = 1 << 20
RECORD = 100_000
COUNT = 240  # 24 MB: more than the first chunks of a pass


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(folder, records, plain file) with big.tfrecord, big.tfrecord.gz, huge.tfrecord and small.tfrecord."""
    root = tmp_path_factory.mktemp("served")
    records = [os.urandom(RECORD - (i % 7) * 1000) for i in range(COUNT)]
    write_records(root / "big.tfrecord", records)
    (root / "big.tfrecord.gz").write_bytes(gzip.compress((root / "big.tfrecord").read_bytes(), 1))
    write_records(root / "huge.tfrecord", [bytes([i]) * (20 * MiB) for i in range(4)])
    write_records(root / "small.tfrecord", [bytes([i % 256]) * 300 for i in range(5000)])
    return root, records, root / "big.tfrecord"


@pytest.fixture
def served(files):
    """(server, records, plain file): a server of its own per test, so that a fetch still in
    flight from an earlier test's pass is never counted in this one."""
    root, records, local = files
    with range_server(root) as srv:
        yield srv, records, local


def test_first_records_come_before_the_file(served):
    srv, records, local = served
    srv.stats.reset()
    f = TFRecordFile(srv.url_for("big.tfrecord"))
    assert f.compression is Compression.NONE and f.file_size == local.stat().st_size
    passing = f.index_iter()
    next(passing)
    assert len(f) > 0 and f[0] == records[0]
    passing.close()
    _settled(f, srv)  # chunks in flight when the pass closed land (and stay out of the next test's counts)
    ramp = sum(FIRST_CHUNK << k for k in range(AHEAD_RAMP + 2))  # the chunks a pass asks for first
    assert srv.stats.bytes <= ramp + 2 * RemoteFile.BLOCK < f.file_size / 4, srv.stats.bytes
    assert f.remote.bytes_fetched == srv.stats.bytes


def _settled(f: TFRecordFile, srv, timeout: float = 10.0) -> None:
    """Wait until every byte the server sent has reached the file (fetches still in flight
    after a pass closed finish on their own threads)."""
    deadline = time.monotonic() + timeout
    while f.remote.bytes_fetched != srv.stats.bytes and time.monotonic() < deadline:
        time.sleep(0.01)


def test_index_pass_costs_about_one_download(served):
    srv, records, local = served
    srv.stats.reset()
    f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False)
    f.build_index()
    assert len(f) == COUNT and not f.problems
    size = local.stat().st_size
    assert size - 2 * RECORD <= srv.stats.bytes <= size + RECORD  # the sniffed block is not fetched again
    assert srv.stats.requests <= size // CHUNK + 8  # large chunks, not a request per record


def test_random_read_after_index_fetches_only_the_record(served):
    srv, records, _ = served
    f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False).build_index()
    for i in (123, 7, COUNT - 1):
        srv.stats.reset()
        assert f[i] == records[i]
        assert srv.stats.requests == 1 and srv.stats.bytes == 16 + len(records[i])  # a record alone
    small = TFRecordFile(srv.url_for("small.tfrecord"), use_cache=False).build_index()
    srv.stats.reset()
    rows = [small[i] for i in range(3000, 3100)]  # a page of a table of small records
    assert rows == [bytes([i % 256]) * 300 for i in range(3000, 3100)]
    assert srv.stats.requests == 1 and srv.stats.bytes <= RemoteFile.BLOCK  # one block holds the page


def test_cached_reopen_reads_no_record_data(served):
    srv, records, _ = served
    url = srv.url_for("big.tfrecord")
    TFRecordFile(url).build_index()
    srv.stats.reset()
    g = TFRecordFile(url)
    g.build_index()
    assert len(g) == COUNT
    assert srv.stats.requests == 1 and srv.stats.bytes == 0  # the HEAD: no sniff, no pass
    assert g[-1] == records[-1]
    assert srv.stats.requests == 2 and srv.stats.bytes <= 2 * MiB


def test_changed_object_is_reindexed_not_misread(served, tmp_path):
    srv, records, local = served
    shutil.copy(local, srv.root / "changing.tfrecord")
    url = srv.url_for("changing.tfrecord")
    assert len(TFRecordFile(url).build_index()) == COUNT
    write_records(srv.root / "changing.tfrecord", records[:100])
    g = TFRecordFile(url).build_index()
    assert len(g) == 100 and g[99] == records[99]


def test_object_replaced_while_open_is_refused(served):
    srv, records, local = served
    shutil.copy(local, srv.root / "replaced.tfrecord")
    f = TFRecordFile(srv.url_for("replaced.tfrecord"), use_cache=False).build_index()
    assert f[10] == records[10]
    other = list(records)
    other[200] = os.urandom(len(records[200]))
    write_records(srv.root / "replaced.tfrecord", other)  # same size, another version (ETag)
    st = os.stat(srv.root / "replaced.tfrecord")
    os.utime(srv.root / "replaced.tfrecord", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(FileChangedError, match="changed on the server"):
        f[200]


def test_huge_records_are_stepped_over_by_their_headers(served):
    srv, _, _ = served
    url = srv.url_for("huge.tfrecord")
    size = (srv.root / "huge.tfrecord").stat().st_size
    f = TFRecordFile(url, use_cache=False)
    srv.stats.reset()
    f.build_index()
    assert len(f) == 4 and not f.problems
    assert srv.stats.bytes < size / 8, srv.stats.bytes  # headers, not the records
    assert f[2] == bytes([2]) * (20 * MiB)
    srv.stats.reset()
    g = TFRecordFile(url, use_cache=False)
    g.build_index(verify=True)  # checking the data CRCs must read everything, streamed
    assert g.verified and not g.problems and size <= srv.stats.bytes <= size + MiB


def test_gzip_over_http_equals_local_and_reopens_through_zran(served):
    srv, records, _ = served
    url = srv.url_for("big.tfrecord.gz")
    f = TFRecordFile(url)
    assert f.compression is Compression.GZIP
    f.build_index()
    local = TFRecordFile(srv.root / "big.tfrecord.gz", use_cache=False).build_index()
    assert f.index.offsets().tolist() == local.index.offsets().tolist() and f.problems == local.problems
    assert f[77] == records[77]
    f.wait_for_cache()  # the zran index, for the next open
    srv.stats.reset()
    g = TFRecordFile(url)
    g.build_index()
    assert srv.stats.requests == 1 and srv.stats.bytes == 0
    assert g[-1] == records[-1]
    assert srv.stats.bytes <= 2 * MiB  # through the zran index, not a decompression from the start
    assert g[5] == records[5]


def test_slow_server_first_record_quickly(served):
    """With 20 ms per request, opening and showing the first record takes a few round trips
    (counted at the server as they arrive, and by the file), never a read per record."""
    srv, records, _ = served
    srv.latency = 0.02
    try:
        f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False)
        passing = f.index_iter()
        next(passing)
        first = f[0]
        asked = srv.stats.requests
        passing.close()
        _settled(f, srv)
    finally:
        srv.latency = 0.0
    assert first == records[0]
    assert 1 <= asked <= 6 and srv.stats.requests <= 6
    assert f.remote.requests <= 6


def test_a_local_path_has_no_remote(served):
    _, _, local = served
    f = TFRecordFile(Path(local))
    assert f.remote is None and f.is_open


def test_connection_lost_mid_pass_is_reported_and_records_read_stay_readable(served, monkeypatch):
    import codec.storage.remote

    monkeypatch.setattr(codec.storage.remote, "BACKOFF", 0.01)
    srv, records, _ = served
    f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False)
    passing = f.index_iter()
    next(passing)
    got = len(f)
    assert got > 0 and f[0] == records[0]
    srv.stats.reset()
    srv.down = True
    try:
        with pytest.raises(FileAccessError) as err:
            for _ in passing:
                pass
        assert srv.stats.requests >= codec.storage.remote.RETRIES + 1  # tried again before giving up
    finally:
        srv.down = False
    assert "\n" not in str(err.value) and srv.url_for("big.tfrecord") in str(err.value)
    assert len(f) >= got and all(f[i] == records[i] for i in range(len(f)))  # what was found stays readable


def test_closing_the_file_stops_its_pass(served):
    srv, records, local = served
    f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False)
    passing = f.index_iter()
    next(passing)
    f.close()
    with pytest.raises(FileAccessError, match="closed"):
        for _ in passing:
            pass
    _settled(f, srv)
    assert srv.stats.bytes < local.stat().st_size / 2  # stopped, not downloaded to the end


def test_records_read_in_order_stream_and_random_ones_do_not(served):
    srv, records, local = served
    f = TFRecordFile(srv.url_for("big.tfrecord"), use_cache=False).build_index()
    srv.stats.reset()
    assert [f[i] for i in range(COUNT)] == records  # cat, export, repair read so
    size = local.stat().st_size
    assert srv.stats.requests <= size // CHUNK + 8 and srv.stats.bytes <= size + CHUNK
    srv.stats.reset()
    assert f[5] == records[5] and f[200] == records[200]
    assert srv.stats.requests == 2 and srv.stats.bytes == 32 + len(records[5]) + len(records[200])


def test_verifying_a_cached_remote_file_streams_it(served):
    srv, records, local = served
    url = srv.url_for("big.tfrecord")
    TFRecordFile(url).build_index()
    srv.stats.reset()
    g = TFRecordFile(url)
    g.build_index(verify=True)  # the index from the cache, the data read again
    assert g.verified and not g.problems
    assert srv.stats.requests <= local.stat().st_size // CHUNK + 8


def test_a_released_remote_file_holds_no_blocks(served):
    srv, records, _ = served
    f = TFRecordFile(srv.url_for("small.tfrecord"), use_cache=False).build_index()
    assert f[3000] == bytes([3000 % 256]) * 300 and f.is_open and f.remote.holding
    assert f.release()
    assert not f.remote.holding and not f.is_open
    assert f[3001] == bytes([3001 % 256]) * 300  # and reads again


def test_a_signed_url_leaves_no_secret_in_the_cache(served, private_cache):
    srv, records, _ = served
    url = srv.url_for("big.tfrecord")
    TFRecordFile(url + "?X-Amz-Signature=SECRET1&X-Amz-Expires=60").build_index()
    stored = b"".join(p.read_bytes() for p in private_cache.rglob("*") if p.is_file())
    assert stored and b"SECRET1" not in stored
    srv.stats.reset()
    g = TFRecordFile(url + "?X-Amz-Signature=SECRET2&X-Amz-Expires=60")  # signed again: the same object
    g.build_index()
    assert srv.stats.requests == 1 and srv.stats.bytes == 0 and g[7] == records[7]


def test_http_without_etag_a_replaced_object_is_refused(tmp_path):
    records = [os.urandom(1000) for _ in range(300)]
    write_records(tmp_path / "a.tfrecord", records)
    with range_server(tmp_path, etag=False) as srv:
        f = TFRecordFile(srv.url_for("a.tfrecord"), use_cache=False).build_index()
        assert "etag" not in f.remote.version and f[1] == records[1]
        other = [os.urandom(1000) for _ in range(300)]
        write_records(tmp_path / "a.tfrecord", other)  # same size
        st = os.stat(tmp_path / "a.tfrecord")
        os.utime(tmp_path / "a.tfrecord", ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))
        with pytest.raises(FileChangedError):
            f[299]


def test_a_small_object_from_a_server_without_ranges_reads(tmp_path):
    records = [b"r%d" % i * 10 for i in range(50)]
    write_records(tmp_path / "s.tfrecord", records)
    with range_server(tmp_path, ranges=False) as srv:  # answers every read with the whole object (200)
        f = TFRecordFile(srv.url_for("s.tfrecord")).build_index()
        assert list(f) == records
