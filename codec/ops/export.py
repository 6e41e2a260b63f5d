"""Export records as TFRecord, ArrayRecord, JSON Lines, CSV, image or WAV files.

Every exporter is a generator of :class:`IndexProgress` over a *record
source*: anything with ``len()`` and ``data(i)``/``status(i)`` or a
:class:`TFRecordFile` (see :func:`as_source`). ``report`` collects what was
written and what could not be represented.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from codec.decode.decoded import scalar_of
from codec.decode.decoder import (
    RecordKind,
    decode_record,
    feature_values,
    is_text,
    record_feature_lists,
    record_features,
)
from codec.decode.images import ImageDecodeError, decode_image, find_images
from codec.decode.json_lines import json_line  # noqa: F401 (part of this module's API)
from codec.errors import UsageError
from codec.format.framing import Compression, RecordStatus
from codec.index.scan import IndexProgress
from codec.storage.writer import (
    OutputFile,
    TFRecordWriter,
    atomic_write_bytes,
    check_not_input,
    make_output_folder,
    output_join,
)

FORMATS = ("tfrecord", "array_record", "jsonl", "csv", "images", "audio")
CSV_FORMULAS = ("escape", "keep")
# A spreadsheet runs a cell starting with one of these as a formula (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
IMAGE_EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "GIF": "gif", "BMP": "bmp", "WEBP": "webp", "TIFF": "tif",
                    "ICO": "ico", "PPM": "ppm", "JPEG2000": "jp2"}
FOLDER_FORMATS = ("images", "audio")  # one file per value, in a folder
PROGRESS_EVERY = 1024
IMAGE_NAME_BYTES = 200  # an image file's name, well under NAME_MAX (255 bytes)


@dataclass
class ExportReport:
    path: str
    format: str
    records: int = 0
    files: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        what = (f"{self.files:,} {'image' if self.format == 'images' else 'audio'} files"
                if self.format in FOLDER_FORMATS else f"{self.records:,} records")
        return f"wrote {what} to {self.path}" + "".join(f"; {n}" for n in self.notes)


class FileSource:
    """A TFRecordFile seen as a record source."""

    def __init__(self, tfile) -> None:
        self.tfile = tfile
        self.payload = tfile.payload
        self.labels = tfile.labels

    def __len__(self) -> int:
        return len(self.tfile)

    def data(self, i: int) -> bytes:
        return self.tfile.read(i).data

    def status(self, i: int) -> RecordStatus:
        return self.tfile.index.status(i)


def as_source(obj):
    return obj if hasattr(obj, "data") else FileSource(obj)


def source_paths(source) -> list[str | os.PathLike]:
    """The files a record source reads (a document's file, each shard of a set)."""
    obj = source.tfile if isinstance(source, FileSource) else source
    obj = getattr(obj, "source", obj)  # a Document reads its source file
    shards = getattr(obj, "shards", None)
    if shards is not None:
        return [s.path for s in shards]
    path = getattr(obj, "path", None)
    return [path] if isinstance(path, (str, os.PathLike)) else []


def parse_records_spec(spec: str | None, n: int) -> list[int]:
    """``1,3,10:20`` -> record indexes (ranges half-open, Python slice rules), in the order given."""
    if spec is None or not spec.strip():
        return list(range(n))
    out: list[int] = []
    seen: set[int] = set()
    items: range | list[int] | None
    for part in spec.split(","):
        part = part.strip()
        try:
            if ":" in part:
                a, _, b = part.partition(":")
                items = range(n)[slice(int(a) if a.strip() else None, int(b) if b.strip() else None)]
            else:
                i = int(part)
                items = [i % n] if -n <= i < n else None
        except ValueError:
            raise UsageError(f"bad record spec {part!r} in {spec!r}: expected indexes and ranges like 1,3,10:20") from None
        if items is None:
            raise UsageError(f"record {part} out of range: there are {n} records")
        for i in items:
            if i not in seen:
                seen.add(i)
                out.append(i)
    return out


def records_stop(spec: str | None) -> int | None:
    """Where the records ``spec`` names end when that is known without counting the records (every
    index and range end given, none negative), else None."""
    if spec is None or not spec.strip():
        return None
    stop = 0
    for part in spec.split(","):
        a, colon, b = part.strip().partition(":")
        try:
            first = int(a) if a.strip() else 0
            end = int(b) if colon and b.strip() else None if colon else first + 1
        except ValueError:
            return None  # parse_records_spec says what is wrong
        if first < 0 or end is None or end < 0:
            return None
        stop = max(stop, end)
    return stop


def _progress(done: int, total: int) -> IndexProgress:
    return IndexProgress(done, done, total, 0, done == total)


def export_iter(source, out: str, fmt: str, indices: Sequence[int] | None = None,
                compression: Compression | str | None = None,
                report: ExportReport | None = None, csv_formulas: str = "escape", *,
                array_record_options: str | None = None) -> Iterator[IndexProgress]:
    """Export ``indices`` (default: all) of ``source`` to ``out`` in ``fmt``.

    ``compression`` (tfrecord only): None follows the name of ``out``
    (``.gz`` GZIP, ``.zz``/``.zlib`` ZLIB, else none). Writing over a file
    the source reads is refused. ``out`` may be a URL (``s3://bkt/out.jsonl``;
    for images a prefix): each file is uploaded whole when it is complete.
    ``csv_formulas`` (csv only): "escape" prefixes text cells a spreadsheet
    would run as a formula with ``'``; "keep" writes them as they are.
    ``array_record_options`` (array_record only): Google's writer options
    (``zstd:9,group_size:4``); ``group_size:1`` unless they name a group size.
    """
    source = as_source(source)
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if csv_formulas not in CSV_FORMULAS:
        raise UsageError(f"unknown csv_formulas {csv_formulas!r}: expected one of {', '.join(CSV_FORMULAS)}")
    if compression is None:
        compression = Compression.for_name(out) if fmt == "tfrecord" else Compression.NONE
    if fmt != "tfrecord" and Compression.parse(compression) is not Compression.NONE:
        raise UsageError(f"--compression applies to tfrecord exports only, not {fmt}")
    if array_record_options is not None and fmt != "array_record":
        raise UsageError(f"--array-record-options applies to array_record exports only, not {fmt}")
    if fmt not in FOLDER_FORMATS:
        check_not_input(out, source_paths(source), "the export")
    indices = list(range(len(source))) if indices is None else list(indices)
    report = report if report is not None else ExportReport(out, fmt)
    report.path, report.format = out, fmt
    if fmt == "csv":
        yield from _csv(source, out, indices, report, csv_formulas == "escape")
        return
    if fmt == "array_record":
        from codec.ops.export_array_record import ArrayRecordWriter

        yield from _records(source, indices, report, lambda: ArrayRecordWriter(out, array_record_options),
                            "written as read")
        return
    runner = {"tfrecord": _tfrecord, "jsonl": _jsonl, "images": _images, "audio": _audio}[fmt]
    yield from runner(source, out, indices, report, Compression.parse(compression))


def export(source, out: str, fmt: str, indices: Sequence[int] | None = None,
           compression: Compression | str | None = None, csv_formulas: str = "escape", *,
           array_record_options: str | None = None) -> ExportReport:
    report = ExportReport(out, fmt)
    for _ in export_iter(source, out, fmt, indices, compression, report, csv_formulas,
                         array_record_options=array_record_options):
        pass
    return report


def _tfrecord(source, out, indices, report, compression) -> Iterator[IndexProgress]:
    yield from _records(source, indices, report, lambda: TFRecordWriter(out, compression), "written with fresh CRCs")


def _records(source, indices, report, open_writer, damaged_note: str) -> Iterator[IndexProgress]:
    """Each record of ``indices`` unchanged, through the writer ``open_writer()`` makes (committed when
    every record is written, dropped on any failure); a note counts damaged records written."""
    damaged = 0
    with open_writer() as w:
        for k, i in enumerate(indices):
            if source.status(i).damaged and not source.status(i).data_intact:
                damaged += 1
            w.write(source.data(i))
            report.records += 1
            if k % PROGRESS_EVERY == 0:
                yield _progress(k, len(indices))
    if damaged:
        report.notes.append(f"{damaged} damaged record(s) {damaged_note}")
    yield _progress(len(indices), len(indices))


def _jsonl(source, out, indices, report, compression) -> Iterator[IndexProgress]:
    payload = getattr(source, "payload", None)
    labels = getattr(source, "labels", None)
    from codec.decode.json_batches import JsonLinesWriter

    buf = _TextSink(out)
    with buf:
        lines = JsonLinesWriter(buf, payload, labels)  # a batch at a time
        for k, i in enumerate(indices):
            if isinstance(source, FileSource):
                rec = source.tfile.read(i)
                lines.write(i, rec.data, rec.status, rec.info.offset, rec.info.length,
                            source.tfile.location(i)[0] if payload is not None else None)
            else:
                lines.write(i, source.data(i), source.status(i))
            report.records += 1
            if k % PROGRESS_EVERY == 0:
                yield _progress(k, len(indices))
        lines.flush()
    yield _progress(len(indices), len(indices))


def csv_cell(dtype: str | None, values: list, counters: dict, escape: bool = False,
             scalar: str | None = None) -> str:
    """One feature of one record as a CSV cell (the rules are in docs/cli-reference.md; a payload's ``scalar`` types
    in docs/exact-values.md: doubles in full, bools as true/false, integers as plain digits); with
    ``escape``, a text cell a spreadsheet would run as a formula gets a ``'`` first (see :func:`csv_text`)."""
    if not values:
        return ""
    if scalar == "bool":
        texts = ["true" if v else "false" for v in values]
        return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
    if scalar == "double":
        texts = [repr(float(v)) for v in values]
        return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
    if dtype == "bytes":
        texts = []
        for v in values:
            if is_text(v) or v == b"":
                texts.append(v.decode("utf-8"))
            else:
                counters["base64"] = counters.get("base64", 0) + 1
                texts.append(base64.b64encode(v).decode("ascii"))
        return csv_text(texts[0], counters, escape) if len(texts) == 1 else json.dumps(texts, ensure_ascii=False)
    if dtype == "float":
        values = [float(v) for v in values]
        if len(values) == 1:
            return _float_text(values[0])
        return "[" + ",".join(_float_text(v) for v in values) + "]"
    return str(values[0]) if len(values) == 1 else json.dumps(values)


def csv_text(text: str, counters: dict, escape: bool = True) -> str:
    """``text`` for a CSV cell: with ``escape``, ``'`` before a first character a spreadsheet reads as
    the start of a formula (``=HYPERLINK(...)``), counted in ``counters["formulas"]``."""
    if escape and text.startswith(FORMULA_STARTS):
        counters["formulas"] = counters.get("formulas", 0) + 1
        return "'" + text
    return text


def _feature_cell(feature, counters: dict, escape: bool) -> str:
    return csv_cell(*feature_values(feature), counters, escape, scalar_of(feature))


def _names_cell(key: str, features, labels, counters: dict, escape: bool) -> str:
    """The class names of a label feature's ids, as ``csv_cell`` writes a list (one name alone)."""
    if key not in features:
        return ""
    dtype, values = feature_values(features[key])
    if dtype != "int64" or not values:
        return ""
    names = [labels.name(key, v) or "" for v in values]
    return csv_text(names[0], counters, escape) if len(names) == 1 else json.dumps(names, ensure_ascii=False)


def _float_text(v: float) -> str:
    import numpy as np

    return str(np.float32(v))


def _csv(source, out, indices, report, escape: bool) -> Iterator[IndexProgress]:
    keys: dict[str, None] = {}
    total = len(indices)
    payload = getattr(source, "payload", None)
    for k, i in enumerate(indices):  # first pass: the columns
        decoded = decode_record(source.data(i), payload)
        features = record_features(decoded)
        for key in (features or ()):
            keys.setdefault(key)
        if k % PROGRESS_EVERY == 0:
            yield IndexProgress(k // 2, k, 2 * total, 0)
    columns = sorted(keys)
    labels = getattr(source, "labels", None)
    named = [key for key in columns if labels and labels.get(key) is not None]
    counters: dict[str, int] = {}
    lists_skipped = raw = 0
    sink = _TextSink(out)
    with sink:
        writer = _CsvRows(sink)
        writer.writerow(["index"] + [csv_text(key, counters, escape) for key in columns]
                        + [csv_text(f"{key} (name)", counters, escape) for key in named])
        for k, i in enumerate(indices):
            decoded = decode_record(source.data(i), payload)
            if decoded.kind is RecordKind.RAW:
                raw += 1
                writer.writerow([i] + [""] * (len(columns) + len(named)))
            else:
                features = record_features(decoded)  # not None: the record is not raw
                row = [i]
                for key in columns:
                    row.append(_feature_cell(features[key], counters, escape) if key in features else "")  # type: ignore[index, operator]
                for key in named:
                    row.append(_names_cell(key, features, labels, counters, escape))
                writer.writerow(row)
                if record_feature_lists(decoded):
                    lists_skipped += 1
            report.records += 1
            if k % PROGRESS_EVERY == 0:
                yield IndexProgress(total // 2 + k // 2, total + k, 2 * total, 0)
    if counters.get("base64"):
        report.notes.append(f"{counters['base64']:,} binary bytes value(s) written as base64")
    if counters.get("formulas"):
        report.notes.append(f"{counters['formulas']:,} cell(s) starting with =, +, -, @, tab or CR written after "
                            "a ' so that spreadsheets do not run them as formulas (--csv-formulas keep: as they are)")
    if lists_skipped:
        report.notes.append(f"feature lists of {lists_skipped:,} SequenceExample(s) not exported: "
                            "CSV has one cell per feature and record (use jsonl)")
    if raw:
        report.notes.append(f"{raw:,} raw record(s) have no features: their rows are empty (use jsonl or tfrecord)")
    yield _progress(total, total)


class _CsvRows:
    """csv.writer rows, quoted whole when a cell holds a carriage return: Python's writer quotes only what
    its line terminator holds (``\n``), and a bare CR splits the row for most readers."""

    def __init__(self, sink) -> None:
        self._plain = csv.writer(sink, lineterminator="\n")
        self._quoted = csv.writer(sink, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list) -> None:
        quoted = any("\r" in cell for cell in row if isinstance(cell, str))
        (self._quoted if quoted else self._plain).writerow(row)


def image_file_name(index: int, key: str, value_index: int, step: int | None, ext: str,
                    tagged: bool = False) -> str:
    """``000012_image_encoded.jpg``: record, feature key (made safe), step, value; at most 200 bytes.

    A key too long for that is cut and ends in a short hash of the whole key,
    as does every name when ``tagged`` (for keys that read alike once made safe).
    """
    safe = "".join(c if c.isalnum() or c in "-." else "_" for c in key).strip("_") or "image"
    tail = (f"_step{step}" if step is not None else "") + (f"_{value_index}" if value_index else "") + "." + ext
    head = f"{index:06d}_"
    room = IMAGE_NAME_BYTES - len(head.encode()) - len(tail.encode())
    if tagged or len(safe.encode()) > room:
        tag = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe = safe.encode()[: max(0, room - len(tag) - 1)].decode("utf-8", "ignore") + "_" + tag
    return head + safe + tail


def _images(source, out, indices, report, compression) -> Iterator[IndexProgress]:
    def files(decoded):
        for ref in find_images(decoded):
            if ref.kind == "encoded":
                yield ref, IMAGE_EXTENSIONS.get(ref.format, ref.format.lower()), ref.data
                continue
            try:
                image = decode_image(ref)
            except ImageDecodeError:
                yield ref, "png", None
                continue
            b = io.BytesIO()
            image.save(b, format="PNG")
            yield ref, "png", b.getvalue()

    yield from _value_files(source, out, indices, report, files, "raw pixel buffer(s) could not be converted")


def _audio(source, out, indices, report, compression) -> Iterator[IndexProgress]:
    """One WAV per audio value (:func:`codec.decode.audio.wav_bytes`), named as image exports are."""
    from codec.decode.audio import AudioDecodeError, find_audio, wav_bytes

    def files(decoded):
        for ref in find_audio(decoded):
            try:
                yield ref, "wav", wav_bytes(ref)
            except AudioDecodeError:
                if not ref.weak:  # (bare MP3 frame sync that does not decode is not audio)
                    yield ref, "wav", None

    yield from _value_files(source, out, indices, report, files,
                            "audio value(s) do not decode (tfrlens-cli media lists them)")


def _value_files(source, out, indices, report, files, failed_note: str) -> Iterator[IndexProgress]:
    """One file per value in the folder ``out``: ``files(decoded)`` yields (ref, extension, bytes) of
    each value of a record, bytes None for one that could not be converted (counted in a note)."""
    make_output_folder(out)
    failed = 0
    payload = getattr(source, "payload", None)
    for k, i in enumerate(indices):
        used: set[str] = set()
        for ref, ext, blob in files(decode_record(source.data(i), payload)):
            if blob is None:
                failed += 1
                continue
            name = image_file_name(i, ref.key, ref.value_index, ref.step, ext)
            if name in used:
                name = image_file_name(i, ref.key, ref.value_index, ref.step, ext, tagged=True)
            used.add(name)
            atomic_write_bytes(output_join(out, name), blob)
            report.files += 1
        report.records += 1
        if k % 64 == 0:
            yield _progress(k, len(indices))
    if failed:
        report.notes.append(f"{failed} {failed_note}")
    yield _progress(len(indices), len(indices))


class _TextSink(io.StringIO):
    """Collect text and write it (UTF-8) to an :class:`OutputFile` in chunks, to bound memory."""

    CHUNK = 8 << 20

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self._out = OutputFile(path)

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.tell() >= self.CHUNK:
            self._flush_chunk()
        return n

    def _flush_chunk(self) -> None:
        self._out.write(self.getvalue().encode("utf-8"))
        self.seek(0)
        self.truncate()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self._out.abort()
            return
        try:
            self._flush_chunk()
            self._out.commit()
        except BaseException:
            self._out.abort()
            raise
