"""Remote files through fsspec (s3://, gs://, https://, ...): filesystems, metadata and ranged
reads with retries (errors and timeouts: :mod:`codec.storage.remote_errors`). fsspec and its
protocol packages are optional extras, imported only when a URL is opened, so importing this
module stays cheap."""
from __future__ import annotations

import os
import re
import threading
import time

from codec.errors import FileAccessError, FileChangedError, UsageError
from codec.storage import http_direct
from codec.storage.http_direct import BadAnswer as _BadAnswer
from codec.storage.http_direct import Changed as _Changed
from codec.storage.http_direct import DeadlinePassed as _DeadlinePassed
from codec.storage.http_direct import RangeIgnored as _RangeIgnored
from codec.storage.remote_errors import (
    SCHEME,
    TIMEOUT_NAMES,
    BadAnswerError,
    RangeNotSupportedError,
    RemoteFolderError,
    RemoteTimeoutError,
    access_error,
    answer_timeout,
    class_names,
    deadline_for,
    http_status,
    is_transient,
    no_answer,
    one_line,
    real_cause,
    refused,
    timeouts,
)
from codec.storage.url_secrets import redact, redact_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

CLOUD_EXTRA = "pip install 'tfrecord-lens[cloud]'"
CHUNK = 8 * 1024 * 1024
RETRIES = 3
BACKOFF = 0.5


def is_url(path: str) -> bool:
    """True for ``scheme://...`` (and fsspec chains ``a::b://``); False for plain and Windows paths."""
    return isinstance(path, str) and SCHEME.match(path) is not None


def _default_options(protocol: str) -> dict:
    """Timeouts and bounded library retries, so a dead network fails in seconds, not minutes."""
    idle = timeouts()[0]
    if protocol in ("http", "https"):
        import aiohttp
        # read_bufsize: the index pass reads chunks of megabytes; 64 KiB socket reads cost a Python step each
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=answer_timeout(), sock_read=idle)
        return {"client_kwargs": {"timeout": timeout, "trust_env": True, "read_bufsize": 1 << 20}}
    if protocol in ("gs", "gcs"):
        import logging
        # gcsfs logs a traceback when it runs out of retries; the one-line error says it all
        logging.getLogger("gcsfs").addHandler(logging.NullHandler())
        logging.getLogger("gcsfs").propagate = False
        if os.environ.get("STORAGE_EMULATOR_HOST"):  # a local GCS emulator: no Google credentials, no gRPC
            return {"token": "anon"}
        return {}
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": answer_timeout(), "read_timeout": idle,
                                  "retries": {"max_attempts": 2, "mode": "standard"}}}
    return {}


_ENV_PREFIXES = ("TFRLENS_REMOTE_", "AWS_", "GOOGLE_", "GCSFS_", "STORAGE_EMULATOR_HOST", "AZURE_", "HF_", "FSSPEC_",
                 "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_fs_cache: dict = {}
_fs_lock = threading.Lock()


def _env_key() -> tuple:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)))


def remote_filesystem(url: str, **storage_options: Any) -> tuple[Any, str]:
    """(fs, path) for ``url`` via fsspec; a missing protocol package is a one-line UsageError.

    One filesystem per protocol, options and credential environment (its sessions and
    connection pools are shared by every file of a shard set); a changed environment
    (another endpoint, other keys) gets a new one instead of fsspec's cached instance.
    """
    m = SCHEME.match(url)
    protocol = m.group(1).lower() if m else ""
    if protocol in ("gs", "gcs"):
        if os.environ.get("STORAGE_EMULATOR_HOST"):  # gcsfs's gRPC path would hang on an emulator
            os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    if "::" not in url and protocol:
        key = (protocol, repr(sorted(storage_options.items())), _env_key())
        with _fs_lock:
            fs = _fs_cache.get(key)
        if fs is not None:
            return fs, fs._strip_protocol(url)
        fs, path = _new_filesystem(url, protocol, storage_options)
        with _fs_lock:
            _fs_cache[key] = fs
        return fs, path
    return _new_filesystem(url, protocol, storage_options)


