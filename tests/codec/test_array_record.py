"""ArrayRecord files: what Google's reader reads from the shared files (MANIFEST.json), record N in one
read of its chunk, every compression and group size Google's writer makes, damage in one line, an empty
file, a file without its footer, and a file recognised by its bytes whatever it is called."""
from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from codec.cli.main import main
from codec.format.riegeli import BLOCK_SIZE
from codec.sources.array_record_file import ArrayRecordFile, array_record_available
from codec.sources.open import open_paths
from codec.sources.record_file import open_record_file
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile

FORMATS = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
MANIFEST = json.loads((FORMATS / "MANIFEST.json").read_text())
SHARED = ["default.array_record", "group1_uncompressed.array_record"]
google = pytest.mark.skipif(not array_record_available(), reason="Google's array-record package is not installed")
RECORDS = [b"record %d " % i * (i % 5) for i in range(23)]  # empty ones among them


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, options: str, records: list[bytes] = RECORDS) -> Path:
    """A file written by Google's own writer with ``options`` (its options string)."""
    from array_record.python import array_record_module

    writer = array_record_module.ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    return path


def counted_reads(f: ArrayRecordFile) -> list[tuple[int, int]]:
    """Every (position, size) read from ``f``'s bytes from now on."""
    reads: list[tuple[int, int]] = []
    read_at = f.byte_source.read_at

    def counting(pos: int, n: int) -> bytes:
        reads.append((pos, n))
        return read_at(pos, n)

    f.byte_source.read_at = counting  # type: ignore[method-assign]
    return reads


@pytest.mark.parametrize("name", SHARED)
def test_cat_json_is_what_googles_reader_reads(capsys, name):
    code, out, err = run(capsys, "cat", "--json", FORMATS / name)
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    entry = MANIFEST[name]
    assert len(lines) == entry["count"]
    for want in entry["records"]:
        got = lines[want["index"]]
        assert (got["index"], got["kind"], got["value"]) == (want["index"], want["kind"], want["value"])
    with open_record_file(FORMATS / name) as f:
        f.build_index()
        assert [hashlib.sha256(f[i]).hexdigest() for i in range(len(f))] == entry["sha256"]
        assert [line["length"] for line in lines] == [len(f[i]) for i in range(len(f))]


def test_record_n_is_one_read_of_its_chunk():
    f = ArrayRecordFile(FORMATS / "default.array_record")
    f.build_index()
    reads = counted_reads(f)
    for i in (37, 5, 58, 0):
        assert f.read(i).data == f[i] and f[i]
        begin, end = f.chunk_span(f.chunk_of(i)[0])
        assert reads == [(begin, end - begin)]  # the chunk, block headers and padding in, nothing else
        assert end - begin < 200
        reads.clear()
    f.read(37)
    assert reads == []  # decoded already: kept
    assert f.layout is not None and f.layout.chunk_offsets[37] == f.index.offset(37)


def test_opening_reads_the_postscript_and_footer_only():
    f = ArrayRecordFile(FORMATS / "default.array_record")
    reads = counted_reads(f)
    f.build_index()
    size = f.file_size
    assert len(reads) == 2 and reads[0] == (size - BLOCK_SIZE, BLOCK_SIZE)
    assert f.layout is not None and reads[1][0] == f.layout.footer_offset and len(f) == 60


def test_info_shows_the_writer_options(capsys):
    code, out, _ = run(capsys, "info", FORMATS / "default.array_record")
    assert code == 0
    assert "format:      ArrayRecord (60 chunks, zstd, group_size 1)" in out
    assert "writer:      group_size:1,transpose:false,pad_to_block_boundary:false,zstd:3" in out
    assert "records:     60 (60 ok)" in out and "warning" not in out


@google
@pytest.mark.parametrize("compression", ["uncompressed", "zstd", "brotli", "snappy"])
@pytest.mark.parametrize("group_size", [1, 4])
def test_every_compression_and_group_size(tmp_path, capsys, compression, group_size):
    from array_record.python import array_record_module

    path = write(tmp_path / "x.array_record", f"group_size:{group_size},{compression}")
    with open_record_file(path) as f:
        assert isinstance(f, ArrayRecordFile)
        f.build_index()
        assert list(f) == RECORDS == list(array_record_module.ArrayRecordReader(str(path)).read(list(range(23))))
        assert f.layout is not None and f.layout.group_size == group_size
        assert f.verify() == []
    code, out, _ = run(capsys, "info", path)
    assert code == 0 and f"group_size {group_size})" in out
    assert ("warning:     group_size 4 > 1: each chunk holds 4 records compressed together, so reading any one "
            "record reads and decompresses its whole group" in out) == (group_size == 4)


