"""``check --runner direct``: the per-record pass in Beam's workers, duplicates, leaks, conflicts and
near-duplicates grouped by GroupByKey, and the report the local command prints, byte for byte.

One Beam run per dataset (the shared doctor dataset, and one built here with duplicates spread over
shards and splits and near-duplicate images made with Pillow), shared by the module's tests. The
near-duplicate band grouping is checked against brute force without Beam.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random

import pytest
from PIL import Image, ImageDraw

from codec.cli.main import main
from codec.storage.writer import write_records
from tests.builders import example, fixture_path

from .test_doctor_dataset import _picture

DIRECT = ["--runner", "direct", "--beam-option", "direct_num_workers=1"]
OPTIONS = ["--shuffle-buffer", "40", "--near-threshold", "12"]  # label runs of 32+ records are reported


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def _beam_run(argv: list[str]) -> tuple[int, str, list]:
    """``main(argv)`` on the direct runner, and the items the pipeline brought back to this process."""
    import codec.beam.pipeline as pipeline

    seen: list = []
    real = pipeline.run_pipeline

    def spy(build, runner, beam_options):
        items = real(build, runner, beam_options)
        seen.extend(items)
        return items

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "run_pipeline", spy)
        code, out = _run(argv)
    return code, out, seen


# ------------------------------------------------------------ a dataset built here
def _jpeg(image: Image.Image, quality: int = 90) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def _example(encoded: bytes | None, label: int | bytes | None, note: bytes | None = None) -> bytes:
    features = {"image/encoded": encoded, "image/class/label": label, "note": note}
    return example({key: value for key, value in features.items() if value is not None})


def build(root) -> dict[str, set]:
    """Three train and two eval shards of labelled images with planted problems; returns per planted
    problem the (file name, index) records its finding names."""
    rng = random.Random(15)
    names = [f"train-{k:05d}-of-00003.tfrecord" for k in range(3)] + [f"eval-{k:05d}-of-00002.tfrecord"
                                                                     for k in range(2)]
    shards: list[list[bytes]] = []
    for s in range(5):
        if s == 2:  # written in label order: 36 records of label 1 first
            labels = [1] * 36 + [2] + [rng.randint(1, 3) for _ in range(7)]
        else:
            labels = [rng.randint(1, 3) for _ in range(rng.randint(18, 26))]
        shards.append([_example(_jpeg(_picture(rng)), label) for label in labels])
    at = {}

    def put(key: str, s: int, i: int, data: bytes) -> None:
        shards[s][i] = data
        at.setdefault(key, set()).add((names[s], i))

    twin = _picture(rng)
    for s, i in ((0, 3), (1, 5), (2, 40)):  # one record three times in train
        put("exact", s, i, _example(_jpeg(twin), 2))
    leak = _example(_jpeg(_picture(rng)), 3)
    put("leak", 1, 9, leak)
    put("leak", 4, 2, leak)
    raw = rng.randbytes(40)  # not an Example: identical records, no image, in both splits
    put("raw_leak", 0, 7, raw)
    put("raw_leak", 3, 11, raw)
    conflict = _jpeg(_picture(rng))
    put("conflict", 0, 12, _example(conflict, 1))
    put("conflict", 3, 4, _example(conflict, 2))
    same = _jpeg(_picture(rng))  # one image, records that differ in another feature
    put("differ", 1, 14, _example(same, 3, b"first"))
    put("differ", 1, 15, _example(same, 3, b"second"))
    original = _picture(rng)
    near_twin = _jpeg(original.resize((80, 80)))  # an image in two records, and its similar copies
    put("near", 0, 15, _example(_jpeg(original), 1))
    put("near", 0, 16, _example(near_twin, 1))
    put("near", 4, 6, _example(near_twin, 1))
    put("near", 3, 8, _example(_jpeg(Image.open(io.BytesIO(_jpeg(original))).convert("RGB"), quality=40), 1))
    edited = original.copy()
    ImageDraw.Draw(edited).rectangle((28, 28, 34, 34), fill=(255, 255, 255))
    put("near", 1, 17, _example(_jpeg(edited), 2))
    put("missing", 1, 2, _example(_jpeg(_picture(rng)), None))
    put("wrong_type", 4, 9, _example(_jpeg(_picture(rng)), b"cat"))
    for s, name in enumerate(names):
        write_records(os.fspath(root / name), shards[s])
    with open(root / names[4], "r+b") as f:  # a data byte of record 0: its data CRC fails
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 0xFF]))
    at["damage"] = {(names[4], 0)}
    return at


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("beam-check")
    planted = build(root)
    args = ["check", "--json", *OPTIONS, os.fspath(root)]
    return planted, _run([*args, "--workers", "1"]), _beam_run([*args, *DIRECT])


@pytest.fixture(scope="module")
def doctor():
    args = ["check", "--json", fixture_path("doctor")]
    return _run([*args, "--workers", "1"]), _beam_run([*args, *DIRECT])


def _named(finding: dict) -> set:
    return {(os.path.basename(r["path"]), r["index"]) for r in finding["records"]}


def _has(findings: list[dict], check: str, severity: str, records: set, detail: str = "") -> bool:
    return any(f["check"] == check and f["severity"] == severity and _named(f) == records and detail in f["detail"]
               for f in findings)


# ------------------------------------------------------------ the report, local and on Beam
@pytest.mark.slow
def test_doctor_dataset_direct_equals_local(doctor):
    local, (code, out, _) = doctor
    assert (code, out) == local
    assert local[0] == 1
    report = json.loads(local[1])
    assert report["records"] == 150
    planted = json.loads(open(os.path.join(fixture_path("doctor"), "MANIFEST.json")).read())["planted"]
    found = [(f["check"], _named(f)) for f in report["findings"]]
    for p in planted:
        want = {(r["path"], r["index"]) for r in p["records"]}
        assert any(check == p["check"] and want <= named for check, named in found), p


@pytest.mark.slow
def test_generated_dataset_direct_equals_local(generated):
    planted, local, (code, out, _) = generated
    assert (code, out) == local
    assert local[0] == 1
    findings = json.loads(local[1])["findings"]
    assert _has(findings, "exact_duplicate", "warning", planted["exact"], "3 identical records in train")
    assert _has(findings, "split_leak", "error", planted["leak"], "the same image (identical pixels) in eval (1) "
                                                                 "and train (1)")
    assert _has(findings, "split_leak", "error", planted["raw_leak"], "identical records in eval (1) and train (1)")
    assert _has(findings, "label_conflict", "error", planted["conflict"], "labelled differently")
    assert _has(findings, "exact_duplicate", "warning", planted["differ"], "differ in other features")
    # similar images in several splits: one near-duplicate that says it leaks, not also a leak (docs/doctor.md)
    near = next(f for f in findings if f["check"] == "near_duplicate" and _named(f) == planted["near"])
    assert near["severity"] == "warning" and near["detail"].startswith("4 similar images in 5 records (pHash within ")
    assert 0 < int(near["detail"].split("pHash within ")[1].split()[0]) <= 12
    assert near["detail"].endswith(": a leak between splits")
    assert not any(f["check"] == "split_leak" and f["detail"].startswith("near-duplicate") for f in findings)
    assert _has(findings, "missing_feature", "warning", planted["missing"], "lacks image/class/label")
    assert _has(findings, "missing_feature", "error", planted["wrong_type"], "is bytes, elsewhere int64")
    assert _has(findings, "damage", "error", planted["damage"], "data CRC")
    assert _has(findings, "label_order", "warning", {("train-00002-of-00003.tfrecord", 0),
                                                     ("train-00002-of-00003.tfrecord", 35)}, "36 records")


def test_only_groups_come_back_to_the_driver(generated):
    """Records in no group stop in the workers: what comes back is per task, groups of 2+, linked images."""
    _, local, (_, _, items) = generated
    records = json.loads(local[1])["records"]
    kinds = {}
    for item in items:
        kinds.setdefault(item[0], []).append(item)
    assert len(kinds["task"]) == 5  # one work item per shard
    assert all(len(item[2]) >= 2 for item in kinds["rec"])
    linked = {key for _, a, b, _ in kinds["pair"] for key in (a, b)}
    assert all(len(item[2]) >= 2 or item[1] in linked for item in kinds["pix"])
    members = sum(len(item[2]) for kind in ("rec", "pix") for item in kinds[kind])
    assert 0 < members < records // 5
    pairs = [tuple(p[1:3]) for p in kinds["pair"]]
    assert len(pairs) == len(set(pairs)) >= 3  # each pair once, the four similar images linked
    assert len(linked) == 4


# ------------------------------------------------------------ the band grouping, without Beam
def _random_hashes(rng: random.Random, n: int, threshold: int) -> list[int]:
    hashes = [rng.getrandbits(64) for _ in range(n)]
    for _ in range(n // 3):  # near copies, some just outside the threshold
        flips = rng.sample(range(64), rng.randint(0, threshold + 2))
        hashes.append(rng.choice(hashes) ^ sum(1 << b for b in flips))
    return hashes


def _grouped_pairs(hashes: list[int], edges: list[int], r: int, threshold: int) -> set:
    from codec.beam.check import band_keys, band_pairs

    groups: dict = {}
    for n, h in enumerate(hashes):
        key = n.to_bytes(4, "big")
        for band_key, stored in band_keys(h, edges, r):
            groups.setdefault(band_key, []).append((key, h, stored))
    found = [p for members in groups.values() for p in band_pairs(members, threshold)]
    assert all(a < b for a, b, _ in found)
    return {(int.from_bytes(a, "big"), int.from_bytes(b, "big"), d) for a, b, d in found}


@pytest.mark.parametrize("threshold, bands, n", [(0, 1, 240), (3, 4, 240), (6, 4, 240), (8, 4, 90), (8, 9, 240),
                                                 (8, None, 240)])
def test_band_grouping_finds_every_pair_within_the_threshold(threshold, bands, n):
    from codec.beam.check import band_plan

    rng = random.Random(threshold * 100 + (bands or 0))
    hashes = _random_hashes(rng, n, threshold)
    if bands is None:
        edges, r = band_plan(len(hashes), threshold)
    else:
        edges, r = [round(64 * k / bands) for k in range(bands + 1)], threshold // bands
    assert edges[0] == 0 and edges[-1] == 64 and r == threshold // (len(edges) - 1)
    brute = {(i, j, (hashes[i] ^ hashes[j]).bit_count()) for i in range(len(hashes))
             for j in range(i + 1, len(hashes)) if (hashes[i] ^ hashes[j]).bit_count() <= threshold}
    assert len(brute) >= 20
    assert _grouped_pairs(hashes, edges, r, threshold) == brute


def test_band_plan_trades_elements_for_comparisons():
    from codec.beam.check import band_plan

    few, many = band_plan(1_000, 8), band_plan(100_000_000, 8)
    assert len(few[0]) - 1 > len(many[0]) - 1  # more images: wider bands, fewer crowded groups
    for edges, r in (few, many):
        assert r == 8 // (len(edges) - 1)
