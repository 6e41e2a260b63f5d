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
import json
import os
from collections import Counter

from codec.cli.beam import add_runner_arguments
from codec.cli.sources import choice as _choice, entries as _entries, is_url as _is_url
from codec.cli.sources import open_source as _open
from codec.errors import TFRecordError, UsageError
from codec.storage.url_secrets import RedactingStream, shown_path

# Each command imports what it uses: numpy, protobuf and Pillow take a third of a second,
# which `--help` and a one-record `cat` should not pay for.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Sequence

    from codec.query.filter import Filter
    from codec.sources.tfrecord_file import TFRecordFile

from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE  # noqa: F401 (the command line's exit codes)
from codec.cli.report import kinds_summary as _kinds_summary, out as _out, problem_line as _problem_line  # noqa: F401
from codec.cli.report import status_counts as _status_counts, verify_data as _verify_data  # noqa: F401
from codec.cli.report import verify_report as _verify_report  # noqa: F401
# Spelled out for the parser (building it must stay cheap); tests hold them to
# codec.format.framing.Compression and codec.ops.export.FORMATS.
COMPRESSIONS = ("none", "gzip", "zlib")
FORMATS = ("tfrecord", "jsonl", "csv", "images")
INFO_SAMPLE = 1000  # info's kinds and features: of the first 1,000 records,
INFO_SAMPLE_BYTES = 8 << 20  # or as many of them as start in the first 8 MiB of records
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
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
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


def cmd_info(args) -> int:
    from codec.decode.decoder import decode_record
    from codec.format.framing import Compression

    with _open(args, verify=not args.no_crc) as f:
        f.build_index(verify=not args.no_crc)
        n = len(f)
        statuses = _status_counts(f)
        kinds: Counter = Counter()
        features: dict[str, Counter] = {}
        present: Counter = Counter()
        sample = _sample_size(f)
        for i, data, *_ in _records(f, range(sample)):  # read a run at a time: a URL's records are fetched again
            decoded = decode_record(data, f.payload)
            kinds[decoded.kind.value] += 1
            for key, dtype in feature_types(decoded).items():
                features.setdefault(key, Counter())[dtype] += 1
                present[key] += 1
        _out(f"path:        {shown_path(f.path)}")
        if hasattr(f, "shards"):
            _out(f"shards:      {len(f.shards):,}" + (f" ({len(f.unusable)} unusable)" if f.unusable else ""))
        _out(f"compression: {f.compression.value}")
        size = f"{f.file_size:,} bytes"
        if f.compression is not Compression.NONE and not hasattr(f, "shards"):
            size += f" ({f.data_end:,} uncompressed)"
        _out(f"size:        {size}")
        ok = statuses.get("ok", 0)
        _out(f"records:     {n:,} ({ok:,} ok" + "".join(
            f", {c:,} {s}" for s, c in sorted(statuses.items()) if s != "ok") + ")")
        scope = "" if sample == n else f" (first {sample:,} records)"
        _out(f"kinds{scope}: " + (", ".join(f"{k} {c:,}" for k, c in kinds.most_common()) or "none"))
        if features:
            _out(f"features{scope}:")
            width = max(len(k) for k in features)
            for key in sorted(features):
                types = "/".join(t for t, _ in features[key].most_common())
                mixed = "  (mixed types)" if len(features[key]) > 1 else ""
                _out(f"  {key:<{width}}  {types:<6}  in {present[key]:,} of {sample:,}{mixed}")
        from codec.datasets.payload_choice import info_lines

        lines, mismatches = info_lines(_choice(args), f)
        for line in lines:
            _out(line)
        _print_problems(f)
        return EXIT_PROBLEMS if f.problems or mismatches else EXIT_OK


def _sample_size(f) -> int:
    """How many of the first records ``info`` describes: INFO_SAMPLE, or fewer filling INFO_SAMPLE_BYTES."""
    n = min(len(f), INFO_SAMPLE)
    if n == 0 or hasattr(f, "shards"):
        return n
    import numpy as np

    offsets = np.asarray([f.index.offset(i) for i in range(n)], dtype=np.int64)
    return max(1, int(np.searchsorted(offsets, offsets[0] + INFO_SAMPLE_BYTES, side="left")))


def _records(f, chosen):
    """(index, data, status, offset, length) of the ``chosen`` records, consecutive ones of a plain file
    read a run at a time (:func:`codec.sources.record_pass.iter_records`)."""
    from codec.sources.record_pass import iter_records
    from codec.index.scan import IndexProgress

    for item in iter_records(f, chosen):
        if not isinstance(item, IndexProgress):
            yield item


