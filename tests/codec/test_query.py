"""The filter expression language: parsing, evaluation, error positions, whole-file filtering."""
from __future__ import annotations

import math
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec import TFRecordFile, UsageError
from codec.index.scan import IndexProgress
from codec.query.filter import ExprError, compile_filter, filter_iter, format_error, matching_indices
from codec.query.parser import And, Compare, Feature, Has, Len, ListLit, Lit, Match, Not, Or, Prop
from tests.builders import MANIFEST, example, fixture_path, sequence_example


def m(text: str, data: bytes, index: int = 0, status: str = "ok", offset: int = 0) -> bool:
    return compile_filter(text).matches(index, data, status, offset)


# ---------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, tree", [
    ("label == 3", Compare("==", Feature("label"), Lit(3))),
    ("image/height > 100", Compare(">", Feature("image/height"), Lit(100))),
    ("a.b-c_d <= -2.5", Compare("<=", Feature("a.b-c_d"), Lit(-2.5))),
    ("x >= 1e5", Compare(">=", Feature("x"), Lit(100000.0))),
    ("x < .5", Compare("<", Feature("x"), Lit(0.5))),
    ("x != 'a\\'b'", Compare("!=", Feature("x"), Lit("a'b"))),
    ('"cat" in image/object/class/text', Compare("==", Lit("cat"), Feature("image/object/class/text"))),
    ("label in [1, 2, 'x',]", Compare("==", Feature("label"), ListLit((1, 2, "x")))),
    ("label not in []", Not(Compare("==", Feature("label"), ListLit(())))),
    ("len(bbox) >= 2", Compare(">=", Len(Feature("bbox")), Lit(2))),
    ("has(`my feature`)", Has(Feature("my feature"))),
    ('text ~ "ro+se"', Match(Feature("text"), "ro+se")),
    ("status != \"ok\"", Compare("!=", Prop("status"), Lit("ok"))),
    ("`status` == 1", Compare("==", Feature("status"), Lit(1))),
    ("`a\\`b` == 1", Compare("==", Feature("a`b"), Lit(1))),
    ("index < 10 and kind == 'raw' or not size > 5",
     Or((And((Compare("<", Prop("index"), Lit(10)), Compare("==", Prop("kind"), Lit("raw")))),
         Not(Compare(">", Prop("size"), Lit(5)))))),
    ("not (a == 1 or b == 2) and c == 3",
     And((Not(Or((Compare("==", Feature("a"), Lit(1)), Compare("==", Feature("b"), Lit(2))))),
          Compare("==", Feature("c"), Lit(3))))),
    ("len == 1", Compare("==", Feature("len"), Lit(1))),  # a function name alone is a feature
    ("offsets == 1", Compare("==", Feature("offsets"), Lit(1))),  # only exact property names are properties
    ('x == "\\u00e9\\x41\\n"', Compare("==", Feature("x"), Lit("éA\n"))),
])
def test_parse_tree(text, tree):
    assert compile_filter(text).tree == tree


