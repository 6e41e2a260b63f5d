"""One open TFRecord file: the record table beside the record detail.

A FileTab owns its TFRecordFile, its table model and its worker: the index
pass (then, for files up to ``AUTO_VERIFY_BYTES``, a data CRC check of every
record) runs on a worker thread, and the model appends rows as progress
arrives. The window only reads :meth:`FileTab.state` and calls the actions.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel, QMenu, QPushButton,
                               QSplitter, QTableView, QToolButton, QVBoxLayout, QWidget)

from codec.decode import decode_record, record_json_value
from codec.document import sorted_unique
from codec.errors import FileChangedError, TFRecordError
from codec.framing import RecordStatus
from codec.reader import TFRecordFile
from codec.scan import IndexProgress

from app.models.filtered_table_model import FilteredTableModel, window_rows_for
from app.models.labels import STATUS_TEXT
from app.models.record_table_model import BASE_COLUMNS, Column, RecordTableModel
from app.models.settings import Settings, columns_signature
from app.shell.corruption_tools import CorruptionTools
from app.shell.qa_views import QaViews
from app.shell.tab_editing import TabEditing
from app.style import icons
from app.views.page_bar import PageBar
from app.views.record_detail import RecordDetail
from app.workers.worker import PAINT_GATE, GeneratorWorker, one_line

# Files up to this size get every data CRC checked right after indexing, so
# damaged records are marked without asking; larger files on request.
AUTO_VERIFY_BYTES = 256 << 20
COPY_ROWS_MAX = 10_000  # rows Ctrl+C puts on the clipboard (more: File > Export)
CELL_PADDING = 18  # a cell's text margins and focus frame, in pixels
HEADER_SORT_ROOM = 6  # a header section's own margins beyond a cell's
COMPRESSED_GROWTH = 8  # offsets in a GZIP/ZLIB file's stream: a guess of how much it inflates
FEATURE_MIN_WIDTH, FEATURE_MAX_WIDTH = 80, 220
TABLE_SHARE = 0.56  # of the tab's width, for the table beside the record detail
MIN_TABLE_ROWS = 10  # the table keeps this many rows when panels and docks open


class PassProgress(NamedTuple):
    """A worker's progress: which pass ("index" or "verify") and how far."""

    phase: str
    progress: IndexProgress


@dataclass(frozen=True)
class TabState:
    """What the status bar shows about a tab."""

    path: str
    compression: str
    file_size: int
    records: int
    problems: int
    phase: str  # "index", "verify", "done", "cancelled", "failed"
    fraction: float
    running: bool
    verified: bool
    error: str | None = None
    shards: tuple[int, int] | None = None  # (indexed, all) for a shard set


class GoTarget(NamedTuple):
    kind: str  # "record" or "offset"
    value: int


def parse_goto(text: str) -> GoTarget:
    """``12`` or ``-1`` is a record; ``@12345``, ``@0x3039`` or ``0x3039`` a byte offset.

    Thousands separators (``1,234`` / ``1_234`` / spaces) are allowed.
    Raises ValueError with a one-line message.
    """
    raw = text.strip()
    s = raw.replace(",", "").replace("_", "").replace(" ", "")
    kind = "record"
    if s.startswith("@"):
        kind, s = "offset", s[1:]
    if s.lower().startswith("0x"):
        kind = "offset"
    try:
        value = int(s, 0) if kind == "offset" else int(s)
    except ValueError:
        raise ValueError(f"not a record number or byte offset: {raw!r} (try 42, -1, @12345 or 0x3039)") from None
    if kind == "offset" and value < 0:
        raise ValueError(f"a byte offset cannot be negative: {raw!r}")
    return GoTarget(kind, value)


