"""The per-record pass on a pool of worker processes: one task per shard, or record ranges of a big file.

Processes are started with ``spawn``, never ``fork``: the app calls this from
a thread, and remote filesystems run async clients that a forked child
would inherit half-way. Closing the generator terminates the workers.
"""
from __future__ import annotations

import os
import queue as queue_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterator

    from .per_record import Task, TaskResult

__all__ = ["available_cores", "run_tasks"]

_inspector = None
_progress = None


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _start(setup: dict, progress) -> None:
    global _inspector, _progress
    from .per_record import Inspector

    _inspector = Inspector(**setup)
    _progress = progress


def _run(task: Task) -> TaskResult:
    return _inspector.run(task, progress=_progress.put)


def run_tasks(tasks: list[Task], setup: dict, workers: int) -> Iterator[int | TaskResult]:
    """Run ``tasks``; yields records done (ints, as they are done) and each task's result.

    ``workers`` <= 1: in this process (no start-up cost, progress per task).
    """
    if workers <= 1:
        from .per_record import Inspector

        inspector = Inspector(**setup)
        for task in tasks:
            done: list[int] = []
            result = inspector.run(task, progress=done.append)
            yield sum(done)
            yield result
        return
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    progress = context.Queue()
    pool = context.Pool(min(workers, len(tasks)) or 1, initializer=_start, initargs=(setup, progress))
    try:
        pending = [pool.apply_async(_run, (task,)) for task in tasks]
        while pending:
            try:
                yield progress.get(timeout=0.1)
                while True:
                    yield progress.get_nowait()
            except queue_module.Empty:
                pass
            still = []
            for job in pending:
                if job.ready():
                    yield job.get()
                else:
                    still.append(job)
            pending = still
        while True:
            try:
                yield progress.get_nowait()
            except queue_module.Empty:
                break
    finally:
        pool.terminate()
        pool.join()
        progress.close()
        progress.cancel_join_thread()
