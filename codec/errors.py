"""The codec's exceptions. Each also derives from the built-in it resembles,
so callers may catch either; messages name the file, where, and what."""
from __future__ import annotations


class TFRecordError(Exception):
    """Base of every error the codec raises on purpose."""


class FileAccessError(TFRecordError, OSError):
    """The path is missing, a directory, or cannot be read or written."""


class FileChangedError(FileAccessError):
    """The file shrank or was replaced while it was being read (seen instead of a SIGBUS)."""


class FollowStopped(FileChangedError):
    """A followed file shrank, was replaced, removed or rewritten, or its stream broke: following ends."""


class TargetChangedError(FileChangedError):
    """A save refused to replace a file that changed, was replaced or was deleted since it was opened
    (``Document.save(..., overwrite_changed=True)`` replaces it all the same)."""

    def __init__(self, message: str, *, path: str = "", change: str = ""):
        super().__init__(message)
        self.path = path
        self.change = change  # a codec.storage.file_identity.Change value: "changed", "grew", "replaced", "deleted"


class NotTFRecordError(TFRecordError, ValueError):
    """The content is not a TFRecord stream (plain, GZIP or ZLIB)."""


class CorruptRecordError(TFRecordError, ValueError):
    """A record's length or data CRC does not match, or a stream is damaged."""

    def __init__(self, message: str, *, offset: int | None = None, index: int | None = None):
        super().__init__(message)
        self.offset = offset
        self.index = index


class TruncatedRecordError(CorruptRecordError, EOFError):
    """A record runs past the end of the file or stream."""


class UsageError(TFRecordError, ValueError):
    """A bad argument: a record spec, a compression name, an out-of-range index."""


class RecordIndexError(UsageError, IndexError):
    """A record number past either end; also an IndexError, so sequence code that expects one still works."""


class ImageDecodeError(TFRecordError, ValueError):
    """An image's bytes could not be decoded (corrupt, truncated or unsupported)."""


class ImageTooLargeError(ImageDecodeError):
    """An image whose header claims more pixels than are decoded here (a decompression bomb is a few KB)."""


class TensorDecodeError(TFRecordError, ValueError):
    """Bytes that are not a TensorProto numpy can hold: unparsable, unknown dtype, or a size that misses the shape."""


class TensorLimitError(TensorDecodeError):
    """A TensorProto too large to expand here (a splat, a huge shape): its record is shown raw, with this note."""


class SchemaError(UsageError):
    """A schema the user gave cannot be used: a descriptor set or .proto that does not load, an unknown
    message type (the message lists those the file holds), a bad label map or TFDS ``features.json``."""


class PayloadDecodeError(TFRecordError, ValueError):
    """One record's bytes do not decode as the payload chosen for its file (kept per record, never fatal)."""
