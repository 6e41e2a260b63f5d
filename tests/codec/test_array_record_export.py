"""export --format array_record and export from ArrayRecord: Google's reader reads what we write (every
record equal, the group size and options asked for), TFRecord -> ArrayRecord -> TFRecord gives the same
records (shard sets and globs too, GZIP and ZLIB), --where, the one-line error without Google's package,
and an interrupted or failed export leaves nothing behind."""
from __future__ import annotations

import gzip
import sys
import zlib
from pathlib import Path

import pytest

from codec.cli.main import main
from codec.errors import UsageError
from codec.format.framing import RecordStatus
from codec.ops.export import export
from codec.ops.export_array_record import writer_options
from codec.sources.array_record_file import ArrayRecordFile, array_record_available
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.builders import bytestrings, example, ints

pytestmark = pytest.mark.skipif(not array_record_available(), reason="Google's array-record package is not installed")
RECORDS = [example(id=ints(i), name=bytestrings(b"n%d" % i * (i % 4))) for i in range(40)] + [b"", b"\x00raw"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def google_records(path: Path) -> list[bytes]:
    from array_record.python import array_record_module

    reader = array_record_module.ArrayRecordReader(str(path))
    return list(reader.read(list(range(reader.num_records())))) if reader.num_records() else []


def google_options(path: Path) -> str:
    from array_record.python import array_record_module

    return array_record_module.ArrayRecordReader(str(path)).writer_options_string()


def tfrecord_input(folder: Path) -> Path:
    """``folder/in.tfrecord`` holding RECORDS."""
    write_records(folder / "in.tfrecord", RECORDS)
    return folder / "in.tfrecord"


def tfrecords(path: Path) -> list[bytes]:
    with TFRecordFile(path) as f:
        f.build_index(verify=True)
        assert f.problems == []
        return list(f)


@pytest.mark.parametrize("options, group_size, compression", [
    (None, 1, "zstd:3"),
    ("zstd:9", 1, "zstd:9"),
    ("group_size:4,brotli", 4, "brotli:6"),
    ("snappy,group_size:64", 64, "snappy"),
    ("uncompressed", 1, "uncompressed"),
])
def test_googles_reader_reads_our_export(tmp_path, capsys, options, group_size, compression):
    source = tfrecord_input(tmp_path)
    out = tmp_path / "out.array_record"
    extra = [] if options is None else ["--array-record-options", options]
    code, _, err = run(capsys, "export", source, "--to", out, "--format", "array_record", *extra)
    assert code == 0 and err == f"tfrlens-cli: wrote {len(RECORDS)} records to {out}\n"
    assert google_records(out) == RECORDS
    stated = google_options(out).split(",")
    assert f"group_size:{group_size}" in stated and compression in stated
    with ArrayRecordFile(out) as f:
        assert f.verify() == [] and list(f) == RECORDS  # every hash checked by Google's reader
        assert f.layout is not None and len(f.layout.chunk_offsets) == -(-len(RECORDS) // group_size)


def test_the_options_given_pass_through_with_group_size_1_unless_named():
    assert writer_options(None) == writer_options("") == "group_size:1"
    assert writer_options("zstd:9") == "group_size:1,zstd:9"
    assert writer_options(" group_size:8,brotli ") == "group_size:8,brotli"


def test_bad_options_are_one_line_and_write_nothing(tmp_path, capsys):
    source = tfrecord_input(tmp_path)
    outputs = tmp_path / "out"
    outputs.mkdir()
    code, out, err = run(capsys, "export", source, "--to", outputs / "o.ar", "--format", "array_record",
                         "--array-record-options", "zstd:99,bogus")
    assert code == 2 and out == ""
    assert err.startswith("tfrlens-cli: bad ArrayRecord writer options 'zstd:99,bogus': ") and err.count("\n") == 1
    assert list(outputs.iterdir()) == []
    code, _, err = run(capsys, "export", source, "--to", tmp_path / "o.jsonl", "--format", "jsonl",
                       "--array-record-options", "zstd:9")
    assert code == 2 and "--array-record-options applies to array_record exports only" in err


def test_without_googles_package_one_line_names_the_extra(tmp_path, capsys, monkeypatch):
    source = tfrecord_input(tmp_path)
    outputs = tmp_path / "out"
    outputs.mkdir()
    import array_record.python

    monkeypatch.setitem(sys.modules, "array_record.python.array_record_module", None)  # the import fails
    monkeypatch.delattr(array_record.python, "array_record_module")
    assert not array_record_available()
    code, out, err = run(capsys, "export", source, "--to", outputs / "o.ar", "--format", "array_record")
    assert (code, out) == (2, "")
    assert err == ("tfrlens-cli: writing ArrayRecord files needs Google's array-record package: "
                   "pip install 'tfrecord-lens[array-record]'\n")
    assert list(outputs.iterdir()) == []


@pytest.mark.parametrize("compression, opener, suffix", [("none", open, ""), ("gzip", gzip.open, ".gz"),
                                                         ("zlib", None, ".zz")])
def test_tfrecord_arrayrecord_tfrecord_is_byte_identical(tmp_path, capsys, compression, opener, suffix):
    first = tmp_path / "first.tfrecord"
    write_records(first, RECORDS)
    middle, last = tmp_path / "middle.array_record", tmp_path / f"last.tfrecord{suffix}"
    assert run(capsys, "export", first, "--to", middle, "--format", "array_record")[0] == 0
    code, _, err = run(capsys, "export", middle, "--to", last, "--compression", compression)
    assert code == 0 and err == f"tfrlens-cli: wrote {len(RECORDS)} records to {last}\n"
    raw = last.read_bytes()
    unpacked = zlib.decompress(raw) if compression == "zlib" else opener(last, "rb").read()  # type: ignore[operator]
    assert unpacked == first.read_bytes()  # the same framing, CRCs and all: TensorFlow's
    assert tfrecords(last) == RECORDS


def test_shard_sets_and_globs_round_trip(tmp_path, capsys):
    parts = [RECORDS[:10], RECORDS[10:11], RECORDS[11:]]
    for k, part in enumerate(parts):
        write_records(tmp_path / f"data.tfrecord-{k:05d}-of-00003", part)
    merged = tmp_path / "merged.array_record"
    code, _, _ = run(capsys, "export", str(tmp_path / "data.tfrecord-*"), "--to", merged, "--format", "array_record")
    assert code == 0 and google_records(merged) == RECORDS
    for k in range(len(parts)):  # and ArrayRecord shards, by a glob, back to one TFRecord file
        run(capsys, "export", tmp_path / f"data.tfrecord-{k:05d}-of-00003", "--to",
            tmp_path / f"ar-{k:05d}-of-00003", "--format", "array_record")
    back = tmp_path / "back.tfrecord.gz"
    code, _, err = run(capsys, "export", str(tmp_path / "ar-*"), "--to", back)
    assert code == 0 and err == f"tfrlens-cli: wrote {len(RECORDS)} records to {back}\n"
    assert tfrecords(back) == RECORDS
    write_records(tmp_path / "plain.tfrecord", RECORDS)
    assert gzip.decompress(back.read_bytes()) == (tmp_path / "plain.tfrecord").read_bytes()


def test_where_and_records_choose_what_is_written(tmp_path, capsys):
    source = tmp_path / "in.array_record"
    assert run(capsys, "export", tfrecord_input(tmp_path), "--to", source, "--format", "array_record")[0] == 0
    picked = tmp_path / "picked.array_record"
    code, _, err = run(capsys, "export", source, "--to", picked, "--format", "array_record", "--where", "id >= 30")
    assert code == 0 and err == f"tfrlens-cli: wrote 10 records to {picked}\n"
    assert google_records(picked) == RECORDS[30:40]
    back = tmp_path / "back.tfrecord"
    code, _, _ = run(capsys, "export", source, "--to", back, "--where", "id < 5", "--records", "3:")
    assert code == 0 and tfrecords(back) == RECORDS[3:5]


class Interrupted:
    """A record source whose record ``at`` cannot be read: ``error`` is raised there."""

    def __init__(self, at: int, error: BaseException) -> None:
        self.at, self.error = at, error

    def __len__(self) -> int:
        return len(RECORDS)

    def data(self, i: int) -> bytes:
        if i == self.at:
            raise self.error
        return RECORDS[i]

    def status(self, i: int) -> RecordStatus:
        return RecordStatus.OK


@pytest.mark.parametrize("error", [KeyboardInterrupt(), UsageError("stop")])
def test_an_interrupted_export_leaves_no_partial_file(tmp_path, error):
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    out = tmp_path / "out.array_record"
    with pytest.raises(type(error)):
        export(Interrupted(20, error), str(out), "array_record")
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file
    out.write_bytes(b"before")
    with pytest.raises(type(error)):
        export(Interrupted(len(RECORDS) - 1, error), str(out), "array_record")
    assert [p.name for p in tmp_path.iterdir()] == ["out.array_record"] and out.read_bytes() == b"before"


def test_an_empty_export_is_a_file_googles_reader_reads(tmp_path):
    out = tmp_path / "empty.array_record"
    report = export(Interrupted(-1, KeyboardInterrupt()), str(out), "array_record", indices=[])
    assert report.records == 0 and google_records(out) == []
    with ArrayRecordFile(out) as f:
        assert f.verify() == [] and len(f) == 0


def test_damaged_records_are_counted_in_a_note(tmp_path):
    data = bytearray((Path(__file__).resolve().parent.parent / "fixtures" / "formats"
                      / "group1_uncompressed.array_record").read_bytes())
    with ArrayRecordFile(Path(__file__).resolve().parent.parent / "fixtures" / "formats"
                         / "group1_uncompressed.array_record") as f:
        f.build_index()
        begin, _ = f.chunk_span(3)
        want = [f[i] for i in range(len(f))]
    data[begin + 40 + 1] ^= 0xFF  # chunk 3's record sizes: its one record is damaged
    damaged = tmp_path / "damaged.array_record"
    damaged.write_bytes(bytes(data))
    with ArrayRecordFile(damaged) as f:
        f.build_index()
        report = export(f, str(tmp_path / "out.array_record"), "array_record")
    assert report.notes == ["1 damaged record(s) written as read"]
    assert google_records(tmp_path / "out.array_record") == want[:3] + [b""] + want[4:]
