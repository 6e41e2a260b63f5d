"""A shard set's files as a table model: name, record count, and where indexing is with each.

The states are waiting, indexing, indexed, unusable, and next (a shard a
person clicked before it was indexed, so it is indexed next).
"""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor

from codec.shards import ShardSet

from app.style import icons

HEADERS = ("Shard", "Records", "State")
NAME, RECORDS, STATE = range(3)
WAITING, INDEXING, INDEXED, UNUSABLE, NEXT = "waiting", "indexing…", "indexed", "unusable", "next"
SEPARATORS = "-_."
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
WAITING_TEXT = QColor(128, 128, 128)


def name_parts(names: list[str]) -> tuple[str, str]:
    """The prefix and suffix all ``names`` share, cut at a separator: ``train-``, ``-of-01024.tfrecord``.

    Rows show what is left (``00042``): the part that tells shards apart,
    which a narrow column would otherwise elide.
    """
    if len(names) < 2:
        return "", ""
    shortest = min(len(n) for n in names)
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    cut = max((prefix.rfind(c) for c in SEPARATORS), default=-1)
    prefix = prefix[:cut + 1]
    cut = min((i for i in (suffix.find(c) for c in SEPARATORS) if i >= 0), default=len(suffix))
    suffix = suffix[cut:]
    if len(prefix) + len(suffix) >= shortest:
        return "", ""
    return prefix, suffix


class ShardListModel(QAbstractTableModel):
    """Read-only view of ``shard_set.shards``; :meth:`refresh` repaints the counts and states."""

    def __init__(self, shard_set: ShardSet, parent=None) -> None:
        super().__init__(parent)
        self._set = shard_set
        self.asked: int | None = None  # the shard a person clicked that is not indexed yet
        self._names = [os.path.basename(shard.path) for shard in shard_set.shards]
        self.prefix, self.suffix = name_parts(self._names)

    @property
    def pattern(self) -> str:
        """``train-*-of-01024.tfrecord`` when the rows show only the part that differs, else ""."""
        return f"{self.prefix}*{self.suffix}" if self.prefix or self.suffix else ""

    def short_name(self, k: int) -> str:
        name = self._names[k]
        return name[len(self.prefix): len(name) - len(self.suffix)]

    def state(self, k: int) -> str:
        s = self._set
        shard = s.shards[k]
        if shard.error is not None:
            return UNUSABLE
        if s.is_numbered(k):
            return INDEXED
        if s.current == k or shard.count is not None:
            return INDEXING  # being indexed, or done and about to be shown
        return NEXT if k == self.asked else WAITING

    def refresh(self) -> None:
        if self._set.shards:
            self.dataChanged.emit(self.index(0, RECORDS), self.index(len(self._set.shards) - 1, STATE))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._set.shards)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == NAME:
            return f"{self.pattern}: the part of each name that differs is shown" if self.pattern else None
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if section == RECORDS else None
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        k, col = index.row(), index.column()
        shard = self._set.shards[k]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == NAME:
                return self.short_name(k)
            if col == RECORDS:
                return "—" if shard.count is None or shard.error else f"{shard.count:,}"
            return self.state(k)
        if role == Qt.ItemDataRole.TextAlignmentRole and col == RECORDS:
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            if shard.error is not None:
                return f"{shard.path}\n{shard.error}"
            state = self.state(k)
            where = (f"records {self._set.record_start(k):,} – {self._set.record_start(k) + shard.count - 1:,}"
                     if state == INDEXED and shard.count else state)
            return f"{shard.path}\n{where}"
        if role == Qt.ItemDataRole.DecorationRole and col == STATE:
            state = self.state(k)
            if state == UNUSABLE:
                return icons.icon("damaged")
            if state == INDEXED and shard.file is not None and shard.file.problems:
                return icons.icon("warning")
            return None
        if role == Qt.ItemDataRole.ForegroundRole and col == STATE and self.state(k) in (WAITING, NEXT):
            return WAITING_TEXT
        return None
