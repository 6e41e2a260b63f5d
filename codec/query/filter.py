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
    numbers (``3``, ``-2``, ``0.5``, ``1e5``; integers of any size, exact);
    ``true`` and ``false`` (the numbers 1 and 0); strings in double or single
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
    ``not``, parentheses; a feature alone, ``flag``, is ``flag == true``.
    ``not`` binds tighter than ``and``, ``and`` tighter
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
    ``score == 0.1`` finds a stored 0.1; a message's doubles compare as
    float64, its integers (uint64 too) exactly, its bools as 1 and 0, and an
    enum both by name and by number (docs/exact-values.md). Values of different types (a number
    and bytes, a string and an int64) are simply unequal and unordered: such
    a comparison is false, never an error. In a SequenceExample a name is
    looked up in the context first, then in the feature lists, where it stands
    for the values of all steps; ``len()`` of a feature list is its number of
    steps. A raw record has no features.
Class names
    With ``compile_filter(text, names=...)`` (a
    :class:`codec.datasets.label_maps.LabelNames`: a label map or TFDS class names
    per feature key), a string compared with a class-id feature stands for
    the ids that have that name or display name, in any case:
    ``image/object/class/label == "cat"`` is ``... == 1`` when class 1 is
    named "cat" (or "Cat"); ``!=``, ``in [...]`` and ``not in`` likewise,
    and ``~`` searches the names of the ids. Numbers still compare as ids,
    and a bytes value of such a feature still compares as text. A name the
    feature's classes do not have is an :class:`ExprError` that lists them.
    ``<``, ``>`` and the like compare ids only.

``compile_filter(text)`` parses an expression once and returns a
:class:`Filter`; a malformed expression raises :class:`ExprError` (a
:class:`UsageError`) whose message names the 0-based position and what was
expected there, as does one nested more than ``query_parser.MAX_DEPTH``
deep or with more than ``query_lexer.MAX_CONDITIONS`` conditions. Compiling
is linear in the length.
Evaluation (:meth:`Filter.matches`) never raises.
``filter_iter`` runs a filter over a whole file as a generator of progress;
``streamed`` hands its matches over as they are found (a :class:`MatchStream`).
A feature name no record has is most likely misspelt: :class:`FeatureCheck`
(fed by ``filter_iter(..., check=)``) and :func:`missing_features` find such
names over a whole file and suggest the closest keys.

This module is the public API; the stages live beside it, one per module:
:mod:`codec.query.lexer` (tokens and :class:`ExprError`),
:mod:`codec.query.parser` (the syntax tree), :mod:`codec.query.compiler`
(closures over a record) and :mod:`codec.query.regex` (RE2 for ``~``).
"""
from __future__ import annotations

import difflib
import gc
import threading
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

import numpy as np

from codec.decode.decoder import DecodedRecord
from codec.format.framing import RecordStatus
from codec.index.scan import IndexProgress
from codec.query.compiler import Compiler, RecordView, feature_maps
from codec.query.lexer import ExprError
from codec.query.parser import PROPERTIES, Always, parse
from codec.sources.record_pass import iter_records, quick_decode

if TYPE_CHECKING:
    from codec.datasets.label_maps import LabelNames

__all__ = ["ExprError", "FeatureCheck", "Filter", "MissingFeature", "PROPERTIES", "compile_filter",
           "MatchStream", "feature_check_iter", "filter_iter", "format_error", "missing_features",
           "streamed"]

PROGRESS_EVERY = 4096
_LABELS = {status: status.label for status in RecordStatus}
_ODD_DATA = (TypeError, ValueError, AttributeError, OverflowError, RecursionError)
KEY_SAMPLE = 1000  # records whose feature keys are collected to suggest a misspelt name


def format_error(text: str, exc: ExprError) -> str:
    """Two lines: the expression, and a caret under the error's position."""
    line = text.replace("\n", " ").replace("\t", " ")
    return f"{line}\n{' ' * min(exc.position, len(line))}^"


class Filter:
    """A compiled expression. ``matches`` never raises.

    ``needs_decode`` is False when the expression looks only at ``index``,
    ``offset``, ``size`` and ``status`` (no protobuf parse then);
    ``needs_data`` is False when it looks only at ``index`` and ``offset``.
    """

    def __init__(self, text: str, names: LabelNames | None = None) -> None:
        self.text = text
        self.names = names
        # Parsing makes a few objects per token and no reference cycles; the
        # cyclic collector's full passes over them made a 200,000-term
        # expression take seconds more, for nothing to collect.
        collecting = gc.isenabled()
        gc.disable()
        try:
            tree = parse(text)
            compiler = Compiler(names, text)
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
                size: int | None = None, decoded: DecodedRecord | None = None, payload=None) -> bool:
        """Does the record satisfy the expression? ``decoded`` saves a parse when at hand;
        else ``payload`` (see :mod:`codec.decode.payloads`) says how to decode it."""
        label = status.label if isinstance(status, RecordStatus) else str(status)
        record = RecordView(index, data, label, offset, len(data) if size is None else size, decoded, payload)
        try:
            return bool(self._fn(record))
        except _ODD_DATA:
            return False  # odd data the rules above did not foresee: not a match, never a crash


