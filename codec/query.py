"""The filter expression language: pick records by their features and properties.

An expression is a condition over one record::

    label == 3
    image/height > 100 and image/width > 100
    "cat" in image/object/class/text
    len(image/object/bbox/xmin) >= 5 or not has(image/encoded)
    text ~ "(?i)rose"
    status != "ok" or size > 1e5
    kind == "sequence_example" and len(frames) > 10
    `my feature` in [1, 2, 3] and `status` == "draft"

Operands
    numbers (``3``, ``-2``, ``0.5``, ``1e5``); strings in double or single
    quotes with backslash escapes (``\\n``, ``\\t``, ``\\\\``, ``\\"``, ``\\'``,
    ``\\xNN``, ``\\uNNNN``); lists ``[1, 2, "a"]`` (after ``in`` only);
    feature names; record properties; ``len(feature)``.
Feature names
    written bare when they start with a letter or ``_`` and hold only letters,
    digits, ``_``, ``/``, ``.`` and ``-`` (``image/object/bbox/xmin``).
    Any other name, or one spelled like a property or keyword, goes in
    backquotes: ```my feature```, ```status```, ```and```; a backquoted name
    is always a feature (write ``\\``` for a backquote inside it).
Record properties
    ``index`` (position in the file), ``offset`` (byte offset of its header),
    ``size`` (length of its data in bytes), ``status`` (``"ok"``,
    ``"length_crc"``, ``"data_crc"``, ``"truncated"``) and ``kind``
    (``"example"``, ``"sequence_example"``, ``"raw"``).
Conditions
    comparisons ``==`` ``!=`` ``<`` ``<=`` ``>`` ``>=``; ``a in b`` and
    ``a not in b`` (membership: some value of ``a`` equals some value of
    ``b``, not substring); ``x ~ "regex"`` (an unanchored RE2 search of
    each text value as UTF-8: linear time, no backreferences or lookaround;
    ``(?i)`` for case-insensitive); ``has(f)``
    (the record has feature ``f``, even with no values); ``and``, ``or``,
    ``not``, parentheses. ``not`` binds tighter than ``and``, ``and`` tighter
    than ``or``. Comparisons do not chain (write ``1 < x and x < 5``).
    An empty expression matches every record.
Semantics
    A feature is a list of values, and a comparison holds when *any* value
    satisfies it: ``x == 3`` is true if some value of ``x`` is 3, ``x > 3`` if
    some value is greater than 3. ``x != 3`` is exactly ``not (x == 3)``, so it
    holds for records without ``x`` too. A missing feature has no values, so
    every other comparison with it is false; ``len()`` of it is 0. Strings
    compare with bytes values as UTF-8 (bytewise order for ``<``); numbers
    compared with a float feature are rounded to float32 first, so
    ``score == 0.1`` finds a stored 0.1. Values of different types (a number
    and bytes, a string and an int64) are simply unequal and unordered: such
    a comparison is false, never an error. In a SequenceExample a name is
    looked up in the context first, then in the feature lists, where it stands
    for the values of all steps; ``len()`` of a feature list is its number of
    steps. A raw record has no features.

``compile_filter(text)`` parses an expression once and returns a
:class:`Filter`; a malformed expression raises :class:`ExprError` (a
:class:`UsageError`) whose message names the 0-based position and what was
expected there, as does one nested more than ``MAX_DEPTH`` deep or with more
than ``MAX_CONDITIONS`` conditions. Compiling is linear in the length.
Evaluation (:meth:`Filter.matches`) never raises.
``filter_iter`` runs a filter over a whole file as a generator of progress.
A feature name no record has is most likely misspelt: :class:`FeatureCheck`
(fed by ``filter_iter(..., check=)``) and :func:`missing_features` find such
names over a whole file and suggest the closest keys.
"""
from __future__ import annotations

import difflib
import functools
import gc
import re
import struct
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from .decode import DecodedRecord, RecordKind
from .errors import UsageError
from .framing import RecordStatus
from .record_pass import iter_records, quick_decode
from .scan import IndexProgress

__all__ = ["ExprError", "FeatureCheck", "Filter", "MissingFeature", "PROPERTIES", "compile_filter",
           "feature_check_iter", "filter_iter", "format_error", "missing_features"]

