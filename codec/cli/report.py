"""What the command line prints of a file's checks (``verify``'s report, problem lines) and its
exit codes: shared by the local commands and their Beam runs (:mod:`codec.cli.beam_runs`)."""
from __future__ import annotations

import json
import sys
from collections import Counter

from codec.format.framing import Compression
from codec.format.names import tensorflow_name_note
from codec.storage.url_secrets import shown_path

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def task_failed(result: dict, single: bool) -> bool:
    """Whether a Beam task's ``result`` failed: a ``fatal`` one (and any ``error`` of a single input)
    is raised as the local command stops on it; another input's ``error`` is said in one line."""
    from codec.errors import UsageError

    if "fatal" in result:
        raise UsageError(result["fatal"])
    if "error" not in result:
        return False
    if single:
        raise UsageError(result["error"])
    sys.stderr.write(f"tfrlens-cli: {result['error']}\n")
    return True


def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def kinds_summary(problems) -> str:
    counts = Counter(p.kind.value for p in problems)
    return ", ".join(f"{kind} {n}" for kind, n in counts.most_common())


def problem_line(p) -> str:
    rec = f"record {p.index}" if p.index is not None else "no record"
    where = f"offset {p.offset:,}"
    if p.compressed_offset is not None:
        where += f" (compressed {p.compressed_offset:,})"
    return f"  {where} ({rec}): {p.kind.value}: {p.detail}"


def verify_report(args, path: str, compression: str, n: int, ok: int, problems: list, single: bool) -> None:
    """One file's verify report: a JSON object, or a line with its problems below."""
    limit = args.max_problems
    shown = problems if limit is None else problems[:limit]
    if args.json:
        report = {"path": shown_path(path), "compression": compression, "records": n, "ok": ok,
                  "problems": [p.to_json() for p in shown]}
        if limit is not None:
            report["problems_total"] = len(problems)
        out(json.dumps(report))
        return
    kinds = f" ({kinds_summary(problems)})" if problems else ""
    out(f"{shown_path(path)}: {n:,} records, {ok:,} ok, {len(problems)} problem(s){kinds} [{compression}]")
    note = tensorflow_name_note(path, Compression.parse(compression))
    if note:
        out(f"  note: {note}")
    if single or limit is not None:
        for p in shown:
            out(problem_line(p))
        if len(shown) < len(problems):
            out(f"  ... and {len(problems) - len(shown)} more")
