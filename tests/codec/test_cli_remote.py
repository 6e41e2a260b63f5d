"""The command line over URLs (loopback servers only): ``s3://`` files, globs and folders through a
moto server and an ``http://`` file through a range server print what the same files print on
disk, with the same exit codes; a URL that cannot be read is exit 2 and one line, no traceback."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")
pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("flask")

from codec.cli.main import main
from tests.builders import FIXTURES, MANIFEST
from tests.remote_servers import S3_UNSET, make_bucket, moto_server, range_server, s3_env

FILES = ["structured.tfrecord", "corrupt_length.tfrecord", "garbage_middle.tfrecord", "truncated.tfrecord.gz",
         "structured.zlib.tfrecord", "empty.tfrecord"]
SHARDS = sorted(p.name for p in (FIXTURES / "shards").iterdir())
COMMANDS = [["info"], ["verify", "--json"], ["cat", "--json"], ["stats", "--json"]]


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    """A bucket holding the fixtures under data/ and the shards under set/; the S3 environment
    (loopback endpoint, fake keys) lasts the module."""
    scratch = tmp_path_factory.mktemp("s3env")
    with moto_server() as endpoint, pytest.MonkeyPatch.context() as mp:
        for key in S3_UNSET:
            mp.delenv(key, raising=False)
        for key, value in s3_env(endpoint, scratch).items():
            mp.setenv(key, value)
        files = {f"data/{name}": FIXTURES / name for name in FILES + ["not_a_tfrecord.jpg"]}
        files.update({f"set/{name}": FIXTURES / "shards" / name for name in SHARDS})
        fs, name = make_bucket(files)
        fs.mkdir("empty-bucket-x")
        yield name


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    for name in ("structured.tfrecord", "corrupt_data_crc.tfrecord", "secret.tfrecord"):
        (root / name).write_bytes((FIXTURES / ("structured.tfrecord" if name == "secret.tfrecord" else name))
                                  .read_bytes())
    with range_server(root, deny=("secret.tfrecord",)) as srv:
        yield srv


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def same_as_local(capsys, argv: list[str], urls: list[str], paths: list[str]) -> tuple[int, str]:
    """Run ``argv`` + urls and ``argv`` + paths; assert equal exit codes and output (each URL's
    folder read as its path's folder); return the exit code and the local output."""
    local = run(capsys, *argv, *paths)
    remote = run(capsys, *argv, *urls)
    out, err = remote[1], remote[2]
    for url, path in zip(urls, paths):
        remote_folder, local_folder = url.rsplit("/", 1)[0] + "/", str(Path(path).parent) + "/"
        out, err = out.replace(remote_folder, local_folder), err.replace(remote_folder, local_folder)
    assert (remote[0], out, err) == local, (argv, urls)
    return local[0], local[1]


@pytest.mark.network
@pytest.mark.parametrize("name", FILES)
def test_every_command_reads_an_s3_file_as_the_local_one(capsys, bucket, name):
    url, path = f"s3://{bucket}/data/{name}", str(FIXTURES / name)
    damaged = MANIFEST[name].get("tf_error") is not None
    for argv in COMMANDS:
        code, out = same_as_local(capsys, [*argv, "--no-cache"], [url], [path])
        assert out or name == "empty.tfrecord"
        if argv[0] in ("info", "verify"):
            assert code == (1 if damaged else 0), (argv, code)


@pytest.mark.network
def test_the_index_of_an_s3_file_is_the_local_ones(capsys, bucket, tmp_path):
    name = "garbage_middle.tfrecord"
    same_as_local(capsys, ["index", "--format", "dali"], [f"s3://{bucket}/data/{name}"], [str(FIXTURES / name)])
    code, _, err = run(capsys, "index", "-o", str(tmp_path / "x.tfri"), f"s3://{bucket}/data/structured.tfrecord")
    assert code == 0 and err == "" and (tmp_path / "x.tfri").stat().st_size > 100 * 8


@pytest.mark.network
@pytest.mark.parametrize("argv", [["info"], ["verify"], ["cat", "--range=-3:"], ["schema", "--json"]])
def test_a_glob_and_a_folder_of_s3_shards_read_as_the_local_shards(capsys, bucket, argv):
    urls = [f"s3://{bucket}/set/{name}" for name in SHARDS]
    paths = [str(FIXTURES / "shards" / name) for name in SHARDS]
    code, out = same_as_local(capsys, argv, urls, paths)  # named one by one
    assert code == 0 and out
    glob = "train-*-of-00004.tfrecord"
    assert same_as_local(capsys, argv, [f"s3://{bucket}/set/{glob}"], [str(FIXTURES / "shards" / glob)])[0] == 0
    folder_code, folder_out, _ = run(capsys, *argv, f"s3://{bucket}/set/")
    assert folder_code == 0
    assert folder_out.replace(f"s3://{bucket}/set/", str(FIXTURES / "shards") + "/") == \
        run(capsys, *argv, str(FIXTURES / "shards") + "/")[1]


@pytest.mark.network
def test_a_cached_reopen_prints_the_same(capsys, bucket):
    name = "garbage_middle.tfrecord"
    for argv in (["info"], ["verify"], ["cat", "--range=2:4"]):
        first = same_as_local(capsys, argv, [f"s3://{bucket}/data/{name}"], [str(FIXTURES / name)])
        assert same_as_local(capsys, argv, [f"s3://{bucket}/data/{name}"], [str(FIXTURES / name)]) == first


@pytest.mark.network
def test_repair_and_export_read_urls_as_local_files(capsys, bucket, tmp_path):
    code, out, err = run(capsys, "repair", f"s3://{bucket}/set/", "-o", str(tmp_path / "remote"))
    assert code == 0 and err == "" and out.splitlines()[-1] == "total: 4 file(s), kept 100, dropped 0"
    assert run(capsys, "repair", str(FIXTURES / "shards"), "-o", str(tmp_path / "local"))[0] == 0
    assert sorted(os.listdir(tmp_path / "remote")) == SHARDS
    for name in SHARDS:
        assert (tmp_path / "remote" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    name = "corrupt_length.tfrecord"
    for source, target in ((f"s3://{bucket}/data/{name}", "remote.jsonl"), (str(FIXTURES / name), "local.jsonl")):
        code, _, err = run(capsys, "export", source, "--format", "jsonl", "--to", str(tmp_path / target))
        assert code == 1 and err.startswith("tfrlens-cli: ")
    assert (tmp_path / "remote.jsonl").read_text() == (tmp_path / "local.jsonl").read_text() != ""


@pytest.mark.network
def test_a_mix_of_urls_and_local_files_is_one_set(capsys, bucket):
    code, out, err = run(capsys, "info", str(FIXTURES / "shards" / SHARDS[0]), f"s3://{bucket}/set/train-0000[123]-*")
    assert code == 0 and err == ""
    assert "shards:      4\n" in out and "records:     100 (100 ok)" in out
    code, folder, err = run(capsys, "info", f"s3://{bucket}/set")  # a folder named without its slash
    assert code == 0 and err == "" and folder.replace(f"s3://{bucket}/set", "X") == out.replace(out.split()[1], "X")


@pytest.mark.network
def test_an_http_url_reads_as_the_local_file(capsys, http):
    for name in ("structured.tfrecord", "corrupt_data_crc.tfrecord"):
        for argv in (["info"], ["verify", "--json"], ["cat", "--json", "--range", "3:7"], ["stats", "--json"]):
            code, out = same_as_local(capsys, argv, [http.url_for(name)], [str(FIXTURES / name)])
            assert out and code == (1 if name.startswith("corrupt") else 0)


def one_line_exit_2(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (argv, out)
    assert err.startswith("tfrlens-cli: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.network
def test_unreadable_urls_are_exit_2_and_one_line(capsys, bucket, http, tmp_path):
    cases = [
        (f"s3://{bucket}/data/missing.tfrecord", "not found"),
        ("s3://no-such-bucket-x/data/a.tfrecord", "not found"),
        ("s3://no-such-bucket-x/data/", "not found"),
        (f"s3://{bucket}/nothing-here/", "not found"),
        ("s3://empty-bucket-x/", "no objects under"),
        (f"s3://{bucket}/data/*.nothing", "no objects match"),
        (f"s3://{bucket}/data/not_a_tfrecord.jpg", "not a TFRecord"),
        (http.url_for("missing.tfrecord"), "not found"),
        (http.url_for("secret.tfrecord"), "access denied"),
        ("az://container/x.tfrecord", "pip install"),
        ("foo://bucket/x.tfrecord", "unknown protocol"),
    ]
    commands = ["info", "verify", "cat", "stats", "schema", "index", "export"]
    for i, (url, expected) in enumerate(cases):  # every case, and every command, at least once
        command = [commands[i % len(commands)], url]
        if command[0] == "export":
            command += ["--to", str(tmp_path / "out.jsonl")]
        err = one_line_exit_2(capsys, *command)
        assert not (tmp_path / "out.jsonl").exists()
        assert url in err and expected in err, (url, err)


@pytest.mark.network
def test_wrong_credentials_are_exit_2_and_one_line(capsys, bucket, monkeypatch):
    import moto.settings

    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto checks keys from now on
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    for url in (f"s3://{bucket}/data/structured.tfrecord", f"s3://{bucket}/set/", f"s3://{bucket}/set/train-*"):
        for command in ("info", "verify"):
            err = one_line_exit_2(capsys, command, url)
            assert "access denied" in err and url in err


@pytest.mark.network
def test_verify_of_several_keeps_going_past_an_unreadable_object(capsys, bucket):
    good = f"s3://{bucket}/data/structured.tfrecord"
    code, out, err = run(capsys, "verify", good, f"s3://{bucket}/data/not_a_tfrecord.jpg")
    assert code == 2 and "not a TFRecord" in err and err.count("\n") == 1
    assert out.splitlines()[0] == f"{good}: 100 records, 100 ok, 0 problem(s) [none]"
    assert out.splitlines()[-1] == "total: 1 file(s), 100 records, 100 ok, 0 problem(s), 1 unusable"
    missing = f"s3://{bucket}/data/missing.tfrecord"
    code, out, err = run(capsys, "verify", missing, good)
    assert code == 2 and err.count("\n") == 1 and "not found" in err and missing in err
    assert out.splitlines()[0] == f"{good}: 100 records, 100 ok, 0 problem(s) [none]"


def test_nothing_local_is_taken_for_what_lies_beside_a_url(tmp_path, monkeypatch):
    """``s3://bkt/data/x`` read as a local path is ``s3:/bkt/data/x``: a label map in such a local
    folder must not be taken for the bucket's."""
    from codec.datasets.payload_choice import choose_for

    folder = tmp_path / "s3:" / "bkt" / "data"
    folder.mkdir(parents=True)
    (folder / "label_map.pbtxt").write_text('item { id: 1 name: "cat" }\n')
    monkeypatch.chdir(tmp_path)
    assert choose_for(["s3:/bkt/data/x.tfrecord"]).labels is not None  # the local path does see it
    choice = choose_for(["s3://bkt/data/x.tfrecord"])
    assert choice.labels is None and choice.dataset is None and choice.files == ["s3://bkt/data/x.tfrecord"]
