"""``repair`` over many shards as independent tasks: one clean output shard per input shard.

A task is ``{"path", "info", "target", "compression", "include_damaged",
"use_cache"}``. Each writes its whole target through
:class:`codec.writer.OutputFile` (a temporary file renamed, or uploaded, on
commit), so a retried bundle replaces the same target and never leaves two
copies or half a file. The driver prints what the local command prints.
"""
from __future__ import annotations

import os
import sys

from ..errors import UsageError

__all__ = ["repair_task", "run_repair"]


def repair_task(task: dict) -> dict:
    """Repair one file into its target as the local ``repair`` does: ``{"report": RepairReport}``.

    A file that cannot be opened gives ``error``; a failure the local command
    would stop on gives ``fatal``.
    """
    from ..errors import TFRecordError
    from ..reader import TFRecordFile
    from ..repair import repair

    try:
        f = TFRecordFile(task["path"], check_crc=True, use_cache=task["use_cache"], info=task.get("info"))
    except TFRecordError as exc:
        return {"error": str(exc)}
    try:
        with f:
            report = repair(f, task["target"], task["compression"], task["include_damaged"])
    except TFRecordError as exc:
        return {"fatal": str(exc)}
    return {"report": report}


def run_repair(args) -> int:
    """The ``repair`` command with ``--runner``/``--out``: the local command's output and exit code."""
    import dataclasses

    from ..cli_report import EXIT_OK, EXIT_USAGE, out as _out
    from ..cli_sources import entries
    from ..writer import (check_not_input, make_output_folder, output_is_folder, output_join,
                          resolve_output_compression, with_compression_suffix)
    from .pipeline import run

    found, single = entries(args)
    out = args.output
    if args.out is not None:
        check_not_input(args.out, [path for path, _ in found], "the report")
    to_folder = not single or output_is_folder(out)
    if to_folder:
        make_output_folder(out)
    tasks = []
    for path, info in found:
        target = output_join(out, os.path.basename(path)) if to_folder else out
        if to_folder and args.compression is not None:
            target = with_compression_suffix(target, args.compression)
        compression, warning = resolve_output_compression(target, args.compression)
        if warning:
            sys.stderr.write(f"tfrlens-cli: warning: {warning}\n")
        tasks.append({"path": path, "info": info, "target": target, "compression": compression.value,
                      "include_damaged": args.include_damaged, "use_cache": not args.no_cache})
    results = run(tasks, repair_task, args.runner, args.beam_option)
    code = EXIT_OK
    kept = dropped = 0
    reports = []
    for task, result in zip(tasks, results):
        if "fatal" in result:
            raise UsageError(result["fatal"])
        if "error" in result:
            if single:
                raise UsageError(result["error"])
            sys.stderr.write(f"tfrlens-cli: {result['error']}\n")
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

        from ..writer import atomic_write_bytes

        atomic_write_bytes(args.out, "".join(json.dumps(r) + "\n" for r in reports).encode())
    return code