def compile_filter(text: str, *, names: LabelNames | None = None) -> Filter:
    """Parse ``text`` into a :class:`Filter`; raise :class:`ExprError` if malformed.

    ``names`` gives class-id features their class names, so that they can be
    compared with strings (see "Class names" above).
    """
    if not isinstance(text, str):
        raise ExprError("expected the expression as text", 0, "")
    try:
        return Filter(text, names)
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
        features, lists = feature_maps(decoded)
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
    payload = tfile.payload
    for item in iter_records(tfile, None, every):
        if isinstance(item, IndexProgress):
            last = item
            yield item
            continue
        data = item[1]
        # A name not in the bytes is not a key of the record (past the sample); a payload's keys are
        # field paths, not bytes of the record.
        if payload is None and check.records >= check.sample and \
                not any(name.encode("utf-8", "surrogatepass") in data for name in check.unseen):
            check.records += 1
            continue
        check.see(quick_decode(data, payload))
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
                every: int = PROGRESS_EVERY, check: FeatureCheck | None = None,
                base: int = 0) -> Iterator[IndexProgress]:
    """Append to ``matches`` (an ``array('Q')``) the indexes of ``tfile``'s records that match.

    Goes over ``indices`` (default: every record, in order) and yields
    progress every ``every`` records: ``records`` and ``position`` are the
    records checked so far, ``total`` how many there are to check. With
    ``check``, each record checked is also shown to it, so after a whole
    pass ``check.missing()`` names the features no record has. ``base`` is
    the number of ``tfile``'s first record in a larger set (a shard's, in a
    worker): the expression's ``index`` and the matches are numbered from it.
    """
    n = len(tfile) if indices is None else len(indices)
    order = range(n) if indices is None else indices
    append = matches.append
    problems = lambda: len(tfile.problems)  # noqa: E731
    if flt.is_empty:
        matches.extend(order if not base else (base + i for i in order))
        yield IndexProgress(n, n, n, problems(), True)
        return
    test = flt.matches
    if not flt.needs_data:
        offset = tfile.index.offset
        for k, i in enumerate(order):
            if test(base + i, b"", "ok", offset(i), 0):
                append(base + i)
            if k % every == every - 1:
                yield IndexProgress(k + 1, k + 1, n, problems())
        yield IndexProgress(n, n, n, problems(), True)
        return
    payload = tfile.payload
    decode = flt.needs_decode
    if check is not None and not flt.features:
        check = None
    if decode and payload is None and flt.features and "kind" not in flt.properties:
        yield from _filter_batches(tfile, flt, append, indices, every, check, base)
        return
    # Filter.matches, inlined: the loop runs once per record of the file.
    fn, view, progress = flt._fn, RecordView, IndexProgress
    for item in iter_records(tfile, indices, every):
        if item.__class__ is progress:
            yield item
            continue
        i, data, status, offset, length = item
        decoded = quick_decode(data, payload) if decode else None
        if check is not None and check.wants:
            check.see(decoded)
        try:
            chosen = fn(view(base + i, data, _LABELS[status], offset, length, decoded, payload))
        except _ODD_DATA:
            chosen = False
        if chosen:
            append(base + i)


def _filter_batches(tfile, flt: Filter, append, indices, every: int, check: FeatureCheck | None,
                    base: int) -> Iterator[IndexProgress]:
    """:func:`filter_iter`'s loop for records read by the kind rule: the expression's features of a
    batch of records decoded at once (:mod:`codec.query.columns`), each record tested as before."""
    from codec.query.columns import BatchFeatures, ColumnView

    fn, progress, names = flt._fn, IndexProgress, flt.features
    batch: list[tuple] = []

    def test_batch() -> None:
        columns = BatchFeatures([b[1] for b in batch], names)
        for r, ((i, data, status, offset, length), ok) in enumerate(zip(batch, columns.ok)):
            if check is not None and check.wants:
                check.see(quick_decode(data))
            if ok:
                view = ColumnView(base + i, data, _LABELS[status], offset, length, columns, r)
            else:
                view = RecordView(base + i, data, _LABELS[status], offset, length, quick_decode(data))
            try:
                chosen = fn(view)
            except _ODD_DATA:
                chosen = False
            if chosen:
                append(base + i)
        batch.clear()

    for item in iter_records(tfile, indices, every):
        if item.__class__ is progress:
            if batch:
                test_batch()
            yield item
            continue
        batch.append(item)
        if len(batch) >= every:
            test_batch()
    if batch:
        test_batch()


class MatchStream:
    """Matches handed over while a pass runs: batches of record numbers (int64 arrays), in record
    order, each batch after the one before. The pass puts them; a reader on another thread (the
    app's) takes what came since it last looked."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self._lock = threading.Lock()
        self.count = 0  # matches put so far
        self.through = 0  # every match among the records before this one has been put

    def put(self, records, through: int | None = None) -> None:
        """Add a batch: record numbers after every one put before, in order; ``through``: the
        records before it are done (their matches are all in)."""
        batch = np.array(records, dtype=np.int64)
        with self._lock:
            if batch.size:
                self._parts.append(batch)
                self.count += int(batch.size)
            if through is not None:
                self.through = max(self.through, through)

    def take(self) -> np.ndarray:
        """Every match put since the last take, in record order (an empty array when none)."""
        with self._lock:
            parts, self._parts = self._parts, []
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def streamed(steps: Iterable[IndexProgress], matches: array, stream: MatchStream) -> Iterator[IndexProgress]:
    """Relay a pass's progress; before each step, put on ``stream`` what the pass appended to ``matches`` since."""
    sent = len(matches)
    for step in steps:
        stream.put(matches[sent:], step.records)  # a copy: numpy viewing the array would stop it growing
        sent = len(matches)
        yield step


def matching_indices(tfile, flt: Filter, indices: Sequence[int] | None = None) -> array:
    """Every matching index as an ``array('Q')`` (runs :func:`filter_iter` to the end)."""
    out = array("Q")
    for _ in filter_iter(tfile, flt, out, indices):
        pass
    return out
