"""Half of a job in a forked child process, so the command line uses both cores.

A child started by :func:`beside` runs one call and sends its (pickled) result
back through a pipe. It never returns into the caller's code: it leaves by
``os._exit``, so neither the parent's ``finally`` blocks, its atexit handlers
(temporary files), nor its unflushed output run twice.

Why not ``multiprocessing`` or ``concurrent.futures``: importing them costs
~60 ms, which is half of what a whole ``verify`` of a 200 MB file may take to
beat TensorFlow. Only the command line uses this (one thread, nothing shared
but read-only file descriptors); the app never forks.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Callable

_FAILED = 3  # the child's exit status when its call raised


class Child:
    """A forked child running one call; :meth:`result` waits for it."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self._fd = fd

    def result(self) -> tuple[bool, Any]:
        """(True, what the call returned), or (False, None) when it raised or died."""
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            _, status = os.waitpid(self.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return False, None
        return True, pickle.loads(b"".join(chunks))

    def cancel(self) -> None:
        """Stop the child (its result is not wanted)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        finally:
            os.close(self._fd)
            os.waitpid(self.pid, 0)


def can_fork() -> bool:
    return sys.platform != "win32" and hasattr(os, "fork")


def beside(fn: Callable[..., Any], *args) -> Child | None:
    """Start ``fn(*args)`` in a forked child; None where processes cannot be forked."""
    if not can_fork():
        return None
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return Child(pid, r)
    status = _FAILED
    try:  # the child: run the call, send its result, leave without unwinding the caller
        os.close(r)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)  # the parent's handlers clean up the parent's files
        data = memoryview(pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL))
        while data:
            data = data[os.write(w, data):]
        status = 0
    finally:
        os._exit(status)
