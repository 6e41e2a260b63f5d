"""The user's own protobuf messages, loaded from a descriptor set or a .proto and decoded per record.

frames.tfrecord, frames.proto and frames.desc were written by the reference
tools; MANIFEST.json holds ``json_format.MessageToDict`` of every record.
sensors.proto (proto2) is compiled here by protoc through the module's own
loader, and its messages are built with the class that loader returns, so
every view is compared with values set by hand or with protobuf's own JSON.
"""
from __future__ import annotations

import json
import os
import random
import shutil

import pytest
from google.protobuf import descriptor_pb2, json_format

from codec.decode.decoder import RecordKind
from codec.decode.messages import (
    MessageType,
    load_message_type,
    message_fields,
    message_json,
    message_tree,
    message_types,
)
from codec.errors import PayloadDecodeError, SchemaError
from codec.sources.tfrecord_file import open_tfrecord
from tests.builders import FIXTURES

MESSAGES = FIXTURES / "payloads" / "messages"
FRAMES = json.loads((FIXTURES / "payloads" / "MANIFEST.json").read_text())["frames.tfrecord"]


def frame_records() -> list[bytes]:
    with open_tfrecord(MESSAGES / "frames.tfrecord") as f:
        f.build_index()
        return [f.read(i).data for i in range(len(f))]


@pytest.fixture(scope="module")
def records() -> list[bytes]:
    return frame_records()


@pytest.fixture(scope="module")
def sensors() -> MessageType:
    return load_message_type(MESSAGES / "sensors.proto", "lens.test.SensorLog")


@pytest.fixture(scope="module")
def frames() -> MessageType:
    return load_message_type(MESSAGES / "frames.desc", "lens.demo.Frame")


def tree_index(node) -> dict:
    """Every node of a tree by its path."""
    found = {node.path: node}
    for child in node.children:
        found.update(tree_index(child))
    return found


def full_log(cls):
    """A SensorLog with every kind of field set, maps filled out of key order."""
    log = cls(log_id=2**64 - 3, device_id=2**53 + 1, offset=-(2**62) - 7, site="roof")
    log.samples.extend([0, -5, 2**31 - 1])
    log.gains.extend([0.5, -1.25])
    log.steps.extend([-1, -2**31, 7])
    log.flags.extend([True, False, True])
    log.main.value = 21.5
    log.main.unit = log.main.CELSIUS
    log.main.deltas.extend([-(2**62), 3])
    log.readings.add(value=1.0).deltas.append(-9)
    log.readings.add(unit=log.main.UNIT_UNKNOWN)
    for key in (100, 9, -3, 10):
        log.channel_names[key] = f"ch{key}"
    log.by_name["zeta"].value = 2.0
    log.by_name["alpha"].unit = log.main.KELVIN
    log.text = "chosen"
    log.period.FromJsonString("1.500s")
    log.limit.value = -(2**60)
    log.extra.update({"z": 1, "a": {"y": [1, "two"], "b": True}})
    packed = log.readings[0].__class__(value=3.25, unit=log.main.KELVIN)
    log.attachment.Pack(packed)
    log.inner.deeper.code = 2**32 - 1
    log.inner.tags.extend(["x", "y"])
    log.stamps.extend([-(2**63), 2**63 - 1])
    log.toggles[True] = 1
    log.toggles[False] = -(2**40)
    log.laps.add(seconds=3)
    log.laps.add(seconds=-1, nanos=-500000000)
    return log


# ---------------------------------------------------------------- the reference file


@pytest.mark.parametrize("schema", ["frames.desc", "frames.proto"])
def test_every_frame_equals_the_reference_json(schema, records):
    frame = load_message_type(MESSAGES / schema, "lens.demo.Frame")
    assert len(records) == len(FRAMES["records"]) == 30
    for i, (data, expected) in enumerate(zip(records, FRAMES["records"])):
        decoded = frame.decode(data)
        assert decoded.kind is RecordKind.MESSAGE, i
        assert decoded.note is None, i
        assert decoded.data == data
        assert message_json(decoded.message) == expected["json"], i


def test_descriptor_set_and_source_give_the_same_types():
    from_desc = message_types(MESSAGES / "frames.desc")
    from_proto = message_types(MESSAGES / "frames.proto")
    assert from_desc == from_proto == ["lens.demo.Box", "lens.demo.Frame"]


