"""Scalar points of TensorBoard runs: what ``tfrlens-cli scalars`` prints.

A point is one scalar summary value: a TF1 ``simple_value``, or a TF2 tensor
summary of the ``scalars`` plugin holding one number (any float or integer
dtype, from ``tensor_content`` or the typed ``*_val`` lists). A tag's plugin is
named by its first value's metadata; later values of the tag may leave it out
(TensorFlow's writers do), so it is remembered per run, as TensorBoard does.
Values are doubles (a float32 widened exactly). Runs are read one after another,
each file record by record: an event file's unfinished last record is a file
still being written, not damage; any other damage is a problem of the file.
"""
from __future__ import annotations

import fnmatch
import math
import os
import re
import stat
import struct
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NamedTuple, TextIO

from codec.datasets.event_logs import Run, unfinished_tail
from codec.format.framing import Problem

__all__ = ["COLUMNS", "FileProblems", "ScalarPoint", "may_have_summary", "point_json", "point_value", "scalar_points",
           "write_csv"]

COLUMNS = ("run", "tag", "step", "wall_time", "value")  # a point's fields, a CSV's header

# Tags of the fields before Event.summary (5) in TensorFlow's order that mean it has none: file_version (3),
# graph_def (4), log_message (6), session_log (7), tagged_run_metadata (8), meta_graph_def (9), one of
# the `what` oneof as the summary is.
_NOT_SUMMARY = frozenset({0x1A, 0x22, 0x32, 0x3A, 0x42, 0x4A})
_STEP = 0x10
SCALARS_PLUGIN = "scalars"

# DataType number -> (struct format of one little-endian value in tensor_content, the TensorProto list
# holding it otherwise, how a list's entry becomes the value)
_AS_IS: Callable = float
_DTYPES: dict[int, tuple[str, str, Callable]] = {
    1: ("<f", "float_val", _AS_IS),  # DT_FLOAT
    2: ("<d", "double_val", _AS_IS),  # DT_DOUBLE
    3: ("<i", "int_val", _AS_IS),  # DT_INT32
    4: ("<B", "int_val", _AS_IS),  # DT_UINT8
    5: ("<h", "int_val", _AS_IS),  # DT_INT16
    6: ("<b", "int_val", _AS_IS),  # DT_INT8
    9: ("<q", "int64_val", _AS_IS),  # DT_INT64
    10: ("<?", "bool_val", _AS_IS),  # DT_BOOL
    14: ("bf16", "half_val", lambda bits: struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]),
    17: ("<H", "int_val", _AS_IS),  # DT_UINT16
    19: ("<e", "half_val", lambda bits: struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]),  # DT_HALF
    22: ("<I", "uint32_val", _AS_IS),  # DT_UINT32
    23: ("<Q", "uint64_val", _AS_IS),  # DT_UINT64
}


class ScalarPoint(NamedTuple):
    """One scalar value of a run's tag at a step (a tuple: a log has millions, made in a tight loop)."""

    run: str
    tag: str
    step: int
    wall_time: float
    value: float


@dataclass
class FileProblems:
    """An event file's damage (its unfinished last record left out: the file is being written) and
    whether it ended in a record still being written."""

    path: str
    problems: list[Problem] = field(default_factory=list)
    writing: bool = False
    error: str | None = None  # the file could not be read at all (one line)
    not_events: int = 0  # intact records that do not parse as an Event (left out)
    first_not_event: int | None = None  # the number of the first of them in the file


def point_json(point: ScalarPoint) -> dict:
    """``{"run", "tag", "step", "wall_time", "value"}``; a NaN or infinite number as protobuf's JSON spells
    it (``"NaN"``, ``"Infinity"``, ``"-Infinity"``)."""
    return {"run": point.run, "tag": point.tag, "step": point.step, "wall_time": _json_number(point.wall_time),
            "value": _json_number(point.value)}


def write_csv(points: Iterable[ScalarPoint], out: TextIO, escape: bool = True) -> dict:
    """``points`` as CSV on ``out`` (a header line, then one row per point, numbers as JSON spells them);
    with ``escape`` run and tag cells a spreadsheet would run as a formula get a ``'`` first. Returns
    the counters of what was escaped (``{"formulas": n}``)."""
    import csv

    from codec.ops.export import csv_text

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    counters: dict = {}
    for point in points:
        row = point_json(point)
        writer.writerow((csv_text(point.run, counters, escape), csv_text(point.tag, counters, escape),
                         point.step, _number_text(row["wall_time"]), _number_text(row["value"])))
    return counters


def _number_text(value) -> str:
    return value if isinstance(value, str) else repr(value)


def _json_number(value: float):
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def scalar_points(runs: list[Run], *, tag: str | None = None, check_crc: bool = True,
                  on_file: Callable[[FileProblems], None] | None = None) -> Iterator[ScalarPoint]:
    """Every scalar point of ``runs``, run by run, each run's files in order, each file in record order.

    ``tag``: a glob (``fnmatch``, case-sensitive) the tag must match. ``on_file`` is told each
    file's problems once it is read to its end.
    """
    from google.protobuf.message import DecodeError

    from codec.decode.events import event_class

    parse = event_class().FromString
    wanted = _tag_filter(tag)
    for run in runs:
        plugins: dict[str, str] = {}  # tag -> the plugin its first metadata named, in this run
        for path in run.files:
            report = FileProblems(path)
            for number, data in enumerate(_event_records(path, check_crc, report)):
                if not may_have_summary(data):
                    continue
                try:
                    event = parse(data)
                except (DecodeError, RuntimeError, ValueError):
                    report.not_events += 1
                    if report.first_not_event is None:
                        report.first_not_event = number
                    continue
                if not event.HasField("summary"):
                    continue
                for value in event.summary.value:
                    point = point_value(value, plugins)
                    if point is not None and (wanted is None or wanted(value.tag)):
                        yield ScalarPoint(run.name, value.tag, event.step, event.wall_time, point)
            if on_file is not None:
                on_file(report)


