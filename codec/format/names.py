"""What a TFRecord file's name looks like: how a folder (local or in a bucket) tells its shards
from the other files in it without reading them."""
from __future__ import annotations

import re

_TFRECORD_NAME = re.compile(r"(\.(tfrecords?|tfrec|tfr)|-\d{5}-of-\d{5})(\.(gz|gzip|zz|zlib))?$", re.IGNORECASE)

__all__ = ["looks_like_tfrecord_name"]


def looks_like_tfrecord_name(name: str) -> bool:
    """``x.tfrecord``, ``x.tfrecords``, ``x.tfrec``, ``x.tfr``, ``train-00003-of-01024`` (+ ``.gz``...)."""
    return _TFRECORD_NAME.search(name) is not None
