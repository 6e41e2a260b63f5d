"""GZIP/ZLIB random access through decompressor checkpoints."""
from __future__ import annotations

import random

import pytest

from codec import TFRecordFile, inflate, write_records


def records(n=3000):
    rng = random.Random(7)
    return [rng.randbytes(rng.randint(200, 4000)) for _ in range(n)]  # incompressible, ~6 MB


def text_records(n=1000):
    """Highly compressible, ~6 MB: the decompressor often stops at its output limit with input left over."""
    rng = random.Random(3)
    words = [b"alpha", b"beta", b"gamma", b"delta"]
    return [b" ".join(rng.choice(words) for _ in range(1000)) + b"%d" % i for i in range(n)]


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
@pytest.mark.parametrize("make", [records, text_records])
def test_random_order_equals_sequential_over_many_checkpoints(tmp_path, compression, make, monkeypatch):
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)  # several checkpoints in a 6 MB file
    recs = make()
    path = tmp_path / f"big.{compression}"
    write_records(path, recs, compression)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert len(f._inflate.checkpoints) >= 5, "the file should span several checkpoints"
        sequential = list(f)
        assert sequential == recs
        order = list(range(len(recs)))
        random.Random(1).shuffle(order)
        for i in order:
            assert f[i] == recs[i]


def test_reading_the_last_record_does_not_start_from_the_beginning(tmp_path, monkeypatch):
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 1 << 20)
    recs = records()
    path = tmp_path / "big.gz"
    write_records(path, recs, "gzip")
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        reader = f._inflate
        decoded = []
        original = reader._block

        def spy(k):
            decoded.append(k)
            return original(k)

        monkeypatch.setattr(reader, "_block", spy)
        assert f[-1] == recs[-1]
        assert decoded and min(decoded) >= len(reader.checkpoints) - 2
        assert all(reader.checkpoints[k + 1].out_pos - reader.checkpoints[k].out_pos <= 2 * inflate.CHECKPOINT_EVERY
                   for k in range(len(reader.checkpoints) - 1))


def test_random_access_after_a_cached_open(tmp_path):
    recs = records(800)
    path = tmp_path / "c.zlib"
    write_records(path, recs, "zlib")
    with TFRecordFile(path) as f:
        f.build_index()
    with TFRecordFile(path) as f:
        f.build_index()
        assert f._inflate is None  # came from the cache
        assert f[500] == recs[500] and f[3] == recs[3]


def test_concatenated_gzip_members(tmp_path):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    write_records(a, [b"one", b"two"], "gzip")
    write_records(b, [b"three"], "gzip")
    both = tmp_path / "both.gz"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    with TFRecordFile(both, use_cache=False) as f:
        f.verify()
        assert list(f) == [b"one", b"two", b"three"] and f.problems == []


def test_an_abandoned_pass_stops_its_decompressing_thread(tmp_path):
    import threading

    path = tmp_path / "big.gz"
    write_records(path, text_records(), "gzip")
    f = TFRecordFile(path, use_cache=False)
    passes = f.index_iter()
    next(passes)
    next(passes)
    passes.close()  # e.g. the GUI's Cancel
    assert not [t for t in threading.enumerate() if t.name == "tfrlens-inflate"]
    f.close()
