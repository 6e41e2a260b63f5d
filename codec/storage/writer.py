"""Write TFRecord files (plain, GZIP, ZLIB) that TensorFlow reads back, and any output file safely.

Every file the codec writes goes through :class:`OutputFile` (the rules are
in docs/cli-reference.md, "Writing files"):

- A regular file, or a new name, is written to a temporary file beside it,
  flushed, fsynced and renamed over it only when complete. Any failure or
  interruption removes the temporary file and leaves the target as it was.
- A symlink is followed: its target is replaced, the link stays a link.
- A character device or a FIFO (``/dev/null``, a pipe to another program)
  is written directly, streamed: there is nothing to rename over it. So is
  a file reached through /proc (``/dev/stdout`` redirected to a file).
  Block devices, sockets and folders are refused.
- A new file gets the mode ``open()`` would give it (0666 less the umask);
  a replaced file keeps its mode.
- Temporary files are named ``.NAME.tfrlens-PID-HOST-RANDOM.tmp``, so that
  :func:`sweep_stale_temps` can tell the ones a killed run left behind from
  anything else.
- A URL (``s3://``, ``gs://``, ...) is written to a temporary file in the
  system's temporary folder and uploaded whole on commit (see
  :mod:`codec.storage.remote_write`); ``http(s)://`` is refused before anything is
  written, and ``file://`` is the local path it names.
"""
from __future__ import annotations

import errno
import os
import stat
import threading
import zlib
from typing import BinaryIO, Callable, Iterable, TypeGuard, TypeVar

from codec.errors import FileAccessError, UsageError
from codec.format.framing import Compression, encode_record, name_disagrees
from codec.storage.inflate import wbits_for
from codec.storage.temp_files import _register, _sweep_once, _unregister, temp_name

# TensorFlow's ZlibCompressionOptions default level (Z_DEFAULT_COMPRESSION).
COMPRESSION_LEVEL = 6


def is_url_output(path: str | os.PathLike) -> TypeGuard[str]:
    """True when ``path`` is a URL (``s3://...``, always a str); fsspec is imported only then."""
    if not isinstance(path, str) or "://" not in path:
        return False
    from codec.storage.remote import is_url

    return is_url(path)


def _local_form(path: str | os.PathLike) -> str | os.PathLike:
    """A ``file://`` URL as the local path it names; anything else unchanged."""
    if is_url_output(path):
        from codec.storage.remote_write import local_path

        local = local_path(path)
        if local is not None:
            return local
    return path


