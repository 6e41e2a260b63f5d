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
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QStyle, QTableView, QVBoxLayout, QWidget

from app.models.shard_list_model import HEADERS, NAME, RECORDS, SPLIT, STATE, ShardListModel
from codec.sources.shard_set import ShardSet

NAMES_MEASURED = 2000  # shard names measured for the name column's width


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
        # Records, State and Split as wide as what they show; the name takes the rest and elides in its
        # middle, so a narrow panel never cuts the counts. Measured from the text, not sized to contents
        # (that would ask every row at every refresh).
        header = self.view.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(self._cell_width("…"))
        measured = range(min(self.model.rowCount(), NAMES_MEASURED))
        names = [self.model.short_name(k) for k in measured]
        splits = [self.model.split_text(k) for k in measured]
        self._name_width = self._column_width(NAME, names)
        for col in (RECORDS, STATE, SPLIT):
            if self.model.section(col) >= 0:
                header.setSectionResizeMode(self.model.section(col), QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(self.model.section(NAME), QHeaderView.ResizeMode.Stretch)
        if self.model.section(SPLIT) >= 0:
            self.view.setColumnWidth(self.model.section(SPLIT), self._column_width(SPLIT, splits))
        self._counted = -1  # indexed shards when Records and State were last fitted
        self.view.clicked.connect(lambda index: self.shard_activated.emit(index.row()))
        self.view.activated.connect(lambda index: self.shard_activated.emit(index.row()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        self.refresh()

    def _cell_width(self, text: str) -> int:
        """A cell that shows ``text`` whole: the text, the view's margins each side and a pixel to spare."""
        margin = self.view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self.view) + 1
        return self.view.fontMetrics().horizontalAdvance(text) + 2 * margin + 1

    def _column_width(self, col: int, texts: list[str]) -> int:
        """Room for ``texts`` and for the column's header."""
        header = self.view.horizontalHeader()
        margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        title = header.fontMetrics().horizontalAdvance(HEADERS[col]) + 2 * margin + 4
        return max([title, *(self._cell_width(t) for t in texts)])

    def preferred_width(self) -> int:
        """Room for every column at its width (the name in full), the frame and a vertical scroll bar."""
        name = self.model.section(NAME)
        others = sum(self.view.columnWidth(c) for c in range(self.model.columnCount()) if c != name)
        return self._name_width + others + 2 * self.view.frameWidth() + \
            self.view.verticalScrollBar().sizeHint().width() + 2

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
            self._fit_counts()
        self.model.refresh()

    def _fit_counts(self) -> None:
        """Records and State as wide as the counts and states shown now (they change as shards are indexed)."""
        n = min(self.model.rowCount(), NAMES_MEASURED)
        most = max((shard.count or 0 for shard in self.model._set.shards), default=0)
        states = {self.model.state(k) for k in range(n)}
        self.view.setColumnWidth(self.model.section(RECORDS), self._column_width(RECORDS, [f"{most:,}"]))
        self.view.setColumnWidth(self.model.section(STATE), self._column_width(STATE, sorted(states)))

    def select_shard(self, k: int) -> None:
        """Highlight shard ``k`` in the list (without activating it)."""
        self.view.selectRow(k)
