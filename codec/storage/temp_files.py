"""Temporary files: their names, the registry of live ones, stale ones, and signals.

Every output is written to a temporary file first (see :mod:`codec.storage.writer`).
This module knows which of them this process is writing, removes them when the
process ends or is stopped by SIGTERM/SIGHUP, and sweeps those a killed run
left behind. It imports nothing heavy: every command enters
:func:`cleanup_on_signals`, however little else it imports.
"""
from __future__ import annotations

import atexit
import os
import re
import signal
import stat
import threading
import time
import zlib
from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Iterable, Iterator

# A temporary file left by a run that is gone is removed after this many seconds
# (at once when its process is known to be dead).
STALE_AGE = 86400
SWEEP_EVERY = 3600  # seconds between two sweeps of one folder by one process
_TEMP_NAME_BYTES = 200  # of the target's name inside a temp name (NAME_MAX is 255)
_TEMP_RE = re.compile(r"\A\..+\.tfrlens-([1-9][0-9]*)-([0-9a-f]{6})-([0-9a-f]{8})\.tmp\Z", re.DOTALL)


# -- temporary files: names, the live registry, stale ones ----------------------
_live_lock = threading.Lock()
_live: dict[str, int] = {}  # temporary files being written -> the pid that created them
_swept: dict[str, float] = {}  # folder -> time.monotonic() of this process's last sweep
_host: list[str] = []


def _host_tag() -> str:
    if not _host:
        # (not hashlib or socket: every command imports this module, and they cost ~10 ms)
        name = os.uname().nodename.encode("utf-8", "surrogateescape")
        _host.append(f"{zlib.crc32(name):08x}"[:6])
    return _host[0]


def temp_name(target: str) -> str:
    """A fresh temporary file name for writing ``target`` (beside it)."""
    name = os.fsencode(os.path.basename(target))[:_TEMP_NAME_BYTES]
    return f".{os.fsdecode(name)}.tfrlens-{os.getpid()}-{_host_tag()}-{os.urandom(4).hex()}.tmp"


def is_temp_name(name: str) -> bool:
    """True for the names :func:`temp_name` makes (and nothing else)."""
    return _TEMP_RE.match(name) is not None


def _register(path: str) -> None:
    with _live_lock:
        _live[path] = os.getpid()


def _unregister(path: str) -> None:
    with _live_lock:
        _live.pop(path, None)


def remove_live_temps() -> int:
    """Remove every temporary file this process is still writing; return how many.

    For exits that do not unwind the writers (the interpreter ending, a
    signal in a GUI): a writer whose file is gone fails cleanly at its
    rename, and its target stays as it was.
    """
    with _live_lock:
        mine = [p for p, pid in _live.items() if pid == os.getpid()]
        for p in mine:
            del _live[p]
    removed = 0
    for p in mine:
        try:
            os.unlink(p)
            removed += 1
        except OSError:
            pass
    return removed


atexit.register(remove_live_temps)


def _pid_alive(pid: int) -> bool:
    if os.name != "posix" or pid <= 0:
        return True  # cannot tell: keep the file until it is old
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def sweep_stale_temps(folder: str | os.PathLike[str], max_age: float = STALE_AGE) -> list[str]:
    """Remove temporary files of ours in ``folder`` that no running writer owns; return their paths.

    Ours: a regular file, owned by this user, named exactly as
    :func:`temp_name` names them. Stale: its writer was on this host and is
    no longer running (a killed export), or it was not modified for
    ``max_age`` seconds. One ``scandir`` of the folder. A URL is no folder
    here (its temporary copies are in the system's temporary folder): nothing
    is swept.
    """
    removed: list[str] = []
    if _is_url(folder):
        return removed
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    host, me, now = _host_tag(), os.getpid(), time.time()
    try:
        entries = os.scandir(folder)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            m = _TEMP_RE.match(entry.name)
            if m is None:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            pid = int(m.group(1))
            old = now - st.st_mtime > max_age
            dead = m.group(2) == host and pid != me and not _pid_alive(pid)
            with _live_lock:
                live = entry.path in _live
            if (old or dead) and not live:
                try:
                    os.unlink(entry.path)
                    removed.append(entry.path)
                except OSError:
                    pass
    return removed


def _is_url(folder: str | os.PathLike) -> bool:
    folder = os.fspath(folder)
    if not isinstance(folder, str) or "://" not in folder:
        return False
    from codec.storage.remote import is_url

    return is_url(folder)


def _sweep_once(folder: str) -> None:
    """Sweep ``folder`` unless this process did so lately (an image export writes thousands of files)."""
    now = time.monotonic()
    with _live_lock:
        last = _swept.get(folder)
        if last is not None and now - last < SWEEP_EVERY:
            return
        _swept[folder] = now
    sweep_stale_temps(folder)


# -- signals --------------------------------------------------------------------
class TerminatedBySignal(BaseException):
    """SIGTERM or SIGHUP arrived. Raised in the main thread so ``with`` blocks unwind and drop their temporary files.

    A BaseException, like KeyboardInterrupt: no ``except Exception`` may swallow it.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


@contextmanager
def cleanup_on_signals(signums: Iterable[int] = (signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM))
                       ) -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into :class:`TerminatedBySignal` inside the block; leave no temporary file behind.

    Handlers can only be set from the main thread; elsewhere the block runs
    unchanged. A second signal while the first is being handled is ignored,
    so the cleanup itself is not cut short. Leaving the block by any
    exception also removes whatever temporary files are still registered.
    """
    fired: list[int] = []

    def handler(signum, _frame):
        if fired:
            return
        fired.append(signum)
        raise TerminatedBySignal(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in dict.fromkeys(signums):
            try:
                previous[signum] = signal.signal(signum, handler)
            except (ValueError, OSError):
                pass
    try:
        yield
    except BaseException:
        remove_live_temps()
        raise
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
