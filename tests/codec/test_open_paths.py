"""codec.sources.open.open_paths: one way to open a file, files, a folder, a glob or a TFDS folder."""
from __future__ import annotations

import os
import shutil

import pytest

from codec.datasets.payload_choice import Choice, choose_for
from codec.errors import TFRecordError
from codec.sources.open import open_paths, opens_as_set
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.listing import expand_inputs, is_sidecar
from tests.builders import FIXTURES, MANIFEST, fixture_path

SHARDS = [fixture_path(f"shards/train-0000{k}-of-00004.tfrecord") for k in range(4)]
TFDS_DEMO = str(FIXTURES / "payloads" / "tfds" / "lens_tfds_demo" / "1.2.0")


def _asked(calls: list):
    """A chooser that records what it was asked and answers as the codec would."""
    def choose(name, paths):
        calls.append((name, list(paths)))
        return choose_for(paths)
    return choose


def test_one_file_opens_as_a_file_chosen_before_opening():
    calls: list = []
    path = fixture_path("structured.tfrecord")
    with open_paths([path], _asked(calls)).source as f:
        assert isinstance(f, TFRecordFile) and f.path == path
        f.build_index()
        assert len(f) == len(MANIFEST["structured.tfrecord"]["records"])
    assert calls == [(path, [path])]


def test_a_folder_opens_as_a_set_named_by_the_folder():
    folder = os.path.dirname(SHARDS[0])
    opened = open_paths([folder])
    with opened.source as s:
        assert opened.is_set and isinstance(s, ShardSet) and s.path == folder
        assert [shard.path for shard in s.shards] == SHARDS
    assert opens_as_set(folder) and not opens_as_set(SHARDS[0])


def test_several_files_are_chosen_for_once_the_set_has_its_name():
    calls: list = []
    opened = open_paths(SHARDS[:2], _asked(calls))
    with opened.source as s:
        assert [shard.path for shard in s.shards] == SHARDS[:2]
        assert calls == [(s.path, SHARDS[:2])]


def test_as_set_makes_one_file_a_set_of_one_shard():
    with open_paths(SHARDS[:1], as_set=True).source as s:
        assert isinstance(s, ShardSet) and s.path == SHARDS[0] and len(s.shards) == 1


def test_the_choice_is_given_to_the_source():
    chosen = Choice(payload=None, labels=object(), files=[SHARDS[0]])
    opened = open_paths([SHARDS[0]], lambda *_: chosen)
    with opened.source as f:
        assert opened.choice is chosen and f.labels is chosen.labels


def test_a_tfds_folder_opens_its_shards_split_by_split(tmp_path):
    folder = tmp_path / "demo"
    shutil.copytree(TFDS_DEMO, folder)
    opened = open_paths([str(folder)])
    with opened.source as s:
        dataset = opened.choice.dataset
        assert dataset is not None and s.payload is opened.choice.payload is not None
        assert [shard.path for shard in s.shards] == [os.fspath(p) for split in dataset.splits.values()
                                                      for p in split.files]
        assert s.path == str(folder)


def test_what_cannot_be_opened_is_one_line(tmp_path):
    with pytest.raises(TFRecordError) as err:
        open_paths([fixture_path("not_a_tfrecord.jpg")])
    assert "\n" not in str(err.value)
    with pytest.raises(TFRecordError) as err:
        open_paths([str(tmp_path / "nothing-*.tfrecord")])
    assert str(err.value) == f"no files match {tmp_path / 'nothing-*.tfrecord'}"


def test_a_datasets_companion_files_are_sidecars_and_a_stray_file_is_not():
    for name in ("label_map.pbtxt", "dataset_info.json", "features.json", "MANIFEST.json", "README", "README.md",
                 "LICENSE.txt", "objects-label.labels.txt", "labels.txt", "frames.proto", "classes.yaml"):
        assert is_sidecar(name), name
    for name in ("train-00000-of-00004.tfrecord", "notes.bin", "image.jpg", "data.txt", "shard.gz"):
        assert not is_sidecar(name), name
    # the doctor's folder: its shards, nothing said of its label map or manifest
    paths, notes = expand_inputs([os.fspath(FIXTURES / "doctor")])
    assert [os.path.basename(p) for p in paths] == ["eval-00000-of-00001.tfrecord", "train-00000-of-00003.tfrecord",
                                                     "train-00001-of-00003.tfrecord", "train-00002-of-00003.tfrecord"]
    assert notes == []
