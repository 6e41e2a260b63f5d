"""A very large plain shard cut into byte ranges, each one Beam task of ``verify`` or ``repair``.

What a user notices: with a Beam ``--runner``, an uncompressed file larger than
``RANGE_BYTES`` (1 GiB) is cut into ``ceil(size / RANGE_BYTES)`` ranges of equal
size (at most 1 GiB each), so a 40 GB shard is 40 tasks, not one worker's
afternoon. The report and the repaired copy are exactly what the local command
gives. A range's records are those whose header starts in ``[start, end)``:

- When the file's index is cached (:mod:`codec.index.cache`), the cuts fall on
  the cached record offsets and each task checks its records' CRCs as the local
  ``verify`` does over a cached index. A task carries its records' offsets and
  statuses (9 bytes a record), since the cache lives on this machine only.
- Otherwise each task finds its first record as the reader does after damage
  (the first offset at or after ``start`` whose length CRC and data CRC hold),
  runs the reader's own verifying index pass from there, and reads past ``end``
  to the first record starting at or after it. A range ending exactly where the
  next one starts joins it; where they do not meet (damage across a cut), this
  process walks the gap itself, from the last record the earlier range reached
  to the first record a later range starts at, so the damage is reported once,
  as the local pass reports it. Only files whose records embed whole TFRecord
  frames make that walk long.

A repair writes each range's clean records to a hidden part file beside the
target (``.NAME.part-00003``), and this process joins the parts in order into
the target, then removes them (see :mod:`codec.beam.repair`).

GZIP and ZLIB files stay one task: a deflate stream cannot be entered mid-way
without an index point, so every byte before a range would be inflated again.
A repair into a compressed target is one task too: one deflate stream written
in pieces is not the file the local command writes.
"""
from __future__ import annotations

import dataclasses
import os
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from codec.format.framing import Problem, ProblemKind, RecordStatus
from codec.index.record_index import CHUNK_BITS, RecordIndex
from codec.index.scan import Scanner
from codec.index.scan_sources import PlainSource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from codec.sources.tfrecord_file import TFRecordFile

__all__ = ["RANGE_BYTES", "Plan", "Stitched", "Walk", "first_record", "gap_part", "labels", "part_size", "plan_file",
           "plan_files", "range_task", "stitch", "verify_result", "walk"]

RANGE_BYTES = 1 << 30  # a plain file larger than this is cut into ranges of at most this size


@dataclass
class Plan:
    """How one file is cut: its range tasks, and what a cached index said (None: no cache)."""

    path: str
    info: dict | None
    tasks: list[dict]
    cached_problems: list[Problem] | None = None
    cached_verified: bool = False


@dataclass
class Walk:
    """Records found by the reader's verifying pass from a record start up to (not including) ``stop``."""

    offsets: np.ndarray
    statuses: np.ndarray
    problems: list[Problem]  # offsets before ``stop``; record numbers counted from the walk's first record
    stop: int | None  # the record the walk stopped at (None: it reached the end of the file)


@dataclass
class Stitched:
    """One file's verify outcome put together from its ranges (and any gap walked here)."""

    records: int = 0
    labels: Counter = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    segments: list = field(default_factory=list)  # in file order: a range number, or a Walk done here


