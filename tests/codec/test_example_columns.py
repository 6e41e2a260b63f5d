"""codec.decode.example_columns: the vectorised Example decoder agrees with upb record by record.

Every record it accepts (``ok``) must decode to exactly what
``codec.decode.example_proto.Example.FromString`` gives; everything else must be refused.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codec.decode import example_columns
from codec.decode.example_columns import KIND_BYTES, KIND_FLOAT, KIND_INT64, KIND_NONE, decode_examples
from codec.decode.example_proto import Example

KINDS = {None: KIND_NONE, "bytes_list": KIND_BYTES, "float_list": KIND_FLOAT, "int64_list": KIND_INT64}
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the reference: what upb gives, and the columns read back per record ------------------------

def upb_content(record: bytes) -> dict | None:
    """{key: (kind, values)} as upb decodes ``record``; floats as float32 bit patterns; None if upb refuses."""
    try:
        example = Example.FromString(record)
    except (DecodeError, RuntimeError, ValueError):
        return None
    content = {}
    for key, feature in example.features.feature.items():
        which = feature.WhichOneof("kind")
        values = list(getattr(feature, which).value) if which else []
        if which == "float_list":
            with np.errstate(invalid="ignore"):  # a signalling NaN
                values = np.array(values, dtype=np.float64).astype(np.float32).view(np.uint32).tolist()
        content[key] = (KINDS[which], values)
    return content


def column_content(buf: bytes, cols, r: int, *, via_double: bool = True) -> dict:
    """{key: (kind, values)} of record ``r`` from the columns, in the form of :func:`upb_content`."""
    entries = np.flatnonzero(cols.entry_record == r)
    content = {}
    for e in entries.tolist():
        kind, count, first = int(cols.entry_kind[e]), int(cols.entry_count[e]), int(cols.entry_offset[e])
        if kind == KIND_INT64:
            values = cols.int_values[first:first + count].tolist()
        elif kind == KIND_FLOAT:
            floats = cols.float_values[first:first + count]
            if via_double:  # upb hands out Python floats: the same float32 -> double -> float32 path
                with np.errstate(invalid="ignore"):
                    floats = floats.astype(np.float64).astype(np.float32)
            values = floats.view(np.uint32).tolist()
        elif kind == KIND_BYTES:
            values = [buf[s:t] for s, t in zip(cols.bytes_starts[first:first + count].tolist(),
                                                cols.bytes_ends[first:first + count].tolist())]
        else:
            assert count == 0
            values = []
        content[cols.keys[int(cols.entry_key[e])]] = (kind, values)
    assert len(content) == entries.size, "a key twice in one accepted record"
    return content


def batch(records: list[bytes], gaps: list[bytes] | None = None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The records in one buffer, with ``gaps[i]`` of junk before record i."""
    gaps = gaps or [b""] * len(records)
    parts, starts, ends, pos = [], [], [], 0
    for gap, record in zip(gaps, records):
        parts += [gap, record]
        pos += len(gap)
        starts.append(pos)
        pos += len(record)
        ends.append(pos)
    return b"".join(parts), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def numpy_steps_only(buf: bytes, starts: np.ndarray, ends: np.ndarray):
    """decode_examples with every sequence stepped by numpy, however few cursors are left."""
    saved = example_columns._SCALAR_OWNERS
    example_columns._SCALAR_OWNERS = 0
    try:
        return decode_examples(buf, starts, ends)
    finally:
        example_columns._SCALAR_OWNERS = saved