def _tag_filter(pattern: str | None) -> Callable[[str], bool] | None:
    if pattern is None:
        return None
    match = re.compile(fnmatch.translate(pattern)).match
    return lambda tag: match(tag) is not None


def may_have_summary(data: bytes) -> bool:
    """False for an event whose bytes say it holds no summary (a file_version, a graph...), read past
    ``wall_time`` and ``step`` without parsing; True when it may (it is parsed then)."""
    pos = 9 if data[:1] == b"\x09" else 0
    if len(data) > pos and data[pos] == _STEP:
        pos += 1
        while pos < len(data) and data[pos] & 0x80:
            pos += 1
        pos += 1
    return pos >= len(data) or data[pos] not in _NOT_SUMMARY


def point_value(value, plugins: dict[str, str]) -> float | None:
    """The number a summary value holds as a scalar point, or None when it is not one."""
    kind = value.WhichOneof("value")
    tag = value.tag
    plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else ""
    if plugin and tag not in plugins:
        plugins[tag] = plugin
    if kind == "simple_value":
        return float(value.simple_value)
    if kind != "tensor" or plugins.get(tag) != SCALARS_PLUGIN:
        return None
    return _tensor_scalar(value.tensor)


def _tensor_scalar(tensor) -> float | None:
    """The one number of a rank-0 (or one-element) numeric TensorProto, or None."""
    dims = tensor.tensor_shape.dim
    if dims and any(dim.size != 1 for dim in dims):
        return None
    spec = _DTYPES.get(tensor.dtype)
    if spec is None:
        return None
    fmt, values_name, convert = spec
    content = tensor.tensor_content
    if content:
        if fmt == "bf16":
            if len(content) != 2:
                return None
            return struct.unpack("<f", b"\x00\x00" + content)[0]
        if len(content) != struct.calcsize(fmt):
            return None
        return float(struct.unpack(fmt, content)[0])
    values = getattr(tensor, values_name)
    if len(values) != 1:
        return None
    return float(convert(values[0]))


def _event_records(path: str, check_crc: bool, report: FileProblems) -> Iterator[bytes]:
    """The intact records of one event file, CRCs checked unless ``check_crc`` is off; its damage goes in
    ``report`` (an unfinished last record is not damage: ``report.writing``).

    A sound plain file is read in large blocks here; from the first thing out of the ordinary (a CRC
    that fails, a record cut short, a compressed file) the codec's reader takes over at that record,
    so damage is found, resynchronised past and reported exactly as every command reports it.
    """
    clean = _clean_records(path, check_crc)
    done = 0
    try:
        while True:
            yield next(clean)
            done += 1
    except StopIteration as stop:
        if stop.value:
            return
    yield from _records_after(path, check_crc, report, done)


def _clean_records(path: str, check_crc: bool):
    """The records of a plain file while every header and record holds; returns True when all of it did
    (False at the first record that does not, or a file that cannot be read here)."""
    from google_crc32c import value as crc32c

    from codec.format.crc import mask
    from codec.format.layout import CRC, HEADER_SIZE, LENGTH, OVERHEAD

    unpack_length, unpack_crc = LENGTH.unpack_from, CRC.unpack_from
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device: the codec's reader refuses it in one line
            return False
        f = open(path, "rb")
    except OSError:
        return False
    try:
        buf = b""
        pos = 0
        unread = st.st_size
        while True:
            if len(buf) - pos < HEADER_SIZE:
                more = f.read(_BLOCK)
                if not more:
                    return pos == len(buf)
                buf, pos, unread = buf[pos:] + more, 0, unread - len(more)
                continue
            (length,) = unpack_length(buf, pos)
            if mask(crc32c(buf[pos:pos + 8])) != unpack_crc(buf, pos + 8)[0]:
                return False
            end = pos + OVERHEAD + length
            if end > len(buf):
                if end - len(buf) > unread:
                    return False  # cut short: the codec's reader says whether it is being written
                more = f.read(max(_BLOCK, end - len(buf)))
                if not more:  # it shrank while read
                    return False
                buf, pos, unread = buf[pos:] + more, 0, unread - len(more)
                continue
            data = buf[pos + HEADER_SIZE:end - 4]
            if check_crc and mask(crc32c(data)) != unpack_crc(buf, end - 4)[0]:
                return False
            yield data
            pos = end
    finally:
        f.close()


_BLOCK = 4 << 20


def _records_after(path: str, check_crc: bool, report: FileProblems, start: int) -> Iterator[bytes]:
    """The intact records of ``path`` from record ``start`` on, read by the codec's reader (damage found,
    recorded and read past as every command does); its problems go in ``report``."""
    from codec.errors import TFRecordError
    from codec.index.scan import IndexProgress
    from codec.sources.record_pass import iter_records
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(path, check_crc=check_crc, use_cache=False)
    except TFRecordError as exc:
        report.error = str(exc)
        return
    with f:
        f.build_index()
        unfinished = unfinished_tail(f)
        for item in iter_records(f, range(start, len(f)), intact_only=True):
            if not isinstance(item, IndexProgress):
                yield item[1]
        report.problems = [p for p in f.problems if p is not unfinished]
        report.writing = unfinished is not None
