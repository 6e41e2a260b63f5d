"""``verify`` over many shards as independent tasks: one task per file, the report the local command prints.

A task is ``{"path", "info", "use_cache"}``: the file's path or URL, its
listing entry, and whether the index cache is used. Its result holds what the
local loop prints for that file. The driver prints the results in listing
order with the local command's own report function, so ``--json`` output is
the same byte for byte.

A file is one task, however large: its problems (resynchronisations, a
truncated tail) come from one pass over the whole file. The passes that cut a
big plain file into record ranges (``check``, ``stats``) run on Beam through
:mod:`codec.beam.parallel`.
"""
from __future__ import annotations

import sys

from ..errors import UsageError

__all__ = ["run_verify", "verify_task"]


def verify_task(task: dict) -> dict:
    """Verify one file as the local ``verify`` does (every length and data CRC): its counts and problems.

    A file that cannot be opened gives ``error``; a failure the local command
    would stop on gives ``fatal``; both carry the one-line message.
    """
    from ..cli_report import status_counts as _status_counts, verify_data as _verify_data
    from ..errors import TFRecordError
    from ..reader import TFRecordFile

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


def run_verify(args) -> int:
    """The ``verify`` command with ``--runner``/``--out``: the local command's output and exit code."""
    from collections import Counter

    from ..cli_report import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, out as _out, verify_report as _verify_report
    from ..cli_sources import entries
    from .pipeline import run

    found, single = entries(args)
    if args.out is not None:
        from ..writer import check_not_input

        check_not_input(args.out, [path for path, _ in found], "the report")
    tasks = [{"path": path, "info": info, "use_cache": not args.no_cache} for path, info in found]
    results = run(tasks, verify_task, args.runner, args.beam_option)
    code = EXIT_OK
    totals: Counter = Counter()
    reports = []
    for result in results:
        if "fatal" in result:
            raise UsageError(result["fatal"])
        if "error" in result:
            if single:
                raise UsageError(result["error"])
            sys.stderr.write(f"tfrlens-cli: {result['error']}\n")
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

    from ..cli_report import verify_report as _verify_report
    from ..writer import atomic_write_bytes

    as_json = argparse.Namespace(**{**vars(args), "json": True})
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        for report in reports:
            _verify_report(as_json, *report)
    atomic_write_bytes(args.out, text.getvalue().encode())
