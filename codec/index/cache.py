"""A per-user cache of finished indexes, keyed by path, size and version (mtime, ctime and inode).

One file per indexed path in the user cache folder (or ``$TFRLENS_CACHE_DIR``):
an 8-byte magic, a length-prefixed JSON header, then the offsets (uint64 LE)
and statuses (uint8). A changed size, mtime, ctime or inode, or any unreadable
entry, is a miss; the cache is an optimisation and never an error. ctime is what
tells a copy that kept size and mtime (``cp -p``, rsync, tar) from the file indexed.

Beside it, for a GZIP or ZLIB file whose stream was undamaged, a ``.gzi`` file holds
its zran index (``indexed_gzip``'s export, keyed the same way) so a cached
open reads at random without decompressing the whole file first.
"""
from __future__ import annotations

import json
import os
import struct
import sys

try:  # CPython's built-in SHA-256: importing hashlib loads OpenSSL (~4 ms of a one-record `cat`)
    from _sha256 import sha256
except ImportError:
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256

from codec.format.framing import Compression, Problem, ProblemKind

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from codec.index.record_index import RecordIndex

# Files smaller than this are not cached: indexing one (~1 ms) is faster than writing or
# reading its cache entry, and a set of 10,000 small shards would fill the folder.
MIN_CACHED_BYTES = 1 << 20

APP_NAME = "tfrecord-lens"
MAGIC = b"TFRLIDX1"
ZRAN_MAGIC = b"TFRLZRN1"
VERSION = 2  # 2: keyed by the version stamp (mtime, ctime, inode), no longer by mtime alone
_LEN = struct.Struct("<I")
_OFFSET = struct.Struct("<Q")


def cache_dir() -> str:
    env = os.environ.get("TFRLENS_CACHE_DIR")
    if env:
        return env
    return os.path.join(user_cache_root(), "index")


def user_cache_root() -> str:
    """``platformdirs.user_cache_dir("tfrecord-lens")``.

    On Linux in the usual cases (an absolute ``$XDG_CACHE_HOME``, else an
    absolute ``$HOME``) the folder is read from the environment as platformdirs
    reads it there (a test holds the two equal), because importing platformdirs
    costs ~10 ms of a one-record ``cat``. Anything else asks platformdirs.
    """
    if sys.platform == "linux":
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            return os.path.join(xdg, APP_NAME)
        if os.path.isabs(os.environ.get("HOME", "")):
            return os.path.join(os.path.expanduser("~/.cache"), APP_NAME)
    import platformdirs

    return platformdirs.user_cache_dir(APP_NAME)


def _key(path: str) -> str:
    """A local file by its real path, a URL without its query and user info (a signed URL's
    signature and a password are never stored; the object's version is checked instead)."""
    if "://" in path:
        from codec.storage.remote import is_url
        from codec.storage.url_secrets import without_credentials

        if is_url(path):
            return without_credentials(path)
    return os.path.realpath(path)


