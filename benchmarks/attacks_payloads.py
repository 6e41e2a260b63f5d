"""Hostile payloads against the command line, as whole processes: tensors, images, protos, label maps, CSV.

Reruns the payload attacks of issue 24 at the issue's own scale and prints one
line per command: what came back (exit code, stderr's last line, wall and CPU
time, peak memory of the child) and PASS/FAIL against the bar: exit 0/1/2, at
most one line on stderr and no traceback, no signal, within the CPU time and
memory bars (the attack's own), and what the attack must show (a raw line with
a note, a neutralised CSV cell...).

    .venv/bin/python benchmarks/attacks_payloads.py

The builders (``*_file``, ``*_dataset``) take a scale, so that
tests/codec/test_hostile_payloads.py makes the same inputs small.
"""
from __future__ import annotations

import json
import os
import resource
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.attacks import one_line, report, run, run_attacks  # noqa: E402
from codec.decode.example_proto import Example  # noqa: E402
from codec.decode.tensors import DATA_TYPES, TensorProto  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402

IMAGE_PREFIX = "tensorflow_datasets.core.features."


# ---------------------------------------------------------------- builders


def tensor_bytes(dtype: str, shape: list[int], **fields) -> bytes:
    """A serialized TensorProto as ``tf.io.serialize_tensor`` lays it out, with the given repeated fields."""
    proto = TensorProto(dtype=DATA_TYPES[dtype])
    proto.tensor_shape.SetInParent()
    for size in shape:
        proto.tensor_shape.dim.add(size=size)
    for name, values in fields.items():
        getattr(proto, name).extend(values)
    return proto.SerializeToString()


def splat_file(folder: str, elements: int = 1 << 24, length: int = 1024) -> str:
    """Attack 3: one DT_STRING tensor of ``elements`` elements holding a single ``length``-byte string_val."""
    path = os.path.join(folder, "splat.tfrecord")
    write_records(path, [tensor_bytes("DT_STRING", [elements], string_val=[b"s" * length])])
    return path


def zero_dims_file(folder: str) -> str:
    """Attack 4: a 22-byte tensor of shape [2^31, 2^31, 0], then an ordinary one that must still be read."""
    path = os.path.join(folder, "zero-dims.tfrecord")
    write_records(path, [tensor_bytes("DT_FLOAT", [1 << 31, 1 << 31, 0]),
                         tensor_bytes("DT_FLOAT", [2], float_val=[1.5, 2.5])])
    return path


