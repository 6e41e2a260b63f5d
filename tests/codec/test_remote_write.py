"""Writing to URLs against a loopback moto S3 server: export, repair, save and write_records
upload a finished local temporary file, so a failure (a raising source, a missing bucket, wrong
credentials, a rejected multipart upload) leaves no object under the target name and no temporary
file; https:// is refused before anything is written."""
from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import uuid

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("flask")

from codec.cli.main import main
from codec.editing.document import Document
from codec.errors import FileAccessError, TargetChangedError
from codec.format.framing import Compression, RecordStatus
from codec.ops.export import export, export_iter
from codec.ops.repair import repair
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage import remote_write
from codec.storage.temp_files import is_temp_name, sweep_stale_temps
from codec.storage.writer import (
    check_not_input,
    make_output_folder,
    output_exists,
    output_is_folder,
    output_join,
    resolve_output_compression,
    same_file,
    write_records,
)
from tests.builders import fixture_path
from tests.remote_servers import moto_server, use_s3_env

from .conftest import expected_intact

RECORDS = [hashlib.sha256(str(i).encode()).digest() * (1 + i % 40) for i in range(500)]


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    """A moto server and the fake S3 environment for the whole module (one s3fs client, made once)."""
    import s3fs

    with moto_server() as endpoint, pytest.MonkeyPatch.context() as mp:
        use_s3_env(mp, endpoint, tmp_path_factory.mktemp("aws"))
        s3fs.S3FileSystem.clear_instance_cache()  # an instance made for another endpoint must not be reused
        yield endpoint
        s3fs.S3FileSystem.clear_instance_cache()


@pytest.fixture
def tmpdir_(tmp_path, monkeypatch):
    """The system temporary folder, private to this test, so leftovers can be counted."""
    folder = tmp_path / "systemp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def s3(s3_endpoint, tmpdir_):
    """(s3fs, a fresh bucket) on the module's server."""
    import s3fs

    fs = s3fs.S3FileSystem(use_listings_cache=False)
    bucket = f"b{uuid.uuid4().hex[:12]}"
    fs.mkdir(bucket)
    return fs, bucket


def _one_line(exc: BaseException, url: str) -> str:
    text = str(exc)
    assert "\n" not in text and url in text, text
    return text


def _plain_bytes(tmp_path, records) -> bytes:
    local = tmp_path / "local.tfrecord"
    write_records(local, records)
    return local.read_bytes()


def _pending_uploads(endpoint: str, bucket: str) -> list:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


# -- writing succeeds ------------------------------------------------------------
@pytest.mark.network
def test_write_records_uploads_what_a_local_write_gives(s3, tmp_path, tmpdir_):
    fs, bucket = s3
    url = f"s3://{bucket}/out/train.tfrecord"
    assert not output_exists(url)
    assert write_records(url, RECORDS) == len(RECORDS)
    assert fs.cat_file(f"{bucket}/out/train.tfrecord") == _plain_bytes(tmp_path, RECORDS)
    assert output_exists(url) and not output_exists(f"s3://{bucket}/out")  # a prefix is not a file
    assert os.listdir(tmpdir_) == []


@pytest.mark.network
def test_the_temporary_copy_is_in_the_system_temp_folder_and_the_object_appears_only_at_the_end(s3, tmpdir_):
    fs, bucket = s3
    url = f"s3://{bucket}/late.tfrecord"
    seen = []

    def records():
        for i, data in enumerate(RECORDS):
            if i == 100:
                seen.append((sorted(os.listdir(tmpdir_)), fs.exists(f"{bucket}/late.tfrecord")))
            yield data

    write_records(url, records())
    (temps, visible), = seen
    assert len(temps) == 1 and is_temp_name(temps[0]) and temps[0].startswith(".late.tfrecord.")
    assert not visible
    assert fs.exists(f"{bucket}/late.tfrecord") and os.listdir(tmpdir_) == []


