"""Statistics on a process pool (:mod:`codec.parallel.pool`): one task per shard of a set, or record ranges of
one big plain file, each part's :class:`~codec.stats.file_stats.FileStats` folded together with ``merge``.

``merge`` is exact, so the report is the one a single process makes, byte for
byte. A ``--where`` filter runs in the workers, on each record's number in
the whole set, so it selects the same records as in one process.
"""
from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generator, Iterator

    from codec.index.scan import IndexProgress
    from codec.stats.file_stats import FileStats

__all__ = ["SMALL_INPUT", "TaskPart", "StatsBatch", "StatsRunner", "StatsTask", "damaged_records", "note_damage", "plan_stats",
           "pool_decodes_alike", "pool_merge", "pool_merge_iter", "pool_stats", "pooled_stats_iter", "stats_setup"]

SMALL_INPUT = 4 << 20  # bytes: read in this process by default, a worker's start-up costs more than it saves
MIN_RANGE = 4096  # records per task of one file, at least
TASKS_PER_WORKER = 4  # ranges of one file per worker: a slow range does not keep the others waiting


@dataclass(frozen=True)
class StatsTask:
    """Records ``start`` .. ``stop - 1`` (``stop`` None: to the end) of ``path``, numbered from ``base`` in the set."""

    path: str
    info: dict | None = None
    start: int = 0
    stop: int | None = None
    base: int = 0


@dataclass(frozen=True)
class StatsBatch:
    """Consecutive whole shards run as one task: a set of 100,000 small shards is a few dozen
    tasks, not 100,000 (each a pickled task and result, and a merge)."""

    tasks: tuple[StatsTask, ...]


TASKS_PER_WORKER_OF_SET = 16  # batches of a shard set per worker, cut by bytes


@dataclass
class TaskPart:
    """What one task gives back: its result (a FileStats, a FileSchema, matches: without payload or
    names, which the caller has), whether its file has problems, and the records (numbered in the
    set) whose data it found damaged."""

    result: Any
    problems: int = 0
    error: str | None = None
    damaged: list[int] = field(default_factory=list)


class StatsRunner:
    """A worker's statistics: the payload and filter decided once, then one :class:`StatsTask` at a time."""

    def __init__(self, named: list[str], proto: str | None = None, type_name: str | None = None,
                 label_map: str | None = None, where: str | None = None, check_crc: bool = True,
                 use_cache: bool = True) -> None:
        from codec.datasets.payload_choice import choose_for
        from codec.query.filter import compile_filter

        choice = choose_for(named, proto=proto, type_name=type_name, label_map=label_map)
        self.payload, self.labels = choice.payload, choice.labels
        self.filter = compile_filter(where, names=choice.labels) if where is not None else None
        self.options = {"check_crc": check_crc, "use_cache": use_cache}

    def _new_result(self):
        """What a task accumulates into (a subclass infers something else over the same pass)."""
        from codec.stats.file_stats import FileStats

        return FileStats(self.payload)


    def run(self, task: StatsTask | StatsBatch, progress=None):
        """One task's part: its records' result, problems and damaged records (a batch's shards
        accumulate into one result, in order)."""
        from codec.errors import TFRecordError

        result = self._new_result()
        part = TaskPart(result)
        if isinstance(task, StatsBatch):
            tasks, lump = task.tasks, _Lumps(progress)
        else:
            tasks, lump = (task,), None
        try:
            for one in tasks:
                self._run_one(one, result, part, progress if lump is None else lump.add)
        except TFRecordError as exc:  # the file changed or went away since it was indexed
            return TaskPart(None, 1, str(exc))
        finally:
            if lump is not None:
                lump.flush()
        result.payload = None  # the caller's own: a payload need not pickle
        return part

    def _run_one(self, task: StatsTask, result, part: TaskPart, progress) -> None:
        from codec.sources.indexed_files import indexed_file

        with indexed_file(task.path, info=task.info, **self.options) as f:
            f.payload, f.labels = self.payload, self.labels
            stop = len(f) if task.stop is None else min(task.stop, len(f))
            done = 0
            indices = range(task.start, stop)
            for item in self._pass(f, indices, task.base, result):
                if progress is not None and item > done:
                    progress(item - done)
                    done = item
            part.problems += len(f.problems)
            part.damaged += [task.base + i for i in damaged_records(f, indices)]

    def _pass(self, f, indices: range, base: int, result: FileStats):
        """Records done, as the pass goes; with a filter, only matching records are counted."""
        from codec.index.scan import IndexProgress
        from codec.sources.record_pass import iter_records, quick_decode, record_pass

        if self.filter is None:
            for item in record_pass(f, result.add, indices, result.counts):
                yield item.records
            return
        flt, counts, payload = self.filter, result.counts, self.payload
        test = flt.matches
        for item in iter_records(f, indices):
            if isinstance(item, IndexProgress):
                yield item.records
                continue
            i, data, status, offset, length = item
            if flt.needs_data:
                decoded = quick_decode(data, payload) if flt.needs_decode else None
                chosen = test(base + i, data, status, offset, length, decoded)
            else:  # as codec.query.filter.filter_iter asks it, without the data
                chosen = test(base + i, b"", "ok", offset, 0)
            if not chosen:
                continue
            if status.data_intact:
                result.add(data)
                counts.visited += 1
            else:
                counts.damaged += 1


