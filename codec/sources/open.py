"""One way to open what a user names: a file, several files, a folder or a glob (one set of shards),
a URL (an object, a glob or a prefix), a TFDS dataset folder, with the payload chosen for it. A file
is a TFRecord or an ArrayRecord file as its first bytes say (:func:`codec.sources.array_record_file.open_record_file`).

:func:`open_paths` returns the opened source and how its records decode; the command line
(:mod:`codec.cli.sources`) and the app's opening code both call it. It opens, and indexes nothing:
an index pass is the caller's (the command line's at once, the app's on a worker).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from codec.datasets.payload_choice import Choice, apply, choose_for
from codec.errors import UsageError
from codec.sources.array_record_file import ArrayRecordFile
from codec.sources.record_file import open_record_file
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.listing import expand_entries, looks_like_shard_set

__all__ = ["Opened", "default_choice", "open_paths", "opens_as_set"]

Chooser = Callable[[str, Sequence[str]], Choice]  # (what the source is called, the paths named) -> Choice


@dataclass
class Opened:
    """An opened source (a :class:`TFRecordFile`, an :class:`ArrayRecordFile` or a :class:`ShardSet`) and how its records decode
    (``choice``, already given to the source); ``notes``: one line each, what a URL's listing left out."""

    source: TFRecordFile | ArrayRecordFile | ShardSet
    choice: Choice
    notes: list[str] = field(default_factory=list)

    @property
    def is_set(self) -> bool:
        return self.source.is_set


def default_choice(name: str, paths: Sequence[str]) -> Choice:
    """What the codec finds on its own for ``paths``: a TFDS dataset, a label map beside them."""
    return choose_for(paths)


def opens_as_set(path: str) -> bool:
    """A folder, or a glob that is not itself an existing file; a URL's glob, or a prefix or bucket
    written with a trailing ``/`` (judged by its spelling: no request)."""
    return looks_like_shard_set([path])


def open_paths(paths: Sequence[str], choose: Chooser = default_choice, *, as_set: bool | None = None,
               name: str | None = None, check_crc: bool = True, use_cache: bool = True) -> Opened:
    """Open ``paths`` as one file or one set of shards, its records decoding as ``choose`` says.

    ``choose(name, paths)`` is asked once: before opening when one path is named (that path is
    the name), else once the set is listed (its name). The files opened are the choice's (a
    TFDS folder's shards, split by split). ``as_set``: None as the paths say (a URL is listed
    first to tell an object from a prefix); True a set, even of one file; False as the spelling
    says, a URL opened as one object without a listing (one naming a folder still opens as the
    set of its objects). ``name``: a set's (default: the one path named).
    Raises :class:`codec.errors.TFRecordError` with one line; blocks on the network for a URL.
    """
    paths = [str(p) for p in paths]
    choice = choose(paths[0], paths) if len(paths) == 1 else None
    files = choice.files if choice is not None else paths
    options: dict[str, Any] = {"check_crc": check_crc, "use_cache": use_cache}
    source: TFRecordFile | ArrayRecordFile | ShardSet
    dataset = choice is not None and choice.dataset is not None
    notes: list[str] = []
    if as_set is False and _is_url(files[0]):
        source = _one_url(files[0], options)
    elif as_set is None and not dataset and any(_is_url(p) for p in files):
        found, notes = _expanded(files)
        if len(files) == 1 and len(found) == 1 and found[0][0] == files[0] and not looks_like_shard_set(files):
            source = open_record_file(files[0], info=found[0][1], **options)
        else:
            source = _shard_set(found, files, name, options)
    elif as_set or looks_like_shard_set(files) or dataset and looks_like_shard_set(paths):
        source = _shard_set(_expanded(files)[0], files if not dataset else paths, name, options)
    else:
        source = open_record_file(files[0], **options)
    if choice is None:
        try:
            choice = choose(source.path, paths)
        except BaseException:
            source.close()
            raise
    apply(choice, source)
    return Opened(source, choice, notes)


def _is_url(path: str) -> bool:
    if "://" not in path:  # codec.storage.remote is not imported for a local path
        return False
    from codec.storage.remote import is_url

    return is_url(path)


def _one_url(url: str, options: dict[str, Any]) -> TFRecordFile | ArrayRecordFile | ShardSet:
    """The object ``url`` names; a folder named without its trailing slash opens as the set of its objects."""
    from codec.storage.remote_errors import RemoteFolderError

    try:
        return open_record_file(url, **options)
    except RemoteFolderError:
        return ShardSet.from_args([url.rstrip("/") + "/"], **options)


def _expanded(files: Sequence[str]) -> tuple[list, list[str]]:
    """(path, listing entry) of every file ``files`` name, and notes on what was left out."""
    found, notes = expand_entries(list(files))
    if not found:
        raise UsageError("; ".join(notes) or "no TFRecord files to open")
    return found, notes


def _shard_set(found: list, named: Sequence[str], name: str | None, options: dict) -> ShardSet:
    """The set of ``found`` (path, listing entry) shards, called ``name`` (default: the one path named)."""
    name = name or (named[0] if len(named) == 1 else None)
    return ShardSet([path for path, _ in found], name=name,
                    infos={path: info for path, info in found if info is not None}, **options)