def test_type_is_found_without_its_package(frames):
    short = load_message_type(MESSAGES / "frames.desc", "Frame")
    assert short.name == frames.name == "lens.demo.Frame"
    assert short.describe() == "lens.demo.Frame from frames.desc"
    assert os.fspath(short.path).endswith("frames.desc")
    assert load_message_type(MESSAGES / "frames.desc", ".lens.demo.Box").name == "lens.demo.Box"


def test_frame_fields_and_tree(frames, records):
    message = frames.decode(records[3]).message
    fields = message_fields(message)
    assert fields["image_id"] == ("bytes", [b"frame-0003"])
    assert fields["boxes.label"] == ("bytes", [b"person", b"person", b"car"])
    assert fields["boxes.xmin"][0] == "float" and len(fields["boxes.xmin"][1]) == 3
    assert fields["split"] == ("bytes", [message.Split.Name(message.split).encode()])
    assert fields["captured_at.seconds"] == ("int64", [message.captured_at.seconds])
    assert fields["scores.sharpness"] == ("float", [message.scores["sharpness"]])
    assert fields["deltas"] == ("int64", [-3, 3, -1])
    assert "simulator" not in fields and "camera" in fields  # the oneof's chosen member only

    tree = message_tree(message)
    assert (tree.name, tree.role, tree.path) == ("lens.demo.Frame", "message", ())
    assert [c.name for c in tree.children] == [
        "image_id", "timestamp_us", "boxes", "jpeg", "scores", "split", "camera", "captured_at", "deltas"]
    nodes = tree_index(tree)
    assert nodes[("captured_at",)].dtype == "timestamp"
    assert nodes[("captured_at",)].values == [FRAMES["records"][3]["json"]["capturedAt"]]
    assert nodes[("boxes",)].role == "repeated"
    assert [c.name for c in nodes[("boxes",)].children] == ["[0]", "[1]", "[2]"]
    assert nodes[("boxes", 2, "label")].values == ["car"]
    assert nodes[("split",)].dtype == "enum" and isinstance(nodes[("split",)].values[0], str)
    assert nodes[("deltas",)].dtype == "sint32" and nodes[("deltas",)].values == [-3, 3, -1]
    assert nodes[("jpeg",)].dtype == "bytes" and nodes[("jpeg",)].values == [message.jpeg]


# ---------------------------------------------------------------- a proto2 schema of our own


def test_proto2_round_trip_json(sensors):
    log = full_log(sensors.message_class)
    decoded = sensors.decode(log.SerializeToString())
    assert decoded.kind is RecordKind.MESSAGE and decoded.note is None
    expected = json_format.MessageToDict(log, descriptor_pool=sensors.pool)
    got = message_json(decoded.message)
    assert got == expected
    assert got["logId"] == str(2**64 - 3) and got["deviceId"] == str(2**53 + 1)
    assert got["attachment"]["@type"].endswith("lens.test.Reading")
    assert got["period"] == "1.500s"


def test_proto2_fields_hold_the_values_set(sensors):
    log = full_log(sensors.message_class)
    fields = message_fields(sensors.decode(log.SerializeToString()).message)
    assert fields["log_id"] == ("int64", [2**64 - 3])
    assert fields["device_id"] == ("int64", [2**53 + 1])
    assert fields["offset"] == ("int64", [-(2**62) - 7])
    assert fields["site"] == ("bytes", [b"roof"])
    assert fields["samples"] == ("int64", [0, -5, 2**31 - 1])
    assert fields["gains"] == ("float", [0.5, -1.25])
    assert fields["steps"] == ("int64", [-1, -2**31, 7])
    assert fields["flags"] == ("int64", [1, 0, 1])
    assert fields["main.unit"] == ("bytes", [b"CELSIUS"])
    assert fields["main.deltas"] == ("int64", [-(2**62), 3])
    assert fields["readings.value"] == ("float", [1.0])  # the second reading leaves value unset
    assert fields["readings.unit"] == ("bytes", [b"UNIT_UNKNOWN"])
    assert fields["readings.deltas"] == ("int64", [-9])
    assert [k for k in fields if k.startswith("channel_names.")] == [
        "channel_names.-3", "channel_names.9", "channel_names.10", "channel_names.100"]
    assert fields["channel_names.10"] == ("bytes", [b"ch10"])
    assert fields["by_name.zeta.value"] == ("float", [2.0])
    assert fields["text"] == ("bytes", [b"chosen"]) and "blob" not in fields
    assert fields["period.seconds"] == ("int64", [1]) and fields["period.nanos"] == ("int64", [500000000])
    assert fields["limit.value"] == ("int64", [-(2**60)])
    assert fields["inner.deeper.code"] == ("int64", [2**32 - 1])
    assert fields["inner.tags"] == ("bytes", [b"x", b"y"])
    assert fields["stamps"] == ("int64", [-(2**63), 2**63 - 1])
    assert fields["toggles.false"] == ("int64", [-(2**40)]) and fields["toggles.true"] == ("int64", [1])


