"""Plain http:// and https:// objects read straight through the standard library: a HEAD for the
size and version, and each ranged GET read into one bytes object on the calling thread.

fsspec's HTTP filesystem costs a command up to a second of imports (aiohttp) and copies every
body several times on one event loop thread (~300 MB/s); this path costs neither, so ``cat`` of
one record starts fast and an index pass runs at the network's speed. It is used only where
fsspec would send the same requests: no storage options, no user or password in the URL, no
proxy for the host and no .netrc (aiohttp would read them). A HEAD answered with anything but
a 2xx carrying the size goes back to fsspec; a GET redirected is an error. Answers are checked
as :func:`codec.storage.remote._http_range` checks them (:func:`check_answer`, the same exceptions).
"""
from __future__ import annotations

import os
import threading
from urllib.parse import urlsplit

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import http.client

BODY_PIECE = 1 << 20  # a body of unknown length is read at most this much at a time
IDLE_CONNECTIONS = 16  # kept open per host between requests (keep-alive)


class RangeIgnored(Exception):
    """The answer to a ranged read was the whole object."""


class BadAnswer(Exception):
    """The answer to a ranged read is not the bytes asked (the text says how)."""


class DeadlinePassed(Exception):
    """A request did not finish within its deadline."""


class NoAnswer(TimeoutError):
    """The server took a connection or a request and sent nothing back in time."""


class Changed(Exception):
    """The answer comes from another version of the object than the one opened."""


class Unsuitable(Exception):
    """This URL needs fsspec after all (a redirect, no size in the HEAD's answer)."""


class HttpStatusError(OSError):
    """An HTTP error status, with ``status`` and ``message`` as aiohttp's error has them."""

    def __init__(self, status: int, message: str, url: str) -> None:
        super().__init__(f"{status}, message={message!r}, url={url!r}")
        self.status, self.message = status, message


def etag_matches(ours: str | None, theirs: str | None) -> bool:
    """Equal ETags, weak or strong; True when either side has none."""
    if not ours or not theirs:
        return True
    return ours.strip().removeprefix("W/") == theirs.strip().removeprefix("W/")


def changed(headers, version: dict) -> bool:
    """Does an HTTP answer come from another version than the one opened?"""
    etag = version.get("etag")
    if etag:
        return not etag_matches(etag, headers.get("ETag"))
    total = (headers.get("Content-Range") or "").rpartition("/")[2]
    if total.isdigit() and int(total) != version.get("size"):
        return True
    mtime = version.get("mtime")
    return bool(mtime and headers.get("Last-Modified") and headers.get("Last-Modified") != mtime)


def short(text: object, n: int) -> str:
    """``text`` (or an exception's message) on one line, at most ``n`` characters."""
    return " ".join(str(text).split())[:n]


def usable(url: str, storage_options: dict) -> bool:
    """Whether ``url`` can be read here with the requests fsspec would send."""
    if storage_options or "::" in url:
        return False
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return False
    if os.environ.get("NETRC") or os.path.exists(os.path.expanduser("~/.netrc")):
        return False
    if not any(os.environ.get(f"{name}_proxy") or os.environ.get(f"{name.upper()}_PROXY")
               for name in ("http", "https", "all")):
        return True  # (no proxy at all: urllib.request, ~90 ms of imports, not needed to say so)
    import urllib.request

    proxies = urllib.request.getproxies()
    return not (proxies.get(parts.scheme) or proxies.get("all")) or bool(urllib.request.proxy_bypass(parts.hostname))


class _Deadline:
    """Shuts the socket of the connection watched once ``seconds`` pass, so that a blocking
    read ends; ``check()`` then raises DeadlinePassed."""

    def __init__(self, seconds: float) -> None:
        self.conn: http.client.HTTPConnection | None = None
        self._expired = threading.Event()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def _expire(self) -> None:
        self._expired.set()
        sock = getattr(self.conn, "sock", None)
        if sock is not None:
            import socket
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def check(self) -> None:
        if self._expired.is_set():
            if self.conn is not None:
                self.conn.close()
            raise DeadlinePassed()

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


