"""Filters that cannot hang or crash, and that name a feature no record has: RE2, size and depth limits,
unknown keys with suggestions, in the library and through ``tfrlens-cli --where``."""
from __future__ import annotations

import re
import time
from array import array

import pytest

import codec.query.filter as query
import codec.query.lexer as query_lexer
from codec import TFRecordFile
from codec.cli.main import main
from codec.decode.example_proto import SequenceExample
from codec.query.filter import ExprError, FeatureCheck, compile_filter, filter_iter, matching_indices, missing_features
from codec.query.parser import MAX_DEPTH
from codec.query.regex import regex_search
from codec.storage.writer import write_records
from tests.builders import example, fixture_path


def run(capfd, *argv) -> tuple[int, str, str]:
    """The CLI in-process; ``capfd`` so that anything a C library prints on fd 2 shows too."""
    code = main([str(a) for a in argv])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def rare_file(tmp_path):
    """1,200 records with ``label``; only the last one has ``rare``; record 5 has the text 'rare' as a value."""
    records = [example(label=[i % 3]) for i in range(1200)]
    records[5] = example(label=[2], note=["rare"])
    records[-1] = example(label=[0], rare=[7])
    path = tmp_path / "rare.tfrecord"
    write_records(str(path), records)
    return str(path)


# ---------------------------------------------------------------- RE2

def test_catastrophic_pattern_finishes_at_once():
    pattern = "(a+)+$"
    text = "a" * 40 + "!"
    assert re.compile(pattern)  # Python's re would backtrack about 2**40 times on `text`
    flt = compile_filter(f'text ~ "{pattern}"')
    records = [example(text=[text]) for _ in range(200)] + [example(text=["a" * 40])]
    start = time.perf_counter()
    hits = [flt.matches(i, data) for i, data in enumerate(records)]
    assert time.perf_counter() - start < 2.0
    assert hits == [False] * 200 + [True]


@pytest.mark.parametrize("text, construct", [
    (r'text ~ "(a)\\1"', "\\\\1"),            # a backreference
    (r'text ~ "ab(?=c)"', "(?=c)"),           # lookahead
    (r'text ~ "x(?<=a)b"', "(?<=a)"),         # lookbehind
    (r'text ~ "(?P<n>a)(?P=n)"', "(?P=n)"),   # a named backreference
])
def test_patterns_re2_cannot_run_are_refused_at_their_construct(text, construct, capfd):
    with pytest.raises(ExprError) as info:
        compile_filter(text)
    exc = info.value
    assert "bad regular expression" in str(exc) and "RE2 syntax" in str(exc)
    assert "no backreferences or lookaround" in str(exc)
    assert text[exc.position:].startswith(construct) or text[exc.position:].startswith(construct[:2])
    assert capfd.readouterr().err == ""  # RE2 logs nothing of its own


def test_regex_error_position_counts_escapes_in_the_string():
    text = r'name ~ "\t\x41(?=b)"'
    with pytest.raises(ExprError) as info:
        compile_filter(text)
    assert text[info.value.position:].startswith("(?=b)")


@pytest.mark.parametrize("pattern", ["(?i)rose", "^ro", "s$", "[a-c]+x", r"\d{2}", "é", "^.$", "r.se|tul",
                                     "(?s)a.b", "^$", "colou?r", r"\bcat\b"])
def test_re2_agrees_with_python_on_ordinary_patterns(pattern):
    values = ["rose", "Roses", "tulips", "abcx", "no 42 here", "café", "é", "ráse", "a\nb", "", "color",
              "colour", "bobcat", "a cat"]
    flt = compile_filter(f"text ~ {pattern!r}")
    for value in values:
        expected = re.search(pattern, value) is not None
        assert flt.matches(0, example(text=[value]) if value else example(text=[b""])) is expected, (pattern, value)


def test_regex_searches_bytes_values_without_decoding_them():
    jpeg_like = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"
    data = example(blob=[jpeg_like])
    assert compile_filter('blob ~ "JFIF"').matches(0, data)
    assert not compile_filter('blob ~ "^JFIF"').matches(0, data)
    assert compile_filter('kind ~ "^ex"').matches(0, data)  # properties are text too
    assert compile_filter('"abc" ~ "b"').matches(0, data) and not compile_filter('"abc" ~ "d"').matches(0, data)


def test_fast_and_public_re2_paths_agree(monkeypatch):
    import re2

    cases = [("(?i)rose", b"a ROSE"), ("^a+$", b"a" * 40 + b"!"), ("caf\u00e9", "café".encode()), ("x", b"")]
    fast = [regex_search(p)(data) for p, data in cases]
    regex_search.cache_clear()

    class Public:  # a compiled pattern with only the documented API, as a later google-re2 might give
        def __init__(self, compiled):
            self.search = compiled.search

    compile_ = re2.compile
    monkeypatch.setattr(re2, "compile", lambda pattern, options=None: Public(compile_(pattern, options)))
    try:
        public = [regex_search(p)(data) for p, data in cases]
    finally:
        regex_search.cache_clear()
    assert fast == public == [True, False, True, False]


