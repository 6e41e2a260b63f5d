"""How wide the record table's columns are, and how many default feature columns fit.

:class:`ColumnSizing` sizes the fixed columns (#, offset, size, kind,
status) for the largest values the open source can have and the longest
words the Kind and Status columns can show (never cut), and feature columns
for their header and first rows. :meth:`ColumnSizing.fitting` takes the
default feature columns, best first, while they fit beside the fixed ones:
each is measured for what its kind of values needs (not the values sampled),
so files with the same schema get the same columns at the same width.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from app.models.column_choice import FEATURE_LIST, FeatureFacts
from app.models.labels import EDITED_STATUS, GAP_STATUS, KIND_TEXT, LARGE_KIND, NO_KIND, STATUS_TEXT, UNREADABLE_KIND
from app.models.record_table_model import BASE_COLUMNS, Column, RecordTableModel
from codec.decode.decoder import RecordKind
from codec.format.framing import RecordStatus
from codec.sources.protocol import RecordSource

CELL_PADDING = 18  # a cell's text margins and focus frame, in pixels
HEADER_SORT_ROOM = 6  # a header section's own margins beyond a cell's
COMPRESSED_GROWTH = 8  # offsets in a GZIP/ZLIB file's stream: a guess of how much it inflates
FEATURE_MIN_WIDTH, FEATURE_MAX_WIDTH = 80, 220
UNLAID_COLUMNS = 4  # default feature columns shown before the table has a width (chosen again when it has)
# What a cell of each kind of feature needs, whatever the values sampled: a single value, a list.
_KIND_SAMPLE = {"int64": ("000000", "[00, 00, …] (3)"), "float": ("0.0000000", "[0.000, …] (3)"),
                "bytes": ("x" * 12, '["xxxxxx", …] (3)'), FEATURE_LIST: ("00 steps", "00 steps")}
_DAMAGE_STATUSES = (RecordStatus.LENGTH_CRC, RecordStatus.DATA_CRC, RecordStatus.TRUNCATED)


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
        self.fitted_widths: dict[str, int] = {}  # default feature columns narrowed to fit

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
        icon = self.table.iconSize().width() if self.table.iconSize().width() > 0 else 16
        icon += 6
        samples = {
            Column.INDEX: ([f"{most_records:,}"], icon if damaged else 0),
            Column.OFFSET: ([f"{most_bytes:,}"], 0),
            Column.SIZE: ([f"{min(most_bytes, 99_999_999):,}"], 0),
            Column.KIND: (self.kind_texts(), 0),
            Column.STATUS: (self.status_texts(), icon),
        }
        for col, (texts, extra) in samples.items():
            header = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            width = max(max(self.cell_width(t) for t in texts) + extra, self.cell_width(header) + HEADER_SORT_ROOM)
            self._fixed_widths[col] = width
            self.table.setColumnWidth(col, width)

    def kind_texts(self) -> list[str]:
        """Every word the Kind column can show for this source's records (it is never cut)."""
        if self.model.records.payload is not None:  # what it decodes to, else raw
            kinds = [KIND_TEXT[RecordKind.RAW], *self.model.sample_kinds()]
        else:  # the kind rule: any kind but a message (which only a payload gives)
            kinds = [text for kind, text in KIND_TEXT.items() if kind is not RecordKind.MESSAGE]
        return [*kinds, UNREADABLE_KIND, LARGE_KIND, NO_KIND]

    def status_texts(self) -> list[str]:
        """Every word the Status column can show for this source now (it is never cut): damage words once
        damage is found, "being written" once the file is followed."""
        texts = [STATUS_TEXT[RecordStatus.OK], EDITED_STATUS]
        if self.damage_wide:
            texts += [GAP_STATUS, *(STATUS_TEXT[s] for s in _DAMAGE_STATUSES)]
        if self.writing_room:
            texts.append(STATUS_TEXT[RecordStatus.WRITING])
        return texts

    def make_room_for_writing(self) -> None:
        """The file is followed: the Status column fits "being written" from now on."""
        if not self.writing_room:
            self.writing_room = True
            self.size_fixed()

    def widen_for_damage(self) -> bool:
        """Problems were found after the columns were sized: room for the # column's mark and the damage
        words; True when the fixed columns were sized again (the default feature columns should be fitted again)."""
        if self.damage_wide or not self._source().problem_count():
            return False
        self.size_fixed()
        return True

    def _feature_width(self, key: str) -> int:
        """A feature column's natural width: its header and the first rows' cells, within bounds."""
        texts = [self.model.short_key(key), *self.model.sample_cells(key)]
        width = max(self.cell_width(t) for t in texts)
        return min(max(width, FEATURE_MIN_WIDTH), FEATURE_MAX_WIDTH)

    def _room_needed(self, key: str, fact: FeatureFacts) -> int:
        """What a feature column needs for its header and its kind of values (not the values sampled)."""
        single, several = _KIND_SAMPLE.get(fact.kind, ("",) * 2)
        width = max(self.cell_width(self.model.short_key(key)), self.cell_width(several if fact.most > 1 else single))
        return min(max(width, FEATURE_MIN_WIDTH), FEATURE_MAX_WIDTH)

    def available_width(self) -> int:
        """The table's width left for feature columns beside the fixed ones (and a tab's extra columns)."""
        available = self.table.viewport().width() - sum(self._fixed_widths.values()) - self._extra_width()
        scroll_bar = self.table.verticalScrollBar()
        if not scroll_bar.isVisible():  # more rows may come: it will take its width from the viewport
            available -= scroll_bar.sizeHint().width()
        return available

    def fitting(self, ranked: list[str]) -> list[str]:
        """The first of ``ranked`` that fit beside the fixed columns in the table as it is now (one at least).

        Each is measured by what its kind needs, so the same schema gets the
        same columns; shown at their natural widths, the widest give way
        first if the values sampled need more (cells elide, tooltips have the
        whole value).
        """
        if self.table.viewport().width() < 200:  # not laid out yet: chosen again once it is
            keys = ranked[:UNLAID_COLUMNS]
            self.fitted_widths = {}
            return keys
        available = self.available_width()
        schema = self.model.sample_schema()
        keys: list[str] = []
        used = 0
        for key in ranked:
            need = self._room_needed(key, schema.get(key, FeatureFacts()))
            if keys and used + need > available:
                break
            keys.append(key)
            used += need
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
