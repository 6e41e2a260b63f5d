"""The syntax tree of a filter expression and the parser that builds it.

:func:`parse` reads the tokens of :mod:`codec.query.lexer` by recursive
descent into frozen dataclasses (:class:`Compare`, :class:`And`, ...), which
the compiler (:mod:`codec.query.compiler`) turns into closures. Every error
names the position it was found at; nesting deeper than ``MAX_DEPTH`` is
refused before it can exhaust Python's stack.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codec.query.lexer import ExprError, Token, read_quoted, tokenize
from codec.query.regex import RegexError, regex_search

PROPERTIES = ("index", "offset", "size", "status", "kind")
BOOLEANS = {"true": True, "false": False}  # literals, as protobuf's text format spells a bool
FUNCTIONS = ("len", "has")
MAX_DEPTH = 100  # nested parentheses and 'not's; deeper would exhaust Python's stack

_OPERATOR_LIST = "==, !=, <, <=, >, >=, ~, in or not in"


@dataclass(frozen=True)
class Lit:
    value: Any  # int, float, bool or str
    pos: int = field(default=-1, compare=False, repr=False)  # where the expression writes it


@dataclass(frozen=True)
class ListLit:
    values: tuple
    positions: tuple = field(default=(), compare=False, repr=False)  # where each value is written


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
        self.tokens = tokenize(text)
        self.tokens.append(self.tokens[-1])
        self.i = 0
        self.depth = 0  # parentheses and 'not's open around the current token

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[self.i + ahead]  # the list ends with two "end" tokens: ahead may be 1

    def take(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def error(self, reason: str, tok: Token, show_found: bool = True, note: str = "") -> ExprError:
        found = None if not show_found else ("" if tok.kind == "end" else repr(tok.text))
        return ExprError(reason, tok.pos, self.text, found, note)

    def is_kw(self, word: str, ahead: int = 0) -> bool:
        tok = self.tokens[self.i + ahead]
        return tok.value == word and tok.kind == "kw"

    def at_condition_end(self) -> bool:
        return self.peek().kind in ("end", "rparen") or self.is_kw("and") or self.is_kw("or")

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

    def enter(self, tok: Token) -> None:
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
        if isinstance(left, Feature) and self.at_condition_end():
            return Compare("==", left, Lit(True))  # a feature alone: some value of it is true
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
            return Lit(tok.value, tok.pos)
        if tok.kind == "qname":
            self.take()
            return Feature(tok.value, tok.pos)
        if tok.kind == "name":
            self.take()
            if tok.value in BOOLEANS:
                return Lit(BOOLEANS[tok.value], tok.pos)
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
            regex_search(pat.value)
        except RegexError as exc:
            where: list[int] = []
            read_quoted(self.text, pat.pos, pat.text[0], "string", where)
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
        positions: list[int] = []
        while True:
            item = self.peek()
            if item.kind == "rbracket":  # empty list, or a trailing comma
                self.take()
                return ListLit(tuple(values), tuple(positions))
            if item.kind not in ("num", "str") and not (item.kind == "name" and item.value in BOOLEANS):
                raise self.error("expected a number, a string, true or false in the list", item)
            self.take()
            values.append(BOOLEANS.get(item.value, item.value) if item.kind == "name" else item.value)
            positions.append(item.pos)
            sep = self.peek()
            if sep.kind == "comma":
                self.take()
            elif sep.kind == "rbracket":
                self.take()
                return ListLit(tuple(values), tuple(positions))
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


def parse(text: str):
    """The syntax tree of ``text`` (:class:`Always` for an empty one); raises :class:`ExprError`."""
    return _Parser(text).parse()
