"""Hostile payloads (issue 24): tensors, images, protos, label maps and CSV cells made to hurt.

Each attack is made by the builders of ``benchmarks/attacks_payloads.py`` (which
reruns them at the issue's full scale), here at a small but faithful scale. Where
the issue ran a whole process, so does the test, under a 1.5 GB address-space
limit: one line at most on stderr, no traceback, exit 0/1/2, nothing lost.
"""
from __future__ import annotations

import csv
import io
import json
import resource
import struct
import subprocess
import sys
import tracemalloc
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchmarks.attacks_payloads import (
    FORMULA,
    formula_file,
    image_dataset,
    label_map_json,
    nested_field_two,
    nested_proto,
    png16_dataset,
    png_chunk,
    splat_file,
    tensor_bytes,
    zero_dims_file,
)
from codec.cli.main import main
from codec.datasets.label_maps import load_label_map
from codec.datasets.tfds import TfdsDataset, decoded_image
from codec.datasets.tfds_features import FeatureSpec, decode_image_bytes
from codec.decode.decoder import RecordKind, decode_record
from codec.decode.example_proto import Example
from codec.decode.image_sniff import MAX_PIXELS, check_pixels, probe_image
from codec.decode.images import ImageRef, decode_image
from codec.decode.messages import MAX_DEPTH, load_message_type
from codec.decode.tensors import MAX_SPLAT, MAX_SPLAT_BYTES, decode_tensor, parse_tensor
from codec.errors import ImageTooLargeError, SchemaError, TensorLimitError
from codec.ops.export import export
from codec.sources.tfrecord_file import open_tfrecord
from codec.storage.writer import write_records

from .conftest import ROOT

MEMORY_LIMIT = 1536 << 20


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_process(*argv) -> tuple[int, bytes, str]:
    """``tfrlens-cli argv`` as its own process with 1.5 GB of address space: (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "codec.cli.main", *map(str, argv)], cwd=ROOT, capture_output=True,
                          preexec_fn=_limited, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr.decode(errors="replace")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def at_most_one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) <= 1 and "Traceback" not in err and "Warning" not in err, err
    return lines[0] if lines else ""


def json_lines(out) -> list[dict]:
    text = out.decode() if isinstance(out, bytes) else out
    return [json.loads(line) for line in text.splitlines()]


# ---------------------------------------------------------------- 3. a string tensor splat


@pytest.mark.parametrize("command", ["cat", "export"])
def test_a_string_splat_is_a_raw_record_with_a_note_as_a_whole_process(tmp_path, command):
    """The issue's own record: [2^24] strings from one 1 KB value (16 GB expanded): a MemoryError, a segfault."""
    path = splat_file(tmp_path)
    args = {"cat": ["cat", "--json", path],
            "export": ["export", path, "--format", "csv", "--to", tmp_path / "s.csv"]}[command]
    code, out, err = run_process(*args)
    assert code == 0, err
    at_most_one_line(err)
    if command == "cat":
        [line] = json_lines(out)
        assert line["kind"] == "raw" and "16,777,216 elements" in line["note"] and "bytes" in line["note"]
    else:
        assert (tmp_path / "s.csv").read_text() == "index\n0\n"


def test_a_string_splat_is_raw_in_stats_and_check(tmp_path, capsys):
    path = splat_file(tmp_path)
    code, out, err = run_cli(capsys, "stats", "--json", path)
    assert code == 0 and json.loads(out)["kinds"]["raw"] == 1
    code, out, err = run_cli(capsys, "check", path)
    assert code == 0 and "1 record: 0 errors" in out
    at_most_one_line(err)


