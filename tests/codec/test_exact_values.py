"""Every protobuf scalar type, at its edges, shown, compared, exported and summarised exactly (docs/exact-values.md).

The schema and records come from tests/scalar_messages.py (built with
descriptor_pb2, proto2 and proto3); every expectation is computed from the
protobuf messages themselves, so uint64 past 2**63, ints past 2**53, NaN,
-0.0 and float32 values such as 0.1f are each held to what protobuf says.
"""
from __future__ import annotations

import csv
import io
import json
import math
import operator
from fractions import Fraction

import numpy as np
import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from codec.cli.main import main
from codec.decode.decoder import decode_record, feature_cell
from codec.decode.message_view import is_repeated_field
from codec.decode.messages import load_message_type
from codec.query.filter import compile_filter
from tests.scalar_messages import ENUM_NAMES, INT64, INTEGER_FIELDS, UINT64, write_scalar_files

OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
       ">=": operator.ge}
EDGES = sorted(set(INT64 + UINT64 + [2**63 - 1, 2**64, -(2**63) - 1]))


@pytest.fixture(scope="module", params=["proto2", "proto3"])
def scalars(request, tmp_path_factory):
    """(descriptor set, records file, type name, messages) of one syntax."""
    folder = tmp_path_factory.mktemp(request.param)
    desc, data, messages = write_scalar_files(folder, request.param)
    return desc, data, f"lens.{request.param}.Scalars", messages


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def present(message) -> dict[str, list]:
    """Field name -> its values (one for a singular field), as protobuf holds them: only the fields that are set."""
    return {field.name: list(value) if is_repeated_field(field) else [value]
            for field, value in message.ListFields()}


def float32_text(v: float) -> str:
    return str(np.float32(v))


def value_text(name: str, v) -> str:
    """A value as the table and CSV show it (the rules of docs/exact-values.md)."""
    kind = name[2:]
    if isinstance(v, bool):
        return "true" if v else "false"
    if kind == "enum":
        return ENUM_NAMES.get(v, str(v))
    if kind == "double":
        return repr(v)
    if kind == "float":
        return float32_text(v)
    return str(v)


def cat_lines(capsys, desc, data, type_name, *more) -> list[dict]:
    code, out, err = run(capsys, "cat", "--json", "--workers", "1", "--proto", desc, "--type", type_name, *more, data)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_cat_json_is_protobufs_json_mapping(capsys, scalars):
    desc, data, type_name, messages = scalars
    lines = cat_lines(capsys, desc, data, type_name)
    assert [line["value"] for line in lines] == [json_format.MessageToDict(m) for m in messages]
    assert lines[5]["value"]["fUint64"] == str(2**63 + 1)  # 64-bit integers as strings, as protobuf's JSON has them


@pytest.mark.parametrize("name", INTEGER_FIELDS + ["created_ms"])
def test_where_compares_every_integer_type_exactly_at_the_edges(capsys, scalars, name):
    desc, data, type_name, messages = scalars
    payload = load_message_type(desc, type_name)
    decoded = [decode_record(m.SerializeToString(), payload) for m in messages]
    values = [present(m).get(name, []) for m in messages]
    for literal in EDGES:
        for op, test in OPS.items():
            expr = compile_filter(f"{name} {op} {literal}")
            found = [i for i, d in enumerate(decoded) if expr.matches(i, d.data, decoded=d)]
            want = [i for i, v in enumerate(values)
                    if (not any(x == literal for x in v) if op == "!=" else any(test(x, literal) for x in v))]
            assert found == want, (name, op, literal)


def test_the_issues_filter_finds_uint64_past_2_63(capsys, scalars):
    desc, data, type_name, messages = scalars
    want = [i for i, m in enumerate(messages) if m.created_ms > 100]
    assert {2**63, 2**63 + 1, 2**64 - 1} <= {messages[i].created_ms for i in want}
    assert [line["index"] for line in cat_lines(capsys, desc, data, type_name, "--where", "created_ms > 100")] == want
    assert [line["index"] for line in cat_lines(capsys, desc, data, type_name, "--where",
                                                f"created_ms == {2**63 + 1}")] == [5]