def _new_filesystem(url: str, protocol: str, storage_options: dict) -> tuple[Any, str]:
    try:
        import fsspec.core
    except ImportError:
        raise UsageError(f"{redact(url)}: reading URLs needs fsspec: {CLOUD_EXTRA}") from None
    try:
        defaults = {} if "::" in url else _default_options(protocol)
        options = {"skip_instance_cache": True, **defaults, **storage_options}
    except ImportError as exc:
        raise UsageError(f"{redact(url)}: {one_line(exc)}; {_how_to_install(exc)}") from None
    try:
        return fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:
        raise UsageError(f"{redact(url)}: {one_line(exc)}; {_how_to_install(exc)}") from None
    except ValueError as exc:
        if "Protocol not known" in str(exc):
            detail = redact_text(one_line(exc), [url])
            raise UsageError(f"{redact(url)}: unknown protocol {protocol!r} ({detail})") from None
        raise


_IN_CLOUD_EXTRA = ("fsspec", "s3fs", "gcsfs", "aiohttp")


def _how_to_install(exc: ImportError) -> str:
    """The [cloud] extra for the stores it covers; the package fsspec names for the others."""
    m = re.search(r"[Ii]nstall (?:the )?([A-Za-z0-9_.\-]+)", str(exc))
    package = m.group(1) if m else (exc.name or "")
    if not package or package.split(".")[0] in _IN_CLOUD_EXTRA:
        return CLOUD_EXTRA
    return f"pip install {package}"


def _retrying(url: str, call, retries: int, backoff: float, span: tuple[int, int] | None = None):
    """Run ``call`` with a few retries and exponential backoff for transient errors only; a
    timeout is tried once more (each costs the idle timeout), and a read's deadline not again;
    a refused connection and a server that answers nothing (TFRLENS_REMOTE_FIRST_BYTE) fail at once."""
    began = time.monotonic()
    for attempt in range(retries + 1):
        try:
            return call()
        except (RangeNotSupportedError, RemoteTimeoutError, BadAnswerError, http_direct.Unsuitable):
            raise
        except Exception as exc:
            limit = min(retries, 1) if class_names(real_cause(exc)) & TIMEOUT_NAMES else retries
            # refused: nothing listens; no answer on a new connection: the server is hung. Both said now.
            if attempt < limit and is_transient(exc) and not refused(exc) and not no_answer(exc):
                time.sleep(backoff * (2 ** attempt))
                continue
            raise access_error(url, exc, span, time.monotonic() - began) from exc


def _normalise(value: Any) -> Any:
    if hasattr(value, "isoformat"):  # a datetime
        return value.isoformat()
    if isinstance(value, (str, int, float)) or value is None:
        return value
    return str(value)


def version_of(info: dict) -> dict:
    """What identifies an object's version, from ``fs.info``: etag, generation, version_id, size, mtime."""
    keys = {"etag": ("ETag", "etag", "Etag"), "generation": ("generation",),
            "version_id": ("VersionId", "version_id", "versionId"),
            "mtime": ("LastModified", "Last-Modified", "updated", "mtime", "last_modified"),
            "md5": ("md5Hash", "Content-MD5", "content_md5")}
    version: dict[str, Any] = {"size": info.get("size")}
    for name, candidates in keys.items():
        for key in candidates:
            if info.get(key) not in (None, ""):
                version[name] = _normalise(info[key])
                break
    return version


async def _http_range(fs, url: str, start: int, end: int, version: dict) -> bytes:
    """One ranged GET that looks at the status before reading the body, so a server that
    ignores Range is refused without downloading the object. The answer must be of the
    version opened: its ETag, else its Last-Modified, and the total size in Content-Range;
    and exactly the bytes asked: its Content-Range names them, and no more body is read."""
    session = await fs.set_session()
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Range"] = f"bytes={start}-{end - 1}"
    headers["Accept-Encoding"] = "identity"  # the object's own bytes: offsets into anything else are wrong
    async with session.get(fs.encode_url(url), headers=headers, **kw) as r:
        fs._raise_not_found_for_status(r, url)
        http_direct.check_answer(r.status, r.headers, r.content_length, start, end, version)
        if r.content_length is not None and not r.headers.get("Transfer-Encoding"):
            return await r.read()  # its length is what aiohttp reads (the caller checks it)
        return await _capped(r.content.read, end - start)


async def _capped(read, want: int) -> bytes:
    """:func:`codec.storage.http_direct.capped_steps` with an awaited ``read``."""
    steps = http_direct.capped_steps(want)
    try:
        size = next(steps)
        while True:
            size = steps.send(await read(size))
    except StopIteration as done:
        return done.value


