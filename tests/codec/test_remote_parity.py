"""Every reference file read through s3:// from a moto server gives exactly what it gives
locally: the same compression, records, statuses and problems, or the same refusal."""
from __future__ import annotations

import gzip
import os
import shutil
import zlib
from pathlib import Path

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("flask")

from codec.errors import FileChangedError, TFRecordError
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.builders import FIXTURES
from tests.remote_servers import make_bucket, use_s3_env

pytestmark = pytest.mark.network

SHARED = sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.name != "MANIFEST.json")


def _damaged(folder: Path) -> list[Path]:
    """Damage the shared fixtures do not have: bytes flipped, cut and inserted, in plain,
    GZIP and ZLIB files, and a file larger than the cache's threshold."""
    records = [bytes([i % 251]) * (200 + 37 * i) for i in range(400)]
    write_records(folder / "base.tfrecord", records)
    raw = (folder / "base.tfrecord").read_bytes()
    made = {
        "flipped.tfrecord": raw[:5000] + bytes([raw[5000] ^ 0xFF]) + raw[5001:],
        "cut_middle.tfrecord": raw[:20000] + raw[20500:],
        "inserted.tfrecord": raw[:30000] + b"\x00garbage" * 40 + raw[30000:],
        "cut_end.tfrecord.gz": gzip.compress(raw)[:-3000],
        "flipped.tfrecord.zz": (lambda z: z[:9000] + bytes([z[9000] ^ 0x55]) + z[9001:])(zlib.compress(raw)),
        "big.tfrecord": b"".join(raw for _ in range(2)) + raw[:777],
    }
    for name, data in made.items():
        (folder / name).write_bytes(data)
    return [folder / name for name in made]


@pytest.fixture(scope="module")
def extra_files(tmp_path_factory):
    return _damaged(tmp_path_factory.mktemp("damaged"))


def _outcome(path: str, shown_as: str):
    """What opening, indexing (with verification) and reading every record gives."""
    try:
        f = TFRecordFile(path, use_cache=False)
        f.build_index(verify=True)
    except TFRecordError as exc:
        return type(exc).__name__, str(exc).replace(path, shown_as)
    records = [f.read(i) for i in range(len(f))]
    return (f.compression, f.file_size, f.index.offsets().tolist(),
            [(r.data, r.status, r.stored_crc, r.computed_crc) for r in records],
            [(p.index, p.offset, p.kind, p.detail.replace(path, shown_as), p.size, p.compressed_offset)
             for p in f.problems])


def test_every_reference_file_reads_the_same_through_s3(s3_endpoint, extra_files, monkeypatch, tmp_path):
    use_s3_env(monkeypatch, s3_endpoint, tmp_path)
    files = SHARED + extra_files
    _, bucket = make_bucket({f"data/{p.name}": p for p in files})
    seen_refusal = seen_damage = False
    for p in files:
        url = f"s3://{bucket}/data/{p.name}"
        local, remote = _outcome(str(p), "FILE"), _outcome(url, "FILE")
        assert remote == local, p.name
        refused = len(local) == 2
        seen_refusal |= refused
        seen_damage |= not refused and bool(local[-1])
    assert seen_refusal and seen_damage  # the set has both, so the comparison covers both


def test_s3_object_replaced_while_open_is_refused(s3_endpoint, monkeypatch, tmp_path):
    use_s3_env(monkeypatch, s3_endpoint, tmp_path)
    records = [os.urandom(5000) for _ in range(400)]
    write_records(tmp_path / "a.tfrecord", records)
    fs, bucket = make_bucket({"a.tfrecord": tmp_path / "a.tfrecord"})
    f = TFRecordFile(f"s3://{bucket}/a.tfrecord", use_cache=False).build_index()
    assert f[3] == records[3]
    other = records[:]
    other[300] = os.urandom(5000)
    write_records(tmp_path / "b.tfrecord", other)
    shutil.copy(tmp_path / "b.tfrecord", tmp_path / "a.tfrecord")
    fs.put_file(str(tmp_path / "a.tfrecord"), f"{bucket}/a.tfrecord")  # same size, new ETag
    with pytest.raises(FileChangedError, match="changed on the server"):
        f[300]