@pytest.mark.parametrize("text, position, expected", [
    ("label ==", 8, "expected a value after '=='"),
    ("label == and", 9, "expected a value after '=='"),
    ("label [1]", 6, "expected a comparison"),
    ("label 3", 6, "expected a comparison"),
    ("label = 3", 6, "expected '=='"),
    ("(label == 3", 11, "expected ')'"),
    ("(label == 3", 11, "to close the '(' at position 0"),
    ("label == 3)", 10, "unmatched ')'"),
    ("a == 1 and", 10, "expected a condition after 'and'"),
    ("a == 1 or or", 10, "expected a condition after 'or'"),
    ("not", 3, "expected a condition after 'not'"),
    ("and a == 1", 0, "expected a condition"),
    ("a == 1 b == 2", 7, "expected 'and', 'or' or the end"),
    ("1 < x < 5", 6, "comparisons do not chain"),
    ('x == "abc', 5, "unterminated string"),
    ("`abc == 1", 0, "unterminated backquoted name"),
    ("`` == 1", 1, "expected a feature name"),
    ('x == "a\\qb"', 7, "unknown escape '\\q'"),
    ('x == "\\x4"', 8, "expected 2 hex digits"),
    ("x == $", 5, "unexpected character '$'"),
    ("3d == 1", 0, "bad number '3d'"),
    ("x && y", 2, "expected 'and'"),
    ("x || y", 2, "expected 'or'"),
    ("!x", 0, "expected 'not' or '!='"),
    ('x ~ 3', 4, "expected a quoted regular expression"),
    ('x ~ "("', 5, "bad regular expression"),
    ("has(status)", 4, "has() takes a feature name"),
    ("has(3)", 4, "expected a feature name in has()"),
    ("has(x", 5, "expected ')'"),
    ("len(x) > ", 9, "expected a value after '>'"),
    ("len(x > 1", 6, "to close the 'len(' at position 3"),
    ("has(x) == 1", 7, "cannot be compared"),
    ("x == has(y)", 5, "has() is a condition"),
    ("x in [1, y]", 9, "expected a number, a string, true or false in the list"),
    ("x in [1 2]", 8, "expected ',' or ']'"),
    ("(a == 1) == 2", 9, "cannot be compared"),
    ("x == " + "9" * 5000, 5, "number too long"),
    ("x not 3", 6, "expected 'in' after 'not'"),
])
def test_error_positions(text, position, expected):
    with pytest.raises(ExprError) as info:
        compile_filter(text)
    exc = info.value
    assert exc.position == position
    assert expected in str(exc)
    assert f"at position {position}" in str(exc)
    assert isinstance(exc, UsageError) and isinstance(exc, ValueError)


def test_error_message_reads_well():
    with pytest.raises(ExprError) as info:
        compile_filter("label ==")
    assert str(info.value) == "expected a value after '==' at position 8 (end of the expression)"
    with pytest.raises(ExprError) as info:
        compile_filter("label == 3 3")
    assert str(info.value) == "expected 'and', 'or' or the end of the expression at position 11, found '3'"


def test_format_error_puts_a_caret_under_the_position():
    text = "a == 1 and b =="
    with pytest.raises(ExprError) as info:
        compile_filter(text)
    assert format_error(text, info.value) == text + "\n" + " " * 15 + "^"
    with pytest.raises(ExprError) as info:
        compile_filter("x $ 1")
    assert format_error("x $ 1", info.value).splitlines() == ["x $ 1", "  ^"]


def test_empty_expression_matches_everything():
    flt = compile_filter("   ")
    assert flt.is_empty and not flt.needs_decode and not flt.needs_data
    assert flt.matches(0, b"\xff garbage", "data_crc", 0)


def test_needs_decode_only_for_features_and_kind():
    assert not compile_filter('status != "ok" or size > 1e5').needs_decode
    assert compile_filter('status != "ok" or size > 1e5').needs_data
    assert not compile_filter("index < 10 and offset > 0").needs_data
    assert compile_filter("kind == 'raw'").needs_decode
    assert compile_filter("has(x)").needs_decode
    assert compile_filter("len(x) == 0").needs_decode
    flt = compile_filter("`status` == 1 or len(a/b) > 2 or index > 3")
    assert flt.features == {"status", "a/b"} and flt.properties == {"index"}


# ---------------------------------------------------------------- evaluation

REC = example(label=[3], image__height=[120], image__width=[160], score=[0.1],
              cls=["cat", "dog"], bbox=[0.25, 0.5, 0.75], text=["A red rose"], blob=[b"\xff\xd8\x00"],
              empty=[], **{"my feature": [7], "status": ["draft"]})


