"""Label maps: loading (pbtxt, JSON, names lists), errors, discovery, class-id keys, and filters on names."""
from __future__ import annotations

import base64
import json
import shutil

import pytest

from codec import TFRecordFile
from codec.datasets.label_maps import (
    LabelMap,
    LabelNames,
    find_label_map,
    is_label_key,
    label_keys,
    load_label_map,
    names_text,
)
from codec.decode.example_proto import Example
from codec.errors import SchemaError
from codec.query.filter import ExprError, compile_filter, matching_indices
from tests.builders import FIXTURES, MANIFEST, fixture_path

LABEL_MAPS = FIXTURES / "payloads" / "label_maps"
PAYLOADS = json.loads((FIXTURES / "payloads" / "MANIFEST.json").read_text())
REFERENCE = LABEL_MAPS / "label_map.pbtxt"
LABEL = "image/object/class/label"
TFDS = PAYLOADS["tfds/lens_tfds_demo/1.2.0"]


def detection_ids() -> list[list[int]]:
    """The class ids of each record of detection.tfrecord, as the fixtures' manifest has them."""
    return [[int(v) for v in r["json"]["features"]["feature"][LABEL]["int64List"]["value"]]
            for r in MANIFEST["detection.tfrecord"]["records"]]


def detection_texts() -> list[list[str]]:
    return [[base64.b64decode(v).decode() for v in r["json"]["features"]["feature"]["image/object/class/text"]
             ["bytesList"]["value"]] for r in MANIFEST["detection.tfrecord"]["records"]]


def reference_names() -> LabelNames:
    return LabelNames.for_keys(load_label_map(REFERENCE), [LABEL, "image/height", "image/object/class/text"])


def matches(path: str, text: str, names: LabelNames | None) -> list[int]:
    with TFRecordFile(path) as f:
        f.build_index()
        return list(matching_indices(f, compile_filter(text, names=names)))


