"""Secrets in URLs: a signed URL's query and a password in its user info are used to read, never
shown or stored. :func:`redact` is what messages, log lines, cache entries and reports show
instead of a URL; :func:`redact_text` scrubs every URL inside a line a library wrote."""
from __future__ import annotations

import re

HIDDEN = "…"  # what a redacted query or password shows

_SIGNATURE_PARAMS = re.compile(r"(?i)^(x-amz-|x-goog-)|^(signature|sig|se|sp|sv|sr|st|skoid|sktid|expires|"
                               r"awsaccesskeyid|googleaccessid|token|access_token|key|api_?key|auth|password)$")
# A URL inside free text (a library's message): up to a space, a quote or a bracket
_URL_IN_TEXT = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*::)*[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]{}]+")


def _segments(url: str) -> list[str]:
    """An fsspec chain (``simplecache::https://...``) as its URLs; one URL as itself."""
    return url.split("::")


def carries_credentials(url: str) -> bool:
    """Does ``url`` (any part of a chain) hold a secret: a user and password, or a signed URL's
    signature or token? Such a URL is used, never stored (recent URLs, the app's settings)."""
    from urllib.parse import parse_qsl, urlsplit

    for segment in _segments(url):
        parts = urlsplit(segment)
        if parts.username or parts.password:
            return True
        if any(_SIGNATURE_PARAMS.search(name) for name, _ in parse_qsl(parts.query, keep_blank_values=True)):
            return True
    return False


def without_credentials(url: str) -> str:
    """``url`` (each part of a chain) without its query, fragment and user info: what identifies
    the object for the index cache (the version it records guards against a query that selects
    other content)."""
    from urllib.parse import urlsplit, urlunsplit

    def bare(segment: str) -> str:
        parts = urlsplit(segment)
        if not parts.netloc:
            return urlunsplit((parts.scheme, "", parts.path, "", ""))
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    return "::".join(bare(s) for s in _segments(url))


def redact(url: str) -> str:
    """``url`` as it may be shown: its query, fragment and password (in every part of a chain)
    replaced by ``…``, e.g. ``https://h/p?X-Amz-Signature=abc`` -> ``https://h/p?…``."""
    return "::".join(_redact_one(s) for s in _segments(url))


def _redact_one(segment: str) -> str:
    if "://" not in segment:
        return segment
    scheme, _, rest = segment.partition("://")
    rest, hash_, fragment = rest.partition("#")
    rest, question, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:{HIDDEN}@{host}"
    return (f"{scheme}://{netloc}{slash}{path}" + (f"?{HIDDEN}" if question and query else question)
            + (f"#{HIDDEN}" if hash_ and fragment else hash_))


def shown_path(path: str) -> str:
    """A path or URL as reports show it: a local path as it is, a URL redacted."""
    return redact(path) if "://" in path else path


class RedactingStream:
    """A text stream (stderr) that redacts every URL written to it, and the secrets of ``urls``
    wherever they appear: what the command line writes there cannot leak a signature."""

    def __init__(self, stream, urls: list[str]) -> None:
        self._stream, self._urls = stream, list(urls)

    def write(self, text: str) -> int:
        self._stream.write(redact_text(text, self._urls))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def redact_text(text: str, urls: tuple[str, ...] | list[str] = ()) -> str:
    """``text`` with every URL in it redacted, and the secrets of ``urls`` (their queries and
    passwords, as given) hidden wherever they appear alone (a library quoting a query)."""
    for url in urls:
        for secret in _secrets(url):
            text = text.replace(secret, HIDDEN)
    return _URL_IN_TEXT.sub(_redact_match, text) if "://" in text else text


def _redact_match(m: re.Match) -> str:
    url = m.group(0)
    core = url.rstrip(":,;.!")  # punctuation after a URL in a sentence is the sentence's
    return redact(core) + url[len(core):]


def _secrets(url: str) -> list[str]:
    """The query strings and passwords of ``url``'s parts, longest first (at least 4 characters:
    shorter ones would hide ordinary words)."""
    from urllib.parse import urlsplit

    found = []
    for segment in _segments(url):
        parts = urlsplit(segment)
        found += [s for s in (parts.query, parts.password or "", parts.fragment) if len(s) >= 4]
    return sorted(found, key=len, reverse=True)
