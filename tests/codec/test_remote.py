"""codec.storage.remote against real loopback servers (a range-serving HTTP server and moto S3):
ranged reads fetch only what is asked, a pass streams in few requests,
and errors are one line naming the URL."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

from codec.errors import FileAccessError, UsageError
from codec.storage.remote import CLOUD_EXTRA, RemoteFile, is_url, remote_filesystem
from codec.storage.remote_errors import RangeNotSupportedError, access_error, is_transient
from codec.storage.writer import write_records
from tests.remote_servers import copy_into, make_bucket, range_server, use_s3_env

ROOT = Path(__file__).resolve().parent.parent.parent
N = 2000


def _records() -> list[bytes]:
    return [hashlib.sha256(str(i).encode()).digest() * ((900 + (i * 37) % 250) // 32) for i in range(N)]


@pytest.fixture(scope="module")
def tfrecord(tmp_path_factory):
    """(path, record offsets, record lengths) of a ~2 MB plain TFRecord file."""
    path = tmp_path_factory.mktemp("remote") / "train.tfrecord"
    records = _records()
    write_records(path, records)
    offsets, pos = [], 0
    for data in records:
        offsets.append(pos)
        pos += 16 + len(data)
    assert pos == path.stat().st_size
    return path, offsets, [len(d) for d in records]


@pytest.fixture(scope="module")
def http(tfrecord, tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    copy_into(root, tfrecord[0], "data/train.tfrecord")
    with range_server(root) as srv:
        yield srv


@pytest.fixture
def s3(s3_endpoint, tfrecord, monkeypatch, tmp_path):
    """A fresh bucket holding data/train.tfrecord; the fake S3 environment lasts this test only."""
    use_s3_env(monkeypatch, s3_endpoint, tmp_path)
    fs, bucket = make_bucket({"data/train.tfrecord": tfrecord[0]})
    return fs, bucket


def _open_s3(url: str, **kw) -> RemoteFile:
    return RemoteFile.open(url, skip_instance_cache=True, **kw)


def _one_line_naming(exc: BaseException, url: str) -> str:
    text = str(exc)
    assert "\n" not in text and url in text, text
    return text


@pytest.mark.parametrize("path, expected", [
    ("s3://bucket/key.tfrecord", True), ("gs://b/train-*-of-01024", True), ("https://host/x", True),
    ("hf://datasets/x/y", True), ("simplecache::s3://b/k", True), ("file:///tmp/x", True),
    ("/tmp/x.tfrecord", False), ("relative/x", False), ("C:\\data\\x.tfrecord", False), ("C:/data/x", False),
    ("c://data/x", False), ("", False), ("no-scheme:/x", False),
])
def test_is_url(path, expected):
    assert is_url(path) is expected


def test_import_does_not_load_fsspec():
    code = "import sys, codec.storage.remote; print(sorted(m for m in ('fsspec', 's3fs', 'aiohttp') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_unknown_protocol_is_a_usage_error():
    with pytest.raises(UsageError) as err:
        remote_filesystem("nosuchproto://b/x")
    assert "nosuchproto" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("url, package", [("gs://bucket/train.tfrecord", "gcsfs"),
                                          ("az://container/train.tfrecord", "adlfs"),
                                          ("hf://datasets/user/set/train.tfrecord", "huggingface_hub")])
def test_missing_protocol_package_says_what_to_install(url, package):
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed")
    with pytest.raises(UsageError) as err:
        remote_filesystem(url)
    text = _one_line_naming(err.value, url)
    assert package in text
    assert (CLOUD_EXTRA in text) == (package == "gcsfs")  # the extra covers gs://; others name their package
    assert package == "gcsfs" or f"pip install {package}" in text


def test_transient_classification():
    assert is_transient(TimeoutError()) and is_transient(ConnectionResetError())
    assert not is_transient(FileNotFoundError("x")) and not is_transient(PermissionError("x"))
    named = type("EndpointConnectionError", (Exception,), {})()   # botocore's is not an OSError
    assert is_transient(named)
    assert "cannot connect" in str(access_error("s3://b/k", named))


# --- HTTP -------------------------------------------------------------------------------------------

@pytest.mark.network
def test_http_open_reads_size_and_etag_in_one_request(http, tfrecord):
    http.stats.reset()
    url = http.url_for("data/train.tfrecord")
    remote = RemoteFile.open(url)
    st = os.stat(http.root / "data/train.tfrecord")
    assert remote.size == tfrecord[0].stat().st_size
    assert remote.version["etag"] == f'"{st.st_size:x}-{st.st_mtime_ns:x}"'
    assert remote.version["size"] == remote.size and remote.version["url"] == url
    assert "GMT" in remote.version["mtime"]
    assert http.stats.requests == 1 and http.stats.bytes == 0


@pytest.mark.network
def test_http_without_etag_keeps_size_and_mtime(tfrecord, tmp_path):
    copy_into(tmp_path, tfrecord[0], "x.tfrecord")
    with range_server(tmp_path, etag=False) as srv:
        version = RemoteFile.open(srv.url_for("x.tfrecord")).version
        thread = srv._thread
    assert "etag" not in version and version["size"] == tfrecord[0].stat().st_size and "GMT" in version["mtime"]
    assert not thread.is_alive()


@pytest.mark.network
def test_http_read_at_fetches_only_the_record(http, tfrecord):
    path, offsets, lengths = tfrecord
    local = path.read_bytes()
    remote = RemoteFile.open(http.url_for("data/train.tfrecord"))
    http.stats.reset()
    for i in (0, 1234, N - 1):
        span = 16 + lengths[i]
        assert remote.read_at(offsets[i], span) == local[offsets[i]:offsets[i] + span]
    total = sum(16 + lengths[i] for i in (0, 1234, N - 1))
    assert http.stats.requests == 3 and http.stats.bytes == total
    assert remote.bytes_fetched == total and remote.requests == 1 + 3
    assert remote.read_at(len(local) - 10, 100) == local[-10:]
    assert remote.read_at(len(local), 5) == b"" and remote.read_at(3, 0) == b""


@pytest.mark.network
def test_http_404_is_one_line(http):
    url = http.url_for("data/missing.tfrecord")
    with pytest.raises(FileAccessError) as err:
        RemoteFile.open(url)
    assert "not found" in _one_line_naming(err.value, url)


@pytest.mark.network
def test_http_server_ignoring_range_is_refused(tfrecord, tmp_path):
    copy_into(tmp_path, tfrecord[0], "x.tfrecord")
    with range_server(tmp_path, ranges=False) as srv:
        url = srv.url_for("x.tfrecord")
        remote = RemoteFile.open(url)
        with pytest.raises(RangeNotSupportedError) as err:
            remote.read_at(1000, 100)
        assert "range requests" in _one_line_naming(err.value, url)
        assert remote.bytes_fetched == 0 and srv.stats.requests == 2   # HEAD + one GET, not retried


@pytest.mark.network
def test_dropped_connection_is_retried(tfrecord, tmp_path):
    copy_into(tmp_path, tfrecord[0], "x.tfrecord")
    local = tfrecord[0].read_bytes()
    with range_server(tmp_path, drop_first=2) as srv:
        remote = RemoteFile.open(srv.url_for("x.tfrecord"), retries=3, backoff=0.01)
        assert remote.read_at(5000, 3000) == local[5000:8000]
        assert srv.stats.requests == 1 + 3 and srv.stats.ranges == [(5000, 7999)]
        srv.drop_first = 100
        srv.stats.reset()
        with pytest.raises(FileAccessError) as err:
            remote.read_at(0, 10)
        _one_line_naming(err.value, srv.url_for("x.tfrecord"))
        # our four tries (aiohttp itself retries once on a reused keep-alive connection), then reported
        assert 4 <= srv.stats.requests <= 8 and srv.stats.ranges == []


@pytest.mark.network
def test_http_403_is_access_denied_without_retry(tfrecord, tmp_path):
    copy_into(tmp_path, tfrecord[0], "secret.tfrecord")
    with range_server(tmp_path, deny=("secret.tfrecord",)) as srv:
        url = srv.url_for("secret.tfrecord")
        with pytest.raises(FileAccessError) as err:
            RemoteFile.open(url, backoff=5)
        assert "access denied" in _one_line_naming(err.value, url)


def test_connection_refused_is_retried_then_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.tfrecord"
    with pytest.raises(FileAccessError) as err:
        RemoteFile.open(url, retries=1, backoff=0.01)
    assert "cannot connect" in _one_line_naming(err.value, url)


# --- S3 (moto) --------------------------------------------------------------------------------------

@pytest.mark.network
def test_s3_open_version_and_reads(s3, tfrecord):
    fs, bucket = s3
    path, offsets, lengths = tfrecord
    local = path.read_bytes()
    remote = _open_s3(f"s3://{bucket}/data/train.tfrecord")
    assert remote.size == len(local)
    assert remote.version["etag"].strip('"') == hashlib.md5(local).hexdigest()
    assert remote.version["size"] == len(local) and remote.version["mtime"]
    i = 777
    span = 16 + lengths[i]
    assert remote.read_at(offsets[i], span) == local[offsets[i]:offsets[i] + span]
    assert remote.bytes_fetched == span
    before = remote.requests
    with remote.stream() as stream:  # a pass front to back: large chunks, not a request per read
        assert b"".join(stream.read_at(pos, 4096) for pos in range(0, len(local), 4096)) == local
    assert remote.requests - before <= 6


@pytest.mark.network
@pytest.mark.slow
def test_s3_missing_key_and_bucket_are_one_line(s3):
    fs, bucket = s3
    for url in (f"s3://{bucket}/data/nope.tfrecord", "s3://no-such-bucket-here/x.tfrecord"):
        with pytest.raises(FileAccessError) as err:
            _open_s3(url)
        assert "not found" in _one_line_naming(err.value, url)


@pytest.mark.network
def test_s3_wrong_credentials_are_access_denied(s3, monkeypatch):
    import moto.settings
    fs, bucket = s3
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)   # moto checks keys from now on
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    url = f"s3://{bucket}/data/train.tfrecord"
    with pytest.raises(FileAccessError) as err:
        _open_s3(url)
    assert "access denied" in _one_line_naming(err.value, url)
