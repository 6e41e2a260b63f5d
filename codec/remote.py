"""Remote files through fsspec (s3://, gs://, https://, ...): ranged reads, a prefetching
sequential reader, and one-line errors. fsspec and its protocol packages are optional
extras, imported only when a URL is opened, so importing this module stays cheap."""
from __future__ import annotations

import re
import threading
import time

from .errors import FileAccessError, FileChangedError, UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Iterator

CLOUD_EXTRA = "pip install 'tfrecord-lens[cloud]'"
CHUNK = 8 * 1024 * 1024
RETRIES = 3
BACKOFF = 0.5

_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*::)*([A-Za-z][A-Za-z0-9+.\-]+)://")

_TRANSIENT = frozenset({
    "TimeoutError", "ConnectionError", "FSTimeoutError", "ClientConnectionError", "ClientOSError",
    "ServerDisconnectedError", "ClientPayloadError", "ServerTimeoutError", "EndpointConnectionError",
    "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError", "IncompleteReadError",
})
_TIMEOUTS = frozenset({"TimeoutError", "FSTimeoutError", "ServerTimeoutError", "ConnectTimeoutError",
                       "ReadTimeoutError"})


class RangeNotSupportedError(FileAccessError):
    """The server answered a ranged read with the whole object (or a wrong length)."""


class RemoteFolderError(FileAccessError):
    """A URL names a folder or prefix, not one object (open it as a shard set)."""


class _RangeIgnored(Exception):
    pass


_SIGNATURE_PARAMS = re.compile(r"(?i)^(x-amz-|x-goog-)|^(signature|sig|se|sp|sv|sr|st|skoid|sktid|expires|"
                               r"awsaccesskeyid|googleaccessid|token|access_token|key)$")


def carries_credentials(url: str) -> bool:
    """Does ``url`` hold a secret: a user and password, or a signed URL's signature or token?
    Such a URL is used, never stored (recent URLs, the index cache)."""
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    if parts.username or parts.password:
        return True
    return any(_SIGNATURE_PARAMS.search(name) for name, _ in parse_qsl(parts.query, keep_blank_values=True))


def without_credentials(url: str) -> str:
    """``url`` without its query and user info: what identifies the object for the index cache
    (the version it records guards against a query that selects other content)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def is_url(path: str) -> bool:
    """True for ``scheme://...`` (and fsspec chains ``a::b://``); False for plain and Windows paths."""
    return isinstance(path, str) and _SCHEME.match(path) is not None


def _default_options(protocol: str) -> dict:
    """Timeouts and bounded library retries, so a dead network fails in seconds, not minutes."""
    if protocol in ("http", "https"):
        import aiohttp
        # read_bufsize: the index pass reads chunks of megabytes; 64 KiB socket reads cost a Python step each
        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=30),
                                  "trust_env": True, "read_bufsize": 1 << 20}}
    if protocol in ("gs", "gcs"):
        import logging
        import os
        # gcsfs logs a traceback when it runs out of retries; the one-line error says it all
        logging.getLogger("gcsfs").addHandler(logging.NullHandler())
        logging.getLogger("gcsfs").propagate = False
        if os.environ.get("STORAGE_EMULATOR_HOST"):  # a local GCS emulator: no Google credentials, no gRPC
            return {"token": "anon"}
        return {}
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": 5, "read_timeout": 30,
                                  "retries": {"max_attempts": 2, "mode": "standard"}}}
    return {}


_ENV_PREFIXES = ("AWS_", "GOOGLE_", "GCSFS_", "STORAGE_EMULATOR_HOST", "AZURE_", "HF_", "FSSPEC_", "HTTP_PROXY",
                 "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_fs_cache: dict = {}
_fs_lock = threading.Lock()


def _env_key() -> tuple:
    import os
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)))


def remote_filesystem(url: str, **storage_options: Any) -> tuple[Any, str]:
    """(fs, path) for ``url`` via fsspec; a missing protocol package is a one-line UsageError.

    One filesystem per protocol, options and credential environment (its sessions and
    connection pools are shared by every file of a shard set); a changed environment
    (another endpoint, other keys) gets a new one instead of fsspec's cached instance.
    """
    m = _SCHEME.match(url)
    protocol = m.group(1).lower() if m else ""
    if protocol in ("gs", "gcs"):
        import os
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
        raise UsageError(f"{url}: reading URLs needs fsspec: {CLOUD_EXTRA}") from None
    try:
        defaults = {} if "::" in url else _default_options(protocol)
        options = {"skip_instance_cache": True, **defaults, **storage_options}
    except ImportError as exc:
        raise UsageError(f"{url}: {_one_line(exc)}; {_how_to_install(exc)}") from None
    try:
        return fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:
        raise UsageError(f"{url}: {_one_line(exc)}; {_how_to_install(exc)}") from None
    except ValueError as exc:
        if "Protocol not known" in str(exc):
            raise UsageError(f"{url}: unknown protocol {protocol!r} ({_one_line(exc)})") from None
        raise