@pytest.mark.parametrize("text, expected", [
    ("label == 3", True), ("label == 4", False), ("label != 3", False), ("label != 4", True),
    ("label == 3.0", True), ("label < 3.5", True), ("label > 3", False), ("label >= 3", True), ("label <= 2", False),
    ("image/height > 100 and image/width > 150", True), ("image/height > 100 and image/width > 200", False),
    ("score == 0.1", True),  # the stored float32 0.1 equals the literal rounded to float32
    ("score < 0.1", False), ("score <= 0.1", True), ("score > 0.09999", True),
    ('"cat" in cls', True), ('"cow" in cls', False), ('"cow" not in cls', True), ("cls == 'dog'", True),
    ("cls != 'dog'", False), ("cls in ['cow', 'dog']", True), ("label in [1, 2]", False), ("label in [2, 3]", True),
    ("cls < 'b'", False), ("cls > 'ca'", True),  # bytewise order, any value
    ("len(bbox) == 3", True), ("len(missing) == 0", True), ("len(empty) == 0", True), ("len(cls) >= 3", False),
    ("has(empty)", True), ("has(missing)", False), ("not has(missing)", True),
    ("has(`my feature`) and `my feature` == 7", True),
    ("`status` == 'draft'", True), ("status == 'draft'", False), ("status == 'ok'", True),
    ('text ~ "rose"', True), ('text ~ "^rose"', False), ('text ~ "(?i)RED"', True), ('cls ~ "^d"', True),
    ("label ~ '3'", False),  # numbers are not text
    ("missing == 1", False), ("missing != 1", True), ("missing < 1", False), ("'x' in missing", False),
    ("label == 'cat'", False), ("cls == 3", False), ("label != 'cat'", True),  # type mismatch: unequal, no error
    ("blob == 3", False), ("blob ~ 'x'", False),
    ("image/height > image/width", False), ("image/width > image/height", True),  # feature against feature
    ("label == label", True), ("label == cls", False),
    ("bbox > 0.7", True), ("bbox > 0.8", False), ("bbox < 0.3 and bbox > 0.7", True),  # any value, each side
    ("kind == 'example'", True), ("index == 5", True), ("offset == 1024", True), ("size == %d" % len(REC), True),
    ("1 == 1", True), ("1 == 2", False), ("'a' in ['a']", True), ("1 == 'a'", False), ("3 == label", True),
    ("3 < label", False), ("2 < label", True),
    ("label == 99999999999999999999999", False), ("score < 1e39", True), ("score < 99999999999999999999999", True),
])
def test_evaluation(text, expected):
    assert m(text, REC, index=5, offset=1024) is expected


def test_record_properties():
    assert m('status == "data_crc"', b"x", status="data_crc")
    assert compile_filter('status != "ok"').matches(0, b"", "truncated", 0)
    from codec.format.framing import RecordStatus
    flt = compile_filter('status == "ok"')
    assert flt.matches(0, b"", RecordStatus.UNCHECKED, 0) and flt.matches(0, b"", RecordStatus.OK, 0)
    assert not flt.matches(0, b"", RecordStatus.LENGTH_CRC, 0)
    assert compile_filter("size == 10").matches(0, b"abc", "ok", 0, size=10)  # the record's stated length
    assert m('kind == "raw"', b"\x08\x01")  # a varint field: not an Example
    assert m('kind == "example"', b"")
    assert m("has(x) or len(x) > 0 or x == 1", b"\x08\x01") is False  # raw records have no features


def test_sequence_example_resolves_context_first_then_feature_lists():
    rec = sequence_example({"length": [3], "id": ["a"]},
                           {"frames": [[b"f0"], [b"f1"], [b"f2"]], "tokens": [[1, 2], [3], [4, 5, 6]], "length": [[9]]})
    assert m("kind == 'sequence_example'", rec)
    assert m("length == 3", rec) and not m("length == 9", rec)  # the context wins
    assert m("len(frames) == 3", rec)  # steps
    assert m("len(tokens) == 3", rec)
    assert m("tokens == 6", rec) and m("5 in tokens", rec) and not m("tokens > 6", rec)  # values of all steps
    assert m("frames == 'f1'", rec) and m("frames ~ '^f[0-2]$'", rec)
    assert m("has(frames) and has(id) and not has(nothing)", rec)
    assert m("len(id) == 1", rec)


def test_nan_and_inf_values():
    rec = example(x=[math.nan, math.inf])
    assert m("x > 1e30", rec)
    assert not m("x == 1", rec)
    assert m("x != 1", rec)