def schema_error(path) -> str:
    with pytest.raises(SchemaError) as info:
        load_label_map(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    return message


# ---------------------------------------------------------------- loading

def test_reference_map_gives_the_manifest_names():
    lm = load_label_map(REFERENCE)
    assert lm.names == {int(k): v for k, v in PAYLOADS["label_map.pbtxt"]["names"].items()}
    assert lm.path == REFERENCE
    assert [lm.name(i) for i in (1, 2, 3, 4)] == ["Cat", "Dog", "bird", None]


def test_names_and_display_names_find_their_id_in_any_case():
    lm = load_label_map(REFERENCE)
    assert lm.aliases == {"cat": 1, "dog": 2, "bird": 3}
    assert [lm.id_of(t) for t in ("cat", "Cat", "CAT", "dog", "BIRD", "cow")] == [1, 1, 1, 2, 3, None]


def test_extended_map_keeps_background_and_skips_fields_it_does_not_use():
    lm = load_label_map(LABEL_MAPS / "extended.pbtxt")
    assert lm.names == {0: "background", 1: "person", 2: "bicycle", 7: "Animal"}
    assert lm.id_of("/m/01g317") == lm.id_of("Person") == 1  # the name (a MID) and the display name
    assert lm.spellings[1] == ("person", "/m/01g317")
    assert lm.id_of("animal") == 7


def test_json_label_maps(tmp_path):
    assert load_label_map(LABEL_MAPS / "label_map.json").names == load_label_map(REFERENCE).names
    listed = tmp_path / "classes.json"
    listed.write_text('["background", "cat"]')
    assert load_label_map(listed).names == {0: "background", 1: "cat"}
    coco = tmp_path / "categories"  # no suffix: JSON by its first character
    coco.write_text('[{"id": 1, "name": "person"}, {"id": 3, "name": "car", "display_name": "Car"}]')
    lm = load_label_map(coco)
    assert lm.names == {1: "person", 3: "Car"}
    assert lm.id_of("car") == 3


def test_names_list_is_read_as_tfds_reads_names_files():
    lm = load_label_map(LABEL_MAPS / "names.labels.txt")  # a blank line and spaces around a name
    assert lm.names == {0: "cat", 1: "dog", 2: "bird"}
    tfds = load_label_map(LABEL_MAPS / "tfds_label.labels.txt")
    assert [tfds.names[i] for i in range(len(tfds))] == TFDS["class_names"]


def test_form_is_decided_by_suffix_then_content(tmp_path):
    pbtxt_named_txt = tmp_path / "map.txt"
    pbtxt_named_txt.write_text("# comment\n\nitem { id: 4 name: 'cow' }\n")
    assert load_label_map(pbtxt_named_txt).names == {4: "cow"}
    bare = tmp_path / "labelmap"
    bare.write_text("???\nperson\n")  # a TFLite labelmap.txt
    assert load_label_map(bare).names == {0: "???", 1: "person"}
    bracket = tmp_path / "odd.txt"
    bracket.write_text("[unknown]\ncat\n")  # .txt is a names list even when a name starts like JSON
    assert load_label_map(bracket).names == {0: "[unknown]", 1: "cat"}


# ---------------------------------------------------------------- errors

def test_text_format_error_names_file_line_and_column():
    message = schema_error(LABEL_MAPS / "bad_syntax.pbtxt")
    assert "line 7 column 8" in message
    assert 'Expected ":"' in message


def test_unknown_top_level_text_is_an_error_with_its_line(tmp_path):
    path = tmp_path / "label_map.pbtxt"
    path.write_text("item { id: 1 name: 'cat' }\n\nitem { id: 'two' name: 'dog' }\n")
    message = schema_error(path)
    assert "line 3" in message and "id" in message


def test_duplicate_ids_name_both_items():
    message = schema_error(LABEL_MAPS / "duplicate_ids.pbtxt")
    assert "id 1 is given twice" in message
    assert "'Cat'" in message and "'lynx'" in message


def test_duplicate_ids_in_json(tmp_path):
    dup = tmp_path / "map.json"
    dup.write_text('{"1": "cat", "1": "dog"}')
    message = schema_error(dup)
    assert "'1' is given twice" in message and "'cat'" in message and "'dog'" in message
    same = tmp_path / "same.json"
    same.write_text('{"1": "cat", "01": "dog"}')
    assert "id 1 is given twice" in schema_error(same)


def test_missing_file_folder_empty_and_bad_bytes(tmp_path):
    assert "no such file" in schema_error(tmp_path / "nope.pbtxt")
    assert "folder" in schema_error(tmp_path)
    empty = tmp_path / "label_map.pbtxt"
    empty.write_text("# nothing yet\n")
    assert "no classes" in schema_error(empty)
    latin = tmp_path / "labels.txt"
    latin.write_bytes(b"cat\ndog\nk\xf6nig\n")
    assert "line 3" in schema_error(latin)


def test_items_need_an_id_and_a_name(tmp_path):
    no_id = tmp_path / "a.pbtxt"
    no_id.write_text("item { name: 'cat' }")
    assert "item 1 'cat' has no id" in schema_error(no_id)
    misspelt = tmp_path / "b.pbtxt"
    misspelt.write_text("item { id: 1 name: 'cat' }\nitem { id: 2 nmae: 'dog' }")  # skipped unknown field
    assert "item 2 (id 2) has neither name nor display_name" in schema_error(misspelt)


def test_json_errors_say_where(tmp_path):
    broken = tmp_path / "map.json"
    broken.write_text('{"1": "cat",\n "2": }')
    assert "line 2 column" in schema_error(broken)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"cat": 1}')
    assert "'cat' is not a class id" in schema_error(wrong)


def test_hostile_nesting_is_refused(tmp_path):
    deep = tmp_path / "deep.pbtxt"
    deep.write_text("item { id: 1 name: 'a' " + "x { " * 50_000 + "}" * 50_000 + " }")
    assert "nested too deeply" in schema_error(deep)


# ---------------------------------------------------------------- discovery

