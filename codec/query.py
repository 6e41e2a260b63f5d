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
    ``b``, not substring); ``x ~ "regex"`` (Python ``re.search`` on each
    text value, UTF-8 decoded; ``(?i)`` for case-insensitive); ``has(f)``
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
expected there. Evaluation (:meth:`Filter.matches`) never raises.
``filter_iter`` runs a filter over a whole file as a generator of progress.
"""
from __future__ import annotations

import re
import struct
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .decode import DecodedRecord, RecordKind
from .errors import UsageError
from .framing import RecordStatus
from .record_pass import iter_records, quick_decode
from .scan import IndexProgress

__all__ = ["ExprError", "Filter", "PROPERTIES", "compile_filter", "filter_iter", "format_error"]

PROPERTIES = ("index", "offset", "size", "status", "kind")
KEYWORDS = ("and", "or", "not", "in")
FUNCTIONS = ("len", "has")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
PROGRESS_EVERY = 4096

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


def format_error(text: str, exc: ExprError) -> str:
    """Two lines: the expression, and a caret under the error's position."""
    line = text.replace("\n", " ").replace("\t", " ")
    return f"{line}\n{' ' * min(exc.position, len(line))}^"


# ---------------------------------------------------------------- tokens

@dataclass(frozen=True)
class _Token:
    kind: str  # num str name qname op kw lparen rparen lbracket rbracket comma end
    value: Any
    pos: int
    text: str  # as written, for messages


_NAME_RE = re.compile(r"[^\W\d][\w./-]*")
_NUMBER_RE = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "`": "`",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_PUNCT = {"(": "lparen", ")": "rparen", "[": "lbracket", "]": "rbracket", ",": "comma"}


