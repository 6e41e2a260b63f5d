"""What the record table says of damage: each damaged row's problem, and the bytes skipped before a row (no Qt).

The passes grow the source's problems on a worker; :class:`ProblemNotes`
maps them to rows again when they changed, once per change, so painting a
cell looks a row up in a dict.
"""
from __future__ import annotations

import os
from typing import Callable

import numpy as np

from app.models.record_format import container_of
from codec.format.framing import Problem, RecordStatus
from codec.format.problem_text import damage_key, damage_line, explain, kind_words, status_key
from codec.sources.protocol import RecordSource


def renumbered_note(i: int) -> str:
    """What a row after skipped bytes means for record numbers."""
    return (f"records from {i:,} on are numbered as found: records lost in the damaged bytes are not "
            f"counted, so this may not be record {i:,} as the file's writer numbered it")


class ProblemNotes:
    """The problems of ``records()`` by row: a damaged record's own, and the damage just before a row."""

    def __init__(self, records: Callable[[], RecordSource]) -> None:
        self._records = records
        self._details: dict[int, str] = {}
        self._gaps: dict[int, str] = {}  # record -> what was skipped just before it
        self._lines: dict[int, str] = {}  # record -> its damage (or the damage just before it) in one line
        self._first: int | None = None  # the record where TensorFlow stops: the first damage's
        self._seen: tuple = ()

    def forget(self) -> None:
        """The rows changed (edits, another source): map the problems again when next asked."""
        self._seen = ()

    def detail(self, i: int) -> str | None:
        """Row ``i``'s own problem (``data CRC: stored ..., computed ...``, then what it means), if any."""
        self._map()
        return self._details.get(i)

    def status_line(self, i: int, status: RecordStatus) -> str | None:
        """One line for the status bar when row ``i`` is shown: its damage, or the damage just before it."""
        self._map()
        line = self._lines.get(i)
        if line is None and (key := status_key(status)) is not None:  # no problem of its own (being written)
            line = f"record {i:,}: {damage_line(key, i, self._first, container_of(self._records()))}"
        return line

    def gap_before(self, i: int) -> str | None:
        """The damage skipped just before record ``i`` (garbage, a lost header...), if any."""
        self._map()
        return self._gaps.get(i)

    def flagged(self, rows: int) -> np.ndarray:
        """Rows to look at among the first ``rows``: damaged records and records right after skipped bytes (sorted)."""
        statuses = self._records().index.statuses()[:rows]
        damaged = np.flatnonzero((statuses >= int(RecordStatus.LENGTH_CRC)) & (statuses <= int(RecordStatus.TRUNCATED)))
        self._map()
        gaps = np.fromiter((i for i in self._gaps if i < rows), dtype=np.int64)
        return np.union1d(damaged, gaps).astype(np.int64)

    def _key(self) -> tuple:
        """What changes when the problems may map to rows differently."""
        records = self._records()
        problems = records.problems
        return id(problems), len(problems), len(records)

    def _map(self) -> None:
        """Map the problems to rows: their own record, or the record after the gap."""
        key = self._key()
        if key == self._seen:
            return
        records = self._records()
        problems = records.problems
        stops: list[tuple[int, Problem]] = []  # (the record TensorFlow stops at, the problem)
        self._gaps = {}
        for p in problems:
            if p.index is not None:
                stops.append((p.index, p))
                continue
            nxt, text = self._after_gap(records, p)
            if nxt is not None:
                self._gaps[nxt] = text
                stops.append((nxt, p))
        self._first = min((i for i, _ in stops), default=None)
        self._details, self._lines = {}, {}
        container = container_of(records)
        for i, p in stops:
            damage = damage_key(p)
            meaning, line = explain(damage, i, self._first, container), damage_line(damage, i, self._first, container)
            if p.index is not None:
                self._details[i] = f"{kind_words(p.kind, container)}: {p.detail}\n{meaning}"
                self._lines[i] = f"record {i:,}: {line}"
            else:
                self._gaps[i] += f"\n{meaning}"
                self._lines.setdefault(i, f"before record {i:,}: {line}")
        self._seen = key

    def _after_gap(self, records: RecordSource, p) -> tuple[int | None, str]:
        nxt = records.find_record(p.offset) + 1
        return (nxt if nxt < len(records) else None), f"{kind_words(p.kind, container_of(records))} at byte {p.offset:,}: {p.detail}"


class ShardProblemNotes(ProblemNotes):
    """A shard set's: a gap's next record found inside the gap's own shard, mapped again when told.

    Collecting a set's problems walks every shard, too slow for each painted
    cell of 10,000 shards: :meth:`problems_changed` says when to.
    """

    def __init__(self, records: Callable[[], RecordSource]) -> None:
        super().__init__(records)
        self._stamp = 0

    def problems_changed(self) -> None:
        self._stamp += 1

    def flagged(self, rows: int) -> np.ndarray:
        """Damaged records and records after skipped bytes, from the shards' problems (no shard reopened)."""
        self._map()
        s = self._records()
        damaged = {p.index for p in s.problems if p.index is not None and p.index < rows
                   and s.index.status(p.index) >= RecordStatus.LENGTH_CRC}
        gaps = {i for i in self._gaps if i < rows}
        return np.array(sorted(damaged | gaps), dtype=np.int64)

    def _key(self) -> tuple:
        return self._stamp, len(self._records())

    def _after_gap(self, records: RecordSource, p) -> tuple[int | None, str]:
        nxt = records.record_before(p) + 1
        return ((nxt if 0 < nxt < len(records) else None),
                f"{kind_words(p.kind, container_of(records))} at byte {p.offset:,} of {os.path.basename(p.path)}: {p.detail}")