def plan_file(path: str, info: dict | None, use_cache: bool) -> Plan | None:
    """The ranges of ``path`` when it is a plain file larger than ``RANGE_BYTES``; else None (one task)."""
    size = _size(path, info)
    if size is None or size <= RANGE_BYTES:
        return None
    from codec.errors import TFRecordError
    from codec.format.framing import Compression
    from codec.index import cache as index_cache
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(path, check_crc=True, use_cache=use_cache, info=info)
    except TFRecordError:
        return None  # the one-file task reports why it cannot be opened
    with f:
        if f.compression is not Compression.NONE:
            return None
        size = f.file_size
        count = -(-size // RANGE_BYTES)
        cuts = [size * k // count for k in range(count + 1)]
        base = {"path": path, "info": info}
        cached = index_cache.load(f.path, size, f.version, f.compression) if f.use_cache else None
    if cached is None:
        return Plan(path, info, [dict(base, start=a, end=b) for a, b in zip(cuts, cuts[1:])])
    index, problems, verified, _ = cached
    offsets, statuses = index.offsets(), index.statuses()
    at = sorted(set(np.searchsorted(offsets, cuts[1:-1]).tolist()) | {0, len(offsets)})
    tasks = [dict(base, base=a, offsets=offsets[a:b], statuses=statuses[a:b], verified=verified)
             for a, b in zip(at, at[1:]) if b > a]
    return Plan(path, info, tasks, problems, verified)


def _size(path: str, info: dict | None) -> int | None:
    if info is not None:
        size = info.get("size")
        return size if isinstance(size, int) else None
    if "://" in path:
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


# -- the workers' side ------------------------------------------------------------
class _FromScanner(Scanner):
    """The reader's verifying pass over a plain file, as the reader sets it up."""

    def __init__(self, f: TFRecordFile, index: RecordIndex, problems: list[Problem]) -> None:
        from codec.index.scan import PROGRESS_BYTES

        hop_span = PROGRESS_BYTES if f.remote is not None else 0  # as the reader walks a remote file
        super().__init__(PlainSource(f.byte_source.read_at, f.file_size, hop_span=hop_span), index, problems, f.file_size,
                         verify=True)

    def first_record(self, at: int) -> int | None:
        """Where the pass finds the first record at or after ``at`` after damage (0 at 0)."""
        return 0 if at == 0 else self._resync(at)


def first_record(f: TFRecordFile, at: int) -> int | None:
    """The first offset >= ``at`` where a record's length and data CRCs hold (``at`` itself at 0)."""
    return _FromScanner(f, RecordIndex(), []).first_record(at)


def walk(f: TFRecordFile, start: int, until: Callable[[np.ndarray], int]) -> Walk:
    """Run the reader's verifying pass over the plain file ``f`` from the record start ``start`` until
    ``until(new offsets)`` names one (its position, -1 for none) or the file ends."""
    index, problems = RecordIndex(), list[Problem]()
    run = _FromScanner(f, index, problems).run(start)
    seen, hit = 0, -1
    try:
        for _ in run:
            if len(index) > seen:
                found = until(_tail(index, seen))
                if found >= 0:
                    hit = seen + found
                    break
                seen = len(index)
    finally:
        run.close()
    cut = hit if hit >= 0 else len(index)
    offsets = index.offsets()
    stop = int(offsets[hit]) if hit >= 0 else None
    problems = [p for p in problems if stop is None or p.offset < stop]
    return Walk(offsets[:cut], index.statuses()[:cut], problems, stop)


def _tail(index: RecordIndex, start: int) -> np.ndarray:
    """The offsets of ``index`` from entry ``start`` on (a copy of those chunks only)."""
    chunks = index.filled_chunks()[0][start >> CHUNK_BITS:]
    skip = start - ((start >> CHUNK_BITS) << CHUNK_BITS)
    return np.concatenate(chunks)[skip:] if chunks else np.zeros(0, dtype=np.uint64)


def labels(statuses: np.ndarray) -> Counter:
    """Records per status label (ok, data_crc, ...), as :func:`codec.ops.verify.status_counts` counts them."""
    counts = np.bincount(statuses, minlength=256)
    out: Counter = Counter()
    for value in np.flatnonzero(counts).tolist():
        out[RecordStatus(value).label] += int(counts[value])
    return out


def _adopt(f: TFRecordFile, offsets: np.ndarray, statuses: np.ndarray, verified: bool) -> None:
    """Make ``offsets`` (with ``statuses``) the index of ``f``, as a cache load does; no problems yet."""
    f.index = RecordIndex.from_arrays(offsets, statuses)
    f.problems = []
    f.indexed = True
    f.verified = verified


def range_task(task: dict) -> dict:
    """One range of one file, verified (and with ``part``, its kept records written there).

    The result: ``first`` and ``stop`` (the first record of the range and the
    first one after it, None for none), ``records`` and ``labels`` of the
    records in between, their ``problems`` (record numbers counted from
    ``first``, or from ``base`` for a cached index), and for a repair ``kept``,
    ``dropped``, ``included`` and ``part_bytes``. A file that cannot be opened
    gives ``error``, a failure the local command would stop on ``fatal``.
    """
    from codec.errors import TFRecordError
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(task["path"], check_crc=True, use_cache=False, info=task.get("info"))
    except TFRecordError as exc:
        return {"error": str(exc)}
    try:
        with f:
            if "offsets" in task:
                return _cached_range(f, task)
            return _scanned_range(f, task)
    except TFRecordError as exc:
        return {"fatal": _numbered_from(str(exc), task.get("base", 0))}


def _scanned_range(f: TFRecordFile, task: dict) -> dict:
    start, end = task["start"], task["end"]
    with f.holding(), f.streaming():  # (a remote file: chunks fetched ahead of the walk)
        first = first_record(f, start)
        if first is None or first >= end:
            done = Walk(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint8), [], first)
        else:
            done = walk(f, first, lambda new: int(np.searchsorted(new, end)) if int(new[-1]) >= end else -1)
    result = {"first": first, "stop": done.stop, "records": len(done.offsets), "labels": labels(done.statuses),
              "problems": done.problems}
    if "part" in task:
        _adopt(f, done.offsets, done.statuses, True)
        result.update(_write_part(f, task["part"], task["include_damaged"]))
    return result


def _cached_range(f: TFRecordFile, task: dict) -> dict:
    """Records of a cached index checked as the local command checks them (see :func:`stitch`)."""
    repairing = "part" in task
    _adopt(f, task["offsets"], task["statuses"], task["verified"] and repairing)
    if not f.verified:
        f.verify()
    base = task["base"]
    result = {"first": int(task["offsets"][0]), "records": len(f), "labels": labels(f.index.statuses()),
              "problems": [_renumber(p, base) for p in f.problems]}
    if repairing:
        result.update(_write_part(f, task["part"], task["include_damaged"]))
    return result


def _write_part(f: TFRecordFile, part: str, include_damaged: bool) -> dict:
    """Write the kept records of ``f``'s (adopted) index to ``part`` as the local ``repair`` writes them."""
    from codec.format.framing import Compression
    from codec.ops.repair import repair

    report = repair(f, part, Compression.NONE, include_damaged)
    return {"kept": report.kept, "dropped": report.dropped, "included": report.included_damaged,
            "part_bytes": part_size(part)}


def _numbered_from(message: str, base: int) -> str:
    """A reader's message naming record ``i`` of a range's index, naming it by its number in the file."""
    import re

    return re.sub(r"\brecord (\d+) at offset", lambda m: f"record {int(m.group(1)) + base} at offset", message,
                  count=1) if base else message


def _renumber(p: Problem, base: int) -> Problem:
    return p if p.index is None or not base else dataclasses.replace(p, index=p.index + base)


# -- the driver's side ------------------------------------------------------------
def stitch(plan: Plan, results: list[dict], repairing: bool = False) -> Stitched:
    """The file's records, status counts and problems, as the local pass finds them, from its ranges'
    ``results`` (see :func:`range_task`); gaps between ranges that do not meet are walked here."""
    if plan.cached_problems is not None:
        return _stitch_cached(plan, results, repairing)
    done = Stitched()
    f = None
    k = 0
    try:
        while k is not None:
            result = results[k]
            _add(done, result["records"], result["labels"], result["problems"], k)
            k = _next_range(results, k)
            stop = result["stop"]
            if k is None or stop is None:
                break
            if results[k]["first"] == stop:
                continue
            joins: dict[int, int] = {}
            for m in range(len(results) - 1, k - 1, -1):
                if results[m]["first"] is not None:
                    joins[results[m]["first"]] = m
            keys = np.array(sorted(joins), dtype=np.uint64)
            if f is None:
                f = _open(plan)
            with f.holding(), f.streaming():
                gap = walk(f, stop, lambda new: _first_in(new, keys))  # noqa: B023
            _add(done, len(gap.offsets), labels(gap.statuses), gap.problems, gap)
            k = None if gap.stop is None else joins[gap.stop]
    finally:
        if f is not None:
            f.close()
    done.problems.sort(key=lambda p: p.offset)
    return done


def _next_range(results: list[dict], k: int) -> int | None:
    return k + 1 if k + 1 < len(results) else None


def _first_in(new: np.ndarray, keys: np.ndarray) -> int:
    hits = np.flatnonzero(np.isin(new, keys))
    return int(hits[0]) if hits.shape[0] else -1


def _add(done: Stitched, records: int, counts: Counter, problems: list[Problem], segment) -> None:
    done.problems.extend(_renumber(p, done.records) for p in problems)
    done.records += records
    done.labels.update(counts)
    done.segments.append(segment)


def _stitch_cached(plan: Plan, results: list[dict], repairing: bool) -> Stitched:
    """A cached index: its problems, less its data CRC ones and plus those found again now (the local
    ``verify``), or as cached when a repair found the cache verified (the local ``repair``)."""
    done = Stitched()
    for k, result in enumerate(results):
        done.records += result["records"]
        done.labels.update(result["labels"])
        done.segments.append(k)
    if repairing and plan.cached_verified:
        done.problems = list(plan.cached_problems)
        return done
    kept = [p for p in plan.cached_problems if p.kind is not ProblemKind.DATA_CRC]
    known = {(p.offset, p.kind) for p in kept}
    fresh = [p for result in results for p in result["problems"] if (p.offset, p.kind) not in known]
    done.problems = sorted(kept + fresh, key=lambda p: p.offset)
    return done


def _open(plan: Plan) -> TFRecordFile:
    from codec.sources.tfrecord_file import TFRecordFile

    return TFRecordFile(plan.path, check_crc=True, use_cache=False, info=plan.info)


def gap_part(plan: Plan, gap: Walk, part: str, include_damaged: bool) -> dict:
    """Write the kept records of a gap walked here to ``part``, as :func:`range_task` writes a range's."""
    f = _open(plan)
    with f:
        _adopt(f, gap.offsets, gap.statuses, True)
        return _write_part(f, part, include_damaged)


def plan_files(found: list[tuple[str, dict | None]], use_cache: bool, runner: str) -> list[Plan | None]:
    """Each listed file's plan (None: one task); on the ``local`` runner every file is one task."""
    if runner == "local":
        return [None] * len(found)
    return [plan_file(path, info, use_cache) for path, info in found]


def verify_result(plan: Plan, results: list[dict]) -> dict:
    """What :func:`codec.beam.verify.verify_task` gives for the whole file, from its ranges' results."""
    from codec.errors import TFRecordError

    for result in results:
        if "fatal" in result or "error" in result:
            return result
    try:
        done = stitch(plan, results)
    except TFRecordError as exc:
        return {"fatal": str(exc)}
    return {"path": plan.path, "compression": "none", "records": done.records, "ok": done.labels["ok"],
            "problems": done.problems}


def part_size(part: str) -> int | None:
    """The size of a part file (or object), None when it is not there."""
    from codec.storage.writer import is_url_output

    try:
        if is_url_output(part):
            from codec.storage.remote import remote_filesystem

            fs, path = remote_filesystem(part)
            fs.invalidate_cache(path)
            return int(fs.size(path))
        return os.path.getsize(part)
    except Exception:  # noqa: BLE001 - not there, or not readable: the same for the caller
        return None
