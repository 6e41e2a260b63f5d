"""Large plain shards cut into byte ranges on Beam's direct runner: ``verify --json`` and ``repair``
give the local commands' output byte for byte, with damage placed at and around the cuts.

The range size is lowered to 48 KiB so a file of ~250 KB is six ranges. Beam's
direct runner is slow to start, so one ``verify`` run and one ``repair`` run
cover a folder of damaged files; a third covers a cached index.
"""
from __future__ import annotations

import gzip
import json
import os
import random

import pytest

from codec.cli.main import main
from codec.format.framing import OVERHEAD, encode_record

from .conftest import flip_in_place

pytest.importorskip("apache_beam")

DIRECT = ["--runner", "direct", "--beam-option", "direct_num_workers=1"]
RANGE = 48 << 10


@pytest.fixture(autouse=True)
def _small_ranges(monkeypatch):
    from codec.beam import ranges

    monkeypatch.setattr(ranges, "RANGE_BYTES", RANGE)


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _records(rng: random.Random, total: int = 250_000, embed: bool = False) -> list[bytes]:
    """Records of mixed sizes (tens of bytes to a few KB) adding up to about ``total`` framed bytes;
    with ``embed`` every other one holds whole TFRecord frames in its data (as a dataset of shards would)."""
    out, size = [], 0
    while size < total:
        data = rng.randbytes(rng.choice([rng.randrange(0, 120), rng.randrange(120, 2500), rng.randrange(2500, 9000)]))
        if embed and len(out) % 2:
            data = rng.randbytes(33) + b"".join(encode_record(rng.randbytes(rng.randrange(40, 400))) for _ in range(4))
        out.append(data)
        size += len(data) + OVERHEAD
    return out


def _starts(records: list[bytes]) -> list[int]:
    starts, at = [], 0
    for data in records:
        starts.append(at)
        at += len(data) + OVERHEAD
    return starts


