""":func:`codec.parallel.pool.run_tasks` on a Beam runner: the passes that run tasks on a local process pool
(the dataset doctor's ``check``, ``stats``) run the same tasks, one work item each, on Beam.

A task is whatever the pass plans (a whole shard, or a record range of a big
plain file); each Beam worker builds the pass's runner once, from
``factory(**setup)``, and calls ``runner.run(task, progress=...)`` as a pool
worker does. The pass then combines the results as it does locally, so its
report is the local one.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Generator

__all__ = ["run_tasks", "task_runner"]


class _Run:
    """``factory(**setup).run(task)`` on a Beam worker, the runner built once per worker: (records done, result)."""

    def __init__(self, factory: Callable[..., Any], setup: dict) -> None:
        self.factory = factory
        self.setup = setup
        self._runner: Any = None  # what factory builds: any object with run(task, progress=...)

    def __getstate__(self) -> dict:
        return {"factory": self.factory, "setup": self.setup}

    def __setstate__(self, state: dict) -> None:
        # Unpickled: built as the constructor builds it (_Run has no subclasses).
        self.__init__(state["factory"], state["setup"])  # type: ignore[misc]

    def __call__(self, task) -> tuple[int, Any]:
        if self._runner is None:
            self._runner = self.factory(**self.setup)
        done: list[int] = []
        result = self._runner.run(task, progress=done.append)
        return sum(done), result


def run_tasks(tasks: list, factory: Callable[..., Any], setup: dict, runner: str,
              beam_options: list[str] | None) -> Generator[Any, None, None]:
    """Like :func:`codec.parallel.pool.run_tasks`: yields records done (ints) and each task's result, here in
    task order once the pipeline has finished."""
    from codec.beam.pipeline import run_tasks as on_beam

    for done, result in on_beam(tasks, _Run(factory, setup), runner, beam_options):
        yield done
        yield result


def task_runner(runner: str, beam_options: list[str] | None) -> Callable[..., Generator[Any, None, None]]:
    """A function with :func:`codec.parallel.pool.run_tasks`'s signature that runs the tasks on ``runner``
    (its ``workers`` argument is left to the runner)."""
    def run(tasks: list, factory: Callable[..., Any], setup: dict, workers: int) -> Generator[Any, None, None]:
        return run_tasks(tasks, factory, setup, runner, beam_options)

    return run
