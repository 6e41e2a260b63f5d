"""Plain http(s) URLs read through http.client (codec/storage/http_direct.py): what takes that path and
what goes to fsspec, the same bytes and checks either way, and a command on a URL that never
imports fsspec or aiohttp."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from codec import TFRecordFile, write_records
from codec.errors import FileAccessError, FileChangedError
from codec.storage.http_direct import DirectHttp, usable
from codec.storage.remote import RemoteFile
from tests.remote_servers import RangeServer

from .conftest import ROOT

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

RECORDS = [i.to_bytes(4, "little") * (1 + i * 37) for i in range(300)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("direct")
    write_records(str(root / "data.tfrecord"), RECORDS)
    (root / "secret.tfrecord").write_bytes((root / "data.tfrecord").read_bytes())
    with RangeServer(root, deny=("secret.tfrecord",)) as srv:
        yield srv


@pytest.mark.parametrize("url, options, expected", [
    ("http://127.0.0.1:8000/a.tfrecord", {}, True),
    ("https://example.com/a.tfrecord?sig=1", {}, True),
    ("http://user:pw@127.0.0.1:8000/a.tfrecord", {}, False),  # aiohttp's basic auth
    ("http://127.0.0.1:8000/a.tfrecord", {"headers": {"X": "1"}}, False),
    ("simplecache::http://127.0.0.1:8000/a.tfrecord", {}, False),
    ("s3://bucket/a.tfrecord", {}, False),
])
def test_what_takes_the_direct_path(monkeypatch, url, options, expected):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")
    assert usable(url, options) is expected


def test_a_proxy_or_a_netrc_sends_the_url_to_fsspec(monkeypatch, tmp_path):
    url = "http://example.com/a.tfrecord"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("NETRC", raising=False)
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy:3128")
    assert not usable(url, {})
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert usable(url, {})
    monkeypatch.delenv("HTTP_PROXY")
    (tmp_path / ".netrc").write_text("machine example.com login a password b\n")
    assert not usable(url, {})


@pytest.mark.network
def test_records_read_through_it_are_the_files(served):
    url = served.url_for("data.tfrecord")
    with TFRecordFile(url, use_cache=False) as f:
        assert isinstance(f.remote.fs, DirectHttp)
        f.build_index(verify=True)
        assert not f.problems
        assert [f.read(i).data for i in range(len(f))] == RECORDS
        assert f[123] == RECORDS[123]  # a random read: one request of its own


@pytest.mark.network
def test_a_refused_head_goes_to_fsspec_and_says_so_in_its_words(served):
    with pytest.raises(FileAccessError, match="access denied"):
        RemoteFile.open(served.url_for("secret.tfrecord"))
    with pytest.raises(FileAccessError, match="not found"):
        RemoteFile.open(served.url_for("missing.tfrecord"))


@pytest.mark.network
def test_an_object_replaced_after_opening_is_a_changed_error(served):
    path = served.root / "moving.tfrecord"
    write_records(str(path), RECORDS[:10])
    remote = RemoteFile.open(served.url_for("moving.tfrecord"))
    assert isinstance(remote.fs, DirectHttp)
    write_records(str(path) + ".new", RECORDS[:11])
    os.replace(str(path) + ".new", path)
    with pytest.raises(FileChangedError, match="changed on the server"):
        remote.read_at(0, 100)


@pytest.mark.network
def test_connections_are_kept_between_requests(served):
    remote = RemoteFile.open(served.url_for("data.tfrecord"))
    for k in range(5):
        assert remote.read_at(k * 10, 10)
    idle = [conns for key, conns in remote.fs._idle.items() if key[1] == served.url.split("://")[1]]
    assert len(idle) == 1 and len(idle[0]) == 1  # one connection served every request


@pytest.mark.network
def test_cat_of_a_url_imports_neither_fsspec_nor_aiohttp(served, tmp_path):
    code = ("import runpy, sys\n"
            "sys.argv = ['tfrlens-cli', 'cat', '--json', '--no-cache', '--range', '0:1', sys.argv[1]]\n"
            "try:\n    runpy.run_module('codec.cli.main', run_name='__main__')\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print(sorted(m for m in ('fsspec', 'aiohttp') if m in sys.modules), file=sys.stderr)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TFRLENS_CACHE_DIR=str(tmp_path), NO_PROXY="127.0.0.1")
    proc = subprocess.run([sys.executable, "-c", code, served.url_for("data.tfrecord")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "[]"
    assert proc.stdout.count("\n") == 1 and '"index": 0' in proc.stdout.replace('"index":0', '"index": 0')


def _silent_listener():
    """A socket that accepts connections (the kernel's backlog) and never answers: a hung server."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def test_a_stopped_server_fails_the_next_read_at_once_with_one_line(tmp_path):
    import time

    write_records(str(tmp_path / "data.tfrecord"), RECORDS)
    srv = RangeServer(tmp_path).start()
    remote = RemoteFile.open(srv.url_for("data.tfrecord"))
    assert remote.read_at(0, 16)  # a kept-alive connection now exists
    srv.kill()
    began = time.monotonic()
    with pytest.raises(FileAccessError) as caught:
        remote.read_at(100, 16)
    assert time.monotonic() - began < 5  # no retries with backoff: nothing listens there
    message = str(caught.value)
    assert "(connection refused)" in message and "\n" not in message and "that the server is up" in message


def test_a_server_that_answers_nothing_fails_in_the_first_byte_timeout(monkeypatch):
    import time

    monkeypatch.setenv("TFRLENS_REMOTE_FIRST_BYTE", "0.5")
    with _silent_listener() as sock:
        fs = DirectHttp(0.5, 30, 0.5)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/data.tfrecord"
        remote = RemoteFile(url, fs, url, {"size": 1 << 20, "type": "file"})
        began = time.monotonic()
        with pytest.raises(FileAccessError) as caught:
            remote.read_at(0, 100)
        seconds = time.monotonic() - began
    assert 0.4 < seconds < 3, seconds  # once, not the 30 s idle timeout, and not retried
    assert str(caught.value).endswith("bytes 0-99: no answer for 0.5 s (TFRLENS_REMOTE_FIRST_BYTE): "
                                      "check the network and that the server is up")


def test_the_first_byte_timeout_is_never_longer_than_the_idle_timeout(monkeypatch):
    from codec.storage.remote_errors import answer_timeout

    monkeypatch.delenv("TFRLENS_REMOTE_FIRST_BYTE", raising=False)
    monkeypatch.setenv("TFRLENS_REMOTE_TIMEOUT", "60")
    assert answer_timeout() == 10
    monkeypatch.setenv("TFRLENS_REMOTE_TIMEOUT", "0.5")
    assert answer_timeout() == 0.5
