"""How wide the record table's columns are: the fixed ones for what the file can hold, feature columns for their cells.

:class:`ColumnSizing` sizes the fixed columns (#, offset, size, kind,
status) for the largest values the open source can have, and feature columns
for their header and first rows; the default feature columns are narrowed so
they fit beside the fixed ones when the tab opens. It widens the fixed ones
once damage is found (the # column's mark, longer statuses) or the file is
followed ("being written").
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from app.models.labels import STATUS_TEXT
from app.models.record_table_model import BASE_COLUMNS, Column, RecordTableModel
from codec.format.framing import RecordStatus
from codec.sources.protocol import RecordSource

CELL_PADDING = 18  # a cell's text margins and focus frame, in pixels
HEADER_SORT_ROOM = 6  # a header section's own margins beyond a cell's
COMPRESSED_GROWTH = 8  # offsets in a GZIP/ZLIB file's stream: a guess of how much it inflates
FEATURE_MIN_WIDTH, FEATURE_MAX_WIDTH = 80, 220


class ColumnSizing:
    """The widths of ``table``'s columns over ``model``; ``source()`` is the file opened (its size and
    problems), ``extra_width()`` the width of columns a tab adds to the fixed ones (a set's Shard column)."""

    def __init__(self, table: QTableView, model: RecordTableModel, source: Callable[[], RecordSource],
                 extra_width: Callable[[], int]) -> None:
        self.table = table
        self.model = model
        self._source = source
        self._extra_width = extra_width
        self.damage_wide = False  # the fixed columns were sized for damage
        self.writing_room = False  # the Status column fits "being written" (once followed)
        self._fixed_widths: dict[int, int] = {}
        self.fitted_widths: dict[str, int] = {}  # default feature columns narrowed to fit on first open

    def cell_width(self, text: str) -> int:
        """Width of a cell (or its header) showing ``text``: text plus the style's margins."""
        fm = self.table.fontMetrics()
        header_fm = self.table.horizontalHeader().fontMetrics()
        return max(fm.horizontalAdvance(text), header_fm.horizontalAdvance(text)) + CELL_PADDING

    def size_fixed(self) -> None:
        """Fixed columns as wide as what they can hold in this file (the header at least)."""
        tfile = self._source()
        compressed = tfile.compression.value != "none"
        most_bytes = tfile.file_size * (COMPRESSED_GROWTH if compressed else 1)
        most_records = max(len(tfile), min(most_bytes // 16, 99_999_999))  # a record takes 16 bytes at least
        damaged = tfile.problem_count() > 0
        self.damage_wide = damaged
        kinds = self.model.sample_kinds() or ["Example"]
        icon = self.table.iconSize().width() if self.table.iconSize().width() > 0 else 16
        icon += 6
        samples = {
            Column.INDEX: (f"{most_records:,}", icon if damaged else 0),
            Column.OFFSET: (f"{most_bytes:,}", 0),
            Column.SIZE: (f"{min(most_bytes, 99_999_999):,}", 0),
            Column.KIND: (max(kinds, key=len), 0),
            Column.STATUS: (max(self._widest_status() if damaged else "ok",
                                STATUS_TEXT[RecordStatus.WRITING] if self.writing_room else "", key=len), icon),
        }
        for col, (sample, extra) in samples.items():
            header = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            width = max(self.cell_width(sample) + extra, self.cell_width(header) + HEADER_SORT_ROOM)
            self._fixed_widths[col] = width
            self.table.setColumnWidth(col, width)

    def make_room_for_writing(self) -> None:
        """The file is followed: the Status column fits "being written" from now on."""
        if not self.writing_room:
            self.writing_room = True
            self.size_fixed()

    def _widest_status(self) -> str:
        """The longest status text the source's problems put in the Status column."""
        problems = self._source().problems
        texts = ["data CRC bad"]
        if any(p.index is None for p in problems):
            texts.append("ok, after skipped bytes")
        if any(p.index is not None and p.kind.value == "length_crc" for p in problems):
            texts.append(STATUS_TEXT[RecordStatus.LENGTH_CRC])
        return max(texts, key=len)

    def widen_for_damage(self) -> None:
        """Problems were found after the columns were sized: room for the # column's mark and longer statuses."""
        if not self.damage_wide and self._source().problem_count():
            self.size_fixed()
            if self.fitted_widths:  # the default columns, fitted: fitted again (fewer, or narrower)
                self.model.set_feature_columns(self.fitting(self.model.feature_columns()))
                self.size_features()

    def _feature_width(self, key: str) -> int:
        """A feature column's natural width: its header and the first rows' cells, within bounds."""
        texts = [self.model.short_key(key), *self.model.sample_cells(key)]
        width = max(self.cell_width(t) for t in texts)
        return min(max(width, FEATURE_MIN_WIDTH), FEATURE_MAX_WIDTH)

    def fitting(self, keys: list[str]) -> list[str]:
        """As many of ``keys`` as fit beside the fixed columns in the table as it is now, narrowed to fit.

        Each keeps at least FEATURE_MIN_WIDTH; the widest give way first
        (their cells elide, the tooltip has the whole value).
        """
        if self.table.viewport().width() < 200:  # not laid out yet: no way to tell
            return keys
        available = self.table.viewport().width() - sum(self._fixed_widths.values()) - self._extra_width()
        scroll_bar = self.table.verticalScrollBar()
        if not scroll_bar.isVisible():  # more rows are coming: it will take its width from the viewport
            available -= scroll_bar.sizeHint().width()
        keys = keys[:max(0, available // FEATURE_MIN_WIDTH)]
        natural = [self._feature_width(key) for key in keys]
        cap = max(natural, default=0)
        while cap > FEATURE_MIN_WIDTH and sum(min(w, cap) for w in natural) > available:
            cap -= 1
        self.fitted_widths = {key: min(w, cap) for key, w in zip(keys, natural)}
        return keys

    def size_features(self) -> None:
        """Each feature column as wide as fitted, else as its natural width."""
        for col, key in enumerate(self.model.feature_columns(), start=BASE_COLUMNS):
            self.table.setColumnWidth(col, self.fitted_widths.get(key) or self._feature_width(key))
