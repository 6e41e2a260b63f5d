"""TFRecord Lens codec: read, index, verify, decode and write TFRecord files.

Pure Python (no Qt): everything a script or the command line needs. The GUI
in ``app`` is a view over this package.

Names are imported on first use (PEP 562), so ``import codec`` and a command
line start-up pay only for the modules they touch (numpy, protobuf and Pillow
take a third of a second together).
"""
from __future__ import annotations

import importlib
import sys
import types

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

# public name -> the module that defines it
_SOURCES = {
    **dict.fromkeys(("DecodedRecord", "RecordKind", "TreeNode", "build_tree", "decode_record", "detect_kind",
                     "feature_cell", "feature_keys", "format_value", "record_json_value"), "decode"),
    **dict.fromkeys(("CorruptRecordError", "FileAccessError", "ImageDecodeError", "NotTFRecordError",
                     "RecordIndexError", "TFRecordError", "TensorDecodeError", "TruncatedRecordError", "UsageError"),
                    "errors"),
    **dict.fromkeys(("Compression", "Problem", "ProblemKind", "RecordInfo", "RecordStatus", "encode_record"),
                    "framing"),
    **dict.fromkeys(("BoundingBox", "ImageRef", "decode_image", "find_boxes", "find_images"), "images"),
    "sniff_image": "image_sniff",
    **dict.fromkeys(("TFRecordFile", "open_tfrecord"), "reader"),
    "sniff_compression": "opening",
    **dict.fromkeys(("RecordData", "RecordSource"), "records"),
    "IndexProgress": "scan",
    **dict.fromkeys(("TFRecordWriter", "write_records"), "writer"),
    **dict.fromkeys(("Document", "SaveReport"), "document"),
    **dict.fromkeys(("RecordEditor", "parse_value", "parse_values"), "edit"),
    **dict.fromkeys(("ExportReport", "export", "export_iter", "parse_records_spec"), "export"),
    "write_index": "index_cache",
    **dict.fromkeys(("ExprError", "Filter", "compile_filter", "filter_iter", "format_error", "matching_indices"),
                    "query"),
    **dict.fromkeys(("RepairReport", "repair", "repair_iter"), "repair"),
    **dict.fromkeys(("FileSchema", "infer_schema", "schema_iter"), "schema"),
    "ShardSet": "shards",
    **dict.fromkeys(("FileStats", "compute_stats", "stats_iter"), "stats"),
}

__all__ = [
    "BoundingBox", "Compression", "CorruptRecordError", "DecodedRecord", "FileAccessError", "ImageDecodeError",
    "ImageRef", "IndexProgress", "NotTFRecordError", "Problem", "ProblemKind", "RecordData", "RecordIndexError",
    "RecordInfo", "RecordKind", "RecordSource", "RecordStatus", "TFRecordError", "TFRecordFile", "TFRecordWriter",
    "TensorDecodeError", "TreeNode", "TruncatedRecordError", "UsageError", "build_tree", "decode_image",
    "decode_record", "detect_kind",
    "encode_record", "feature_cell", "feature_keys", "find_boxes", "find_images", "format_value",
    "open_tfrecord", "record_json_value", "sniff_compression", "sniff_image", "write_records",
    "Document", "SaveReport", "RecordEditor", "parse_value", "parse_values", "ExportReport", "export",
    "export_iter", "parse_records_spec", "write_index", "ExprError", "Filter", "compile_filter", "filter_iter",
    "format_error", "matching_indices", "RepairReport", "repair", "repair_iter", "FileSchema", "infer_schema",
    "schema_iter", "ShardSet", "FileStats", "compute_stats", "stats_iter",
]


def __getattr__(name: str):
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps ``codec.export`` and ``codec.repair`` the functions of those names.

    Importing a submodule binds it on its package; the functions share their
    modules' names, so without this ``codec.export`` would become the module
    as soon as anything imported ``codec.export`` first.
    """

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _SOURCES.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # what type checkers and IDEs see
    from .decode import (DecodedRecord, RecordKind, TreeNode, build_tree, decode_record, detect_kind,
                         feature_cell, feature_keys, format_value, record_json_value)
    from .document import Document, SaveReport
    from .edit import RecordEditor, parse_value, parse_values
    from .errors import (CorruptRecordError, FileAccessError, ImageDecodeError, NotTFRecordError, RecordIndexError,
                         TensorDecodeError, TFRecordError, TruncatedRecordError, UsageError)
    from .export import ExportReport, export, export_iter, parse_records_spec
    from .framing import Compression, Problem, ProblemKind, RecordInfo, RecordStatus, encode_record
    from .image_sniff import sniff_image
    from .images import BoundingBox, ImageRef, decode_image, find_boxes, find_images
    from .index_cache import write_index
    from .query import ExprError, Filter, compile_filter, filter_iter, format_error, matching_indices
    from .opening import sniff_compression
    from .reader import TFRecordFile, open_tfrecord
    from .records import RecordData, RecordSource
    from .repair import RepairReport, repair, repair_iter
    from .scan import IndexProgress
    from .schema import FileSchema, infer_schema, schema_iter
    from .shards import ShardSet
    from .stats import FileStats, compute_stats, stats_iter
    from .writer import TFRecordWriter, write_records