INTEGER_RANGES = {"r_uint64": (0, 2**64 - 1), "r_fixed64": (0, 2**64 - 1), "r_int64": (-(2**63), 2**63 - 1),
                  "r_sint64": (-(2**63), 2**63 - 1), "r_uint32": (0, 2**32 - 1), "r_sfixed32": (-(2**31), 2**31 - 1)}


@settings(max_examples=100, deadline=None)
@given(data=st.data(), field=st.sampled_from(sorted(INTEGER_RANGES)), literal=st.integers(-(2**64), 2**65),
       op=st.sampled_from(sorted(OPS)), as_float=st.booleans())
def test_integer_comparisons_match_python(data, field, literal, op, as_float):
    lo, hi = INTEGER_RANGES[field]
    values = data.draw(st.lists(st.integers(lo, hi) | st.sampled_from([lo, hi, 2**53 + 1, 2**63]).filter(
        lambda v: lo <= v <= hi), min_size=1, max_size=4))
    payload = _PAYLOAD["proto3"]
    decoded = decode_record(payload.message_class(**{field: values}).SerializeToString(), payload)
    text = repr(float(literal)) if as_float else str(literal)
    number = float(literal) if as_float else literal
    got = compile_filter(f"{field} {op} {text}").matches(0, decoded.data, decoded=decoded)
    want = not any(v == number for v in values) if op == "!=" else any(OPS[op](v, number) for v in values)
    assert got == want


class _Payloads(dict):
    """One loaded message type per syntax, for the hypothesis test (which cannot take a module fixture)."""

    def __missing__(self, syntax: str):
        import tempfile

        with tempfile.TemporaryDirectory() as folder:  # the loaded type keeps its descriptors, not the file
            desc, _, _ = write_scalar_files(folder, syntax)
            self[syntax] = load_message_type(desc, f"lens.{syntax}.Scalars")
        return self[syntax]


_PAYLOAD = _Payloads()


def test_bools_enums_and_floats_compare_as_documented(scalars):
    desc, data, type_name, messages = scalars
    payload = load_message_type(desc, type_name)
    decoded = [decode_record(m.SerializeToString(), payload) for m in messages]

    def matching(text: str) -> list[int]:
        expr = compile_filter(text)
        return [i for i, d in enumerate(decoded) if expr.matches(i, d.data, decoded=d)]

    def where(test) -> list[int]:
        return [i for i, m in enumerate(messages) if test(present(m))]

    true = where(lambda f: True in f.get("f_bool", []))
    assert matching("f_bool") == matching("f_bool == true") == matching("f_bool == 1") == true
    assert matching("f_bool == false") == where(lambda f: False in f.get("f_bool", []))
    assert matching("not f_bool") == where(lambda f: True not in f.get("f_bool", []))
    assert matching('f_enum == "ACTIVE"') == matching("f_enum == 2") == where(lambda f: 2 in f.get("f_enum", []))
    assert matching('f_enum in ["DONE", 0]') == where(lambda f: bool({0, 3} & set(f.get("f_enum", []))))
    assert matching("f_enum > 2") == where(lambda f: any(v > 2 for v in f.get("f_enum", [])))
    assert matching('f_enum ~ "^DO"') == where(lambda f: 3 in f.get("f_enum", []))
    # doubles compare as float64: 0.1 is the double 0.1, 2**53 + 1 is not the double 2**53
    assert matching("f_double == 0.1") == where(lambda f: 0.1 in f.get("f_double", []))
    assert matching(f"f_double == {2**53}") == where(lambda f: float(2**53) in f.get("f_double", []))
    assert matching(f"f_double == {2**53 + 1}") == []
    assert matching("f_double > 1e308") == where(lambda f: any(v > 1e308 for v in f.get("f_double", [])))
    # floats compare as float32: the literal 0.1 finds the stored 0.1f
    assert matching("f_float == 0.1") == where(lambda f: any(v == float(np.float32(0.1)) for v in f.get("f_float", [])))
    assert matching("f_float == 0.1") != []


def test_table_cells_show_every_type_as_the_tree_does(scalars):
    desc, data, type_name, messages = scalars
    payload = load_message_type(desc, type_name)
    for message in messages:
        decoded = decode_record(message.SerializeToString(), payload)
        for name, values in present(message).items():
            texts = [value_text(name, v) for v in values]
            cell = feature_cell(decoded, name, max_len=1000)
            assert cell == (texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]"), name


