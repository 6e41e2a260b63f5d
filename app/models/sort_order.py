"""A sorted table's order: every record number once in the order shown, the part of it a filter's
matches keep, and each shown record's place, made once needed (Qt-free; :class:`FilteredTableModel` holds one)."""
from __future__ import annotations

import numpy as np


class SortOrder:
    """The order rows are shown in (``order`` None: file order) and the header's indicator
    (``column`` -1: none, ``descending``); the model passes its matches and record count in."""

    def __init__(self) -> None:
        self.order: np.ndarray | None = None  # every record number once, in the order shown; None: file order
        self.column, self.descending = -1, False  # what the header's indicator shows (-1: none)
        self._shown: np.ndarray | None = None  # sorted: the matching records in the order shown
        self._shown_of: np.ndarray | None = None  # the matches _shown was made from
        self._rank: np.ndarray | None = None  # sorted: position of each record among _shown (-1: not shown)

    def reshow(self, matches: np.ndarray | None, rows: int) -> None:
        """The matching records in the order shown (the order restricted to the filter's matches)."""
        self._rank = None
        self._shown_of = matches
        if self.order is None:
            self._shown = None
        elif matches is None:
            self._shown = self.order
        else:
            chosen = np.zeros(rows, dtype=bool)
            chosen[matches] = True
            self._shown = self.order[chosen[self.order]]

    def sorted(self, matches: np.ndarray | None, rows: int) -> np.ndarray | None:
        """The matching records in the order shown, None in file order; made again when the
        matches are another array (a running filter's appended matches)."""
        if self.order is not None and self._shown_of is not matches:
            self.reshow(matches, rows)
        return self._shown

    def ranks(self, matches: np.ndarray | None, rows: int) -> np.ndarray:
        """Each record's position among the records shown (-1: not shown), made once asked for."""
        if self._rank is None:
            shown = self.sorted(matches, rows)
            assert shown is not None
            rank = np.full(rows, -1, dtype=np.int32 if rows < 2**31 else np.int64)
            rank[shown] = np.arange(shown.shape[0], dtype=rank.dtype)
            self._rank = rank
        return self._rank

    def drop(self) -> None:
        self.order = self._shown = self._shown_of = self._rank = None
        self.column, self.descending = -1, False

    def position(self, record: int, nearest: bool, matches: np.ndarray | None, rows: int) -> int:
        """Where ``record`` is among the records shown; the nearest is the nearest shown record by number."""
        rank = self.ranks(matches, rows)
        if record < rank.shape[0] and rank[record] >= 0:
            return int(rank[record])
        if not nearest:
            return -1
        if matches is None:
            return int(rank[min(record, rank.shape[0] - 1)])
        k = int(np.searchsorted(matches, record))
        below = int(matches[k - 1]) if k else None
        above = int(matches[k]) if k < matches.shape[0] else None
        if above is None or (below is not None and record - below <= above - record):
            return int(rank[below])
        return int(rank[above])