def cache_path(path: str) -> str:
    key = sha256(_key(path).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(cache_dir(), key + ".tfri")


def _identity(path: str, size: int, stamp: str) -> dict:
    """What ties a cache entry to one version of one file: its size and stamp (a local file's
    :attr:`codec.storage.file_identity.FileIdentity.stamp`, a remote object's version token)."""
    return {"version": VERSION, "path": _key(path), "size": size, "stamp": stamp}


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_folders: dict[str, bool] = {}  # cache folder -> usable (decided once a process)


def _note(line: str) -> None:
    sys.stderr.write(f"tfrlens: {line}\n")


def _folder_usable(folder: str, fd: int | None = None, create: bool = False) -> bool:
    """Whether ``folder`` may hold cache entries: created 0700 if missing; ours with wider
    permissions is tightened; another user's is refused (one stderr note a process, no cache).

    An entry names the file it indexes and is read back as trusted offsets, so a folder others
    can write into (a shared ``TFRLENS_CACHE_DIR``) could feed or redirect it.
    """
    known = _folders.get(folder)
    if known is not None and fd is None:
        return known
    try:
        if fd is None:
            if create:
                os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.stat(folder)
        else:
            st = os.fstat(fd)
    except OSError:
        return False  # missing, unwritable or not a folder: a miss, said by nothing (the cache is optional)
    ok = _owned_and_private(folder, st, fd)
    if known is None:
        _folders[folder] = ok
    return ok


def _owned_and_private(folder: str, st: os.stat_result, fd: int | None) -> bool:
    import stat

    if not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        if folder not in _folders:
            _note(f"index cache not used: {folder} belongs to another user")
        return False
    if os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
        try:
            os.chmod(fd if fd is not None else folder, 0o700)
        except OSError:
            if folder not in _folders:
                _note(f"index cache not used: {folder} is open to other users and cannot be made private")
            return False
    return True


def _open_entry_file(target: str):
    """The entry at ``target`` opened to read, or None: a symlink, anything but a regular file,
    or a folder the cache may not use is a miss (never followed, never waited on)."""
    if not _folder_usable(os.path.dirname(target)):
        return None
    try:
        fd = os.open(target, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    import stat

    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _write_entry(target: str, magic: bytes, header: dict, payloads: list) -> str | None:
    """Magic, length-prefixed JSON header, payloads (bytes-like): written atomically; None if it cannot be.

    Into a fresh temporary file created in the cache folder (O_EXCL, O_NOFOLLOW, 0600, through
    the folder's own descriptor), then renamed over ``target``: a symlink planted at ``target``
    is replaced itself, and what it points to is never opened. The temporary file is registered
    like the writer's, so a run killed mid-write leaves nothing a later sweep does not remove.
    """
    from codec.storage.temp_files import _register, _sweep_once, _unregister, temp_name

    blob = json.dumps(header).encode()
    folder, name = os.path.split(target)
    if not _folder_usable(folder, create=True):
        return None
    if os.open not in os.supports_dir_fd:  # (Windows) no links to plant for a user without the privilege
        from codec.storage.writer import OutputFile

        try:
            with OutputFile(target) as out:
                for part in [magic + _LEN.pack(len(blob)) + blob, *payloads]:
                    out.write(part)
        except OSError:
            return None
        return target
    try:
        dir_fd = os.open(folder, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError:
        return None
    tmp = None
    try:
        if not _folder_usable(folder, dir_fd):  # the folder opened is the one checked
            return None
        _sweep_once(folder)
        tmp = temp_name(target)
        _register(os.path.join(folder, tmp))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=dir_fd)
        with open(fd, "wb") as out:
            out.write(magic + _LEN.pack(len(blob)) + blob)
            for payload in payloads:
                out.write(payload)
            out.flush()
            os.fsync(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        tmp_done, tmp = tmp, None
        _unregister(os.path.join(folder, tmp_done))
    except OSError:
        return None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            _unregister(os.path.join(folder, tmp))
        os.close(dir_fd)
    return target


def _read_header(f, magic: bytes, expected: dict) -> dict | None:
    """The entry's header if its magic and every ``expected`` field match, else None."""
    if f.read(len(magic)) != magic:
        return None
    (n,) = _LEN.unpack(f.read(4))
    header = json.loads(f.read(n))
    if any(header.get(key) != value for key, value in expected.items()):
        return None
    return header


def _entry(path: str, size: int, stamp: str, compression: Compression, index: RecordIndex,
           problems: list[Problem], verified: bool, stream_end: int) -> tuple[dict, list]:
    """An entry's header and its payloads: views of the index's chunks, not a copy of them."""
    header = dict(_identity(path, size, stamp), compression=compression.value, count=len(index),
                  verified=verified, stream_end=stream_end, problems=[
                      {"index": p.index, "offset": p.offset, "kind": p.kind.value, "detail": p.detail,
                       "size": p.size, "compressed_offset": p.compressed_offset, "expected": p.expected,
                       "found": p.found}
                      for p in problems])
    # Chunk by chunk, no whole copy: a 10M-record index is 90 MB, and a copy of it would hold
    # the GIL for tens of milliseconds on the worker (a frozen window for the GUI thread).
    offsets, statuses = index.filled_chunks()
    return header, [c.astype("<u8", copy=False) for c in offsets] + statuses


def save(path: str, size: int, stamp: str, compression: Compression, index: RecordIndex,
         problems: list[Problem], verified: bool, stream_end: int) -> str | None:
    header, payloads = _entry(path, size, stamp, compression, index, problems, verified, stream_end)
    return _write_entry(cache_path(path), MAGIC, header, payloads)


def has_entry(path: str, size: int, stamp: str, compression: Compression) -> bool:
    """Whether the cache holds an index of this very file (its header is read, not its arrays)."""
    fd = _open_entry_file(cache_path(path))
    if fd is None:
        return False
    try:
        with open(fd, "rb") as f:
            expected = dict(_identity(path, size, stamp), compression=compression.value)
            return _read_header(f, MAGIC, expected) is not None
    except (OSError, ValueError, KeyError, struct.error):
        return False


def load(path: str, size: int, stamp: str, compression: Compression):
    """(index, problems, verified, stream_end) from the cache, or None on a miss."""
    fd = _open_entry_file(cache_path(path))
    if fd is None:
        return None
    try:
        with open(fd, "rb") as f:
            header = _read_header(f, MAGIC, dict(_identity(path, size, stamp), compression=compression.value))
            if header is None:
                return None
            count = header["count"]
            import numpy as np

            offsets = np.fromfile(f, dtype="<u8", count=count)
            statuses = np.fromfile(f, dtype=np.uint8, count=count)
    except (OSError, ValueError, KeyError, struct.error):
        return None
    if offsets.shape[0] != count or statuses.shape[0] != count:
        return None
    problems = [
        Problem(p["index"], p["offset"], ProblemKind(p["kind"]), p["detail"], p["size"], p["compressed_offset"],
                p["expected"], p["found"])
        for p in header["problems"]
    ]
    from codec.index.record_index import RecordIndex

    return RecordIndex.from_arrays(offsets, statuses), problems, header["verified"], header["stream_end"]


class Entry:
    """One file's cache entry, opened to read a few records' offsets and statuses.

    What a one-record ``cat`` needs, without loading (or importing numpy for) the
    whole index: the header, and two small reads per record.
    """

    def __init__(self, f, header: dict, base: int) -> None:
        self._f = f
        self.header = header
        self.count: int = header["count"]
        self.compression = Compression(header["compression"])
        self.stream_end: int = header["stream_end"]
        self.problems: list = header["problems"]
        self._base = base

    def offset(self, i: int) -> int:
        self._f.seek(self._base + 8 * i)
        return _OFFSET.unpack(self._f.read(8))[0]

    def status(self, i: int) -> int:
        self._f.seek(self._base + 8 * self.count + i)
        return self._f.read(1)[0]

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> Entry:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_entry(path: str, size: int, stamp: str) -> Entry | None:
    """The cache entry of this very file (whatever its compression), or None on a miss."""
    fd = _open_entry_file(cache_path(path))
    if fd is None:
        return None
    f = open(fd, "rb")
    try:
        header = _read_header(f, MAGIC, _identity(path, size, stamp))
        if header is not None:
            entry = Entry(f, header, f.tell())
            if os.fstat(f.fileno()).st_size >= entry._base + 9 * entry.count:
                return entry
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        pass
    f.close()
    return None


def zran_path(path: str) -> str:
    return cache_path(path)[: -len(".tfri")] + ".gzi"


def save_zran(path: str, size: int, stamp: str, blob: bytes | None, stream_end: int) -> str | None:
    """Store a GZIP or ZLIB file's exported zran index; ``blob=None`` removes a stale one."""
    target = zran_path(path)
    if blob is None:
        _unlink(target)
        return None
    header = dict(_identity(path, size, stamp), stream_end=stream_end, length=len(blob))
    return _write_entry(target, ZRAN_MAGIC, header, [blob])


def load_zran(path: str, size: int, stamp: str, stream_end: int):
    """The exported zran index for this very file (same size, stamp and stream length), or None.

    An unbuffered file positioned at the index, for ``import_index(fileobj=...)``
    to read in place (the caller closes it): a copy in memory first would cost
    a one-record ``cat`` ~4 ms of page faults for a 3 MB index.
    """
    fd = _open_entry_file(zran_path(path))
    if fd is None:
        return None
    f = open(fd, "rb", buffering=0)
    try:
        header = _read_header(f, ZRAN_MAGIC, dict(_identity(path, size, stamp), stream_end=stream_end))
        if header is not None and os.fstat(f.fileno()).st_size - f.tell() == header["length"]:
            return f
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        pass
    f.close()
    return None


def _unlink(target: str) -> None:
    try:
        os.unlink(target)
    except OSError:
        pass


def invalidate(path: str) -> None:
    _unlink(cache_path(path))
    _unlink(zran_path(path))


def dali_index_text(tfile) -> tuple[str, int]:
    """The ``offset size`` lines NVIDIA DALI and the ``tfrecord`` package read, and how many
    truncated records were left out (uncompressed files only)."""
    from codec.errors import UsageError
    from codec.format.framing import RecordStatus

    if tfile.compression is not Compression.NONE:
        raise UsageError(f"the dali index format needs an uncompressed file; {tfile.path} is "
                         f"{tfile.compression.value}")
    lines = []
    skipped = 0
    for i in range(len(tfile)):
        info = tfile.record_info(i)
        if info.status is RecordStatus.TRUNCATED:
            skipped += 1
            continue
        lines.append(f"{info.offset} {info.end - info.offset}\n")
    return "".join(lines), skipped


def _native_parts(tfile) -> list:
    """``tfile``'s (finished) index in the cache's own binary format, as pieces to write in turn."""
    header, payloads = _entry(tfile.path, tfile.file_size, tfile.version, tfile.compression, tfile.index,
                              tfile.problems, tfile.verified, tfile.data_end)
    blob = json.dumps(header).encode()
    return [MAGIC + _LEN.pack(len(blob)) + blob] + payloads


def write_native_index(tfile, out) -> None:
    """Stream the native index to the binary file object ``out`` (no copy of the index is made)."""
    for part in _native_parts(tfile):
        out.write(part)


def write_index(tfile, output: str, fmt: str = "native") -> int:
    """Write ``tfile``'s (finished) index to ``output`` safely; return truncated records left out."""
    from codec.storage.writer import OutputFile, atomic_write_bytes

    if fmt == "dali":
        text, skipped = dali_index_text(tfile)
        atomic_write_bytes(output, text.encode())
        return skipped
    with OutputFile(output) as out:
        write_native_index(tfile, out)
    return 0