@google
def test_a_group_is_read_once_for_its_records(tmp_path):
    f = ArrayRecordFile(write(tmp_path / "g.array_record", "group_size:4,zstd"))
    f.build_index()
    reads = counted_reads(f)
    assert [f[i] for i in (9, 10, 8, 11)] == [RECORDS[i] for i in (9, 10, 8, 11)]
    assert len(reads) == 1  # records 8-11 share chunk 2


@google
def test_transposed_chunks_through_googles_reader(tmp_path, capsys):
    path = write(tmp_path / "t.array_record", "group_size:4,transpose:true")
    code, out, _ = run(capsys, "cat", "--json", path)
    assert code == 0
    assert [base64.b64decode(json.loads(line)["value"]["base64"]) for line in out.splitlines()
            if json.loads(line)["kind"] == "raw"] == [r for r in RECORDS if r]


def test_transposed_chunk_without_the_package_names_the_extra(tmp_path, capsys, monkeypatch):
    import codec.sources.array_record_file as module

    if array_record_available():
        path = write(tmp_path / "t.array_record", "group_size:4,transpose:true")
    else:
        pytest.skip("no writer for a transposed chunk")
    monkeypatch.setattr(module, "array_record_available", lambda: False)
    code, out, err = run(capsys, "cat", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "chunk at offset 64 is transposed" in err and "pip install 'tfrecord-lens[array-record]'" in err


def flipped(tmp_path: Path, name: str, pos: int) -> Path:
    data = bytearray((FORMATS / name).read_bytes())
    data[pos] ^= 0x01
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("command", [["verify"], ["cat", "--json"], ["info"]])
def test_a_damaged_chunk_is_one_line_and_exit_1(tmp_path, capsys, command):
    path = flipped(tmp_path, "default.array_record", 0x70)  # inside record 0's zstd frame
    code, out, err = run(capsys, *command, path)
    assert code == 1 and "Traceback" not in out + err
    lines = [line for line in (out + err).splitlines() if "chunk at offset 64" in line]
    if command[0] == "cat":
        first = json.loads(out.splitlines()[0])
        assert (first["index"], first["status"]) == (0, "data_crc")
        assert len(out.splitlines()) == 60  # nothing lost: the other 59 are read
    else:
        assert len(lines) == 1 and "offset 64 (record 0): data_crc: chunk at offset 64:" in lines[0]


def test_reading_a_damaged_record_raises_one_line(tmp_path):
    from codec.errors import CorruptRecordError

    f = open_record_file(flipped(tmp_path, "default.array_record", 0x70)).build_index()
    with pytest.raises(CorruptRecordError, match=r"record 0: chunk at offset 64: ") as caught:
        f[0]
    assert "\n" not in str(caught.value) and f[1] == open_record_file(FORMATS / "default.array_record").build_index()[1]


@google
def test_verify_checks_the_hashes(tmp_path, capsys):
    path = flipped(tmp_path, "group1_uncompressed.array_record", 0x78)  # a byte of record 0: sizes still hold
    code, out, _ = run(capsys, "verify", path)
    assert code == 1
    assert "offset 64 (record 0): data_crc: chunk at offset 64: Corrupted Riegeli/records file: chunk data hash " \
           "mismatch" in out
    assert out.startswith(f"{path}: 40 records, 39 ok, 1 problem(s)")


def test_an_empty_file(capsys):
    code, out, _ = run(capsys, "cat", "--json", FORMATS / "empty.array_record")
    assert (code, out) == (0, "")
    code, out, _ = run(capsys, "verify", FORMATS / "empty.array_record")
    assert code == 0 and "0 records, 0 ok, 0 problem(s)" in out


def test_a_file_cut_short_is_read_by_walking_its_chunks(tmp_path, capsys):
    cut = tmp_path / "cut.array_record"
    cut.write_bytes((FORMATS / "default.array_record").read_bytes()[:3100])
    code, out, _ = run(capsys, "verify", cut)
    assert code == 1
    assert "26 records, 26 ok, 2 problem(s)" in out
    assert "no ArrayRecord footer (the file is 3,100 bytes, shorter than its 64 KiB postscript): 26 records found " \
           "by walking the chunks" in out
    assert "chunk at offset 2,998: the file ends inside it" in out
    whole = open_record_file(FORMATS / "default.array_record").build_index()
    assert list(open_record_file(cut).build_index()) == [whole[i] for i in range(26)]


@pytest.mark.parametrize("name", ["data.tfrecord", "noname", "x.gz"])
def test_recognised_by_its_bytes_whatever_its_name(tmp_path, capsys, name):
    path = tmp_path / name
    shutil.copy(FORMATS / "default.array_record", path)
    opened = open_paths([str(path)])
    assert isinstance(opened.source, ArrayRecordFile)
    opened.source.close()
    code, out, _ = run(capsys, "info", path)
    assert code == 0 and "format:      ArrayRecord" in out
    assert isinstance(open_record_file(FORMATS.parent / "structured.tfrecord"), TFRecordFile)


def test_a_folder_of_array_record_shards(tmp_path, capsys):
    for k, name in enumerate(SHARED):
        shutil.copy(FORMATS / name, tmp_path / f"part-{k:05d}-of-00002")
    code, out, _ = run(capsys, "cat", "--json", "--range", "58:62", tmp_path)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["index"] for x in lines] == [58, 59, 60, 61]
    assert lines[2]["value"] == MANIFEST["group1_uncompressed.array_record"]["records"][0]["value"]