class _Lumps:
    """A batch's progress sent in lumps of records, not one message per small shard."""

    LUMP = 4096

    def __init__(self, progress) -> None:
        self.progress, self.pending = progress, 0

    def add(self, n: int) -> None:
        self.pending += n
        if self.pending >= self.LUMP:
            self.flush()

    def flush(self) -> None:
        if self.pending and self.progress is not None:
            self.progress(self.pending)
        self.pending = 0


def damaged_records(f, indices: range) -> list[int]:
    """Records of ``indices`` whose data is not intact (as far as ``f`` has read them)."""
    import numpy as np

    from codec.format.framing import RecordStatus

    statuses = f.index.statuses()[indices.start:indices.stop]
    if not _INTACT:  # made once: a batch may hold 100,000 one-record shards
        _INTACT.append(np.array([RecordStatus(v).data_intact for v in range(max(RecordStatus) + 1)], dtype=bool))
    return (np.flatnonzero(~_INTACT[0][statuses]) + indices.start).tolist()


_INTACT: list = []  # whether each status's data is intact, by status value


def note_damage(source, damaged: list[int]) -> None:
    """Read here the records workers found damaged, so that ``source`` records the problems itself
    as a pass in this process would (a no-op for those it knew)."""
    for i in sorted(damaged):
        source.read(i)


def stats_setup(args) -> dict:
    """The :class:`StatsRunner` arguments for a ``tfrlens-cli stats`` command line."""
    return {"named": list(args.file), "proto": getattr(args, "proto", None), "type_name": getattr(args, "type", None),
            "label_map": getattr(args, "label_map", None), "where": getattr(args, "where", None),
            "check_crc": not args.no_crc, "use_cache": not args.no_cache}