# ---------------------------------------------------------------- size and depth

@pytest.mark.slow
def test_a_long_or_chain_compiles_without_recursion_and_runs_as_one_lookup():
    text = " or ".join(f"label == {i}" for i in range(0, 100_000, 2))
    flt = compile_filter(text)
    assert flt.features == {"label"} and flt.feature_positions == {"label": 0}
    for value, expected in ((0, True), (1, False), (99_998, True), (100_000, False), (12_346, True)):
        assert flt.matches(0, example(label=[value])) is expected
    assert not flt.matches(0, example(other=[0]))


@pytest.mark.parametrize("text, record, expected", [
    ("x == 1 or x == 2.5 or x == 'a'", example(x=[2.5]), True),
    ("x == 1 or x == 2.5 or x == 'a'", example(x=["a"]), True),
    ("x == 1 or x == 2.5 or x == 'a'", example(x=[3]), False),
    ("x == 0.1 or x == 0.2", example(x=[0.1]), True),         # float32 rounding kept
    ("x in [3, 4] or x == 9 or y == 1", example(y=[1]), True),
    ("x in [3, 4] or x == 9 or y == 1", example(x=[4]), True),
    ("x in [3, 4] or 1 == x", example(x=[1]), True),
    ("len(x) == 2 or len(x) == 3", example(x=[1, 2, 3]), True),
    ("len(x) == 2 or len(x) == 3", example(x=[1]), False),
    ("index == 4 or index == 7", example(), True),
    ("status == 'data_crc' or status == 'ok'", example(), True),
    ("x != 1 or x != 2", example(x=[1]), True),
    ("not (x == 1 or x == 2)", example(x=[2]), False),
])
def test_merged_equalities_keep_the_meaning_of_or(text, record, expected):
    assert compile_filter(text).matches(7, record) is expected


def test_too_many_conditions_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(query_lexer, "MAX_CONDITIONS", 1000)
    compile_filter(" or ".join(["x == 1"] * 1000))
    with pytest.raises(ExprError) as info:
        compile_filter(" or ".join(["x == 1"] * 1001))
    assert str(info.value).startswith("filter too long: more than 1,000 conditions")
    with pytest.raises(ExprError, match="filter too long"):
        compile_filter("x in [" + ", ".join(["1"] * 1002) + "]")


def test_nesting_is_capped_with_a_clear_error_not_a_recursion_error():
    ok = "(" * MAX_DEPTH + "x == 1" + ")" * MAX_DEPTH
    assert compile_filter(ok).matches(0, example(x=[1]))
    assert compile_filter("not " * MAX_DEPTH + "x == 1").matches(0, example(x=[1])) is True  # an even count
    for text, position in (("(" * (MAX_DEPTH + 1) + "x == 1" + ")" * (MAX_DEPTH + 1), MAX_DEPTH),
                           ("(" * 100_000 + "x == 1", MAX_DEPTH),
                           ("not " * (MAX_DEPTH + 1) + "x == 1", 4 * MAX_DEPTH),
                           ("(not " * 60 + "x == 1" + ")" * 60, 5 * 50)):
        with pytest.raises(ExprError) as info:
            compile_filter(text)
        assert info.value.position == position
        assert f"nested too deeply (more than {MAX_DEPTH} levels" in str(info.value)


# ---------------------------------------------------------------- unknown features

def test_a_misspelt_key_is_missing_with_the_closest_key():
    with TFRecordFile(fixture_path("detection.tfrecord")) as f:
        f.build_index()
        flt = compile_filter("image/object/clas/label == 3 and image/width > 0")
        [missing] = missing_features(f, flt)
        assert (missing.name, missing.position) == ("image/object/clas/label", 0)
        assert missing.suggestions == ("image/object/class/label",)
        assert missing.hint() == "did you mean 'image/object/class/label'?"
        assert missing_features(f, compile_filter("image/object/class/label == 3 and has(image/width)")) == []
        [tail] = missing_features(f, compile_filter("index > 2 or xmin < 0.5"))
        assert tail.position == 13 and tail.suggestions == ("image/object/bbox/xmin",)
        [far] = missing_features(f, compile_filter("zzz == 1"))
        assert far.suggestions == () and far.hint() == ""
        assert missing_features(f, compile_filter("index > 2 and status == 'ok'")) == []  # no feature named


