"""RE2 searches for the filter language's ``~`` operator.

Its own module because both the parser (which checks a pattern when it reads
it, to point at the error) and the compiler (which runs it) need it, and
``re2`` is imported only when a filter uses ``~``.
"""
from __future__ import annotations

import functools
from typing import Callable


class RegexError(Exception):
    """RE2 refused a pattern: why, and the part of the pattern it named."""

    def __init__(self, reason: str, fragment: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fragment = fragment  # the part of the pattern RE2 complained about, or ""


@functools.lru_cache(maxsize=256)
def regex_search(pattern: str) -> Callable[[bytes], bool]:
    """``search(data) -> bool``: does RE2 find ``pattern`` in the UTF-8 bytes ``data``?

    RE2 matches in time linear in the input, so no pattern can hang a
    filter; it has no backreferences or lookaround. Raises RegexError.
    """
    import re2  # ~5 ms to import; only filters with '~' need it

    options = re2.Options()
    options.log_errors = False  # it would print to stderr
    options.never_capture = True
    try:
        compiled = re2.compile(pattern.encode("utf-8", "surrogatepass"), options)
    except re2.error as exc:
        message = exc.args[0] if exc.args else "cannot compile"
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        reason, _, fragment = str(message).partition(": ")
        raise RegexError(reason, fragment) from None
    # The wrapper's search() builds a match object through a generator; the
    # compiled RE2 underneath answers the same question several times faster.
    regexp = getattr(compiled, "_regexp", None)
    unanchored = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if regexp is not None and unanchored is not None and hasattr(regexp, "Match"):
        match = regexp.Match
        return lambda data: match(unanchored, data, 0, len(data))[0][0] >= 0
    search = compiled.search
    return lambda data: search(data) is not None
