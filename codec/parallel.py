"""Tasks on a pool of worker processes (one per core), for the passes that go over every record.

Each worker builds one *runner* from ``factory(**setup)`` (an importable
class or function, so it pickles by name) and calls ``runner.run(task,
progress=...)`` for each task it is given; ``progress(n)`` reports ``n``
more records done. Processes are started with ``spawn``, never ``fork``:
the app calls this from a thread, and remote filesystems run async clients
that a forked child would inherit half-way. Closing the generator
terminates the workers.
"""
from __future__ import annotations

import os
import queue as queue_module

from .errors import TFRecordError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

__all__ = ["WorkerLostError", "available_cores", "run_tasks"]

_runner = None
_progress = None


class WorkerLostError(TFRecordError):
    """A worker process of the pool ended without finishing its task."""


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _start(factory, setup: dict, progress) -> None:
    global _runner, _progress
    _runner = factory(**setup)
    _progress = progress


def _run(task):
    return _runner.run(task, progress=_progress.put)


def run_tasks(tasks: list, factory: Callable[..., Any], setup: dict, workers: int) -> Iterator[Any]:
    """Run ``tasks``; yields records done (ints, as they are done) and each task's result (in the order they finish).

    ``workers`` <= 1: in this process (no start-up cost, progress per task).
    """
    if workers <= 1:
        runner = factory(**setup)
        for task in tasks:
            done: list[int] = []
            result = runner.run(task, progress=done.append)
            yield sum(done)
            yield result
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("spawn")
    progress = context.Queue()
    # concurrent.futures, not multiprocessing.Pool: a worker that dies (killed, out of memory, a failing
    # start) breaks the pool with an error instead of being replaced forever while its task waits.
    pool = ProcessPoolExecutor(min(workers, len(tasks)) or 1, mp_context=context, initializer=_start,
                               initargs=(factory, setup, progress))
    try:
        pending = {pool.submit(_run, task) for task in tasks}
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            yield from _drain(progress)
            for job in done:
                try:
                    yield job.result()
                except BrokenProcessPool:
                    raise WorkerLostError("a worker process ended unexpectedly (out of memory, or killed?)") \
                        from None
        yield from _drain(progress)
    finally:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:  # a cancelled run stops at once, not after the tasks in hand
            proc.terminate()
        for proc in procs:
            proc.join(5)
        progress.close()
        progress.cancel_join_thread()


def _drain(progress) -> Iterator[int]:
    while True:
        try:
            yield progress.get_nowait()
        except queue_module.Empty:
            return
