"""Shard sets in an S3 bucket (a moto server on loopback): a glob or a folder of 1,100 shards is one
listing of a few pages, a ShardSet takes its shards' sizes from that listing (no request per shard),
and reads the same records as the same shards on disk. Requests are counted by the server itself."""
from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("flask")

from codec.errors import FileAccessError
from codec.sources.shard_set import ShardSet
from codec.storage.listing import expand_entries, expand_inputs, looks_like_shard_set
from codec.storage.remote_list import expand_remote, is_remote_glob
from tests.builders import FIXTURES
from tests.remote_servers import S3_UNSET, s3_env

SHARDS = sorted((FIXTURES / "shards").iterdir())
MANY = 1100  # more than one ListObjectsV2 page (1,000 keys)
PAGE = 1000


class Counter:
    """What the server was asked: (method, path, query) of each request, and the most at once."""

    def __init__(self, app) -> None:
        self.app = app
        self.seen: list[tuple[str, str, str]] = []
        self.active = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self._lock:
            self.seen.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                              environ.get("QUERY_STRING", "")))
            self.active += 1
            self.most = max(self.most, self.active)
        try:
            return self.app(environ, start_response)
        finally:
            with self._lock:
                self.active -= 1

    def reset(self) -> None:
        with self._lock:
            self.seen.clear()
            self.most = 0

    def listings(self) -> list:
        return [r for r in self.seen if r[0] == "GET" and "list-type=2" in r[2]]

    def object_requests(self) -> list:
        """HEADs and GETs of objects (not listings of a bucket)."""
        return [r for r in self.seen if r[1].strip("/").count("/") >= 1 and "list-type" not in r[2]]


@contextmanager
def counted_moto():
    """A moto S3 server on 127.0.0.1 whose WSGI app counts every request it answers."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    counter = Counter(srv._server.app)
    srv._server.app = counter
    try:
        host, port = srv.get_host_and_port()
        yield f"http://{host}:{port}", counter
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(endpoint, counter, bucket) with the S3 environment applied for the whole module. The bucket
    holds 1,100 one-record shards under many/ (put straight into moto's store: uploading them one by
    one would take seconds), the fixture shards under set/, and a few objects a folder leaves out."""
    import s3fs
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    from codec.storage.writer import write_records

    scratch = tmp_path_factory.mktemp("s3env")
    one = scratch / "one.tfrecord"
    write_records(one, [b"x" * 20])
    with counted_moto() as (endpoint, counter), pytest.MonkeyPatch.context() as mp:
        for key in S3_UNSET:
            mp.delenv(key, raising=False)
        for key, value in s3_env(endpoint, scratch).items():
            mp.setenv(key, value)
        fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
        bucket = "shards"
        fs.mkdir(bucket)
        store = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
        body = one.read_bytes()
        for i in range(MANY):
            store.put_object(bucket, f"many/train-{i:05d}-of-{MANY:05d}.tfrecord", body)
        store.put_object(bucket, "many/README.md", b"not a shard")
        store.put_object(bucket, "many/.hidden.tfrecord", body)
        store.put_object(bucket, "many/sub/deeper.tfrecord", body)
        for path in SHARDS:
            store.put_object(bucket, f"set/{path.name}", path.read_bytes())
        store.put_object(bucket, "set/.hidden.tfrecord", body)
        store.put_object(bucket, "set/notes.txt", b"These are notes, not records.\n" * 4)
        fs.mkdir("empty-bucket")
        yield endpoint, counter, bucket


def names(entries) -> list[str]:
    return [url.rsplit("/", 1)[-1] for url, _ in entries]