def test_index_says_the_footer_is_the_index(tmp_path, capsys):
    code, out, err = run(capsys, "index", "-o", tmp_path / "x.idx", FORMATS / "default.array_record")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "its footer is its index" in err
    assert not (tmp_path / "x.idx").exists()


def test_every_command_reads_it(tmp_path, capsys):
    path = FORMATS / "default.array_record"
    for argv in (["stats", "--json"], ["schema"], ["check"]):
        code, out, err = run(capsys, *argv, path)
        assert code == 0 and out and "Traceback" not in err, argv
    code, _, _ = run(capsys, "export", "--format", "tfrecord", "--to", tmp_path / "out.tfrecord", path)
    assert code == 0
    with TFRecordFile(tmp_path / "out.tfrecord") as copy:
        copy.build_index()
        assert list(copy) == list(open_record_file(path).build_index())


def test_an_http_url_reads_as_the_local_file(tmp_path, capsys):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    shutil.copy(FORMATS / "default.array_record", tmp_path / "served.bin")
    local = run(capsys, "cat", "--json", FORMATS / "default.array_record")
    with range_server(tmp_path) as srv:
        url = srv.url_for("served.bin")
        assert run(capsys, "cat", "--json", url) == local
        code, out, _ = run(capsys, "info", url)
    assert code == 0 and "format:      ArrayRecord (60 chunks, zstd, group_size 1)" in out
    assert "hashes:      not checked (sizes and structure are): a URL" in out


def test_a_tfds_array_record_folder(capsys):
    folder = FORMATS / "tfds_array_record" / "lens_ar_demo" / "2.0.0"
    code, out, _ = run(capsys, "cat", "--json", folder)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    entry = MANIFEST["tfds_array_record/lens_ar_demo/2.0.0"]
    for split, want in entry["splits"].items():
        got = [line["features"] for line in lines if line["split"] == split]
        assert len(got) == want["num_examples"]
        assert [(g["caption"], g["id"]["values"], g["image"]["sha256"], g["image"]["shape"], g["label"])
                for g in got] == [(w["caption"], [w["id"]], w["image"]["sha256"], w["image"]["shape"], w["label"])
                                  for w in want["records"]]


