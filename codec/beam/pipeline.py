"""Run one function over a list of tasks on a Beam runner and bring the results back in task order.

Each task becomes one work item (a reshuffle keeps a runner from fusing them
into one worker's loop). The function must be importable by the workers: a
module-level function of the codec, or a picklable object of one of its
classes. Results are pickled, written as lines under a results folder (see
:func:`codec.beam.options.results_folder`) and read back here, so the same
pipeline works on the direct runner and on a cluster. :func:`run_pipeline` is
that mechanism for any pipeline (the dataset doctor's, :mod:`codec.beam.check`):
whatever PCollection it builds comes back to this process the same way.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager

from codec.errors import TFRecordError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

__all__ = ["import_beam", "run", "run_pipeline", "run_tasks"]


def import_beam():
    """``apache_beam``, imported without the warnings its optional clients log at import (and
    with a Ctrl-C during the import kept: some of its optional imports swallow any exception)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with _interrupts():
            import apache_beam
    finally:
        root.setLevel(level)
    return apache_beam


def run(tasks: list, fn: Callable[[Any], Any], runner: str, beam_options: list[str] | None) -> list:
    """``[fn(t) for t in tasks]``: in this process for the ``local`` runner, else on Beam."""
    if runner == "local":
        return [fn(t) for t in tasks]
    return run_tasks(tasks, fn, runner, beam_options)


class _Numbered:
    """``fn`` over ``(k, task)``: ``(k, fn(task))``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: tuple[int, Any]) -> tuple[int, Any]:
        k, task = item
        return k, self.fn(task)


def _pickled_line(item: Any) -> str:
    import base64
    import pickle

    return base64.b64encode(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)).decode()


def run_tasks(tasks: list, fn: Callable[[Any], Any], runner: str, beam_options: list[str] | None) -> list:
    """``[fn(t) for t in tasks]``, computed by a Beam pipeline on ``runner``."""
    beam = import_beam()

    def build(p):
        return (p
                | "Tasks" >> beam.Create(list(enumerate(tasks)))
                | "Spread" >> beam.Reshuffle()
                | "Work" >> beam.Map(_Numbered(fn)))

    found = dict(run_pipeline(build, runner, beam_options))
    if sorted(found) != list(range(len(tasks))):
        raise TFRecordError(f"the {runner} runner returned {len(found)} result(s) for {len(tasks)} task(s)")
    return [found[k] for k in range(len(tasks))]


def run_pipeline(build: Callable[[Any], Any], runner: str, beam_options: list[str] | None) -> list:
    """The elements of the PCollection ``build(pipeline)`` returns, computed on ``runner`` and brought back
    here (in no particular order): each is pickled as a line of text under the results folder and read back.

    A runner's own failure is a one-line TFRecordError; an exception raised by the codec's code in a worker
    propagates with its traceback.
    """
    import base64
    import pickle

    beam = import_beam()
    from apache_beam.io.filesystems import FileSystems

    from codec.beam.options import pipeline_options, results_folder

    options = pipeline_options(runner, beam_options)
    folder, local = results_folder(runner, options)
    prefix = FileSystems.join(folder, "results")
    found = []
    try:
        try:
            with _interrupts(), beam.Pipeline(options=options) as p:
                _ = (build(p)
                     | "Pickle" >> beam.Map(_pickled_line)
                     | "Results" >> beam.io.WriteToText(prefix, file_name_suffix=".txt"))
        except Exception as exc:
            if _raised_by_codec(exc):
                raise  # a bug in the work itself: its traceback is what helps
            raise TFRecordError(f"the {runner} runner failed: {_last_line(exc)}") from None
        for match in FileSystems.match([prefix + "*"])[0].metadata_list:
            with FileSystems.open(match.path) as f:
                for line in f.read().splitlines():
                    if line:
                        found.append(pickle.loads(base64.b64decode(line)))
    finally:
        _cleanup(folder, local)
    return found


@contextmanager
def _interrupts() -> Iterator[None]:
    """A Ctrl-C while the block runs ends it as KeyboardInterrupt, whatever Beam makes of it: the
    runner wraps it in an error of its own (and logs that, left out here), and some optional
    imports swallow any exception. SIGINT is noted, then raised as Python does."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def handler(signum, frame):
        seen.append(signum)
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    disabled = logging.root.manager.disable
    try:
        yield
    except Exception:
        if seen:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        logging.disable(disabled)
    if seen:
        raise KeyboardInterrupt


def _raised_by_codec(exc: BaseException) -> bool:
    """True when ``exc`` was raised in the codec's own code (the work), not by the runner."""
    import os
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    codec_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(codec_dir)


def _last_line(exc: BaseException) -> str:
    """The last line of a runner's message (the cause, after any traceback it quotes), shortened."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    line = lines[-1] if lines else type(exc).__name__
    return line if len(line) <= 500 else line[:497] + "..."


def _cleanup(folder: str, local: bool) -> None:
    if local:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        return
    from apache_beam.io.filesystems import FileSystems

    try:
        FileSystems.delete([folder])
    except Exception:  # noqa: BLE001 - leftover results in temp_location are harmless; the report is what counts
        pass
