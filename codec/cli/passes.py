"""The commands that pass over every record: ``export``, ``stats`` and ``schema``; a large input's pass
runs on the process pool or a Beam runner (``args.task_runner``)."""
from __future__ import annotations

import json
import os
import sys

from codec.cli.filtering import refuse_unknown_features, selected, where_filter
from codec.cli.reading import index_through
from codec.cli.report import EXIT_OK, EXIT_PROBLEMS
from codec.cli.report import out as _out
from codec.cli.sources import open_source as _open
from codec.storage.url_secrets import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    pass

__all__ = ["cmd_export", "cmd_schema", "cmd_stats"]


def cmd_export(args) -> int:
    from codec.ops.export import (
        ExportReport,
        export_iter,
        parse_records_spec,
        records_stop,
    )
    from codec.storage.writer import resolve_output_compression

    flt = where_filter(args)
    compression = args.compression
    if args.format == "tfrecord":
        compression, warning = resolve_output_compression(args.to, args.compression)
        if warning:
            sys.stderr.write(f"tfrlens-cli: warning: {warning}\n")
    with _open(args) as f:
        index_through(f, records_stop(args.records) if flt is None else None)
        indices = parse_records_spec(args.records, len(f)) if args.records else None
        if flt is not None:
            indices = selected(f, flt, indices, args)
        report = ExportReport(args.to, args.format)
        for _ in export_iter(f, args.to, args.format, indices, compression, report, args.csv_formulas,
                             array_record_options=args.array_record_options):
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
        return local(f, selected(f, flt)), False
    refuse_unknown_features(f, flt)
    return pooled(f, tasks, stats_setup(args), args.workers, run)


def _write_out(args, text: str) -> None:
    """``--out``: the JSON report written there too (atomically; a path or URL)."""
    if getattr(args, "out", None):
        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(args.out, text.encode() + b"\n")


def cmd_stats(args) -> int:
    from codec.cli.stats_text import stats_text
    from codec.stats.file_stats import compute_stats
    from codec.stats.pool import pool_stats

    def show(stats, report: dict, f, flt) -> None:
        _out(stats_text(report, shown_path(f.path)))

    return _report_pass(args, pool_stats, compute_stats, show, allow_nan=False)


def _unusable(source) -> bool:
    """Shards of a set that could not be read at all (each named on stderr when the set opened):
    problems in the data, as a damaged record is."""
    return bool(source.unusable)


def cmd_schema(args) -> int:
    from codec.stats.schema import infer_schema
    from codec.stats.schema_pool import pool_schema

    def show(schema, report: dict, f, flt) -> None:
        where = "" if flt is None else f", records where {flt.text}"
        sys.stdout.write(schema.to_python(os.path.basename(shown_path(f.path)) + where))

    return _report_pass(args, pool_schema, infer_schema, show)


def _report_pass(args, pooled, local, show, allow_nan: bool = True) -> int:
    """``stats``'s and ``schema``'s pass over every record: its JSON report (with the ``--where``
    text) written to ``--out``, printed with ``--json``, else ``show(result, report, f, flt)``
    prints its text; the exit code."""
    flt = where_filter(args)
    with _open(args) as f:
        f.build_index()
        result, problems = _whole_pass(args, f, flt, pooled, local)
        report = result.to_json()
        if flt is not None:
            report["where"] = flt.text
        text = json.dumps(report, ensure_ascii=False, allow_nan=allow_nan)
        _write_out(args, text)
        if args.json:
            _out(text)
        else:
            show(result, report, f, flt)
        return EXIT_PROBLEMS if f.problems or problems or _unusable(f) else EXIT_OK
