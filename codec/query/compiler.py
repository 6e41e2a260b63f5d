"""The filter language's evaluation: a syntax tree compiled into closures over one record.

:class:`Compiler` turns the tree of :mod:`codec.query.parser` into
``fn(record) -> bool``, noting as it goes what the expression looks at
(feature names, properties, whether the record must be decoded), so that
:class:`codec.query.filter.Filter` can skip work a filter does not need.
:class:`RecordView` is the record those closures see, decoded and looked up
lazily. The semantics (any value satisfies, float32 rounding, types that
never compare) are described in :mod:`codec.query.filter`.

Class names (a :class:`codec.datasets.label_maps.LabelNames`) are resolved here, while
compiling: a string compared with a class-id feature becomes the ids it names,
so evaluation does the same integer set lookups as ``label == 1`` would.
"""
from __future__ import annotations

import difflib
import operator
import struct
from typing import TYPE_CHECKING, Any, Callable

from codec.decode.decoded import scalar_of
from codec.decode.decoder import DecodedRecord, RecordKind, record_features
from codec.query.lexer import ExprError
from codec.query.parser import Always, And, Compare, Feature, Has, Len, ListLit, Lit, Match, Not, Or, Prop
from codec.query.regex import regex_search
from codec.sources.record_pass import quick_decode

if TYPE_CHECKING:
    from codec.datasets.label_maps import LabelMap, LabelNames


class RecordView:
    """One record as the evaluator sees it; decoded and looked up lazily."""

    __slots__ = ("index", "data", "status", "offset", "size", "_decoded", "_features", "_lists", "_payload")

    def __init__(self, index: int, data: bytes, status: str, offset: int, size: int,
                 decoded: DecodedRecord | None, payload=None) -> None:
        self.index = index
        self.data = data
        self.status = status
        self.offset = offset
        self.size = size
        self._decoded = decoded
        self._features = None
        self._lists = None
        self._payload = payload

    @property
    def decoded(self) -> DecodedRecord:
        if self._decoded is None:
            self._decoded = quick_decode(self.data, self._payload)
        return self._decoded

    def _maps(self):
        if self._features is None:
            self._features, self._lists = feature_maps(self.decoded)
        return self._features, self._lists

    def groups(self, name: str) -> list[tuple[str, Any]]:
        """(dtype, values) groups of feature ``name``: one, one per step, or none."""
        features, lists = self._features, self._lists
        if features is None:
            features, lists = self._maps()
        if name in features:
            feature = features[name]
            if isinstance(feature, tuple):
                return _flat_groups(feature)
            g = _typed(feature)
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
            feature = features[name]
            g = feature if isinstance(feature, tuple) else _typed(feature)
            return len(g[1]) if g is not None else 0
        if name in lists:
            return len(lists[name].feature)
        return 0

    def prop(self, name: str):
        if name == "kind":
            return self.decoded.kind.value
        return getattr(self, name)


def feature_maps(d: DecodedRecord):
    """(features, feature lists) of a record, as maps from name; a raw record has neither.

    Tensors, messages and schema-less protobuf are read by their flat view
    (:func:`codec.decode.decoder.record_features`).
    """
    if d.kind is RecordKind.EXAMPLE and d.fields is None:
        return d.message.features.feature, {}
    if d.kind is RecordKind.SEQUENCE_EXAMPLE:
        return d.message.context.feature, d.message.feature_lists.feature_list
    features = record_features(d)
    return (features, {}) if features is not None else ({}, {})


def _typed(feature) -> tuple[str, Any] | None:
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return "int64", feature.int64_list.value
    if kind == "float_list":
        return "float", feature.float_list.value
    if kind == "bytes_list":
        return "bytes", feature.bytes_list.value
    return None


def _flat_groups(feature: tuple) -> list[tuple[str, Any]]:
    """The groups of a flat-view feature (:class:`codec.decode.decoded.FlatValues`): doubles compare as
    float64, an enum both by name (bytes) and by number."""
    scalar = scalar_of(feature)
    if scalar == "double":
        return [("double", feature[1])]
    if scalar == "enum":
        # scalar "enum" is only ever a FlatValues's, which has numbers.
        return [("bytes", feature[1]), ("int64", feature.numbers)]  # type: ignore[attr-defined]
    return [(feature[0], feature[1])]


_F32 = struct.Struct("<f")


