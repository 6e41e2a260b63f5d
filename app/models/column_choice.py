"""Which features the record table offers as columns: the keys of its first rows (no Qt).

:class:`SampleRows` keeps the first rows decoded, and the keys, kinds and
cells they show, until the rows change; the table chooses its default feature
columns from them and the tab sizes columns to them. A remote source's first
rows come from the background: until all have, answers are partial and not kept.
"""
from __future__ import annotations

from typing import Any, Callable

from codec.decode.decoder import RecordKind, feature_keys

SAMPLE_RECORDS = 16
DEFAULT_FEATURE_COLUMNS = 4


def sample_keys_of(samples: list) -> list[str]:
    """Feature keys of decoded records (None: skipped), in order of first appearance; a sequence's lists too."""
    keys: dict[str, None] = {}
    for decoded in samples:
        if decoded is None:
            continue
        for key in feature_keys(decoded):
            keys.setdefault(key)
        lists = decoded.message.feature_lists.feature_list if decoded.kind is RecordKind.SEQUENCE_EXAMPLE else ()
        for key in sorted(lists):
            keys.setdefault(key)
    return list(keys)


class SampleRows:
    """The first rows decoded (None for those that cannot be), kept until :meth:`forget`."""

    def __init__(self) -> None:
        self._samples: list | None = None  # all the first rows, once known
        self._keys: tuple[int, list[str]] | None = None
        self._came: dict[int, Any] = {}  # a remote source's first rows, as they came
        self.announced = False  # a remote source's: told that all have come

    def forget(self) -> None:
        self._samples = None
        self._keys = None
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

    def known_keys(self, n: int) -> list[str] | None:
        """The keys of the first ``n`` rows when worked out before, else None."""
        return list(self._keys[1]) if self._keys is not None and self._keys[0] == n else None

    def keys(self, n: int, samples: list) -> list[str]:
        """The keys of ``samples`` (the first ``n`` rows), kept when they are all of them."""
        keys = sample_keys_of(samples)
        if samples is self._samples:  # all of them (a remote source's may not all have come)
            self._keys = (n, list(keys))
        return keys
