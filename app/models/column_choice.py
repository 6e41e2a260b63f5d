"""Which features the record table offers and shows as columns, from its first rows (no Qt).

:class:`SampleRows` keeps the first rows decoded until the rows change. From
them :func:`schema_of` gathers each feature's facts (its type, the most values
a row holds, whether its bytes are short text); :func:`ranked_keys` orders the
features for default columns and :func:`schema_signature` names the schema a
user's chosen columns are remembered under. Neither depends on the order of the
features or of the rows, so files with the same schema get the same columns. A
remote source's first rows come from the background: until all have, answers
are partial and not kept.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from codec.decode.decoder import feature_values, is_text, record_feature_lists, record_features

SAMPLE_RECORDS = 16
SHORT_LIST = 8  # a list of more values than this is "long": never a default column (unless it holds labels)
LARGE_BYTES = 256  # a bytes value longer than this (an image, a blob) is never a default column
LABEL_WORDS = frozenset({"label", "labels", "class", "classes", "category", "categories", "target", "targets",
                         "text", "texts", "caption", "captions", "tag", "tags", "synset"})
FEATURE_LIST = "feature_list"  # a SequenceExample's list's kind
_WORDS = re.compile(r"[^a-z0-9]+")


@dataclass
class FeatureFacts:
    """What the first rows say about one feature: its kind (``int64``, ``float``, ``bytes``, ``feature_list``,
    ``empty``), the most values one row holds, and whether any bytes value is binary or large."""

    kind: str = "empty"
    most: int = 0
    blob: bool = False


def schema_of(samples: list) -> dict[str, FeatureFacts]:
    """Each feature of decoded records (None: skipped) with its facts; a SequenceExample's lists too."""
    facts: dict[str, FeatureFacts] = {}
    for decoded in samples:
        if decoded is None:
            continue
        features = record_features(decoded)
        for key in features if features is not None else ():
            dtype, values = feature_values(features[key])
            fact = facts.setdefault(key, FeatureFacts())
            if dtype is not None:
                fact.kind = dtype if fact.kind in ("empty", dtype) else "mixed"
            fact.most = max(fact.most, len(values))
            if dtype == "bytes" and not fact.blob:
                fact.blob = any(len(v) > LARGE_BYTES or (v and not is_text(v)) for v in values[:SHORT_LIST])
        lists = record_feature_lists(decoded)
        for key in lists if lists is not None else ():
            fact = facts.setdefault(key, FeatureFacts())
            fact.kind = FEATURE_LIST
            fact.most = max(fact.most, len(lists[key].feature))
    return dict(sorted(facts.items()))


def schema_signature(schema: dict[str, FeatureFacts]) -> str:
    """A short key for a schema (its features' keys and kinds, sorted): shards with the same features share columns."""
    lines = sorted(f"{key}\t{fact.kind}" for key, fact in schema.items())
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def names_labels(key: str) -> bool:
    """True for a key naming labels or class names (``label``, ``image/object/class/text``, ``category_id``)."""
    return not LABEL_WORDS.isdisjoint(_WORDS.split(key.lower()))


def _rank(key: str, fact: FeatureFacts) -> tuple[int, int] | None:
    """Where ``key`` goes among default columns (lower first), None for never: labels and class names,
    then single values, then short lists; never images, other large or binary bytes, or long lists."""
    if fact.kind in ("empty", "mixed") or (fact.kind == "bytes" and fact.blob):
        return None
    text = fact.kind == "bytes"
    if names_labels(key) and fact.kind != FEATURE_LIST:
        return 0, 0 if text else 1  # class names first, then their ids
    if fact.kind == FEATURE_LIST:
        return 3, 0
    if fact.most <= 1:
        return 1, 0 if text else 1
    if fact.most <= SHORT_LIST:
        return 2, 0
    return None


def ranked_keys(schema: dict[str, FeatureFacts]) -> list[str]:
    """The features worth a default column, best first; the order depends only on the schema."""
    ranked = [(rank, key) for key, fact in schema.items() if (rank := _rank(key, fact)) is not None]
    return [key for _, key in sorted(ranked)]


class SampleRows:
    """The first rows decoded (None for those that cannot be), kept until :meth:`forget`."""

    def __init__(self) -> None:
        self._samples: list | None = None  # all the first rows, once known
        self._schema: tuple[int, dict[str, FeatureFacts]] | None = None
        self._came: dict[int, Any] = {}  # a remote source's first rows, as they came
        self.announced = False  # a remote source's: told that all have come

    def forget(self) -> None:
        self._samples = None
        self._schema = None
        self._came.clear()
        self.announced = False

    def read(self, n: int, decoded: Callable[[int], Any]) -> list:
        """The first ``n`` rows, decoded here by ``decoded(i)``."""
        if self._samples is None or len(self._samples) != n:
            self._samples = [decoded(i) for i in range(n)]
        return self._samples

    def fetched(self, n: int, ask: Callable[[int], None]) -> list:
        """The first ``n`` rows that have come; those that have not are asked with ``ask(i)``."""
        n = min(n, SAMPLE_RECORDS)
        if self._samples is None or len(self._samples) != n:
            missing = [i for i in range(n) if i not in self._came]
            for i in missing:
                ask(i)
            got = [self._came[i] for i in range(n) if i in self._came]
            if missing:
                self._samples = None
                return got
            self._samples = got
        return self._samples

    def came(self, i: int, decoded: Any) -> None:
        """A remote source's row ``i`` came decoded (None: it cannot be)."""
        if i < SAMPLE_RECORDS:
            self._came[i] = decoded

    def all_came(self, n: int) -> bool:
        """The first ``n`` rows (at most SAMPLE_RECORDS) have all come, and more than none."""
        n = min(SAMPLE_RECORDS, n)
        return bool(n) and all(i in self._came for i in range(n))

    def known_schema(self, n: int) -> dict[str, FeatureFacts] | None:
        """The schema of the first ``n`` rows when worked out before, else None."""
        return self._schema[1] if self._schema is not None and self._schema[0] == n else None

    def schema(self, n: int, samples: list) -> dict[str, FeatureFacts]:
        """The schema of ``samples`` (the first ``n`` rows), kept when they are all of them."""
        schema = schema_of(samples)
        if samples is self._samples:  # all of them (a remote source's may not all have come)
            self._schema = (n, schema)
        return schema
