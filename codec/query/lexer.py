"""The tokens of the filter expression language, and :class:`ExprError`, the error every stage raises.

Split from the parser so that each reads on its own: this module turns the
text into a flat list of :class:`Token` (numbers, strings with their escapes,
names, backquoted names, operators, punctuation), counting conditions as it
goes so that an over-long expression is refused before it is parsed. The
language itself is described in :mod:`codec.query.filter`.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from codec.errors import UsageError

KEYWORDS = ("and", "or", "not", "in")
MAX_CONDITIONS = 500_000  # some 600 MB while compiling; the time is linear in the length


class ExprError(UsageError):
    """A malformed filter expression; ``position`` is the 0-based character offset.

    ``str()`` reads like ``expected a value after '==' at position 8 (end
    of the expression)``; ``reason`` is the part before "at position".
    """

    def __init__(self, reason: str, position: int, text: str = "", found: str | None = None,
                 note: str = "") -> None:
        message = f"{reason} at position {position}"
        if found == "":
            message += " (end of the expression)"
        elif found is not None:
            message += f", found {found}"
        if note:
            message += f", {note}"
        super().__init__(message)
        self.reason = reason
        self.position = position
        self.text = text


class Token(NamedTuple):
    """One token: its kind, its value, where it starts, and how it is written."""

    kind: str  # num str name qname op kw lparen rparen lbracket rbracket comma end
    value: Any
    pos: int
    text: str  # as written, for messages


# One match per token, after any whitespace; ``other`` is a quote (read by
# read_quoted) or a character that is no token. One regex call per token
# keeps a 200,000-term expression at about a second.
_TOKEN_RE = re.compile(r"""\s*(?:
    (?P<num>-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<name>[^\W\d][\w./-]*)
  | (?P<op>==|!=|<=|>=|[<>~])
  | (?P<punct>[()\[\],])
  | (?P<other>.)
  | (?P<end>\Z)
)""", re.VERBOSE | re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "`": "`",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_PUNCT = {"(": "lparen", ")": "rparen", "[": "lbracket", "]": "rbracket", ",": "comma"}
_PLAIN_QUOTED = {q: re.compile(f"{q}([^{q}\\\\]*){q}") for q in "\"'`"}


def read_quoted(text: str, start: int, quote: str, what: str,
                where: list[int] | None = None) -> tuple[str, int]:
    """The unescaped content of the quoted run at ``start`` and the index after it.

    With ``where``, appends the position in ``text`` of each character of
    the content (to point into a regular expression).
    """
    if where is None and (m := _PLAIN_QUOTED[quote].match(text, start)) is not None:
        return m.group(1), m.end()
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == quote:
            return "".join(out), i + 1
        if where is not None:
            where.append(i)
        if c == "\\":
            if i + 1 >= n:
                break
            e = text[i + 1]
            if e in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[e])
                i += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(e)
            digits = text[i + 2:i + 2 + width] if width else ""
            if width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                code = int(digits, 16)
                if code > 0x10FFFF:
                    raise ExprError(f"escape '\\{e}{digits}' is beyond Unicode", i, text)
                out.append(chr(code))
                i += 2 + width
                continue
            if width:
                raise ExprError(f"expected {width} hex digits after '\\{e}'", i + 2, text)
            raise ExprError(f"unknown escape '\\{e}' in {what} (a literal backslash is '\\\\')", i, text)
        out.append(c)
        i += 1
    raise ExprError(f"unterminated {what} (no closing {quote}) starting", start, text)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with one "end" token; raises :class:`ExprError` at the first bad one."""
    tokens: list[Token] = []
    append = tokens.append
    match = _TOKEN_RE.match
    i, n = 0, len(text)
    conditions = 0  # comparisons, 'in', has() and list items (a ',' for each after the first)
    while True:
        m = match(text, i)
        kind = m.lastgroup
        start = m.start(kind)
        i = m.end()
        if kind == "name":
            word = m.group(kind)
            if word[0].isdigit():  # a digit \d does not take, such as '²'
                raise ExprError(f"unexpected character {word[0]!r}", start, text)
            if word == "in" or word == "has":
                conditions += 1
                if conditions > MAX_CONDITIONS:
                    raise _too_long(start, text)
            append(Token("kw" if word in KEYWORDS else "name", word, start, word))
        elif kind == "op":
            op = m.group(kind)
            conditions += 1
            if conditions > MAX_CONDITIONS:
                raise _too_long(start, text)
            append(Token("op", op, start, op))
        elif kind == "num":
            literal = m.group(kind)
            if i < n and (text[i].isalnum() or text[i] == "_"):
                raise ExprError(f"bad number {text[start:i + 1]!r} (a feature name starting with a digit "
                                "goes in backquotes)", start, text)
            try:
                value = float(literal) if "." in literal or "e" in literal or "E" in literal else int(literal)
            except ValueError:  # more digits than Python converts
                raise ExprError("number too long", start, text) from None
            append(Token("num", value, start, literal))
        elif kind == "punct":
            c = m.group(kind)
            if c == ",":
                conditions += 1
                if conditions > MAX_CONDITIONS:
                    raise _too_long(start, text)
            append(Token(_PUNCT[c], c, start, c))
        elif kind == "end":
            break
        else:
            c = m.group(kind)
            if c in "\"'":
                value, i = read_quoted(text, start, c, "string")
                append(Token("str", value, start, text[start:i]))
            elif c == "`":
                value, i = read_quoted(text, start, "`", "backquoted name")
                if not value:
                    raise ExprError("expected a feature name between the backquotes", start + 1, text)
                append(Token("qname", value, start, text[start:i]))
            elif c == "=":
                raise ExprError("expected '==' to compare (a single '=' is not an operator)", start, text)
            elif text.startswith(("&&", "||"), start):
                word = "and" if c == "&" else "or"
                raise ExprError(f"expected '{word}' instead of '{text[start:start + 2]}'", start, text)
            elif c == "!":
                raise ExprError("expected 'not' or '!=' instead of '!'", start, text)
            else:
                raise ExprError(f"unexpected character {c!r}", start, text)
    append(Token("end", None, n, "the end"))
    return tokens


def _too_long(position: int, text: str) -> ExprError:
    return ExprError(f"filter too long: more than {MAX_CONDITIONS:,} conditions (comparisons, has() and "
                     "list items)", position, text)
