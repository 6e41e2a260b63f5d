"""The dataset doctor's parts: the near-duplicate search, the box rules, splits, each cross-record check,
the command line (exit codes, JSON, --checks, --split), the pool (record ranges, cancellation)."""
from __future__ import annotations

import json
import multiprocessing
import shutil

import numpy as np
import pytest

from codec.cli.main import main
from codec.doctor import CHECKS, CheckOptions, CheckProgress, CheckReport, check_iter, engine, run_check
from codec.doctor.checks import bbox_problems, box_problems, format_problem
from codec.doctor.grouping import Store
from codec.doctor.hashing import near_pairs
from codec.doctor.splits import parse_split_args, split_of
from codec.errors import UsageError
from codec.storage.writer import write_records
from tests.builders import FIXTURES, example, fixture_path

DOCTOR = FIXTURES / "doctor"


def test_near_pairs_match_brute_force():
    rng = np.random.default_rng(3)
    hashes = rng.integers(0, 2**63, size=3000, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 3000).astype(np.uint64)
    for k in range(0, 200, 2):  # plant pairs a few bits apart
        flips = rng.choice(64, size=int(rng.integers(0, 11)), replace=False)
        hashes[k + 1] = hashes[k] ^ np.uint64(sum(1 << int(b) for b in flips))
    for threshold in (0, 3, 8):
        i, j, d = near_pairs(hashes, threshold)
        dist = np.bitwise_count(hashes[:, None] ^ hashes[None, :])
        want = {(a, b) for a, b in zip(*np.nonzero(np.triu(dist <= threshold, 1)))}
        assert set(zip(i.tolist(), j.tolist())) == want
        assert (d == dist[i, j]).all()


def test_box_rules():
    assert box_problems([(0.1, 0.1, 0.5, 0.5)]) == []
    assert box_problems([(0.7, 0.1, 0.3, 0.5)]) == ["box 0: xmin 0.7 > xmax 0.3"]
    assert box_problems([(0.1, 0.2, 0.5, 0.2)]) == ["box 0: zero area (ymin = ymax = 0.2)"]
    assert box_problems([(0.1, -0.5, 1.5, 0.5)]) == ["box 0: ymin -0.5, xmax 1.5 outside [0, 1]"]
    assert box_problems([(float("nan"), 0.1, 0.2, 0.3)]) == ["box 0: xmin nan"]
    keys = [f"image/object/bbox/{s}" for s in ("xmin", "ymin", "xmax", "ymax")]
    assert bbox_problems(dict(zip(keys, [[0.1], [0.1], [0.2], [0.2, 0.3]])))[0].startswith("lists of unequal length")
    assert "missing" in bbox_problems(dict(zip(keys, [[0.1], [0.1], [0.2], None])))[0]
    assert format_problem("image/format", b"jpg", "JPEG") is None
    assert format_problem("image/format", b"png", "JPEG") == "image/format says 'png', the bytes are JPEG"


def test_splits_from_names_and_globs():
    assert split_of("/d/train-00001-of-00004.tfrecord") == "train"
    assert split_of("/d/coco_val.record-00000-of-00010") == "val"
    assert split_of("/d/mnist-test.tfrecord-00000-of-00001") == "test"
    assert split_of("/d/validation/part-0.tfrecord") == "validation"
    assert split_of("/d/data-00000-of-00001.tfrecord") is None
    globs = parse_split_args(["a=part-0*", "b=part-1*"])
    assert split_of("/d/part-17.tfrecord", globs) == "b" and split_of("/d/train-1", globs) is None
    with pytest.raises(UsageError):
        parse_split_args(["train"])


def _copy_doctor(tmp_path):
    root = tmp_path / "doctor"
    shutil.copytree(DOCTOR, root)
    return root


