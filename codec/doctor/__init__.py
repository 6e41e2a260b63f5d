"""The dataset doctor: checks a set of TFRecord files for what spoils training before training does.

Duplicates, the same image in two splits, one image with two labels, bad boxes,
images that do not decode or whose declared format or size lies, audio that does
not decode, is silent or clipped, sample rates that differ, class ids not in the
label map, missing features, shards written in label order, and damage.
:func:`check_iter` runs them on a process pool (both cores) and yields progress;
its last item is the :class:`CheckReport`. The app's Dataset Check panel and
``tfrlens-cli check`` are both views over it.
"""
from __future__ import annotations

from codec.doctor.report import (
    CHECKS,
    ERROR,
    NEAR_THRESHOLD,
    SHUFFLE_BUFFER,
    WARNING,
    CheckOptions,
    CheckProgress,
    CheckReport,
    Finding,
    RecordRef,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generator

__all__ = ["CHECKS", "ERROR", "NEAR_THRESHOLD", "SHUFFLE_BUFFER", "WARNING", "CheckOptions", "CheckProgress",
           "CheckReport", "Finding", "RecordRef", "check_iter", "run_check"]


def check_iter(paths: list[str], options: CheckOptions | None = None) -> Generator[CheckProgress | CheckReport, None, None]:
    """Check the records of ``paths`` (files, folders, globs, URLs), yielding progress; the last item is
    the :class:`CheckReport`. Closing the generator cancels: its worker processes are stopped.

    Raises :class:`codec.errors.UsageError` for bad options and a :class:`codec.errors.TFRecordError`
    for an input that cannot be read at all.
    """
    from codec.doctor.engine import run

    return run(list(paths), options or CheckOptions())


def run_check(paths: list[str], options: CheckOptions | None = None) -> CheckReport:
    """:func:`check_iter` to the end: the report."""
    report = None
    for item in check_iter(paths, options):
        report = item
    assert isinstance(report, CheckReport)
    return report
