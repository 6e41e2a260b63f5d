"""What the paths a user names hold: files named, globbed, or found in named folders, and the
objects behind URLs (one listing for a glob or a prefix). Every way of opening several files starts
here: the command line, a shard set, the doctor and the app.
"""
from __future__ import annotations

import glob
import os
import stat
from typing import Sequence

from codec.errors import FileAccessError, NotTFRecordError
from codec.format.framing import HEADER_SIZE
from codec.format.names import looks_like_tfrecord_name
from codec.storage.opening import sniff_compression

__all__ = ["expand_entries", "expand_inputs", "is_sidecar", "looks_like_shard_set"]

# Files that travel with a dataset and are read by it (label maps, a TFDS folder's metadata, notes):
# a folder holding them is not a folder with a stray file in it.
_SIDECAR_SUFFIXES = (".pbtxt", ".pbtext", ".prototxt", ".json", ".labels.txt", ".md", ".rst", ".yaml", ".yml",
                     ".proto", ".desc")
_SIDECAR_STEMS = frozenset({"readme", "license", "licence", "notice", "changelog", "labels", "label_map",
                            "classes", "checksums"})


def is_sidecar(name: str) -> bool:
    """Whether a file name is a known companion of a dataset's shards: a label map (``*.pbtxt``,
    ``labels.txt``), ``dataset_info.json``/``features.json`` or other JSON, a README or LICENSE, a
    ``.proto``/descriptor set. A folder's sidecars are left out of a set without a note."""
    lower = name.lower()
    return lower.endswith(_SIDECAR_SUFFIXES) or lower.split(".", 1)[0] in _SIDECAR_STEMS


def expand_inputs(args: list[str]) -> tuple[list[str], list[str]]:
    """Files named, globbed, or found in named folders (TFRecord content only); URLs too.

    Returns (paths, notes). In a folder, files named like TFRecords are taken
    without reading them (a folder of 10,000 shards opens at once; one that
    is not a TFRecord after all is reported when it is opened); other files
    are taken only if their content is a TFRecord. A named file that is not
    one is kept (its error is reported when it is opened). URLs: see
    :func:`expand_entries`.
    """
    entries, notes = expand_entries(args)
    return [path for path, _ in entries], notes


def expand_entries(args: list[str]) -> tuple[list[tuple[str, dict | None]], list[str]]:
    """:func:`expand_inputs` with each path's listing entry: an fsspec info dict (size, ETag...) for
    an object behind a URL, None for a local file.

    A URL is listed by :func:`codec.storage.remote_list.expand_remote` (one listing for a glob or a
    folder); nothing found there is a one-line :class:`FileAccessError`, not a note. Among
    several arguments, a URL naming one object that cannot be read is kept (with no entry),
    as a local file is, so the others are still worked on and its error is reported when opened.
    """
    entries: list[tuple[str, dict | None]] = []
    notes: list[str] = []
    for arg in args:
        if "://" in arg:
            from codec.storage.remote import is_url

            if is_url(arg):
                from codec.storage.remote_list import expand_remote, is_remote_glob

                try:
                    entries.extend(expand_remote(arg, notes))
                except FileAccessError:
                    if len(args) == 1 or is_remote_glob(arg) or arg.endswith("/"):
                        raise
                    entries.append((arg, None))
                continue
        entries.extend((path, None) for path in _expand_local(arg, notes))
    return entries, notes


def _expand_local(arg: str, notes: list[str]) -> list[str]:
    if any(c in arg for c in "*?[") and not os.path.exists(arg):
        matches = sorted(glob.glob(arg))
        if not matches:
            notes.append(f"no files match {arg}")
        return matches
    if not os.path.isdir(arg):
        return [arg]
    paths = []
    found: list[tuple[str, os.DirEntry[str] | None]]
    try:  # one listing, its entries' types and sizes from it (a folder may hold 100,000 shards)
        with os.scandir(arg) as listing:
            found = sorted((e.name, e) for e in listing if not e.name.startswith("."))
    except OSError:
        found = [(name, None) for name in sorted(os.listdir(arg)) if not name.startswith(".")]
    for name, entry in found:
        path = os.path.join(arg, name)
        try:
            st = entry.stat() if entry is not None else os.stat(path)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            continue
        if st is None or not stat.S_ISREG(st.st_mode):  # a FIFO, a device, a socket: never read here (it may block)
            if looks_like_tfrecord_name(name) and st is not None:
                paths.append(path)  # refused when opened, so the set says why it skipped it
            continue
        if 0 < st.st_size < HEADER_SIZE:
            continue  # (a file shorter than one record header is no dataset's shard)
        if not looks_like_tfrecord_name(name):
            try:  # other names are read: a folder may hold images, notes, a README
                sniff_compression(path)
            except (NotTFRecordError, FileAccessError):
                continue
        paths.append(path)
    if not paths:
        notes.append(f"no TFRecord files in {arg}")
    return paths


def looks_like_shard_set(args: Sequence[str]) -> bool:
    """Several paths, a folder, or a glob. A URL is judged by its spelling alone (no request):
    a glob, or a folder or bucket written with a trailing ``/``."""
    if len(args) > 1:
        return True
    for a in args:
        if "://" in a and _is_url(a):
            from codec.storage.remote_list import is_remote_glob

            if is_remote_glob(a) or a.endswith("/"):
                return True
        elif os.path.isdir(a) or any(c in a for c in "*?[") and not os.path.exists(a):
            return True
    return False


def _is_url(path: str) -> bool:
    from codec.storage.remote import is_url  # (not imported for local paths)

    return is_url(path)