async def _s3_range(fs, path: str, start: int, end: int, etag: str | None, version_id: str | None) -> bytes:
    """One ranged GetObject pinned to the indexed version (VersionId, else If-Match on the ETag)."""
    bucket, key, vers = fs.split_path(path)
    extra: dict = {}
    if version_id or vers:
        extra["VersionId"] = version_id or vers
    elif etag:
        extra["IfMatch"] = etag
    resp = await fs._call_s3("get_object", Bucket=bucket, Key=key, Range=f"bytes={start}-{end - 1}", **extra)
    try:
        said = resp.get("ContentRange")
        if said is not None and said.partition("/")[0].strip() != f"bytes {start}-{end - 1}":
            raise _BadAnswer(f"with other bytes (Content-Range: {one_line(said)[:60]})")
        if resp.get("ContentLength") not in (None, end - start):
            raise _BadAnswer(f"with Content-Length {resp.get('ContentLength')}")
        return await _capped(resp["Body"].read, end - start)
    finally:
        resp["Body"].close()


def _run(loop, coroutine, deadline: float):
    """Run ``coroutine`` on ``loop`` (a filesystem's event loop thread) for at most ``deadline``
    seconds (then _DeadlinePassed). Interrupted here (Ctrl-C), it is cancelled there, not left
    pending for the interpreter to complain about on its way out."""
    import asyncio

    async def bounded():
        task = asyncio.ensure_future(coroutine)
        try:
            done, _ = await asyncio.wait({task}, timeout=deadline)
            if not done:
                raise _DeadlinePassed()
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})  # its connection closed before this request ends

    future = asyncio.run_coroutine_threadsafe(bounded(), loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def stop_requests(wait: float = 1.0) -> None:
    """Cancel every request in flight on fsspec's event loop and let the cancellations run (up to
    ``wait`` seconds), then keep asyncio quiet about anything still pending: the process is on its
    way out (Ctrl-C), and "Task was destroyed but it is pending!" would only be noise."""
    import asyncio
    import logging
    import sys

    loop = getattr(sys.modules.get("fsspec.asyn"), "loop", [None])[0]
    if loop is not None and loop.is_running():
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=wait)

        try:
            asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(wait + 0.5)
        except Exception:  # noqa: BLE001 - on the way out: whatever is left is silenced below
            pass
    logging.getLogger("asyncio").setLevel(logging.CRITICAL + 1)


def _precondition_failed(exc: BaseException) -> bool:
    text = str(exc)
    return http_status(exc) == 412 or "PreconditionFailed" in text or "At least one of the pre-conditions" in text


def _metadata(url: str, fs, path: str) -> dict:
    """``fs.info(path)`` afresh; on an async filesystem within a deadline of twice the idle timeout."""
    fs.invalidate_cache(path)
    if not isinstance(fs, http_direct.DirectHttp) and \
            (not getattr(fs, "async_impl", False) or getattr(fs, "loop", None) is None):
        return fs.info(path)
    deadline = 2 * timeouts()[0]
    try:
        return fs.info(path) if isinstance(fs, http_direct.DirectHttp) else _run(fs.loop, fs._info(path), deadline)
    except _DeadlinePassed:
        raise RemoteTimeoutError(f"timed out asking {redact(url)} for its size after {deadline:.0f} s "
                                 "(TFRLENS_REMOTE_TIMEOUT): check the network and that the server is up") from None


_direct: dict = {}


def _direct_filesystem() -> http_direct.DirectHttp:
    """The process's http.client reader of plain http(s) URLs (one per timeout setting)."""
    idle, answer = timeouts()[0], answer_timeout()
    with _fs_lock:
        fs = _direct.get((idle, answer))
        if fs is None:
            fs = _direct[(idle, answer)] = http_direct.DirectHttp(answer, idle, answer)
        return fs


def direct_info(url: str, retries: int = RETRIES, backoff: float = BACKOFF) -> dict | None:
    """The size and version of a plain http(s) URL from a HEAD sent without fsspec (see
    codec/storage/http_direct.py); None where fsspec must ask (a redirect, no size in the answer)."""
    fs = _direct_filesystem()
    try:
        return _retrying(url, lambda: _metadata(url, fs, url), retries, backoff)
    except http_direct.Unsuitable:
        return None


MAX_CONNECTIONS = 16  # ranged reads in flight at once, over every remote file of the process
_connections = threading.BoundedSemaphore(MAX_CONNECTIONS)