def test_proto2_tree_shows_types_and_values(sensors):
    log = full_log(sensors.message_class)
    tree = message_tree(sensors.decode(log.SerializeToString()).message)
    assert tree.name == "lens.test.SensorLog"
    numbers = [sensors.descriptor.fields_by_name[c.name].number for c in tree.children]
    assert numbers == sorted(numbers)
    nodes = tree_index(tree)
    assert (nodes[("log_id",)].dtype, nodes[("log_id",)].values) == ("fixed64", [2**64 - 3])
    assert (nodes[("device_id",)].dtype, nodes[("device_id",)].values) == ("uint64", [2**53 + 1])
    assert (nodes[("steps",)].dtype, nodes[("steps",)].values) == ("sint32", [-1, -2**31, 7])
    assert (nodes[("flags",)].dtype, nodes[("flags",)].values) == ("bool", [True, False, True])
    assert (nodes[("site",)].dtype, nodes[("site",)].values) == ("string", ["roof"])
    assert (nodes[("main", "unit")].dtype, nodes[("main", "unit")].values) == ("enum", ["CELSIUS"])
    assert nodes[("main",)].role == "message"
    assert nodes[("readings",)].role == "repeated"
    assert nodes[("readings", 1, "unit")].values == ["UNIT_UNKNOWN"]
    channels = nodes[("channel_names",)]
    assert channels.role == "map" and [c.name for c in channels.children] == ["-3", "9", "10", "100"]
    assert nodes[("channel_names", 10)].values == ["ch10"]
    assert [c.name for c in nodes[("by_name",)].children] == ["alpha", "zeta"]
    assert nodes[("by_name", "alpha", "unit")].values == ["KELVIN"]
    assert "blob" not in [c.name for c in tree.children] and nodes[("text",)].values == ["chosen"]
    assert (nodes[("period",)].dtype, nodes[("period",)].values) == ("duration", ["1.500s"])
    assert (nodes[("laps",)].dtype, nodes[("laps",)].values) == ("duration", ["3s", "-1.500s"])
    assert (nodes[("limit",)].dtype, nodes[("limit",)].values) == ("int64", [-(2**60)])
    assert nodes[("extra",)].dtype == "json"
    assert json.loads(nodes[("extra",)].values[0]) == {"a": {"b": True, "y": [1, "two"]}, "z": 1}
    attachment = nodes[("attachment",)]
    assert attachment.dtype == "lens.test.Reading"
    assert nodes[("attachment", "value")].values == [3.25]
    assert nodes[("inner", "deeper", "code")].values == [2**32 - 1]
    assert [c.name for c in nodes[("toggles",)].children] == ["false", "true"]


def test_proto2_defaults_are_absent_until_set(sensors):
    minimal = sensors.message_class(log_id=1)
    decoded = sensors.decode(minimal.SerializeToString())
    assert decoded.message.offset == -1 and decoded.message.site == "lab"  # the schema's defaults still read
    assert message_json(decoded.message) == {"logId": "1"}
    assert message_fields(decoded.message) == {"log_id": ("int64", [1])}
    assert [c.name for c in message_tree(decoded.message).children] == ["log_id"]
    explicit = sensors.message_class(log_id=1, offset=-1, site="lab")  # set to the default: present in proto2
    fields = message_fields(sensors.decode(explicit.SerializeToString()).message)
    assert fields["offset"] == ("int64", [-1]) and fields["site"] == ("bytes", [b"lab"])


def test_oneof_shows_the_chosen_member_even_at_its_default(sensors):
    log = sensors.message_class(log_id=5, blob=b"")
    message = sensors.decode(log.SerializeToString()).message
    assert message_fields(message)["blob"] == ("bytes", [b""])
    assert message_json(message) == {"logId": "5", "blob": ""}