class RecordTableView(QTableView):
    """The record table: fixed row height, Home/End jump to the first/last record.

    Over a paged :class:`FilteredTableModel` the keys cross page edges: Home /
    End, Up at the first row and Down at the last ask for another matching
    position with ``position_requested(int)`` (the tab moves the window there).
    """

    copied = Signal(str)
    note = Signal(str)  # a one-line note for the status bar
    position_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        vh = self.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 8)
        vh.hide()
        hh = self.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.setHighlightSections(False)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        model = self.model()
        if model is not None and model.rowCount() and action in (
                QAbstractItemView.CursorAction.MoveHome, QAbstractItemView.CursorAction.MoveEnd):
            row = 0 if action == QAbstractItemView.CursorAction.MoveHome else model.rowCount() - 1
            column = max(0, self.currentIndex().column())
            return model.index(row, column)
        return super().moveCursor(action, modifiers)

    def paintEvent(self, event) -> None:
        with PAINT_GATE.painting():
            super().paintEvent(event)

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_rows()
            event.accept()
            return
        position = self._position_beyond_window(event)
        if position >= 0:
            event.accept()
            self.position_requested.emit(position)
            return
        super().keyPressEvent(event)

    def _position_beyond_window(self, event) -> int:
        """The matching position a key asks for outside a paged window (-1: the key stays in the window)."""
        rows = self.model()
        if not isinstance(rows, FilteredTableModel) or not rows.is_paged() or \
                event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            return -1
        key, current = event.key(), self.currentIndex()
        start, count = rows.window_start, rows.rowCount()
        row = current.row() if current.isValid() else -1
        if key == Qt.Key.Key_Home:
            return 0
        if key == Qt.Key.Key_End:
            return rows.matching_count() - 1
        if key in (Qt.Key.Key_Down, Qt.Key.Key_PageDown) and row == count - 1 and \
                start + count < rows.matching_count():
            return start + count
        if key in (Qt.Key.Key_Up, Qt.Key.Key_PageUp) and row == 0 and start > 0:
            return start - 1
        return -1

    def selectAll(self) -> None:
        super().selectAll()
        rows = self.model()
        if isinstance(rows, FilteredTableModel) and rows.is_paged():
            self.note.emit(f"selected the {rows.rowCount():,} rows of this page, not all {rows.matching_count():,} "
                           "records (File > Export can export all records or the filtered ones)")

    def copy_rows(self) -> str:
        """Copy the selected rows as tab-separated text (header line first)."""
        model = self.model()
        # From the selection's ranges (selectedRows() would ask Qt about every cell of millions)
        ranges = [np.arange(r.top(), r.bottom() + 1) for r in self.selectionModel().selection()] if model else []
        rows = sorted_unique(ranges)
        if not rows.shape[0]:
            return ""
        cols = range(model.columnCount())
        lines = ["\t".join(str(model.headerData(c, Qt.Orientation.Horizontal)) for c in cols)]
        for r in rows[:COPY_ROWS_MAX].tolist():
            lines.append("\t".join(str(model.index(r, c).data() or "") for c in cols))
        text = "\n".join(lines)
        QGuiApplication.clipboard().setText(text)
        n = rows.shape[0]
        self.copied.emit(f"copied {n:,} row(s)" if n <= COPY_ROWS_MAX else
                         f"copied the first {COPY_ROWS_MAX:,} of {n:,} selected rows (File > Export writes them all)")
        return text