def feature_types(decoded) -> dict[str, str]:
    """Feature key -> dtype of one record (feature lists marked as such)."""
    from codec.decode.decoder import feature_values, record_feature_lists, record_features

    types = {}
    features = record_features(decoded)
    for key, feature in (features.items() if features is not None else ()):
        types[key] = feature_values(feature)[0] or "empty"
    lists = record_feature_lists(decoded)
    for key, flist in (lists.items() if lists is not None else ()):
        dtype = next((feature_values(step)[0] for step in flist.feature), None) or "empty"
        types[f"{key} (feature list)"] = dtype
    return types


def _print_problems(f: TFRecordFile) -> None:
    if not f.problems:
        _out("problems:    none")
        return
    _out(f"problems:    {len(f.problems)} ({_kinds_summary(f.problems)})")
    for p in f.problems:
        _out(_problem_line(p))


def cmd_verify(args) -> int:
    from codec.index.quick_verify import intact_records

    one = args.file[0] if len(args.file) == 1 and not _is_url(args.file[0]) else None
    if one is not None and os.path.isfile(one):  # a proof needs no numpy, no index
        n = intact_records(one)
        if n is not None:
            _verify_report(args, one, "none", n, n, [], True)
            return EXIT_OK
    from codec.sources.tfrecord_file import TFRecordFile

    found, single = _entries(args)
    code = EXIT_OK
    totals: Counter[str] = Counter()
    for path, info in found:
        extra = {"info": info} if _is_url(path) else {"fork_halves": True}  # async clients are not fork-safe
        try:
            f = TFRecordFile(path, check_crc=True, use_cache=not args.no_cache, **extra)
        except TFRecordError as exc:
            if single:
                raise
            sys.stderr.write(f"tfrlens-cli: {exc}\n")
            code = EXIT_USAGE
            totals["unusable"] += 1
            continue
        with f:
            _verify_data(f)
            n = len(f)
            ok = _status_counts(f)["ok"]
            totals.update(files=1, records=n, ok=ok, problems=len(f.problems))
            if f.problems and code == EXIT_OK:
                code = EXIT_PROBLEMS
            _verify_report(args, f.path, f.compression.value, n, ok, f.problems, single)
    if not single and not args.json:
        _out(f"total: {totals['files']} file(s), {totals['records']:,} records, {totals['ok']:,} ok, "
             f"{totals['problems']} problem(s)" + (f", {totals['unusable']} unusable" if totals["unusable"] else ""))
    return code


def cmd_repair(args) -> int:
    from codec.sources.tfrecord_file import TFRecordFile
    from codec.ops.repair import repair
    from codec.storage.writer import (make_output_folder, output_is_folder, output_join, resolve_output_compression,
                         with_compression_suffix)

    found, single = _entries(args)
    paths = [path for path, _ in found]
    out = args.output
    to_folder = not single or output_is_folder(out)
    if to_folder:
        make_output_folder(out)
    code = EXIT_OK
    kept = dropped = 0
    for path, info in found:
        target = output_join(out, os.path.basename(path)) if to_folder else out
        if to_folder and args.compression is not None:  # a name made here says what it holds
            target = with_compression_suffix(target, args.compression)
        compression, warning = resolve_output_compression(target, args.compression)
        if warning:
            sys.stderr.write(f"tfrlens-cli: warning: {warning}\n")
        try:
            f = TFRecordFile(path, check_crc=True, use_cache=not args.no_cache, info=info)
        except TFRecordError as exc:
            if single:
                raise
            sys.stderr.write(f"tfrlens-cli: {exc}\n")
            code = EXIT_USAGE
            continue
        with f:
            report = repair(f, target, compression, args.include_damaged)
        kept += report.kept
        dropped += len(report.dropped)
        _out(f"{shown_path(path)} -> {shown_path(target)}: {report.summary()}")
    if not single:
        _out(f"total: {len(paths)} file(s), kept {kept:,}, dropped {dropped:,}")
    return code


def _where(args) -> Filter | None:
    """The compiled ``--where`` expression (None without one); a bad one is a usage error."""
    text = getattr(args, "where", None)
    if text is None:
        return None
    from codec.query.filter import ExprError, compile_filter

    try:
        return compile_filter(text, names=_choice(args).labels)
    except ExprError as exc:
        raise UsageError(f"bad --where expression {text!r}: {exc}") from None


