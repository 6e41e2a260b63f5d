"""Loopback servers for the remote-storage tests: a range-serving HTTP server that counts what
it sends, and a moto S3 server with a fake-credential environment. Both start on port 0 and
stop cleanly (no thread left behind)."""
from __future__ import annotations

import email.utils
import logging
import os
import re
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlsplit

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class ServeStats:
    """Requests and body bytes served (thread-safe, resettable)."""
    requests: int = 0
    bytes: int = 0
    ranges: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def begin(self) -> None:
        """Count a request as it arrives, so a client that saw the answer sees it counted."""
        with self._lock:
            self.requests += 1

    def add_range(self, start: int, end: int) -> None:
        with self._lock:
            self.ranges.append((start, end))

    def sending(self, n: int) -> None:
        """Count body bytes just before they are written (so a client never reads uncounted bytes)."""
        with self._lock:
            self.bytes += n

    def reset(self) -> None:
        with self._lock:
            self.requests, self.bytes = 0, 0
            self.ranges.clear()


HOSTILE = ("endless", "chunked", "drip", "shifted", "lying", "5xx")


class RangeServer:
    """Serves files under ``root`` at ``url``; ``ranges=False`` makes it ignore Range headers,
    ``etag=False`` drops the ETag, ``latency`` delays every request, ``drop_first=n`` closes the
    connection without an answer on the next n GETs, and names in ``deny`` answer 403.
    ``hold()`` makes every request wait (counted, unanswered) until ``release()``: what a
    test uses to tell "read in the background" from "read on this thread" without a clock.

    ``hostile`` makes every ranged GET misbehave (HEAD stays honest): ``endless`` a 206 with a
    valid Content-Range, no Content-Length and a body that never ends; ``chunked`` the same in
    endless chunks; ``drip`` one byte of the right body every ``drip`` seconds; ``shifted`` honest
    headers over the bytes ``shift`` further on; ``lying`` the bytes from offset 0 with a
    Content-Range saying so; ``5xx`` a 503 naming the request (query included) in its body."""

    def __init__(self, root: str | os.PathLike, *, ranges: bool = True, etag: bool = True, latency: float = 0.0,
                 drop_first: int = 0, deny: tuple[str, ...] = (), hostile: str = "", drip: float = 2.0,
                 shift: int = 4099):
        if hostile and hostile not in HOSTILE:
            raise ValueError(f"hostile must be one of {HOSTILE}")
        self.root = Path(root).resolve()
        self.ranges, self.etag, self.latency = ranges, etag, latency
        self.drop_first, self.deny = drop_first, deny
        self.hostile, self.drip, self.shift = hostile, drip, shift
        self.down = False  # set to drop every GET from now on
        self._open = threading.Event()
        self._open.set()
        self.stats = ServeStats()
        self.stopped = threading.Event()  # ends the hostile bodies still being sent
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._connections: set = set()  # the open connections (kill() ends them)

    def hold(self) -> None:
        """Answer no request until :meth:`release` (each still counted as it arrives)."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url_for(self, name: str) -> str:
        return f"{self.url}/{name}"

    def start(self) -> RangeServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def do_HEAD(self) -> None:
                self._serve(head=True)

            def do_GET(self) -> None:
                self._serve(head=False)

            def _send_empty(self, code: int, extra: dict | None = None) -> None:
                self.send_response(code)
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _serve(self, head: bool) -> None:
                server.stats.begin()
                server._open.wait(30)
                if server.latency:
                    time.sleep(server.latency)
                rel = unquote(urlsplit(self.path).path).lstrip("/")
                if not head and server.drop_first > 0:
                    server.drop_first -= 1
                    self.close_connection = True
                    return
                if not head and server.down:  # the network went away: every GET dropped
                    self.close_connection = True
                    return
                if rel in server.deny:
                    self._send_empty(403)
                    return
                target = (server.root / rel).resolve()
                if server.root not in target.parents or not target.is_file():
                    self._send_empty(404)
                    return
                st = target.stat()
                size = st.st_size
                start, end, partial = 0, size - 1, False
                m = _RANGE.match(self.headers.get("Range", "")) if server.ranges else None
                if self.headers.get("Range") and server.ranges and m is None:
                    self._send_empty(416, {"Content-Range": f"bytes */{size}"})
                    return
                if m and m.group(1) == m.group(2) == "":
                    self._send_empty(416, {"Content-Range": f"bytes */{size}"})
                    return
                if m:
                    a, b = m.groups()
                    if a == "":
                        start, end = max(0, size - int(b)), size - 1
                        if int(b) == 0:
                            self._send_empty(416, {"Content-Range": f"bytes */{size}"})
                            return
                    else:
                        start, end = int(a), min(int(b) if b else size - 1, size - 1)
                        if start >= size or (b and int(b) < start):
                            self._send_empty(416, {"Content-Range": f"bytes */{size}"})
                            return
                    partial = True
                    server.stats.add_range(start, end)
                if partial and not head and server.hostile:
                    self._hostile(target, start, end, size)
                    return
                self.send_response(206 if partial else 200)
                if partial:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.send_header("Accept-Ranges", "bytes" if server.ranges else "none")
                self.send_header("Content-Length", str(end - start + 1))
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
                if server.etag:
                    self.send_header("ETag", f'"{size:x}-{st.st_mtime_ns:x}"')
                self.end_headers()
                if not head:
                    try:  # in 1 MiB pieces by sendfile (as a real server would: no copy through Python)
                        with open(target, "rb") as f:
                            pos, left = start, end - start + 1
                            while left > 0:
                                n = min(left, 1 << 20)
                                server.stats.sending(n)
                                sent = self.connection.sendfile(f, pos, n)
                                if not sent:
                                    break
                                pos += sent
                                left -= sent
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True

            def _hostile(self, target: Path, start: int, end: int, size: int) -> None:
                mode = server.hostile
                self.close_connection = True
                if mode == "5xx":
                    body = f"upstream failed for {self.path}".encode()
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                data = target.read_bytes()
                if mode == "lying":
                    start, end = 0, end - start
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                if mode == "chunked":
                    self.send_header("Transfer-Encoding", "chunked")
                elif mode != "endless":
                    self.send_header("Content-Length", str(end - start + 1))
                self.end_headers()
                try:
                    if mode in ("endless", "chunked"):
                        block = bytes(64 << 10)
                        frame = b"%x\r\n%s\r\n" % (len(block), block) if mode == "chunked" else block
                        while not server.stopped.is_set():  # until the client hangs up
                            server.stats.sending(len(block))
                            self.wfile.write(frame)
                    elif mode == "drip":
                        for k in range(start, end + 1):
                            self.wfile.write(data[k:k + 1])
                            self.wfile.flush()
                            if server.stopped.wait(server.drip):
                                break
                    else:
                        at = (start + server.shift) % size if mode == "shifted" else start
                        body = (data[at:] + data)[:end - start + 1]
                        server.stats.sending(len(body))
                        self.wfile.write(body)
                except OSError:  # the client hung up
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="range-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self._open.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def kill(self) -> None:
        """Stop as a server process that dies: every open connection is closed too (stop() lets
        kept-alive connections go on being served), and the port refuses connections from now on."""
        import socket

        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.stop()

    def __enter__(self) -> RangeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def range_server(root: str | os.PathLike, **options) -> Iterator[RangeServer]:
    """A started RangeServer serving ``root``, stopped on exit."""
    with RangeServer(root, **options) as srv:
        yield srv


@contextmanager
def moto_server() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 (port 0); yields its endpoint URL."""
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    try:
        host, port = srv.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        srv.stop()