def describe_write_error(path: str, exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"disk full while writing {path}"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"no permission to write {path}"
    return f"cannot write {path}: {exc.strerror or exc}"


# -- modes --------------------------------------------------------------------
_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows.

    Linux shows it in /proc/self/status. Elsewhere it is read by setting and
    restoring it, under a lock, with a restrictive value in between (a file
    another thread creates in that instant is private rather than too open).
    """
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        old = os.umask(0o077)
        os.umask(old)
    return old


def new_file_mode() -> int:
    """The permission bits ``open(path, "w")`` gives a new file now: 0666 less the umask."""
    return 0o666 & ~current_umask()


# -- where an output goes -----------------------------------------------------
class OutputTarget:
    """What writing to ``path`` means: the file to replace, or a special file to stream into."""

    __slots__ = ("path", "target", "direct", "mode", "remote")

    def __init__(self, path: str, target: str, direct: bool, mode: int | None, remote=None) -> None:
        self.path = path  # as named, for messages
        self.target = target  # the file renamed over (a symlink's target), or the special file
        self.direct = direct  # a character device or FIFO: written in place, no temporary file
        self.mode = mode  # permission bits of the file replaced; None for a new file
        self.remote = remote  # a codec.storage.remote_write.RemoteTarget for a URL, uploaded on commit


def output_target(path: str | os.PathLike) -> OutputTarget:
    """Decide how ``path`` is written; refuse (FileAccessError) what cannot be written safely."""
    path = os.fspath(_local_form(path))
    if is_url_output(path):
        from codec.storage.remote_write import RemoteTarget

        return OutputTarget(path, path, False, None, RemoteTarget(path))
    try:
        st = os.stat(path)  # through symlinks: what the name leads to
    except FileNotFoundError:
        return OutputTarget(path, os.path.realpath(path), False, None)
    except OSError as exc:
        raise FileAccessError(describe_write_error(path, exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(f"is a directory: {path}")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return OutputTarget(path, path, True, None)
    if not stat.S_ISREG(st.st_mode):
        kind = "a block device" if stat.S_ISBLK(st.st_mode) else \
            "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise FileAccessError(f"refusing to write {path}: it is {kind}")
    if _through_proc(path):  # /dev/stdout redirected to a file: write into it, as the shell's ">" would
        return OutputTarget(path, path, True, None)
    return OutputTarget(path, os.path.realpath(path), False, stat.S_IMODE(st.st_mode))


def _through_proc(path: str) -> bool:
    """True when ``path`` reaches its file through /proc (``/dev/stdout``, ``/dev/fd/1``): an open descriptor."""
    p = os.path.abspath(path)
    for _ in range(40):
        if os.path.realpath(os.path.dirname(p)).startswith("/proc/"):
            return True
        if not os.path.islink(p):
            return False
        p = os.path.join(os.path.dirname(p), os.readlink(p))
    return False


def is_special_output(path: str | os.PathLike) -> bool:
    """True when ``path`` is written directly (a device, a FIFO, ``/dev/stdout``): its name says nothing."""
    if is_url_output(path):
        return False
    try:
        return output_target(path).direct
    except OSError:
        return False


def _url_key(path: str | os.PathLike):
    from codec.storage.remote_write import url_key

    return url_key(os.fspath(path))


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when ``a`` and ``b`` name one file (through links, or one object by its normalised URL);
    False when either is a missing local file."""
    a, b = _local_form(a), _local_form(b)
    url_a, url_b = is_url_output(a), is_url_output(b)
    if url_a or url_b:
        return url_a and url_b and _url_key(a) is not None and _url_key(a) == _url_key(b)
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike], what: str) -> None:
    """Refuse to write ``output`` over one of the files being read (FileAccessError naming ``what``).

    A URL output is also checked before any work starts: a read-only URL and
    a bucket that does not exist are refused here, in one line.
    """
    output = _local_form(output)
    if is_url_output(output):
        from codec.storage.remote_write import check_bucket

        check_bucket(output)
        if any(same_file(output, src) for src in inputs):
            raise FileAccessError(f"{what} must not replace its source: {output}")
        return
    try:
        st = os.stat(output)
    except OSError:
        return  # a file that does not exist is none of the inputs
    for src in inputs:
        src = _local_form(src)
        if is_url_output(src):
            continue
        try:
            other = os.stat(src)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino):
            raise FileAccessError(f"{what} must not replace its source: {os.fspath(output)}")


def output_exists(path: str | os.PathLike) -> bool:
    """True when writing ``path`` would replace something: a local file, or an object at a URL
    (asked afresh). For "save over it?" questions; FileAccessError when a URL cannot be asked."""
    path = _local_form(path)
    if is_url_output(path):
        from codec.storage.remote_write import remote_exists

        return remote_exists(path)
    return os.path.lexists(path)


# -- folders of outputs -----------------------------------------------------------
def output_is_folder(path: str | os.PathLike) -> bool:
    """True when ``path`` is a folder to write files into: a local folder, or a URL ending in
    ``/``, naming a bucket or a prefix that holds objects."""
    path = _local_form(path)
    if is_url_output(path):
        from codec.storage.remote_write import is_remote_folder

        return is_remote_folder(path)
    return os.path.isdir(path)


def make_output_folder(path: str | os.PathLike) -> None:
    """Make sure files can be written into ``path`` (FileAccessError in one line when not).

    A local folder is created with its parents. Object stores have no folders
    (a prefix exists once an object is under it): a URL is only checked to be
    writable and its bucket to exist; no bucket is ever created.
    """
    path = _local_form(path)
    if is_url_output(path):
        from codec.storage.remote_write import check_bucket

        check_bucket(path)
        return
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise FileAccessError(describe_write_error(os.fspath(path), exc)) from None
    if not os.path.isdir(path):
        raise FileAccessError(f"not a folder: {os.fspath(path)}")


