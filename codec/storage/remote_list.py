"""URLs named on the command line or in the app, turned into the objects they mean.

A glob (``s3://bkt/data/train-*``) is one ``fs.glob`` listing; a folder or prefix
(``gs://bkt/data/``) one ``fs.ls`` listing of what is directly in it (not below,
like a local folder); a single object one ``fs.info``. Thousands of shards cost a
few listing pages, never a request per shard, and each object comes with its
listing entry (size, ETag, generation...), so a shard set knows every shard's
size and version without asking again.
"""
from __future__ import annotations

import posixpath
from typing import Any

from codec.errors import FileAccessError
from codec.format.framing import HEADER_SIZE
from codec.format.names import looks_like_tfrecord_name
from codec.storage import http_direct
from codec.storage.remote import direct_info, remote_filesystem
from codec.storage.remote_errors import RemoteFolderError, access_error
from codec.storage.url_secrets import redact

GLOB_CHARS = "*?["

__all__ = ["expand_remote", "remote_info", "is_remote_glob", "GLOB_CHARS"]


def _scheme(url: str) -> tuple[str, str]:
    """(everything up to and including ``://``, the protocol): ``("a::s3://", "s3")`` for ``a::s3://b/k``."""
    head = url.split("://", 1)[0]
    return head + "://", head.rsplit("::", 1)[-1].lower()


def _http(url: str) -> bool:
    return _scheme(url)[1] in ("http", "https")


def is_remote_glob(url: str) -> bool:
    """A URL with glob characters in its path (never an http(s) URL: ``?`` starts its query)."""
    return not _http(url) and any(c in url.split("://", 1)[-1] for c in GLOB_CHARS)


def _url_of(arg: str, fs_path: str) -> str:
    """The URL of ``fs_path`` (a path as ``fs`` lists it), spelt with ``arg``'s scheme."""
    prefix, protocol = _scheme(arg)
    if fs_path.startswith(protocol + "://"):
        return fs_path
    return prefix + fs_path


def _hidden(fs_path: str) -> bool:
    return posixpath.basename(fs_path.rstrip("/")).startswith(".")


def _fresh(fs: Any, path: str) -> None:
    """Forget fsspec's cached listings of ``path``: a shard added since the last look must show."""
    try:
        fs.invalidate_cache(path)
    except Exception:  # noqa: BLE001 - a filesystem without a listings cache
        pass


def remote_info(url: str) -> dict:
    """``fs.info`` of one object (its size and version), fetched now; a one-line FileAccessError if it fails."""
    fs, path = remote_filesystem(url)
    _fresh(fs, path)
    try:
        info = fs.info(path)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line naming the URL
        raise access_error(url, exc) from None
    if info.get("type") == "directory":
        raise RemoteFolderError(f"cannot read {redact(url)}: it is a folder or prefix, not a file")
    return info


def expand_remote(arg: str, notes: list[str] | None = None) -> list[tuple[str, dict]]:
    """The objects ``arg`` names, sorted, each as (URL, listing entry).

    A glob keeps every object it matches (hidden names only when the pattern
    asks for them); a folder keeps the objects directly in it that are named
    like TFRecord files (others would each cost a read to sniff: a note in
    ``notes`` says how many were left out); a single object is kept whatever
    its name. Nothing found, a missing bucket, a refused listing: one-line
    :class:`FileAccessError`.
    """
    if _http(arg) and not is_remote_glob(arg) and http_direct.usable(arg, {}):
        info = direct_info(arg, retries=0)
        if info is not None:
            return [(arg, info)]
    fs, path = remote_filesystem(arg)
    try:
        if is_remote_glob(arg):
            return _globbed(arg, fs, path)
        if not _http(arg) and (arg.endswith("/") or "/" not in path.strip("/")):
            return _folder(arg, fs, path, notes)
        _fresh(fs, path)
        info = fs.info(path)
        if info.get("type") == "directory":
            return _folder(arg, fs, path, notes)
        return [(arg, info)]
    except FileAccessError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line naming the URL
        raise access_error(arg, exc) from None


def _globbed(arg: str, fs: Any, path: str) -> list[tuple[str, dict]]:
    first = min(i for i in (path.find(c) for c in GLOB_CHARS) if i >= 0)
    _fresh(fs, path[:first].rsplit("/", 1)[0])
    found = fs.glob(path, detail=True)
    want_hidden = posixpath.basename(path).startswith(".")
    entries = sorted((name, info) for name, info in found.items()
                     if info.get("type") != "directory" and (want_hidden or not _hidden(name)))
    if not entries:
        raise FileAccessError(f"no objects match {redact(arg)}")
    return [(_url_of(arg, name), info) for name, info in entries]


def _folder(arg: str, fs: Any, path: str, notes: list[str] | None) -> list[tuple[str, dict]]:
    folder = path.rstrip("/")
    _fresh(fs, folder)
    found = {info["name"]: info for info in fs.ls(folder, detail=True)}
    entries, others = [], 0
    for name, info in sorted(found.items()):
        if info.get("type") == "directory" or _hidden(name):
            continue
        size = info.get("size")
        if not looks_like_tfrecord_name(posixpath.basename(name)):
            others += 1
        elif not (isinstance(size, int) and 0 < size < HEADER_SIZE):  # shorter than a header: no shard
            entries.append((_url_of(arg, name), info))
    if not entries:
        bucket = folder.split("/", 1)[0]
        if not found and bucket:
            fs.ls(bucket)  # a missing bucket says so (FileNotFoundError), else it is empty
            raise FileAccessError(f"no objects under {redact(arg)} (an empty folder or prefix): "
                                  "name a file, a folder of shards, or a glob such as .../train-*")
        raise FileAccessError(f"no TFRecord files in {redact(arg)}: no object there is named like one "
                              "(.tfrecord, .tfrec, -00000-of-00010 ...); name the objects or use a glob")
    if others and notes is not None:
        notes.append(f"{others} object(s) in {redact(arg)} not named like TFRecord files were left out "
                     "(name them, or use a glob, to read them)")
    return entries
