"""A shard set's files as a table model: name, record count, and where indexing is with each.

The states are waiting, indexing, indexed, unusable, and next (a shard a
person clicked before it was indexed, so it is indexed next). A TFDS
dataset's shards have a first column more: their split, and the examples
``dataset_info.json`` says each shard holds are checked against its count.
"""
from __future__ import annotations

import os
import re
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from app.style import icons, palette
from codec.sources.shard_set import ShardSet

HEADERS = ("Shard", "Records", "State", "Split")
NAME, RECORDS, STATE, SPLIT = range(4)  # column ids; a TFDS set shows SPLIT first (see ShardListModel.columns)
WAITING, INDEXING, INDEXED, UNUSABLE, NEXT = "waiting", "indexing…", "indexed", "unusable", "next"
SEPARATORS = "-_."
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
WAITING_TEXT = palette.MUTED_TEXT
_SHARD_NUMBER = re.compile(r"\d{5}-of-\d{5}$")  # TFDS shard names end so: NAME-SPLIT.tfrecord-00003-of-00016


def _shard_number(name: str) -> str:
    found = _SHARD_NUMBER.search(name)
    return found.group(0) if found else name


def tfds_shard_text(name: str, split: str | None) -> str:
    """A TFDS shard as ``train 00003-of-00016``: its split and its number in it (the name when it has neither)."""
    number = _shard_number(name)
    return name if split is None or number == name else f"{split} {number}"


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

    def __init__(self, shard_set: ShardSet, parent=None, *, dataset: Any = None) -> None:
        super().__init__(parent)
        self._set = shard_set
        self.dataset = dataset  # a codec.datasets.tfds.TfdsDataset the shards belong to, or None
        self.asked: int | None = None  # the shard a person clicked that is not indexed yet
        self._names = [os.path.basename(shard.path) for shard in shard_set.shards]
        self.splits = [dataset.split_of(shard.path) if dataset is not None else None for shard in shard_set.shards]
        if dataset is not None:  # the Split column says the split: a shard is its number in it
            self.prefix = self.suffix = ""
            self._names = [_shard_number(n) for n in self._names]
        else:
            self.prefix, self.suffix = name_parts(self._names)
        self.expected = [dataset.shard_examples(shard.path) if dataset is not None else None
                         for shard in shard_set.shards]
        self.columns: tuple[int, ...] = (SPLIT, NAME, RECORDS, STATE) if dataset is not None else (NAME, RECORDS, STATE)

    def section(self, column: int) -> int:
        """Where column ``column`` (NAME, RECORDS, STATE, SPLIT) is shown; -1 when it is not."""
        return self.columns.index(column) if column in self.columns else -1

    def split_text(self, k: int) -> str:
        """Shard ``k``'s split (by its file name), "" outside a TFDS dataset or when its name says none."""
        return self.splits[k] or ""

    def split_summary(self) -> str:
        """``train 16 · test 6 examples``: each split's examples per ``dataset_info.json``, in the set's order."""
        if self.dataset is None:
            return ""
        parts = []
        for name in dict.fromkeys(s for s in self.splits if s):
            split = self.dataset.splits.get(name)
            count = split.num_examples if split is not None else None
            parts.append(f"{name} {'?' if count is None else f'{count:,}'}")
        return " · ".join(parts) + " examples" if parts else ""

    def mismatch(self, k: int) -> str | None:
        """Why shard ``k``'s record count is not what ``dataset_info.json`` says, None when it is (or not known)."""
        shard, expected = self._set.shards[k], self.expected[k]
        if expected is None or shard.count is None or shard.error is not None or shard.count == expected:
            return None
        return f"{shard.count:,} records, dataset_info.json says {expected:,}"

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
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._set.shards) - 1, len(self.columns) - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._set.shards)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        col = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[col]
        if role == Qt.ItemDataRole.ToolTipRole and col == NAME:
            return f"{self.pattern}: the part of each name that differs is shown" if self.pattern else None
        if role == Qt.ItemDataRole.ToolTipRole and col == SPLIT:
            return f"The split of {self.dataset.name} {self.dataset.version} each shard holds (from its name)"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if col == RECORDS else None
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        k, col = index.row(), self.columns[index.column()]
        shard = self._set.shards[k]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == SPLIT:
                return self.split_text(k)
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
            lines = [shard.path, where]
            if self.splits[k]:
                expected = self.expected[k]
                lines.append(f"split {self.splits[k]}" + (f", {expected:,} examples per dataset_info.json"
                                                          if expected is not None else ""))
            mismatch = self.mismatch(k)
            if mismatch:
                lines.append(mismatch)
            return "\n".join(lines)
        if role == Qt.ItemDataRole.DecorationRole and col == RECORDS and self.mismatch(k):
            return icons.icon("warning")
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
