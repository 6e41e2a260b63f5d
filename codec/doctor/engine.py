""":func:`codec.doctor.check_iter`'s work: find the files, plan the tasks, run them, draw the findings."""
from __future__ import annotations

import os
from dataclasses import dataclass

from codec.doctor.report import CHECKS, ERROR, CheckOptions, CheckProgress, CheckReport, Finding, RecordRef
from codec.errors import TFRecordError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generator

__all__ = ["Plan", "add_task_findings", "finish", "min_run", "prepare", "run"]

SMALL_INPUT = 4 << 20  # bytes: checked in this process, a worker's start-up costs more than it saves
SPLIT_BYTES = 16 << 20  # a plain local file this large may be cut into record ranges
TASKS_PER_WORKER = 4
MAX_THRESHOLD = 32


def _validate(options: CheckOptions) -> frozenset[str]:
    checks = frozenset(options.checks)
    unknown = sorted(checks - set(CHECKS))
    if unknown:
        raise UsageError(f"unknown check(s): {', '.join(unknown)} (known: {', '.join(CHECKS)})")
    if not checks:
        raise UsageError("no checks to run")
    if not 0 <= options.near_threshold <= MAX_THRESHOLD:
        raise UsageError(f"the near-duplicate threshold is a number of bits, 0..{MAX_THRESHOLD}: "
                         f"got {options.near_threshold}")
    if options.shuffle_buffer < 1:
        raise UsageError(f"the shuffle buffer holds at least 1 record: got {options.shuffle_buffer}")
    if options.workers < 0:
        raise UsageError(f"workers must be 0 (one per core) or more: got {options.workers}")
    return checks


def _label_map(paths: list[str], choice, given: str | None) -> str | None:
    """The label map file to use: the user's, the one the payload options found, or one in the folder
    all the (local) files share."""
    if given is not None:
        return given
    if choice.labels is not None:
        return getattr(choice.labels, "source", None)
    if choice.dataset is not None:
        return None
    local = [p for p in choice.files if "://" not in p]
    if not local or len(local) != len(choice.files):
        return None
    from codec.datasets.label_maps import find_label_map

    folders = {p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in local}
    if len(folders) != 1:
        return None
    found = find_label_map(folders.pop())
    return os.fspath(found) if found is not None else None