def _selected(f: TFRecordFile, flt: Filter | None, indices=None, args=None):
    """``indices`` (default: all records) narrowed to those ``flt`` matches: all records on the process
    pool when ``args.workers`` and the input's size call for it (see :mod:`codec.query.pool`)."""
    if flt is None:
        return indices
    from codec.query.filter import matching_indices

    _refuse_unknown_features(f, flt)
    if indices is None and args is not None:
        from codec.query.pool import filter_tasks, pool_filter_iter
        from codec.stats.pool import stats_setup

        tasks = filter_tasks(f, flt, args.workers)
        if tasks:
            from array import array

            found = array("Q")
            for _ in pool_filter_iter(f, flt, found, tasks, stats_setup(args), args.workers):
                pass
            return found
    return matching_indices(f, flt, indices)


def _refuse_unknown_features(f: TFRecordFile, flt: Filter | None) -> None:
    """A usage error when ``--where`` names a feature no record of ``f`` has (a misspelt key, most likely).

    Every record counts, not a sample: the look stops at the first record
    holding every name (usually the first), and only a name no record has
    makes it read to the end. An empty file refuses nothing.
    """
    if flt is None or not flt.features:
        return
    from codec.query.filter import missing_features

    missing = missing_features(f, flt)
    if not missing:
        return
    first = missing[0]
    message = f"unknown feature {first.name!r} in --where ({first.hint(quote=False) or 'no record has it'})"
    if len(missing) > 1:
        message += "; nor does any record have " + ", ".join(repr(m.name) for m in missing[1:])
    raise UsageError(message)


def cmd_cat(args) -> int:
    from codec.sources.cached_records import cached_records, parse_range, range_stop

    if args.follow:
        return _cat_follow(args)
    choice = _choice(args)
    if args.where is None:
        local = not args.no_cache and not any(_is_url(p) for p in choice.files)
        records = cached_records(choice.files, args.range, check_crc=not args.no_crc) if local else None
        if records is not None:
            return _print_records(args, records[0], records[1], choice.payload, choice.files[0], choice.labels)
    flt = _where(args)
    with _open(args) as f:
        index_through(f, range_stop(args.range) if flt is None else None)
        show = _record_printer(args, f.payload, f.labels)
        chosen = parse_range(args.range, len(f))
        if flt is not None:  # the matches first (every record: on the pool), then each is printed
            chosen = _selected(f, flt, None if args.range is None else chosen, args)
        try:
            for i, data, status, offset, length in _records(f, chosen):
                show(i, offset, length, status, data, f.location(i)[0] if choice.dataset is not None else None)
        finally:
            show.flush()
        return EXIT_PROBLEMS if f.problems else EXIT_OK


def _cat_follow(args) -> int:
    """``cat --follow``: the records there now, then each one appended, as it is complete; ends on Ctrl-C
    (exit 130), at the end of ``--range A:B``, or when the file shrinks or is replaced (exit 2)."""
    from codec.sources.appended import appended_records
    from codec.datasets.payload_choice import apply
    from codec.sources.tfrecord_file import TFRecordFile

    choice = _choice(args)
    if len(args.file) != 1 or len(choice.files) != 1 or choice.dataset is not None or os.path.isdir(args.file[0]):
        raise UsageError("--follow follows one file, not several, a folder or a glob")
    if _is_url(choice.files[0]):
        raise UsageError(f"--follow reads a local file as it is written, not a URL: {choice.files[0]}")
    start, stop = _follow_range(args.range)
    flt = _where(args)
    # The index cache is left alone: a file being written never matches an entry for long.
    with TFRecordFile(choice.files[0], check_crc=not args.no_crc, use_cache=False) as f:
        apply(choice, f)
        f.build_index()
        f.start_follow()
        if f.complete_records:
            _refuse_unknown_features(f, flt)
        show = _record_printer(args, f.payload, f.labels)
        for i, rec in appended_records(f, start, stop, flt, on_problem=_warn_problem):
            show(i, rec.info.offset, rec.info.length, rec.status, rec.data, None)
            show.flush()
            sys.stdout.flush()
        return EXIT_PROBLEMS if f.problems else EXIT_OK


