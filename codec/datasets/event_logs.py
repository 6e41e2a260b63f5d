"""TensorBoard log folders: which files are event files, and the runs a folder holds.

A run is a folder holding event files, named by its path relative to the folder
opened (``.`` for that folder itself, ``/`` between parts on every OS). Runs come
in the order they started (the time in their first event file's name, then their
names); a run's files in the order they were started (the time in their names,
then the names), as TensorBoard reads them. In a folder, event files are known by name (``tfevents``
in it, TensorBoard's rule): a log folder may hold checkpoints of gigabytes, which
are not read to be told apart. A file named on its own is also known by its first
record (an Event whose ``file_version`` starts ``brain.Event:``).
"""
from __future__ import annotations

import os

from codec.decode.events import is_event_file_name, is_file_version_event
from codec.errors import UsageError
from codec.format.layout import HEADER_SIZE

__all__ = ["Run", "is_event_file", "is_log_folder", "log_runs", "runs_of"]

_STARTED = "tfevents."  # events.out.tfevents.<seconds>.<host>.<pid>.<n>[.v2]
_SNIFF_BYTES = 64 << 10  # a first record larger than this is not an event file's file_version record


class Run:
    """One run: its name (relative to the folder opened) and its event files, in the order they are read."""

    __slots__ = ("name", "files")  # (no dataclass: every command imports this module, `cat` of one record too)

    def __init__(self, name: str, files: list[str]) -> None:
        self.name = name
        self.files = files

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.files!r})"


def is_event_file(path: str) -> bool:
    """Whether ``path`` is an event file: by its name, or (a local file) by its first record."""
    if is_event_file_name(path):
        return True
    if "://" in path or not os.path.isfile(path):
        return False
    first = _first_record(path)
    return first is not None and b"brain.Event:" in first and is_file_version_event(first)


def _first_record(path: str) -> bytes | None:
    """The data of a plain file's first record when it is small (no CRC checked: a sniff), else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE + _SNIFF_BYTES)
    except OSError:
        return None
    if len(head) < HEADER_SIZE:
        return None
    length = int.from_bytes(head[:8], "little")
    if length > _SNIFF_BYTES or HEADER_SIZE + length > len(head):
        return None
    return head[HEADER_SIZE:HEADER_SIZE + length]


def is_log_folder(path: str) -> bool:
    """A local folder with an event file in it or in a folder below it."""
    return "://" not in path and os.path.isdir(path) and any(_walk(path))


def log_runs(folder: str) -> list[Run]:
    """The runs under ``folder``, in the order they started (see the module's docstring)."""
    runs = []
    for here, names in _walk(folder):
        rel = os.path.relpath(here, folder)
        name = "." if rel == os.curdir else rel.replace(os.sep, "/")
        runs.append(Run(name, [os.path.join(here, n) for n in sorted(names, key=_file_order)]))
    return sorted(runs, key=lambda run: (_started(run.files[0]), run.name))


def runs_of(paths: list[str]) -> list[Run]:
    """The runs the named paths hold: a log folder's runs; an event file named on its own (or by a glob)
    is a run of its own, named by its folder as given. Raises :class:`UsageError` (one line) for a path
    that is none of these."""
    runs: list[Run] = []
    for path in paths:
        if "://" in path:
            raise UsageError(f"{path}: TensorBoard logs are read from local files and folders, not URLs")
        if os.path.isdir(path):
            found = log_runs(path)
            if not found:
                raise UsageError(f"no TensorBoard event files in {path}")
            runs.extend(found)
            continue
        if os.path.exists(path) or not any(c in path for c in "*?["):
            named = [path]
        else:
            import glob

            named = sorted(glob.glob(path))
        if not named:
            raise UsageError(f"no files match {path}")
        for file in named:
            if not os.path.exists(file):
                raise UsageError(f"{file}: no such file or folder")
            if not is_event_file(file):
                raise UsageError(f"{file}: not a TensorBoard event file (no 'tfevents' in its name, and its "
                                 "first record is not an Event with a file_version)")
            runs.append(Run(os.path.dirname(file) or ".", [file]))
    return runs


def _walk(folder: str):
    """(folder, event file names) of every folder at or below ``folder`` holding event files; hidden
    folders and files are left out."""
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        names = [n for n in files if not n.startswith(".") and is_event_file_name(n)]
        if names:
            yield here, names


def _started(path: str) -> float:
    """The time in an event file's name (when its writer started); files without one sort last."""
    name = os.path.basename(path)
    at = name.find(_STARTED)
    digits = name[at + len(_STARTED):].split(".", 1)[0] if at >= 0 else ""
    return float(digits) if digits.isdigit() else float("inf")


def _file_order(name: str) -> tuple[float, str]:
    return _started(name), name


def unfinished_tail(f):
    """The problem that is a file's last record cut short at its end (a writer still at work), or None."""
    from codec.format.framing import ProblemKind

    if not f.problems:
        return None
    last = f.problems[-1]
    if last.kind is not ProblemKind.TRUNCATED or last.offset + last.size < f.data_end:
        return None
    return last


def take_as_being_written(source) -> None:
    """An indexed source of event files (one file or a set), each file whose last record is cut short at
    its end taken as still being written (``start_follow``): that record is "being written", not damage."""
    if not source.is_set:
        if unfinished_tail(source) is not None and "://" not in source.path:
            source.start_follow()
        return
    for k, path in enumerate(source.files):
        if "://" in path:
            continue
        with source.using(k) as f:
            if f is not None and unfinished_tail(f) is not None:
                f.start_follow()
