"""Which file a path held when it was opened, and how it changed since.

A :class:`FileIdentity` is taken from the ``stat`` of an opened file: device
and inode say *which* file, size, mtime and ctime say *which version* of it.
ctime is what exposes a copy that keeps size and mtime (``cp -p``, rsync,
tar): no program can set it, and any write or replacement moves it.
"""
from __future__ import annotations

import enum
import os

from codec.errors import FileAccessError, FileChangedError


class Change(enum.Enum):
    """How the file at a path differs from the one opened there."""

    SAME = "same"
    GREW = "grew"  # the same file, longer: appended to (or rewritten longer in place)
    CHANGED = "changed"  # the same file, rewritten, cut short or touched
    REPLACED = "replaced"  # another file under the same name (a rename over it, a copy after a delete)
    DELETED = "deleted"


class FileIdentity:
    """dev, inode, size, mtime and ctime of one file as it was seen (a plain class, not a dataclass:
    the command line's fast paths use it, and importing dataclasses costs their start-up)."""

    __slots__ = ("dev", "inode", "size", "mtime_ns", "ctime_ns")

    def __init__(self, dev: int, inode: int, size: int, mtime_ns: int, ctime_ns: int) -> None:
        self.dev, self.inode, self.size, self.mtime_ns, self.ctime_ns = dev, inode, size, mtime_ns, ctime_ns

    def _key(self) -> tuple[int, int, int, int, int]:
        return self.dev, self.inode, self.size, self.mtime_ns, self.ctime_ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileIdentity) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "FileIdentity(dev={}, inode={}, size={}, mtime_ns={}, ctime_ns={})".format(*self._key())

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    @property
    def stamp(self) -> str:
        """The version as one string, for the index cache (the device is left out: it may change across mounts)."""
        return f"mtime={self.mtime_ns}|ctime={self.ctime_ns}|inode={self.inode}"

    def change_to(self, now: FileIdentity | None) -> Change:
        """How ``now`` (the path's identity today; None: no file there) differs from this one."""
        if now is None:
            return Change.DELETED
        if (now.dev, now.inode) != (self.dev, self.inode):
            return Change.REPLACED
        if now == self:
            return Change.SAME
        return Change.GREW if now.size > self.size else Change.CHANGED


def identity_at(path: str | os.PathLike) -> FileIdentity | None:
    """The identity of the file at ``path`` now (through symlinks); None when nothing is there."""
    try:
        return FileIdentity.of(os.stat(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileAccessError(f"cannot look at {os.fspath(path)}: {exc.strerror or exc}") from None


def describe_change(path: str, before: FileIdentity, now: FileIdentity | None) -> str:
    """One line saying how the file at ``path`` changed since ``before`` was taken."""
    change = before.change_to(now)
    if change is Change.DELETED or now is None:  # DELETED is now None
        return f"{path} was deleted since it was opened"
    if change is Change.REPLACED:
        return f"{path} was replaced by another file since it was opened ({_sizes(before, now)})"
    if change is Change.GREW:
        return f"{path} grew by {now.size - before.size:,} bytes since it was opened"
    if now.size != before.size:
        return f"{path} changed on disk since it was opened ({_sizes(before, now)})"
    if now.mtime_ns != before.mtime_ns:
        return f"{path} changed on disk since it was opened (same size, another modification time)"
    return f"{path} changed on disk since it was opened (same size and modification time: rewritten in place)"


def _sizes(before: FileIdentity, now: FileIdentity) -> str:
    if now.size == before.size:
        return f"same size, {now.size:,} bytes"
    return f"{now.size:,} bytes, was {before.size:,}"


__all__ = ["Change", "FileIdentity", "describe_change", "identity_at"]


def open_same_file(path: str, identity: FileIdentity, growing: bool = False):
    """``path`` opened again (GZIP and ZLIB reads do), refused with FileChangedError when it no
    longer holds the file ``identity`` was taken of; ``growing``: a file being followed, which may
    have grown since (the same file, no shorter)."""
    from codec.storage.opening import open_file

    f = open_file(path)
    now = FileIdentity.of(os.fstat(f.fileno()))
    if growing:
        same = (now.dev, now.inode) == (identity.dev, identity.inode) and now.size >= identity.size
    else:
        same = now == identity
    if not same:
        f.close()
        raise FileChangedError(f"{path} changed on disk since it was opened: open it again")
    return f
