"""A ``--where`` filter on the process pool (:mod:`codec.parallel.pool`): the tasks
:func:`codec.stats.pool.plan_stats` plans (one per shard of a set, or record
ranges of one big plain file), each worker testing its records with the
codec's own :func:`codec.query.filter.filter_iter`.

The matches are the ones one process finds, in the same order: each task
numbers its records from its place in the whole set (so ``index`` in an
expression means the same), and the parts are joined in record order.
Records a worker found damaged are read again here, so the source's problems
list them as a pass in this process would (the app's Problems panel, the
exit code).
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from codec.stats.pool import StatsRunner, StatsTask

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generator, Iterator

    from codec.index.scan import IndexProgress
    from codec.query.filter import FeatureCheck, Filter

__all__ = ["FilterRunner", "Matches", "filter_tasks", "pool_filter_iter", "pooled_filter_iter"]


@dataclass
class Matches:
    """The matching record numbers of some tasks, as (first record of the task, matches) parts."""

    parts: list[tuple[int, array]] = field(default_factory=list)

    def merge(self, other: Matches) -> None:
        self.parts.extend(other.parts)

    def collect(self, out: array) -> None:
        """Append every match to ``out``, in record order."""
        for _, found in sorted(self.parts, key=lambda part: part[0]):
            out.extend(found)


class FilterRunner(StatsRunner):
    """A worker's filter: the payload and expression decided once (as for statistics), then one task at a time."""

    filter: Filter  # built with where= (the filter's text, see pool_filter_iter's setup): never None

    def _new_result(self) -> Matches:
        return Matches()

    # result is what _new_result made: a Matches here, where StatsRunner's is a FileStats.
    def _pass(self, f, indices: range, base: int, result: Matches):  # type: ignore[override]
        from codec.query.filter import filter_iter

        found = array("Q")
        for item in filter_iter(f, self.filter, found, indices, base=base):
            yield item.records
        result.parts.append((base + indices.start, found))


def filter_tasks(source, flt: Filter, workers: int | None) -> list[StatsTask]:
    """The pool's tasks for filtering ``source`` (an indexed file or shard set) with ``flt``;
    [] where one process is the way (see :func:`codec.stats.pool.plan_stats`), or the
    expression needs no record data (the index alone answers it, faster here)."""
    from codec.sources.shard_set import ShardSet
    from codec.sources.tfrecord_file import TFRecordFile
    from codec.stats.pool import plan_stats

    if flt.is_empty or not flt.needs_data or not isinstance(source, (TFRecordFile, ShardSet)):
        return []
    return plan_stats(source, workers)


def pool_filter_iter(source, flt: Filter, matches: array, tasks: list[StatsTask], setup: dict,
                     workers: int | None, run=None) -> Generator[IndexProgress, None, bool]:
    """Append to ``matches`` the records of ``source`` that ``flt`` matches, from ``tasks`` on the pool
    (or ``run``, a stand-in for codec.parallel.pool.run_tasks), yielding progress as
    :func:`codec.query.filter.filter_iter` does. ``setup`` is
    :func:`codec.stats.pool.stats_setup`'s, with ``where`` = ``flt.text``.

    Closing the generator stops the workers. Returns (StopIteration's value)
    whether a worker met problems in the data.
    """
    from codec.index.scan import IndexProgress
    from codec.stats.pool import pool_merge_iter

    found = Matches()
    problems = yield from pool_merge_iter(source, found, FilterRunner, tasks, setup, workers, run)
    found.collect(matches)
    n = len(source)
    yield IndexProgress(n, n, n, len(source.problems), True)
    return problems


def pooled_filter_iter(source, flt: Filter, matches: array, check: FeatureCheck | None = None,
                       workers: int | None = None) -> Iterator[IndexProgress]:
    """:func:`codec.query.filter.filter_iter` over every record of ``source``: on the pool when
    :func:`filter_tasks` plans tasks, else here. ``check`` learns first, in this process,
    which of the expression's features some record has (usually from the first record).
    The pool is used only where workers decode records as ``source`` does
    (:func:`codec.stats.pool.pool_decodes_alike`)."""
    from codec.query.filter import feature_check_iter, filter_iter
    from codec.stats.pool import pool_decodes_alike

    tasks = filter_tasks(source, flt, workers) if pool_decodes_alike(source) else []
    if not tasks:
        yield from filter_iter(source, flt, matches, check=check)
        return
    if check is not None and flt.features:
        yield from (p for p in feature_check_iter(source, flt, check) if not p.done)
    setup = {"named": [], "where": flt.text, "check_crc": source.check_crc}
    yield from pool_filter_iter(source, flt, matches, tasks, setup, workers)