def test_found_beside_a_file_and_in_a_folder(tmp_path):
    data = tmp_path / "train.tfrecord"
    shutil.copy(fixture_path("detection.tfrecord"), data)
    assert find_label_map(data) is None
    assert find_label_map(tmp_path) is None
    (tmp_path / "zoo_label_map.pbtxt").write_text("item { id: 1 name: 'z' }")
    (tmp_path / "coco_label_map.pbtxt").write_text("item { id: 1 name: 'c' }")
    assert find_label_map(data) == tmp_path / "coco_label_map.pbtxt"  # first by name
    shutil.copy(REFERENCE, tmp_path / "label_map.pbtxt")
    assert find_label_map(data) == tmp_path / "label_map.pbtxt"  # the plain name comes first
    assert find_label_map(tmp_path) == tmp_path / "label_map.pbtxt"
    assert load_label_map(find_label_map(data)).names[1] == "Cat"


def test_discovery_ignores_folders_and_other_suffixes(tmp_path):
    (tmp_path / "label_map.pbtxt").mkdir()
    (tmp_path / "label_map.json").write_text('{"1": "cat"}')
    assert find_label_map(tmp_path / "data.tfrecord") is None


# ---------------------------------------------------------------- which features carry class ids

def test_label_keys_rule():
    keys = [LABEL, "image/class/label", "label", "labels", "objects/label", "Class", "class_id", "category_id",
            "image/object/class/text", "label_count", "image/height", "labeled", LABEL, "x/classes"]
    assert label_keys(keys) == [LABEL, "image/class/label", "label", "labels", "objects/label", "Class", "class_id",
                                "category_id", "x/classes"]
    assert not is_label_key("image/object/class/text")


def test_label_names_for_keys_and_lists():
    lm = load_label_map(REFERENCE)
    names = LabelNames.for_keys(lm, [LABEL, "image/object/class/text", "image/height"])
    assert names.keys == (LABEL,)
    assert names.name(LABEL, 2) == "Dog" and names.name(LABEL, 9) is None and names.name("image/height", 1) is None
    assert names.id_of(LABEL, "DOG") == 2 and names.id_of("label", "dog") is None
    tfds = LabelNames.from_lists({"label": TFDS["class_names"], "objects/label": TFDS["class_names"]})
    assert tfds.keys == ("label", "objects/label")
    for split in TFDS["splits"].values():
        for record in split["records"]:
            label, objects = record["label"], record["objects/label"]
            assert tfds.name("label", label["value"]) == label["name"]
            assert [tfds.name("objects/label", v) for v in objects["value"]] == objects["name"]
            assert tfds.id_of("label", label["name"].upper()) == label["value"]
    both = names.merged(tfds)
    assert both.keys == (LABEL, "label", "objects/label") and both.name("label", 0) == "cat"
    assert not LabelNames() and LABEL in names


def test_shared_spelling_finds_every_id_but_shows_its_own():
    lm = LabelMap.from_entries([(1, "cat", "Cat"), (2, "feline", "cat"), (3, "dog", "")])
    assert lm.ids_of("CAT") == (1, 2)
    assert lm.id_of("cat") == 1
    assert LabelMap.from_names({5: "a"}).names == {5: "a"}
    direct = LabelMap({4: "Cow"}, {"cow": 4, "vache": 4})
    assert direct.ids_of("VACHE") == (4,) and direct.spellings == {4: ("Cow",)}


def test_names_text():
    lm = load_label_map(REFERENCE)
    assert names_text([1, 3, 7], lm) == "1 (Cat), 3 (bird), 7"
    assert names_text([1, 2], None) == "1, 2"


# ---------------------------------------------------------------- filters on names

def expected(condition) -> list[int]:
    return [i for i, ids in enumerate(detection_ids()) if condition(set(ids))]


