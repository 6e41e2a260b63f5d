"""The dataset doctor against planted problems: the shared detection dataset (TensorFlow-written, with its
MANIFEST.json) and datasets built the same way here with other images and other positions.

The property: every planted problem is found (a finding of its check naming at least its records), and
no error finding names nothing planted (an error of that check sharing a record with a planted one).
"""
from __future__ import annotations

import io
import json
import os
import random
import shutil

import pytest
from PIL import Image, ImageDraw

from codec.cli.main import main
from codec.decode.example_proto import Example
from codec.doctor import CheckOptions, run_check
from codec.storage.writer import write_records
from tests.builders import FIXTURES

DOCTOR = FIXTURES / "doctor"
LABELS = {1: "cat", 2: "dog", 3: "bird"}


def planted_problems(root) -> list[dict]:
    return json.loads((root / "MANIFEST.json").read_text())["planted"]


def _key(path: str, index: int) -> tuple[str, int]:
    return os.path.basename(path), index


def assert_property(findings: list[dict], planted: list[dict]) -> None:
    """``findings`` as in the JSON report; ``planted`` as in MANIFEST.json."""
    found = [(f["check"], f["severity"], {_key(r["path"], r["index"]) for r in f["records"]}) for f in findings]
    for p in planted:
        want = {_key(r["path"], r["index"]) for r in p["records"]}
        assert any(check == p["check"] and want <= records for check, _, records in found), p
    for check, severity, records in found:
        if severity == "error":
            assert any(check == p["check"] and records & {_key(r["path"], r["index"]) for r in p["records"]}
                       for p in planted), (check, records)


