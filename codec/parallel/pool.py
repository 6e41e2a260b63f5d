"""Tasks on a pool of worker processes (one per core), for the passes that go over every record.

Each worker builds one *runner* from ``factory(**setup)`` (an importable
class or function, so it pickles by name) and calls ``runner.run(task,
progress=...)`` for each task it is given; ``progress(n)`` reports ``n``
more records done. Processes are started with ``spawn``, never ``fork``:
the app calls this from a thread, and remote filesystems run async clients
that a forked child would inherit half-way. Closing the generator
terminates the workers. Workers ignore SIGINT: a Ctrl-C to the process group is
the parent's to handle (it closes the generator).
"""
from __future__ import annotations

import os
import queue as queue_module

from codec.errors import TFRecordError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Generator, Iterator

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
    import signal

    # Ctrl-C reaches the whole process group: the parent handles it and terminates the workers,
    # which would otherwise each print a KeyboardInterrupt traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (the command line's workers ignore it from their start: codec.cli.main)
    _runner = factory(**setup)
    _progress = progress


def _hold_sigint() -> list | None:
    """Note SIGINT instead of raising it (main thread only): a KeyboardInterrupt inside
    ``Pool()`` would leave workers started half-way that nothing terminates.

    SIGINT is also blocked in this thread while workers start: a blocked signal stays blocked
    through ``exec``, so a worker still starting Python (before :func:`_start` ignores SIGINT)
    cannot be interrupted half-way, which would print "Fatal Python error" beside the parent's
    one line. multiprocessing's own resource tracker is started the same way.
    """
    import signal
    import threading

    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    if threading.current_thread() is not threading.main_thread():
        return None
    seen: list = []
    seen.append(signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum)))
    return seen


def _release_sigint(held: list | None) -> None:
    """Undo :func:`_hold_sigint`; a Ctrl-C noted or blocked meanwhile is raised now."""
    import signal

    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending Ctrl-C reaches the handler now
    if held is not None:
        signal.signal(signal.SIGINT, held[0])
        if len(held) > 1:
            raise KeyboardInterrupt


def _run(task):
    return _runner.run(task, progress=_progress.put)


def run_tasks(tasks: list, factory: Callable[..., Any], setup: dict, workers: int) -> Generator[Any, None, None]:
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

    context = multiprocessing.get_context("spawn")
    progress = context.Queue()
    # A worker that dies (a signal, out of memory, a failing start) is an error: multiprocessing.Pool
    # would start another in its place and leave the task it held waiting forever.
    held = _hold_sigint()  # a Ctrl-C while the workers are started: raised once the pool can be terminated
    try:
        pool = context.Pool(min(workers, len(tasks)) or 1, initializer=_start, initargs=(factory, setup, progress))
    except BaseException:
        _release_sigint(held)
        raise
    # Every worker started (pool._pool: multiprocessing's worker list, not in its typed API), kept to read
    # its exit code after the pool drops it.
    seen = list(pool._pool)  # type: ignore[attr-defined]
    try:
        _release_sigint(held)
        pending = [pool.apply_async(_run, (task,)) for task in tasks]
        while pending:
            try:
                yield progress.get(timeout=0.1)
            except queue_module.Empty:
                pass
            yield from _drain(progress)
            still = []
            for job in pending:
                if job.ready():
                    yield job.get()
                else:
                    still.append(job)
            pending = still
            seen += [proc for proc in pool._pool if proc not in seen]  # type: ignore[attr-defined]
            if pending and any(proc.exitcode not in (None, 0) for proc in seen):
                raise WorkerLostError("a worker process ended unexpectedly (out of memory, or killed?)")
        yield from _drain(progress)
    finally:
        pool.terminate()
        pool.join()
        progress.close()
        progress.cancel_join_thread()


def _drain(progress) -> Iterator[int]:
    while True:
        try:
            yield progress.get_nowait()
        except queue_module.Empty:
            return
