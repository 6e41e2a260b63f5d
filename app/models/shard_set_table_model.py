"""The record table of a shard set: records numbered across shards, and a last column naming each one's shard
(a TFDS dataset's as its split and number: ``train 00003-of-00016``)."""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from app.models.problem_notes import ShardProblemNotes
from app.models.record_table_model import BASE_COLUMNS, RecordTableModel
from app.models.records_owner import RecordsOwner
from app.models.shard_list_model import tfds_shard_text
from codec.format.framing import RecordStatus
from codec.sources.shard_set import ShardSet

SHARD_HEADER = "Shard"


class ShardSetTableModel(RecordTableModel):
    """The record table with one more column, last: the shard file of each record."""

    def __init__(self, owner: RecordsOwner, parent=None) -> None:
        super().__init__(owner, parent)
        self._shard_texts: list[str] | None = None  # a TFDS dataset's "split number" per shard

    def set_dataset(self, dataset: Any) -> None:
        """Name each shard by its split in ``dataset`` (a codec.datasets.tfds.TfdsDataset; None: by its file name)."""
        shards = self.shard_set.shards
        self._shard_texts = None if dataset is None else [
            tfds_shard_text(os.path.basename(s.path), dataset.split_of(s.path)) for s in shards]
        if self.rowCount():
            col = self.shard_column
            self.dataChanged.emit(self.index(0, col), self.index(self.rowCount() - 1, col))

    def shard_text(self, k: int) -> str:
        """How the Shard column names shard ``k``."""
        if self._shard_texts is not None:
            return self._shard_texts[k]
        return os.path.basename(self.shard_set.shards[k].path)

    def _make_notes(self) -> ShardProblemNotes:
        return ShardProblemNotes(lambda: self._owner.records)

    def problems_changed(self) -> None:
        """The shards' problems may have changed: map them again before the next use.

        Collecting them walks every shard, too slow to do for each painted
        cell of a set of 10,000 shards; the tab calls this on each progress.
        """
        self._notes.problems_changed()

    @property
    def shard_set(self) -> ShardSet:
        return self.records

    @property
    def shard_column(self) -> int:
        return BASE_COLUMNS + len(self.feature_columns())

    def shard_name(self, i: int) -> str:
        """The Shard column's text for record ``i``."""
        return self.shard_text(self.shard_set.shard_of(i))

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else super().columnCount() + 1

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and section == self.shard_column:
            if role == Qt.ItemDataRole.DisplayRole:
                return SHARD_HEADER
            if role == Qt.ItemDataRole.ToolTipRole:
                return "The shard file holding the record (offsets are inside it)"
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            return None
        return super().headerData(section, orientation, role)

    def _value(self, i: int, col: int, role: int, status: RecordStatus | None = None) -> Any:
        if col == self.shard_column:
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                name = self.shard_name(i)
                if role == Qt.ItemDataRole.ToolTipRole:
                    f, j = self.shard_set.locate(i)
                    return f"{f.path}\nrecord {j:,} of this shard"
                return name
        return super()._value(i, col, role, status)