_IN_CLOUD_EXTRA = ("fsspec", "s3fs", "gcsfs", "aiohttp")


def _how_to_install(exc: ImportError) -> str:
    """The [cloud] extra for the stores it covers; the package fsspec names for the others."""
    m = re.search(r"[Ii]nstall (?:the )?([A-Za-z0-9_.\-]+)", str(exc))
    package = m.group(1) if m else (exc.name or "")
    if not package or package.split(".")[0] in _IN_CLOUD_EXTRA:
        return CLOUD_EXTRA
    return f"pip install {package}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return code if isinstance(code, int) else None
    return None


def _cause(exc: BaseException) -> BaseException:
    """fsspec's HTTP info turns every failure (refused connection included) into a
    FileNotFoundError raised from the real one: look at that instead."""
    while isinstance(exc, FileNotFoundError) and isinstance(exc.__cause__, Exception):
        exc = exc.__cause__
    return exc


def is_transient(exc: BaseException) -> bool:
    """Worth a retry: timeouts, dropped or refused connections, 5xx. Never 404/403."""
    exc = _cause(exc)
    if isinstance(exc, (FileNotFoundError, PermissionError, FileAccessError)):
        return False
    status = _status(exc)
    if status is not None:
        return status >= 500 or status == 429
    return bool(_names(exc) & _TRANSIENT)


def access_error(url: str, exc: BaseException) -> FileAccessError:
    """A one-line FileAccessError naming ``url`` and what to check."""
    if isinstance(exc, FileAccessError):
        return exc
    exc = _cause(exc)
    names, status = _names(exc), _status(exc)
    detail = _one_line(exc)
    if isinstance(exc, FileNotFoundError) or status == 404:
        said = detail and detail != url and "url=" not in detail and url not in detail
        why = f"not found ({detail}): check the bucket, the path and the spelling" if said \
            else "not found: check the bucket, the path and the spelling"
    elif isinstance(exc, PermissionError) or status in (401, 403):
        why = "access denied: check the credentials (environment, AWS/gcloud config) and the object's permissions"
    elif names & _TIMEOUTS:
        why = "timed out: check the network and that the server is up"
    elif names & _TRANSIENT:
        why = f"cannot connect ({detail}): check the network, the endpoint (AWS_ENDPOINT_URL) and any proxy"
    else:
        why = f"{type(exc).__name__}: {detail}"
    return FileAccessError(f"cannot read {url}: {why}")


def _retrying(url: str, call, retries: int, backoff: float):
    """Run ``call`` with a few retries and exponential backoff for transient errors only."""
    for attempt in range(retries + 1):
        try:
            return call()
        except RangeNotSupportedError:
            raise
        except Exception as exc:
            if attempt < retries and is_transient(exc):
                time.sleep(backoff * (2 ** attempt))
                continue
            raise access_error(url, exc) from exc


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


class _Changed(Exception):
    pass


def _etag_matches(ours: str | None, theirs: str | None) -> bool:
    if not ours or not theirs:
        return True
    strip = lambda e: e.strip().removeprefix("W/")  # noqa: E731
    return strip(ours) == strip(theirs)


async def _http_range(fs, url: str, start: int, end: int, version: dict) -> bytes:
    """One ranged GET that looks at the status before reading the body, so a server that
    ignores Range is refused without downloading the object. The answer must be of the
    version opened: its ETag, else its Last-Modified, and the total size in Content-Range."""
    session = await fs.set_session()
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Range"] = f"bytes={start}-{end - 1}"
    async with session.get(fs.encode_url(url), headers=headers, **kw) as r:
        fs._raise_not_found_for_status(r, url)
        whole = r.status == 200 and start == 0 and r.content_length == end == version.get("size")
        if r.status != 206 and not whole:  # (a range that is the whole object may come as a 200)
            raise _RangeIgnored()
        if _changed(r.headers, version):
            raise _Changed()
        if r.content_length is not None and r.content_length != end - start:
            raise _RangeIgnored()
        return await r.read()  # (the caller checks the length)


