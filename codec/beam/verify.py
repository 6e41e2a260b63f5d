"""``verify`` over many shards as independent tasks, the report the local command prints.

A file is one task ``{"path", "info", "use_cache"}``: its path or URL, its
listing entry, and whether the index cache is used; its result holds what the
local loop prints for that file. A plain file larger than
:data:`codec.beam.ranges.RANGE_BYTES` is cut into byte ranges instead, one task
each, and its ranges' results are stitched back into that same result (see
:mod:`codec.beam.ranges`). The driver prints the results in listing order with
the local command's own report function, so ``--json`` output is the same byte
for byte.
"""
from __future__ import annotations

__all__ = ["run_verify", "verify_task", "verify_work"]


def verify_task(task: dict) -> dict:
    """Verify one file as the local ``verify`` does (every length and data CRC): its counts and problems.

    A file that cannot be opened gives ``error``; a failure the local command
    would stop on gives ``fatal``; both carry the one-line message.
    """
    from codec.cli.report import status_counts as _status_counts, verify_data as _verify_data
    from codec.errors import TFRecordError
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(task["path"], check_crc=True, use_cache=task["use_cache"], info=task.get("info"))
    except TFRecordError as exc:
        return {"error": str(exc)}
    try:
        with f:
            _verify_data(f)
            return {"path": f.path, "compression": f.compression.value, "records": len(f),
                    "ok": _status_counts(f)["ok"], "problems": list(f.problems)}
    except TFRecordError as exc:
        return {"fatal": str(exc)}


def verify_work(task: dict) -> dict:
    """One task of a Beam ``verify``: a whole file (:func:`verify_task`) or one range of a large one."""
    if "start" in task or "offsets" in task:
        from codec.beam.ranges import range_task

        return range_task(task)
    return verify_task(task)


def run_verify(args) -> int:
    """The ``verify`` command with ``--runner``/``--out``: the local command's output and exit code."""
    from collections import Counter

    from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, out as _out, task_failed, verify_report as _verify_report
    from codec.cli.sources import entries
    from codec.beam.pipeline import run
    from codec.beam.ranges import plan_files, verify_result

    found, single = entries(args)
    if args.out is not None:
        from codec.storage.writer import check_not_input

        check_not_input(args.out, [path for path, _ in found], "the report")
    plans = plan_files(found, not args.no_cache, args.runner)
    tasks = []
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
        _verify_report(args, *report)
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

    from codec.cli.report import verify_report as _verify_report
    from codec.storage.writer import atomic_write_bytes

    as_json = argparse.Namespace(**{**vars(args), "json": True})
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        for report in reports:
            _verify_report(as_json, *report)
    atomic_write_bytes(args.out, text.getvalue().encode())
