"""``tfrlens-cli check``: the dataset doctor on the command line (see :mod:`codec.doctor`).

Text output groups findings by check with counts, one line per finding;
``--json`` prints one object. Exit 1 when any finding is an error.
"""
from __future__ import annotations

import json
import sys
import time

__all__ = ["add_check_parser", "cmd_check"]

PROGRESS_SECONDS = 0.2


def add_check_parser(sub) -> None:
    """The ``check`` subcommand on ``tfrlens-cli``'s subparsers."""
    from codec.doctor import CHECKS, NEAR_THRESHOLD, SHUFFLE_BUFFER

    help_ = "find duplicates, leaks between splits, bad boxes, bad images, unknown labels, missing features"
    p = sub.add_parser("check", help=help_, description=help_)
    p.add_argument("file", nargs="+", help="TFRecord files, folders, globs or URLs (s3://, gs://, https://...)")
    p.add_argument("--json", action="store_true", help="one JSON object: {records, findings}")
    p.add_argument("--label-map", metavar="FILE",
                   help="class names for label ids (default: a label_map.pbtxt beside the files)")
    p.add_argument("--split", action="append", metavar="NAME=GLOB",
                   help="files whose name matches GLOB are split NAME (repeat; default: from the shard names: "
                        "train-*, eval-*, validation, test, NAME-SPLIT.tfrecord-*)")
    p.add_argument("--checks", metavar="A,B,...", help="only these checks: " + ", ".join(CHECKS))
    p.add_argument("--near-threshold", type=int, default=NEAR_THRESHOLD, metavar="N",
                   help=f"near-duplicates differ in at most N of 64 pHash bits (default {NEAR_THRESHOLD})")
    p.add_argument("--image-key", metavar="K", help="the image feature (default: image/encoded, a TFDS image, "
                                                    "or the image the app finds)")
    p.add_argument("--label-key", metavar="K", help="the label feature (default: image/class/label, "
                                                    "image/object/class/label, a TFDS class label...)")
    p.add_argument("--shuffle-buffer", type=int, default=SHUFFLE_BUFFER, metavar="N",
                   help=f"the shuffle buffer label runs are measured against (default {SHUFFLE_BUFFER:,})")
    p.add_argument("--workers", type=int, default=0, metavar="N", help="processes (default: one per core)")
    from codec.cli.beam import add_runner_arguments

    add_runner_arguments(p, "check", cmd_check)


def _options(args):
    from codec.doctor import CHECKS, CheckOptions
    from codec.doctor.splits import parse_split_args

    checks = frozenset(CHECKS)
    if args.checks is not None:
        checks = frozenset(c.strip() for c in args.checks.split(",") if c.strip())
    return CheckOptions(checks=checks, splits=parse_split_args(args.split), label_map=args.label_map,
                        image_key=args.image_key, label_key=args.label_key, near_threshold=args.near_threshold,
                        shuffle_buffer=args.shuffle_buffer, workers=args.workers,
                        task_runner=getattr(args, "task_runner", None))


class _Progress:
    """A progress line on stderr, rewritten in place, when stderr is a terminal."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def show(self, item) -> None:
        now = time.monotonic()
        if not self.on or now - self.last < PROGRESS_SECONDS:
            return
        self.last = now
        if item.phase == "check":
            of = f" of ~{item.total:,}" if item.total else ""
            text = f"checking: {item.done:,}{of} records"
        elif item.phase == "index":
            text = f"opening {item.total:,} file(s)"
        else:
            text = f"comparing {item.total:,} records"
        sys.stderr.write(f"\r{text}\033[K")
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def report_text(report) -> str:
    """The human report: a summary line, then each check's findings under a heading with counts."""
    errors = sum(1 for f in report.findings if f.severity == "error")
    warnings = len(report.findings) - errors
    lines = [f"checked {_count(report.records, 'record')}: {_count(errors, 'error')}, "
             f"{_count(warnings, 'warning')}"]
    for check, found in report.by_check().items():
        e = sum(1 for f in found if f.severity == "error")
        counts = ", ".join(part for part in (_count(e, "error") if e else "",
                                             _count(len(found) - e, "warning") if len(found) - e else "") if part)
        lines.append(f"{check} ({counts})")
        for f in found:
            where = ", ".join(str(r) for r in f.records[:6])
            if len(f.records) > 6:
                where += f", ... ({len(f.records):,} records)"
            lines.append(f"  {f.severity:<7} {where}{'  ' if where else ''}{f.detail}")
    return "\n".join(lines)


def cmd_check(args) -> int:
    from codec.doctor import CheckReport, check_iter

    options = _options(args)
    progress = _Progress()
    report = None
    runner = getattr(args, "runner", "local")
    if runner == "local":
        generator = check_iter(list(args.file), options)
    else:  # the per-record pass in Beam's workers, the groupings by GroupByKey
        from codec.beam.check import check_iter as check_on_beam

        generator = check_on_beam(list(args.file), options, runner, args.beam_option)
    try:
        for item in generator:
            if isinstance(item, CheckReport):
                report = item
            else:
                progress.show(item)
    finally:
        generator.close()
        progress.clear()
    # The generator's last item is always its report (it raises otherwise), so report is set here.
    text = json.dumps(report.to_json(), ensure_ascii=False)  # type: ignore[union-attr]
    if getattr(args, "out", None):
        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(args.out, (text + "\n").encode())
    if args.json:
        sys.stdout.write(text + "\n")
    else:
        sys.stdout.write(report_text(report) + "\n")
    return report.exit_code  # type: ignore[union-attr]  # set: see above