def plan_stats(source, workers: int | None) -> list[StatsTask]:
    """The tasks for ``workers`` processes over an indexed source; [] where one process is the way
    (one worker, a small input, one shard, a single file compressed or remote)."""
    from codec.format.framing import Compression
    from codec.parallel.pool import available_cores

    if not workers:  # None or 0: one per core (as check's --workers 0), a small input in this process
        workers = available_cores() if source.file_size >= SMALL_INPUT else 1
    if workers <= 1:
        return []
    if hasattr(source, "shards"):
        usable = [k for k in source.numbered_shards() if source.shards[k].error is None]  # (the rest: noted once)
        tasks = [StatsTask(source.shards[k].path, source.shards[k].info, base=source.record_start(k)) for k in usable]
        if len(tasks) <= 1:
            return []
        return _batched(tasks, [source.shards[k].size for k in usable], workers * TASKS_PER_WORKER_OF_SET)
    n = len(source)
    if source.compression is not Compression.NONE or source.remote is not None or n < 2 * MIN_RANGE:
        return []  # read in order, or (remote) each worker would read the index again
    pieces = max(2, min(n // MIN_RANGE, workers * TASKS_PER_WORKER))
    edges = [n * k // pieces for k in range(pieces + 1)]
    return [StatsTask(source.path, None, a, b) for a, b in zip(edges, edges[1:])]


def _batched(tasks: list[StatsTask], sizes: list[int], pieces: int) -> list[StatsTask | StatsBatch]:
    """``tasks`` (whole shards, in order) as at most ``pieces`` runs of about equal bytes; a run of
    one shard stays a plain task."""
    if len(tasks) <= pieces:
        return tasks
    total = sum(sizes) or 1
    out: list[StatsTask | StatsBatch] = []
    run: list[StatsTask] = []
    seen = 0
    for task, size in zip(tasks, sizes):
        run.append(task)
        seen += size
        if seen * pieces >= total * (len(out) + 1):
            out.append(run[0] if len(run) == 1 else StatsBatch(tuple(run)))
            run = []
    if run:
        out.append(run[0] if len(run) == 1 else StatsBatch(tuple(run)))
    return out


def pool_stats(source, tasks: list[StatsTask], setup: dict, workers: int | None,
               run=None) -> tuple[FileStats, bool]:
    """The statistics of ``source`` from ``tasks`` on the pool (or ``run``, a stand-in for
    codec.parallel.pool.run_tasks: Beam's), and whether a worker met problems in the data."""
    from codec.stats.file_stats import FileStats

    result = FileStats(source.payload)
    result.labels = source.labels
    return result, pool_merge(source, result, StatsRunner, tasks, setup, workers, run)


def pool_merge(source, result, runner, tasks: list[StatsTask], setup: dict, workers: int | None,
               run=None) -> bool:
    """:func:`pool_merge_iter` run to the end: whether a worker met problems in the data."""
    steps = pool_merge_iter(source, result, runner, tasks, setup, workers, run)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def pool_merge_iter(source, result, runner, tasks: list[StatsTask], setup: dict,
                    workers: int | None, run=None) -> Generator[IndexProgress, None, bool]:
    """Merge into ``result`` the result of each part ``runner`` makes of a task (on the pool,
    or ``run``), yielding progress (records of ``source`` done); returns (StopIteration's value)
    whether a worker met problems in the data.

    A part's error is raised; the records workers found damaged are noted on
    ``source`` (:func:`note_damage`). Closing the generator stops the workers.
    The caller yields the last, ``done`` progress once its result is complete.
    """
    from codec.errors import TFRecordError
    from codec.index.scan import IndexProgress
    from codec.parallel.pool import available_cores, run_tasks

    total, done, problems = len(source), 0, False
    known = len(source.problems)  # (unchanged here until the workers are done: a set may have 100,000 shards)
    damaged: list[int] = []
    results = (run or run_tasks)(tasks, runner, setup, workers or available_cores())
    try:
        for item in results:
            if isinstance(item, int):  # progress
                done += item
                yield IndexProgress(done, done, total, known)
                continue
            if item.error is not None:
                raise TFRecordError(item.error)
            result.merge(item.result)
            problems = problems or item.problems > 0
            damaged += item.damaged
    finally:
        results.close()
    note_damage(source, damaged)
    return problems


def pooled_stats_iter(source, result: FileStats, workers: int | None = None) -> Iterator[IndexProgress]:
    """:func:`codec.stats.file_stats.stats_iter` over every record of ``source``, into ``result``: on the pool when
    :func:`plan_stats` says so and the workers decode records as ``source`` does (no Decode As payload
    or label map of the app's own), else here. Closing the generator stops the workers."""
    from codec.index.scan import IndexProgress
    from codec.stats.file_stats import stats_iter

    tasks = plan_stats(source, workers) if pool_decodes_alike(source) else []
    if not tasks:
        yield from stats_iter(source, None, result)
        return
    result.payload, result.labels = source.payload, source.labels
    setup = {"named": [], "check_crc": source.check_crc}
    yield from pool_merge_iter(source, result, StatsRunner, tasks, setup, workers)
    n = len(source)
    yield IndexProgress(n, n, n, len(source.problems), True)


def pool_decodes_alike(source) -> bool:
    """Can workers set up from file names alone read ``source``'s records as it does? (An indexed
    plain file or shard set, read as Examples: no payload or class names chosen for it here.)"""
    from codec.sources.shard_set import ShardSet
    from codec.sources.tfrecord_file import TFRecordFile

    return isinstance(source, (TFRecordFile, ShardSet)) and source.payload is None and source.labels is None