def output_join(folder: str | os.PathLike, name: str) -> str:
    """``name`` inside the output folder ``folder`` (a local folder or a URL prefix)."""
    folder = os.fspath(folder)
    if is_url_output(folder):
        return folder.rstrip("/") + "/" + name
    return os.path.join(folder, name)


# -- compression from names -----------------------------------------------------
_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".zz", ".zlib")
_SUFFIX_FOR = {Compression.NONE: "", Compression.GZIP: ".gz", Compression.ZLIB: ".zlib"}


def resolve_output_compression(path: str | os.PathLike, chosen: Compression | str | None
                               ) -> tuple[Compression, str | None]:
    """The compression to write ``path`` with, and a one-line warning when the choice contradicts the name.

    Nothing chosen (None): the name decides (``.gz`` GZIP, ``.zz``/``.zlib``
    ZLIB, else none). A choice is kept as it is; the warning says the next
    reader will likely pick the wrong compression from the name. A device or
    FIFO has no telling name, so it gets no warning.
    """
    path = os.fspath(path)
    if chosen is None:
        return Compression.for_name(path), None
    compression = Compression.parse(chosen)
    if is_special_output(path):
        return compression, None
    return compression, name_disagrees(path, compression)


def with_compression_suffix(path: str, compression: Compression | str) -> str:
    """``path`` with the suffix ``compression`` calls for: ``a.tfrecord.gz`` -> ``a.tfrecord`` for NONE.

    A name that already fits is returned unchanged (``.zz`` stays ``.zz``).
    """
    compression = Compression.parse(compression)
    if Compression.for_name(path) is compression:
        return path
    base = path
    for suffix in _COMPRESSED_SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base + _SUFFIX_FOR[compression]


# -- the output file ------------------------------------------------------------
class OutputFile:
    """A binary file being written to ``path``: :meth:`commit` makes it appear, :meth:`abort` drops it.

    ``with OutputFile(path) as out: out.write(b"...")`` commits when the block
    ends normally and aborts on any exception (KeyboardInterrupt included).
    For a URL, commit uploads the finished temporary file (``remote``).
    ``before_replace``, when given, is called once everything is written and
    just before the target is replaced: what it raises aborts the commit.
    """

    def __init__(self, path: str | os.PathLike, *, before_replace: Callable[[], None] | None = None) -> None:
        self._before_replace = before_replace
        where = output_target(path)
        self.path = where.path
        self.target = where.target
        self.direct = where.direct
        self.remote = where.remote
        self._mode = where.mode
        self._tmp: str | None = None
        if self.direct:
            flags = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
            try:
                fd = os.open(self.path, flags)  # a FIFO waits here for its reader
            except OSError as exc:
                raise FileAccessError(describe_write_error(self.path, exc)) from None
        else:
            if self.remote is not None:
                from codec.storage.remote_write import temp_folder

                folder = temp_folder()
            else:
                folder = os.path.dirname(self.target)
            _sweep_once(folder)
            fd = self._create_temp(folder)
        self._f: BinaryIO | None = os.fdopen(fd, "wb")

    def _failure(self, exc: OSError) -> FileAccessError:
        if self.remote is not None:
            from codec.storage.remote_write import describe_local_failure

            return FileAccessError(describe_local_failure(self.path, exc))
        return FileAccessError(describe_write_error(self.path, exc))

    def _create_temp(self, folder: str) -> int:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        while True:
            tmp = os.path.join(folder, temp_name(self.target))
            _register(tmp)  # before it exists: an interruption from here on still finds it
            try:
                fd = os.open(tmp, flags, 0o600)
            except FileExistsError:
                _unregister(tmp)
                continue
            except BaseException as exc:
                _unregister(tmp)
                if isinstance(exc, OSError):
                    raise self._failure(exc) from None
                raise
            self._tmp = tmp
            return fd

    @property
    def closed(self) -> bool:
        return self._f is None

    @property
    def written_path(self) -> str:
        """The file the bytes go to until :meth:`commit`: the temporary file, or the special file itself
        (for a writer that opens files by name)."""
        return self._tmp if self._tmp is not None else self.target

    def write(self, chunk: bytes) -> None:
        if self._f is None:
            raise UsageError(f"output {self.path} is closed")
        try:
            self._f.write(chunk)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise self._failure(exc) from None
            raise

    def commit(self) -> None:
        """Flush; for a regular file also fsync, set the mode and rename over the target;
        for a URL upload the temporary file whole, then remove it."""
        if self._f is None:
            return
        try:
            self._f.flush()
            if not self.direct and self.remote is None:
                fd = self._f.fileno()
                os.fsync(fd)
                os.fchmod(fd, self._mode if self._mode is not None else new_file_mode())
            self._f.close()
            self._f = None
            if self._before_replace is not None:
                self._before_replace()
            if self.remote is not None:
                self.remote.upload(self._tmp)  # FileAccessError (one line) when it fails
                self.abort()  # the temporary copy is no longer needed
            elif self._tmp is not None:
                os.replace(self._tmp, self.target)
                _unregister(self._tmp)
                self._tmp = None
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError) and not isinstance(exc, FileAccessError):
                raise self._failure(exc) from None
            raise

    def abort(self) -> None:
        """Drop everything written (a temporary file is removed; the target is untouched)."""
        f, self._f = self._f, None
        if f is not None:
            try:
                f.close()
            except OSError:
                pass
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            _unregister(tmp)

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


