"""TFRecord Lens codec: read, index, verify, decode and write TFRecord files.

Pure Python (no Qt): everything a script or the command line needs. The GUI
in ``app`` is a view over this package.
"""
from __future__ import annotations

from .decode import (DecodedRecord, RecordKind, TreeNode, build_tree, decode_record, detect_kind, feature_cell,
                     feature_keys, format_value, record_json_value)
from .errors import (CorruptRecordError, FileAccessError, NotTFRecordError, TFRecordError, TruncatedRecordError,
                     UsageError)
from .framing import Compression, Problem, ProblemKind, RecordInfo, RecordStatus, encode_record
from .images import BoundingBox, ImageDecodeError, ImageRef, decode_image, find_boxes, find_images, sniff_image
from .reader import RecordData, TFRecordFile, open_tfrecord, sniff_compression
from .scan import IndexProgress
from .writer import TFRecordWriter, write_records

__all__ = [
    "BoundingBox", "Compression", "CorruptRecordError", "DecodedRecord", "FileAccessError", "ImageDecodeError",
    "ImageRef", "IndexProgress", "NotTFRecordError", "Problem", "ProblemKind", "RecordData", "RecordInfo",
    "RecordKind", "RecordStatus", "TFRecordError", "TFRecordFile", "TFRecordWriter", "TreeNode",
    "TruncatedRecordError", "UsageError", "build_tree", "decode_image", "decode_record", "detect_kind",
    "encode_record", "feature_cell", "feature_keys", "find_boxes", "find_images", "format_value",
    "open_tfrecord", "record_json_value", "sniff_compression", "sniff_image", "write_records",
]