class RemoteFile:
    """A remote object read by ranges: ``size``, ``version``, ``read_at``, ``read`` (through a
    small block cache), ``sequential``, and the ``bytes_fetched``/``requests`` counters
    (thread-safe; ``requests`` counts the metadata call and each read, not retries).

    Reads are pinned to the version first seen where the store allows it (HTTP ETag,
    S3 VersionId or If-Match): an object replaced meanwhile raises FileChangedError
    instead of mixing two versions' bytes.
    """

    BLOCK = 256 << 10  # random reads fetch aligned blocks of this size (a small readahead)
    BLOCKS = 16

    def __init__(self, url: str, fs: Any, path: str, info: dict, *,
                 retries: int | None = None, backoff: float | None = None, requests: int = 1):
        self.url, self.fs, self.path = url, fs, path
        self.shown = redact(url)  # what messages show
        self.info = info
        self.size: int = int(info["size"])
        self.version: dict = {"url": url, **version_of(info)}
        self.retries = RETRIES if retries is None else retries
        self.backoff = BACKOFF if backoff is None else backoff
        self.bytes_fetched = 0
        self.requests = requests
        self._lock = threading.Lock()
        self._kind = {"HTTPFileSystem": "http", "S3FileSystem": "s3", "GCSFileSystem": "gs",
                      "ExtendedGcsFileSystem": "gs", "DirectHttp": "direct"}.get(type(fs).__name__, "")
        self._blocks: dict[int, bytes] = {}

    @property
    def token(self) -> str:
        """The version as one string, for the index cache: the size and the store's generation,
        ETag or version id (in that order: a listing and a HEAD both give the first two); the
        modification time only when the store gives none of those."""
        v = self.version
        strong = next((f"{k}={v[k]}" for k in ("generation", "etag", "version_id", "md5") if v.get(k)), None)
        return f"size={v.get('size')}|{strong or 'mtime=' + str(v.get('mtime'))}"

    @classmethod
    def open(cls, url: str, *, info: dict | None = None, retries: int | None = None, backoff: float | None = None,
             **storage_options: Any) -> RemoteFile:
        """Resolve ``url`` and read its metadata once (one HEAD or equivalent), unless a
        listing already gave it (``info``)."""
        retrying = RETRIES if retries is None else retries, BACKOFF if backoff is None else backoff
        if http_direct.usable(url, storage_options):
            meta = info if info is not None else direct_info(url, *retrying)
            if meta is not None:
                return cls(url, _direct_filesystem(), url, meta, retries=retries, backoff=backoff,
                           requests=0 if info is not None else 1)
        fs, path = remote_filesystem(url, **storage_options)
        if info is not None and info.get("size") is not None and info.get("type", "file") == "file":
            return cls(url, fs, path, info, retries=retries, backoff=backoff, requests=0)
        meta = _retrying(url, lambda: _metadata(url, fs, path), *retrying)
        if meta.get("type") == "directory":
            raise RemoteFolderError(f"cannot read {redact(url)}: it is a folder or prefix, not a file")
        if meta.get("size") is None:
            raise FileAccessError(f"cannot read {redact(url)}: the server does not say the object's size")
        return cls(url, fs, path, meta, retries=retries, backoff=backoff)

    def current_version(self) -> dict:
        """The object's version now (one metadata request)."""
        meta = _retrying(self.url, lambda: _metadata(self.url, self.fs, self.path), self.retries, self.backoff)
        with self._lock:
            self.requests += 1
        return {"url": self.url, **version_of(meta)}

    def _fetch(self, start: int, end: int) -> bytes:
        etag = self.version.get("etag")
        deadline = deadline_for(end - start)
        with _connections:
            try:
                if self._kind == "direct":
                    return self.fs.read_range(self.path, start, end, self.version, deadline)
                if self._kind == "http":
                    return _run(self.fs.loop, _http_range(self.fs, self.path, start, end, self.version), deadline)
                if self._kind == "s3":
                    return _run(self.fs.loop, _s3_range(self.fs, self.path, start, end, etag,
                                                        self.version.get("version_id")), deadline)
                extra = {"generation": self.version["generation"]} if self._kind == "gs" and \
                    self.version.get("generation") else {}
                if getattr(self.fs, "async_impl", False) and getattr(self.fs, "loop", None) is not None:
                    return _run(self.fs.loop, self.fs._cat_file(self.path, start=start, end=end, **extra), deadline)
                return self.fs.cat_file(self.path, start=start, end=end, **extra)
            except _RangeIgnored:
                raise self._range_error() from None
            except _Changed:
                raise self._changed_error() from None
            except _BadAnswer as exc:
                raise BadAnswerError(f"cannot read {self.shown} bytes {start}-{end - 1}: the server answered "
                                     f"{exc}") from None
            except _DeadlinePassed:
                idle, rate = timeouts()
                raise RemoteTimeoutError(f"timed out reading {self.shown} bytes {start}-{end - 1} after "
                                         f"{deadline:.0f} s: slower than {rate / 1024:g} KiB/s "
                                         "(TFRLENS_REMOTE_MIN_RATE); check the network and the server") from None
            except Exception as exc:
                if _precondition_failed(exc):
                    raise self._changed_error() from None
                raise

    def _changed_error(self) -> FileChangedError:
        return FileChangedError(f"{self.shown} changed on the server since it was opened: open it again")

    def _range_error(self) -> RangeNotSupportedError:
        return RangeNotSupportedError(f"cannot read {self.shown}: the server does not support range requests "
                                      "(it sent the whole object); download the file and open the copy")

    def read_at(self, offset: int, size: int) -> bytes:
        """Exactly ``min(size, self.size - offset)`` bytes at ``offset`` (b"" past the end), one request."""
        if offset < 0 or size < 0:
            raise UsageError(f"read_at({offset}, {size}): offset and size must be >= 0")
        end = min(offset + size, self.size)
        if end <= offset:
            return b""
        data = _retrying(self.url, lambda: self._fetch(offset, end), self.retries, self.backoff, (offset, end))
        with self._lock:
            self.requests += 1
            self.bytes_fetched += len(data)
        if len(data) != end - offset:
            if len(data) > end - offset:
                raise self._range_error()
            raise BadAnswerError(f"cannot read {self.shown} bytes {offset}-{end - 1}: the server sent "
                                 f"{len(data)} of them: the object may have changed; reopen it")
        return data

    def read(self, offset: int, size: int) -> bytes:
        """:meth:`read_at` through a small cache of aligned blocks: nearby reads (a record's
        header and data, the next rows of a table) cost one request, not one each. A read
        larger than a block goes straight through."""
        end = min(offset + size, self.size)
        if end <= offset:
            return b""
        if end - offset > self.BLOCK:
            return self.read_at(offset, end - offset)
        first, last = offset // self.BLOCK, (end - 1) // self.BLOCK
        parts = [self._block(k) for k in range(first, last + 1)]
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        base = first * self.BLOCK
        return data[offset - base:end - base]

    def drop_cache(self) -> None:
        """Let go of the cached blocks (a released shard of a large set holds nothing)."""
        with self._lock:
            self._blocks.clear()

    @property
    def holding(self) -> bool:
        """Whether any block is cached."""
        return bool(self._blocks)

    def cached(self, offset: int, size: int) -> bytes | None:
        """The bytes at ``offset`` if the block cache holds them all (no request), else None."""
        end = min(offset + size, self.size)
        first, last = offset // self.BLOCK, max(offset, end - 1) // self.BLOCK
        with self._lock:
            blocks = [self._blocks.get(k) for k in range(first, last + 1)]
        if any(b is None for b in blocks):
            return None
        # No block is None here (returned above), which mypy cannot follow through the list.
        data: bytes = blocks[0] if len(blocks) == 1 else b"".join(blocks)  # type: ignore[assignment, arg-type]
        base = first * self.BLOCK
        return data[offset - base:end - base]

    def _block(self, k: int) -> bytes:
        with self._lock:
            block = self._blocks.pop(k, None)
            if block is not None:
                self._blocks[k] = block  # most recently used last
                return block
        block = self.read_at(k * self.BLOCK, self.BLOCK)
        with self._lock:
            self._blocks[k] = block
            while len(self._blocks) > self.BLOCKS:
                del self._blocks[next(iter(self._blocks))]
        return block

    def stream(self):
        """A ``read_at`` for one front-to-back pass (the index pass): chunks fetched ahead."""
        from codec.storage.remote_io import Prefetcher
        return Prefetcher(self)

    def file(self, *, streaming: bool = False):
        """A seekable binary file object over the object (for the GZIP/ZLIB readers)."""
        from codec.storage.remote_io import BlobFile
        return BlobFile(self, self.stream() if streaming else None)