class MessageBar(QFrame):
    """A dismissable one-line (or few-line) error strip, with an optional action button."""

    def __init__(self, parent: QWidget | None = None, action: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.setStyleSheet("#MessageBar { background: rgba(229, 57, 53, 30); "
                           "border-bottom: 1px solid rgba(229, 57, 53, 120); }")
        icon = QLabel()
        icon.setPixmap(icons.pixmap("warning", 18))
        self._label = QLabel()
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton(action or "")
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self._label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.action_button.setHidden(action is None)
        self.hide()

    def show_message(self, text: str) -> None:
        self._label.setText(text)
        self.show()

    def text(self) -> str:
        """The message shown ("" when the bar is hidden)."""
        return "" if self.isHidden() else self._label.text()


class FileTab(QWidget):
    """One open file: its table, its detail view and its index worker.

    Signals: ``state_changed()`` whenever :meth:`state` may read differently,
    ``indexing_finished()`` when the index (and any verify) pass ends,
    ``message(str)`` a one-line note for the status bar.
    """

    state_changed = Signal()
    indexing_finished = Signal()
    message = Signal(str)
    reopened = Signal()  # tfile is a new file now (saved over or saved as): drop what was read from the old
    file_changed = Signal(str)  # the file changed on disk while it was read (any thread may emit it)

    def __init__(self, tfile: TFRecordFile, settings: Settings, parent: QWidget | None = None,
                 *, auto_verify_bytes: int = AUTO_VERIFY_BYTES) -> None:
        super().__init__(parent)
        self.tfile = tfile
        self.settings = settings
        self._auto_verify = tfile.file_size <= auto_verify_bytes
        self._worker: GeneratorWorker | None = None
        self._pass_over = True  # the last pass (if any) has sent its last signal
        self._phase = "index"
        self._last: IndexProgress | None = None
        self._error: str | None = None
        self._pending: GoTarget | None = None
        self._columns_ready = False
        self._closed = False
        self.edit_block: str | None = None  # why this tab can never be edited (a shard set)

        self.model = self._make_model(tfile)
        self.model.error.connect(self.message)
        self.change_bar = MessageBar(self, action="Reopen")
        self.change_bar.action_button.setToolTip("Open the file again as it is on disk now (unsaved edits are lost)")
        self.change_bar.action_button.clicked.connect(self.reopen_changed)
        # queued: it comes from workers, and from views in the middle of painting
        self.file_changed.connect(self._show_file_changed, Qt.ConnectionType.QueuedConnection)
        self.model.file_changed.connect(self.file_changed)
        self.table = RecordTableView(self)
        self.proxy = FilteredTableModel(self.model, self)  # the rows shown: all records, or a filter's
        # a window of rows Qt can lay out: fewer than 2^31 px of rows
        self.proxy.set_window_rows(min(self.proxy.window_rows,
                                       window_rows_for(self.table.verticalHeader().defaultSectionSize())))
        self.proxy.filter_changed.connect(self._filter_changed)
        self.table.setModel(self.proxy)
        # The column headers get a selection of their own that stays empty: Qt asks of each
        # painted header section whether its whole column is selected, which checks every row
        # (after Select All on 10M records: minutes of calls into Python).
        header = self.table.horizontalHeader()
        header.setSelectionModel(QItemSelectionModel(self.proxy, header))
        self.table.copied.connect(self.message)
        self.table.note.connect(self.message)
        self.table.position_requested.connect(self.select_position)
        self.page_bar = PageBar(self.proxy, self)
        self.page_bar.step_requested.connect(self.step_page)
        self.table.horizontalHeader().customContextMenuRequested.connect(self._header_menu)
        self.table.selectionModel().currentRowChanged.connect(self._current_row_changed)
        self.detail = RecordDetail(self)
        self.detail.file_changed.connect(self.file_changed)
        self._damage_columns_wide = False
        self._fixed_widths: dict[int, int] = {}
        self._fitted_widths: dict[str, int] = {}  # default feature columns narrowed to fit on first open
        self._size_columns()
        self.corruption = CorruptionTools(self)  # problems panel + corruption map
        self.editing = TabEditing(self)  # edits over a Document, undo, save
        self.qa = QaViews(self)  # filter bar, Table | Gallery, statistics, feature spec

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        left = self.qa.around(self.corruption.beside_table(self.table))
        left.layout().insertWidget(1, self.page_bar)  # under the filter bar, over Table | Gallery: both are paged
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        saved = settings.splitter_state()
        if saved is not None:
            self.splitter.restoreState(saved)
        else:
            self.splitter.setSizes([int(1000 * TABLE_SHARE), int(1000 * (1 - TABLE_SHARE))])
        self.splitter.splitterMoved.connect(lambda *_: self.settings.save_splitter(self.splitter.saveState()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.change_bar)
        layout.addWidget(self.corruption.above_problems(self.splitter), 1)
        self.setFocusProxy(self.table)
        rows = self.table.verticalHeader().defaultSectionSize()
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + MIN_TABLE_ROWS * rows
                                    + 2 * self.table.frameWidth() + self.table.horizontalScrollBar().sizeHint().height())

    def _make_model(self, tfile) -> RecordTableModel:
        return RecordTableModel(tfile, self)

    @classmethod
    def open(cls, path: str, settings: Settings, parent: QWidget | None = None) -> "FileTab":
        """Open ``path`` (raises codec.errors.TFRecordError with a one-line message)."""
        return cls(TFRecordFile(path), settings, parent)

    # -- state ------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.tfile.path

    @property
    def title(self) -> str:
        return os.path.basename(self.tfile.path) or self.tfile.path

    def is_running(self) -> bool:
        """A pass is under way: over once its last signal is handled (its thread may take a
        moment more to end, and passes that end must be seen as ended by the handlers)."""
        return self._worker is not None and not self._pass_over and self._worker.is_running()

    def _problem_count(self) -> int:
        count = getattr(self.tfile, "problem_count", None)  # a shard set counts without building the list
        return count() if count is not None else len(self.tfile.problems)

    def state(self) -> TabState:
        last = self._last
        return TabState(
            path=self.tfile.path,
            compression=self.tfile.compression.value,
            file_size=self.tfile.file_size,
            records=self.model.rowCount(),
            problems=self._problem_count(),
            phase=self._phase,
            fraction=last.fraction if last is not None else 0.0,
            running=self.is_running(),
            verified=self.tfile.verified,
            error=self._error,
        )

    # -- the worker -------------------------------------------------------
    def start(self) -> None:
        """Index the file on a worker thread (then verify it when it is small)."""
        self._run(self._index_passes, "index")

    def verify(self) -> bool:
        """Check every record's data CRC on a worker thread; False if busy."""
        if self.is_running() or self._closed:
            return False
        self._run(self._verify_passes, "verify")
        return True

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _run(self, passes, phase: str) -> None:
        self._phase = phase
        self._error = None
        self._pass_over = False
        self._worker = GeneratorWorker(passes, self)
        self._worker.progress.connect(self._on_progress)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.start()
        self.state_changed.emit()

    def _index_passes(self):
        with self.watching_changes():
            for p in self.tfile.index_iter():
                yield PassProgress("index", p)
        if self._auto_verify and not self.tfile.verified:
            yield from self._verify_passes()

    def _verify_passes(self):
        with self.watching_changes():
            for p in self.tfile.verify_iter():
                yield PassProgress("verify", p)

    # -- the file changing under us ---------------------------------------
    @contextmanager
    def watching_changes(self):
        """Report a FileChangedError raised inside (on any thread) on the tab's bar, then let it go on."""
        try:
            yield
        except FileChangedError as exc:
            self.file_changed.emit(one_line(exc))
            raise

    def _show_file_changed(self, message: str) -> None:
        if self._closed or not self._changed_on_disk():
            return  # a notice queued before the tab reopened the file
        text = message if "changed" in message.lower() else f"the file changed while reading: {message}"
        self.change_bar.show_message(f"{text[:1].upper()}{text[1:]} — reopen it to see the file as it is now.")

    def _changed_on_disk(self) -> bool:
        """The file on disk is not the one this tab opened (size or modification time differ)."""
        mtime_ns = getattr(self.tfile, "mtime_ns", None)
        if mtime_ns is None:  # a shard set: each shard checks itself
            return True
        try:
            st = os.stat(self.tfile.path)
        except OSError:
            return True
        return (st.st_size, st.st_mtime_ns) != (self.tfile.file_size, mtime_ns)

    def reopen_changed(self) -> bool:
        """Open the file again as it is on disk now (after it changed); False with a note if it cannot be."""
        if self._worker is not None:
            self._worker.stop()
        self.editing.cancel()
        self.editing.wait()
        self.editing.detach()
        try:
            self.reopen(self.path)
        except (TFRecordError, OSError, ValueError) as exc:
            self.change_bar.show_message(f"cannot reopen {self.path}: {one_line(exc)}")
            return False
        self.change_bar.hide()
        return True

    def _on_progress(self, pp: PassProgress) -> None:
        if self._closed:
            return
        with PAINT_GATE.painting():  # new rows, columns, status bar, panels: all Python, like a paint
            problems_before = self._last.problems if self._last is not None else 0
            self._last = pp.progress
            self._phase = pp.phase
            if pp.phase == "verify" and pp.progress.problems != problems_before:
                self.model.refresh_status()  # a damaged record was found: repaint its row
            if pp.progress.problems:
                self._widen_for_damage()
            self._rows_arrived()
            self.state_changed.emit()

    def _on_finished(self, pp: PassProgress | None) -> None:
        if self._closed:
            return
        if pp is not None:
            self._last = pp.progress
        self._pass_over = True
        self._phase = "cancelled" if self._worker is not None and self._worker.cancelled else "done"
        self._rows_arrived()
        self.model.refresh_status()
        self._widen_for_damage()
        self.editing.attach()  # editing starts once the whole file is indexed
        self._resolve_pending(final=True)
        if self._phase == "cancelled":
            self.message.emit(f"stopped: {self.model.rowCount():,} records indexed so far")
        elif not self.model.rowCount():
            self.message.emit(f"{self.title}: no records")
        self.state_changed.emit()
        self.indexing_finished.emit()

    def _on_failed(self, error: str) -> None:
        if self._closed:
            return
        self._pass_over = True
        self._phase = "failed"
        self._error = error
        self._rows_arrived()
        self.model.refresh_status()
        self._resolve_pending(final=True)
        self.message.emit(f"{self.title}: {error}")
        self.state_changed.emit()
        self.indexing_finished.emit()

    def _rows_arrived(self) -> None:
        self.model.sync()
        if self.model.rowCount():
            if not self._columns_ready:
                self._init_columns()
            if self._pending is None and not self.table.currentIndex().isValid():
                self.select_record(0)
        self._resolve_pending(final=False)

    # -- columns ----------------------------------------------------------
    def _init_columns(self) -> None:
        self._columns_ready = True
        keys = self.model.sample_keys()
        chosen = self.settings.feature_columns(columns_signature(keys))
        self._size_columns()
        if chosen is None:
            chosen = self._fitting_columns(self.model.default_feature_columns())
        self._set_columns(chosen, save=False)

    def _set_columns(self, keys: list[str], *, save: bool = True) -> None:
        self.model.set_feature_columns(keys)
        if save:
            self.settings.set_feature_columns(columns_signature(self.model.sample_keys()), keys)
        self._size_feature_columns()

    def _cell_width(self, text: str) -> int:
        """Width of a cell (or its header) showing ``text``: text plus the style's margins."""
        fm = self.table.fontMetrics()
        header_fm = self.table.horizontalHeader().fontMetrics()
        return max(fm.horizontalAdvance(text), header_fm.horizontalAdvance(text)) + CELL_PADDING

    def _size_columns(self) -> None:
        """Fixed columns as wide as what they can hold in this file (the header at least)."""
        tfile = self.tfile
        compressed = tfile.compression.value != "none"
        most_bytes = tfile.file_size * (COMPRESSED_GROWTH if compressed else 1)
        most_records = max(len(tfile), min(most_bytes // 16, 99_999_999))  # a record takes 16 bytes at least
        damaged = self._problem_count() > 0
        self._damage_columns_wide = damaged
        kinds = self.model.sample_kinds() or ["Example"]
        icon = self.table.iconSize().width() if self.table.iconSize().width() > 0 else 16
        icon += 6
        samples = {
            Column.INDEX: (f"{most_records:,}", icon if damaged else 0),
            Column.OFFSET: (f"{most_bytes:,}", 0),
            Column.SIZE: (f"{min(most_bytes, 99_999_999):,}", 0),
            Column.KIND: (max(kinds, key=len), 0),
            Column.STATUS: (self._widest_status() if damaged else "ok", icon),
        }
        for col, (sample, extra) in samples.items():
            header = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            width = max(self._cell_width(sample) + extra, self._cell_width(header) + HEADER_SORT_ROOM)
            self._fixed_widths[col] = width
            self.table.setColumnWidth(col, width)

    def _widest_status(self) -> str:
        """The longest status text the file's problems put in the Status column."""
        problems = self.tfile.problems if not hasattr(self.tfile, "problem_count") else []
        texts = ["data CRC bad"]
        if any(p.index is None for p in problems):
            texts.append("ok, after skipped bytes")
        if any(p.index is not None and p.kind.value == "length_crc" for p in problems):
            texts.append(STATUS_TEXT[RecordStatus.LENGTH_CRC])
        return max(texts, key=len)

    def _widen_for_damage(self) -> None:
        """Problems were found after the columns were sized: room for the # column's mark and longer statuses."""
        if not self._damage_columns_wide and self._columns_ready and self._problem_count():
            self._size_columns()
            if self._fitted_widths:  # the default columns, fitted: fitted again (fewer, or narrower)
                self.model.set_feature_columns(self._fitting_columns(self.model.feature_columns()))
                self._size_feature_columns()

    def _feature_width(self, key: str) -> int:
        """A feature column's natural width: its header and the first rows' cells, within bounds."""
        texts = [self.model.short_key(key), *self.model.sample_cells(key)]
        width = max(self._cell_width(t) for t in texts)
        return min(max(width, FEATURE_MIN_WIDTH), FEATURE_MAX_WIDTH)

    def _fitting_columns(self, keys: list[str]) -> list[str]:
        """As many of ``keys`` as fit beside the fixed columns in the table as it is now, narrowed to fit.

        Each keeps at least FEATURE_MIN_WIDTH; the widest give way first
        (their cells elide, the tooltip has the whole value).
        """
        if self.table.viewport().width() < 200:  # not laid out yet: no way to tell
            return keys
        available = self.table.viewport().width() - sum(self._fixed_widths.values()) - self._extra_columns_width()
        scroll_bar = self.table.verticalScrollBar()
        if not scroll_bar.isVisible():  # more rows are coming: it will take its width from the viewport
            available -= scroll_bar.sizeHint().width()
        keys = keys[:max(0, available // FEATURE_MIN_WIDTH)]
        natural = [self._feature_width(key) for key in keys]
        cap = max(natural, default=0)
        while cap > FEATURE_MIN_WIDTH and sum(min(w, cap) for w in natural) > available:
            cap -= 1
        self._fitted_widths = {key: min(w, cap) for key, w in zip(keys, natural)}
        return keys

    def _extra_columns_width(self) -> int:
        """Width of columns a subclass adds to the fixed ones (a shard set's Shard column)."""
        return 0

    def _size_feature_columns(self) -> None:
        for col, key in enumerate(self.model.feature_columns(), start=BASE_COLUMNS):
            self.table.setColumnWidth(col, self._fitted_widths.get(key) or self._feature_width(key))

    def fill_column_menu(self, menu: QMenu) -> None:
        """(Re)fill ``menu`` with the feature keys to show as columns, checkable."""
        menu.clear()
        shown = self.model.feature_columns()
        keys = list(dict.fromkeys(self.model.sample_keys() + shown))
        if not keys:
            menu.addAction("No features in the first records").setEnabled(False)
        for key in keys:
            action = QAction(key, menu, checkable=True, checked=key in shown)
            action.toggled.connect(lambda on, k=key: self.toggle_column(k, on))
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction("Default Columns", lambda: self._set_columns(self.model.default_feature_columns()))

    def toggle_column(self, key: str, on: bool) -> None:
        shown = self.model.feature_columns()
        if on and key not in shown:
            order = list(dict.fromkeys(self.model.sample_keys() + shown))
            shown = [k for k in order if k in shown or k == key]
        elif not on:
            shown = [k for k in shown if k != key]
        self._set_columns(shown)

    def _header_menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        self.fill_column_menu(menu)
        menu.exec(self.table.horizontalHeader().mapToGlobal(pos))
        menu.deleteLater()

    # -- navigation -------------------------------------------------------
    def current_record(self) -> int:
        index = self.table.currentIndex()
        return self.proxy.record_at(index.row()) if index.isValid() else -1

    def select_record(self, i: int) -> None:
        """Make record ``i`` current, selected and visible (shows its detail).

        Filtered, the nearest matching record; paged, the window moves to it first.
        """
        column = max(0, self.table.currentIndex().column())
        index = self.proxy.index(self.proxy.reveal(i, nearest=True), column)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def select_position(self, position: int) -> None:
        """Select the ``position``-th matching record (all records, or the filter's), paging to it."""
        record = self.proxy.matching_record(position)
        if record >= 0:
            self.select_record(record)

    def step_page(self, step: int) -> None:
        """Show the next (``step`` 1) or previous (-1) page of rows and select its first record."""
        rows = self.proxy
        position = rows.window_start + step * rows.window_rows
        self.select_position(min(max(position, 0), rows.matching_count() - 1))

    def _filter_changed(self) -> None:
        """A filter was set or cleared (the window is back at the start): page to the record shown if it is there."""
        record = self.detail.current_record()
        if record >= 0:
            self.proxy.reveal(record)

    def _current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid():
            record = self.proxy.record_at(current.row())
            self.detail.show_record(self.editing.source_for(record), record)
        else:
            self.detail.clear()

    def go_to(self, text: str) -> str | None:
        """Jump to a record number or byte offset (see :func:`parse_goto`).

        Returns a one-line message when the jump is not possible (yet), else None.
        While indexing, a target not reached yet is remembered and jumped to
        when its row arrives.
        """
        try:
            target = parse_goto(text)
        except ValueError as exc:
            return str(exc)
        self._pending = target
        note = self._resolve_pending(final=not self.is_running(), announce=False)
        if self._pending is not None:
            what = f"record {target.value:,}" if target.kind == "record" else f"byte {target.value:,}"
            return f"{what} is not indexed yet: going there when it is"
        return note

    def _resolve_pending(self, *, final: bool, announce: bool = True) -> str | None:
        """Jump to the pending go-to target once its row exists; say so when it never will."""
        target = self._pending
        if target is None:
            return None
        n = self.model.rowCount()
        note: str | None = None
        if target.kind == "record":
            i = target.value + n if target.value < 0 else target.value
            if 0 <= i < n and (target.value >= 0 or final):
                self.select_record(i)
            elif final:
                note = f"no record {target.value:,}: {self.title} has {n:,} records"
            else:
                return None  # its row may still come
        else:
            offset = target.value
            i = self.model.tfile.find_record(offset)  # the edited rows, once editing is on
            if not final and (n == 0 or (i == n - 1 and offset >= self.model.tfile.record_info(i).end)):
                return None  # the record holding it may still come
            if i < 0:
                if n:
                    self.select_record(0)
                note = f"byte {offset:,} is before the first record"
            else:
                self.select_record(i)
                info = self.model.tfile.record_info(i)
                where = "in" if offset < info.end else "past the end of"
                note = f"byte {offset:,} is {where} record {i:,}, which starts at byte {info.offset:,}"
        self._pending = None
        if note and announce:
            self.message.emit(note)
        return note

    def next_damaged(self, backwards: bool = False) -> int:
        """Select the next (or previous) damaged record, or record after skipped bytes; -1 if none."""
        bad = self.model.flagged_rows()
        cur = self.current_record()
        if backwards:
            before = bad[bad < cur] if cur >= 0 else bad
            found = int(before[-1]) if before.size else -1
        else:
            after = bad[bad > cur]
            found = int(after[0]) if after.size else -1
        if found >= 0:
            self.select_record(found)
        else:
            self.message.emit("no damaged record " + ("before" if backwards else "after") + " this one"
                              + ("" if self.tfile.verified else " (data CRCs not checked yet: File > Verify Checksums)"))
        return found

    # -- copying ----------------------------------------------------------
    def copy_record_json(self) -> str:
        """Copy the current record as TensorFlow's protobuf JSON."""
        i = self.current_record()
        if i < 0:
            return ""
        try:
            with self.watching_changes():
                data = self.model.tfile.read(i).data
        except (TFRecordError, OSError, ValueError) as exc:
            self.message.emit(f"cannot read record {i:,}: {one_line(exc)}")
            return ""
        text = json.dumps(record_json_value(decode_record(data)), indent=2)
        QGuiApplication.clipboard().setText(text)
        self.message.emit(f"copied record {i:,} as JSON")
        return text

    def copy_offset(self) -> str:
        i = self.current_record()
        if i < 0:
            return ""
        if self.model.is_edited(i):
            self.message.emit(f"record {i:,} is edited and not saved yet: it has no offset in the file")
            return ""
        text = str(self.model.tfile.index.offset(i))
        QGuiApplication.clipboard().setText(text)
        self.message.emit(f"copied the offset of record {i:,}: {text}")
        return text

    # -- lifetime ---------------------------------------------------------
    def reopen(self, path: str) -> None:
        """Show ``path`` in this tab from now on (after a save): a new file, index and history.

        Raises codec.errors.TFRecordError (one line) when it cannot be opened.
        """
        tfile = TFRecordFile(path)
        row = self.current_record()
        self.detail.clear()
        self.detail.wait()
        old, self.tfile = self.tfile, tfile
        self.model.set_file(tfile)
        old.close()
        self._last = None
        self._error = None
        self._pending = GoTarget("record", row) if row >= 0 else None
        self.reopened.emit()
        self.start()

    def close_file(self) -> None:
        """Stop the worker and close the file; the tab is unusable afterwards."""
        if self._closed:
            return
        if self._worker is not None:
            self._worker.stop()
        self.editing.close()
        self.qa.close()
        self._closed = True
        self.detail.clear()
        self.detail.wait()  # background loads may still be reading the file
        self.tfile.close()