def test_shared_dataset_cli_json(tmp_path, capsys):
    root = tmp_path / "doctor"
    shutil.copytree(DOCTOR, root)
    code = main(["check", str(root), "--json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert out.count("\n") == 1 and set(report) == {"records", "findings"}
    assert report["records"] == 150
    assert code == 1
    assert_property(report["findings"], planted_problems(root))
    for f in report["findings"]:
        assert set(f) == {"check", "severity", "records", "detail"} and f["severity"] in ("error", "warning")
        assert all(set(r) == {"path", "index"} for r in f["records"])


# ------------------------------------------------------------ a dataset built the same way


def _picture(rng: random.Random, side: int = 64) -> Image.Image:
    image = Image.new("RGB", (side, side), tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(3, 6)):
        x0, y0 = rng.randrange(side - 8), rng.randrange(side - 8)
        x1, y1 = rng.randint(x0 + 4, side), rng.randint(y0 + 4, side)
        draw.rectangle((x0, y0, x1, y1), fill=tuple(rng.randrange(256) for _ in range(3)))
    return image


def _encode(image: Image.Image, fmt: str = "JPEG", quality: int = 90) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    return out.getvalue()


def _boxes(rng: random.Random, n: int) -> list[list[float]]:
    boxes = []
    for _ in range(n):
        x0, y0 = rng.uniform(0, 0.5), rng.uniform(0, 0.5)
        boxes.append([x0, y0, rng.uniform(x0 + 0.05, 1.0), rng.uniform(y0 + 0.05, 1.0)])
    return boxes


def od_example(encoded: bytes, width: int, height: int, boxes: list[list[float]], labels: list[int], *,
               fmt: bytes = b"jpeg", texts: list[bytes] | None = None, drop: tuple[str, ...] = ()) -> bytes:
    """An Object Detection API tf.train.Example."""
    ex = Example()
    feature = ex.features.feature
    feature["image/encoded"].bytes_list.value.append(encoded)
    feature["image/format"].bytes_list.value.append(fmt)
    feature["image/width"].int64_list.value.append(width)
    feature["image/height"].int64_list.value.append(height)
    for n, side in enumerate(("xmin", "ymin", "xmax", "ymax")):
        feature[f"image/object/bbox/{side}"].float_list.value.extend(b[n] for b in boxes)
    feature["image/object/class/label"].int64_list.value.extend(labels)
    names = texts if texts is not None else [LABELS.get(i, "?").encode() for i in labels]
    feature["image/object/class/text"].bytes_list.value.extend(names)
    for key in drop:
        del feature[key]
    return ex.SerializeToString()


def build_dataset(root, seed: int) -> list[dict]:
    """Three train shards and one eval shard with the 16 kinds of planted problems at random places;
    writes MANIFEST.json and label_map.pbtxt beside them and returns the planted list."""
    rng = random.Random(seed)
    names = [f"train-0000{k}-of-00003.tfrecord" for k in range(3)] + ["eval-00000-of-00001.tfrecord"]
    sizes = [rng.randint(34, 40) for _ in range(3)] + [rng.randint(28, 32)]
    shards: list[list] = []
    for size in sizes:
        recs = []
        for _ in range(size):
            labels = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
            recs.append({"image": _picture(rng), "boxes": _boxes(rng, len(labels)), "labels": labels})
        shards.append(recs)
    free = {(s, i) for s, size in enumerate(sizes) for i in range(size)}

    def take(shard: int | None = None) -> tuple[int, int]:
        pick = rng.choice(sorted(p for p in free if shard is None and p[0] < 3 or p[0] == shard))
        free.discard(pick)
        return pick

    raw: dict[tuple[int, int], bytes] = {}
    planted = []

    def plant(check: str, *where: tuple[int, int]) -> None:
        planted.append({"check": check, "records": [{"path": names[s], "index": i} for s, i in where]})

    a, b = take(), take()
    raw[b] = "copy", a
    plant("exact_duplicate", a, b)
    a, b = take(), take()
    shards[b[0]][b[1]].update(image=shards[a[0]][a[1]]["image"], labels=[(shards[a[0]][a[1]]["labels"][0] % 3) + 1])
    shards[b[0]][b[1]]["boxes"] = _boxes(rng, 1)
    plant("label_conflict", a, b)
    for _ in range(4):
        a, b = take(), take(3)
        rec = shards[a[0]][a[1]]
        shards[3][b[1]].update(image=rec["image"], labels=list(rec["labels"]), boxes=_boxes(rng, len(rec["labels"])))
        plant("split_leak", a, b)
    for variant in ("quality", "resize"):
        a, b = take(), take(3)
        shards[3][b[1]]["near"] = (a, variant)
        plant("near_duplicate", a, b)
    for kind in ("swapped", "outside", "unequal"):
        a = take()
        shards[a[0]][a[1]]["bad_boxes"] = kind
        plant("bbox", a)
    for check in ("image_decode", "image_format", "image_size", "unknown_label", "missing_feature"):
        a = take()
        shards[a[0]][a[1]]["plant"] = check
        plant(check, a)

    for s, recs in enumerate(shards):
        for i, rec in enumerate(recs):
            if (s, i) in raw:
                continue
            image, boxes, labels = rec["image"], rec["boxes"], rec["labels"]
            encoded, fmt, side = _encode(image), b"jpeg", 64
            if "near" in rec:
                (ns, ni), variant = rec["near"]
                original = shards[ns][ni]["image"]
                if variant == "quality":
                    image = Image.open(io.BytesIO(_encode(original))).convert("RGB")
                    encoded = _encode(image, quality=55)
                else:
                    encoded, side = _encode(original.resize((96, 96))), 96
            kw = {}
            bad = rec.get("bad_boxes")
            if bad == "swapped":
                boxes = [[0.7, 0.2, 0.3, 0.6]]
                labels = labels[:1]
            elif bad == "outside":
                boxes = [[0.1, 0.1, 0.4, 0.4], [0.5, 0.5, 1.6, 0.9]]
                labels = [labels[0], labels[0]]
            plant_kind = rec.get("plant")
            if plant_kind == "image_decode":
                encoded = encoded[:300]
            elif plant_kind == "image_format":
                encoded = _encode(image, "PNG")
            elif plant_kind == "image_size":
                encoded = _encode(image.resize((48, 48)))
            elif plant_kind == "unknown_label":
                labels, kw["texts"] = [7], [b"?"]
                boxes = boxes[:1]
            elif plant_kind == "missing_feature":
                kw["drop"] = ("image/object/class/label",)
            data = od_example(encoded, side, side, boxes, labels, fmt=fmt, **kw)
            if bad == "unequal":
                ex = Example.FromString(data)
                ex.features.feature["image/object/bbox/ymax"].float_list.value.append(0.9)
                data = ex.SerializeToString()
            raw[(s, i)] = data
    for (s, i), value in list(raw.items()):
        if isinstance(value, tuple):
            raw[(s, i)] = raw[value[1]]
    for s, name in enumerate(names):
        write_records(str(root / name), [raw[(s, i)] for i in range(sizes[s])])
    (root / "label_map.pbtxt").write_text("".join(f"item {{\n  id: {i}\n  name: '{n}'\n}}\n"
                                                  for i, n in LABELS.items()))
    (root / "MANIFEST.json").write_text(json.dumps({"shards": names, "planted": planted}, indent=1))
    return planted


@pytest.mark.parametrize("seed", [7, 2024])
def test_generated_dataset(tmp_path, seed):
    planted = build_dataset(tmp_path, seed)
    assert len(planted) == 16
    report = run_check([str(tmp_path)], CheckOptions(workers=1))
    from codec.sources.shard_set import ShardSet

    with ShardSet(sorted(str(p) for p in tmp_path.glob("*.tfrecord"))) as shards:
        assert report.records == len(shards.build_index())
    assert report.exit_code == 1
    assert_property(report.to_json()["findings"], planted)
