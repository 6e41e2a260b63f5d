"""The commands that read records as they are: ``info``, ``cat`` (and ``cat --follow``) and ``index``."""
from __future__ import annotations

import os
import sys
from collections import Counter

from codec.cli.filtering import refuse_unknown_features, selected, where_filter
from codec.cli.report import EXIT_OK, EXIT_PROBLEMS, kinds_summary, problem_line
from codec.cli.report import out as _out
from codec.cli.sources import choice as _choice
from codec.cli.sources import is_url as _is_url
from codec.cli.sources import open_source as _open
from codec.errors import UsageError
from codec.storage.url_secrets import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from codec.sources.tfrecord_file import TFRecordFile

__all__ = ["cmd_cat", "cmd_index", "cmd_info", "feature_types", "index_through"]

INFO_SAMPLE = 1000  # info's kinds and features: of the first 1,000 records,
INFO_SAMPLE_BYTES = 8 << 20  # or as many of them as start in the first 8 MiB of records


def cmd_info(args) -> int:
    from codec.decode.decoder import decode_record
    from codec.format.framing import Compression
    from codec.format.names import tensorflow_name_note
    from codec.ops.verify import status_counts

    with _open(args, verify=not args.no_crc) as f:
        f.build_index(verify=not args.no_crc)
        n = len(f)
        statuses = status_counts(f)
        kinds: Counter = Counter()
        features: dict[str, Counter] = {}
        present: Counter = Counter()
        sample = _sample_size(f)
        for _i, data, *_ in _records(f, range(sample)):  # read a run at a time: a URL's records are fetched again
            decoded = decode_record(data, f.payload)
            kinds[decoded.kind.value] += 1
            for key, dtype in feature_types(decoded).items():
                features.setdefault(key, Counter())[dtype] += 1
                present[key] += 1
        _out(f"path:        {shown_path(f.path)}")
        if f.is_set:
            _out(f"shards:      {len(f.files):,}" + (f" ({len(f.unusable)} unusable)" if f.unusable else ""))
        _out(f"compression: {f.compression.value}")
        for line in () if f.is_set else f.info_lines():  # an ArrayRecord file's format and options
            _out(line)
        note = None if f.is_set else tensorflow_name_note(f.path, f.compression)
        if note:
            _out(f"note:        {note}")
        size = f"{f.file_size:,} bytes"
        if f.compression is not Compression.NONE and not f.is_set:
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
    if n == 0 or f.is_set:
        return n
    import numpy as np

    offsets = np.asarray([f.index.offset(i) for i in range(n)], dtype=np.int64)
    return max(1, int(np.searchsorted(offsets, offsets[0] + INFO_SAMPLE_BYTES, side="left")))


def _records(f, chosen):
    """(index, data, status, offset, length) of the ``chosen`` records, consecutive ones of a plain file
    read a run at a time (:func:`codec.sources.record_pass.iter_records`)."""
    from codec.index.scan import IndexProgress
    from codec.sources.record_pass import iter_records

    for item in iter_records(f, chosen):
        if not isinstance(item, IndexProgress):
            yield item


def feature_types(decoded) -> dict[str, str]:
    """Feature key -> dtype of one record (feature lists marked as such)."""
    from codec.decode.decoder import (
        feature_values,
        record_feature_lists,
        record_features,
    )

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
    _out(f"problems:    {len(f.problems)} ({kinds_summary(f.problems)})")
    for p in f.problems:
        _out(problem_line(p))
    from codec.format.problem_text import ARRAY_RECORD, damage_key, damage_table, tensorflow_stops

    keys = list(dict.fromkeys(damage_key(p) for p in f.problems))
    damage = damage_table(f.container)
    _out("meaning:")
    for key in keys:
        _out(f"  {key.replace('_recovered', ' (recovered)')}: {damage[key].happened}")
    if f.container == ARRAY_RECORD:
        return  # what tf.data does with TFRecord damage does not apply
    first = f.problems[0]
    record = first.index if first.index is not None else f.record_before(first) + 1
    _out(f"tensorflow:  {tensorflow_stops(damage_key(first), record)}")


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
    flt = where_filter(args)
    with _open(args) as f:
        index_through(f, range_stop(args.range) if flt is None else None)
        show = _record_printer(args, f.payload, f.labels)
        chosen = parse_range(args.range, len(f))
        if flt is not None:  # the matches first (every record: on the pool), then each is printed
            chosen = selected(f, flt, None if args.range is None else chosen, args)
        try:
            for i, data, status, offset, length in _records(f, chosen):
                show(i, offset, length, status, data,
                     f.location(i)[0] if choice.payload is not None else None)
        finally:
            show.flush()
        return EXIT_PROBLEMS if f.problems else EXIT_OK


def _cat_follow(args) -> int:
    """``cat --follow``: the records there now, then each one appended, as it is complete; ends on Ctrl-C
    (exit 130), at the end of ``--range A:B``, or when the file shrinks or is replaced (exit 2)."""
    from codec.datasets.payload_choice import apply
    from codec.ops.appended import appended_records
    from codec.sources.tfrecord_file import TFRecordFile

    choice = _choice(args)
    if len(args.file) != 1 or len(choice.files) != 1 or choice.dataset is not None or os.path.isdir(args.file[0]):
        raise UsageError("--follow follows one file, not several, a folder or a glob")
    if _is_url(choice.files[0]):
        raise UsageError(f"--follow reads a local file as it is written, not a URL: {choice.files[0]}")
    start, stop = _follow_range(args.range)
    flt = where_filter(args)
    # The index cache is left alone: a file being written never matches an entry for long.
    with TFRecordFile(choice.files[0], check_crc=not args.no_crc, use_cache=False) as f:
        apply(choice, f)
        f.build_index()
        f.start_follow()
        if f.complete_records:
            refuse_unknown_features(f, flt)
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
    sys.stderr.write(f"tfrlens-cli: problem: {problem_line(problem).strip()}\n")
    sys.stderr.flush()


def index_through(f, stop: int | None) -> None:
    """Index ``f`` as far as record ``stop`` (its records below ``stop`` known, and where the next
    one starts), or all of it for None or a set of shards.

    A command that needs only the first records of a 20 GB file or a URL stops
    reading there; only a whole pass is written to the index cache.
    """
    if stop is None or f.is_set:
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
                from codec.datasets.payload_choice import record_text
                from codec.decode.decoder import decode_record

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
    from codec.format.problem_text import ARRAY_RECORD

    with _open(args) as f:
        if f.container == ARRAY_RECORD:
            raise UsageError(f"{f.path} is an ArrayRecord file: its footer is its index, there is no TFRecord "
                             "index to write")
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


def _write_text(output: str | None, text: str) -> None:
    if not output or output == "-":
        sys.stdout.write(text)
    else:
        from codec.storage.writer import atomic_write_bytes

        atomic_write_bytes(output, text.encode())
