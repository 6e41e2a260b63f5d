"""``tfrlens-cli scalars``: the scalar points of TensorBoard logs, as a table, JSON lines or CSV."""
from __future__ import annotations

import sys

from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, problem_line

__all__ = ["add_scalars_parser", "cmd_scalars"]

_TABLE_SAMPLE = 1000  # the text table's column widths: of its first 1,000 points (the rest stream)


def add_scalars_parser(sub) -> None:
    """The ``scalars`` subcommand on the command line's subparsers."""
    p = sub.add_parser("scalars", help="scalar points of TensorBoard logs (run, tag, step, wall_time, value)",
                       description="One line per scalar point of TensorBoard event files: TF2 scalar summaries "
                                   "and TF1 simple_value summaries. A folder is read as its runs (every folder "
                                   "below it holding event files).")
    p.add_argument("file", nargs="+", metavar="PATH", help="a log folder, an event file or a glob of them")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true",
                      help='one JSON object per point: {"run", "tag", "step", "wall_time", "value"}')
    form.add_argument("--csv", action="store_true", help="CSV with a header line: run,tag,step,wall_time,value")
    p.add_argument("--tag", metavar="GLOB", help="only tags matching a glob, e.g. 'loss' or 'metrics/*'")
    p.add_argument("--no-crc", action="store_true", help="do not check CRCs")
    p.add_argument("--csv-formulas", choices=["escape", "keep"], default="escape",
                   help="for --csv: run and tag cells starting with =, +, -, @, tab or CR get a ' first so "
                        "spreadsheets do not run them as formulas (escape, the default), or are kept as they are")
    p.set_defaults(func=cmd_scalars)


def cmd_scalars(args) -> int:
    from codec.datasets.event_logs import runs_of
    from codec.ops.scalars import scalar_points, write_csv

    runs = runs_of(args.file)
    damaged = False

    def on_file(report) -> None:
        nonlocal damaged
        if report.error is not None:
            damaged = True
            sys.stderr.write(f"tfrlens-cli: {report.error}\n")
        for problem in report.problems:
            damaged = True
            sys.stderr.write(f"tfrlens-cli: problem: {report.path}: {problem_line(problem).strip()}\n")
        if report.not_events:
            damaged = True
            n = report.not_events
            sys.stderr.write(f"tfrlens-cli: problem: {report.path}: {n:,} intact record{'s' if n != 1 else ''} "
                             f"not an Event (the first: intact record {report.first_not_event:,}), left out\n")

    points = scalar_points(runs, tag=args.tag, check_crc=not args.no_crc, on_file=on_file)
    if args.json:
        _write_json(points)
    elif args.csv:
        write_csv(points, sys.stdout, args.csv_formulas == "escape")
    else:
        _write_table(points)
    sys.stdout.flush()
    return EXIT_PROBLEMS if damaged else EXIT_OK


def _write_json(points) -> None:
    """One line per point, spelt as ``json.dumps(point_json(point))`` spells it (runs' and tags' strings
    encoded once each: a log has few of them and many points)."""
    import json

    from codec.ops.scalars import point_json

    strings: dict[str, str] = {}
    write = sys.stdout.write
    for point in points:
        run, tag, value, wall_time = point.run, point.tag, point.value, point.wall_time
        if value - value != 0 or wall_time - wall_time != 0:  # NaN or an infinity: protobuf's JSON spelling
            write(json.dumps(point_json(point)) + "\n")
            continue
        run_json = strings.get(run) or strings.setdefault(run, json.dumps(run))
        tag_json = strings.get(tag) or strings.setdefault(tag, json.dumps(tag))
        write(f'{{"run": {run_json}, "tag": {tag_json}, "step": {point.step}, "wall_time": {wall_time!r}, '
              f'"value": {value!r}}}\n')


def _write_table(points) -> None:
    """A table: run, tag, step, the wall time in UTC and the value; column widths from the first points."""
    import itertools
    from datetime import datetime, timezone

    def cells(point) -> tuple:
        try:
            when = datetime.fromtimestamp(point.wall_time, timezone.utc).isoformat(" ", "milliseconds")
        except (OverflowError, ValueError, OSError):  # NaN, an infinity, a year past 9999
            when = repr(point.wall_time)
        return point.run, point.tag, str(point.step), when.replace("+00:00", "Z"), repr(point.value)

    points = iter(points)
    first = [cells(p) for p in itertools.islice(points, _TABLE_SAMPLE)]
    header = ("run", "tag", "step", "wall_time (UTC)", "value")
    widths = [max([len(h)] + [len(row[k]) for row in first]) for k, h in enumerate(header)]
    line = "  ".join(f"{{:<{w}}}" if k < 2 else f"{{:>{w}}}" for k, w in enumerate(widths[:4])) + "  {}"
    out = sys.stdout.write
    out(line.format(*header).rstrip() + "\n")
    for row in itertools.chain(first, (cells(p) for p in points)):
        out(line.format(*row) + "\n")