def _follow_range(text: str | None) -> tuple[int, int | None]:
    """``--range`` with ``--follow``: records A..B-1 counted from the start (the end moves: no negatives)."""
    if not text:
        return 0, None
    parts = text.split(":")
    try:
        bounds = [int(p) if p.strip() else None for p in parts]
    except ValueError:
        bounds = []
    if len(bounds) == 1 and bounds[0] is not None:
        bounds.append(bounds[0] + 1)
    if len(bounds) != 2 or any(b is not None and b < 0 for b in bounds):
        raise UsageError(f"bad --range {text!r} with --follow: expected A:B, A: or :B counted from the "
                         "first record (the end moves while the file grows, so nothing counts from it)")
    return bounds[0] or 0, bounds[1]


def _warn_problem(problem) -> None:
    sys.stderr.write(f"tfrlens-cli: problem: {_problem_line(problem).strip()}\n")
    sys.stderr.flush()


def index_through(f, stop: int | None) -> None:
    """Index ``f`` as far as record ``stop`` (its records below ``stop`` known, and where the next
    one starts), or all of it for None or a set of shards.

    A command that needs only the first records of a 20 GB file or a URL stops
    reading there; only a whole pass is written to the index cache.
    """
    if stop is None or hasattr(f, "shards"):
        f.build_index()
        return
    passing = f.index_iter()
    try:
        for _ in passing:
            if len(f.index) > stop:
                break
    finally:
        passing.close()


def _print_records(args, records: list, problems: bool, payload=None, path: str | None = None,
                   labels=None) -> int:
    """``cat``'s output of (index, offset, length, status, data) tuples in ``path``; the exit code."""
    show = _record_printer(args, payload, labels)
    try:
        for i, offset, length, status, data in records:
            show(i, offset, length, status, data, path)
    finally:
        show.flush()
    return EXIT_PROBLEMS if problems else EXIT_OK


def _record_printer(args, payload, labels):
    """``cat``'s printer of one record: ``show(index, offset, length, status, data, path)``, and
    ``show.flush()``, which writes what it holds (JSON lines are written in batches).

    ``path`` is the file the record is in, for a payload that says more of it (a TFDS split).
    """
    if args.json:
        from codec.decode.json_batches import JsonLinesWriter

        writer = JsonLinesWriter(sys.stdout, payload, labels)

        def show(i, offset, length, status, data, path):
            writer.write(i, data, status, offset, length, path)

        show.flush = writer.flush
    else:
        from codec.decode.example_text import example_text

        def show(i, offset, length, status, data, path):
            # An Example or SequenceExample as protobuf writes it is printed straight from its bytes
            # (protobuf's classes and text_format are imported for any other record, on first use).
            shown = example_text(data) if payload is None else None
            if shown is None:
                from codec.decode.decoder import decode_record
                from codec.datasets.payload_choice import record_text

                decoded = decode_record(data, payload)
                shown = decoded.kind.value, record_text(decoded)
            _out(f"# record {i}  offset {offset:,}  length {length:,}  {status.label}  {shown[0]}")
            _out(shown[1])

        show.flush = sys.stdout.flush
    return show


def cmd_index(args) -> int:
    from codec.index import cache as index_cache

    to_stdout = not args.output or args.output == "-"
    if to_stdout and args.format == "native" and sys.stdout.isatty():  # as gzip refuses, before any work
        raise UsageError("refusing to write a binary index to a terminal; use -o FILE or redirect")
    with _open(args) as f:
        if not to_stdout:
            from codec.storage.writer import check_not_input

            check_not_input(args.output, [f.path], "the index")
        f.build_index()
        if f.remote is not None:
            f.wait_for_cache()  # a compressed URL's zran index, so the next command reads records without a download
        if args.format == "dali":
            text, skipped = index_cache.dali_index_text(f)
            _write_text(args.output, text)
            if skipped:
                sys.stderr.write(f"tfrlens-cli: {skipped} truncated record(s) left out of the index\n")
        elif to_stdout:
            index_cache.write_native_index(f, sys.stdout.buffer)
        else:
            index_cache.write_index(f, args.output, "native")
        return EXIT_PROBLEMS if f.problems else EXIT_OK


def cmd_export(args) -> int:
    from codec.ops.export import ExportReport, export_iter, parse_records_spec, records_stop
    from codec.storage.writer import resolve_output_compression

    flt = _where(args)
    compression = args.compression
    if args.format == "tfrecord":
        compression, warning = resolve_output_compression(args.to, args.compression)
        if warning:
            sys.stderr.write(f"tfrlens-cli: warning: {warning}\n")
    with _open(args) as f:
        index_through(f, records_stop(args.records) if flt is None else None)
        indices = parse_records_spec(args.records, len(f)) if args.records else None
        if flt is not None:
            indices = _selected(f, flt, indices, args)
        report = ExportReport(args.to, args.format)
        for _ in export_iter(f, args.to, args.format, indices, compression, report, args.csv_formulas):
            pass
        sys.stderr.write(f"tfrlens-cli: {report.summary()}\n")
        return EXIT_PROBLEMS if f.problems else EXIT_OK