def _as_float32(x: float) -> float:
    """``x`` rounded to the nearest float32, as stored float features are."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return x  # beyond float32: no stored value equals it, and ordering still holds


class _Lit:
    """A literal prepared for each kind of value it may meet (None: can never equal one)."""

    __slots__ = ("value", "for_bytes", "for_str", "for_int", "for_float", "for_double")
    for_bytes: bytes | None
    for_str: str | None

    def __init__(self, value) -> None:
        self.value = value
        if isinstance(value, str):
            self.for_bytes = value.encode("utf-8", "surrogatepass")
            self.for_str = value
            self.for_int = self.for_float = self.for_double = None
            return
        self.for_bytes = self.for_str = None
        self.for_int = self.for_double = value  # Python compares ints and floats exactly, whatever their size
        try:
            self.for_float = _as_float32(float(value))
        except OverflowError:  # an int beyond any float: Python still orders it against floats exactly
            self.for_float = value

    @classmethod
    def named(cls, text: str, id_: int) -> _Lit:
        """``text`` as a class name: equal to the int64 ``id_``, and to ``text`` itself in bytes values."""
        lit = cls(text)
        lit.for_int = id_
        return lit

    def for_dtype(self, dtype: str):
        if dtype == "bytes":
            return self.for_bytes
        if dtype == "str":
            return self.for_str
        if dtype == "float":
            return self.for_float
        if dtype == "double":
            return self.for_double
        return self.for_int  # int64 and int properties


_ORDER = {"==": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NUMERIC = ("int64", "float", "double", "int")
_DTYPES = ("int64", "float", "double", "bytes", "str", "int")  # every dtype a group may have
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


class Compiler:
    """Turns the syntax tree into closures ``fn(record) -> bool`` / ``-> groups``."""

    def __init__(self, names: LabelNames | None = None, text: str = "") -> None:
        self.names = names if names else None
        self.text = text  # for the position in an unknown class name's error
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
            return _joined(fns, every=False)
        if isinstance(node, And):
            return _joined([self.condition(item) for item in node.items], every=True)
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
            operand, literal = side
            equal.setdefault(operand, []).extend(self._literals(operand, literal))
        for operand, lits in equal.items():
            fns.append(self._against_literals(self.operand(operand), "==", lits))
        return fns

    def match(self, node: Match) -> Callable:
        search = regex_search(node.pattern)
        if isinstance(node.operand, Lit):
            value = node.operand.value
            hit = isinstance(value, str) and search(value.encode("utf-8", "surrogatepass"))
            return lambda r: hit
        get = self.operand(node.operand)
        labels = self._label_map(node.operand)
        ids = frozenset(i for i, texts in labels.spellings.items()
                        if any(search(t.encode("utf-8", "surrogatepass")) for t in texts)) if labels else None

        def fn(r) -> bool:
            for dtype, values in get(r):
                if dtype == "int64" and ids is not None:
                    if not ids.isdisjoint(values):
                        return True
                elif dtype == "bytes":
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
            if isinstance(left, Lit):
                hit = any(_lit_equal(_Lit(left.value), _Lit(v)) for v in right.values)
                return lambda r: hit
            return self._against_literals(self.operand(left), "==", self._literals(left, right))
        if isinstance(left, Lit):  # both literals: a constant
            hit = _lit_compare(op, _Lit(left.value), _Lit(right.value))
            return lambda r: hit
        get_left = self.operand(left)
        if isinstance(right, Lit):
            lits = self._literals(left, right) if op == "==" else [_Lit(right.value)]
            return self._against_literals(get_left, op, lits)
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

    def _label_map(self, operand) -> LabelMap | None:
        """The class names of ``operand`` when it is a feature the names cover."""
        if self.names is None or not isinstance(operand, Feature):
            return None
        return self.names.get(operand.name)

    def _literals(self, operand, literal: Lit | ListLit) -> list[_Lit]:
        """The literal(s) ``operand`` is compared with for equality; strings become class ids where named."""
        values: tuple
        positions: tuple[int, ...]
        if isinstance(literal, Lit):
            values, positions = (literal.value,), (literal.pos,)
        else:
            values, positions = literal.values, literal.positions or (-1,) * len(literal.values)
        labels = self._label_map(operand)
        if labels is None:
            return [_Lit(v) for v in values]
        lits: list[_Lit] = []
        for value, pos in zip(values, positions):
            if not isinstance(value, str):
                lits.append(_Lit(value))
                continue
            ids = labels.ids_of(value)
            if not ids:
                raise self._unknown_name(operand.name, value, pos, labels)
            lits.extend(_Lit.named(value, i) for i in ids)
        return lits

    def _unknown_name(self, key: str, value: str, pos: int, labels: LabelMap) -> ExprError:
        close = difflib.get_close_matches(value.casefold(), list(labels.aliases), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(labels.names[labels.aliases[c]]) for c in close)}? " if close else ""
        return ExprError(f"{key!r} has no class named {value!r}", max(pos, 0), self.text,
                         note=f"{hint}its classes: {labels.describe()}")

    @staticmethod
    def _against_literals(get: Callable, op: str, lits: list[_Lit]) -> Callable:
        if op == "==" and len(lits) > 1:
            keys: dict[str, set] = {}
            for dtype in _DTYPES:
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
        # Each literal as it meets each kind of value, decided once (the function runs once per record).
        by_dtype = {dtype: tuple(key for lit in lits if (key := lit.for_dtype(dtype)) is not None)
                    for dtype in _DTYPES}
        if op == "==":
            def equal(r) -> bool:
                for dtype, values in get(r):
                    for key in by_dtype.get(dtype, ()):
                        if key in values:
                            return True
                return False
            return equal

        def fn(r) -> bool:
            for dtype, values in get(r):
                for key in by_dtype.get(dtype, ()):
                    for v in values:
                        if test(v, key):
                            return True
            return False
        return fn


def _joined(fns: list[Callable], every: bool) -> Callable:
    """``all`` (``every``) or ``any`` of ``fns(r)``; two terms, the common case, without a generator per record."""
    if len(fns) == 2:
        a, b = fns
        return (lambda r: bool(a(r) and b(r))) if every else (lambda r: bool(a(r) or b(r)))
    combine = all if every else any
    return lambda r: combine(fn(r) for fn in fns)


def _equality_with_literals(node) -> tuple[Any, Lit | ListLit] | None:
    """(operand, literal) when ``node`` is ``operand == literal`` or ``operand in [...]``."""
    if not isinstance(node, Compare) or node.op != "==":
        return None
    left, right = node.left, node.right
    if isinstance(left, (Lit, ListLit)):
        left, right = right, left
    if not isinstance(left, (Feature, Prop, Len)):
        return None
    if isinstance(right, (Lit, ListLit)):
        return left, right
    return None


def _lit_equal(a: _Lit, b: _Lit) -> bool:
    return _lit_compare("==", a, b)


def _lit_compare(op: str, a: _Lit, b: _Lit) -> bool:
    if isinstance(a.value, str) != isinstance(b.value, str):
        return False
    return bool(_ORDER[op](a.value, b.value))