def test_map_order_does_not_depend_on_insertion(sensors):
    outputs = []
    for keys in ([3, 1, 2, 20], [20, 2, 1, 3], [1, 20, 3, 2]):
        log = sensors.message_class(log_id=1)
        for key in keys:
            log.channel_names[key] = str(key)
            log.by_name[f"k{key}"].value = key
        message = sensors.decode(log.SerializeToString()).message
        got = message_json(message)
        assert list(got["channelNames"]) == ["1", "2", "3", "20"]
        assert list(got["byName"]) == ["k1", "k2", "k20", "k3"]
        outputs.append((json.dumps(got), list(message_fields(message)),
                        [c.name for c in tree_index(message_tree(message))[("by_name",)].children]))
    assert outputs[0] == outputs[1] == outputs[2]


def test_struct_keys_are_sorted_at_every_depth(sensors):
    log = sensors.message_class(log_id=1)
    log.extra.update({"b": {"z": 1, "y": {"q": 1, "p": 2}}, "a": [{"n": 1, "m": 2}]})
    got = message_json(sensors.decode(log.SerializeToString()).message)["extra"]
    assert list(got) == ["a", "b"] and list(got["b"]) == ["y", "z"]
    assert list(got["b"]["y"]) == ["p", "q"] and list(got["a"][0]) == ["m", "n"]


def test_missing_required_field_is_noted(sensors):
    decoded = sensors.decode(sensors.message_class(device_id=3).SerializePartialToString())
    assert decoded.kind is RecordKind.MESSAGE
    assert decoded.note == "missing required field log_id"
    assert message_json(decoded.message) == {"deviceId": "3"}


def test_invalid_timestamp_has_no_json_but_still_a_tree(sensors):
    log = sensors.message_class(log_id=1)
    log.period.seconds = 10**12  # past what a Duration may hold
    message = sensors.decode(log.SerializeToString()).message
    with pytest.raises(PayloadDecodeError, match="no JSON form"):
        message_json(message)
    period = tree_index(message_tree(message))[("period",)]
    assert period.role == "message" and period.children[0].values == [10**12]


# ---------------------------------------------------------------- records that are not the type


def test_random_and_truncated_bytes_are_raw_with_a_note(frames, records):
    rng = random.Random(12)
    outcomes = set()
    for _ in range(400):
        data = rng.randbytes(rng.randrange(1, 64))
        decoded = frames.decode(data)
        outcomes.add(decoded.kind)
        if decoded.kind is RecordKind.RAW:
            assert decoded.note.startswith("not a lens.demo.Frame: ") and "\n" not in decoded.note
            assert decoded.message is None and decoded.data == data
    assert RecordKind.RAW in outcomes
    for cut in (1, 7, 40, len(records[2]) - 1):
        decoded = frames.decode(records[2][:cut])
        assert decoded.kind is RecordKind.RAW
        assert "truncated" in decoded.note or "past the end" in decoded.note


def test_bad_utf8_in_a_proto3_string_is_named(frames):
    decoded = frames.decode(b"\x0a\x02\xff\xfe")
    assert decoded.kind is RecordKind.RAW
    assert decoded.note == "not a lens.demo.Frame: field image_id is not valid UTF-8"


def test_deep_nesting_is_bounded(sensors):
    node = load_message_type(MESSAGES / "sensors.proto", "Node")

    def nested(depth: int) -> bytes:
        data = b"\x10\x07"
        for _ in range(depth):
            data = b"\x0a" + _varint(len(data)) + data
        return data

    shallow = node.decode(nested(50))
    assert shallow.kind is RecordKind.MESSAGE
    assert message_fields(shallow.message) == {"child." * 50 + "value": ("int64", [7])}
    hostile = node.decode(nested(5000))
    assert hostile.kind is RecordKind.RAW
    assert hostile.note == "not a lens.test.Node: nested deeper than 100 levels"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_unknown_fields_keep_the_message_with_a_note(frames, records):
    decoded = frames.decode(records[1] + b"\x58\x01\x62\x01z")  # fields 11 and 12: not in Frame
    assert decoded.kind is RecordKind.MESSAGE
    assert decoded.note == "2 unknown fields: the record may not be a lens.demo.Frame"
    assert message_json(decoded.message) == FRAMES["records"][1]["json"]
    nested = frames.message_class.FromString(records[1])
    nested.boxes[0].label = "bike"
    inner = nested.boxes[0].SerializeToString() + b"\x30\x05"  # field 6 inside a Box
    data = nested.SerializeToString() + b"\x1a" + _varint(len(inner)) + inner
    assert frames.decode(data).note == "1 unknown field: the record may not be a lens.demo.Frame"