def _whole_pass(args, f, flt, pooled, local):
    """(result, problems) of a pass over every record: ``pooled`` on the process pool or a Beam
    runner (``args.task_runner``) when the input splits into tasks, else ``local`` here."""
    from codec.stats.pool import plan_stats, stats_setup

    run = getattr(args, "task_runner", None)
    tasks = plan_stats(f, args.workers if run is None else max(2, args.workers or 2))
    if not tasks:
        return local(f, _selected(f, flt)), False
    _refuse_unknown_features(f, flt)
    return pooled(f, tasks, stats_setup(args), args.workers, run)


def _write_out(args, text: str) -> None:
    """``--out``: the JSON report written there too (atomically; a path or URL)."""
    if getattr(args, "out", None):
        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(args.out, text.encode() + b"\n")


def cmd_stats(args) -> int:
    from codec.stats.file_stats import compute_stats
    from codec.stats.pool import pool_stats
    from codec.cli.stats_text import stats_text

    flt = _where(args)
    with _open(args) as f:
        f.build_index()
        result, problems = _whole_pass(args, f, flt, pool_stats, compute_stats)
        report = result.to_json()
        if flt is not None:
            report["where"] = flt.text
        _write_out(args, json.dumps(report, ensure_ascii=False, allow_nan=False))
        if args.json:
            _out(json.dumps(report, ensure_ascii=False, allow_nan=False))
        else:
            _out(stats_text(report, shown_path(f.path)))
        return EXIT_PROBLEMS if f.problems or problems or _unusable(f) else EXIT_OK


def _unusable(source) -> bool:
    """Shards of a set that could not be read at all (each named on stderr when the set opened):
    problems in the data, as a damaged record is."""
    return bool(getattr(source, "unusable", None))


def cmd_schema(args) -> int:
    from codec.stats.schema import infer_schema
    from codec.stats.schema_pool import pool_schema

    flt = _where(args)
    with _open(args) as f:
        f.build_index()
        schema, problems = _whole_pass(args, f, flt, pool_schema, infer_schema)
        report = schema.to_json()
        if flt is not None:
            report["where"] = flt.text
        _write_out(args, json.dumps(report, ensure_ascii=False))
        if args.json:
            _out(json.dumps(report, ensure_ascii=False))
        else:
            where = "" if flt is None else f", records where {flt.text}"
            source = os.path.basename(shown_path(f.path)) + where
            sys.stdout.write(schema.to_python(source))
        return EXIT_PROBLEMS if f.problems or problems or _unusable(f) else EXIT_OK


def _write_text(output: str | None, text: str) -> None:
    if not output or output == "-":
        sys.stdout.write(text)
    else:
        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(output, text.encode())


COMMANDS = ("info", "verify", "repair", "cat", "index", "export", "stats", "schema", "check")
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
            p.add_argument("file", nargs="+", help="TFRecord files, globs or folders (plain, GZIP or ZLIB); "
                                                   "URLs too: s3://, gs://, https://...")
        else:
            p.add_argument("file", nargs="+",
                           help="a TFRecord file (plain, GZIP or ZLIB) or URL (s3://, gs://, https://...); "
                                "several files, a folder or a glob (of URLs too) are read as one set of shards")
        p.add_argument("--no-crc", action="store_true", help="do not check CRCs")
        p.add_argument("--no-cache", action="store_true", help="ignore and do not write the index cache")
        if name in ("info", "cat", "export", "stats", "schema"):
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
        p = add("export", "export records as tfrecord, jsonl, csv or image files")
        p.add_argument("--to", required=True, metavar="OUT", help="output file (a folder for --format images)")
        p.add_argument("--format", choices=FORMATS, default="tfrecord")
        p.add_argument("--compression", choices=COMPRESSIONS,
                       help="for --format tfrecord (default: as the name of OUT says: .gz gzip, .zz/.zlib zlib, "
                            "else none)")
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
    except Exception as exc:  # noqa: BLE001 - only a storage client's own error, as one line; others propagate
        from codec.cli.sources import remote_failure

        line = remote_failure(argv, exc)
        if line is None:
            raise
        sys.stderr.write(f"tfrlens-cli: {line}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