def assert_same(one, other) -> None:
    assert [one.keys[k] for k in one.entry_key.tolist()] == [other.keys[k] for k in other.entry_key.tolist()]
    assert sorted(one.keys) == sorted(other.keys)  # the order of ``keys`` is the decoder's own
    for name in ("ok", "entry_record", "entry_kind", "entry_count", "entry_offset", "int_values",
                 "float_values", "bytes_starts", "bytes_ends"):
        a, b = getattr(one, name), getattr(other, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


def check_batch(records: list[bytes], gaps: list[bytes] | None = None):
    """Decode ``records`` as one batch; every ok record equals upb's content. Returns the columns."""
    buf, starts, ends = batch(records, gaps)
    cols = decode_examples(buf, starts, ends)
    assert_same(cols, numpy_steps_only(buf, starts, ends))
    assert cols.ok.shape == (len(records),) and cols.ok.dtype == bool
    assert len(set(cols.keys)) == len(cols.keys)
    n = cols.entry_record.size
    assert cols.entry_key.dtype == np.int32 and cols.entry_kind.dtype == np.uint8
    assert cols.entry_record.dtype == cols.entry_count.dtype == np.int64
    assert cols.int_values.dtype == np.int64 and cols.float_values.dtype == np.float32
    assert all(a.size == n for a in (cols.entry_key, cols.entry_kind, cols.entry_count, cols.entry_offset))
    assert (np.diff(cols.entry_record) >= 0).all()
    assert cols.ok[cols.entry_record].all()
    for kind, values in ((KIND_INT64, cols.int_values), (KIND_FLOAT, cols.float_values),
                         (KIND_BYTES, cols.bytes_starts)):
        assert int(cols.entry_count[cols.entry_kind == kind].sum()) == values.size
    assert cols.bytes_starts.size == cols.bytes_ends.size
    for r, record in enumerate(records):
        if cols.ok[r]:
            assert column_content(buf, cols, r) == upb_content(record), f"record {r}: {record!r}"
    return buf, cols


# --- building Examples, and hand-made wire bytes -------------------------------------------------

keys = st.one_of(st.sampled_from(["", "label", "image/encoded", "x", "ключ", "名前", "e\u0301", "\x00"]),
                 st.text(max_size=12))
int_lists = st.lists(st.one_of(st.integers(-2**63, 2**63 - 1), st.sampled_from([0, -1, 1, -2**63, 2**63 - 1])),
                     max_size=6)
float_lists = st.lists(st.one_of(st.floats(width=32), st.sampled_from([float("nan"), float("inf"),
                                                                       float("-inf"), -0.0, 0.0])), max_size=6)
bytes_lists = st.lists(st.one_of(st.binary(max_size=8), st.binary(min_size=200, max_size=400)), max_size=6)
features = st.dictionaries(keys, st.one_of(st.tuples(st.just("int64_list"), int_lists),
                                           st.tuples(st.just("float_list"), float_lists),
                                           st.tuples(st.just("bytes_list"), bytes_lists),
                                           st.tuples(st.just(None), st.just([]))), max_size=6)


def serialize(content: dict) -> bytes:
    example = Example()
    for key, (kind, values) in content.items():
        feature = example.features.feature[key]
        if kind is not None:
            getattr(feature, kind).value.extend(values)
    return example.SerializeToString()


def varint(n: int, extra: int = 0) -> bytes:
    """``n`` (two's complement for a negative) as a varint, padded by up to ``extra`` needless 0x80 bytes (10 at most)."""
    n &= 2**64 - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
        if not n:
            break
    out += b"\x80" * min(extra, 10 - len(out))
    out[-1] &= 0x7F
    return bytes(out)


def ld(tag: int, payload: bytes, extra: int = 0) -> bytes:
    return bytes([tag]) + varint(len(payload), extra) + payload


def entry(key: bytes, feature: bytes) -> bytes:
    return ld(0x0A, ld(0x0A, key) + ld(0x12, feature))


def example(*entries: bytes) -> bytes:
    return ld(0x0A, b"".join(entries))


def int_feature(values, extra: int = 0) -> bytes:
    return ld(0x1A, ld(0x0A, b"".join(varint(v, extra) for v in values)))


def float_feature(values) -> bytes:
    return ld(0x12, ld(0x0A, struct.pack(f"<{len(values)}f", *values)))


def bytes_feature(values) -> bytes:
    return ld(0x0A, b"".join(ld(0x0A, v) for v in values))


# --- (a) everything TensorFlow/protobuf writes is decoded, exactly --------------------------------

@pytest.mark.slow
@FAST
@given(st.lists(features, min_size=1, max_size=8), st.lists(st.binary(max_size=3), min_size=8, max_size=8))
def test_serialized_examples_decode_exactly_as_upb(contents, gaps):
    records = [serialize(c) for c in contents]
    buf, cols = check_batch(records, gaps[:len(records)])
    assert cols.ok.tolist() == [bool(record) for record in records]  # only an empty record is left to upb
    for r, record in enumerate(records):
        if record:  # floats are raw float32 bits, so compare without the trip through double too
            assert column_content(buf, cols, r, via_double=False) == upb_content(record)


def test_extremes_and_special_floats():
    content = {"": ("int64_list", [-2**63, 2**63 - 1, -1, 0, 1, 300]),
               "f": ("float_list", [float("nan"), float("inf"), float("-inf"), -0.0, 1.5]),
               "b": ("bytes_list", [b"", b"\xff" * 70000, b"a"]),
               "none": (None, []), "ε": ("int64_list", [])}
    record = serialize(content)
    buf, cols = check_batch([record])
    assert cols.ok.tolist() == [True]
    assert sorted(cols.keys) == sorted(content)
    assert cols.int_values.tolist() == [-2**63, 2**63 - 1, -1, 0, 1, 300]
    assert np.signbit(cols.float_values[3]) and np.isnan(cols.float_values[0])
    assert [e - s for s, e in zip(cols.bytes_starts, cols.bytes_ends)] == [0, 70000, 1]


def test_non_minimal_varints_are_decoded():
    record = example(
        ld(0x0A, ld(0x0A, b"k", extra=3) + ld(0x12, int_feature([5, -7, 2**40], extra=2), extra=4), extra=1),
        entry(b"f", ld(0x12, ld(0x0A, struct.pack("<2f", 1.0, -2.0), extra=5))),
    )
    _, cols = check_batch([record])
    assert cols.ok.tolist() == [True]
    assert cols.int_values.tolist() == [5, -7, 2**40]
    assert cols.float_values.tolist() == [1.0, -2.0]


def test_empty_features_and_empty_lists():
    records = [example(), example(entry(b"a", b"")), example(entry(b"a", ld(0x1A, b""))),
               example(entry(b"a", ld(0x1A, ld(0x0A, b"")))), example(entry(b"a", ld(0x0A, b"")))]
    _, cols = check_batch(records)
    assert cols.ok.all()
    assert cols.entry_kind.tolist() == [KIND_NONE, KIND_INT64, KIND_INT64, KIND_BYTES]
    assert cols.entry_count.tolist() == [0, 0, 0, 0]
    assert cols.entry_record.tolist() == [1, 2, 3, 4]


# --- (b) anything else is refused, or decoded exactly -------------------------------------------

REFUSED = {
    "non-packed int64": example(entry(b"k", ld(0x1A, b"\x08\x05\x08\x06"))),
    "non-packed float": example(entry(b"k", ld(0x12, b"\x0d" + struct.pack("<f", 1.0)))),
    "two packed chunks": example(entry(b"k", ld(0x1A, ld(0x0A, b"\x01") + ld(0x0A, b"\x02")))),
    "unknown field in Example": ld(0x0A, entry(b"k", int_feature([1]))) + ld(0x12, b""),
    "unknown field in Features": example(entry(b"k", int_feature([1])), ld(0x12, b"x")),
    "unknown field in entry": example(ld(0x0A, ld(0x0A, b"k") + ld(0x12, int_feature([1])) + b"\x18\x01")),
    "unknown field in Feature": example(entry(b"k", int_feature([1]) + b"\x20\x01")),
    "unknown field in list": example(entry(b"k", ld(0x0A, ld(0x0A, b"v") + b"\x10\x01"))),
    "duplicate key": example(entry(b"k", int_feature([1])), entry(b"k", int_feature([2]))),
    "reversed entry": example(ld(0x0A, ld(0x12, int_feature([1])) + ld(0x0A, b"k"))),
    "key only": example(ld(0x0A, ld(0x0A, b"k"))),
    "value only": example(ld(0x0A, ld(0x12, int_feature([1])))),
    "key twice": example(ld(0x0A, ld(0x0A, b"k") + ld(0x0A, b"j") + ld(0x12, b""))),
    "two kinds": example(entry(b"k", int_feature([1]) + float_feature([1.0]))),
    "invalid UTF-8 key": example(entry(b"\xff\xfe", int_feature([1]))),
    "surrogate key": example(entry(b"\xed\xa0\x80", int_feature([1]))),
    "float payload not a multiple of 4": example(entry(b"k", ld(0x12, ld(0x0A, b"\x00" * 5)))),
    "11-byte varint": example(entry(b"k", ld(0x1A, ld(0x0A, b"\x81" + b"\x80" * 9 + b"\x00")))),
    "varint over 64 bits": example(entry(b"k", ld(0x1A, ld(0x0A, b"\xff" * 9 + b"\x02")))),
    "cut varint in payload": example(entry(b"k", ld(0x1A, ld(0x0A, b"\x05\x81")))),
    "length past parent": ld(0x0A, b"\x0a\x10" + ld(0x0A, b"k")),
    "multi-byte tag": example(entry(b"k", b"\x9a\x00" + ld(0x0A, b"\x01"))),
    "two top-level fields": example(entry(b"k", b"")) + example(entry(b"j", b"")),
    "trailing byte": example(entry(b"k", b"")) + b"\x00",
    "SequenceExample": ld(0x0A, b"") + ld(0x12, b""),
    "empty record": b"",
    "not protobuf": b"\xff\xff\xff\xff",
    "lone tag": b"\x0a",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_layouts_left_to_upb(name):
    good = serialize({"label": ("int64_list", [3]), "x": ("float_list", [0.5])})
    _, cols = check_batch([good, REFUSED[name], good])
    assert cols.ok.tolist() == [True, False, True]
    assert cols.entry_record.tolist() == [0, 0, 2, 2]
    assert cols.int_values.tolist() == [3, 3] and cols.float_values.tolist() == [0.5, 0.5]


def test_bytes_values_of_refused_records_are_dropped():
    records = [example(entry(b"a", bytes_feature([b"1", b"22"]))),
               example(entry(b"a", bytes_feature([b"3"])), entry(b"a", bytes_feature([b"4"]))),
               example(entry(b"z", bytes_feature([b"5", b"666"])))]
    buf, cols = check_batch(records)
    assert cols.ok.tolist() == [True, False, True]
    assert [buf[s:e] for s, e in zip(cols.bytes_starts, cols.bytes_ends)] == [b"1", b"22", b"5", b"666"]
    assert sorted(cols.keys) == ["a", "z"]


def test_spans_outside_the_buffer_are_refused():
    record = serialize({"k": ("int64_list", [1])})
    buf = record + record
    cols = decode_examples(buf, np.array([0, len(record), len(record), -1, 5]),
                           np.array([len(record), 2 * len(record) + 1, 2, len(record), 3]))
    assert cols.ok.tolist() == [True, False, False, False, False]
    again = decode_examples(memoryview(bytearray(buf)), np.array([0]), np.array([len(record)]))
    assert again.ok.tolist() == [True] and again.int_values.tolist() == [1] and again.keys == ["k"]
    assert decode_examples(b"", np.array([0]), np.array([0])).ok.tolist() == [False]
    empty = decode_examples(b"", np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert empty.ok.size == 0 and empty.entry_record.size == 0 and empty.keys == []


def test_long_keys_and_many_distinct_keys():
    long_keys = {"k" * 300: ("int64_list", [1]), "k" * 299 + "j": ("int64_list", [2]), "short": (None, [])}
    many = [serialize({f"key{i}": ("bytes_list", [b"v"])}) for i in range(300)]
    for records in ([serialize(long_keys)] * 3, many):
        _, cols = check_batch(records)
        assert cols.ok.all()
    assert len(cols.keys) == 300


def test_hash_collisions_fall_back_to_exact_keys(monkeypatch):
    monkeypatch.setattr(example_columns, "_MIX", np.uint64(0))  # every key hashes alike
    records = [serialize({"a": ("int64_list", [1]), "b": ("int64_list", [2])}),
               serialize({"b": ("int64_list", [3]), "\xe9": (None, [])})]
    buf, cols = check_batch(records)
    assert cols.ok.all() and sorted(cols.keys) == ["a", "b", "\xe9"]
    named = [(r, cols.keys[k]) for r, k in zip(cols.entry_record.tolist(), cols.entry_key.tolist())]
    assert sorted(named) == [(0, "a"), (0, "b"), (1, "b"), (1, "\xe9")]


quirks = st.sampled_from(["none", "non-packed", "unknown", "duplicate", "reversed", "bad-utf8",
                          "non-minimal", "key-only", "empty-entry", "two-kinds"])


@st.composite
def hand_made(draw) -> bytes:
    """A record built on the wire by hand from a random feature dict, with a random quirk."""
    content = draw(features)
    quirk = draw(quirks)
    extra = 2 if quirk == "non-minimal" else 0
    entries = []
    for key, (kind, values) in content.items():
        if kind == "int64_list":
            feature = ld(0x1A, b"".join(b"\x08" + varint(v) for v in values)) if quirk == "non-packed" \
                else int_feature(values, extra)
        elif kind == "float_list":
            feature = float_feature(values)
        elif kind == "bytes_list":
            feature = bytes_feature(values)
        else:
            feature = b""
        raw_key = key.encode() + (b"\xc3" if quirk == "bad-utf8" else b"")
        parts = [ld(0x0A, raw_key, extra), ld(0x12, feature, extra)]
        if quirk == "reversed":
            parts.reverse()
        if quirk == "unknown":
            parts.append(b"\x28\x01")
        if quirk == "key-only":
            parts = parts[:1]
        if quirk == "two-kinds":
            parts[1] = ld(0x12, feature + int_feature([1]))
        entries.append(ld(0x0A, b"".join(parts), extra))
    if quirk == "duplicate" and entries:
        entries.append(entries[0])
    if quirk == "empty-entry":
        entries.append(b"\x0a\x00")
    kinds = [kind for kind, _ in content.values()]
    refused = quirk == "empty-entry" or (content and quirk in REFUSING) or (
        quirk == "non-packed" and any(kind == "int64_list" and values for kind, values in content.values())) or (
        quirk == "two-kinds" and any(kinds))
    return ld(0x0A, b"".join(entries), extra), not refused


REFUSING = {"unknown", "duplicate", "reversed", "bad-utf8", "key-only"}


@pytest.mark.slow
@FAST
@given(st.lists(hand_made(), min_size=1, max_size=6))
def test_hand_made_quirks_refused_or_exact(made):
    _, cols = check_batch([record for record, _ in made])
    assert cols.ok.tolist() == [expected for _, expected in made]


@st.composite
def mutated(draw) -> bytes:
    record = bytearray(serialize(draw(features)))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        at = draw(st.integers(0, len(record)))
        if how == "flip" and at < len(record):
            record[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "cut":
            del record[at:]
        elif how == "insert":
            record[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif how == "delete":
            del record[at:at + draw(st.integers(1, 3))]
    return bytes(record)


@pytest.mark.slow
@FAST
@given(st.lists(st.one_of(mutated(), st.binary(max_size=40), st.builds(serialize, features)),
                min_size=1, max_size=8))
def test_mutated_and_random_records_refused_or_exact(records):
    check_batch(records)


def test_long_sequences_both_ways():
    wide = [serialize({f"f{i}": ("int64_list", [r, i]) for i in range(40)}) for r in range(30)]
    long_lists = [serialize({"tokens": ("bytes_list", [b"t%d" % i for i in range(r * 50)])}) for r in range(20)]
    _, cols = check_batch(wide + long_lists)
    assert cols.ok.all()
    assert cols.entry_count[cols.entry_kind == KIND_BYTES].tolist() == [r * 50 for r in range(20)]
    too_long = example(entry(b"k", bytes_feature([b""] * (example_columns._SCALAR_FIELDS + 1))))
    _, cols = check_batch([too_long, wide[0]])
    assert cols.ok.tolist() == [False, True]  # past the field budget: left to upb


def test_long_narrow_sequences_are_left_to_upb(monkeypatch):
    monkeypatch.setattr(example_columns, "_NUMPY_STEPS", 8)
    monkeypatch.setattr(example_columns, "_WIDE_STEP", 30)
    many_values = serialize({"v": ("bytes_list", [b"x"] * 20)})
    few_values = serialize({"v": ("bytes_list", [b"x"] * 5), "n": ("int64_list", [1])})
    _, cols = check_batch([many_values] * 30 + [few_values])  # 30 cursors: wide enough to go on
    assert cols.ok.all() and cols.bytes_starts.size == 30 * 20 + 5
    _, cols = check_batch([many_values] * 20 + [few_values])  # 20 cursors after 8 steps: too narrow
    assert cols.ok.tolist() == [False] * 20 + [True]
    assert cols.bytes_starts.size == 5 and cols.int_values.tolist() == [1]


TF_WRITTEN = ["detection.tfrecord", "flowers_jpeg.tfrecord", "my_example.tfrecords", "raw_pixels_32x32x3.tfrecord",
              "raw_strings.tfrecord", "sequence_examples.tfrecord", "structured.tfrecord",
              "zero_length_record.tfrecord", "shards/train-00000-of-00004.tfrecord"]


@pytest.mark.parametrize("name", TF_WRITTEN)
def test_files_written_by_tensorflow(name):
    """Every non-empty Example TensorFlow wrote is decoded here, exactly; anything else is left to upb."""
    from codec.sources.tfrecord_file import TFRecordFile
    from tests.builders import MANIFEST, fixture_path

    with TFRecordFile(fixture_path(name)) as f:
        records = [f[i] for i in range(len(f.build_index()))]
    expected = [r["kind"] == "example" and r["length"] > 0 for r in MANIFEST[name]["records"]]
    assert len(records) == len(expected)
    _, cols = check_batch(records)
    assert cols.ok.tolist() == expected
