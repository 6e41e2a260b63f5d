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
from .document import Document, SaveReport
from .edit import RecordEditor, parse_value, parse_values
from .export import ExportReport, export, export_iter, parse_records_spec
from .index_cache import write_index
from .query import ExprError, Filter, compile_filter, filter_iter, format_error, matching_indices
from .repair import RepairReport, repair, repair_iter
from .schema import FileSchema, infer_schema, schema_iter
from .shards import ShardSet
from .stats import FileStats, compute_stats, stats_iter

__all__ = [
    "BoundingBox", "Compression", "CorruptRecordError", "DecodedRecord", "FileAccessError", "ImageDecodeError",
    "ImageRef", "IndexProgress", "NotTFRecordError", "Problem", "ProblemKind", "RecordData", "RecordInfo",
    "RecordKind", "RecordStatus", "TFRecordError", "TFRecordFile", "TFRecordWriter", "TreeNode",
    "TruncatedRecordError", "UsageError", "build_tree", "decode_image", "decode_record", "detect_kind",
    "encode_record", "feature_cell", "feature_keys", "find_boxes", "find_images", "format_value",
    "open_tfrecord", "record_json_value", "sniff_compression", "sniff_image", "write_records",
    "Document", "SaveReport", "RecordEditor", "parse_value", "parse_values", "ExportReport", "export",
    "export_iter", "parse_records_spec", "write_index", "ExprError", "Filter", "compile_filter", "filter_iter",
    "format_error", "matching_indices", "RepairReport", "repair", "repair_iter", "FileSchema", "infer_schema",
    "schema_iter", "ShardSet", "FileStats", "compute_stats", "stats_iter",
]
