"""Which split (train, eval, ...) a shard belongs to: by the user's globs, a TFDS dataset, or its name."""
from __future__ import annotations

import fnmatch
import os
import re

from codec.errors import UsageError

__all__ = ["parse_split_args", "split_of"]

# Words that name a split when they stand alone in a file (or folder) name, split at - _ . and /.
SPLIT_WORDS = frozenset({"train", "training", "eval", "evaluation", "val", "valid", "validation", "dev", "test",
                         "testing", "holdout"})
# TFDS: NAME-SPLIT.tfrecord-00000-of-00004 (the split may hold anything but "-" and ".")
_TFDS_NAME = re.compile(r"^[^.]+?-(?P<split>[^-.]+)\.tfrecord-\d{5}-of-\d{5}$")
_WORDS = re.compile(r"[-_.\s]+")


def parse_split_args(items: list[str] | None) -> dict[str, str] | None:
    """``["train=train-*", "eval=eval-*"]`` -> ``{"train": "train-*", ...}``; a malformed item is a UsageError."""
    if not items:
        return None
    out: dict[str, str] = {}
    for item in items:
        name, sep, glob = item.partition("=")
        if not sep or not name.strip() or not glob.strip():
            raise UsageError(f"--split wants NAME=GLOB (e.g. train='train-*'), got {item!r}")
        out[name.strip()] = glob.strip()
    return out


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def split_of(path: str, splits: dict[str, str] | None = None, dataset=None) -> str | None:
    """The split of the shard at ``path``, or None when nothing says.

    With ``splits`` (name -> glob), the first glob matching the file name (or
    the whole path) decides, and nothing else. Else a TFDS ``dataset`` names
    it, else the name: ``NAME-SPLIT.tfrecord-*``, then a split word standing
    alone in the file name (``train-00001-of-00004``, ``coco_val.record``),
    then in its folder's name (``eval/part-0``).
    """
    name = _basename(path)
    if splits is not None:
        for split, glob in splits.items():
            if fnmatch.fnmatchcase(name, glob) or fnmatch.fnmatchcase(path, glob):
                return split
        return None
    if dataset is not None:
        found = dataset.split_of(path)
        if found is not None:
            return found
    match = _TFDS_NAME.match(name)
    if match:
        return match.group("split")
    for word in _WORDS.split(name):
        if word.lower() in SPLIT_WORDS:
            return word
    folder = _basename(os.path.dirname(path.rstrip("/")))
    for word in _WORDS.split(folder):
        if word.lower() in SPLIT_WORDS:
            return word
    return None
