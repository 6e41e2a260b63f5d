"""TFRecord Lens codec: read, index, verify, decode and write TFRecord files (and read ArrayRecord files).

Pure Python (no Qt): everything a script or the command line needs. The GUI
in ``app`` is a view over this package.

Names are imported on first use (PEP 562), so ``import codec`` and a command
line start-up pay only for the modules they touch (numpy, protobuf and Pillow
take a third of a second together).
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

# public name -> the module that defines it
_SOURCES = {
    **dict.fromkeys(("DecodedRecord", "RecordKind", "TreeNode", "build_tree", "decode_record", "detect_kind",
                     "feature_cell", "feature_keys", "format_value", "record_json_value"), "decode.decoder"),
    **dict.fromkeys(("CorruptRecordError", "FileAccessError", "ImageDecodeError", "NotTFRecordError",
                     "RecordIndexError", "TFRecordError", "TensorDecodeError", "TruncatedRecordError", "UsageError"),
                    "errors"),
    **dict.fromkeys(("Compression", "Problem", "ProblemKind", "RecordInfo", "RecordStatus", "encode_record"),
                    "format.framing"),
    **dict.fromkeys(("ImageRef", "decode_image", "find_images"), "decode.images"),
    **dict.fromkeys(("BoundingBox", "find_boxes"), "decode.image_boxes"),
    "sniff_image": "decode.image_sniff",
    **dict.fromkeys(("TFRecordFile", "open_tfrecord"), "sources.tfrecord_file"),
    "sniff_compression": "storage.opening",
    **dict.fromkeys(("RecordData", "RecordSource"), "sources.protocol"),
    "IndexProgress": "index.scan",
    **dict.fromkeys(("TFRecordWriter", "write_records"), "storage.writer"),
    **dict.fromkeys(("Document", "SaveReport"), "editing.document"),
    **dict.fromkeys(("RecordEditor", "parse_value", "parse_values"), "editing.record_editor"),
    **dict.fromkeys(("ExportReport", "export", "export_iter", "parse_records_spec"), "ops.export"),
    "write_index": "index.cache",
    **dict.fromkeys(("ExprError", "Filter", "compile_filter", "filter_iter", "format_error", "matching_indices"),
                    "query.filter"),
    **dict.fromkeys(("RepairReport", "repair", "repair_iter"), "ops.repair"),
    **dict.fromkeys(("FileSchema", "infer_schema", "schema_iter"), "stats.schema"),
    "ShardSet": "sources.shard_set",
    "ArrayRecordFile": "sources.array_record_file",
    "open_record_file": "sources.record_file",
    **dict.fromkeys(("FileStats", "compute_stats", "stats_iter"), "stats.file_stats"),
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
    "ArrayRecordFile", "open_record_file",
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


if TYPE_CHECKING:  # what type checkers and IDEs see
    from codec.decode.decoder import (
        DecodedRecord,
        RecordKind,
        TreeNode,
        build_tree,
        decode_record,
        detect_kind,
        feature_cell,
        feature_keys,
        format_value,
        record_json_value,
    )
    from codec.decode.image_boxes import BoundingBox, find_boxes
    from codec.decode.image_sniff import sniff_image
    from codec.decode.images import ImageRef, decode_image, find_images
    from codec.editing.document import Document, SaveReport
    from codec.editing.record_editor import RecordEditor, parse_value, parse_values
    from codec.errors import (
        CorruptRecordError,
        FileAccessError,
        ImageDecodeError,
        NotTFRecordError,
        RecordIndexError,
        TensorDecodeError,
        TFRecordError,
        TruncatedRecordError,
        UsageError,
    )
    from codec.format.framing import Compression, Problem, ProblemKind, RecordInfo, RecordStatus, encode_record
    from codec.index.cache import write_index
    from codec.index.scan import IndexProgress
    from codec.ops.export import ExportReport, export, export_iter, parse_records_spec
    from codec.ops.repair import RepairReport, repair, repair_iter
    from codec.query.filter import ExprError, Filter, compile_filter, filter_iter, format_error, matching_indices
    from codec.sources.array_record_file import ArrayRecordFile
    from codec.sources.protocol import RecordData, RecordSource
    from codec.sources.record_file import open_record_file
    from codec.sources.shard_set import ShardSet
    from codec.sources.tfrecord_file import TFRecordFile, open_tfrecord
    from codec.stats.file_stats import FileStats, compute_stats, stats_iter
    from codec.stats.schema import FileSchema, infer_schema, schema_iter
    from codec.storage.opening import sniff_compression
    from codec.storage.writer import TFRecordWriter, write_records
