"""A finding's records side by side: each one's images with their boxes, and a table of their features
with the features that differ between them highlighted.

The caller reads and decodes the records (:class:`ComparedRecord`); this view
lays them out. Images are shown by the record detail's own
:class:`~app.views.image_preview.ImagePreview` (boxes, labels, zoom); the
feature table puts one column per record, a row per feature key any of them
has, and marks the rows whose values are not the same in every record.
``shown()`` is emitted once every record's images are on screen.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.style import palette
from app.views.image_preview import ImagePreview
from codec.decode.decoder import DecodedRecord, feature_cell, feature_values, record_feature_lists, record_features

MAX_COMPARED = 4  # records shown side by side; a larger finding says how many more it has
CELL_CHARS = 60
DIFF_BG = palette.DIFF_BG  # a feature whose values differ between the records
ABSENT_TEXT = "—"
IMAGES_SHARE = 0.66  # of the height, for the images over the feature table


@dataclass
class ComparedRecord:
    """One record of a finding, read and decoded by the caller.

    ``title``: where it is (file and index, the tab's record number);
    ``note``: a remark (deleted, not in this tab); ``decoded`` None with
    ``error`` when it could not be read; ``labels``: the source's class names.
    """

    title: str
    decoded: DecodedRecord | None = None
    error: str | None = None
    note: str | None = None
    labels: Any = None


def _feature_values(decoded: DecodedRecord | None) -> dict[str, tuple]:
    """Feature key -> a comparable form of its value (a feature list's bytes), for one record."""
    if decoded is None:
        return {}
    out: dict[str, tuple] = {}
    features = record_features(decoded)
    if features is not None:
        for key in features:
            dtype, values = feature_values(features[key])
            out[key] = (dtype, tuple(values))
    lists = record_feature_lists(decoded)
    if lists is not None:
        for key in lists:
            out.setdefault(key, ("feature_list", lists[key].SerializeToString(deterministic=True)))
    return out


def differing_keys(records: Sequence[DecodedRecord | None]) -> tuple[list[str], set[str]]:
    """(every feature key of the records, sorted; the keys whose values are not the same in all of them)."""
    values = [_feature_values(d) for d in records]
    keys = sorted({k for v in values for k in v})
    differ = {k for k in keys if len({v.get(k) for v in values}) > 1}
    return keys, differ


class _RecordColumn(QWidget):
    """One record: its title and note over its images."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.images = ImagePreview(self)
        for widget in (self.images.fit_button, self.images.actual_button, self.images.stretch_button,
                       self.images.zoom_label):  # fit to the column; the record detail has the zoom
            widget.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.note)
        layout.addWidget(self.images, 1)

    def show_record(self, record: ComparedRecord) -> None:
        self.title.setText(f"<b>{html.escape(record.title)}</b>")
        note = record.error or record.note
        self.note.setText(note or "")
        self.note.setStyleSheet(f"color: {palette.ERROR_COLOR if record.error else palette.MUTED_COLOR};")
        self.note.setVisible(bool(note))
        self.images.set_record(record.decoded, labels=record.labels)


class FindingCompare(QWidget):
    """The records of one finding side by side (see the module docstring)."""

    shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._columns: list[_RecordColumn] = []
        self._records: list[ComparedRecord] = []
        self._waiting: set[int] = set()
        self._differ: set[str] = set()
        self.heading = QLabel(self)
        palette.follow(self.heading, lambda: f"color: {palette.CAPTION_COLOR};")
        self.heading.setWordWrap(True)
        self.row = QWidget(self)
        self.row_layout = QHBoxLayout(self.row)
        self.row_layout.setContentsMargins(0, 0, 0, 0)
        self.row_layout.setSpacing(10)
        self.only_differences = QCheckBox("Only differing features", self)
        self.only_differences.setToolTip("Hide the features that are the same in every record shown")
        self.only_differences.toggled.connect(self._filter_rows)
        self.diff_label = QLabel(self)
        palette.follow(self.diff_label, lambda: palette.HINT_STYLE)
        self.table = QTreeWidget(self)
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.header().setStretchLastSection(True)
        self.table.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._bold = QFont(self.table.font())
        self._bold.setBold(True)

        features = QWidget(self)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.diff_label, 1)
        bar.addWidget(self.only_differences)
        lower = QVBoxLayout(features)
        lower.setContentsMargins(0, 0, 0, 0)
        lower.setSpacing(2)
        lower.addLayout(bar)
        lower.addWidget(self.table, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.row)
        self.splitter.addWidget(features)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_user_split", True))
        self._user_split = False  # the user moved the divider: their sizes stay
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.heading)
        layout.addWidget(self.splitter, 1)
        self.clear()

    # -- public -------------------------------------------------------------
    def records(self) -> list[ComparedRecord]:
        return list(self._records)

    def columns(self) -> list[ImagePreview]:
        """Each record's image preview, left to right."""
        return [c.images for c in self._columns[:len(self._records)]]

    def differing(self) -> set[str]:
        """The feature keys whose values differ between the records shown."""
        return set(self._differ)

    def clear(self, text: str = "Select a finding to compare its records.") -> None:
        self._records = []
        self._waiting = set()
        self._differ = set()
        for column in self._columns:
            column.images.clear()
            column.hide()
        self.heading.setText(text)
        self.table.clear()
        self.table.setColumnCount(1)  # setHeaderLabels only ever adds columns: the last finding's would stay
        self.table.setHeaderLabels(["Feature"])
        self.diff_label.setText("")
        self.splitter.setVisible(False)

    def show_records(self, heading: str, records: Sequence[ComparedRecord], more: int = 0) -> None:
        """Show ``records`` side by side under ``heading`` (rich text); ``more``: how many the finding has
        beyond them."""
        records = list(records)[:MAX_COMPARED]
        note = f" — the first {len(records)} of {len(records) + more:,} records shown" if more else ""
        self.clear(heading + note)
        self._records = records
        self.splitter.setVisible(bool(records))
        while len(self._columns) < len(records):
            column = _RecordColumn(self.row)
            k = len(self._columns)
            column.images.images_shown.connect(lambda _n, k=k: self._column_shown(k))
            self._columns.append(column)
            self.row_layout.addWidget(column, 1)
        self._waiting = set(range(len(records)))
        if not self._user_split:
            height = max(self.splitter.height(), 300)
            self.splitter.setSizes([int(height * IMAGES_SHARE), int(height * (1 - IMAGES_SHARE))])
        self._fill_table(records)
        for k, (column, record) in enumerate(zip(self._columns, records)):
            column.show()
            column.show_record(record)  # may say its images are shown at once
            if record.decoded is None:  # nothing to decode: shown as it is
                self._column_shown(k)
        if not records:
            self.shown.emit()

    # -- the feature table ----------------------------------------------------
    def _fill_table(self, records: list[ComparedRecord]) -> None:
        decoded = [r.decoded for r in records]
        keys, differ = differing_keys(decoded)
        self._differ = differ
        self.table.setColumnCount(1 + len(records))
        self.table.setHeaderLabels(["Feature", *(r.title for r in records)])
        items = []
        for key in keys:
            cells = [feature_cell(d, key, CELL_CHARS) if d is not None and _has(d, key) else ABSENT_TEXT
                     for d in decoded]
            item = QTreeWidgetItem([key, *cells])
            item.setToolTip(0, key)
            for c, text in enumerate(cells, start=1):
                item.setToolTip(c, text)
                if text == ABSENT_TEXT:
                    item.setForeground(c, QBrush(palette.MUTED_TEXT))
            if key in differ:
                for c in range(len(cells) + 1):
                    item.setBackground(c, QBrush(DIFF_BG))
                item.setFont(0, self._bold)
                item.setToolTip(0, f"{key}: differs between the records")
            items.append(item)
        self.table.addTopLevelItems(items)
        header = self.table.header()
        header.resizeSection(0, min(260, max(140, self.table.sizeHintForColumn(0) + 16)))
        for c in range(1, len(records) + 1):  # the records share the rest equally
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Stretch)
        n = len(differ)
        self.diff_label.setText(f"{len(keys):,} features · {n:,} differ" if len(records) > 1
                                else f"{len(keys):,} features")
        self._filter_rows()

    def _filter_rows(self, *_) -> None:
        only = self.only_differences.isChecked()
        for i in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(i)
            item.setHidden(only and item.text(0) not in self._differ)

    def _column_shown(self, k: int) -> None:
        if k in self._waiting:
            self._waiting.discard(k)
            if not self._waiting:
                self.shown.emit()


def _has(decoded: DecodedRecord, key: str) -> bool:
    """Whether the record has feature ``key`` at all (an empty one shows an empty cell, not "absent")."""
    features = record_features(decoded)
    if features is not None and key in features:
        return True
    lists = record_feature_lists(decoded)
    return lists is not None and key in lists