def test_names_are_found_in_sequence_examples_context_and_lists(tmp_path):
    se = SequenceExample()
    se.context.feature["length"].int64_list.value.append(2)
    se.feature_lists.feature_list["frames"].feature.add().bytes_list.value.append(b"f0")
    path = tmp_path / "seq.tfrecord"
    write_records(str(path), [se.SerializeToString()])
    with TFRecordFile(str(path)) as f:
        f.build_index()
        assert missing_features(f, compile_filter("length == 2 and len(frames) == 1")) == []
        [m] = missing_features(f, compile_filter("len(frame) == 1"))
        assert m.suggestions == ("frames",)


def test_a_key_only_a_late_record_has_is_not_missing(rare_file):
    with TFRecordFile(rare_file) as f:
        f.build_index()
        flt = compile_filter("rare == 7")
        check = FeatureCheck(flt)
        progress = list(query.feature_check_iter(f, flt, check))
        assert check.unseen == {} and progress[-1].done
        assert missing_features(f, flt) == []
        # 'rare' also stands as a value in record 5: its bytes are parsed, and the key is not there
        [m] = missing_features(f, compile_filter("raer == 7 or note == 'rare'"))
        assert m.name == "raer"
        assert len(missing_features(f, compile_filter("`rare\u00e9` == 1"))) == 1


def test_filter_iter_tells_which_names_no_record_had():
    with TFRecordFile(fixture_path("flowers_jpeg.tfrecord")) as f:
        f.build_index()
        flt = compile_filter("lable == 3 or text == 'roses'")
        check = FeatureCheck(flt)
        out = array("Q")
        for _ in filter_iter(f, flt, out, check=check):
            pass
        assert len(out) == 5
        [m] = check.missing()
        assert (m.name, m.position, m.suggestions) == ("lable", 0, ("label",))
        assert check.records == 25
        found = FeatureCheck(compile_filter("label == 3"))
        for _ in filter_iter(f, compile_filter("label == 3"), array("Q"), check=found):
            pass
        assert found.missing() == [] and found.records == 1  # nothing left to look for after the first record


def test_an_empty_file_reports_nothing_missing():
    with TFRecordFile(fixture_path("empty.tfrecord")) as f:
        f.build_index()
        assert missing_features(f, compile_filter("label == 3")) == []
        assert list(matching_indices(f, compile_filter("label == 3"))) == []


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("command", [["cat"], ["stats"], ["schema"], ["export", "--to", "out.jsonl", "--format",
                                                                       "jsonl"]])
def test_cli_refuses_a_misspelt_key_with_the_suggestion(capfd, command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capfd, *command, "--where", "image/object/clas/label == 3",
                         fixture_path("detection.tfrecord"))
    assert code == 2 and out == ""
    assert err == ("tfrlens-cli: unknown feature 'image/object/clas/label' in --where "
                   "(did you mean image/object/class/label?)\n")
    assert not (tmp_path / "out.jsonl").exists()


def test_cli_names_every_missing_key_on_one_line(capfd):
    code, _, err = run(capfd, "cat", "--where", "zzz == 1 or lable == 2 or label == 3",
                       fixture_path("flowers_jpeg.tfrecord"))
    assert code == 2
    assert err == "tfrlens-cli: unknown feature 'zzz' in --where (no record has it); nor does any record " \
                  "have 'lable'\n"


def test_cli_keeps_a_key_only_later_records_have(capfd, rare_file):
    code, out, err = run(capfd, "cat", "--json", "--where", "rare == 7", rare_file)
    assert code == 0 and err == "" and out.count("\n") == 1 and '"index": 1199' in out
    code, out, err = run(capfd, "stats", "--json", "--where", "rare == 7 or label == 1", rare_file)
    assert code == 0 and '"records": 401' in out.replace(" ", "").replace('"records":', '"records": ')
    code, out, err = run(capfd, "cat", "--range", "0:3", "--where", "rare == 7", rare_file)
    assert code == 0 and out == "" and err == ""  # in the file, just not in the range asked for


def test_cli_unsupported_regex_is_one_line_naming_re2(capfd):
    code, out, err = run(capfd, "cat", "--where", r'text ~ "(ro)se\\1"', fixture_path("flowers_jpeg.tfrecord"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("tfrlens-cli: bad --where expression") and "RE2 syntax" in err
    assert "at position 14" in err


def test_cli_catastrophic_regex_returns_at_once(capfd, tmp_path):
    path = tmp_path / "aaa.tfrecord"
    write_records(str(path), [example(text=["a" * 40 + "!"])] * 50 + [example(text=["a" * 40])])
    start = time.perf_counter()
    code, out, err = run(capfd, "cat", "--json", "--where", 'text ~ "(a+)+$"', path)
    assert time.perf_counter() - start < 5.0
    assert code == 0 and out.count("\n") == 1 and '"index": 50' in out
