"""``gs://`` through gcsfs against a local GCS emulator (gcp-storage-emulator on 127.0.0.1): a file,
a glob and a folder of shards read as the same files on disk, through the library and the CLI."""
from __future__ import annotations

import os
import socket

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("gcsfs")
pytest.importorskip("gcp_storage_emulator")

from codec.cli.main import main
from codec.errors import FileAccessError
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.remote_list import expand_remote
from tests.builders import FIXTURES

pytestmark = pytest.mark.network

SHARDS = sorted((FIXTURES / "shards").iterdir())
BUCKET = "lens-test"
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _quiet_about_closed_connections(httpd) -> None:
    """The emulator prints a traceback when a client closes a ranged read early: noise, not an error."""
    import sys

    noisy = httpd.handle_error

    def handle_error(request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            noisy(request, client_address)

    httpd.handle_error = handle_error


@pytest.fixture(scope="module")
def gcs():
    """The emulator with the fixtures under data/ and the shards under set/, and gcsfs pointed at it
    (anonymous, emulator host from STORAGE_EMULATOR_HOST) for the whole module."""
    import importlib

    import fsspec.config

    registry = importlib.import_module("fsspec.registry")._registry  # (fsspec.registry is a read-only view)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")  # else gcsfs tries gRPC, which the emulator lacks
        import gcsfs.core
        from gcp_storage_emulator.server import create_server

        for key in PROXIES:
            mp.delenv(key, raising=False)
        port = _free_port()
        server = create_server("127.0.0.1", port, in_memory=True, default_bucket=BUCKET)
        server.start()
        _quiet_about_closed_connections(server._api._httpd)
        try:
            mp.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
            mp.setenv("NO_PROXY", "127.0.0.1,localhost")
            mp.setenv("NO_GCE_CHECK", "true")
            for protocol in ("gs", "gcs"):  # the core filesystem even if gcsfs was imported with gRPC on
                mp.setitem(registry, protocol, gcsfs.core.GCSFileSystem)
                mp.setitem(fsspec.config.conf, protocol, {"token": "anon", "project": "test"})
            fs = gcsfs.core.GCSFileSystem(token="anon", project="test", skip_instance_cache=True)
            fs.put_file(str(FIXTURES / "structured.tfrecord"), f"{BUCKET}/data/structured.tfrecord")
            fs.put_file(str(FIXTURES / "corrupt_length.tfrecord"), f"{BUCKET}/data/corrupt_length.tfrecord")
            for path in SHARDS:
                fs.put_file(str(path), f"{BUCKET}/set/{path.name}")
            fs.pipe_file(f"{BUCKET}/set/notes.txt", b"notes, not records\n" * 4)
            yield fs
        finally:
            server.stop()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_gs_file_reads_its_records(gcs):
    url = f"gs://{BUCKET}/data/structured.tfrecord"
    with TFRecordFile(url, use_cache=False) as remote, TFRecordFile(FIXTURES / "structured.tfrecord") as local:
        remote.build_index(verify=True)
        local.build_index(verify=True)
        assert len(remote) == len(local) == 100 and remote.problems == []
        assert [remote[i] for i in range(len(remote))] == [local[i] for i in range(len(local))]
        assert remote.remote is not None and remote.remote.version.get("generation")


def test_a_gs_glob_and_folder_are_one_listing_each(gcs):
    glob = expand_remote(f"gs://{BUCKET}/set/train-*")
    assert [url for url, _ in glob] == [f"gs://{BUCKET}/set/{p.name}" for p in SHARDS]
    assert [info["size"] for _, info in glob] == [p.stat().st_size for p in SHARDS]
    notes: list[str] = []
    assert expand_remote(f"gs://{BUCKET}/set/", notes) == glob and len(notes) == 1  # notes.txt left out
    with pytest.raises(FileAccessError, match="no objects match"):
        expand_remote(f"gs://{BUCKET}/set/*.nothing")
    with pytest.raises(FileAccessError, match="not found"):
        expand_remote(f"gs://{BUCKET}/data/missing.tfrecord")


def test_a_gs_shard_set_reads_as_the_local_one(gcs):
    with ShardSet.from_args([f"gs://{BUCKET}/set/"], use_cache=False) as remote, \
            ShardSet.from_args([str(FIXTURES / "shards")], use_cache=False) as local:
        remote.build_index(verify=True)
        local.build_index(verify=True)
        assert len(remote) == len(local) == 100
        assert [remote[i] for i in range(100)] == [local[i] for i in range(100)]


@pytest.mark.parametrize("argv", [["info"], ["verify", "--json"], ["cat", "--json", "--range=5:9"],
                                  ["stats", "--json"]])
def test_the_cli_prints_for_gs_what_it_prints_for_the_local_files(capsys, gcs, argv):
    for remote, local in ((f"gs://{BUCKET}/data/corrupt_length.tfrecord", str(FIXTURES / "corrupt_length.tfrecord")),
                          (f"gs://{BUCKET}/set/train-*", str(FIXTURES / "shards" / "train-*"))):
        code, out, err = run(capsys, *argv, remote)
        folder = remote.rsplit("/", 1)[0] + "/"
        assert (code, out.replace(folder, os.path.dirname(local) + "/"), err) == run(capsys, *argv, local)


def test_a_missing_gs_object_is_exit_2_and_one_line(capsys, gcs):
    url = f"gs://{BUCKET}/data/missing.tfrecord"
    code, out, err = run(capsys, "info", url)
    assert code == 2 and out == "" and err.count("\n") == 1 and url in err and "not found" in err
