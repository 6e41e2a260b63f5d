"""``tfrlens-cli``: the headless command line over the codec.

Exit codes: 0 fine, 1 the data has problems, 2 bad usage or unusable input
(with a one-line message on stderr, never a traceback).
"""
from __future__ import annotations

import sys

if getattr(sys.modules.get("multiprocessing.process") and sys.modules["multiprocessing.process"].current_process(),
           "_inheriting", False):
    # A pool worker spawned by this command line imports it first (as ``__mp_main__``): ignore Ctrl-C
    # from here on, before anything slow, so one sent to the process group is the parent's alone to
    # handle (it terminates the workers) and no worker prints a traceback (see codec.parallel.pool).
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)

import argparse
import os

# Each command (its module's functions) imports what it uses: numpy, protobuf and Pillow take a
# third of a second, which `--help` and a one-record `cat` should not pay for.
from codec.cli.beam import add_runner_arguments
from codec.cli.passes import cmd_export, cmd_schema, cmd_stats
from codec.cli.reading import cmd_cat, cmd_index, cmd_info
from codec.cli.report import EXIT_OK, EXIT_USAGE
from codec.cli.verify_repair import cmd_repair, cmd_verify
from codec.errors import TFRecordError
from codec.storage.url_secrets import RedactingStream

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Sequence

# Spelled out for the parser (building it must stay cheap); tests hold them to
# codec.format.framing.Compression and codec.ops.export.FORMATS.
COMPRESSIONS = ("none", "gzip", "zlib")
FORMATS = ("tfrecord", "array_record", "jsonl", "csv", "images", "audio")
WORKERS_HELP = "processes, one per shard or range of records (default and 0: one per core; 1: this one)"
WHERE_HELP = "only records matching a filter expression, e.g. 'label == 3 and image/height > 100'"


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (with bz2 and lzma: ~4 ms)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            # No console leaves __stdout__ None: its AttributeError is caught below.
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized as argparse sizes it: argparse makes one per ``add_argument``."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, exit 2 (argparse's own code)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