def test_checks_subset_and_text_output(tmp_path, capsys):
    root = _copy_doctor(tmp_path)
    assert main(["check", str(root), "--checks", "bbox,label_order"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "checked 150 records: 3 errors, 0 warnings"
    assert out[1] == "bbox (3 errors)" and len(out) == 5
    assert all(line.startswith("  error   ") and ".tfrecord:" in line for line in out[2:])
    assert main(["check", str(root), "--checks", "label_order", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"records": 150, "findings": []}


def test_split_option_decides(tmp_path):
    root = _copy_doctor(tmp_path)
    by_name = run_check([str(root)], CheckOptions(checks=frozenset({"split_leak"})))
    given = run_check([str(root)], CheckOptions(checks=frozenset({"split_leak"}),
                                                splits={"a": "train-*", "b": "eval-*"}))
    assert [f.records for f in given.findings] == [f.records for f in by_name.findings]
    assert sum(f.severity == "error" for f in by_name.findings) == 4
    one = run_check([str(root)], CheckOptions(checks=frozenset({"split_leak", "exact_duplicate"}),
                                              splits={"all": "*"}))
    assert not [f for f in one.findings if f.check == "split_leak"]
    leaked = {tuple(f.records) for f in by_name.findings if f.severity == "error"}
    assert leaked <= {tuple(f.records) for f in one.findings if f.check == "exact_duplicate"}


def test_bad_usage_and_unreadable_input(tmp_path, capsys):
    for argv in (["check", fixture_path("not_a_tfrecord.jpg")], ["check", str(tmp_path / "missing")],
                 ["check", str(DOCTOR), "--checks", "nope"], ["check", str(DOCTOR), "--near-threshold", "99"],
                 ["check", str(DOCTOR), "--split", "train"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tfrlens-cli: ") and "Traceback" not in err


def test_damage_is_an_error(tmp_path):
    report = run_check([fixture_path("corrupt_data_crc.tfrecord")], CheckOptions(checks=frozenset({"damage"})))
    assert report.findings and all(f.check == "damage" and f.severity == "error" for f in report.findings)
    assert any("data CRC" in f.detail or "data_crc" in f.detail for f in report.findings)
    assert report.exit_code == 1


def test_missing_feature_and_wrong_type(tmp_path):
    recs = [example(label=[1], name=[b"x%d" % i]) for i in range(30)]
    recs[4] = example(name=[b"no label"])
    recs[9] = example(label=[1.5], name=[b"float label"])
    path = tmp_path / "data.tfrecord"
    write_records(str(path), recs)
    report = run_check([str(path)], CheckOptions(checks=frozenset({"missing_feature"})))
    got = {(f.records[0].index, f.severity) for f in report.findings}
    assert got == {(4, "warning"), (9, "error")}
    assert "label is float, elsewhere int64" in [f.detail for f in report.findings if f.severity == "error"][0]


def test_label_order_runs_against_the_buffer(tmp_path):
    path = tmp_path / "sorted.tfrecord"
    write_records(str(path), [example(label=[1 if i < 120 else 2], id=[i]) for i in range(160)])
    small = run_check([str(path)], CheckOptions(checks=frozenset({"label_order"}), shuffle_buffer=64))
    assert [(f.records[0].index, f.records[-1].index) for f in small.findings] == [(0, 119), (120, 159)]
    assert "longer than the shuffle buffer" in small.findings[0].detail
    assert run_check([str(path)], CheckOptions(checks=frozenset({"label_order"}))).findings == []


def test_pool_ranges_of_one_file_match_one_process(tmp_path, monkeypatch):
    """A file cut into record ranges on two processes finds what one process finds, runs and duplicates
    across the cut included."""
    recs = [example(label=[1 if i < 1500 else 2], id=[i]) for i in range(2000)]
    recs[1995] = recs[5]
    path = tmp_path / "big.tfrecord"
    write_records(str(path), recs)
    monkeypatch.setattr(engine, "SPLIT_BYTES", 1)
    options = dict(checks=frozenset({"label_order", "exact_duplicate"}), shuffle_buffer=100)
    tasks, _, counted = engine._plan([(str(path), None)], 2)
    assert len(tasks) == 2 and counted == 2000
    two = run_check([str(path)], CheckOptions(workers=2, **options))
    one = run_check([str(path)], CheckOptions(workers=1, **options))
    assert two.to_json() == one.to_json()
    assert two.records == 2000
    assert [(f.check, f.records[0].index, f.records[-1].index) for f in two.findings] == [
        ("exact_duplicate", 5, 1995), ("label_order", 0, 1499), ("label_order", 1500, 1994)]


@pytest.mark.slow
def test_closing_check_iter_stops_the_workers(tmp_path):
    root = _copy_doctor(tmp_path)
    items = check_iter([str(root)], CheckOptions(workers=2))
    for item in items:
        if isinstance(item, CheckProgress) and item.phase == "check" and item.done:
            break  # a worker has reported: the pool runs
    assert multiprocessing.active_children()
    items.close()
    assert multiprocessing.active_children() == []
    full = list(check_iter([str(root)], CheckOptions(workers=2)))
    assert isinstance(full[-1], CheckReport) and full[-1].records == 150
    assert all(isinstance(i, CheckProgress) for i in full[:-1])
    assert multiprocessing.active_children() == []
    from codec.doctor.audio_checks import AUDIO_CHECKS  # (the doctor fixture holds no audio)

    assert {f.check for f in full[-1].findings} == set(CHECKS) - {"damage", "label_order"} - AUDIO_CHECKS


def test_progress_line_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    root = _copy_doctor(tmp_path)
    monkeypatch.setattr("sys.stderr", Terminal())
    assert main(["check", str(root), "--checks", "bbox"]) == 1
    import sys

    shown = sys.stderr.getvalue()
    assert shown.startswith("\r") and "\033[K" in shown and shown.endswith("\r\033[K")
    monkeypatch.undo()
    assert main(["check", str(root), "--checks", "bbox"]) == 1
    assert capsys.readouterr().err == ""


def test_label_key_override(tmp_path):
    root = _copy_doctor(tmp_path)
    by_text = run_check([str(root)], CheckOptions(checks=frozenset({"label_conflict"}),
                                                  label_key="image/object/class/text"))
    assert len(by_text.findings) == 1
    assert "bird, dog" in by_text.findings[0].detail and ": cat" in by_text.findings[0].detail
    no_images = run_check([str(root)], CheckOptions(checks=frozenset({"split_leak", "image_size"}),
                                                    image_key="no/such/key"))
    assert no_images.findings == []


def test_tfds_dataset_splits_and_images(tmp_path):
    """A TFDS folder: splits from its shard names, images and boxes from its feature spec."""
    from codec.sources.tfrecord_file import TFRecordFile

    source = next((FIXTURES / "payloads" / "tfds" / "lens_tfds_demo").glob("*/features.json")).parent
    folder = tmp_path / "tfds"
    shutil.copytree(source, folder)
    train = next(folder.glob("*-train.tfrecord-*"))
    test = next(folder.glob("*-test.tfrecord-*"))
    with TFRecordFile(str(train)) as f, TFRecordFile(str(test)) as g:
        leaked = f.build_index()[0]
        kept = list(g.build_index())
    write_records(str(test), kept + [leaked])
    report = run_check([str(folder)], CheckOptions(checks=frozenset({"split_leak", "bbox", "image_decode"})))
    assert [(f.check, f.severity, sorted(split_of(r.path) for r in f.records))
            for f in report.findings] == [("split_leak", "error", ["test", "train"])]
    assert "identical pixels" in report.findings[0].detail


def test_digest_groups_tell_apart_digests_that_share_a_prefix():
    from codec.doctor.grouping import _groups

    rng = np.random.default_rng(5)
    digests = rng.integers(0, 256, size=(500, 16), dtype=np.uint8)
    digests[7] = digests[3]
    digests[40] = digests[41] = digests[3]
    digests[100] = digests[200]
    digests[201] = digests[200]
    digests[201, 15] ^= 1  # the same first 8 bytes, another digest
    mask = np.ones(500, dtype=bool)
    assert sorted(g.tolist() for g in _groups(digests, mask)) == [[3, 7, 40, 41], [100, 200]]
    mask[[7, 40, 41]] = False
    assert [g.tolist() for g in _groups(digests, mask)] == [[100, 200]]


def _near_store() -> Store:
    """Three records: two in train, one in eval (a near-duplicate group is drawn over their rows)."""
    store = Store(["train.tfrecord", "eval.tfrecord"], ["train", "eval"])
    store.set_rows(np.array([0, 0, 1]), np.array([3, 4, 5]), np.zeros(3, np.uint64),
                   np.zeros((3, 16), np.uint8), {})
    return store


def test_near_duplicates_across_splits_are_listed_once_and_the_phash_reads_plainly():
    store = _near_store()
    across = store.near_group(np.array([0, 2]), 2, 0)
    assert [(f.check, f.severity) for f in across] == [("near_duplicate", "warning")]
    assert across[0].detail.startswith("2 similar images in 2 records (identical pHash)")
    assert across[0].detail.endswith("; in eval (1) and train (1): a leak between splits")
    within = store.near_group(np.array([0, 1]), 2, 3)
    assert [f.check for f in within] == ["near_duplicate"]
    assert within[0].detail.startswith("2 similar images in 2 records (pHash within 3 bits)")
    assert "pHash within 1 bit)" in store.near_group(np.array([0, 1]), 2, 1)[0].detail
    assert "leak" not in within[0].detail
    # without the near-duplicate check, a pair across splits is still reported, as a leak; one split: nothing
    leak = store.near_group(np.array([0, 2]), 2, 2, near=False)
    assert [(f.check, f.detail) for f in leak] == [
        ("split_leak", "near-duplicate images (pHash within 2 bits) in eval (1) and train (1)")]
    assert store.near_group(np.array([0, 1]), 2, 2, near=False) == []


def test_the_shared_datasets_near_duplicates_across_splits_are_listed_once_as_near_duplicates():
    findings = run_check([str(DOCTOR)], CheckOptions(workers=1)).findings
    near = [f for f in findings if f.check == "near_duplicate"]
    across = [f for f in near if len({split_of(r.path) for r in f.records}) > 1]
    assert len(across) >= 2 and all(f.detail.endswith(": a leak between splits") for f in across)
    assert not any(f.check == "split_leak" and f.detail.startswith("near-duplicate images") for f in findings)
    assert not any("within 0 bits" in f.detail for f in findings)