def s3_env(endpoint: str, scratch: str | os.PathLike) -> dict[str, str]:
    """Fake credentials and the endpoint, so s3fs/botocore talk only to ``endpoint``."""
    none = os.fspath(Path(scratch) / "no-aws-config")
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


S3_UNSET = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "HTTP_PROXY", "HTTPS_PROXY",
            "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


def use_s3_env(monkeypatch, endpoint: str, scratch: str | os.PathLike) -> None:
    """Apply ``s3_env`` through pytest's monkeypatch (undone after the test)."""
    for key in S3_UNSET:
        monkeypatch.delenv(key, raising=False)
    for key, value in s3_env(endpoint, scratch).items():
        monkeypatch.setenv(key, value)


def make_bucket(files: dict[str, str | os.PathLike] | None = None) -> tuple[object, str]:
    """A fresh bucket (random name) holding ``files`` ({key: local path}); returns (s3fs, bucket).
    Call with the S3 environment applied."""
    import s3fs
    fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
    bucket = f"b{uuid.uuid4().hex[:12]}"
    fs.mkdir(bucket)
    for key, local in (files or {}).items():
        fs.put_file(os.fspath(local), f"{bucket}/{key}")
    return fs, bucket


def copy_into(root: str | os.PathLike, local: str | os.PathLike, name: str) -> str:
    """Copy ``local`` into a served folder as ``name``; return its path there."""
    dest = Path(root) / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(local, dest)
    return os.fspath(dest)
