"""What the command line's commands read: the files, folders, globs and URLs named, opened as one
file or one set of shards, with the payload chosen for them (see :mod:`codec.datasets.payload_choice`).

A URL (``s3://``, ``gs://``, ``https://``, any fsspec protocol) is listed once: a glob or a folder
in one listing, a single object by its metadata, and each object is opened with its listing entry,
so a set of 10,000 remote shards costs a few listing pages before its records are read.
"""
from __future__ import annotations

import os
import sys

from codec.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Sequence

__all__ = ["choice", "entries", "is_url", "open_source", "remote_failure"]


def is_url(path: str) -> bool:
    """``codec.storage.remote.is_url``, without importing codec.storage.remote for a local path."""
    if not isinstance(path, str) or "://" not in path:
        return False
    from codec.storage.remote import is_url as url

    return url(path)


def _warn(line: str) -> None:
    sys.stderr.write(f"tfrlens-cli: {line}\n")


def choice(args):
    """How the named files' records decode (``--proto``, a TFDS folder, label names); chosen once."""
    chosen = getattr(args, "choice", None)
    if chosen is None:
        from codec.datasets.payload_choice import choose

        files = args.file if isinstance(args.file, list) else [args.file]
        chosen = args.choice = choose(args, files)
        for note in chosen.notes:
            _warn(f"warning: {note}")
    return chosen


def open_source(args, verify: bool = False):
    """A TFRecordFile, or a ShardSet when several files, a folder or a glob are named
    (:func:`codec.sources.open.open_paths`), decoding its records as chosen.

    A shard set is indexed here (``verify``: with every data CRC checked in the same pass;
    a set indexed without it is not verified by a later ``build_index(verify=True)``).
    """
    from codec.sources.open import open_paths

    chosen = choice(args)
    named = args.file if isinstance(args.file, list) else [args.file]
    dataset = chosen.dataset
    # A TFDS folder's set is named as the dataset, not by its first split's shards.
    name = None if dataset is None else f"{dataset.folder} ({dataset.name} {dataset.version})"
    if chosen.payload is not None and chosen.payload.runs and len(named) == 1:  # a TensorBoard log folder, by its name
        name = named[0]
    opened = open_paths(named, lambda *_: chosen, name=name, check_crc=not args.no_crc, use_cache=not args.no_cache)
    for note in opened.notes:
        _warn(note)
    if opened.is_set:
        shards = opened.source
        shards.build_index(verify=verify)
        for path, reason in shards.unusable:
            _warn(f"skipped {path}: {reason}")
    if chosen.payload is not None and chosen.payload.name == "tensorboard.Event":  # a log's unfinished end is not damage
        from codec.datasets.event_logs import take_as_being_written

        opened.source.build_index(verify=verify)
        take_as_being_written(opened.source)
    return opened.source


def entries(args) -> tuple[list[tuple[str, dict | None]], bool]:
    """The files to work on with their listing entries (None for a local file), and whether the
    user named exactly one file."""
    from codec.storage.listing import expand_entries

    found, notes = expand_entries(args.file)
    for note in notes:
        _warn(note)
    if not found:
        raise UsageError("no TFRecord files to work on")
    arg = args.file[0]
    one = len(args.file) == 1 and len(found) == 1
    if is_url(arg):  # a folder or prefix is not one file, even when it holds one
        from codec.storage.remote_list import is_remote_glob

        single = one and (found[0][0] == arg or is_remote_glob(arg))
    else:
        single = one and not os.path.isdir(arg)
    return found, single


_CLIENTS = ("fsspec", "s3fs", "gcsfs", "adlfs", "aiohttp", "botocore", "aiobotocore", "google", "huggingface_hub")


def remote_failure(argv: Sequence[str], exc: BaseException) -> str | None:
    """One line for an error a storage client raised where the codec did not expect one (a URL
    among ``argv``); None for any other error, which is a bug to show in full."""
    url = next((a for a in argv if is_url(a)), None)
    if url is None:
        return None
    module = type(exc).__module__.split(".", 1)[0]
    if module not in _CLIENTS:
        return None
    from codec.storage.remote_errors import access_error

    return str(access_error(url, exc))