def _size(path: str, info: dict | None) -> int:
    if info is not None:
        return int(info.get("size") or 0)
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _plan(found: list[tuple[str, dict | None]], workers: int) -> tuple[list, list[Finding], int | None]:
    """The tasks; damage the parent found while indexing a file it cut into ranges; the record count when
    every file was indexed here (else None)."""
    from codec.doctor.per_record import Task, problem_findings
    from codec.format.framing import Compression
    from codec.sources.record_file import open_record_file

    sizes = [_size(p, info) for p, info in found]
    total = sum(sizes)
    piece = max(SPLIT_BYTES, total // max(1, workers * TASKS_PER_WORKER))
    tasks: list[Task]
    counted: int | None  # None: a file was not indexed here
    tasks, damage, counted = [], [], 0
    for file_id, ((path, info), size) in enumerate(zip(found, sizes)):
        f = None
        if info is None:
            f = open_record_file(path, check_crc=True, use_cache=True)  # fails now, in one line, if it is neither
        if f is None or workers <= 1 or size < 2 * piece or f.compression is not Compression.NONE:
            if f is not None:
                f.close()
            tasks.append(Task(len(tasks), file_id, path, info))
            counted = None
            continue
        with f:
            f.build_index()  # its cache spares the workers the walk
            n = len(f)
            for p in problem_findings(f.problems):
                damage.append(Finding(p[0], p[1], [RecordRef(path, p[2])] if p[2] is not None else [], p[3]))
        pieces = max(1, min(n // 1000, round(size / piece)))
        edges = [n * k // pieces for k in range(pieces + 1)]
        for a, b in zip(edges, edges[1:]):
            tasks.append(Task(len(tasks), file_id, path, info, a, b, whole=pieces == 1))
        if counted is not None:
            counted += n
    return tasks, damage, counted


@dataclass
class Plan:
    """What a check runs: the checks, the tasks, the files (by ``file_id``) and their splits, the Inspector's
    arguments, and damage the planning found."""

    checks: frozenset[str]
    tasks: list
    damage: list[Finding]
    counted: int | None  # records, when every file was indexed while planning
    file_paths: list[str]
    splits: list[str | None]
    setup: dict
    workers: int
    sizes: int


def prepare(paths: list[str], options: CheckOptions) -> Generator[CheckProgress, None, Plan]:
    """Validate the options, find the files and plan the tasks; yields progress, returns the :class:`Plan`
    (``plan = yield from prepare(...)``). Shared by the local run and Beam's (:mod:`codec.beam.check`)."""
    from codec.datasets.payload_choice import choose_for
    from codec.doctor.pool import available_cores
    from codec.doctor.splits import split_of
    from codec.storage.listing import expand_entries

    checks = _validate(options)
    if not paths:
        raise UsageError("no files to check")
    choice = choose_for(paths, label_map=options.label_map)
    label_map = _label_map(paths, choice, options.label_map)
    found, notes = expand_entries(choice.files)
    if not found:
        raise UsageError("; ".join(notes) or "no TFRecord files to check")
    yield CheckProgress("index", 0, len(found))
    sizes = sum(_size(p, i) for p, i in found)
    workers = options.workers or (1 if sizes < SMALL_INPUT else available_cores())
    tasks, damage, counted = _plan(found, workers)
    file_paths = [p for p, _ in found]
    splits = [split_of(p, options.splits, choice.dataset) for p in file_paths]
    setup = {"named": list(paths), "label_map": label_map, "checks": checks, "image_key": options.image_key,
             "label_key": options.label_key, "shuffle_buffer": options.shuffle_buffer}
    return Plan(checks, tasks, [f for f in damage if "damage" in checks], counted, file_paths, splits, setup,
                workers, sizes)


def min_run(options: CheckOptions) -> int:
    """The shortest run of one label that label_order reports."""
    from codec.doctor.per_record import MIN_RUN

    return max(MIN_RUN, options.shuffle_buffer // 2)


def run(paths: list[str], options: CheckOptions) -> Generator[CheckProgress | CheckReport, None, None]:
    from codec.doctor.grouping import Store
    from codec.doctor.pool import run_tasks

    plan = yield from prepare(paths, options)
    tasks, sizes, counted, file_paths = plan.tasks, plan.sizes, plan.counted, plan.file_paths
    store = Store(file_paths, plan.splits)
    findings = list(plan.damage)
    dropped: dict[str, int] = {}
    done = finished_records = records = 0
    finished_sizes = 0
    estimate = counted or 0
    yield CheckProgress("check", 0, estimate)
    task_sizes = {t.task_id: _size(t.path, t.info) for t in tasks if t.whole}
    if options.task_runner is not None:  # the same tasks on Apache Beam
        from codec.doctor.per_record import Inspector

        results = options.task_runner(tasks, Inspector, plan.setup, max(2, plan.workers))
    else:
        results = run_tasks(tasks, plan.setup, plan.workers)
    try:
        for item in results:
            if isinstance(item, int):
                done += item
            else:
                records += add_task_findings(item, file_paths, findings, dropped)
                store.add(item)
                if counted is None and item.task_id in task_sizes:
                    finished_sizes += task_sizes[item.task_id]
                    finished_records += item.count
                    if finished_sizes:
                        estimate = max(records, round(finished_records / finished_sizes * sizes))
            yield CheckProgress("check", done, max(estimate, done) if estimate else 0)
    finally:
        results.close()  # a closed check stops its workers now, not when collected
    yield CheckProgress("compare", records, records)
    findings += store.findings(plan.checks, options.near_threshold, min_run(options), options.shuffle_buffer)
    yield finish(records, findings, dropped)


def add_task_findings(result, file_paths: list[str], findings: list[Finding], dropped: dict[str, int]) -> int:
    """A task's per-record findings into ``findings`` and its uncounted ones into ``dropped``; its record count.
    A task that could not read its file raises its one-line error."""
    if result.error is not None:
        raise TFRecordError(result.error)
    for check, severity, index, detail in result.findings:
        refs = [RecordRef(file_paths[result.file_id], index)] if index is not None else []
        findings.append(Finding(check, severity, refs, detail))
    for check, n in result.dropped.items():
        dropped[check] = dropped.get(check, 0) + n
    return result.count


def finish(records: int, findings: list[Finding], dropped: dict[str, int]) -> CheckReport:
    """The report: per-record findings capped per check, then ordered by check, severity, first record, detail."""
    findings = _capped(findings, dropped)
    order = {c: n for n, c in enumerate(CHECKS)}
    findings.sort(key=lambda f: (order[f.check], f.severity != ERROR, f.records[:1], f.detail))
    return CheckReport(records, findings)


def _capped(findings: list[Finding], dropped: dict[str, int]) -> list[Finding]:
    """At most MAX_FINDINGS per-record findings per check (per severity); one line for the rest."""
    from codec.doctor.per_record import MAX_FINDINGS

    kept: list[Finding] = []
    counts: dict[tuple[str, str], int] = {}
    extra = dict(dropped)
    severities: dict[str, str] = {}
    for f in findings:
        key = (f.check, f.severity)
        counts[key] = counts.get(key, 0) + 1
        severities.setdefault(f.check, f.severity)
        if counts[key] <= MAX_FINDINGS:
            kept.append(f)
        else:
            extra[f.check] = extra.get(f.check, 0) + 1
    for check, n in extra.items():
        if n:
            kept.append(Finding(check, severities.get(check, ERROR), [],
                                f"and {n:,} more record(s) with {check} findings, not listed"))
    return kept