@pytest.mark.network
def test_gzip_follows_the_name_over_s3(s3, tmp_path):
    fs, bucket = s3
    url = f"s3://{bucket}/structured.tfrecord.gz"
    assert resolve_output_compression(url, None) == (Compression.GZIP, None)
    _, warning = resolve_output_compression(f"s3://{bucket}/structured.tfrecord", "gzip")
    assert warning and "structured.tfrecord" in warning
    with TFRecordFile(fixture_path("structured.tfrecord"), use_cache=False) as f:
        f.build_index()
        report = export(f, url, "tfrecord")
    assert report.records == 100
    blob = fs.cat_file(f"{bucket}/structured.tfrecord.gz")
    assert blob[:2] == b"\x1f\x8b"
    with open(fixture_path("structured.tfrecord"), "rb") as src:
        assert gzip.decompress(blob) == src.read()


@pytest.mark.network
@pytest.mark.parametrize("fmt, name", [("jsonl", "out.jsonl"), ("csv", "out.csv"), ("tfrecord", "sub.zlib")])
def test_export_to_s3_equals_the_local_export(s3, tmp_path, fmt, name):
    fs, bucket = s3
    with TFRecordFile(fixture_path("structured.tfrecord"), use_cache=False) as f:
        f.build_index()
        export(f, f"s3://{bucket}/x/{name}", fmt, indices=range(0, 100, 3))
        export(f, str(tmp_path / name), fmt, indices=range(0, 100, 3))
    assert fs.cat_file(f"{bucket}/x/{name}") == (tmp_path / name).read_bytes()


@pytest.mark.network
def test_images_export_to_a_prefix(s3, tmp_path, tmpdir_):
    fs, bucket = s3
    prefix = f"s3://{bucket}/imgs"
    assert not output_is_folder(prefix) and output_is_folder(prefix + "/") and output_is_folder(f"s3://{bucket}")
    with TFRecordFile(fixture_path("flowers_jpeg.tfrecord"), use_cache=False) as f:
        f.build_index()
        report = export(f, prefix, "images")
        export(f, str(tmp_path / "imgs"), "images")
    names = sorted(os.listdir(tmp_path / "imgs"))
    keys = sorted(p.rsplit("/", 1)[1] for p in fs.find(f"{bucket}/imgs"))
    assert report.files == len(names) == 25 and keys == names
    assert fs.cat_file(f"{bucket}/imgs/{names[7]}") == (tmp_path / "imgs" / names[7]).read_bytes()
    assert output_is_folder(prefix)
    assert output_join(prefix + "/", "a.jpg") == f"s3://{bucket}/imgs/a.jpg"
    assert os.listdir(tmpdir_) == []


@pytest.mark.network
def test_repair_to_s3_keeps_the_intact_records(s3, tmp_path):
    fs, bucket = s3
    name = "corrupt_data_crc.tfrecord"
    url = f"s3://{bucket}/clean/{name}"
    with TFRecordFile(fixture_path(name), use_cache=False) as f:
        report = repair(f, url)
    assert report.dropped
    fs.get_file(f"{bucket}/clean/{name}", str(tmp_path / "back.tfrecord"))
    with TFRecordFile(tmp_path / "back.tfrecord", use_cache=False) as g:
        got = [hashlib.sha256(g.read(i).data).hexdigest() for i in range(len(g.build_index()))]
        assert not g.problems
    assert got == expected_intact(name)


@pytest.mark.network
def test_document_save_to_s3(s3, tmp_path):
    fs, bucket = s3
    url = f"s3://{bucket}/edited.tfrecord"
    with TFRecordFile(fixture_path("structured.tfrecord"), use_cache=False) as f:
        f.build_index()
        d = Document(f)
        d.delete(range(10, 100))
        saved = d.save(url)
        d.save(tmp_path / "edited.tfrecord")
    assert saved.records == 10
    assert fs.cat_file(f"{bucket}/edited.tfrecord") == (tmp_path / "edited.tfrecord").read_bytes()


