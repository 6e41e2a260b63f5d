"""A tab's damage tools: the Problems panel, the corruption map, and what a click shows.

:class:`CorruptionTools` is made by the tab with its session, the row
selection of its record table, the table and the record detail. It puts the
map beside the record table (:meth:`~CorruptionTools.beside_table`) and the
panel below the tab's table/detail splitter
(:meth:`~CorruptionTools.above_problems`), keeps both in step with the
session's index and verify passes (``state_changed``), and turns a picked
problem into a selected record and highlighted bytes:

- a problem in a record (data CRC, recovered length CRC, truncated record)
  selects that record and highlights the damaged bytes in its hex view (for a
  data CRC the data and the footer);
- damage between records (a lost header, a garbage run, a cut header)
  selects the next record found after it, and the hex view shows the skipped
  bytes themselves, highlighted, instead of that record's.

Record numbers are the table's rows, ``session.records`` (the edited view,
once editing is on, maps the file's problems to rows). Byte positions and the
map's extent are the file's on disk, ``session.source``, which a save may
replace; both are looked up when used.
"""
from __future__ import annotations

import bisect
import html

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QWidget

from app.models.hex_model import FramedRecord
from app.models.problem_list_model import ProblemListModel, is_recovered, problem_title, record_before
from app.models.record_format import SALVAGE_REASON, container_of
from app.models.record_table_model import RECORD_ROLE
from app.shell.row_selection import RowSelection
from app.shell.session import TabSession
from app.style import palette
from app.views.corruption_map import CorruptionMap, Mark
from app.views.problems_panel import ProblemsPanel
from app.views.record_detail import HEX_TAB, RecordDetail
from app.views.record_table_view import RecordTableView
from app.workers.background import PoolJobs
from codec.format.framing import HEADER_SIZE, Compression, Problem, ProblemKind, RecordStatus
from codec.format.problem_text import TFRECORD
from codec.sources.protocol import RecordSource

# Skipped bytes shown in the hex view at most (a garbage run may be huge).
SPAN_LIMIT = 64 << 10
# More marks than this are merged with their neighbours (a map is ~1000 pixels tall).
MAP_RESOLUTION = 4000
PANEL_MIN_ROWS = 3  # rows the panel opens with at least...
PANEL_MAX_ROWS = 12  # ...and at most, within PANEL_SHARE of the tab's height
PANEL_SHARE = 0.3


def merge_marks(marks: list[Mark], extent: int, resolution: int = MAP_RESOLUTION) -> list[Mark]:
    """Marks closer than ``extent / resolution`` bytes merged, so thousands of problems stay drawable."""
    if len(marks) <= resolution or extent <= 0:
        return marks
    gap = extent // resolution
    merged: list[Mark] = []
    count = 1
    for mark in sorted(marks, key=lambda m: m.start):
        last = merged[-1] if merged else None
        if last is not None and mark.start - last.end <= gap:
            count += 1
            merged[-1] = Mark(last.start, max(last.end, mark.end),
                              f"{count:,} problems between bytes {last.start:,} and {max(last.end, mark.end):,}",
                              last.problem, last.recovered and mark.recovered)
        else:
            count = 1
            merged.append(mark)
    return merged