def png_chunk(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk: length, type, body, CRC."""
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bytes(width: int, height: int, colour: int = 2, depth: int = 8, row_filter: int = 0,
              pattern: bytes = b"") -> bytes:
    """A PNG of ``colour`` type and bit ``depth`` whose every row is ``row_filter`` then ``pattern`` repeated
    (zeros when empty), compressed a row at a time so that a 13000x13000 image is made in a few MB."""
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    row_bytes = width * channels * depth // 8
    body = (pattern * (row_bytes // len(pattern) + 1))[:row_bytes] if pattern else bytes(row_bytes)
    row = bytes([row_filter]) + body
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


def _example(features: dict[str, list[bytes]]) -> bytes:
    example = Example()
    for key, values in features.items():
        example.features.feature[key].bytes_list.value.extend(values)
    return example.SerializeToString()


def image_dataset(folder: str, name: str, png: bytes, dtype: str, channels: int) -> str:
    """A TFDS dataset folder of one record whose Image feature (``dtype``, ``channels``) holds ``png``."""
    root = os.path.join(folder, name, "1.0.0")
    os.makedirs(root)
    spec = {"pythonClassName": IMAGE_PREFIX + "features_dict.FeaturesDict", "featuresDict": {"features": {
        "image": {"pythonClassName": IMAGE_PREFIX + "image_feature.Image",
                  "image": {"dtype": dtype, "encodingFormat": "png",
                            "shape": {"dimensions": ["-1", "-1", str(channels)]}}}}}}
    with open(os.path.join(root, "features.json"), "w") as f:
        json.dump(spec, f)
    info = {"name": name, "version": "1.0.0", "fileFormat": "tfrecord", "splits": [{
        "name": "train", "shardLengths": ["1"], "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"}]}
    with open(os.path.join(root, "dataset_info.json"), "w") as f:
        json.dump(info, f)
    write_records(os.path.join(root, f"{name}-train.tfrecord-00000-of-00001"), [_example({"image": [png]})])
    return root


def image_bomb_dataset(folder: str, side: int = 13000) -> str:
    """Attack 5: an all-zero ``side``×``side`` RGB PNG (493 KB at 13000) in a dataset whose spec asks for grey."""
    return image_dataset(folder, "bomb", png_bytes(side, side), "uint8", 1)


def png16_dataset(folder: str, side: int = 6600) -> str:
    """Attack 6: a 16-bit RGB PNG of ``side``×``side``, every row Paeth-filtered, in a uint16 RGB Image."""
    return image_dataset(folder, "deep", png_bytes(side, side, 2, 16, 4, bytes(range(7, 256, 3))), "uint16", 3)


def nested_proto(folder: str, depth: int = 650) -> str:
    """Attack 11: a .proto whose message M0 holds M1, which holds M2... ``depth`` types deep."""
    path = os.path.join(folder, "chain.proto")
    lines = ['syntax = "proto3";', "package chain;"]
    lines += [f"message M{i} {{ M{i + 1} next = 1; int32 value = 2; }}" for i in range(depth)]
    lines.append(f"message M{depth} {{ int32 value = 1; }}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def label_map_json(folder: str, digits: int = 5000) -> str:
    """Attack 12: a JSON label map whose one item has an id of ``digits`` digits."""
    path = os.path.join(folder, "labels.json")
    with open(path, "w") as f:
        f.write('[{"id": %s, "name": "cat"}]' % ("9" * digits))
    return path


FORMULA = b'=HYPERLINK("http://evil","x")'


def formula_file(folder: str) -> str:
    """Attack 17: bytes features starting with =, +, -, @ (and a numeric feature of -3, which stays a number)."""
    path = os.path.join(folder, "formulas.tfrecord")
    example = Example()
    for key, value in (("link", FORMULA), ("plus", b"+1+1"), ("minus", b"-2+3"), ("at", b"@SUM(A1)")):
        example.features.feature[key].bytes_list.value.append(value)
    example.features.feature["count"].int64_list.value.append(-3)
    write_records(path, [example.SerializeToString()])
    return path


def nested_field_two(depth: int) -> bytes:
    """A record of field-2 messages nested ``depth`` deep: 12 len (12 len (... 12 00))."""
    data = b""
    for _ in range(depth):
        size, length = len(data), bytearray()
        while size >= 0x80:
            length.append(size & 0x7F | 0x80)
            size >>= 7
        data = b"\x12" + bytes(length) + bytes([size]) + data
    return data


def deep_file(folder: str, depth: int = 20_000) -> str:
    """Also seen: one record of nested field-2 messages ``depth`` deep, then an ordinary Example."""
    path = os.path.join(folder, "deep.tfrecord")
    write_records(path, [nested_field_two(depth), _example({"text": [b"after"]})])
    return path


# ---------------------------------------------------------------- the runs


def check(name: str, args: list, *, seconds: float, megabytes: float, expect=None, timeout: float = 300) -> None:
    """Run one command and report it against the bar (``seconds`` of CPU, ``megabytes`` of peak memory);
    ``expect(stdout, stderr)`` says what else must hold."""
    before = _children_cpu()
    code, out, err, secs, peak = run(args, timeout=timeout)
    cpu = _children_cpu() - before
    clean, line = one_line(err)
    lines = [ln for ln in err.decode(errors="replace").splitlines() if ln.strip()]
    ok = code in (0, 1, 2) and clean and len(lines) <= 1 and cpu <= seconds and peak <= megabytes
    problem = expect(out, err) if ok and expect else None
    detail = f"exit {code}, {secs:.1f} s ({cpu:.1f} s CPU), peak {peak:.0f} MB" + (f": {line[:100]}" if line else "")
    report(name, ok and problem is None, detail + (f" [{problem}]" if problem else ""))


def _children_cpu() -> float:
    """CPU seconds of the children reaped so far: the bar is CPU, as the machine may be shared."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _raw_with_note(out: bytes, err: bytes) -> str | None:
    first = json.loads(out.splitlines()[0])
    return None if first["kind"] == "raw" and first.get("note") else f"line 0 is {first['kind']}, note {first.get('note')}"


def _image_note(out: bytes, err: bytes) -> str | None:
    image = json.loads(out.splitlines()[0])["features"]["image"]
    return None if "not decoded" in image.get("note", "") else f"image is {str(image)[:80]}"


def _pixels(shape: list[int], dtype: str):
    def expect(out: bytes, err: bytes) -> str | None:
        image = json.loads(out.splitlines()[0])["features"]["image"]
        return None if image.get("shape") == shape and image.get("dtype") == dtype else f"image is {str(image)[:80]}"
    return expect


def attack_tensors(tmp: str) -> None:
    path = splat_file(tmp)
    check("string splat [2^24] of 1 KB: cat --json", ["cat", "--json", path], seconds=5, megabytes=200,
          expect=_raw_with_note)
    csv = os.path.join(tmp, "splat.csv")
    for cmd in (["export", path, "--format", "csv", "--to", csv], ["stats", path], ["check", path], ["info", path]):
        check(f"string splat [2^24] of 1 KB: {cmd[0]}", cmd, seconds=5, megabytes=200)
    path = zero_dims_file(tmp)
    check("shape [2^31, 2^31, 0]: cat --json", ["cat", "--json", path], seconds=5, megabytes=200,
          expect=_raw_with_note)
    for cmd in (["info", path], ["stats", path], ["check", path], ["export", path, "--format", "csv", "--to", csv]):
        check(f"shape [2^31, 2^31, 0]: {cmd[0]}", cmd, seconds=5, megabytes=200)


def attack_images(tmp: str) -> None:
    folder = image_bomb_dataset(tmp)
    check("13000x13000 RGB PNG bomb, grey spec: cat --json", ["cat", "--json", folder], seconds=5, megabytes=200,
          expect=_image_note)
    for cmd in ("stats", "check"):
        check(f"13000x13000 RGB PNG bomb, grey spec: {cmd}", [cmd, folder], seconds=5, megabytes=200)
    folder = png16_dataset(tmp)
    check("6600x6600 16-bit Paeth PNG: cat --json", ["cat", "--json", folder], seconds=15, megabytes=1000,
          expect=_pixels([6600, 6600, 3], "uint16"))


def attack_schemas(tmp: str, data: str) -> None:
    proto = nested_proto(tmp)
    for cmd in ("cat", "info"):
        check(f"chain of 650 nested message types: {cmd}", [cmd, "--proto", proto, "--type", "M0", data],
              seconds=5, megabytes=200, expect=lambda out, err: None if b"too deep" in err else "no 'too deep'")
    labels = label_map_json(tmp)
    check("label map id of 5,000 digits: info", ["info", "--label-map", labels, data], seconds=5, megabytes=200,
          expect=lambda out, err: None if b"labels.json" in err and b"item 1" in err else "file or entry not named")


def attack_csv(tmp: str) -> None:
    path = formula_file(tmp)
    out = os.path.join(tmp, "formulas.csv")

    def neutralised(stdout: bytes, err: bytes) -> str | None:
        import csv
        with open(out, newline="") as f:
            row = next(csv.DictReader(f))
        ok = row["link"] == "'" + FORMULA.decode() and row["at"].startswith("'@") and row["count"] == "-3"
        return None if ok else f"row {row}"
    check("CSV cells =HYPERLINK(...), +, -, @", ["export", path, "--format", "csv", "--to", out], seconds=5,
          megabytes=200, expect=neutralised)


def attack_deep(tmp: str) -> None:
    path = deep_file(tmp)

    def not_empty_sequence(out: bytes, err: bytes) -> str | None:
        first = json.loads(out.splitlines()[0])
        return None if first["kind"] != "sequence_example" else "still an empty sequence_example"
    check("field-2 messages 20,000 deep: cat --json", ["cat", "--json", path], seconds=5, megabytes=200,
          expect=not_empty_sequence)
    for cmd in ("stats", "check", "info"):
        check(f"field-2 messages 20,000 deep: {cmd}", [cmd, path], seconds=5, megabytes=200)


def main() -> int:
    def attack_all(tmp: str) -> None:
        attack_tensors(tmp)
        attack_csv(tmp)
        attack_schemas(tmp, formula_file(tmp))
        attack_deep(tmp)
        attack_images(tmp)

    return run_attacks("tfrlens-payload-attacks-", attack_all)


if __name__ == "__main__":
    sys.exit(main())