COMMANDS = ("info", "verify", "repair", "cat", "index", "export", "stats", "schema", "check", "media", "scalars")
RUNNER_COMMANDS = ("verify", "repair", "stats", "schema", "check")  # --runner: Beam options may follow "--"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, just that command's subparser is built.

    ``main`` builds only the command it is given: parsing, help and errors read
    the same (the command list is spelt out), for a fraction of the work.
    """
    parser = _Parser(prog="tfrlens-cli", description="Inspect, verify and convert TFRecord files.")
    # The usage line lists every command, also when only one is built (argparse's own spelling).
    metavar = None if only is None else "{" + ",".join(COMMANDS) + "}"
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar=metavar)

    def add(name: str, help_: str):
        p = sub.add_parser(name, help=help_, description=help_)
        if name == "index":
            p.add_argument("file", help="a TFRecord file or URL (plain, GZIP or ZLIB)")
        elif name in ("verify", "repair"):
            p.add_argument("file", nargs="+", help="TFRecord files (plain, GZIP or ZLIB; verify: ArrayRecord too), "
                                                   "globs or folders; "
                                                   "URLs too: s3://, gs://, https://...")
        else:
            p.add_argument("file", nargs="+",
                           help="a TFRecord file (plain, GZIP or ZLIB) or an ArrayRecord file, or URL (s3://, gs://, "
                                "https://...); "
                                "several files, a folder or a glob (of URLs too) are read as one set of shards")
        p.add_argument("--no-crc", action="store_true", help="do not check CRCs")
        p.add_argument("--no-cache", action="store_true", help="ignore and do not write the index cache")
        if name in ("info", "cat", "export", "stats", "schema", "media"):
            from codec.datasets.payload_choice import add_arguments

            add_arguments(p)
        return p

    def wanted(name: str) -> bool:
        return only is None or only == name

    if wanted("info"):
        add("info", "compression, size, records, kinds, feature keys and problems").set_defaults(func=cmd_info)
    if wanted("verify"):
        p = add("verify", "check every length and data CRC; report every problem")
        p.add_argument("--json", action="store_true", help="one JSON object per file")
        p.add_argument("--max-problems", type=int, metavar="N", help="list at most N problems per file")
        add_runner_arguments(p, "verify", cmd_verify)
    if wanted("repair"):
        p = add("repair", "write a clean copy with every intact record")
        p.add_argument("-o", "--output", required=True, metavar="OUT",
                       help="the repaired file (a folder when several inputs are given)")
        p.add_argument("--compression", choices=COMPRESSIONS,
                       help="compression of the output (default: as its name says: .gz gzip, .zz/.zlib zlib, "
                            "else none)")
        p.add_argument("--include-damaged", action="store_true",
                       help="also write damaged records (their data as found, with fresh CRCs)")
        add_runner_arguments(p, "repair", cmd_repair)
    if wanted("cat"):
        p = add("cat", "print records (protobuf text, or JSON lines)")
        p.add_argument("--json", action="store_true", help="one JSON object per record, one per line")
        p.add_argument("--range", metavar="A:B", help="records A..B-1 (Python slice rules)")
        p.add_argument("--where", metavar="EXPR", help=WHERE_HELP)
        p.add_argument("--workers", type=int, metavar="N", help=WORKERS_HELP)
        p.add_argument("--follow", action="store_true",
                       help="a file still being written: print each record appended, as it is complete, "
                            "like tail -f (Ctrl-C ends)")
        p.set_defaults(func=cmd_cat)
    if wanted("index"):
        p = add("index", "write the record index (native binary, or DALI's text format)")
        p.add_argument("-o", "--output", metavar="OUT", help="where to write (default: stdout)")
        p.add_argument("--format", choices=["native", "dali"], default="native")
        p.set_defaults(func=cmd_index)
    if wanted("export"):
        p = add("export", "export records as tfrecord, array_record, jsonl, csv, image or WAV files")
        p.add_argument("--to", required=True, metavar="OUT", help="output file (a folder for --format images and audio)")
        p.add_argument("--format", choices=FORMATS, default="tfrecord")
        p.add_argument("--compression", choices=COMPRESSIONS,
                       help="for --format tfrecord (default: as the name of OUT says: .gz gzip, .zz/.zlib zlib, "
                            "else none)")
        p.add_argument("--array-record-options", metavar="OPTIONS",
                       help="for --format array_record: Google's writer options, e.g. 'zstd:9' or 'group_size:64,brotli' "
                            "(default: group_size:1 and Google's defaults, zstd:3)")
        p.add_argument("--records", metavar="SPEC", help="indexes and ranges, e.g. 1,3,10:20 (default: all)")
        p.add_argument("--where", metavar="EXPR", help=WHERE_HELP + " (with --records: those of them that match)")
        p.add_argument("--workers", type=int, metavar="N", help=WORKERS_HELP)
        p.add_argument("--csv-formulas", choices=["escape", "keep"], default="escape",
                       help="for --format csv: text cells starting with =, +, -, @, tab or CR get a ' first so "
                            "spreadsheets do not run them as formulas (escape, the default), or are written as "
                            "they are (keep)")
        p.set_defaults(func=cmd_export)
    if wanted("stats"):
        p = add("stats", "per-feature statistics: presence, types, values, top values, images")
        p.add_argument("--json", action="store_true", help="one JSON object")
        p.add_argument("--where", metavar="EXPR", help=WHERE_HELP)
        p.add_argument("--workers", type=int, metavar="N", help=WORKERS_HELP)
        add_runner_arguments(p, "stats", cmd_stats)
    if wanted("schema"):
        p = add("schema", "the inferred feature spec, as Python code for tf.io.parse_example or JSON")
        p.add_argument("--json", action="store_true", help="one JSON object")
        p.add_argument("--where", metavar="EXPR", help=WHERE_HELP)
        p.add_argument("--workers", type=int, metavar="N", help=WORKERS_HELP)
        add_runner_arguments(p, "schema", cmd_schema)
    if wanted("check"):
        from codec.cli.check import add_check_parser

        add_check_parser(sub)
    if wanted("media"):
        from codec.cli.media import cmd_media

        p = add("media", "one line per media value: audio clips, videos, instance masks, keypoints, class maps")
        p.add_argument("--json", action="store_true", help="one JSON object per media value, one per line")
        p.add_argument("--where", metavar="EXPR", help=WHERE_HELP)
        p.add_argument("--workers", type=int, metavar="N", help=WORKERS_HELP + " (for --where)")
        p.set_defaults(func=cmd_media)
    if wanted("scalars"):
        from codec.cli.scalars import add_scalars_parser

        add_scalars_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    urls = [a for a in argv if "://" in a]
    if not urls:
        return _command(argv)
    stderr = sys.stderr
    sys.stderr = RedactingStream(stderr, urls)  # every line on stderr, ours or a library's: URLs redacted
    code = _command(argv)  # (an error that escapes is printed redacted too)
    sys.stderr = stderr
    return code


def _command(argv: list[str]) -> int:
    """Parse ``argv`` and run its command: the exit code."""
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    beam_flags = None
    if argv and argv[0] in RUNNER_COMMANDS and "--" in argv:  # the rest: Beam's own pipeline options
        cut = argv.index("--")
        argv, beam_flags = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if beam_flags is not None:
        from codec.cli.beam import options_after_dashes

        try:
            args.beam_option = (args.beam_option or []) + options_after_dashes(beam_flags)
        except TFRecordError as exc:
            sys.stderr.write(f"tfrlens-cli: {exc}\n")
            return EXIT_USAGE
    return _run(args, argv)


def _run(args, argv: list[str]) -> int:
    """Run the parsed command: its exit code, and one line on stderr for what stops it."""
    from codec.storage.temp_files import TerminatedBySignal, cleanup_on_signals

    try:
        with cleanup_on_signals():  # SIGTERM/SIGHUP unwind the command: no temporary file stays behind
            return args.func(args)
    except TerminatedBySignal as exc:
        sys.stderr.write(f"tfrlens-cli: {exc}\n")
        return exc.exit_code
    except TFRecordError as exc:
        sys.stderr.write(f"tfrlens-cli: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        if "codec.storage.remote" in sys.modules:  # requests in flight cancelled, not left to asyncio's complaints
            sys.modules["codec.storage.remote"].stop_requests()
        sys.stderr.write("tfrlens-cli: interrupted\n")
        return 130
    except Exception as exc:
        from codec.cli.sources import remote_failure

        line = remote_failure(argv, exc)
        if line is None:
            raise
        sys.stderr.write(f"tfrlens-cli: {line}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
