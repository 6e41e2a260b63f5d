"""``verify`` and ``repair`` with a Beam ``--runner`` or ``--out``: the files planned as tasks
(:mod:`codec.beam.verify`, :mod:`codec.beam.repair`), run, and their results printed as the local
command prints them, with its exit code."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codec.beam.ranges import Plan

__all__ = ["run_repair", "run_verify"]


def run_verify(args) -> int:
    """The ``verify`` command with ``--runner``/``--out``: the local command's output and exit code."""
    from collections import Counter

    from codec.beam.pipeline import run
    from codec.beam.ranges import plan_files, verify_result
    from codec.beam.verify import verify_work
    from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, task_failed, verify_report
    from codec.cli.report import out as _out
    from codec.cli.sources import entries

    found, single = entries(args)
    if args.out is not None:
        from codec.storage.writer import check_not_input

        check_not_input(args.out, [path for path, _ in found], "the report")
    plans = plan_files(found, not args.no_cache, args.runner)
    tasks: list[dict] = []
    for (path, info), plan in zip(found, plans):
        whole = [{"path": path, "info": info, "use_cache": not args.no_cache}]
        tasks.extend(whole if plan is None else plan.tasks)
    done = iter(run(tasks, verify_work, args.runner, args.beam_option))
    code = EXIT_OK
    totals: Counter = Counter()
    reports = []
    for plan in plans:
        result = next(done) if plan is None else verify_result(plan, [next(done) for _ in plan.tasks])
        if task_failed(result, single):
            code = EXIT_USAGE
            totals["unusable"] += 1
            continue
        problems = result["problems"]
        n, ok = result["records"], result["ok"]
        totals.update(files=1, records=n, ok=ok, problems=len(problems))
        if problems and code == EXIT_OK:
            code = EXIT_PROBLEMS
        report = (result["path"], result["compression"], n, ok, problems, single)
        reports.append(report)
        verify_report(args, *report)
    if not single and not args.json:
        _out(f"total: {totals['files']} file(s), {totals['records']:,} records, {totals['ok']:,} ok, "
             f"{totals['problems']} problem(s)" + (f", {totals['unusable']} unusable" if totals["unusable"] else ""))
    if args.out is not None:
        _write_json_report(args, reports)
    return code


def _write_json_report(args, reports: list[tuple]) -> None:
    """``--out``: what ``--json`` prints (one JSON object per file), written safely to a path or URL."""
    import argparse
    import contextlib
    import io

    from codec.cli.report import verify_report
    from codec.storage.writer import atomic_write_bytes

    as_json = argparse.Namespace(**{**vars(args), "json": True})
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        for report in reports:
            verify_report(as_json, *report)
    atomic_write_bytes(args.out, text.getvalue().encode())


def run_repair(args) -> int:
    """The ``repair`` command with ``--runner``/``--out``: the local command's output and exit code."""
    import dataclasses

    from codec.beam.pipeline import run
    from codec.beam.ranges import plan_files
    from codec.beam.repair import joinable, part_name, ranged_report, remove_parts, repair_work
    from codec.cli.report import EXIT_OK, EXIT_USAGE, task_failed
    from codec.cli.report import out as _out
    from codec.cli.sources import entries
    from codec.format.framing import Compression
    from codec.storage.writer import (
        check_not_input,
        make_output_folder,
        output_is_folder,
        output_join,
        resolve_output_compression,
        with_compression_suffix,
    )

    found, single = entries(args)
    out = args.output
    if args.out is not None:
        check_not_input(args.out, [path for path, _ in found], "the report")
    to_folder = not single or output_is_folder(out)
    if to_folder:
        make_output_folder(out)
    plans = plan_files(found, not args.no_cache, args.runner)
    tasks: list[dict] = []
    jobs: list[tuple[dict, Plan | None]] = []  # (task, its plan or None)
    for (path, info), plan in zip(found, plans):
        target = output_join(out, os.path.basename(path)) if to_folder else out
        if to_folder and args.compression is not None:
            target = with_compression_suffix(target, args.compression)
        compression, warning = resolve_output_compression(target, args.compression)
        if warning:
            sys.stderr.write(f"tfrlens-cli: warning: {warning}\n")
        task = {"path": path, "info": info, "target": target, "compression": compression.value,
                "include_damaged": args.include_damaged, "use_cache": not args.no_cache}
        if plan is not None and compression is Compression.NONE and joinable(target, path):
            for k, piece in enumerate(plan.tasks):
                piece.update(part=part_name(target, k), include_damaged=args.include_damaged)
            tasks.extend(plan.tasks)
            jobs.append((task, plan))
        else:
            tasks.append(task)
            jobs.append((task, None))
    parts = [t["part"] for t in tasks if "part" in t]
    try:
        done = iter(run(tasks, repair_work, args.runner, args.beam_option))
        results = [next(done) if plan is None else ranged_report(task, plan, [next(done) for _ in plan.tasks])
                   for task, plan in jobs]
    finally:
        remove_parts(parts)
    code = EXIT_OK
    kept = dropped = 0
    reports = []
    for (task, _), result in zip(jobs, results):
        if task_failed(result, single):
            code = EXIT_USAGE
            continue
        report = result["report"]
        kept += report.kept
        dropped += len(report.dropped)
        reports.append(dataclasses.asdict(report))
        _out(f"{task['path']} -> {task['target']}: {report.summary()}")
    if not single:
        _out(f"total: {len(found)} file(s), kept {kept:,}, dropped {dropped:,}")
    if args.out is not None:
        import json

        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(args.out, "".join(json.dumps(r) + "\n" for r in reports).encode())
    return code