@pytest.mark.parametrize("by_name, by_id, condition", [
    (f'{LABEL} == "cat"', f"{LABEL} == 1", lambda ids: 1 in ids),
    (f'{LABEL} == "Dog"', f"{LABEL} == 2", lambda ids: 2 in ids),
    (f'{LABEL} != "BIRD"', f"{LABEL} != 3", lambda ids: 3 not in ids),
    (f'{LABEL} in ["cat", "bird"]', f"{LABEL} in [1, 3]", lambda ids: ids & {1, 3}),
    (f'{LABEL} not in ["dog", 3]', f"{LABEL} not in [2, 3]", lambda ids: not ids & {2, 3}),
    (f'"dog" in {LABEL}', f"2 in {LABEL}", lambda ids: 2 in ids),
    (f'{LABEL} == "dog" and {LABEL} == "bird"', f"{LABEL} == 2 and {LABEL} == 3", lambda ids: {2, 3} <= ids),
    (f'{LABEL} == "dog" or {LABEL} == "bird" or size < 0', f"{LABEL} in [2, 3]", lambda ids: ids & {2, 3}),
    (f'{LABEL} ~ "^[Dd]o"', f"{LABEL} == 2", lambda ids: 2 in ids),
])
def test_filter_by_name_selects_what_ids_select(by_name, by_id, condition):
    path = fixture_path("detection.tfrecord")
    want = expected(condition)
    assert 0 < len(want) < len(detection_ids())
    assert matches(path, by_name, reference_names()) == matches(path, by_id, None) == want


def test_names_agree_with_the_text_feature():
    """detection.tfrecord stores each box's name beside its id: filtering by either finds the same records."""
    path = fixture_path("detection.tfrecord")
    for name in ("cat", "dog", "bird"):
        assert matches(path, f'{LABEL} == "{name}"', reference_names()) == \
            matches(path, f'"{name}" in image/object/class/text', None) == \
            [i for i, texts in enumerate(detection_texts()) if name in texts]


def test_without_names_a_string_never_equals_an_id():
    path = fixture_path("detection.tfrecord")
    assert matches(path, f'{LABEL} == "cat"', None) == []
    assert matches(path, 'image/object/class/text == "cat"', reference_names()) == expected(lambda ids: 1 in ids)
    assert matches(path, 'image/height == "cat"', reference_names()) == []  # names cover class ids only


def test_unknown_name_lists_the_classes():
    text = f'{LABEL} == 1 or {LABEL} in [2, "cow"]'
    with pytest.raises(ExprError) as info:
        compile_filter(text, names=reference_names())
    message = str(info.value)
    assert "\n" not in message
    assert "no class named 'cow'" in message
    assert "'Cat' (1), 'Dog' (2), 'bird' (3)" in message
    assert info.value.position == text.index('"cow"')
    with pytest.raises(ExprError, match=r"did you mean 'Cat'\?"):
        compile_filter(f'{LABEL} != "cta"', names=reference_names())


def test_long_name_lists_are_cut():
    many = LabelNames.from_lists({"label": [f"class{i}" for i in range(500)]})
    with pytest.raises(ExprError) as info:
        compile_filter('label == "zebra"', names=many)
    assert "and 480 more" in str(info.value)


def test_tfds_names_in_filters(tmp_path):
    """Examples built from the TFDS reference records, filtered by their ClassLabel names."""
    from codec import write_records

    records = TFDS["splits"]["train"]["records"]
    data = []
    for record in records:
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(record["label"]["value"])
        ex.features.feature["objects/label"].int64_list.value.extend(record["objects/label"]["value"])
        data.append(ex.SerializeToString())
    path = tmp_path / "tfds_like.tfrecord"
    write_records(path, data)
    names = LabelNames.from_lists({"label": TFDS["class_names"], "objects/label": TFDS["class_names"]})
    for name in TFDS["class_names"]:
        assert matches(str(path), f'label == "{name}"', names) == \
            [i for i, r in enumerate(records) if r["label"]["name"] == name]
        assert matches(str(path), f'objects/label == "{name.title()}"', names) == \
            [i for i, r in enumerate(records) if name in r["objects/label"]["name"]]
    assert matches(str(path), "label == 0", names) == [i for i, r in enumerate(records) if r["label"]["value"] == 0]


def test_bytes_values_of_a_named_key_still_compare_as_text():
    names = LabelNames.from_lists({"label": ["cat", "dog"]})
    flt = compile_filter('label == "dog"', names=names)
    as_text = Example()
    as_text.features.feature["label"].bytes_list.value.append(b"dog")
    as_id = Example()
    as_id.features.feature["label"].int64_list.value.append(1)
    other = Example()
    other.features.feature["label"].int64_list.value.append(0)
    assert [flt.matches(0, e.SerializeToString()) for e in (as_text, as_id, other)] == [True, True, False]