class DirectHttp:
    """The few calls :class:`codec.storage.remote.RemoteFile` makes of a filesystem, over http.client,
    with a pool of kept-alive connections per host (thread-safe)."""

    async_impl = False
    loop = None

    def __init__(self, connect_timeout: float, idle_timeout: float, answer_timeout: float | None = None) -> None:
        """``connect_timeout``: to connect; ``answer_timeout``: for an answer's first byte (default the
        idle timeout); ``idle_timeout``: between the bytes of a body."""
        self.connect_timeout, self.idle_timeout = connect_timeout, idle_timeout
        self.answer_timeout = idle_timeout if answer_timeout is None else answer_timeout
        self._idle: dict[tuple[str, str], list] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _strip_protocol(url: str) -> str:
        return url

    def invalidate_cache(self, path: str) -> None:
        """Nothing is cached here."""

    # -- connections ----------------------------------------------------------
    def _connection(self, scheme: str, netloc: str) -> tuple[http.client.HTTPConnection, bool]:
        """(a connection, whether it was kept from an earlier request)."""
        with self._lock:
            idle = self._idle.get((scheme, netloc))
            if idle:
                return idle.pop(), True
        import http.client

        conn: http.client.HTTPConnection
        if scheme == "https":
            import ssl
            conn = http.client.HTTPSConnection(netloc, timeout=self.connect_timeout,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(netloc, timeout=self.connect_timeout)
        return conn, False

    def _keep(self, scheme: str, netloc: str, conn) -> None:
        with self._lock:
            idle = self._idle.setdefault((scheme, netloc), [])
            if len(idle) < IDLE_CONNECTIONS:
                idle.append(conn)
                return
        conn.close()

    def _request(self, method: str, url: str, headers: dict, watch: _Deadline):
        """(connection, response) of one request under ``watch``; a kept connection the server
        closed meanwhile (or that answers nothing) is replaced by a new one once."""
        import http.client

        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        for attempt in (0, 1):
            conn, kept = self._connection(parts.scheme, parts.netloc)
            watch.conn = conn
            try:
                if conn.sock is None:
                    try:
                        conn.connect()
                    except TimeoutError:
                        raise NoAnswer(f"no connection within {self.connect_timeout:g} s") from None
                watch.check()
                sock = conn.sock  # (an answer that closes the connection takes it from conn, not from the body)
                sock.settimeout(self.answer_timeout)
                conn.request(method, target, headers=headers)
                try:
                    response = conn.getresponse()
                except TimeoutError:
                    raise NoAnswer(f"no answer within {self.answer_timeout:g} s") from None
                sock.settimeout(self.idle_timeout)  # the body: a slow stream has the idle timeout
                return conn, response
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, NoAnswer):
                conn.close()  # a kept connection may have died silently (a NAT forgot it): a new one is asked
                watch.check()
                if not kept or attempt:
                    raise
            except BaseException:
                conn.close()
                watch.check()
                raise
        raise AssertionError("unreachable")

    def _done(self, url: str, conn, response) -> None:
        if response.will_close or not response.isclosed():
            conn.close()
        else:
            parts = urlsplit(url)
            self._keep(parts.scheme, parts.netloc, conn)

    @staticmethod
    def _raise_for_status(url: str, response) -> None:
        if response.status == 404:
            raise FileNotFoundError(url)
        if 300 <= response.status < 400:
            raise BadAnswer(f"with a redirect ({response.status})")
        if response.status >= 400:
            raise HttpStatusError(response.status, response.reason, url)

    # -- what RemoteFile asks -------------------------------------------------
    def info(self, url: str) -> dict:
        """The object's size and version from a HEAD, as fsspec's HTTP ``info`` gives them.
        Unsuitable for any answer but a 2xx with a size, and any failure but a timeout or a
        refused connection: fsspec then asks as it always did (a HEAD refused to a presigned
        GET URL, say, is followed by a GET), and says what is wrong in its words."""
        import http.client

        with _Deadline(2 * self.idle_timeout) as watch:
            try:
                conn, r = self._request("HEAD", url, {"Accept-Encoding": "identity"}, watch)
                r.read()
            except (TimeoutError, ConnectionRefusedError):
                raise
            except (OSError, http.client.HTTPException) as exc:
                raise Unsuitable(f"HEAD failed: {short(exc, 80)}") from exc
        try:
            if not 200 <= r.status < 300:
                raise Unsuitable(f"HEAD answered {r.status}")
            info: dict = {"name": url, "size": _size(r.headers)}
            if info["size"] is None:
                raise Unsuitable("no size in the answer to HEAD")
            if r.headers.get("Content-Type"):
                info["mimetype"] = r.headers["Content-Type"].partition(";")[0]
            if r.headers.get("Accept-Ranges") == "none":
                info["partial"] = False
            info["url"] = url
            for name in ("ETag", "Content-MD5", "Digest", "Last-Modified"):
                if r.headers.get(name):
                    info[name] = r.headers[name]
            return {**info, "type": "file"}
        finally:
            self._done(url, conn, r)

    def read_range(self, url: str, start: int, end: int, version: dict, deadline: float) -> bytes:
        """Bytes ``start`` to ``end`` of the version opened, one GET within ``deadline`` seconds
        (past it the socket is shut and DeadlinePassed raised); at most the bytes asked are read."""
        headers = {"Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity"}
        with _Deadline(deadline) as watch:
            conn, response = self._request("GET", url, headers, watch)
            try:
                data = self._body(url, response, start, end, version)
            except BaseException:
                conn.close()
                watch.check()
                raise
            watch.check()
            self._done(url, conn, response)
            return data

    def _body(self, url: str, r, start: int, end: int, version: dict) -> bytes:
        import http.client

        self._raise_for_status(url, r)
        length = r.length if not r.chunked else None
        check_answer(r.status, r.headers, length, start, end, version)
        try:
            if length is not None:
                return r.read()  # exactly Content-Length bytes, read into one bytes object
            return capped(r.read, end - start)
        except http.client.IncompleteRead as exc:  # as aiohttp's payload error: worth a retry
            raise ConnectionError(f"the server closed the connection after {len(exc.partial)} of "
                                  f"{end - start} bytes") from None


