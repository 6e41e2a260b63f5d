"""A ``--where`` filter on the process pool (:mod:`codec.parallel.pool`): the tasks
:func:`codec.stats.pool.plan_stats` plans (one per shard of a set, or record
ranges of one big plain file), each worker testing its records with the
codec's own :func:`codec.query.filter.filter_iter`.

The matches are the ones one process finds, in the same order: each task
numbers its records from its place in the whole set (so ``index`` in an
expression means the same), and the parts are joined in record order. Tasks
finish in any order; a task's matches are handed on (appended, and put on a
:class:`~codec.query.filter.MatchStream`) as soon as every task before it has
finished, so what has been handed on is always a prefix of the result.
Records a worker found damaged are read again here, so the source's problems
list them as a pass in this process would (the app's Problems panel, the
exit code).
"""
from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

from codec.stats.pool import MIN_RANGE, StatsBatch, StatsRunner, StatsTask

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generator, Iterator

    from codec.index.scan import IndexProgress
    from codec.query.filter import FeatureCheck, Filter, MatchStream

__all__ = ["FilterRunner", "InOrder", "Matches", "filter_tasks", "finer", "pool_filter_iter", "pooled_filter_iter"]

# Record ranges of one file per worker when matches are shown as they come: a batch
# every 1/32 of the pass on 2 cores (each task opens the file's cached index again: 13 ms for 1M records).
STREAM_TASKS_PER_WORKER = 16


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


def _in_order(parts: list[array]) -> array:
    """Matches of tasks that start at one record (all but one of them empty), as one array in record order."""
    if len(parts) == 1:
        return parts[0]
    out = array("Q")
    for part in sorted(parts, key=lambda found: found[0] if len(found) else -1):
        out.extend(part)
    return out


class InOrder:
    """Task results merged as they finish, handed on in record order: a task's matches wait for
    every task planned before it, then go to ``matches`` (and ``stream``)."""

    def __init__(self, tasks: list, matches: array, stream: MatchStream | None = None) -> None:
        self.firsts = [_first_record(task) for task in tasks]
        # Tasks sharing a first record (an empty shard and the shard after it): each one's result is awaited.
        self.expected = Counter(self.firsts)
        self.matches, self.stream = matches, stream
        self.next = 0  # the first task not handed on yet
        self.waiting: dict[int, list[array]] = {}  # first record -> the matches of its tasks finished so far

    def merge(self, other: Matches) -> None:
        if not other.parts:
            return
        found = array("Q")
        other.collect(found)
        self.waiting.setdefault(min(first for first, _ in other.parts), []).append(found)
        while self.next < len(self.firsts):
            first = self.firsts[self.next]
            parts = self.waiting.get(first)
            if parts is None or len(parts) < self.expected[first]:
                break
            del self.waiting[first]
            self.next += self.expected[first]
            through = self.firsts[self.next] if self.next < len(self.firsts) else None
            self._hand_on(_in_order(parts), through)

    def flush(self, total: int) -> None:
        """Hand on whatever still waits, in record order (nothing, once every task has finished);
        the ``total`` records are done."""
        for first in sorted(self.waiting):
            self._hand_on(_in_order(self.waiting.pop(first)), None)
        if self.stream is not None:
            self.stream.put((), total)

    def _hand_on(self, found: array, through: int | None) -> None:
        self.matches.extend(found)
        if self.stream is not None:
            self.stream.put(found, through)


def _first_record(task: StatsTask | StatsBatch) -> int:
    """The number (in the whole set) of a task's first record, as :class:`FilterRunner` keys its part."""
    first = task.tasks[0] if isinstance(task, StatsBatch) else task
    return first.base + first.start


def finer(tasks: list, workers: int) -> list:
    """One file's record ranges cut into about ``STREAM_TASKS_PER_WORKER`` per worker (of at
    least ``MIN_RANGE`` records each), so that matches come often; shards stay whole."""
    if not tasks or not all(isinstance(t, StatsTask) and t.stop is not None and t.path == tasks[0].path
                            for t in tasks):
        return tasks
    n = tasks[-1].stop - tasks[0].start
    pieces = max(len(tasks), min(n // MIN_RANGE, workers * STREAM_TASKS_PER_WORKER))
    edges = [tasks[0].start + n * k // pieces for k in range(pieces + 1)]
    return [StatsTask(tasks[0].path, None, a, b, tasks[0].base) for a, b in zip(edges, edges[1:])]


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
                     workers: int | None, run=None,
                     stream: MatchStream | None = None) -> Generator[IndexProgress, None, bool]:
    """Append to ``matches`` the records of ``source`` that ``flt`` matches, from ``tasks`` on the pool
    (or ``run``, a stand-in for codec.parallel.pool.run_tasks), yielding progress as
    :func:`codec.query.filter.filter_iter` does. ``setup`` is
    :func:`codec.stats.pool.stats_setup`'s, with ``where`` = ``flt.text``. Matches are
    appended (and put on ``stream``) in record order as the tasks before them finish.

    Closing the generator stops the workers. Returns (StopIteration's value)
    whether a worker met problems in the data.
    """
    from codec.index.scan import IndexProgress
    from codec.stats.pool import pool_merge_iter

    found = InOrder(tasks, matches, stream)
    problems = yield from pool_merge_iter(source, found, FilterRunner, tasks, setup, workers, run)
    found.flush(len(source))
    n = len(source)
    yield IndexProgress(n, n, n, len(source.problems), True)
    return problems


def pooled_filter_iter(source, flt: Filter, matches: array, check: FeatureCheck | None = None,
                       workers: int | None = None, stream: MatchStream | None = None) -> Iterator[IndexProgress]:
    """:func:`codec.query.filter.filter_iter` over every record of ``source``: on the pool when
    :func:`filter_tasks` plans tasks, else here. ``check`` learns first, in this process,
    which of the expression's features some record has (usually from the first record).
    The pool is used only where workers decode records as ``source`` does
    (:func:`codec.stats.pool.pool_decodes_alike`). With ``stream``, the matches are also put
    there as they are found, in record order (one file's ranges are then cut finer)."""
    from codec.parallel.pool import available_cores
    from codec.query.filter import feature_check_iter, filter_iter, streamed
    from codec.stats.pool import pool_decodes_alike

    tasks = filter_tasks(source, flt, workers) if pool_decodes_alike(source) else []
    if not tasks:
        steps = filter_iter(source, flt, matches, check=check)
        yield from steps if stream is None else streamed(steps, matches, stream)
        return
    if check is not None and flt.features:
        yield from (p for p in feature_check_iter(source, flt, check) if not p.done)
    if stream is not None:
        tasks = finer(tasks, workers or available_cores())
    setup = {"named": [], "where": flt.text, "check_crc": source.check_crc}
    yield from pool_filter_iter(source, flt, matches, tasks, setup, workers, stream=stream)
