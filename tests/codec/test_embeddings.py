"""Embeddings: the rule that finds them in the inferred spec, and their 2-D projection."""
from __future__ import annotations

import numpy as np
import pytest

from codec import open_tfrecord, write_records
from codec.stats.embeddings import MIN_DIMS, embedding_keys, pca_2d, project, sample_records
from codec.stats.schema import infer_schema
from tests.builders import example


def _file(tmp_path, records, name="e.tfrecord"):
    path = tmp_path / name
    write_records(str(path), records)
    return open_tfrecord(str(path))


def _clusters(n: int, dims: int = 16, seed: int = 1) -> tuple[list[bytes], np.ndarray]:
    """Two clusters apart along one direction, labelled 0 and 1 (alternating)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2
    direction = rng.normal(size=dims)
    vectors = rng.normal(0, 0.1, (n, dims)) + np.outer(labels * 2 - 1, direction) * 5
    return [example(emb=v.astype(np.float32), label=int(c)) for v, c in zip(vectors, labels)], labels


def test_fixed_length_float_features_of_eight_or_more_are_embeddings(tmp_path):
    records = [example(emb=np.ones(MIN_DIMS, dtype=np.float32), short=np.ones(4, dtype=np.float32),
                       varying=np.ones(8 + i, dtype=np.float32), ids=np.arange(8), label=i) for i in range(3)]
    records.append(example(label=9))  # no embedding here: the rule asks only the records that have it
    with _file(tmp_path, records) as f:
        assert embedding_keys(infer_schema(f)) == {"emb": MIN_DIMS}


def test_a_length_that_varies_is_not_an_embedding(tmp_path):
    records = [example(emb=np.ones(16, dtype=np.float32)), example(emb=np.ones(17, dtype=np.float32))]
    with _file(tmp_path, records) as f:
        assert embedding_keys(infer_schema(f)) == {}


def test_pca_separates_two_planted_clusters_on_the_first_component(tmp_path):
    records, labels = _clusters(400)
    with _file(tmp_path, records) as f:
        result = project(f, "emb")
    assert result.records.tolist() == list(range(400))
    assert result.label_key == "label" and result.label_names == ["0", "1"]
    assert result.labels.tolist() == labels.tolist()
    first = result.points[:, 0]
    assert first[labels == 0].max() < first[labels == 1].min() or first[labels == 1].max() < first[labels == 0].min()
    assert result.explained[0] > 0.9 and result.explained[0] + result.explained[1] <= 1.0 + 1e-9


def test_pca_of_a_known_matrix():
    x = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]], dtype=np.float32)
    points, explained = pca_2d(x)
    assert explained == pytest.approx((0.8, 0.2))
    assert np.abs(points[:, 0]).tolist() == pytest.approx([1, 1, 1, 1])  # along x, centred
    assert points.sum(axis=0).tolist() == pytest.approx([0, 0], abs=1e-6)


def test_the_sample_is_seeded_and_in_record_order(tmp_path):
    assert list(sample_records(5, 10)) == [0, 1, 2, 3, 4]
    a, b = sample_records(1000, 50, seed=3), sample_records(1000, 50, seed=3)
    assert a == b and a == sorted(set(a)) and len(a) == 50
    assert sample_records(1000, 50, seed=4) != a
    records, _ = _clusters(60)
    with _file(tmp_path, records) as f:
        one, two = project(f, "emb", sample=20, seed=7), project(f, "emb", sample=20, seed=7)
    assert one.sampled and one.records.tolist() == two.records.tolist() == sample_records(60, 20, 7)
    assert np.array_equal(one.points, two.points)


def test_records_without_the_vector_are_skipped_and_text_labels_named(tmp_path):
    records = [example(emb=np.full(8, float(i), dtype=np.float32) + np.arange(8, dtype=np.float32),
                       **{"image/class/text": "cat" if i % 2 else "dog"}) for i in range(6)]
    records.insert(2, example(other=1))
    records.insert(4, example(emb=np.ones(9, dtype=np.float32)))  # another length
    with _file(tmp_path, records) as f:
        result = project(f, "emb")
    assert result.records.tolist() == [0, 1, 3, 5, 6, 7]
    assert result.skipped == 2
    assert result.label_key == "image/class/text" and result.label_names == ["cat", "dog"]
    assert [result.label_names[c] for c in result.labels] == ["dog", "cat", "dog", "cat", "dog", "cat"]


def test_a_label_map_names_the_classes(tmp_path):
    from codec.datasets.label_maps import LabelMap, LabelNames

    records, _ = _clusters(10)
    with _file(tmp_path, records) as f:
        f.labels = LabelNames({"label": LabelMap.from_names(["cat", "dog"])})
        result = project(f, "emb")
    assert result.label_names == ["0 (cat)", "1 (dog)"]


@pytest.mark.slow  # two spawned workers start in about 2 s
def test_on_the_pool_the_projection_is_the_one_of_one_process(tmp_path):
    from codec.sources.shard_set import ShardSet

    records, _ = _clusters(90)
    paths = []
    for k in range(3):
        paths.append(str(tmp_path / f"data-{k:05d}-of-00003.tfrecord"))
        write_records(paths[-1], records[k * 30:(k + 1) * 30])
    with ShardSet(paths) as shards:
        shards.build_index()
        here, pooled = project(shards, "emb", sample=50, seed=2), project(shards, "emb", sample=50, seed=2, workers=2)
    assert pooled.records.tolist() == here.records.tolist() == sample_records(90, 50, 2)
    assert np.allclose(pooled.points, here.points) and pooled.explained == pytest.approx(here.explained)
    assert pooled.labels.tolist() == here.labels.tolist() and pooled.label_names == here.label_names == ["0", "1"]


def test_a_vector_with_nan_goes_to_the_centre():
    x = np.array([[0, 0, 0], [2, 0, 0], [np.nan, 1, 0], [0, 1, 0], [2, 1, 0]], dtype=np.float32)
    points, explained = pca_2d(x)
    assert points[2].tolist() == [0, 0] and np.isfinite(points).all()
    assert explained == pytest.approx((0.8, 0.2))


@pytest.mark.parametrize("reads", [{}, {"MAX_GAP": 0, "RUN_BYTES": 600}])
def test_a_sample_of_a_plain_file_reads_only_its_records_and_skips_a_damaged_one(tmp_path, monkeypatch, reads):
    from codec.decode.example_proto import Example
    from codec.stats import embeddings

    for name, value in reads.items():  # small reads: a read per record, runs cut short
        monkeypatch.setattr(embeddings, name, value)
    records, labels = _clusters(300)
    chosen = sample_records(300, 100, 1)
    bad = chosen[10]
    path = tmp_path / "e.tfrecord"
    write_records(str(path), records)
    with open_tfrecord(str(path)) as f:
        f.build_index()
        at = f.index.offset(bad) + 12 + len(records[bad])
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF  # record `bad`'s data CRC no longer matches its data
    path.write_bytes(bytes(data))
    with open_tfrecord(str(path)) as f:
        f.build_index()
        p = project(f, "emb", sample=100, seed=1)
        assert [(problem.index, problem.kind.value) for problem in f.problems] == [(bad, "data_crc")]
        assert {f.index.status(i).name for i in chosen if i != bad} == {"OK"}
        assert {f.index.status(i).name for i in range(300) if i not in chosen} == {"UNCHECKED"}  # never read
    kept = [i for i in chosen if i != bad]
    assert p.records.tolist() == kept and p.sampled
    vectors = np.array([Example.FromString(records[i]).features.feature["emb"].float_list.value for i in kept])
    assert np.allclose(p.points, pca_2d(vectors.astype(np.float32))[0], atol=1e-5)
    assert [p.label_names[c] for c in p.labels] == [str(labels[i]) for i in kept]
    with open_tfrecord(str(path), check_crc=False) as f:
        f.build_index()
        unchecked = project(f, "emb", sample=100, seed=1)
        assert not f.problems
    assert unchecked.records.tolist() == chosen  # CRCs not checked: the damaged record is read as it is