def test_decoded_record_can_be_passed_in():
    from codec.decode.decoder import decode_record

    flt = compile_filter("label == 3")
    assert flt.matches(0, b"", "ok", 0, decoded=decode_record(REC))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab/_.-`'\"\\ ()[],=!<>~01239e+.") +
                                ["and", "or", "not", "in", "len(", "has(", "status", "x", "é", "\t", "==", " "]),
                max_size=40).map("".join) | st.text(max_size=30))
def test_random_text_never_raises_anything_but_expr_error(text):
    try:
        flt = compile_filter(text)
    except ExprError as exc:
        assert 0 <= exc.position <= len(text)
        assert f"at position {exc.position}" in str(exc)
        format_error(text, exc)
        return
    for data in (REC, b"", b"\x08\x01", b"\n\x05garbage"):
        assert flt.matches(1, data, "ok", 0) in (True, False)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_random_record_bytes_never_raise(data):
    flt = compile_filter('label == 3 or "cat" in cls or text ~ "r" or len(x) > 1 or has(y) or kind == "raw" '
                         'or size > 10 or x < y')
    assert flt.matches(0, data, "ok", 0) in (True, False)


# ---------------------------------------------------------------- whole files

def test_filter_iter_on_flowers_finds_five_per_label():
    with TFRecordFile(fixture_path("flowers_jpeg.tfrecord")) as f:
        f.build_index()
        out = array("Q")
        progress = list(filter_iter(f, compile_filter("label == 3"), out, every=4))
        assert len(out) == 5 and out.typecode == "Q"
        assert all(isinstance(p, IndexProgress) for p in progress)
        assert progress[-1].done and progress[-1].records == 25 == progress[-1].total
        assert [p.records for p in progress[:-1]] == [4, 8, 12, 16, 20, 24]
        texts = {MANIFEST["flowers_jpeg.tfrecord"]["records"][i]["json"]["features"]["feature"]["text"]
                 ["bytesList"]["value"][0] for i in out}
        assert len(texts) == 1  # one class
        assert list(matching_indices(f, compile_filter('text ~ "^(roses|tulips)$"'))) == \
            sorted(set(matching_indices(f, compile_filter("text == 'roses'"))) |
                   set(matching_indices(f, compile_filter("text == 'tulips'"))))


def test_filter_iter_structured_and_subset():
    with TFRecordFile(fixture_path("structured.tfrecord.gz")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter("int_col >= 95"))) == [95, 96, 97, 98, 99]
        assert list(matching_indices(f, compile_filter("int_col < 3"), indices=[50, 2, 1, 7])) == [2, 1]
        assert list(matching_indices(f, compile_filter("byte_col == 'row-42'"))) == [42]
        assert list(matching_indices(f, compile_filter("index >= 98"))) == [98, 99]
        assert list(matching_indices(f, compile_filter(""), indices=[3, 1])) == [3, 1]


def test_filter_by_status_finds_the_damaged_record():
    with TFRecordFile(fixture_path("corrupt_data_crc.tfrecord")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter('status == "data_crc"'))) == [5]
        assert len(matching_indices(f, compile_filter('status == "ok"'))) == 29
        assert len(f.problems) == 1  # recorded while filtering
    with TFRecordFile(fixture_path("truncated.tfrecord")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter('status != "ok"'))) == [20]


def test_filter_kinds_and_sequences():
    with TFRecordFile(fixture_path("raw_strings.tfrecord")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter('kind == "raw"'))) == [0, 1]
    with TFRecordFile(fixture_path("sequence_examples.tfrecord")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter("len(my_ints) > 7"))) == [7, 8, 9]
        assert list(matching_indices(f, compile_filter("length == len(my_ints)"))) == list(range(10))
    with TFRecordFile(fixture_path("zero_length_record.tfrecord")) as f:
        f.build_index()
        assert list(matching_indices(f, compile_filter("size == 0"))) == [0, 2]
        assert list(matching_indices(f, compile_filter("has(a)"))) == [1]