def check_answer(status: int, headers, length: int | None, start: int, end: int, version: dict) -> None:
    """Raise unless the answer to a ranged GET of bytes ``start`` to ``end`` is of the version
    opened and names exactly those bytes, uncompressed (its body is read after this)."""
    whole = status == 200 and start == 0 and length == end == version.get("size")
    if status != 206 and not whole:  # (a range that is the whole object may come as a 200)
        raise RangeIgnored()
    if changed(headers, version):
        raise Changed()
    if status == 206:
        said = headers.get("Content-Range")
        if said is None:
            raise BadAnswer("without a Content-Range")
        if said.partition("/")[0].strip() != f"bytes {start}-{end - 1}":
            raise BadAnswer(f"with other bytes (Content-Range: {short(said, 60)})")
    if headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
        raise BadAnswer(f"compressed (Content-Encoding: {short(headers['Content-Encoding'], 30)})")
    if length is not None and length != end - start:
        raise BadAnswer(f"with Content-Length {length}")


def _size(headers) -> int | None:
    """The object's size from a HEAD's headers, as fsspec reads it; None if they do not say."""
    length, whole = headers.get("Content-Length"), headers.get("Content-Range", "").rpartition("/")[2]
    if length is not None and headers.get("Content-Encoding", "identity") in ("identity", ""):
        return int(length) if length.strip().isdigit() else None
    return int(whole) if whole.strip().isdigit() else None


def capped_steps(want: int):
    """Reading a body of unknown length, as steps (for a blocking or an awaited ``read``): yields
    how many bytes to read next and is sent what came; returns at most ``want`` bytes, and one
    byte more is an error (a server that never ends its body costs the bytes asked, not memory
    without bound)."""
    parts, got = [], 0
    while got < want:
        piece = yield min(want - got, BODY_PIECE)
        if not piece:
            break
        parts.append(piece)
        got += len(piece)
    if got == want and (yield 1):
        raise BadAnswer(f"with a body longer than the {want} bytes asked")
    return parts[0] if len(parts) == 1 else b"".join(parts)


def capped(read, want: int) -> bytes:
    """:func:`capped_steps` with a blocking ``read``."""
    steps = capped_steps(want)
    try:
        size = next(steps)
        while True:
            size = steps.send(read(size))
    except StopIteration as done:
        return done.value