def _changed(headers, version: dict) -> bool:
    """Does an HTTP answer come from another version than the one opened?"""
    etag = version.get("etag")
    if etag:
        return not _etag_matches(etag, headers.get("ETag"))
    total = (headers.get("Content-Range") or "").rpartition("/")[2]
    if total.isdigit() and int(total) != version.get("size"):
        return True
    mtime = version.get("mtime")
    return bool(mtime and headers.get("Last-Modified") and headers.get("Last-Modified") != mtime)


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
        return await resp["Body"].read()
    finally:
        resp["Body"].close()


def _precondition_failed(exc: BaseException) -> bool:
    text = str(exc)
    return _status(exc) == 412 or "PreconditionFailed" in text or "At least one of the pre-conditions" in text


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
        self.info = info
        self.size: int = int(info["size"])
        self.version: dict = {"url": url, **version_of(info)}
        self.retries = RETRIES if retries is None else retries
        self.backoff = BACKOFF if backoff is None else backoff
        self.bytes_fetched = 0
        self.requests = requests
        self._lock = threading.Lock()
        self._kind = {"HTTPFileSystem": "http", "S3FileSystem": "s3", "GCSFileSystem": "gs",
                      "ExtendedGcsFileSystem": "gs"}.get(type(fs).__name__, "")
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
        fs, path = remote_filesystem(url, **storage_options)
        if info is not None and info.get("size") is not None and info.get("type", "file") == "file":
            return cls(url, fs, path, info, retries=retries, backoff=backoff, requests=0)

        def fetch_info() -> dict:
            fs.invalidate_cache(path)
            return fs.info(path)

        meta = _retrying(url, fetch_info, RETRIES if retries is None else retries,
                         BACKOFF if backoff is None else backoff)
        if meta.get("type") == "directory":
            raise RemoteFolderError(f"cannot read {url}: it is a folder or prefix, not a file")
        if meta.get("size") is None:
            raise FileAccessError(f"cannot read {url}: the server does not say the object's size")
        return cls(url, fs, path, meta, retries=retries, backoff=backoff)

    def current_version(self) -> dict:
        """The object's version now (one metadata request)."""
        def fetch_info() -> dict:
            self.fs.invalidate_cache(self.path)
            return self.fs.info(self.path)

        meta = _retrying(self.url, fetch_info, self.retries, self.backoff)
        with self._lock:
            self.requests += 1
        return {"url": self.url, **version_of(meta)}

    def _fetch(self, start: int, end: int) -> bytes:
        etag = self.version.get("etag")
        with _connections:
            try:
                if self._kind == "http":
                    from fsspec.asyn import sync
                    return sync(self.fs.loop, _http_range, self.fs, self.path, start, end, self.version)
                if self._kind == "s3":
                    from fsspec.asyn import sync
                    return sync(self.fs.loop, _s3_range, self.fs, self.path, start, end, etag,
                                self.version.get("version_id"))
                if self._kind == "gs" and self.version.get("generation"):
                    return self.fs.cat_file(self.path, start=start, end=end, generation=self.version["generation"])
                return self.fs.cat_file(self.path, start=start, end=end)
            except _RangeIgnored:
                raise self._range_error() from None
            except _Changed:
                raise self._changed_error() from None
            except Exception as exc:
                if _precondition_failed(exc):
                    raise self._changed_error() from None
                raise

    def _changed_error(self) -> FileChangedError:
        return FileChangedError(f"{self.url} changed on the server since it was opened: open it again")

    def _range_error(self) -> RangeNotSupportedError:
        return RangeNotSupportedError(f"cannot read {self.url}: the server does not support range requests "
                                      "(it sent the whole object); download the file and open the copy")

    def read_at(self, offset: int, size: int) -> bytes:
        """Exactly ``min(size, self.size - offset)`` bytes at ``offset`` (b"" past the end), one request."""
        if offset < 0 or size < 0:
            raise UsageError(f"read_at({offset}, {size}): offset and size must be >= 0")
        end = min(offset + size, self.size)
        if end <= offset:
            return b""
        data = _retrying(self.url, lambda: self._fetch(offset, end), self.retries, self.backoff)
        with self._lock:
            self.requests += 1
            self.bytes_fetched += len(data)
        if len(data) != end - offset:
            if len(data) > end - offset:
                raise self._range_error()
            raise FileAccessError(f"cannot read {self.url}: asked for {end - offset} bytes at {offset}, "
                                  f"got {len(data)}: the object may have changed; reopen it")
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
        data = blocks[0] if len(blocks) == 1 else b"".join(blocks)
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
        from .remote_io import Prefetcher
        return Prefetcher(self)

    def file(self, *, streaming: bool = False):
        """A seekable binary file object over the object (for the GZIP/ZLIB readers)."""
        from .remote_io import BlobFile
        return BlobFile(self, self.stream() if streaming else None)
