"""``--where``: the filter a command reads its records through, compiled once, refusing a feature no
record has, and run on the process pool over a large input."""
from __future__ import annotations

from codec.cli.sources import choice as _choice
from codec.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from codec.query.filter import Filter
    from codec.sources.tfrecord_file import TFRecordFile

__all__ = ["refuse_unknown_features", "selected", "where_filter"]


def where_filter(args) -> Filter | None:
    """The compiled ``--where`` expression (None without one); a bad one is a usage error."""
    text = getattr(args, "where", None)
    if text is None:
        return None
    from codec.query.filter import ExprError, compile_filter

    try:
        return compile_filter(text, names=_choice(args).labels)
    except ExprError as exc:
        raise UsageError(f"bad --where expression {text!r}: {exc}") from None


def selected(f: TFRecordFile, flt: Filter | None, indices=None, args=None):
    """``indices`` (default: all records) narrowed to those ``flt`` matches: all records on the process
    pool when ``args.workers`` and the input's size call for it (see :mod:`codec.stats.filter_pool`)."""
    if flt is None:
        return indices
    from codec.query.filter import matching_indices

    refuse_unknown_features(f, flt)
    if indices is None and args is not None:
        from codec.stats.filter_pool import filter_tasks, pool_filter_iter
        from codec.stats.pool import stats_setup

        tasks = filter_tasks(f, flt, args.workers)
        if tasks:
            from array import array

            found = array("Q")
            for _ in pool_filter_iter(f, flt, found, tasks, stats_setup(args), args.workers):
                pass
            return found
    return matching_indices(f, flt, indices)


def refuse_unknown_features(f: TFRecordFile, flt: Filter | None) -> None:
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