def test_csv_and_jsonl_exports_are_exact(capsys, scalars, tmp_path):
    desc, data, type_name, messages = scalars
    out = tmp_path / "out.csv"
    code, _, err = run(capsys, "export", "--format", "csv", "--proto", desc, "--type", type_name, "--to", out, data)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    for row, message in zip(rows, messages):
        fields = present(message)
        for name, cell in row.items():
            if name == "index":
                continue
            values = fields.get(name, [])
            texts = [value_text(name, v) for v in values]
            if name[2:] in ("enum",):
                want = "" if not texts else texts[0] if len(texts) == 1 else json.dumps(texts)
            elif name[2:] in ("double", "float", "bool"):
                want = "" if not texts else texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
            else:
                want = "" if not texts else texts[0] if len(texts) == 1 else json.dumps(values)
            assert cell == want, (name, cell, want)
    assert rows[6]["f_uint64"] == str(UINT64[6]) == "18446744073709551615"
    jsonl = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "export", "--format", "jsonl", "--proto", desc, "--type", type_name, "--to", jsonl, data)
    assert code == 0, err
    assert [json.loads(line)["value"] for line in jsonl.read_text().splitlines()] == \
        [json_format.MessageToDict(m) for m in messages]


def test_stats_are_exact(capsys, scalars):
    desc, data, type_name, messages = scalars
    code, out, err = run(capsys, "stats", "--json", "--workers", "1", "--proto", desc, "--type", type_name, data)
    assert code == 0, err
    features = json.loads(out)["features"]
    values: dict[str, list] = {}
    for message in messages:
        for name, vs in present(message).items():
            values.setdefault(name, []).extend(vs)
    for name, vs in values.items():
        got = features[name]
        kind = name[2:]
        if kind == "bool":
            assert got["dtype"] == "bool"
            assert (got["true"], got["false"]) == (vs.count(True), vs.count(False))
        elif kind == "enum":
            assert got["dtype"] == "bytes"
            assert dict(got["top"]) == {ENUM_NAMES[v]: vs.count(v) for v in set(vs)}
        elif kind in ("float", "double"):
            finite = [v for v in vs if math.isfinite(v)]
            assert got["dtype"] == ("float64" if kind == "double" else "float32")
            assert got["nan"] == sum(map(math.isnan, vs)) and got["inf"] == sum(map(math.isinf, vs))
            show = (lambda v: v) if kind == "double" else (lambda v: float(float32_text(v)))
            assert (got["min"], got["max"]) == (show(min(finite) + 0.0), show(max(finite) + 0.0))
            assert got["mean"] == float(sum(map(Fraction, finite)) / len(finite))
        else:
            assert got["dtype"] == "int64"
            assert (got["min"], got["max"]) == (min(vs), max(vs)), name
            assert got["mean"] == float(Fraction(sum(vs), len(vs))), name  # the exact sum, correctly rounded
            assert dict(map(tuple, got["top"])) == {v: vs.count(v) for v in set(vs)} or got["distinct"] > 10
            assert sum(got["histogram"]["counts"]) == len(vs)
    assert features["created_ms"]["max"] == max(m.created_ms for m in messages)


def test_stats_text_spells_bools_true_and_false(capsys, scalars):
    desc, data, type_name, _ = scalars
    code, out, err = run(capsys, "stats", "--workers", "1", "--proto", desc, "--type", type_name, data)
    assert code == 0, err
    block = out.split("  f_bool  ")[1].split("\n\n")[0]
    assert "values             true " in block and "most common        " in block and "×" in block
    assert "18,446,744,073,709,551,615" in out


def test_stats_of_split_records_merge_exactly(scalars):
    from codec.stats.file_stats import FileStats

    desc, _, type_name, messages = scalars
    payload = load_message_type(desc, type_name)
    records = [m.SerializeToString() for m in messages]
    whole, first, second = FileStats(payload), FileStats(payload), FileStats(payload)
    for i, data in enumerate(records):
        whole.add(data)
        (first if i % 3 else second).add(data)
    second.merge(first)
    assert json.dumps(second.to_json(), sort_keys=True) == json.dumps(whole.to_json(), sort_keys=True)
    assert whole.to_json()["features"]["r_uint64"]["max"] == 2**64 - 1
