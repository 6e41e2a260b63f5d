"""ArrayRecord records larger than Riegeli's 64 KiB blocks: a chunk that crosses block headers (one or many)
reads back as Google's writer wrote it, record by record, in a pass and at random, whatever the compression."""
from __future__ import annotations

import random

import pytest

from codec.format.riegeli import BLOCK_SIZE
from codec.sources.array_record_file import ArrayRecordFile, array_record_available
from codec.sources.record_file import open_record_file

pytestmark = pytest.mark.skipif(not array_record_available(), reason="Google's array-record package is not installed")


def _records() -> list[bytes]:
    """Sizes around and well beyond a block, incompressible (random) and compressible (repeated) bytes."""
    rng = random.Random(7)
    sizes = [0, 1, BLOCK_SIZE - 30, BLOCK_SIZE, BLOCK_SIZE + 1, 3 * BLOCK_SIZE + 17, 1_000_003, 12]
    return [rng.randbytes(n) if k % 2 else bytes([k]) * n for k, n in enumerate(sizes)]


@pytest.mark.parametrize("options", ["group_size:1,uncompressed", "group_size:1,zstd", "group_size:3,brotli",
                                     "group_size:4,snappy"])
def test_records_beyond_a_block_read_back_unchanged(tmp_path, options):
    from array_record.python import array_record_module

    records = _records()
    path = tmp_path / "large.array_record"
    writer = array_record_module.ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    assert path.stat().st_size > BLOCK_SIZE * 4  # the chunks cross block headers
    with open_record_file(str(path)) as f:
        assert isinstance(f, ArrayRecordFile)
        f.build_index()
        assert len(f) == len(records)
        assert list(f) == records  # a pass
        for i in random.Random(1).sample(range(len(records)), len(records)):  # and at random
            assert f.read(i).data == records[i], i
        assert f.verify() == []
