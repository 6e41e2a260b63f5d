"""``--runner``, ``--beam-option`` and ``--out`` for the dataset-wide commands.

``--runner local`` (the default) is the command as it always ran. Any other
runner runs one task per file (per range of a big plain file) on Apache Beam
(an optional extra, imported only then) and prints the same report. Beam's
own options come from ``--beam-option KEY=VALUE`` or follow a lone ``--``
as Beam spells them (``-- --project=P --num_workers 10 --save_main_session``). ``--out`` also writes the JSON report to a
path or URL, whatever the runner.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import argparse
    from typing import Callable

__all__ = ["add_runner_arguments", "dispatch", "options_after_dashes"]

# Spelled out for the parser (building it must stay cheap); tests hold it to codec.beam.options.RUNNERS.
RUNNERS = ("local", "direct", "prism", "dataflow", "flink", "spark")


def add_runner_arguments(parser: argparse.ArgumentParser, command: str, local: Callable) -> None:
    """Add ``--runner``, ``--beam-option`` and ``--out`` to ``command``'s parser; ``local`` runs it locally."""
    parser.add_argument("--runner", choices=RUNNERS, default="local",
                        help="where to run: local (this process, the default), or an Apache Beam runner "
                             "with one task per file or per GiB of a big plain file (needs the beam extra); "
                             "Beam pipeline options may also follow a lone --, as Beam spells them")
    parser.add_argument("--beam-option", action="append", metavar="KEY=VALUE",
                        help="a Beam pipeline option, e.g. project=P, region=R, temp_location=gs://B/tmp, "
                             "requirements_file=requirements.txt (repeatable)")
    parser.add_argument("--out", metavar="PATH", help="also write the JSON report to PATH (a file or URL)")
    parser.set_defaults(func=lambda args: dispatch(args, command, local))


def dispatch(args, command: str, local: Callable) -> int:
    """Run ``command``: ``local(args)`` as always, or its task-per-file form for a Beam runner or ``--out``.

    ``verify`` and ``repair`` have their own task-per-file forms here. Any other
    command runs ``local(args)`` with ``args.task_runner``: None for the local
    process pool, else a stand-in for :func:`codec.parallel.pool.run_tasks` that runs
    the same tasks on Beam (:func:`codec.beam.parallel.task_runner`).
    """
    from codec.errors import UsageError

    if args.runner == "local":
        if args.beam_option:
            raise UsageError("--beam-option needs a Beam --runner (direct, prism, dataflow, flink, spark)")
        if command not in ("verify", "repair"):
            args.task_runner = None
            return local(args)
        if args.out is None:
            return local(args)
    else:
        from codec.beam import require_beam

        require_beam(args.runner)
    if command not in ("verify", "repair"):
        from codec.beam.parallel import task_runner

        args.task_runner = task_runner(args.runner, args.beam_option)
        return local(args)
    if command == "verify":
        from codec.cli.beam_runs import run_verify

        return run_verify(args)
    from codec.cli.beam_runs import run_repair

    return run_repair(args)


def options_after_dashes(words: list[str]) -> list[str]:
    """Beam's own flags after ``--`` (``--key=value``, ``--key value``, ``--flag``) as ``--beam-option`` values."""
    from codec.errors import UsageError

    options: list[str] = []
    k = 0
    while k < len(words):
        word = words[k]
        if not word.startswith("--") or word == "--":
            raise UsageError(f"after --, expected Beam pipeline options such as --project=P, not {word!r}")
        key = word[2:]
        if "=" not in key and k + 1 < len(words) and not words[k + 1].startswith("--"):
            key, k = f"{key}={words[k + 1]}", k + 1
        options.append(key)
        k += 1
    return options
