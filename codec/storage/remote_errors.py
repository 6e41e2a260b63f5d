"""How long a store may take, and what its failures mean: the timeouts (from the environment), the
errors a remote read raises, whether a failure is worth a retry, and the one line that names the
URL (redacted) and what to check. :mod:`codec.storage.remote` and the listing and upload modules
raise through these."""
from __future__ import annotations

import os
import re

from codec.errors import FileAccessError, UsageError
from codec.storage.url_secrets import redact, redact_text

__all__ = ["TIMEOUT_NAMES", "TRANSIENT_NAMES", "BadAnswerError", "RangeNotSupportedError", "RemoteFolderError",
           "RemoteTimeoutError", "SCHEME", "access_error", "class_names", "deadline_for", "http_status", "is_transient",
           "answer_timeout", "no_answer", "one_line", "real_cause", "refused", "timeouts"]

IDLE_TIMEOUT = 30.0  # seconds without a byte before a read is given up (TFRLENS_REMOTE_TIMEOUT)
ANSWER_TIMEOUT = 10.0  # seconds to connect, and for a request's first byte (TFRLENS_REMOTE_FIRST_BYTE): long enough
# for lost SYNs (resent at 1 and 3 s) and a cold server; a stopped server is refused at once, not after it
MIN_RATE = 64 << 10  # bytes per second a read may not fall below, on average (TFRLENS_REMOTE_MIN_RATE)

SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*::)*([A-Za-z][A-Za-z0-9+.\-]+)://")

TRANSIENT_NAMES = frozenset({
    "TimeoutError", "ConnectionError", "FSTimeoutError", "ClientConnectionError", "ClientOSError",
    "ServerDisconnectedError", "ClientPayloadError", "ServerTimeoutError", "EndpointConnectionError",
    "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError", "IncompleteReadError",
})
TIMEOUT_NAMES = frozenset({"TimeoutError", "FSTimeoutError", "ServerTimeoutError", "ConnectTimeoutError",
                       "ReadTimeoutError"})
NO_ANSWER_NAMES = frozenset({"NoAnswer", "ConnectTimeoutError"})  # nothing came back at all: the server, not the stream


class RangeNotSupportedError(FileAccessError):
    """The server answered a ranged read with the whole object (or a wrong length)."""


class RemoteFolderError(FileAccessError):
    """A URL names a folder or prefix, not one object (open it as a shard set)."""


class RemoteTimeoutError(FileAccessError):
    """A read saw no byte for the idle timeout, or did not finish by its deadline."""


class BadAnswerError(FileAccessError):
    """The answer to a ranged read is not the bytes asked: its Content-Range names other bytes or
    none, its Content-Length another size, or its body is longer or shorter than asked."""


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{name}={text!r}: expected a positive number")
    return value


def timeouts() -> tuple[float, float]:
    """(idle timeout in seconds, minimum rate in bytes per second), from the environment
    (TFRLENS_REMOTE_TIMEOUT, TFRLENS_REMOTE_MIN_RATE) or the defaults."""
    return _env_number("TFRLENS_REMOTE_TIMEOUT", IDLE_TIMEOUT), _env_number("TFRLENS_REMOTE_MIN_RATE", MIN_RATE)


def answer_timeout() -> float:
    """Seconds a server may take to accept a connection, and to start answering a request
    (TFRLENS_REMOTE_FIRST_BYTE, never more than the idle timeout): a server that is down or hung
    fails in seconds; a slow stream still has TFRLENS_REMOTE_TIMEOUT between its bytes."""
    return min(_env_number("TFRLENS_REMOTE_FIRST_BYTE", ANSWER_TIMEOUT), timeouts()[0])


def no_answer(exc: BaseException) -> bool:
    """Whether a server accepted nothing or answered nothing within :func:`answer_timeout`."""
    return bool(class_names(real_cause(exc)) & NO_ANSWER_NAMES)


def refused(exc: BaseException) -> bool:
    """Whether the connection was refused (nothing listens there: the server is down); not worth a retry."""
    import errno

    stack: list = [exc]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED:
            return True
        kwargs = getattr(e, "kwargs", None)  # botocore keeps the cause here
        stack += [e.__cause__, e.__context__, getattr(e, "os_error", None),
                  kwargs.get("error") if isinstance(kwargs, dict) else None, *e.args]
    return False


def deadline_for(size: int) -> float:
    """Seconds one request for ``size`` bytes may take in all: the idle timeout, plus the time
    the bytes take at the minimum rate."""
    idle, rate = timeouts()
    return idle + size / rate


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


def class_names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def http_status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return code if isinstance(code, int) else None
    return None


