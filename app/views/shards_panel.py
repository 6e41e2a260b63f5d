"""The list of a shard set's files beside its record table.

One row per shard: its file name, how many records it holds, and where
indexing is with it (waiting, indexing, indexed, unusable). Clicking a shard
shows its first record; a shard not indexed yet is indexed next (the one a
person looks at comes first), and its first record is shown when it arrives.
A TFDS dataset's list names the dataset and each split's examples above,
and each shard's split in a first column.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from app.models.shard_list_model import HEADERS, INDEXING, NAME, RECORDS, SPLIT, STATE, ShardListModel
from codec.sources.shard_set import ShardSet

NAMES_MEASURED = 2000  # shard names measured for the name column's width
CELL_PADDING = 20  # a cell's text margins and focus frame, in pixels


class ShardsPanel(QWidget):
    """The list of shards with a one-line summary; ``shard_activated(k)`` when a person clicks one."""

    shard_activated = Signal(int)

    def __init__(self, shard_set: ShardSet, parent: QWidget | None = None, *, dataset: Any = None) -> None:
        super().__init__(parent)
        self.model = ShardListModel(shard_set, self, dataset=dataset)
        self.summary = QLabel(self)
        self.summary.setContentsMargins(6, 4, 6, 4)
        self.summary.setWordWrap(True)  # a dataset's splits make a long line: it must not hold the panel wide
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setShowGrid(False)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # Widths from the text they hold, set once: sizing to contents would ask every row at every refresh.
        header = self.view.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        measured = range(min(self.model.rowCount(), NAMES_MEASURED))
        names = [self.model.short_name(k) for k in measured]
        splits = [self.model.split_text(k) for k in measured]
        for col, widest in ((NAME, max(names, key=self._text_width, default="")), (RECORDS, "999,999"),
                            (STATE, INDEXING), (SPLIT, max(splits, key=self._text_width, default=""))):
            section = self.model.section(col)
            if section >= 0:
                width = max(self._text_width(widest), header.fontMetrics().horizontalAdvance(HEADERS[col]))
                self.view.setColumnWidth(section, width + CELL_PADDING)
        self._counted = -1  # indexed shards when the Records column was last fitted
        self.view.clicked.connect(lambda index: self.shard_activated.emit(index.row()))
        self.view.activated.connect(lambda index: self.shard_activated.emit(index.row()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        self.refresh()

    def _text_width(self, text: str) -> int:
        return self.view.fontMetrics().horizontalAdvance(text)

    def preferred_width(self) -> int:
        """Room for every column at its width, the frame and a vertical scroll bar."""
        columns = sum(self.view.columnWidth(c) for c in range(self.model.columnCount()))
        return columns + 2 * self.view.frameWidth() + self.view.verticalScrollBar().sizeHint().width() + 2

    def refresh(self) -> None:
        s = self.model._set
        n = len(s.shards)
        records = len(s)
        text = f"{n:,} shard{'' if n == 1 else 's'} · {s.indexed_shards:,} indexed · {records:,} records"
        if self.model.pattern:
            text = f"{self.model.pattern}\n{text}"
        dataset = self.model.dataset
        if dataset is not None:
            splits = self.model.split_summary()
            text = "\n".join(line for line in (f"{dataset.name} {dataset.version}", splits, text) if line)
        if self.summary.text() != text:
            self.summary.setText(text)
        if s.indexed_shards != self._counted:
            self._counted = s.indexed_shards
            self._fit_records_column()
        self.model.refresh()

    def _fit_records_column(self) -> None:
        """Widen the Records column when a shard's count turns out longer than it was sized for."""
        most = max((shard.count or 0 for shard in self.model._set.shards), default=0)
        width = self._text_width(f"{most:,}") + CELL_PADDING
        section = self.model.section(RECORDS)
        if width > self.view.columnWidth(section):
            self.view.setColumnWidth(section, width)

    def select_shard(self, k: int) -> None:
        """Highlight shard ``k`` in the list (without activating it)."""
        self.view.selectRow(k)