def _read_quoted(text: str, start: int, quote: str, what: str) -> tuple[str, int]:
    """The unescaped content of the quoted run at ``start`` and the index after it."""
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == quote:
            return "".join(out), i + 1
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
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        start = i
        if c in "\"'":
            value, i = _read_quoted(text, i, c, "string")
            tokens.append(_Token("str", value, start, text[start:i]))
        elif c == "`":
            value, i = _read_quoted(text, i, "`", "backquoted name")
            if not value:
                raise ExprError("expected a feature name between the backquotes", start + 1, text)
            tokens.append(_Token("qname", value, start, text[start:i]))
        elif c.isdigit() or (c in "-." and i + 1 < n and (text[i + 1].isdigit() or
                                                          (c == "-" and text[i + 1] == "." and
                                                           i + 2 < n and text[i + 2].isdigit()))):
            m = _NUMBER_RE.match(text, i)
            if m is None:  # a lone '.' or '-' before something else
                raise ExprError(f"unexpected character {c!r}", i, text)
            i = m.end()
            if i < n and (text[i].isalnum() or text[i] == "_"):
                raise ExprError(f"bad number {text[start:i + 1]!r} (a feature name starting with a digit "
                                "goes in backquotes)", start, text)
            literal = m.group()
            try:
                value = float(literal) if any(ch in literal for ch in ".eE") else int(literal)
            except ValueError:  # more digits than Python converts
                raise ExprError("number too long", start, text) from None
            tokens.append(_Token("num", value, start, literal))
        elif (m := _NAME_RE.match(text, i)) is not None:
            word = m.group()
            i = m.end()
            tokens.append(_Token("kw" if word in KEYWORDS else "name", word, start, word))
        elif c in _PUNCT:
            tokens.append(_Token(_PUNCT[c], c, start, c))
            i += 1
        elif text.startswith(("==", "!=", "<=", ">="), i):
            tokens.append(_Token("op", text[i:i + 2], start, text[i:i + 2]))
            i += 2
        elif c in "<>~":
            tokens.append(_Token("op", c, start, c))
            i += 1
        elif c == "=":
            raise ExprError("expected '==' to compare (a single '=' is not an operator)", i, text)
        elif text.startswith(("&&", "||"), i):
            word = "and" if c == "&" else "or"
            raise ExprError(f"expected '{word}' instead of '{text[i:i + 2]}'", i, text)
        elif c == "!":
            raise ExprError("expected 'not' or '!=' instead of '!'", i, text)
        else:
            raise ExprError(f"unexpected character {c!r}", i, text)
    tokens.append(_Token("end", None, n, "the end"))
    return tokens


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
        self.i = 0

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def error(self, reason: str, tok: _Token, show_found: bool = True, note: str = "") -> ExprError:
        found = None if not show_found else ("" if tok.kind == "end" else repr(tok.text))
        return ExprError(reason, tok.pos, self.text, found, note)

    def is_kw(self, word: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok.kind == "kw" and tok.value == word

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
            self.take()
            return Not(self.parse_not("not"))
        return self.parse_condition(after)

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
        inner = self.parse_or("(")
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
            feature = Feature(arg.value)
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
            return Feature(tok.value)
        if tok.kind == "name":
            self.take()
            if tok.value in FUNCTIONS and self.peek().kind == "lparen":
                if tok.value == "has":
                    raise self.error("has() is a condition, not a value to compare", tok, show_found=False)
                return Len(self.parse_call_argument("len"))
            return Prop(tok.value) if tok.value in PROPERTIES else Feature(tok.value)
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
            re.compile(pat.value)
        except re.error as exc:
            # exc.pos counts unescaped characters: exact for patterns without escapes
            where = pat.pos + 1 + min(exc.pos or 0, max(0, len(pat.text) - 2))
            raise ExprError(f"bad regular expression ({exc.msg})", where, self.text) from None
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
            d = self.decoded
            if d.kind is RecordKind.EXAMPLE:
                self._features, self._lists = d.message.features.feature, {}
            elif d.kind is RecordKind.SEQUENCE_EXAMPLE:
                self._features = d.message.context.feature
                self._lists = d.message.feature_lists.feature_list
            else:
                self._features, self._lists = {}, {}
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
        self.features: set[str] = set()
        self.properties: set[str] = set()

    # operands -> fn(record) -> list of (dtype, values)
    def operand(self, node) -> Callable:
        if isinstance(node, Feature):
            self.needs_decode = self.needs_data = True
            self.features.add(node.name)
            name = node.name
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
            self.needs_decode = self.needs_data = True
            self.features.add(node.feature.name)
            name = node.feature.name
            return lambda r: [("int", (r.length(name),))]
        raise TypeError(node)  # literals are handled by the caller

    def condition(self, node) -> Callable:
        if isinstance(node, Always):
            return lambda r: True
        if isinstance(node, Or):
            fns = [self.condition(item) for item in node.items]
            return lambda r: any(fn(r) for fn in fns)
        if isinstance(node, And):
            fns = [self.condition(item) for item in node.items]
            return lambda r: all(fn(r) for fn in fns)
        if isinstance(node, Not):
            fn = self.condition(node.item)
            return lambda r: not fn(r)
        if isinstance(node, Has):
            self.needs_decode = self.needs_data = True
            self.features.add(node.feature.name)
            name = node.feature.name
            return lambda r: r.has(name)
        if isinstance(node, Match):
            return self.match(node)
        if isinstance(node, Compare):
            return self.compare(node)
        raise TypeError(node)

    def match(self, node: Match) -> Callable:
        search = re.compile(node.pattern).search
        if isinstance(node.operand, Lit):
            hit = isinstance(node.operand.value, str) and search(node.operand.value) is not None
            return lambda r: hit
        get = self.operand(node.operand)

        def fn(r) -> bool:
            for dtype, values in get(r):
                if dtype == "bytes":
                    if any(search(v.decode("utf-8", "replace")) for v in values):
                        return True
                elif dtype == "str":
                    if any(search(v) for v in values):
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
        tree = _Parser(text).parse()
        self.tree = tree
        self.is_empty = isinstance(tree, Always)
        compiler = _Compiler()
        self._fn = compiler.condition(tree)
        self.needs_decode = compiler.needs_decode
        self.needs_data = compiler.needs_data
        self.features = frozenset(compiler.features)
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
    except RecursionError:
        raise ExprError("expression nested too deeply", 0, text) from None


def filter_iter(tfile, flt: Filter, matches: array, indices: Sequence[int] | None = None,
                every: int = PROGRESS_EVERY) -> Iterator[IndexProgress]:
    """Append to ``matches`` (an ``array('Q')``) the indexes of ``tfile``'s records that match.

    Goes over ``indices`` (default: every record, in order) and yields
    progress every ``every`` records: ``records`` and ``position`` are the
    records checked so far, ``total`` how many there are to check.
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
    for item in iter_records(tfile, indices, every):
        if isinstance(item, IndexProgress):
            yield item
            continue
        i, data, status, offset, length = item
        if test(i, data, status, offset, length, decode(data) if decode is not None else None):
            append(i)


def matching_indices(tfile, flt: Filter, indices: Sequence[int] | None = None) -> array:
    """Every matching index as an ``array('Q')`` (runs :func:`filter_iter` to the end)."""
    out = array("Q")
    for _ in filter_iter(tfile, flt, out, indices):
        pass
    return out