@pytest.mark.network
def test_save_over_a_remote_source_refuses_when_the_object_changed(s3, tmp_path):
    """The object's version is asked again before the save: another writer's object is not replaced unasked."""
    fs, bucket = s3
    url = f"s3://{bucket}/source.tfrecord"
    write_records(url, RECORDS[:50])
    with TFRecordFile(url, use_cache=False) as f:
        f.build_index()
        d = Document(f)
        d.delete([0])
        assert d.changed_on_disk() is None
        write_records(url, RECORDS[:7])  # another program uploads its own
        theirs = fs.cat_file(f"{bucket}/source.tfrecord")
        with pytest.raises(TargetChangedError, match="changed on the server"):
            d.save()
        assert fs.cat_file(f"{bucket}/source.tfrecord") == theirs
        assert d.save(overwrite_changed=True).records == 49
    with TFRecordFile(url, use_cache=False) as f:
        assert list(f.build_index()) == RECORDS[1:50]


@pytest.mark.network
def test_cli_export_and_repair_to_s3(s3, tmp_path, capsys):
    fs, bucket = s3
    url = f"s3://{bucket}/cli/out.jsonl"
    assert main(["export", fixture_path("structured.tfrecord"), "--to", url, "--format", "jsonl"]) == 0
    assert fs.cat_file(f"{bucket}/cli/out.jsonl").count(b"\n") == 100
    fixed = f"s3://{bucket}/cli/fixed.tfrecord"
    main(["repair", fixture_path("corrupt_data_crc.tfrecord"), "-o", fixed])
    assert f"-> {fixed}" in capsys.readouterr().out
    assert fs.info(f"{bucket}/cli/fixed.tfrecord")["size"] > 0


@pytest.mark.network
def test_multipart_upload_of_a_file_larger_than_a_part(s3, s3_endpoint, tmp_path, monkeypatch):
    fs, bucket = s3
    monkeypatch.setattr(remote_write, "MULTIPART_CHUNK", 5 << 20)
    records = [hashlib.sha256(str(i).encode()).digest() * 2048 for i in range(170)]  # ~11 MiB: 3 parts
    url = f"s3://{bucket}/big.tfrecord"
    write_records(url, records)
    info = fs.info(f"{bucket}/big.tfrecord")
    assert info["ETag"].strip('"').endswith("-3")
    assert fs.cat_file(f"{bucket}/big.tfrecord") == _plain_bytes(tmp_path, records)
    assert _pending_uploads(s3_endpoint, bucket) == []


# -- writing fails: nothing under the target name, no temporary file -----------------
@pytest.mark.network
def test_a_source_that_fails_midway_leaves_the_old_object_untouched(s3, tmpdir_):
    fs, bucket = s3
    key = f"{bucket}/out.tfrecord"
    fs.pipe_file(key, b"the previous version")

    def records():
        yield from RECORDS[:200]
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError, match="source broke"):
        write_records(f"s3://{bucket}/out.tfrecord", records())
    fs.invalidate_cache()
    assert fs.cat_file(key) == b"the previous version"
    with pytest.raises(RuntimeError):
        write_records(f"s3://{bucket}/new.tfrecord", records())
    assert not fs.exists(f"{bucket}/new.tfrecord")
    assert os.listdir(tmpdir_) == []


@pytest.mark.network
def test_a_missing_bucket_is_refused_before_any_record_is_read(s3, tmpdir_):
    url = "s3://no-such-bucket-here/out.tfrecord"
    with pytest.raises(FileAccessError) as caught:
        write_records(url, RECORDS)
    assert "not found" in _one_line(caught.value, url)
    assert os.listdir(tmpdir_) == []

    class Source:
        reads = 0

        def __len__(self):
            return 10

        def data(self, i):
            Source.reads += 1
            return RECORDS[i]

        def status(self, i):
            return RecordStatus.OK

    with pytest.raises(FileAccessError) as caught:
        next(export_iter(Source(), url, "jsonl"))
    assert "does not exist" in _one_line(caught.value, url) and Source.reads == 0
    with pytest.raises(FileAccessError):
        make_output_folder("s3://no-such-bucket-here/imgs/")


