"""Salvage: a clean copy of every record that can be trusted.

Kept: records whose data CRC holds (including those found by resynchronising
and those whose data CRC proves a damaged length). Dropped: records with a
failing data CRC and truncated ones, unless ``include_damaged`` asks for
them (written with their data as found and fresh CRCs, and listed as such).
Bytes that belong to no record (garbage, broken streams) are never written.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator

from codec.format.framing import Compression
from codec.index.scan import IndexProgress
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import TFRecordWriter, check_not_input


@dataclass
class RepairReport:
    source: str
    output: str
    kept: int = 0
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (index, status label)
    included_damaged: list[tuple[int, str]] = field(default_factory=list)
    problems: int = 0

    def summary(self) -> str:
        text = f"kept {self.kept:,} record(s), dropped {len(self.dropped):,}"
        if self.included_damaged:
            text += f", included {len(self.included_damaged):,} damaged on request " + \
                    "(" + ", ".join(f"#{i} {s}" for i, s in self.included_damaged[:10]) + \
                    (", …" if len(self.included_damaged) > 10 else "") + ")"
        if self.dropped:
            text += " (" + ", ".join(f"#{i} {s}" for i, s in self.dropped[:10]) + \
                    (", …" if len(self.dropped) > 10 else "") + ")"
        return text


def repair_iter(source: TFRecordFile, output: str | os.PathLike, compression: Compression | str | None = None,
                include_damaged: bool = False, report: RepairReport | None = None) -> Iterator[IndexProgress]:
    """Verify ``source`` (if not yet), then write its salvageable records to ``output``.

    ``compression`` None follows the name of ``output`` (``.gz`` GZIP,
    ``.zz``/``.zlib`` ZLIB, else none), not the source's.
    """
    output = os.fspath(output)
    check_not_input(output, [source.path], "the repaired copy")
    report = report if report is not None else RepairReport(source.path, output)
    if not source.verified:
        yield from source.verify_iter()
    comp = Compression.parse(compression) if compression is not None else Compression.for_name(output)
    n = len(source)
    report.problems = len(source.problems)
    with TFRecordWriter(output, comp) as w:
        for i in range(n):
            rec = source.read(i)
            if rec.status.data_intact:
                w.write(rec.data)
                report.kept += 1
            elif include_damaged:
                w.write(rec.data)
                report.included_damaged.append((i, rec.status.label))
            else:
                report.dropped.append((i, rec.status.label))
            if i % 4096 == 4095:
                yield IndexProgress(i + 1, i + 1, n, report.problems)
    yield IndexProgress(n, n, n, report.problems, True)


def repair(source: TFRecordFile, output, compression=None, include_damaged: bool = False) -> RepairReport:
    report = RepairReport(source.path, os.fspath(output))
    for _ in repair_iter(source, output, compression, include_damaged, report):
        pass
    return report


__all__ = ["RepairReport", "repair", "repair_iter"]