class CorruptionTools(QObject):
    """The Problems panel and corruption map of one tab, wired to its table and detail.

    Signals: ``problem_shown(Problem)`` once a picked problem's record is
    selected and its bytes highlighted; ``salvage_requested()`` from the
    panel's button; ``panel_visibility_changed(bool)``; ``message(str)`` a
    note for the status bar.
    """

    problem_shown = Signal(object)
    salvage_requested = Signal()
    panel_visibility_changed = Signal(bool)
    message = Signal(str)

    def __init__(self, session: TabSession, selection: RowSelection, table: RecordTableView,
                 detail: RecordDetail, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.selection = selection
        self.table = table
        self.detail = detail
        self.model = ProblemListModel(session, self)
        self.panel = ProblemsPanel(self.model)
        self.panel.hide()
        self.map = CorruptionMap()
        self.splitter: QSplitter | None = None
        self._pending: tuple[int, Problem] | None = None
        self._user_choice: bool | None = None  # the user showed (True) or hid (False) the panel
        self._gaps: list[Problem] = []  # damage between records, by offset
        self._gap_starts: list[int] = []
        self._stream_end: int | None = None  # exact stream size of a compressed file, once known
        self._stream_file: object | None = None  # the file _stream_end belongs to
        self._showing_span = False  # the hex view holds skipped bytes, not the current record's
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(self._job_done)

        self.panel.problem_activated.connect(self.show_problem)
        self.panel.salvage_requested.connect(self.salvage_requested)
        if container_of(self.file) != TFRECORD:  # salvage rewrites TFRecord framing
            self.panel.salvage_button.setEnabled(False)
            self.panel.salvage_button.setToolTip(SALVAGE_REASON)
        self.panel.close_requested.connect(lambda: self.set_panel_visible(False))
        self.map.mark_clicked.connect(self._mark_clicked)
        self.map.offset_clicked.connect(self.select_near)
        session.source_changed.connect(self._records_replaced)
        session.state_changed.connect(self.refresh)
        detail.record_shown.connect(self._record_shown)
        detail.record_shown.connect(self._update_current)
        detail.record_failed.connect(self._record_failed)
        table.verticalScrollBar().valueChanged.connect(self._update_view)
        table.clicked.connect(self._table_clicked)
        table.viewport().installEventFilter(self)

    @property
    def file(self) -> RecordSource:
        """The source opened (byte positions, compression, verified)."""
        return self.session.source

    @property
    def records(self) -> RecordSource:
        """What the table's record numbers index: the source, or its edited view (which reads alike)."""
        return self.session.records

    def _title(self, p: Problem) -> str:
        """The problem's kind in a few words, as its container's damage reads."""
        return problem_title(p, container_of(self.file))

    # -- layout -----------------------------------------------------------
    def beside_table(self, table: QWidget) -> QWidget:
        """``table`` with the map at its right edge, as one widget."""
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(table, 1)
        row.addWidget(self.map)
        holder.setFocusProxy(table)
        return holder

    def above_problems(self, main: QWidget) -> QSplitter:
        """``main`` above the Problems panel, in a vertical splitter."""
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(main)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setCollapsible(0, False)
        self.splitter = splitter
        return splitter

    # -- the panel's visibility -------------------------------------------
    def panel_visible(self) -> bool:
        return not self.panel.isHidden()

    def set_panel_visible(self, on: bool, *, user: bool = True) -> None:
        """Show or hide the panel; a user's choice sticks (problems found later do not reopen it)."""
        if user:
            self._user_choice = on
        if on == self.panel_visible():
            return
        self.panel.setVisible(on)
        if on and self.splitter is not None:
            total = sum(self.splitter.sizes()) or self.splitter.height()
            table = self.panel.table
            rows = min(max(self.model.rowCount(), PANEL_MIN_ROWS), PANEL_MAX_ROWS)  # a few problems: a short panel
            needed = (self.panel.sizeHint().height() - table.sizeHint().height() + table.horizontalHeader().height()
                      + rows * table.verticalHeader().defaultSectionSize() + 2 * table.frameWidth() + 4)
            height = min(needed, max(80, int(total * PANEL_SHARE)))
            self.splitter.setSizes([max(1, total - height), height])
        self.panel_visibility_changed.emit(on)

    # -- following the passes ---------------------------------------------
    def refresh(self) -> None:
        """Catch up with the session's passes: new problems, marks, how far indexing came."""
        session = self.session
        running = session.is_running()
        changed = self.model.sync(force=not running)
        if changed:
            self._gaps = [p for p in self.model.problems() if p.index is None]
            self._gap_starts = [p.offset for p in self._gaps]
        self._update_extent(running, session.fraction)
        if changed or not running:
            self.map.set_marks(merge_marks(self._marks(), self.map.extent))
        self.panel.set_note(self._note(running))
        if self._user_choice is None and bool(self.model.rowCount()) != self.panel_visible():
            self.set_panel_visible(bool(self.model.rowCount()), user=False)  # (a log's tail taken as being written)
        self._update_view()

    def _records_replaced(self) -> None:
        """Editing began or stopped, or a save reopened the tab: a problem being shown is of the old rows."""
        self.model.records_replaced()
        self._pending = None

    def _note(self, running: bool) -> str:
        phase = self.session.phase
        checked = "data CRC" if container_of(self.file) == TFRECORD else "chunk"  # (an ArrayRecord file's)
        if running:
            what = f"checking {checked}s" if phase == "verify" else "indexing"
            return f"{what}… {self.session.fraction:.0%}"
        if phase == "cancelled":
            return "stopped: the file was not checked to the end"
        if not self.file.verified:
            return f"{checked}s not checked yet (File > Verify Checksums)"
        return f"every {checked} checked"

    def _update_extent(self, running: bool, fraction: float) -> None:
        tfile = self.file
        n = len(tfile)
        if tfile.compression is Compression.NONE:
            extent = tfile.file_size
            known = extent if tfile.indexed else int(fraction * extent)
            self.map.set_extent(extent, known)
            return
        # the decompressed stream: its size is known once indexed (one read, off the GUI thread)
        last = tfile.index.offset(n - 1) if n else 0
        damage_end = max((p.offset + p.size for p in tfile.problems), default=0)
        known = max(last, damage_end)
        if self._stream_file is not tfile:
            self._stream_file, self._stream_end = tfile, None
        if tfile.indexed:
            if self._stream_end is None and n and not running:
                if tfile.index.status(n - 1) is RecordStatus.TRUNCATED:
                    self._stream_end = damage_end  # the truncated record runs to the end
                else:
                    self._stream_end = -1  # asked
                    self._jobs.submit(tfile, lambda: tfile.record_info(n - 1).end)
            extent = max(self._stream_end or 0, known, 1)
            known = extent
        else:
            extent = max(int(last / fraction) if fraction > 0 else 0, known + 1)
        self.map.set_extent(extent, known, stream=True)

    def _job_done(self, ticket: object, result: object) -> None:
        if ticket is self.file and isinstance(result, int):
            self._stream_end = result
            self.refresh()

    def _marks(self) -> list[Mark]:
        marks = []
        for p in self.model.problems():
            if p.kind is ProblemKind.DATA_CRC and p.index is not None:
                end = self._record_span(p.index)[1]
            else:
                end = p.offset + max(p.size, 1)
            where = f"record {p.index:,}" if p.index is not None else "between records"
            text = f"{self._title(p)} at byte {p.offset:,} ({where})"
            if p.compressed_offset is not None:
                text += f"\nthe compressed stream broke at byte {p.compressed_offset:,}"
            marks.append(Mark(p.offset, max(end, p.offset + 1), text, p, is_recovered(p)))
        return marks

    # -- the map's position marks ------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._update_view()
        return False

    def _record_span(self, i: int) -> tuple[int, int]:
        """Bytes [start, end) of record ``i`` up to the next record (start -1: not in the file)."""
        records = self.records
        start = records.index.offset(i)
        end = records.index.offset(i + 1) if i + 1 < len(records) else self.map.extent
        return start, max(end, start + 1)

    def _record_at_row(self, row: int) -> int:
        value = self.table.model().index(row, 0).data(RECORD_ROLE)
        return value if isinstance(value, int) else row

    def _update_view(self, *_) -> None:
        table = self.table
        rows = table.model().rowCount() if table.model() is not None else 0
        if not rows or not len(self.records):
            self.map.set_view(None)
            return
        first = table.rowAt(0)
        last = table.rowAt(table.viewport().height() - 1)
        first = max(first, 0)
        last = rows - 1 if last < 0 else last
        a, b = self._record_at_row(first), self._record_at_row(last)
        if not (0 <= a < len(self.records) and 0 <= b < len(self.records)):
            return
        start, end = self._record_span(a)[0], self._record_span(b)[1]
        if start >= 0:
            self.map.set_view(start, end)
        else:
            self.map.set_view(None)

    def _update_current(self, index: int) -> None:
        start, end = self._record_span(index) if 0 <= index < len(self.records) else (-1, 0)
        if start >= 0:
            self.map.set_current(start, end)
        else:
            self.map.set_current(None)

    # -- picking ----------------------------------------------------------
    def record_for(self, problem: Problem) -> int:
        """The record a problem is shown with: its own, else the next one found after it."""
        n = len(self.records)
        if problem.index is not None and problem.index < n:
            return problem.index
        before = record_before(self.records, problem)
        return before + 1 if before + 1 < n else before

    def select_near(self, offset: int) -> int:
        """Select the record at byte ``offset`` (after damage: the next record found); return it."""
        if not len(self.records):
            return -1
        k = bisect.bisect_right(self._gap_starts, offset) - 1
        if k >= 0 and offset < self._gaps[k].offset + max(self._gaps[k].size, 1):
            i = self.record_for(self._gaps[k])
        else:
            i = max(0, self.records.find_record(offset))
        self.selection.select_record(i)
        return i

    def _mark_clicked(self, mark: Mark) -> None:
        if mark.problem is not None:
            self.show_problem(mark.problem)
        else:
            self.select_near(mark.start)

    def show_problem(self, problem: Problem) -> None:
        """Select the problem's record (or the nearest) and highlight the damaged bytes."""
        self.panel.select_problem(problem)
        row = self.record_for(problem)
        if row < 0:
            self._pending = None
            self.message.emit(f"{self._title(problem)} at byte {problem.offset:,}: no record was found "
                                  "anywhere near it")
            self.problem_shown.emit(problem)
            return
        self._pending = (row, problem)
        if self._showing_span and self.selection.current_record() == row:  # the hex view must hold it again
            self._showing_span = False
            self.table.selectionModel().clearCurrentIndex()
        self.selection.select_record(row)
        detail = self.detail
        loaded = detail.loaded()
        if self._pending is not None and loaded is not None and loaded.info.index == row \
                and detail.current_record() == row:
            self._apply(row, problem)

    def _table_clicked(self, *_) -> None:
        """A click on the current record after skipped bytes were shown brings its own bytes back."""
        row = self.selection.current_record()
        if self._showing_span and row >= 0:
            self._showing_span = False
            self.table.selectionModel().clearCurrentIndex()  # the tab shows the record again
            self.selection.select_record(row)

    def _record_shown(self, index: int) -> None:
        self._showing_span = False
        if self._pending is not None:
            if self._pending[0] == index:
                self._apply(*self._pending)
            else:  # another record came up (the user moved on, or a filter hides the one asked for)
                self._pending = None

    def _record_failed(self, index: int, message: str) -> None:
        if self._pending is not None and self._pending[0] == index:
            problem = self._pending[1]
            self._pending = None
            self.problem_shown.emit(problem)

    def _apply(self, row: int, problem: Problem) -> None:
        self._pending = None
        detail = self.detail
        hexv = detail.hex
        if container_of(self.file) != TFRECORD:  # an ArrayRecord chunk: compressed, no bytes of a record to mark
            note = f"{self._title(problem)} near record {row:,}: {problem.detail}"
        elif problem.index is None:
            note = self._show_skipped_bytes(row, problem)
        else:
            start, end = self.damage_range(problem, hexv.model.record)
            hexv.highlight(start, end)
            note = f"{self._title(problem)} in record {row:,}: bytes {start:,}–{end - 1:,} highlighted"
        detail.tabs.setCurrentIndex(HEX_TAB)
        self.message.emit(note)
        self.problem_shown.emit(problem)

    @staticmethod
    def damage_range(problem: Problem, framed: FramedRecord | None) -> tuple[int, int]:
        """The damaged bytes [start, end) of a problem inside a record."""
        if problem.kind is ProblemKind.DATA_CRC:
            end = framed.offset + framed.size if framed is not None and framed.offset == problem.offset else \
                problem.offset + HEADER_SIZE + 4
            return problem.offset + HEADER_SIZE, end
        return problem.offset, problem.offset + max(problem.size, HEADER_SIZE)

    def _show_skipped_bytes(self, row: int, problem: Problem) -> str:
        """Put the bytes of damage between records in the hex view, highlighted."""
        hexv = self.detail.hex
        after = problem.offset >= self.records.index.offset(row) >= 0
        where = f"after record {row:,}" if after else f"before record {row:,}"
        if problem.size <= 0:
            stream = f"; the stream broke at compressed byte {problem.compressed_offset:,}" \
                if problem.compressed_offset is not None else ""
            return f"{self._title(problem)} at byte {problem.offset:,} ({where}){stream}"
        try:
            with self.session.watching_changes():
                data = self.file.read_bytes(problem.offset, min(problem.size, SPAN_LIMIT))
        except (OSError, ValueError) as exc:
            return f"cannot read the skipped bytes at {problem.offset:,}: {exc}"
        compressed = self.file.compression is not Compression.NONE
        framed = FramedRecord(problem.offset, data[:HEADER_SIZE], data[HEADER_SIZE:], b"", None, compressed)
        hexv.set_record(framed)
        hexv.summary.setText(self._skipped_html(problem, row, len(data), where))
        hexv.highlight(problem.offset, problem.offset + len(data))
        self._showing_span = True
        return f"{self._title(problem)} at byte {problem.offset:,}: {problem.size:,} bytes {where} highlighted"

    def _skipped_html(self, problem: Problem, row: int, shown: int, where: str) -> str:
        last = problem.offset + problem.size - 1
        lines = [(f"<b style='color:{palette.BAD_COLOR}'>Damaged bytes {problem.offset:,}–{last:,}</b> "
                  f"({problem.size:,} bytes that belong to no record, {html.escape(where)})"),
                 html.escape(problem.detail)]
        if problem.compressed_offset is not None:
            lines.append(f"The compressed stream broke at byte {problem.compressed_offset:,} of the file.")
        if shown < problem.size:
            lines.append(f"<span style='color:{palette.MUTED_COLOR}'>first {shown:,} bytes shown</span>")
        lines.append(f"<span style='color:{palette.MUTED_COLOR}'>The table shows record {row:,}, the nearest record "
                     "found; click it there to see its own bytes.</span>")
        return "<br>".join(lines)