def test_the_splat_cap_counts_bytes_and_elements():
    one_kb = b"k" * 1024
    fits = MAX_SPLAT_BYTES // 1024
    assert decode_tensor(tensor_bytes("DT_STRING", [fits], string_val=[one_kb])).shape == (fits,)
    with pytest.raises(TensorLimitError, match=f"{2 * fits:,} elements \\({2 * fits * 1024:,} bytes\\)"):
        parse_tensor(tensor_bytes("DT_STRING", [2 * fits], string_val=[one_kb]))
    assert decode_tensor(tensor_bytes("DT_UINT8", [MAX_SPLAT], int_val=[7])).sum() == 7 * MAX_SPLAT
    with pytest.raises(TensorLimitError, match="elements"):  # 1 MB + 1 bytes, but more elements than allowed
        parse_tensor(tensor_bytes("DT_UINT8", [MAX_SPLAT + 1], int_val=[7]))
    # numbers reach the byte cap with the element cap (16 bytes of complex128 a value), strings far before it
    assert decode_tensor(tensor_bytes("DT_COMPLEX128", [MAX_SPLAT], dcomplex_val=[1.0, 2.0]))[-1] == 1 + 2j
    # values all present are in the record already: no cap beyond the shape's
    values = [b"v%d" % i for i in range(2000)]
    assert decode_tensor(tensor_bytes("DT_STRING", [2000], string_val=values)).tolist() == values


# ---------------------------------------------------------------- 4. zero-size tensors with huge dims


def test_a_zero_size_shape_numpy_cannot_index_is_raw_and_the_file_stays_readable(tmp_path, capsys):
    path = zero_dims_file(tmp_path)
    with open_tfrecord(path) as f:
        f.build_index()
        first, second = decode_record(f.read(0).data), decode_record(f.read(1).data)
    assert first.kind is RecordKind.RAW and "[2147483648, 2147483648, 0]" in first.note
    assert second.kind is RecordKind.TENSOR
    for args in (["info", path], ["stats", path], ["check", path], ["cat", path],
                 ["export", path, "--format", "jsonl", "--to", tmp_path / "out.jsonl"]):
        code, out, err = run_cli(capsys, *args)
        assert code == 0, err
        at_most_one_line(err)
    lines = json_lines((tmp_path / "out.jsonl").read_text())
    assert [line["kind"] for line in lines] == ["raw", "tensor"] and lines[1]["value"]["values"] == [1.5, 2.5]


@pytest.mark.parametrize("shape", [[1 << 40, 0], [0, 1 << 40, 3], [5, 0, 7]])
def test_a_zero_size_shape_numpy_can_hold_is_an_empty_array_of_it(shape):
    array = decode_tensor(tensor_bytes("DT_FLOAT", shape))
    assert array.shape == tuple(shape) and array.size == 0


# ---------------------------------------------------------------- 5. image bombs