def _cuts(size: int) -> list[int]:
    """Where the planner cuts a file of ``size`` bytes (the inner boundaries)."""
    count = -(-size // RANGE)
    return [size * k // count for k in range(1, count)]


def _after(starts: list[int], at: int) -> int:
    return next(s for s in starts if s >= at)


def _damaged_files(folder) -> dict[str, bytes]:
    """name -> bytes: files of six or so ranges, each damaged at or next to its range boundaries."""
    rng = random.Random(2026)
    files = {}

    def make(name: str, damage, embed: bool = False) -> None:
        records = _records(rng, embed=embed)
        data = bytearray(b"".join(encode_record(r) for r in records))
        damage(data, _starts(records), _cuts(len(data)))
        files[name] = bytes(data)

    def intact(data, starts, cuts):
        pass

    def flip_first_after_cut(data, starts, cuts):  # the record a range reaches past its end fails its data CRC
        for cut in cuts[::2]:
            data[_after(starts, cut) + OVERHEAD] ^= 0x20

    def flip_header_at_cut(data, starts, cuts):  # the length CRC of the first record after a cut fails
        data[_after(starts, cuts[1]) + 3] ^= 0x01
        data[_after(starts, cuts[3]) + 9] ^= 0x80

    def insert_at_cuts(data, starts, cuts):  # garbage right at a record start after a cut, and mid-record
        at = _after(starts, cuts[3])
        data[at:at] = b"\x5a" * 23
        data[cuts[1]:cuts[1]] = bytes(range(40))

    def delete_across_cut(data, starts, cuts):
        del data[cuts[2] - 8:cuts[2] + 9]
        del data[cuts[0] - 1:cuts[0] + 1]

    def zeros_across_cut(data, starts, cuts):
        data[cuts[2] - 20:cuts[2] + 20] = bytes(40)
        data[cuts[4] - 1] ^= 0xFF

    def truncated_tail(data, starts, cuts):  # cut inside the last record, and a flip one byte after a cut
        data[cuts[1] + 1] ^= 0x04
        del data[-3:]

    def garbage_over_a_range(data, starts, cuts):  # one span of garbage longer than a range
        a = _after(starts, cuts[1] - 3000)
        data[a:cuts[2] + 5000] = random.Random(3).randbytes(cuts[2] + 5000 - a)

    make("intact.tfrecord", intact)
    make("flip-after-cut.tfrecord", flip_first_after_cut)
    make("flip-header.tfrecord", flip_header_at_cut)
    make("inserted.tfrecord", insert_at_cuts)
    make("deleted.tfrecord", delete_across_cut)
    make("zeros.tfrecord", zeros_across_cut)
    make("truncated.tfrecord", truncated_tail)
    make("garbage.tfrecord", garbage_over_a_range)
    make("embedded.tfrecord", flip_first_after_cut, embed=True)
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
    (folder / "big.tfrecord.gz").write_bytes(gzip.compress(b"".join(encode_record(r) for r in _records(rng)), 1))
    return files


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranges")
    return folder, _damaged_files(folder)


@pytest.fixture
def seen_segments(monkeypatch):
    """Every stitch's segments: range numbers, and the gaps walked by the driver."""
    from codec.beam import ranges

    seen: dict[str, list] = {}
    stitch = ranges.stitch

    def recording(plan, results, repairing=False):
        done = stitch(plan, results, repairing)
        seen[os.path.basename(plan.path)] = done.segments
        return done

    monkeypatch.setattr(ranges, "stitch", recording)
    return seen


def test_plan_cuts_large_plain_files_only(damaged):
    from codec.beam.ranges import plan_file

    folder, files = damaged
    for name, blob in files.items():
        plan = plan_file(os.fspath(folder / name), None, True)
        bounds = [(t["start"], t["end"]) for t in plan.tasks]
        assert 5 <= len(bounds) <= 8
        assert bounds[0][0] == 0 and bounds[-1][1] == len(blob)
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
        assert max(b - a for a, b in bounds) <= RANGE
    assert plan_file(os.fspath(folder / "big.tfrecord.gz"), None, True) is None  # a deflate stream: one task
    small = folder / "small.tfrecord"
    small.write_bytes(files["intact.tfrecord"][:RANGE])
    try:
        assert plan_file(os.fspath(small), None, True) is None
    finally:
        small.unlink()


def test_first_record_resynchronises_as_the_reader_does(damaged):
    from codec.beam.ranges import first_record
    from codec.sources.tfrecord_file import TFRecordFile

    folder, _ = damaged
    path = os.fspath(folder / "inserted.tfrecord")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index(verify=True)
        offsets = f.index.offsets().tolist()
        good = [o for i, o in enumerate(offsets) if f.index.status(i).label == "ok"]
        for at in (0, 1, 5000, *_cuts(f.file_size)):
            found = first_record(f, at)
            assert found == (0 if at == 0 else next(o for o in good if o >= at))


@pytest.mark.slow
def test_verify_ranges_equal_local(capsys, damaged, seen_segments):
    folder, files = damaged
    beam = _run(capsys, ["verify", "--json", os.fspath(folder), *DIRECT])
    local = _run(capsys, ["verify", "--json", os.fspath(folder)])
    assert beam == local
    assert local[0] == 1
    reports = {os.path.basename(r["path"]): r for r in map(json.loads, local[1].splitlines())}
    assert not reports["intact.tfrecord"]["problems"]
    assert reports["big.tfrecord.gz"]["compression"] == "gzip" and "big.tfrecord.gz" not in seen_segments
    assert all(reports[name]["problems"] for name in files if name != "intact.tfrecord")
    assert reports["truncated.tfrecord"]["problems"][-1]["problem"] == "truncated"
    # Every split file was stitched; where ranges did not meet, the driver walked the gap itself.
    assert set(seen_segments) == set(files)
    gaps = {name for name, segments in seen_segments.items() if any(not isinstance(s, int) for s in segments)}
    assert {"flip-after-cut.tfrecord", "embedded.tfrecord"} <= gaps
    assert "intact.tfrecord" not in gaps
    flipped = reports["flip-after-cut.tfrecord"]["problems"]
    assert [p["problem"] for p in flipped] == ["data_crc"] * len(flipped) and len(flipped) >= 2


@pytest.mark.slow
def test_repair_ranges_equal_local(capsys, tmp_path, damaged, seen_segments):
    folder, files = damaged
    local_out, beam_out = tmp_path / "local", tmp_path / "beam"
    beam = _run(capsys, ["repair", "--include-damaged", "-o", os.fspath(beam_out), os.fspath(folder), *DIRECT,
                         "--out", os.fspath(tmp_path / "beam.jsonl")])
    code, out, err = _run(capsys, ["repair", "--include-damaged", "-o", os.fspath(local_out), os.fspath(folder),
                                   "--out", os.fspath(tmp_path / "local.jsonl")])
    assert beam == (code, out.replace(os.fspath(local_out), os.fspath(beam_out)), err)
    names = sorted(os.listdir(local_out))
    assert sorted(os.listdir(beam_out)) == names == sorted([*files, "big.tfrecord.gz"])  # no part left
    for name in names:
        assert (beam_out / name).read_bytes() == (local_out / name).read_bytes()
    assert (beam_out / "intact.tfrecord").read_bytes() == files["intact.tfrecord"]
    assert set(seen_segments) == set(files)
    reports = (tmp_path / "beam.jsonl").read_text()
    assert reports == (tmp_path / "local.jsonl").read_text().replace(os.fspath(local_out), os.fspath(beam_out))
    assert sum(len(json.loads(r)["included_damaged"]) for r in reports.splitlines()) >= 4


def test_cached_index_cuts_at_its_offsets(capsys, tmp_path, monkeypatch):
    """With an index in the cache, ranges start at its record offsets; bit rot found since (the cache
    still applies: same size and mtime) is reported and repaired as the local commands do."""
    from codec.beam.ranges import plan_file
    from codec.index import cache as index_cache
    from codec.sources.tfrecord_file import TFRecordFile

    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)
    rng = random.Random(9)
    folder = tmp_path / "cached"
    folder.mkdir()
    for k, verify in enumerate((True, False)):
        records = _records(rng)
        path = folder / f"c{k}.tfrecord"
        path.write_bytes(b"".join(encode_record(r) for r in records))
        with TFRecordFile(path) as f:
            f.build_index(verify=verify)
        starts = _starts(records)
        for cut in _cuts(path.stat().st_size)[::2]:
            flip_in_place(path, _after(starts, cut) + OVERHEAD + 1)
        plan = plan_file(os.fspath(path), None, True)
        assert plan.cached_problems is not None and len(plan.tasks) >= 5
        assert {int(t["offsets"][0]) for t in plan.tasks} <= set(starts)
    beam = _run(capsys, ["verify", "--json", os.fspath(folder), *DIRECT])
    local = _run(capsys, ["verify", "--json", os.fspath(folder)])
    assert beam == local and local[0] == 1
    assert all(len(json.loads(line)["problems"]) >= 2 for line in local[1].splitlines())


def test_a_missing_part_leaves_the_target_unwritten(tmp_path):
    from codec.beam.repair import join_parts, part_name
    from codec.errors import FileAccessError

    target = os.fspath(tmp_path / "out.tfrecord")
    first, second = part_name(target, 0), part_name(target, 1)
    assert os.path.basename(first) == ".out.tfrecord.part-00000"
    with open(first, "wb") as f:
        f.write(b"x" * 10)
    with pytest.raises(FileAccessError) as caught:
        join_parts(target, [(first, 10), (second, 5)])
    assert str(caught.value) == f"{target} not written: its part {second} is missing"
    assert not os.path.exists(target)
    with open(second, "wb") as f:
        f.write(b"yz")
    with pytest.raises(FileAccessError, match="has 2 bytes, not 5"):
        join_parts(target, [(first, 10), (second, 5)])
    join_parts(target, [(first, 10), (second, 2)])
    assert open(target, "rb").read() == b"x" * 10 + b"yz"


@pytest.mark.network
@pytest.mark.slow
def test_urls_in_and_out(capsys, tmp_path, tmp_path_factory, damaged, seen_segments):
    """Shards in a bucket, repaired into the bucket: parts are objects beside the target, joined by one
    upload and removed; the objects written are the local repair's files."""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    pytest.importorskip("flask")
    import s3fs

    from tests.remote_servers import make_bucket, moto_server, use_s3_env

    folder, _ = damaged
    names = ["deleted.tfrecord", "flip-after-cut.tfrecord"]
    local_in = tmp_path / "in"
    local_in.mkdir()
    for name in names:
        (local_in / name).write_bytes((folder / name).read_bytes())
    with moto_server() as endpoint, pytest.MonkeyPatch.context() as mp:
        use_s3_env(mp, endpoint, tmp_path_factory.mktemp("aws"))
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            fs, bucket = make_bucket({f"in/{name}": local_in / name for name in names})
            source, target = f"s3://{bucket}/in/", f"s3://{bucket}/out/"
            beam = _run(capsys, ["repair", source, "-o", target, *DIRECT])
            written = {name: fs.cat_file(f"{bucket}/out/{name}") for name in names}
            left = sorted(os.path.basename(p) for p in fs.find(f"{bucket}/out/"))
        finally:
            s3fs.S3FileSystem.clear_instance_cache()
    local = _run(capsys, ["repair", os.fspath(local_in), "-o", os.fspath(tmp_path / "out")])
    assert beam == (local[0], local[1].replace(os.fspath(local_in) + os.sep, source)
                    .replace(os.fspath(tmp_path / "out") + os.sep, target), local[2])
    assert left == names  # no part left beside them
    assert set(seen_segments) == set(names)  # each was cut into ranges
    for name in names:
        assert written[name] == (tmp_path / "out" / name).read_bytes()
    assert "dropped" in local[1]


def test_a_failed_range_leaves_no_target_and_no_parts(capsys, tmp_path, damaged, monkeypatch):
    """A range whose part does not arrive: one line, exit 2, no target, no part file left."""
    from codec.beam import pipeline

    def lossy(tasks, fn, runner, beam_options):
        results = [fn(task) for task in tasks]
        os.unlink(tasks[2]["part"])
        return results

    monkeypatch.setattr(pipeline, "run", lossy)
    folder, _ = damaged
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    target = out_folder / "fixed.tfrecord"
    code, out, err = _run(capsys, ["repair", os.fspath(folder / "zeros.tfrecord"), "-o", os.fspath(target), *DIRECT])
    assert (code, out) == (2, "")
    part = out_folder / ".fixed.tfrecord.part-00002"
    assert err == f"tfrlens-cli: {target} not written: its part {part} is missing\n"
    assert os.listdir(out_folder) == []


def test_repair_over_its_own_source_is_refused_as_locally(capsys, tmp_path, damaged, monkeypatch):
    from codec.beam import pipeline

    monkeypatch.setattr(pipeline, "run", lambda tasks, fn, runner, beam_options: [fn(t) for t in tasks])
    folder, files = damaged
    (tmp_path / "own").mkdir()
    path = tmp_path / "own" / "inserted.tfrecord"
    path.write_bytes(files["inserted.tfrecord"])
    local = _run(capsys, ["repair", os.fspath(path), "-o", os.fspath(path)])
    beam = _run(capsys, ["repair", os.fspath(path), "-o", os.fspath(path), *DIRECT])
    assert beam == local and local[0] == 2 and "must not replace its source" in local[2]
    assert path.read_bytes() == files["inserted.tfrecord"]
    assert os.listdir(tmp_path / "own") == ["inserted.tfrecord"]
