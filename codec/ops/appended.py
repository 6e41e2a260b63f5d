"""The records of a followed file as they are completed: what ``cat --follow`` prints.

Here, not beside :mod:`codec.sources.following`, because it filters with :mod:`codec.query.filter`,
a layer above the record sources.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Iterator

from codec.format.framing import Problem, ProblemKind
from codec.query.filter import matching_indices

if TYPE_CHECKING:
    from codec.query.filter import Filter
    from codec.sources.protocol import RecordData
    from codec.sources.tfrecord_file import TFRecordFile

FOLLOW_POLL = 0.2  # seconds between two looks at a followed file's size


def appended_records(f: TFRecordFile, start: int = 0, stop: int | None = None, flt: Filter | None = None, *,
                     poll: float = FOLLOW_POLL, on_problem: Callable[[Problem], None] | None = None
                     ) -> Iterator[tuple[int, RecordData]]:
    """(index, :class:`codec.sources.protocol.RecordData`) of the followed file ``f``'s records from ``start``
    (to ``stop``, else for ever), each once and in order as it is complete: those there now, then
    those appended, looking every ``poll`` seconds. ``flt``: only records this filter matches.
    ``on_problem`` is shown each problem once, when it is found."""
    told: set[tuple[int, ProblemKind]] = set()
    i = start
    while stop is None or i < stop:
        for _ in f.grow_iter():
            pass
        n = f.complete_records if stop is None else min(stop, f.complete_records)
        if n > i:
            chosen = range(i, n) if flt is None else matching_indices(f, flt, range(i, n))
            for k in chosen:
                yield k, f.read(k)
            i = n
        if on_problem is not None:
            for p in f.problems:
                if (p.offset, p.kind) not in told:
                    told.add((p.offset, p.kind))
                    on_problem(p)
        if stop is None or i < stop:
            time.sleep(poll)