PROPERTIES = ("index", "offset", "size", "status", "kind")
KEYWORDS = ("and", "or", "not", "in")
FUNCTIONS = ("len", "has")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
PROGRESS_EVERY = 4096
MAX_CONDITIONS = 500_000  # some 600 MB while compiling; the time is linear in the length
MAX_DEPTH = 100  # nested parentheses and 'not's; deeper would exhaust Python's stack
KEY_SAMPLE = 1000  # records whose feature keys are collected to suggest a misspelt name

_OPERATOR_LIST = "==, !=, <, <=, >, >=, ~, in or not in"


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


class _RegexError(Exception):
    def __init__(self, reason: str, fragment: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fragment = fragment  # the part of the pattern RE2 complained about, or ""


@functools.lru_cache(maxsize=256)
def _regex_search(pattern: str) -> Callable[[bytes], bool]:
    """``search(data) -> bool``: does RE2 find ``pattern`` in the UTF-8 bytes ``data``?

    RE2 matches in time linear in the input, so no pattern can hang a
    filter; it has no backreferences or lookaround. Raises _RegexError.
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
        raise _RegexError(reason, fragment) from None
    # The wrapper's search() builds a match object through a generator; the
    # compiled RE2 underneath answers the same question several times faster.
    regexp = getattr(compiled, "_regexp", None)
    unanchored = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if regexp is not None and unanchored is not None and hasattr(regexp, "Match"):
        match = regexp.Match
        return lambda data: match(unanchored, data, 0, len(data))[0][0] >= 0
    search = compiled.search
    return lambda data: search(data) is not None


def format_error(text: str, exc: ExprError) -> str:
    """Two lines: the expression, and a caret under the error's position."""
    line = text.replace("\n", " ").replace("\t", " ")
    return f"{line}\n{' ' * min(exc.position, len(line))}^"


# ---------------------------------------------------------------- tokens

class _Token(NamedTuple):
    kind: str  # num str name qname op kw lparen rparen lbracket rbracket comma end
    value: Any
    pos: int
    text: str  # as written, for messages


# One match per token, after any whitespace; ``other`` is a quote (read by
# _read_quoted) or a character that is no token. One regex call per token
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


def _read_quoted(text: str, start: int, quote: str, what: str,
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


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
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
            append(_Token("kw" if word in KEYWORDS else "name", word, start, word))
        elif kind == "op":
            op = m.group(kind)
            conditions += 1
            if conditions > MAX_CONDITIONS:
                raise _too_long(start, text)
            append(_Token("op", op, start, op))
        elif kind == "num":
            literal = m.group(kind)
            if i < n and (text[i].isalnum() or text[i] == "_"):
                raise ExprError(f"bad number {text[start:i + 1]!r} (a feature name starting with a digit "
                                "goes in backquotes)", start, text)
            try:
                value = float(literal) if "." in literal or "e" in literal or "E" in literal else int(literal)
            except ValueError:  # more digits than Python converts
                raise ExprError("number too long", start, text) from None
            append(_Token("num", value, start, literal))
        elif kind == "punct":
            c = m.group(kind)
            if c == ",":
                conditions += 1
                if conditions > MAX_CONDITIONS:
                    raise _too_long(start, text)
            append(_Token(_PUNCT[c], c, start, c))
        elif kind == "end":
            break
        else:
            c = m.group(kind)
            if c in "\"'":
                value, i = _read_quoted(text, start, c, "string")
                append(_Token("str", value, start, text[start:i]))
            elif c == "`":
                value, i = _read_quoted(text, start, "`", "backquoted name")
                if not value:
                    raise ExprError("expected a feature name between the backquotes", start + 1, text)
                append(_Token("qname", value, start, text[start:i]))
            elif c == "=":
                raise ExprError("expected '==' to compare (a single '=' is not an operator)", start, text)
            elif text.startswith(("&&", "||"), start):
                word = "and" if c == "&" else "or"
                raise ExprError(f"expected '{word}' instead of '{text[start:start + 2]}'", start, text)
            elif c == "!":
                raise ExprError("expected 'not' or '!=' instead of '!'", start, text)
            else:
                raise ExprError(f"unexpected character {c!r}", start, text)
    append(_Token("end", None, n, "the end"))
    return tokens


def _too_long(position: int, text: str) -> ExprError:
    return ExprError(f"filter too long: more than {MAX_CONDITIONS:,} conditions (comparisons, has() and "
                     "list items)", position, text)


# ---------------------------------------------------------------- syntax tree

@dataclass(frozen=True)
class Lit:
    value: Any  # int, float or str


@dataclass(frozen=True)
class ListLit:
    values: tuple


@dataclass(frozen=True)
class Feature:
    name: str
    pos: int = field(default=-1, compare=False, repr=False)  # where the expression names it


@dataclass(frozen=True)
class Prop:
    name: str


@dataclass(frozen=True)
class Len:
    feature: Feature


@dataclass(frozen=True)
class Has:
    feature: Feature


@dataclass(frozen=True)
class Compare:
    op: str
    left: Any
    right: Any


@dataclass(frozen=True)
class Match:
    operand: Any
    pattern: str


@dataclass(frozen=True)
class Not:
    item: Any


@dataclass(frozen=True)
class And:
    items: tuple


@dataclass(frozen=True)
class Or:
    items: tuple


@dataclass(frozen=True)
class Always:
    pass


class _Parser:
    """Recursive descent over the token list; every error names a position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.tokens.append(self.tokens[-1])
        self.i = 0
        self.depth = 0  # parentheses and 'not's open around the current token

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[self.i + ahead]  # the list ends with two "end" tokens: ahead may be 1

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def error(self, reason: str, tok: _Token, show_found: bool = True, note: str = "") -> ExprError:
        found = None if not show_found else ("" if tok.kind == "end" else repr(tok.text))
        return ExprError(reason, tok.pos, self.text, found, note)

    def is_kw(self, word: str, ahead: int = 0) -> bool:
        tok = self.tokens[self.i + ahead]
        return tok.value == word and tok.kind == "kw"

    def at_comparison(self) -> bool:
        return self.peek().kind == "op" or self.is_kw("in") or (self.is_kw("not") and self.is_kw("in", 1))

    def parse(self):
        if self.peek().kind == "end":
            return Always()
        node = self.parse_or(None)
        tok = self.peek()
        if tok.kind == "rparen":
            raise self.error("unmatched ')'", tok, show_found=False)
        if self.at_comparison():
            raise self.error("expected 'and', 'or' or the end (comparisons do not chain: write "
                             "'a < x and x < b')", tok)
        if tok.kind != "end":
            raise self.error("expected 'and', 'or' or the end of the expression", tok)
        return node

    def parse_or(self, after: str | None):
        items = [self.parse_and(after)]
        while self.is_kw("or"):
            self.take()
            items.append(self.parse_and("or"))
        return items[0] if len(items) == 1 else Or(tuple(items))

    def parse_and(self, after: str | None):
        items = [self.parse_not(after)]
        while self.is_kw("and"):
            self.take()
            items.append(self.parse_not("and"))
        return items[0] if len(items) == 1 else And(tuple(items))

    def parse_not(self, after: str | None):
        if self.is_kw("not"):
            self.enter(self.take())
            node = Not(self.parse_not("not"))
            self.depth -= 1
            return node
        return self.parse_condition(after)

    def enter(self, tok: _Token) -> None:
        """One more level of nesting; too many would exhaust Python's stack."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested too deeply (more than {MAX_DEPTH} levels of parentheses "
                             "and 'not')", tok, show_found=False)

    def parse_condition(self, after: str | None):
        tok = self.peek()
        if tok.kind in ("end", "rparen", "rbracket", "comma", "op", "kw"):
            where = f" after '{after}'" if after else ""
            raise self.error(f"expected a condition{where}", tok)
        if tok.kind == "lparen":
            return self.parse_group()
        if tok.kind == "name" and tok.value == "has" and self.peek(1).kind == "lparen":
            self.take()
            node = Has(self.parse_call_argument("has"))
            if self.at_comparison():
                raise self.error("has() is already a condition and cannot be compared", self.peek())
            return node
        left = self.parse_operand(after)
        return self.parse_comparison_rest(left)

    def parse_group(self):
        """``( condition )``."""
        open_tok = self.take()
        self.enter(open_tok)
        inner = self.parse_or("(")
        self.depth -= 1
        close = self.peek()
        if close.kind != "rparen":
            if close.kind == "end":
                raise self.error("expected ')'", close, note=f"to close the '(' at position {open_tok.pos}")
            raise self.error("expected ')', 'and' or 'or'", close,
                             note=f"to close the '(' at position {open_tok.pos}")
        self.take()
        if self.at_comparison():
            raise self.error("a condition in parentheses cannot be compared; compare a feature, "
                             "property or value", self.peek())
        return inner

    def parse_call_argument(self, fn: str) -> Feature:
        open_tok = self.take()  # '('
        arg = self.peek()
        if arg.kind == "qname" or (arg.kind == "name" and arg.value not in PROPERTIES):
            self.take()
            feature = Feature(arg.value, arg.pos)
        elif arg.kind == "name":
            raise self.error(f"{fn}() takes a feature name, and {arg.value!r} is a record property "
                             f"(write `{arg.value}` for a feature of that name)", arg, show_found=False)
        else:
            raise self.error(f"expected a feature name in {fn}()", arg)
        close = self.peek()
        if close.kind != "rparen":
            raise self.error("expected ')'", close, note=f"to close the '{fn}(' at position {open_tok.pos}")
        self.take()
        return feature

    def parse_operand(self, after: str | None):
        tok = self.peek()
        if tok.kind in ("num", "str"):
            self.take()
            return Lit(tok.value)
        if tok.kind == "qname":
            self.take()
            return Feature(tok.value, tok.pos)
        if tok.kind == "name":
            self.take()
            if tok.value in FUNCTIONS and self.peek().kind == "lparen":
                if tok.value == "has":
                    raise self.error("has() is a condition, not a value to compare", tok, show_found=False)
                return Len(self.parse_call_argument("len"))
            return Prop(tok.value) if tok.value in PROPERTIES else Feature(tok.value, tok.pos)
        where = f" after '{after}'" if after else ""
        raise self.error(f"expected a value{where}", tok)

    def parse_comparison_rest(self, left):
        negate = False
        if self.is_kw("not"):
            self.take()
            if not self.is_kw("in"):
                raise self.error("expected 'in' after 'not'", self.peek())
            negate = True
        tok = self.peek()
        if self.is_kw("in"):
            self.take()
            node = Compare("==", left, self.parse_list_or_operand("not in" if negate else "in"))
            return Not(node) if negate else node
        if tok.kind == "op":
            self.take()
            if tok.value == "~":
                return Match(left, self.parse_pattern())
            return Compare(tok.value, left, self.parse_operand(tok.value))
        raise self.error(f"expected a comparison ({_OPERATOR_LIST}) after {_describe(left)}", tok)

    def parse_pattern(self) -> str:
        pat = self.peek()
        if pat.kind != "str":
            raise self.error("expected a quoted regular expression after '~'", pat)
        self.take()
        try:
            _regex_search(pat.value)
        except _RegexError as exc:
            where: list[int] = []
            _read_quoted(self.text, pat.pos, pat.text[0], "string", where)
            fragment = exc.fragment
            k = pat.value.find(fragment) if fragment else -1
            position = where[k] if 0 <= k < len(where) else pat.pos + 1
            shown = f" '{fragment}'" if fragment and len(fragment) <= 20 and fragment != pat.value else ""
            raise ExprError(f"bad regular expression: {exc.reason}{shown} (filters use RE2 syntax: no "
                            "backreferences or lookaround)", position, self.text) from None
        return pat.value

    def parse_list_or_operand(self, after: str):
        open_tok = self.peek()
        if open_tok.kind != "lbracket":
            return self.parse_operand(after)
        self.take()
        values: list = []
        while True:
            item = self.peek()
            if item.kind == "rbracket":  # empty list, or a trailing comma
                self.take()
                return ListLit(tuple(values))
            if item.kind not in ("num", "str"):
                raise self.error("expected a number or a string in the list", item)
            self.take()
            values.append(item.value)
            sep = self.peek()
            if sep.kind == "comma":
                self.take()
            elif sep.kind == "rbracket":
                self.take()
                return ListLit(tuple(values))
            else:
                raise self.error("expected ',' or ']'", sep, note=f"in the list opened at position {open_tok.pos}")


def _describe(node) -> str:
    if isinstance(node, Feature):
        return f"feature {node.name!r}"
    if isinstance(node, Prop):
        return f"property {node.name!r}"
    if isinstance(node, Len):
        return f"len({node.feature.name})"
    return repr(node.value) if isinstance(node, Lit) else "the value"


# ---------------------------------------------------------------- evaluation

class _Record:
    """One record as the evaluator sees it; decoded and looked up lazily."""

    __slots__ = ("index", "data", "status", "offset", "size", "_decoded", "_features", "_lists")

    def __init__(self, index: int, data: bytes, status: str, offset: int, size: int,
                 decoded: DecodedRecord | None) -> None:
        self.index = index
        self.data = data
        self.status = status
        self.offset = offset
        self.size = size
        self._decoded = decoded
        self._features = None
        self._lists = None

    @property
    def decoded(self) -> DecodedRecord:
        if self._decoded is None:
            self._decoded = quick_decode(self.data)
        return self._decoded

    def _maps(self):
        if self._features is None:
            self._features, self._lists = _feature_maps(self.decoded)
        return self._features, self._lists

    def groups(self, name: str) -> list[tuple[str, Any]]:
        """(dtype, values) groups of feature ``name``: one, one per step, or none."""
        features, lists = self._maps()
        if name in features:
            g = _typed(features[name])
            return [g] if g is not None else []
        if name in lists:
            return [g for g in map(_typed, lists[name].feature) if g is not None]
        return []

    def has(self, name: str) -> bool:
        features, lists = self._maps()
        return name in features or name in lists

    def length(self, name: str) -> int:
        features, lists = self._maps()
        if name in features:
            g = _typed(features[name])
            return len(g[1]) if g is not None else 0
        if name in lists:
            return len(lists[name].feature)
        return 0

    def prop(self, name: str):
        if name == "kind":
            return self.decoded.kind.value
        return getattr(self, name)


def _feature_maps(d: DecodedRecord):
    """(features, feature lists) of a record, as maps from name; a raw record has neither."""
    if d.kind is RecordKind.EXAMPLE:
        return d.message.features.feature, {}
    if d.kind is RecordKind.SEQUENCE_EXAMPLE:
        return d.message.context.feature, d.message.feature_lists.feature_list
    return {}, {}


def _typed(feature) -> tuple[str, Any] | None:
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return "int64", feature.int64_list.value
    if kind == "float_list":
        return "float", feature.float_list.value
    if kind == "bytes_list":
        return "bytes", feature.bytes_list.value
    return None


_F32 = struct.Struct("<f")


def _as_float32(x: float) -> float:
    """``x`` rounded to the nearest float32, as stored float features are."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return x  # beyond float32: no stored value equals it, and ordering still holds


class _Lit:
    """A literal prepared for each kind of value it may meet (None: can never equal one)."""

    __slots__ = ("value", "for_bytes", "for_str", "for_int", "for_float")

    def __init__(self, value) -> None:
        self.value = value
        if isinstance(value, str):
            self.for_bytes = value.encode("utf-8", "surrogatepass")
            self.for_str = value
            self.for_int = self.for_float = None
            return
        self.for_bytes = self.for_str = None
        self.for_int = value
        try:
            self.for_float = _as_float32(float(value))
        except OverflowError:  # an int beyond any float: Python still orders it against floats exactly
            self.for_float = value

    def for_dtype(self, dtype: str):
        if dtype == "bytes":
            return self.for_bytes
        if dtype == "str":
            return self.for_str
        if dtype == "float":
            return self.for_float
        return self.for_int  # int64 and int properties


_ORDER = {"==": lambda a, b: a == b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
          ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NUMERIC = ("int64", "float", "int")
_TEXTUAL = ("bytes", "str")


def _comparable(da: str, db: str) -> bool:
    return (da in _NUMERIC and db in _NUMERIC) or (da in _TEXTUAL and db in _TEXTUAL)


def _pair(a, da: str, b, db: str):
    """Make a bytes value and a str property meet as bytes."""
    if da == "str" and db == "bytes":
        return a.encode("utf-8"), b
    if da == "bytes" and db == "str":
        return a, b.encode("utf-8")
    return a, b


class _Compiler:
    """Turns the syntax tree into closures ``fn(record) -> bool`` / ``-> groups``."""

    def __init__(self) -> None:
        self.needs_decode = False
        self.needs_data = False
        self.features: dict[str, int] = {}  # name -> where the expression first names it
        self.properties: set[str] = set()
        self._operands: dict[Any, Callable] = {}  # one getter per operand, however often it is named

    def _feature(self, node: Feature) -> str:
        self.needs_decode = self.needs_data = True
        self.features.setdefault(node.name, node.pos)
        return node.name

    # operands -> fn(record) -> list of (dtype, values)
    def operand(self, node) -> Callable:
        get = self._operands.get(node)
        if get is None:
            get = self._operands[node] = self._make_operand(node)
        if isinstance(node, (Feature, Len)):
            self._feature(node if isinstance(node, Feature) else node.feature)
        return get

    def _make_operand(self, node) -> Callable:
        if isinstance(node, Feature):
            name = self._feature(node)
            return lambda r: r.groups(name)
        if isinstance(node, Prop):
            self.properties.add(node.name)
            if node.name == "kind":
                self.needs_decode = self.needs_data = True
            elif node.name in ("size", "status"):
                self.needs_data = True
            name = node.name
            dtype = "str" if name in ("status", "kind") else "int"
            return lambda r: [(dtype, (r.prop(name),))]
        if isinstance(node, Len):
            name = self._feature(node.feature)
            return lambda r: [("int", (r.length(name),))]
        raise TypeError(node)  # literals are handled by the caller

    def condition(self, node) -> Callable:
        if isinstance(node, Always):
            return lambda r: True
        if isinstance(node, Or):
            fns = self._any_of(node.items)
            if len(fns) == 1:
                return fns[0]
            return lambda r: any(fn(r) for fn in fns)
        if isinstance(node, And):
            fns = [self.condition(item) for item in node.items]
            return lambda r: all(fn(r) for fn in fns)
        if isinstance(node, Not):
            fn = self.condition(node.item)
            return lambda r: not fn(r)
        if isinstance(node, Has):
            name = self._feature(node.feature)
            return lambda r: r.has(name)
        if isinstance(node, Match):
            return self.match(node)
        if isinstance(node, Compare):
            return self.compare(node)
        raise TypeError(node)

    def _any_of(self, items) -> list[Callable]:
        """Closures for the alternatives of an ``or``.

        ``x == 1 or x == 2 or x in [3, 4] ...`` on one feature or property
        becomes one set lookup per value, so a generated chain of thousands
        of terms costs no more per record than one term.
        """
        equal: dict[Any, list[_Lit]] = {}
        fns: list[Callable] = []
        for item in items:
            side = _equality_with_literals(item)
            if side is None:
                fns.append(self.condition(item))
                continue
            operand, values = side
            equal.setdefault(operand, []).extend(_Lit(v) for v in values)
        for operand, lits in equal.items():
            fns.append(self._against_literals(self.operand(operand), "==", lits))
        return fns

    def match(self, node: Match) -> Callable:
        search = _regex_search(node.pattern)
        if isinstance(node.operand, Lit):
            value = node.operand.value
            hit = isinstance(value, str) and search(value.encode("utf-8", "surrogatepass"))
            return lambda r: hit
        get = self.operand(node.operand)

        def fn(r) -> bool:
            for dtype, values in get(r):
                if dtype == "bytes":
                    if any(search(v) for v in values):
                        return True
                elif dtype == "str":
                    if any(search(v.encode("utf-8")) for v in values):
                        return True
            return False
        return fn

    def compare(self, node: Compare) -> Callable:
        op, left, right = node.op, node.left, node.right
        if op == "!=":
            fn = self.compare(Compare("==", left, right))
            return lambda r: not fn(r)
        if isinstance(left, (Lit, ListLit)) and not isinstance(right, (Lit, ListLit)):
            op, left, right = _FLIP[op], right, left
        if isinstance(right, ListLit):
            lits = [_Lit(v) for v in right.values]
            if isinstance(left, Lit):
                hit = any(_lit_equal(_Lit(left.value), lit) for lit in lits)
                return lambda r: hit
            return self._against_literals(self.operand(left), "==", lits)
        if isinstance(left, Lit):  # both literals: a constant
            hit = _lit_compare(op, _Lit(left.value), _Lit(right.value))
            return lambda r: hit
        get_left = self.operand(left)
        if isinstance(right, Lit):
            return self._against_literals(get_left, op, [_Lit(right.value)])
        get_right = self.operand(right)
        test = _ORDER[op]

        def both(r) -> bool:
            rights = get_right(r)
            for da, va in get_left(r):
                for db, vb in rights:
                    if not _comparable(da, db):
                        continue
                    for a in va:
                        for b in vb:
                            a2, b2 = _pair(a, da, b, db)
                            if test(a2, b2):
                                return True
            return False
        return both

    @staticmethod
    def _against_literals(get: Callable, op: str, lits: list[_Lit]) -> Callable:
        if op == "==" and len(lits) > 1:
            keys: dict[str, set] = {}
            for dtype in ("int64", "float", "bytes", "str", "int"):
                found = {key for lit in lits if (key := lit.for_dtype(dtype)) is not None}
                if found:
                    keys[dtype] = found

            def any_equal(r) -> bool:
                for dtype, values in get(r):
                    wanted = keys.get(dtype)
                    if wanted is not None and not wanted.isdisjoint(values):
                        return True
                return False
            return any_equal
        test = _ORDER[op]

        def fn(r) -> bool:
            for dtype, values in get(r):
                for lit in lits:
                    key = lit.for_dtype(dtype)
                    if key is None:
                        continue
                    if op == "==":
                        if key in values:
                            return True
                    elif any(test(v, key) for v in values):
                        return True
            return False
        return fn


def _equality_with_literals(node) -> tuple[Any, tuple] | None:
    """(operand, literal values) when ``node`` is ``operand == literal`` or ``operand in [...]``."""
    if not isinstance(node, Compare) or node.op != "==":
        return None
    left, right = node.left, node.right
    if isinstance(left, (Lit, ListLit)):
        left, right = right, left
    if not isinstance(left, (Feature, Prop, Len)):
        return None
    if isinstance(right, Lit):
        return left, (right.value,)
    if isinstance(right, ListLit):
        return left, right.values
    return None


def _lit_equal(a: _Lit, b: _Lit) -> bool:
    return _lit_compare("==", a, b)


def _lit_compare(op: str, a: _Lit, b: _Lit) -> bool:
    if isinstance(a.value, str) != isinstance(b.value, str):
        return False
    return bool(_ORDER[op](a.value, b.value))


# ---------------------------------------------------------------- public API

class Filter:
    """A compiled expression. ``matches`` never raises.

    ``needs_decode`` is False when the expression looks only at ``index``,
    ``offset``, ``size`` and ``status`` (no protobuf parse then);
    ``needs_data`` is False when it looks only at ``index`` and ``offset``.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # Parsing makes a few objects per token and no reference cycles; the
        # cyclic collector's full passes over them made a 200,000-term
        # expression take seconds more, for nothing to collect.
        collecting = gc.isenabled()
        gc.disable()
        try:
            tree = _Parser(text).parse()
            compiler = _Compiler()
            self._fn = compiler.condition(tree)
        finally:
            if collecting:
                gc.enable()
        self.tree = tree
        self.is_empty = isinstance(tree, Always)
        self.needs_decode = compiler.needs_decode
        self.needs_data = compiler.needs_data
        self.features = frozenset(compiler.features)
        self.feature_positions = dict(compiler.features)  # name -> where the text first names it
        self.properties = frozenset(compiler.properties)

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"

    def matches(self, index: int, data: bytes, status: RecordStatus | str = "ok", offset: int = 0,
                size: int | None = None, decoded: DecodedRecord | None = None) -> bool:
        """Does the record satisfy the expression? ``decoded`` saves a parse when at hand."""
        label = status.label if isinstance(status, RecordStatus) else str(status)
        record = _Record(index, data, label, offset, len(data) if size is None else size, decoded)
        try:
            return bool(self._fn(record))
        except (TypeError, ValueError, AttributeError, OverflowError, RecursionError):
            return False  # odd data the rules above did not foresee: not a match, never a crash


def compile_filter(text: str) -> Filter:
    """Parse ``text`` into a :class:`Filter`; raise :class:`ExprError` if malformed."""
    if not isinstance(text, str):
        raise ExprError("expected the expression as text", 0, "")
    try:
        return Filter(text)
    except RecursionError:  # MAX_DEPTH keeps well below the limit; a deep stack at the call could still hit it
        raise ExprError("expression nested too deeply", 0, text) from None


@dataclass(frozen=True)
class MissingFeature:
    """A feature name of an expression that no record looked at has."""

    name: str
    position: int  # where the expression first names it
    suggestions: tuple[str, ...]  # the closest keys records do have, best first

    def hint(self, quote: bool = True) -> str:
        """``did you mean 'a' or 'b'?``, or "" without a close key."""
        if not self.suggestions:
            return ""
        names = [repr(k) if quote else k for k in self.suggestions]
        return f"did you mean {' or '.join(names)}?"


class FeatureCheck:
    """Which feature names of a filter the records seen have, to tell a misspelt name from a rare one.

    Give it each decoded record with :meth:`see`; :meth:`missing` lists the
    names no record seen had, each with the closest keys of the first
    ``sample`` records (``difflib.get_close_matches``) as suggestions.
    """

    def __init__(self, flt: Filter, sample: int = KEY_SAMPLE) -> None:
        self.unseen = dict(flt.feature_positions)
        self.keys: set[str] = set()
        self.sample = sample
        self.records = 0

    @property
    def wants(self) -> bool:
        """Could the next record tell anything? Not once every name has been found."""
        return bool(self.unseen)

    def see(self, decoded: DecodedRecord) -> None:
        features, lists = _feature_maps(decoded)
        if self.records < self.sample:
            self.keys.update(features)
            self.keys.update(lists)
        self.records += 1
        if self.unseen:
            for name in [n for n in self.unseen if n in features or n in lists]:
                del self.unseen[name]

    def missing(self) -> list[MissingFeature]:
        """The names no record seen has, in the order the expression names them ([] before any record)."""
        if not self.records:
            return []
        keys = sorted(self.keys)
        return [MissingFeature(name, pos, _closest(name, keys))
                for name, pos in sorted(self.unseen.items(), key=lambda item: item[1])]


def _closest(name: str, keys: list[str]) -> tuple[str, ...]:
    """Up to three keys like ``name`` (``difflib``), without those clearly worse than the best.

    A name that is the end of longer keys (``xmin`` for ``image/object/bbox/xmin``) suggests them.
    """
    tails = [key for key in keys if key.endswith("/" + name)]
    if tails:
        return tuple(tails[:3])
    close = difflib.get_close_matches(name, keys, n=3, cutoff=0.6)
    if not close:
        return ()
    score = [difflib.SequenceMatcher(None, name, key).ratio() for key in close]
    return tuple(key for key, r in zip(close, score) if r >= score[0] - 0.1)


def feature_check_iter(tfile, flt: Filter, check: FeatureCheck,
                       every: int = PROGRESS_EVERY) -> Iterator[IndexProgress]:
    """Look through ``tfile`` for records with ``flt``'s feature names, until every name is found.

    Usually the first record has them all and the look ends there. A name
    still missing after the ``check.sample`` first records (whose keys give
    the suggestions) is searched for in the rest of the file: only records
    whose bytes hold the name's UTF-8 are parsed, since a key is stored
    verbatim. So a name is reported missing only when no record of the whole
    file has it.
    """
    if not check.unseen:
        return
    last = None
    for item in iter_records(tfile, None, every):
        if isinstance(item, IndexProgress):
            last = item
            yield item
            continue
        data = item[1]
        if check.records >= check.sample and \
                not any(name.encode("utf-8", "surrogatepass") in data for name in check.unseen):
            check.records += 1
            continue
        check.see(quick_decode(data))
        if not check.unseen:
            break
    if last is None or not last.done:
        yield IndexProgress(check.records, check.records, len(tfile), len(tfile.problems), True)


def missing_features(tfile, flt: Filter, sample: int = KEY_SAMPLE) -> list[MissingFeature]:
    """The feature names of ``flt`` no record of ``tfile`` has (runs :func:`feature_check_iter`)."""
    check = FeatureCheck(flt, sample)
    for _ in feature_check_iter(tfile, flt, check):
        pass
    return check.missing()


def filter_iter(tfile, flt: Filter, matches: array, indices: Sequence[int] | None = None,
                every: int = PROGRESS_EVERY, check: FeatureCheck | None = None) -> Iterator[IndexProgress]:
    """Append to ``matches`` (an ``array('Q')``) the indexes of ``tfile``'s records that match.

    Goes over ``indices`` (default: every record, in order) and yields
    progress every ``every`` records: ``records`` and ``position`` are the
    records checked so far, ``total`` how many there are to check. With
    ``check``, each record checked is also shown to it, so after a whole
    pass ``check.missing()`` names the features no record has.
    """
    n = len(tfile) if indices is None else len(indices)
    order = range(n) if indices is None else indices
    append = matches.append
    problems = lambda: len(tfile.problems)  # noqa: E731
    if flt.is_empty:
        matches.extend(order)
        yield IndexProgress(n, n, n, problems(), True)
        return
    test = flt.matches
    if not flt.needs_data:
        offset = tfile.index.offset
        for k, i in enumerate(order):
            if test(i, b"", "ok", offset(i), 0):
                append(i)
            if k % every == every - 1:
                yield IndexProgress(k + 1, k + 1, n, problems())
        yield IndexProgress(n, n, n, problems(), True)
        return
    decode = quick_decode if flt.needs_decode else None
    if check is not None and not flt.features:
        check = None
    for item in iter_records(tfile, indices, every):
        if isinstance(item, IndexProgress):
            yield item
            continue
        i, data, status, offset, length = item
        decoded = decode(data) if decode is not None else None
        if check is not None and check.wants:
            check.see(decoded)
        if test(i, data, status, offset, length, decoded):
            append(i)


def matching_indices(tfile, flt: Filter, indices: Sequence[int] | None = None) -> array:
    """Every matching index as an ``array('Q')`` (runs :func:`filter_iter` to the end)."""
    out = array("Q")
    for _ in filter_iter(tfile, flt, out, indices):
        pass
    return out
