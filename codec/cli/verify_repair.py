"""``verify`` (every length and data CRC, every problem reported) and ``repair`` (a clean copy of
every intact record), over each file named, as the local commands run them."""
from __future__ import annotations

import os
import sys
from collections import Counter

from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, verify_report
from codec.cli.report import out as _out
from codec.cli.sources import entries as _entries
from codec.cli.sources import is_url as _is_url
from codec.errors import TFRecordError
from codec.storage.url_secrets import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    pass

__all__ = ["cmd_repair", "cmd_verify"]


def cmd_verify(args) -> int:
    from codec.index.quick_verify import intact_records

    one = args.file[0] if len(args.file) == 1 and not _is_url(args.file[0]) else None
    if one is not None and os.path.isfile(one):  # a proof needs no numpy, no index
        n = intact_records(one)
        if n is not None:
            verify_report(args, one, "none", n, n, [], True)
            return EXIT_OK
    from codec.ops.verify import status_counts, verify_data
    from codec.sources.record_file import open_record_file

    found, single = _entries(args)
    code = EXIT_OK
    totals: Counter[str] = Counter()
    for path, info in found:
        extra = {"info": info} if _is_url(path) else {"fork_halves": True}  # async clients are not fork-safe
        try:
            f = open_record_file(path, check_crc=True, use_cache=not args.no_cache, **extra)
        except TFRecordError as exc:
            if single:
                raise
            sys.stderr.write(f"tfrlens-cli: {exc}\n")
            code = EXIT_USAGE
            totals["unusable"] += 1
            continue
        with f:
            verify_data(f)
            n = len(f)
            ok = status_counts(f)["ok"]
            totals.update(files=1, records=n, ok=ok, problems=len(f.problems))
            if f.problems and code == EXIT_OK:
                code = EXIT_PROBLEMS
            verify_report(args, f.path, f.compression.value, n, ok, f.problems, single)
    if not single and not args.json:
        _out(f"total: {totals['files']} file(s), {totals['records']:,} records, {totals['ok']:,} ok, "
             f"{totals['problems']} problem(s)" + (f", {totals['unusable']} unusable" if totals["unusable"] else ""))
    return code


def cmd_repair(args) -> int:
    from codec.ops.repair import repair
    from codec.sources.tfrecord_file import TFRecordFile
    from codec.storage.writer import (
        make_output_folder,
        output_is_folder,
        output_join,
        resolve_output_compression,
        with_compression_suffix,
    )

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
