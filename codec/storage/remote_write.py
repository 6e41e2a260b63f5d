"""Writing to URLs (``s3://``, ``gs://``, ...): a local temporary file uploaded whole.

:class:`codec.storage.writer.OutputFile` writes a URL target to a temporary file in
the system's temporary folder (``TMPDIR``) and, only when it is complete,
uploads it with the filesystem's ``put_file``: s3fs sends one PutObject below
twice :data:`MULTIPART_CHUNK` and a multipart upload above it, aborted on any
error; gcsfs finalises its upload only at the end. Either way, a failure never
leaves a half-written object under the target name. ``http(s)://`` is read-only.
fsspec is imported only through :func:`codec.storage.remote.remote_filesystem`.
"""
from __future__ import annotations

from typing import Any

from codec.errors import FileAccessError, TFRecordError
from codec.storage.remote import remote_filesystem
from codec.storage.remote_errors import SCHEME, access_error, is_transient
from codec.storage.url_secrets import redact

READ_ONLY_PROTOCOLS = frozenset({"http", "https"})
LOCAL_PROTOCOLS = frozenset({"file", "local"})
# Part size of an S3 multipart upload (s3fs's default); a file under twice this goes in one request.
MULTIPART_CHUNK = 50 * 1024 * 1024


def url_protocol(url: str) -> str:
    """``s3`` for ``s3://bkt/key`` (the last protocol of an fsspec chain); "" for a plain path."""
    m = SCHEME.match(url)
    return m.group(1).lower() if m else ""


def write_error(url: str, exc: BaseException) -> FileAccessError:
    """A one-line FileAccessError for a failed upload or check of ``url`` (see ``access_error``)."""
    text = str(access_error(url, exc))
    shown = redact(url)
    prefix = f"cannot read {shown}"
    if text.startswith(prefix):
        text = f"cannot write {shown}" + text[len(prefix):]
    return FileAccessError(text)


def check_writable_url(url: str) -> None:
    """Refuse, in one line and without any request, a URL that cannot be written."""
    protocol = url_protocol(url)
    if protocol in READ_ONLY_PROTOCOLS:
        raise FileAccessError(f"cannot write {redact(url)}: {protocol}:// URLs are read-only; "
                              "write to a local path or a bucket URL (s3://, gs://, ...)")
    if "::" in url:
        raise FileAccessError(f"cannot write {redact(url)}: chained URLs are read-only; write to the plain URL")


def local_path(url: str) -> str | None:
    """The local path a ``file://`` URL names, or None for any other URL."""
    if url_protocol(url) not in LOCAL_PROTOCOLS or "::" in url:
        return None
    return remote_filesystem(url)[1]


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        return remote_filesystem(url)
    except FileAccessError:
        raise
    except TFRecordError as exc:
        raise FileAccessError(str(exc)) from None


def url_key(url: str) -> tuple[str, str] | None:
    """What names ``url``'s object, for comparing URLs: (protocol, bucket/key).

    ``s3a://b/k`` and ``s3://b//k/`` give the same key. None when the URL's
    filesystem package is missing.
    """
    try:
        fs, path = remote_filesystem(url)
    except TFRecordError:
        return None
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if url_protocol(url) in READ_ONLY_PROTOCOLS:
        return protocol, path
    parts = [p for p in path.split("/") if p]
    return protocol, "/".join(parts)


def remote_exists(url: str) -> bool:
    """True when an object (not a prefix) exists at ``url``; asked afresh (no cached listing).

    A denied or failed request is a one-line FileAccessError: whether the
    object is there cannot be told.
    """
    fs, path = _filesystem(url)
    try:
        fs.invalidate_cache(path)
        info = fs.info(path)
    except FileNotFoundError:
        return False
    except Exception as exc:  # noqa: BLE001 — each store raises its own types: one line names the URL
        raise write_error(url, exc) from None
    return info.get("type") != "directory"


def is_remote_folder(url: str) -> bool:
    """True for a URL ending in ``/``, a bucket, or a prefix that holds objects."""
    if url.endswith("/"):
        return True
    fs, path = _filesystem(url)
    try:
        fs.invalidate_cache(path)
        return bool(fs.isdir(path))
    except Exception:  # noqa: BLE001 — a store that cannot say is not a folder
        return False


def check_bucket(url: str) -> None:
    """Refuse a URL whose bucket does not exist before any work is done (one request).

    A bucket that is not there, or a store that cannot be reached, refuses;
    credentials allowed to write but not to look at the bucket still write.
    """
    check_writable_url(url)
    fs, path = _filesystem(url)
    bucket = path.split("/", 1)[0]
    if not bucket:
        return
    try:
        fs.info(bucket)
    except FileNotFoundError:
        raise FileAccessError(f"cannot write {redact(url)}: the bucket {bucket!r} does not exist "
                              "(or the endpoint is not the one meant)") from None
    except Exception as exc:  # noqa: BLE001 — each store raises its own types: one line names the URL
        if is_transient(exc):
            raise write_error(url, exc) from None


class RemoteTarget:
    """Where a finished temporary file is uploaded: ``url`` through its fsspec filesystem."""

    def __init__(self, url: str) -> None:
        check_writable_url(url)
        if url.endswith("/"):
            raise FileAccessError(f"cannot write {redact(url)}: it names a folder, not a file")
        self.url = url
        self.fs, self.fs_path = _filesystem(url)

    def upload(self, local: str) -> None:
        """Send ``local`` to the URL in one piece; on failure nothing appears there (FileAccessError)."""
        options: dict[str, Any] = {}
        if url_protocol(self.url) in ("s3", "s3a"):
            options["chunksize"] = MULTIPART_CHUNK
        try:
            self.fs.put_file(local, self.fs_path, **options)
        except Exception as exc:  # noqa: BLE001 — each store raises its own types: one line names the URL
            raise write_error(self.url, exc) from None
        try:
            self.fs.invalidate_cache(self.fs_path)
        except Exception:  # noqa: BLE001 — the upload is done; a stale listing cache only costs a re-list
            pass


def temp_folder() -> str:
    """Where the local copy of an upload is written: the system's temporary folder (``TMPDIR``)."""
    import tempfile

    return tempfile.gettempdir()


def describe_local_failure(url: str, exc: OSError) -> str:
    """Why writing the local copy of ``url`` failed, naming the folder it is written in."""
    import errno

    folder = temp_folder()
    if exc.errno == errno.ENOSPC:
        return f"disk full in {folder} while writing the local copy of {redact(url)} (set TMPDIR to a larger disk)"
    return f"cannot write the local copy of {redact(url)} in {folder}: {exc.strerror or exc}"