def test_varint_array_reads_what_varint64_reads():
    import random

    from codec.format.riegeli import varint_array
    from codec.format.varints import varint64
    from tests.codec.test_wire_format import varint as encode

    edges = [0, 1, 127, 128, 16383, 16384, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
    rng = random.Random(0)
    for numbers in ([], edges, [rng.getrandbits(rng.randrange(1, 65)) for _ in range(500)]):
        buf = b"".join(encode(n) for n in numbers)
        values, after = varint_array(buf, len(numbers))
        pos, expected = 0, []
        while pos < len(buf):
            value, pos = varint64(buf, pos, len(buf))
            expected.append((value, pos))
        assert list(zip(values.tolist(), after.tolist())) == expected
        assert values.tolist() == numbers
        assert varint_array(buf, len(numbers) + 1) is None and varint_array(buf + b"\x80", len(numbers)) is None
    assert varint_array(b"\xff" * 10 + b"\x01", 1) is None  # eleven bytes: no varint


@google
def test_a_chunk_of_many_records(tmp_path):
    records = [b"r%d" % i * (i % 300) for i in range(130)]  # sizes of one and two varint bytes
    f = open_record_file(write(tmp_path / "many.array_record", "group_size:64,snappy", records)).build_index()
    assert list(f) == records and f.verify() == []


def test_a_damaged_postscript_leaves_every_record(tmp_path, capsys):
    path = flipped(tmp_path, "default.array_record", BLOCK_SIZE + 0x40)  # the postscript chunk's data
    code, out, _ = run(capsys, "verify", path)
    assert code == 1 and "60 records, 60 ok, 1 problem(s)" in out
    assert "no ArrayRecord footer (chunk at offset 65,536: " in out
    whole = open_record_file(FORMATS / "default.array_record").build_index()
    assert list(open_record_file(path).build_index()) == list(whole)  # the footer chunk is not taken for records


@pytest.mark.parametrize("compression", ["zstd", "uncompressed"])
def test_a_pass_reads_one_record_chunks_a_run_at_a_time(tmp_path, monkeypatch, compression):
    import codec.sources.array_record_file as module

    if not array_record_available():
        pytest.skip("no writer for a file crossing block boundaries")
    records = [bytes([i % 251]) * (90 + i % 40) for i in range(2500)]  # chunks across three block boundaries
    path = write(tmp_path / "big.array_record", f"group_size:1,{compression}", records)
    from codec.format.riegeli import simple_records
    from codec.sources.record_pass import iter_records

    f = open_record_file(path).build_index()
    one_by_one: list[int] = []
    monkeypatch.setattr(module, "simple_records", lambda *a: one_by_one.append(a[2]) or simple_records(*a))
    assert f.file_size > 3 * BLOCK_SIZE
    assert [item[1] for item in iter_records(f) if isinstance(item, tuple)] == records
    assert one_by_one == []  # every chunk read by the run's numpy path
    data = bytearray(path.read_bytes())
    bad = next(i for i in range(1234, 2500) if 0 < f.index.offset(i) % BLOCK_SIZE < BLOCK_SIZE - 48)
    middle = f.index.offset(bad)
    data[middle + 40] ^= 0x01  # chunk bad's compression byte: no such compression
    path.write_bytes(bytes(data))
    f = open_record_file(path).build_index()
    got = [item for item in iter_records(f) if isinstance(item, tuple)]
    assert [i for i, _, status, *_ in got if status.damaged] == [bad]
    assert [item[1] for item in got if not item[2].damaged] == records[:bad] + records[bad + 1:]
    assert [p.offset for p in f.problems] == [middle] and one_by_one  # the run was read again chunk by chunk
    assert "unknown compression type" in f.problems[0].detail


def test_changed_bytes_never_raise_anything_but_one_line(tmp_path):
    import random

    from codec.errors import TFRecordError
    from codec.sources.record_pass import iter_records

    rng = random.Random(28)
    originals = [(FORMATS / name).read_bytes() for name in SHARED]
    path = tmp_path / "changed.array_record"
    for _ in range(100):
        data = bytearray(rng.choice(originals))
        written = len(data.rstrip(b"\0"))
        for _ in range(rng.choice([1, 2, 5])):  # in the chunks, or in the postscript
            at = rng.randrange(written) if rng.random() < 0.8 else rng.randrange(BLOCK_SIZE, BLOCK_SIZE + 110)
            data[at] = rng.randrange(256)
        path.write_bytes(bytes(data[:rng.randrange(len(data))] if rng.random() < 0.1 else data))
        try:
            with open_record_file(path) as f:
                f.build_index()
                got = [item for item in iter_records(f) if isinstance(item, tuple)]
                f.verify()
                assert len(got) == len(f) and all(f.read(i).info.index == i for i in range(len(f)))
        except TFRecordError as exc:
            assert "\n" not in str(exc)


def test_a_file_and_a_set_of_them_declare_the_container_and_its_footer(tmp_path):
    for k, name in enumerate(SHARED):
        shutil.copy(FORMATS / name, tmp_path / f"part-{k:05d}-of-00002")
    alone = ArrayRecordFile(FORMATS / SHARED[0]).build_index()
    with alone, ShardSet(sorted(str(p) for p in tmp_path.iterdir())) as shards:
        assert shards.container == "tfrecord" and shards.layout is None  # no shard opened yet: no I/O to say
        shards.build_index()
        for source in (alone, shards):
            assert source.container == "array_record" and source.pinned(0).container == "array_record"
            assert source.layout == alone.layout and source.info_lines() == alone.info_lines()
            assert source.info_lines()[0].startswith("format:      ArrayRecord")
            assert source.group_size_warning() == alone.group_size_warning()
            assert source.hashes_checked == alone.hashes_checked
            assert source.complete_records == len(source)


def test_info_on_a_set_of_shards_words_damage_as_array_record_damage(tmp_path, capsys):
    for k, name in enumerate(SHARED):
        shutil.copy(FORMATS / name, tmp_path / f"part-{k:05d}-of-00002")
    damaged = tmp_path / "part-00001-of-00002"
    data = bytearray(damaged.read_bytes())
    data[200] ^= 0xFF  # inside the first chunk of the second shard
    damaged.write_bytes(bytes(data))
    code, out, _ = run(capsys, "info", tmp_path)
    assert code == 1 and "problems:    1" in out
    assert "data_crc: the chunk that holds this record" in out and "tensorflow:" not in out
