"""The dataset doctor's per-record pass on :mod:`codec.parallel.pool`'s process pool: one task per shard, or
record ranges of a big file, each run by a :class:`~codec.doctor.per_record.Inspector`."""
from __future__ import annotations

from codec.parallel.pool import available_cores
from codec.parallel.pool import run_tasks as _run_tasks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generator

    from codec.doctor.per_record import Task, TaskResult

__all__ = ["available_cores", "run_tasks"]


def run_tasks(tasks: list[Task], setup: dict, workers: int) -> Generator[int | TaskResult, None, None]:
    """Run ``tasks`` (``setup``: the Inspector's arguments); yields records done (ints) and each task's result."""
    from codec.doctor.per_record import Inspector

    return _run_tasks(tasks, Inspector, setup, workers)