@pytest.mark.network
@pytest.mark.slow
def test_a_glob_of_1100_shards_is_two_listing_pages(server):
    endpoint, counter, bucket = server
    counter.reset()
    entries = expand_remote(f"s3://{bucket}/many/train-*-of-{MANY:05d}.tfrecord")
    assert names(entries) == [f"train-{i:05d}-of-{MANY:05d}.tfrecord" for i in range(MANY)]
    assert all(url == f"s3://{bucket}/many/{name}" for (url, _), name in zip(entries, names(entries)))
    assert {info["size"] for _, info in entries} == {36}  # one 20-byte record: 16 + 20
    assert all(info.get("ETag") for _, info in entries)
    assert len(counter.listings()) == -(-MANY // PAGE) == 2
    assert len(counter.seen) == 2 and counter.object_requests() == []


@pytest.mark.network
def test_a_folder_is_one_listing_of_its_own_tfrecord_objects(server):
    endpoint, counter, bucket = server
    notes: list[str] = []
    counter.reset()
    entries = expand_remote(f"s3://{bucket}/many/", notes)
    assert len(entries) == MANY  # not README.md, not .hidden.tfrecord, not sub/deeper.tfrecord
    assert names(entries)[0] == f"train-00000-of-{MANY:05d}.tfrecord"
    assert counter.object_requests() == [] and len(counter.listings()) == len(counter.seen) <= 2
    assert notes == [f"1 object(s) in s3://{bucket}/many/ not named like TFRecord files were left out "
                     "(name them, or use a glob, to read them)"]


@pytest.mark.network
def test_a_folder_without_its_slash_and_a_single_object(server):
    endpoint, counter, bucket = server
    assert names(expand_remote(f"s3://{bucket}/set")) == [p.name for p in SHARDS]  # notes.txt is left out
    url = f"s3://{bucket}/set/{SHARDS[1].name}"
    counter.reset()
    [(got, info)] = expand_remote(url)
    assert got == url and info["size"] == SHARDS[1].stat().st_size and info["type"] == "file"
    assert counter.listings() == [] and len(counter.seen) == 1  # one HEAD


@pytest.mark.network
def test_globs_keep_any_name_and_skip_hidden_ones(server):
    endpoint, counter, bucket = server
    assert names(expand_remote(f"s3://{bucket}/set/*")) == ["notes.txt"] + [p.name for p in SHARDS]
    assert names(expand_remote(f"s3://{bucket}/set/*.txt")) == ["notes.txt"]
    assert names(expand_remote(f"s3://{bucket}/set/.h*")) == [".hidden.tfrecord"]
    assert names(expand_remote(f"s3://{bucket}/set/train-0000[1-2]-*")) == [p.name for p in SHARDS[1:3]]


@pytest.mark.network
@pytest.mark.parametrize("tail, expected", [
    ("shards/set/train-*.tfrecord.missing", "no objects match"),
    ("shards/nothing-here/", "not found"),
    ("empty-bucket/", "no objects under"),
    ("no-such-bucket-x/data/", "not found"),
    ("no-such-bucket-x/train-*", "not found"),
    ("shards/set/missing.tfrecord", "not found"),
])
def test_nothing_there_is_one_line_naming_the_url(server, tail, expected):
    url = f"s3://{tail}"
    with pytest.raises(FileAccessError) as err:
        expand_remote(url)
    text = str(err.value)
    assert "\n" not in text and url in text and expected in text, text


@pytest.mark.network
def test_wrong_credentials_are_access_denied(server, monkeypatch):
    import moto.settings

    endpoint, counter, bucket = server
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto checks keys from now on
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    for url in (f"s3://{bucket}/set/", f"s3://{bucket}/set/train-*", f"s3://{bucket}/set/{SHARDS[0].name}"):
        with pytest.raises(FileAccessError) as err:
            expand_remote(url)
        assert "access denied" in str(err.value) and url in str(err.value) and "\n" not in str(err.value)


@pytest.mark.network
def test_expand_inputs_mixes_urls_and_local_paths(server):
    endpoint, counter, bucket = server
    local = str(SHARDS[0])
    entries, notes = expand_entries([local, f"s3://{bucket}/set/train-0000[12]-*", str(FIXTURES / "shards")])
    assert [p for p, _ in entries] == [local, *(f"s3://{bucket}/set/{p.name}" for p in SHARDS[1:3]),
                                       *map(str, SHARDS)]
    assert [info is None for _, info in entries] == [True, False, False, True, True, True, True]
    assert expand_inputs([f"s3://{bucket}/set/"])[0] == [f"s3://{bucket}/set/{p.name}" for p in SHARDS]


def test_shard_set_spelling_needs_no_request():
    assert looks_like_shard_set(["s3://b/data/train-*"]) and looks_like_shard_set(["gs://b/data/"])
    assert looks_like_shard_set(["s3://b/x.tfrecord", "s3://b/y.tfrecord"])
    assert not looks_like_shard_set(["s3://b/data/x.tfrecord"])
    assert not looks_like_shard_set(["https://host/x.tfrecord?sig=abc"])  # a query, not a glob
    assert is_remote_glob("gs://b/train-[0-9]*") and not is_remote_glob("http://h/a?b=*")


@pytest.mark.network
def test_a_set_of_1100_shards_is_made_from_the_listing_alone(server):
    endpoint, counter, bucket = server
    counter.reset()
    with ShardSet.from_args([f"s3://{bucket}/many/"]) as shards:
        assert len(shards.shards) == MANY and shards.file_size == 36 * MANY
        assert all(s.info is not None and s.file is None for s in shards.shards)
        assert counter.object_requests() == [] and len(counter.seen) <= 2
        assert shards.path == f"s3://{bucket}/many/"


@pytest.mark.network
def test_a_remote_set_reads_what_the_local_set_reads(server):
    endpoint, counter, bucket = server
    with ShardSet.from_args([str(FIXTURES / "shards")], use_cache=False) as local:
        local.build_index(verify=True)
        expected = [local[i] for i in range(len(local))]
        sizes = [s.size for s in local.shards]
    counter.reset()
    with ShardSet.from_args([f"s3://{bucket}/set/train-*"], use_cache=False) as remote:
        assert [s.size for s in remote.shards] == sizes
        remote.build_index(verify=True)
        assert len(remote) == len(expected) and remote.problems == []
        assert [remote[i] for i in range(len(remote))] == expected
        assert remote.location(len(remote) - 1)[0] == f"s3://{bucket}/set/{SHARDS[-1].name}"
    heads = [r for r in counter.seen if r[0] == "HEAD"]
    assert heads == []  # every shard's size and version came from the listing
    assert 0 < counter.most <= 4  # the shards are indexed one after another, never all at once


@pytest.mark.network
def test_named_urls_without_a_listing_ask_for_their_size(server):
    endpoint, counter, bucket = server
    urls = [f"s3://{bucket}/set/{p.name}" for p in SHARDS[:2]]
    counter.reset()
    with ShardSet(urls, use_cache=False) as shards:
        assert [s.size for s in shards.shards] == [p.stat().st_size for p in SHARDS[:2]]
        assert [r[0] for r in counter.seen] == ["HEAD", "HEAD"]
    with pytest.raises(FileAccessError, match="not found"):
        ShardSet([f"s3://{bucket}/set/gone.tfrecord"])


@pytest.mark.network
def test_an_unreadable_shard_is_skipped_with_its_reason(server):
    endpoint, counter, bucket = server
    with ShardSet.from_args([f"s3://{bucket}/set/*"], use_cache=False) as shards:
        shards.build_index()
        assert len(shards) == 100
        [(path, reason)] = shards.unusable
        assert path == f"s3://{bucket}/set/notes.txt" and "not a TFRecord" in reason


def test_local_paths_import_nothing_remote(tmp_path):
    import subprocess
    import sys

    code = ("import contextlib, io, sys\n"
            "from codec.storage.listing import expand_inputs, looks_like_shard_set\n"
            "from codec.cli.main import main\n"
            f"expand_inputs([{str(FIXTURES / 'shards')!r}]); looks_like_shard_set(['x/*'])\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    codes = [main(['info', {str(FIXTURES / 'shards')!r}]), main(['verify', {str(SHARDS[0])!r}])]\n"
            "print(codes, sorted(m for m in ('fsspec', 'codec.storage.remote', 'codec.storage.remote_list') if m in sys.modules))")
    env = {**os.environ, "TFRLENS_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.stdout.strip() == "[0, 0] []"