def _claimed_png(width: int, height: int, depth: int = 8) -> bytes:
    """An RGB PNG whose header claims width x height, with one row of data: only the header is ever read."""
    header = struct.pack(">IIBBBBB", width, height, depth, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
            + png_chunk(b"IDAT", zlib.compress(bytes(width * 3 * depth // 8 + 1))) + png_chunk(b"IEND", b""))


def test_an_image_bomb_in_a_tfds_dataset_is_not_decoded_and_says_so(tmp_path, capsys):
    folder = image_dataset(tmp_path, "bomb", _claimed_png(13000, 13000), "uint8", 1)
    code, out, err = run_process("cat", "--json", folder)  # a whole process: Pillow's warning went to stderr
    assert code == 0, err
    at_most_one_line(err)
    image = json_lines(out)[0]["features"]["image"]
    assert "13000x13000 image not decoded" in image["note"] and "64 Mpixel" in image["note"]
    code, out, err = run_cli(capsys, "stats", "--json", folder)
    assert code == 0 and at_most_one_line(err) == ""
    code, out, err = run_cli(capsys, "check", folder)
    assert code == 0 and "image: PNG 13000x13000: too large to decode here" in out


def test_the_cap_sits_at_64_mpixel():
    check_pixels(8192, 8192)
    with pytest.raises(ImageTooLargeError, match="8192x8193 image not decoded: more than the 64 Mpixel"):
        check_pixels(8192, 8193)
    assert MAX_PIXELS == 8192 * 8192


@pytest.mark.parametrize("side", [9500, 13400])  # past Pillow's warning (89 Mpixel), past its error (179 Mpixel)
def test_pillows_bomb_limits_are_our_cap_and_never_a_warning(side):
    data = _claimed_png(side, side)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning would fail the test
        with pytest.raises(ImageTooLargeError, match="not decoded"):
            decode_image(ImageRef("image/encoded", 0, None, "encoded", "PNG", side, side, 3, data))
        spec = FeatureSpec("image", "Image", dtype="uint8", shape=(None, None, 1))
        with pytest.raises(ValueError, match="not decoded"):
            decode_image_bytes(data, spec)
        info = probe_image(data)
    assert info is None or (info.width, info.height) == (side, side)


def test_rgb_to_grey_is_exact_and_never_a_float_copy_of_the_whole_image():
    """~1 s: the image must be large (3.8 Mpixel) for a whole-image float64 copy to stand out from the rest."""
    rgb = np.random.default_rng(5).integers(0, 256, (2000, 1900, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, "PNG", compress_level=0)
    spec = FeatureSpec("image", "Image", dtype="uint8", shape=(None, None, 1))
    tracemalloc.start()
    try:
        grey = decode_image_bytes(buffer.getvalue(), spec)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = np.rint(rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)
    assert np.array_equal(grey[..., 0], expected)
    whole_float = rgb.size * 8  # 91 MB: what one float64 copy of the image would take
    assert peak < whole_float // 2, f"{peak:,} bytes traced"  # the old way peaked over 120 MB


# ---------------------------------------------------------------- 6. 16-bit PNGs


def _png16(pixels: np.ndarray, interlaced: bool = False) -> bytes:
    """A 16-bit PNG of HxWxC (C 1-4) uint16 pixels, rows unfiltered, Adam7-interlaced if asked."""
    height, width, channels = pixels.shape
    passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)] \
        if interlaced else [(0, 0, 1, 1)]
    raw = b""
    for top, left, dy, dx in passes:
        part = pixels[top::dy, left::dx]
        if part.size:
            raw += b"".join(b"\x00" + row.astype(">u2").tobytes() for row in part)
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    header = struct.pack(">IIBBBBB", width, height, 16, colour, 0, 0, int(interlaced))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", zlib.compress(raw))
            + png_chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [2, 3, 4])
@pytest.mark.parametrize("interlaced", [False, True])
def test_sixteen_bit_pngs_keep_every_bit(channels, interlaced):
    pixels = np.random.default_rng(channels).integers(0, 65536, (19, 13, channels), dtype=np.uint16)
    spec = FeatureSpec("image", "Image", dtype="uint16", shape=(None, None, channels))
    assert np.array_equal(decode_image_bytes(_png16(pixels, interlaced), spec), pixels)


def test_a_paeth_filtered_sixteen_bit_png_decodes_exactly(tmp_path):
    """Every row Paeth-filtered (the issue's 6600x6600 file, here 100x100): TFDS's uint16 values."""
    side = 100
    root = png16_dataset(tmp_path, side)
    dataset = TfdsDataset.open(root)
    [shard] = dataset.splits["train"].files
    with open_tfrecord(shard) as f:
        decoded = dataset.payload().decode(f.read(0).data)
    got = decoded_image(decoded, "image")
    pattern = bytes(range(7, 256, 3))
    row_bytes = side * 6
    residual = np.frombuffer((pattern * (row_bytes // len(pattern) + 1))[:row_bytes], np.uint8).astype(np.int64)
    expected = np.zeros((side, row_bytes), np.int64)  # Paeth unfiltering (PNG spec 9.4), 6 bytes a pixel
    for y in range(side):
        up = expected[y - 1] if y else np.zeros(row_bytes, np.int64)
        for x in range(row_bytes):
            a = expected[y, x - 6] if x >= 6 else 0
            c = up[x - 6] if x >= 6 else 0
            p = a + up[x] - c
            pa, pb, pc = abs(p - a), abs(p - up[x]), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (up[x] if pb <= pc else c)
            expected[y, x] = (residual[x] + predictor) % 256
    assert np.array_equal(got, expected.astype(np.uint8).view(">u2").reshape(side, side, 3).astype(np.uint16))


def test_a_broken_sixteen_bit_png_is_a_note(tmp_path):
    pixels = np.zeros((8, 8, 3), np.uint16)
    data = _png16(pixels)
    truncated = data[:data.index(b"IDAT") + 12] + png_chunk(b"IEND", b"")
    spec = FeatureSpec("image", "Image", dtype="uint16", shape=(None, None, 3))
    with pytest.raises(ValueError, match="does not decode"):
        decode_image_bytes(truncated, spec)
    with pytest.raises(ValueError, match="9000x9000 image not decoded"):
        decode_image_bytes(_claimed_png(9000, 9000, 16), spec)


# ---------------------------------------------------------------- 11. deep message types


def test_a_chain_of_650_message_types_is_one_line_exit_2(tmp_path):
    pytest.importorskip("grpc_tools")
    data = formula_file(tmp_path)
    code, _, err = run_process("cat", "--proto", nested_proto(tmp_path), "--type", "M0", data)
    assert code == 2
    line = at_most_one_line(err)
    assert "message nesting too deep in chain.proto" in line and "chain.M0" in line


def _chain_set(tmp_path: Path, depth: int) -> Path:
    """A descriptor set (no protoc needed) of M0 -> M1 -> ... -> M{depth}, through message fields."""
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet()
    file = files.file.add(name="chain.proto", package="chain", syntax="proto3")
    for i in range(depth + 1):
        message = file.message_type.add(name=f"M{i}")
        if i < depth:
            message.field.add(name="next", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, type_name=f".chain.M{i + 1}")
    path = tmp_path / f"chain{depth}.desc"
    path.write_bytes(files.SerializeToString())
    return path


def test_type_chains_are_limited_to_protobufs_own_nesting(tmp_path):
    assert load_message_type(_chain_set(tmp_path, MAX_DEPTH - 1), "M0").name == "chain.M0"
    with pytest.raises(SchemaError, match=f"chain of {MAX_DEPTH + 1} message types"):
        load_message_type(_chain_set(tmp_path, 700), "M0")
    assert load_message_type(_chain_set(tmp_path, 700), "M650").name == "chain.M650"  # 50 deep from there


def test_a_record_nested_past_protobufs_limit_is_raw_with_a_note(tmp_path):
    path = tmp_path / "rec.desc"
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet()
    message = files.file.add(name="rec.proto", package="rec", syntax="proto3").message_type.add(name="R")
    message.field.add(name="child", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, type_name=".rec.R")
    path.write_bytes(files.SerializeToString())
    decoder = load_message_type(path, "R")
    assert decoder.decode(nested_field_two(50)).kind is RecordKind.MESSAGE
    deep = decoder.decode(nested_field_two(20_000))
    assert deep.kind is RecordKind.RAW and "nested deeper than 100" in deep.note


# ---------------------------------------------------------------- 12. label maps


def test_a_label_id_of_5000_digits_is_one_line_naming_the_file_and_entry(tmp_path):
    path = label_map_json(tmp_path)
    with pytest.raises(SchemaError) as caught:
        load_label_map(path)
    message = str(caught.value)
    assert str(path) in message and "item 1" in message and "5,000 digits" in message and len(message) < 200
    code, _, err = run_process("info", "--label-map", path, formula_file(tmp_path))
    assert code == 2 and "item 1" in at_most_one_line(err)


@pytest.mark.parametrize("name, text, entry", [
    ("key.json", '{"%s": "cat"}' % ("9" * 5000), "key '99999"),
    ("int64.json", '{"9223372036854775808": "cat"}', "key '9223372036854775808'"),
    ("list.json", '[{"id": -%s, "name": "cat"}]' % ("1" * 30), "item 1"),
    ("map.pbtxt", 'item {\n  id: %s\n  name: "cat"\n}\n' % ("9" * 5000), "line 2"),
])
def test_ids_out_of_int64_are_refused_in_every_form(tmp_path, name, text, entry):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SchemaError) as caught:
        load_label_map(path)
    assert entry in str(caught.value) and len(str(caught.value)) < 300


def test_ids_at_the_ends_of_int64_are_kept(tmp_path):
    path = tmp_path / "ends.json"
    path.write_text('{"-9223372036854775808": "low", "9223372036854775807": "high"}')
    assert load_label_map(path).names == {-(1 << 63): "low", (1 << 63) - 1: "high"}


# ---------------------------------------------------------------- also seen: field-2 messages 20,000 deep


def test_deep_field_two_messages_are_not_an_empty_sequence_example_in_any_command(tmp_path, capsys):
    path = tmp_path / "deep.tfrecord"
    write_records(path, [nested_field_two(20_000), b"\x12\x00", b"\x0a\x04\x12\x02\x08\x01", b""])
    decoded = decode_record(nested_field_two(20_000))
    assert decoded.kind is RecordKind.PROTOBUF and "all 74,453 of its bytes" in decoded.note
    code, out, _ = run_cli(capsys, "cat", "--json", path)
    assert [line["kind"] for line in json_lines(out)] == ["protobuf", "sequence_example", "protobuf", "example"]
    code, out, _ = run_cli(capsys, "stats", "--json", path)
    assert '"sequence_example": 1' in out and '"protobuf": 2' in out and '"example": 1' in out
    code, out, _ = run_cli(capsys, "info", path)
    assert "protobuf 2" in out and "sequence_example 1" in out and "example 1" in out


# ---------------------------------------------------------------- 17. CSV formula injection


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_csv_cells_that_start_a_formula_are_neutralised(tmp_path, capsys):
    path = formula_file(tmp_path)
    code, _, err = run_cli(capsys, "export", path, "--format", "csv", "--to", tmp_path / "out.csv")
    assert code == 0 and "4 cell(s) starting with =, +, -, @" in at_most_one_line(err)
    [row] = _rows(tmp_path / "out.csv")
    assert row == {"index": "0", "at": "'@SUM(A1)", "count": "-3", "link": "'" + FORMULA.decode(),
                   "minus": "'-2+3", "plus": "'+1+1"}
    code, _, err = run_cli(capsys, "export", path, "--format", "csv", "--to", tmp_path / "kept.csv",
                           "--csv-formulas", "keep")
    assert code == 0 and "formulas" not in err
    [row] = _rows(tmp_path / "kept.csv")
    assert row["link"] == FORMULA.decode() and row["plus"] == "+1+1" and row["count"] == "-3"


def test_csv_keys_tabs_returns_and_negative_numbers(tmp_path):
    example = Example()
    example.features.feature["=key"].bytes_list.value.append(b"\tindented")
    example.features.feature["cr"].bytes_list.value.append(b"\rx")
    example.features.feature["negative"].float_list.value.append(-0.5)
    example.features.feature["list"].bytes_list.value.extend([b"=a", b"=b"])  # a JSON array starts with [
    example.features.feature["plain"].bytes_list.value.append(b"a=b")
    path = tmp_path / "keys.tfrecord"
    write_records(path, [example.SerializeToString()])
    with open_tfrecord(path) as f:
        report = export(f, str(tmp_path / "out.csv"), "csv")
    assert any("3 cell(s)" in note for note in report.notes)
    with open(tmp_path / "out.csv", newline="") as f:
        header, row = list(csv.reader(f))
    cells = dict(zip(header, row))
    assert cells == {"index": "0", "'=key": "'\tindented", "cr": "'\rx", "list": '["=a", "=b"]', "negative": "-0.5",
                     "plain": "a=b"}


def test_csv_formulas_takes_escape_or_keep_only(tmp_path):
    with open_tfrecord(formula_file(tmp_path)) as f, pytest.raises(ValueError, match="csv_formulas"):
        export(f, str(tmp_path / "out.csv"), "csv", csv_formulas="off")