def test_a_record_of_another_type_is_noted(frames, sensors):
    log = full_log(sensors.message_class).SerializeToString()
    decoded = frames.decode(log)
    assert decoded.note is not None  # parses or not, the user sees it is not a Frame
    assert decoded.kind is RecordKind.RAW or "unknown field" in decoded.note


# ---------------------------------------------------------------- schema files that cannot be used


def test_wrong_type_name_lists_the_types():
    with pytest.raises(SchemaError) as caught:
        load_message_type(MESSAGES / "sensors.proto", "lens.test.Missing")
    message = str(caught.value)
    assert "\n" not in message and "'lens.test.Missing'" in message
    for name in ("lens.test.Reading", "lens.test.SensorLog", "lens.test.SensorLog.Inner.Deeper",
                 "lens.test.Node"):
        assert name in message
    assert "Entry" not in message and "google.protobuf" not in message  # no map entries, no imports


def test_message_types_hold_nested_ones_and_no_imports():
    names = message_types(MESSAGES / "sensors.proto")
    assert names == ["lens.test.Reading", "lens.test.SensorLog", "lens.test.SensorLog.Inner",
                     "lens.test.SensorLog.Inner.Deeper", "lens.test.Node"]


def test_garbage_descriptor_set(tmp_path):
    garbage = tmp_path / "garbage.desc"
    garbage.write_bytes(random.Random(1).randbytes(300))
    with pytest.raises(SchemaError, match="garbage.desc is not a FileDescriptorSet") as caught:
        load_message_type(garbage, "Frame")
    assert "\n" not in str(caught.value)


def test_syntax_error_shows_protocs_own_message():
    with pytest.raises(SchemaError) as caught:
        message_types(MESSAGES / "broken.proto")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("broken.proto does not compile: ")
    assert "broken.proto:6:3: Expected \";\"." in message


def test_missing_files(tmp_path):
    with pytest.raises(SchemaError, match="cannot read schema .*nothing.desc") as caught:
        load_message_type(tmp_path / "nothing.desc", "Frame")
    assert "\n" not in str(caught.value)
    importer = tmp_path / "importer.proto"
    importer.write_text('syntax = "proto3";\nimport "absent.proto";\nmessage A { int32 a = 1; }\n')
    with pytest.raises(SchemaError, match="absent.proto") as caught:
        message_types(importer)
    assert "\n" not in str(caught.value)


def test_schema_is_sniffed_by_content_not_suffix(tmp_path):
    shutil.copy(MESSAGES / "frames.desc", tmp_path / "frames.bin")
    shutil.copy(MESSAGES / "frames.proto", tmp_path / "frames.txt")
    (tmp_path / "bom.proto").write_bytes(b"\xef\xbb\xbf" + (MESSAGES / "frames.proto").read_bytes())
    assert message_types(tmp_path / "frames.bin") == message_types(tmp_path / "frames.txt") == message_types(
        tmp_path / "bom.proto") == ["lens.demo.Box", "lens.demo.Frame"]
    (tmp_path / "binary.proto").write_bytes(b"\x00\x01\x02garbage")  # not a set: protoc has its say
    with pytest.raises(SchemaError, match="^binary.proto does not compile: "):
        message_types(tmp_path / "binary.proto")


def test_well_known_imports_missing_from_a_set_come_from_protobuf(tmp_path, records):
    full = descriptor_pb2.FileDescriptorSet.FromString((MESSAGES / "frames.desc").read_bytes())
    assert [f.name for f in full.file] == ["google/protobuf/timestamp.proto", "frames.proto"]
    bare = descriptor_pb2.FileDescriptorSet(file=[full.file[1]])
    (tmp_path / "bare.desc").write_bytes(bare.SerializeToString())
    frame = load_message_type(tmp_path / "bare.desc", "lens.demo.Frame")
    assert message_json(frame.decode(records[5]).message) == FRAMES["records"][5]["json"]

    lacking = descriptor_pb2.FileDescriptorSet(file=[full.file[1]])
    lacking.file[0].dependency.append("lens/common.proto")
    (tmp_path / "lacking.desc").write_bytes(lacking.SerializeToString())
    with pytest.raises(SchemaError, match="does not hold lens/common.proto, which frames.proto imports"):
        message_types(tmp_path / "lacking.desc")


