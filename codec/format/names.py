"""What a TFRecord file's name looks like: how a folder (local or in a bucket) tells its shards
from the other files in it without reading them; a set's name from its shards' (``train-*-of-01024``);
and what TensorFlow makes of a name that says another compression than the bytes hold."""
from __future__ import annotations

import os
import re

from codec.format.framing import Compression

SUFFIXES = ("tfrecord", "tfrecords", "tfrec", "tfr")  # x.tfrecord ...
COMPRESSED_SUFFIXES = ("gz", "gzip", "zz", "zlib")  # ... optionally followed by one of these
_TFRECORD_NAME = re.compile(rf"(\.({'|'.join(SUFFIXES)})|-\d{{5}}-of-\d{{5}})(\.({'|'.join(COMPRESSED_SUFFIXES)}))?$",
                            re.IGNORECASE)
_SHARD_NUMBER = re.compile(r"-\d{5}-of-\d{5}")
_TF_TYPE = {Compression.NONE: "''", Compression.GZIP: "'GZIP'", Compression.ZLIB: "'ZLIB'"}

__all__ = ["looks_like_tfrecord_name", "name_globs", "shard_pattern", "tensorflow_name_note"]


def looks_like_tfrecord_name(name: str) -> bool:
    """``x.tfrecord``, ``x.tfrecords``, ``x.tfrec``, ``x.tfr``, ``train-00003-of-01024`` (+ ``.gz``...)."""
    return _TFRECORD_NAME.search(name) is not None


def name_globs() -> list[str]:
    """Globs a file dialog can show for those names: ``*.tfrecord`` ..., ``*-of-*``, ``*.gz`` ... (a
    compressed name shows under its last suffix; the globs are wider than the names, never narrower)."""
    return [f"*.{s}" for s in SUFFIXES] + ["*-of-*"] + [f"*.{s}" for s in COMPRESSED_SUFFIXES]


def tensorflow_name_note(path: str, compression: Compression) -> str | None:
    """One line when ``path``'s name says another compression than its bytes (``compression``, sniffed):
    people give TensorFlow the ``compression_type`` the name says, and it fails; None when they agree.

    We read such a file fine (the bytes decide); TensorFlow's TFRecordDataset does not sniff.
    """
    if "://" in path:  # a URL's name ends before its query (a signed URL's signature)
        path = path.split("?", 1)[0].split("#", 1)[0]
    named = Compression.for_name(path)
    if named is compression:
        return None
    stored = "uncompressed" if compression is Compression.NONE else f"as {compression.value.upper()}"
    if named is Compression.NONE:
        suffix = ".gz" if compression is Compression.GZIP else ".zz/.zlib"
        name, given = f"its name has no {suffix}", "with no compression_type"
    else:
        name = "named " + os.path.splitext(path.rstrip("/"))[1].lower()
        given = f"with compression_type={_TF_TYPE[named]}"
    return (f"stored {stored} although {name}: TensorFlow {given} fails on it; "
            f"use {_TF_TYPE[compression]}" + (" (no compression_type)" if compression is Compression.NONE else ""))


def shard_pattern(path: str) -> str:
    """``train-00003-of-01024.tfrecord`` -> ``train-*-of-01024.tfrecord``."""
    return _SHARD_NUMBER.sub(lambda m: "-*-of-" + m.group(0)[-5:], path)
