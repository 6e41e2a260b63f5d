"""What a TFRecord file's name looks like: how a folder (local or in a bucket) tells its shards
from the other files in it without reading them."""
from __future__ import annotations

import re

SUFFIXES = ("tfrecord", "tfrecords", "tfrec", "tfr")  # x.tfrecord ...
COMPRESSED_SUFFIXES = ("gz", "gzip", "zz", "zlib")  # ... optionally followed by one of these
_TFRECORD_NAME = re.compile(rf"(\.({'|'.join(SUFFIXES)})|-\d{{5}}-of-\d{{5}})(\.({'|'.join(COMPRESSED_SUFFIXES)}))?$",
                            re.IGNORECASE)

__all__ = ["looks_like_tfrecord_name", "name_globs"]


def looks_like_tfrecord_name(name: str) -> bool:
    """``x.tfrecord``, ``x.tfrecords``, ``x.tfrec``, ``x.tfr``, ``train-00003-of-01024`` (+ ``.gz``...)."""
    return _TFRECORD_NAME.search(name) is not None


def name_globs() -> list[str]:
    """Globs a file dialog can show for those names: ``*.tfrecord`` ..., ``*-of-*``, ``*.gz`` ... (a
    compressed name shows under its last suffix; the globs are wider than the names, never narrower)."""
    return [f"*.{s}" for s in SUFFIXES] + ["*-of-*"] + [f"*.{s}" for s in COMPRESSED_SUFFIXES]