_Writer = TypeVar("_Writer", bound="ClosingWriter")


class ClosingWriter:
    """A writer used as ``with``: :meth:`close` (commit) when the block ends normally, :meth:`abort` on any
    exception (KeyboardInterrupt included)."""

    def close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Writer) -> _Writer:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class TFRecordWriter(ClosingWriter):
    """``with TFRecordWriter(path, "gzip") as w: w.write(data)``; written safely as :class:`OutputFile` says
    (``before_replace`` too)."""

    def __init__(self, path: str | os.PathLike, compression: Compression | str = Compression.NONE, *,
                 before_replace: Callable[[], None] | None = None):
        self.path = os.fspath(path)
        self.compression = Compression.parse(compression)
        self.count = 0
        self.bytes_written = 0
        self._z = None
        if self.compression is not Compression.NONE:
            self._z = zlib.compressobj(COMPRESSION_LEVEL, zlib.DEFLATED, wbits_for(self.compression))
        self._out = OutputFile(self.path, before_replace=before_replace)

    @property
    def _f(self) -> BinaryIO | None:
        return self._out._f

    def write(self, data: bytes) -> None:
        frame = encode_record(bytes(data))
        if self._z is not None:
            frame = self._z.compress(frame)
        self._put(frame)
        self.count += 1

    def write_framed(self, frame: bytes) -> None:
        """Write an already framed record (header, data, footer) verbatim."""
        if self._z is not None:
            frame = self._z.compress(frame)
        self._put(frame)
        self.count += 1

    def _put(self, chunk: bytes) -> None:
        if self._out.closed:
            raise UsageError(f"writer for {self.path} is closed")
        self._out.write(chunk)
        self.bytes_written += len(chunk)

    def close(self) -> None:
        """Finish the stream, then commit (flush, fsync, rename over the target)."""
        if self._out.closed:
            return
        try:
            if self._z is not None:
                tail, self._z = self._z.flush(), None
                self._out.write(tail)
            self._out.commit()
        except BaseException:
            self._out.abort()
            raise

    def abort(self) -> None:
        """Drop everything written; the target is untouched."""
        self._out.abort()


def write_records(path: str | os.PathLike, records: Iterable[bytes],
                  compression: Compression | str = Compression.NONE) -> int:
    """Write every record in ``records`` to ``path`` atomically; return the count."""
    with TFRecordWriter(path, compression) as w:
        for data in records:
            w.write(data)
    return w.count


def atomic_write_bytes(path: str | os.PathLike, blob: bytes) -> None:
    """Write ``blob`` to ``path`` safely (a temporary file and a rename, or straight into a device/FIFO)."""
    with OutputFile(path) as out:
        out.write(blob)