def real_cause(exc: BaseException) -> BaseException:
    """fsspec's HTTP info turns every failure (refused connection included) into a
    FileNotFoundError raised from the real one: look at that instead."""
    while isinstance(exc, FileNotFoundError) and isinstance(exc.__cause__, Exception):
        exc = exc.__cause__
    return exc


def is_transient(exc: BaseException) -> bool:
    """Worth a retry: timeouts, dropped or refused connections, 5xx. Never 404/403."""
    exc = real_cause(exc)
    if isinstance(exc, (FileNotFoundError, PermissionError, FileAccessError)):
        return False
    status = http_status(exc)
    if status is not None:
        return status >= 500 or status == 429
    return bool(class_names(exc) & TRANSIENT_NAMES)


def access_error(url: str, exc: BaseException, span: tuple[int, int] | None = None,
                 seconds: float = 0.0) -> FileAccessError:
    """A one-line FileAccessError naming ``url`` (redacted) and what to check; ``span``: the
    bytes a read that timed out asked for, and ``seconds`` it tried for."""
    if isinstance(exc, FileAccessError):
        return exc
    exc = real_cause(exc)
    names, status = class_names(exc), http_status(exc)
    shown = redact(url)
    detail = redact_text(one_line(exc), [url])
    if isinstance(exc, FileNotFoundError) or status == 404:
        said = detail and "url=" not in detail and shown not in detail and "://" not in detail
        why = f"not found ({detail}): check the bucket, the path and the spelling" if said \
            else "not found: check the bucket, the path and the spelling"
    elif isinstance(exc, PermissionError) or status in (401, 403):
        why = "access denied: check the credentials (environment, AWS/gcloud config) and the object's permissions"
    elif status is not None and (status >= 500 or status == 429):
        reason = getattr(exc, "message", "") or ""
        why = f"the server answered {status}{' ' + reason if isinstance(reason, str) and reason else ''}" \
              ": try again later"
    elif names & NO_ANSWER_NAMES:
        where = shown if span is None else f"{shown} bytes {span[0]}-{span[1] - 1}"
        return RemoteTimeoutError(f"cannot read {where}: no answer for {answer_timeout():g} s "
                                  "(TFRLENS_REMOTE_FIRST_BYTE): check the network and that the server is up")
    elif names & TIMEOUT_NAMES:
        idle = timeouts()[0]
        if span is not None:
            return RemoteTimeoutError(f"timed out reading {shown} bytes {span[0]}-{span[1] - 1} after "
                                      f"{seconds:.0f} s: no data for {idle:g} s (TFRLENS_REMOTE_TIMEOUT); "
                                      "check the network and that the server is up")
        why = f"timed out (no answer for {idle:g} s, TFRLENS_REMOTE_TIMEOUT): check the network and that the " \
              "server is up"
    elif names & TRANSIENT_NAMES:
        return FileAccessError(_cannot_connect(url, exc, detail))
    else:
        why = f"{type(exc).__name__}: {detail}"
    where = shown if span is None else f"{shown} bytes {span[0]}-{span[1] - 1}"
    return FileAccessError(f"cannot read {where}: {why}")


def _cannot_connect(url: str, exc: BaseException, detail: str) -> str:
    """What a connection failure says for the URL's protocol: the host and why for HTTP, the
    endpoint variable to check for S3."""
    inner = url.split("::")[-1]  # a chain connects to its last URL's host
    m = SCHEME.match(inner)
    protocol = m.group(1).lower() if m else ""
    if protocol in ("http", "https"):
        connecting = bool(class_names(exc) & {"ClientConnectorError", "ConnectionRefusedError", "gaierror"})
        verb = "cannot connect to" if connecting else "lost the connection to"
        return f"{verb} {redact(url)} ({_why_not_connected(exc, detail)}): " \
               "check the URL, the network, that the server is up and any proxy"
    hint = "the endpoint (AWS_ENDPOINT_URL), " if protocol in ("s3", "s3a") else ""
    return f"cannot read {redact(url)}: cannot connect ({detail}): check the network, {hint}any proxy"


def _why_not_connected(exc: BaseException, detail: str) -> str:
    """"connection refused", "connection reset", ... from the OS error under a client's error."""
    import errno

    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            break
        code = getattr(seen, "errno", None) or getattr(getattr(seen, "os_error", None), "errno", None)
        if code:
            return {errno.ECONNREFUSED: "connection refused", errno.ECONNRESET: "connection reset",
                    errno.EHOSTUNREACH: "host unreachable", errno.ENETUNREACH: "network unreachable",
                    errno.ETIMEDOUT: "timed out"}.get(code, os.strerror(code).lower())
        seen = seen.__cause__ or seen.__context__
    if "ServerDisconnectedError" in class_names(exc):
        return "the server closed the connection"
    return detail or type(exc).__name__