@pytest.mark.network
def test_wrong_credentials_are_one_line_and_leave_nothing(s3, tmpdir_, monkeypatch):
    import moto.settings

    fs, bucket = s3
    url = f"s3://{bucket}/denied.tfrecord"
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto now checks keys against IAM
    with pytest.raises(FileAccessError) as caught:
        write_records(url, RECORDS)
    assert "access denied" in _one_line(caught.value, url)
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", float("inf"))
    assert not fs.exists(f"{bucket}/denied.tfrecord")
    assert os.listdir(tmpdir_) == []


@pytest.mark.network
def test_a_rejected_multipart_upload_is_aborted(s3, s3_endpoint, tmpdir_, monkeypatch):
    fs, bucket = s3
    monkeypatch.setattr(remote_write, "MULTIPART_CHUNK", 1 << 20)  # parts under S3's 5 MiB minimum
    records = [hashlib.sha256(str(i).encode()).digest() * 1024 for i in range(100)]  # ~3 MiB
    url = f"s3://{bucket}/parts.tfrecord"
    with pytest.raises(FileAccessError) as caught:
        write_records(url, records)
    assert _one_line(caught.value, url).startswith(f"cannot write {url}")
    assert not fs.exists(f"{bucket}/parts.tfrecord")
    assert _pending_uploads(s3_endpoint, bucket) == []
    assert os.listdir(tmpdir_) == []


def test_https_is_read_only(tmpdir_):
    url = "https://127.0.0.1:9/data/out.tfrecord"
    pulled = []

    def records():
        pulled.append(1)
        yield b"x"

    with pytest.raises(FileAccessError) as caught:
        write_records(url, records())
    assert "read-only" in _one_line(caught.value, url) and pulled == []
    with pytest.raises(FileAccessError, match="read-only"):
        check_not_input(url, [], "the export")
    with pytest.raises(FileAccessError, match="read-only"):
        make_output_folder("http://127.0.0.1:9/imgs/")
    assert os.listdir(tmpdir_) == []


# -- names ---------------------------------------------------------------------------
@pytest.mark.network
def test_writing_over_an_input_url_is_refused(s3):
    _, bucket = s3
    out = f"s3://{bucket}/data/a.tfrecord"
    for same in (out, f"s3a://{bucket}/data/a.tfrecord", f"s3://{bucket}//data/a.tfrecord"):
        assert same_file(out, same)
        with pytest.raises(FileAccessError, match="must not replace its source"):
            check_not_input(out, [fixture_path("structured.tfrecord"), same], "the export")
    check_not_input(out, [f"s3://{bucket}/data/b.tfrecord", f"https://127.0.0.1:9/{bucket}/data/a.tfrecord"],
                    "the export")
    assert not same_file(out, fixture_path("structured.tfrecord"))


def test_file_urls_are_local_paths_written_atomically(tmp_path):
    target = tmp_path / "f.tfrecord"
    url = "file://" + str(target)
    write_records(url, RECORDS[:5])
    assert target.read_bytes() == _plain_bytes(tmp_path, RECORDS[:5])
    assert output_exists(url) and same_file(url, target)
    with pytest.raises(FileAccessError, match="must not replace its source"):
        check_not_input(url, [str(target)], "the export")
    assert output_join("file://" + str(tmp_path), "x") == f"file://{tmp_path}/x"


def test_the_temp_sweep_never_treats_a_url_as_a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stale = tmp_path / "s3:" / "bkt" / ".x.tfrecord.tfrlens-999999-abcdef-01234567.tmp"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    os.utime(stale, (0, 0))
    assert sweep_stale_temps("s3://bkt") == [] and stale.exists()
    assert sweep_stale_temps(stale.parent) == [str(stale)]