def test_private_pool_keeps_same_named_types_apart(tmp_path, frames, records):
    other = tmp_path / "other.proto"
    other.write_text('syntax = "proto3";\npackage lens.demo;\nmessage Frame { int32 image_id = 1; }\n')
    theirs = load_message_type(other, "lens.demo.Frame")
    assert theirs.message_class is not frames.message_class
    assert message_json(frames.decode(records[0]).message) == FRAMES["records"][0]["json"]
    assert message_json(theirs.decode(b"\x08\x05").message) == {"imageId": 5}


def test_proto_source_without_grpc_tools_says_how_to_get_it(tmp_path, monkeypatch):
    import importlib.util

    source = tmp_path / "fresh.proto"
    source.write_text('syntax = "proto3";\nmessage A { int32 a = 1; }\n')
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "grpc_tools" else real(name, *args))
    with pytest.raises(SchemaError) as caught:
        load_message_type(source, "A")
    message = str(caught.value)
    assert "pip install 'tfrecord-lens[proto]'" in message and "\n" not in message
    # a descriptor set needs no compiler
    assert load_message_type(MESSAGES / "frames.desc", "Frame").name == "lens.demo.Frame"


def test_reasons_name_the_field_that_breaks(sensors):
    log_id = b"\x09" + bytes(8)
    cases = {
        log_id + b"\x2a\x03\x80\x80\x80": "field samples: packed values cut short",
        log_id + b"\x32\x03\x00\x00\x00": "field gains: packed values cut short",
        log_id + b"\x4a\x05\x1a\x03\x80\x80\x80": "field main.deltas: packed values cut short",
        log_id + b"\x0b\x08\x01": "group log_id is never closed",
        b"\x0c": "end of group 1 that was never started, at byte 0",
        log_id + b"\x52\x05\x09\x00": "field readings runs past the end of its message at byte 10",
    }
    for data, reason in cases.items():
        decoded = sensors.decode(data)
        assert decoded.kind is RecordKind.RAW
        assert decoded.note == f"not a lens.test.SensorLog: {reason}"


def test_proto2_strings_need_not_be_utf8(sensors):
    entry = b"\x0a\x02\xff\xfe" + b"\x12\x09\x09" + bytes(6) + b"\x00\x40"  # by_name[b"\xff\xfe"].value = 2.0
    data = b"\x09" + bytes(8) + b"\x22\x02\xff\xfe" + b"\x62" + bytes([len(entry)]) + entry
    decoded = sensors.decode(data)
    assert decoded.kind is RecordKind.MESSAGE and decoded.note is None
    fields = message_fields(decoded.message)
    assert fields["site"] == ("bytes", [b"\xff\xfe"])
    assert fields["by_name.\\xff\\xfe.value"] == ("float", [2.0])
    nodes = tree_index(message_tree(decoded.message))
    assert nodes[("site",)].values == [b"\xff\xfe"]
    assert nodes[("by_name", b"\xff\xfe", "value")].values == [2.0]
    with pytest.raises(PayloadDecodeError, match="by_name"):  # JSON keys must be text
        message_json(decoded.message)


def test_imports_resolve_from_the_package_root_and_include_dirs(tmp_path):
    package = tmp_path / "protos" / "lens" / "demo"
    package.mkdir(parents=True)
    (package / "box.proto").write_text(
        'syntax = "proto3";\npackage lens.demo;\nmessage Box { float x = 1; }\n')
    (package / "scene.proto").write_text(
        'syntax = "proto3";\npackage lens.demo;\nimport "lens/demo/box.proto";\nimport "units.proto";\n'
        "message Scene { repeated Box boxes = 1; lens.units.Unit unit = 2; }\n")
    common = tmp_path / "common"
    common.mkdir()
    (common / "units.proto").write_text(
        'syntax = "proto3";\npackage lens.units;\nenum Unit { PX = 0; MM = 1; }\n')
    with pytest.raises(SchemaError, match='Import "units.proto" was not found'):
        message_types(package / "scene.proto")
    scene = load_message_type(package / "scene.proto", "Scene", include_dirs=(str(common),))
    assert message_types(package / "scene.proto", include_dirs=(str(common),))[0] == "lens.demo.Scene"
    message = scene.message_class()
    message.boxes.add(x=0.5)
    message.unit = 1
    decoded = scene.decode(message.SerializeToString())
    assert message_json(decoded.message) == {"boxes": [{"x": 0.5}], "unit": "MM"}
    assert message_fields(decoded.message) == {"boxes.x": ("float", [0.5]), "unit": ("bytes", [b"MM"])}
