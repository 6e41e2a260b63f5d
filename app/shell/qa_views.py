"""The dataset-QA parts of one file tab, wired to its table and detail view.

A :class:`QaViews` is made by a tab with its session, the rows its table
shows, the table's row selection, the table and the record detail. It puts
the filter bar above a "Table | Gallery" tab widget (the tab's left side),
keeps the table, the gallery and the detail view on the same record, and
makes the statistics and feature-spec panels when the window first shows them
(see :mod:`app.shell.qa_docks`). Everything reads the session's records.
"""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, Signal
from PySide6.QtWidgets import QTableView, QTabWidget, QVBoxLayout, QWidget

from app.models.filtered_table_model import FilteredTableModel, window_rows_for
from app.models.settings import Settings
from app.shell.row_selection import RowSelection
from app.shell.session import TabSession
from app.views.filter_bar import FilterBar
from app.views.gallery import Gallery
from app.views.projection_view import ProjectionView
from app.views.record_detail import IMAGES_TAB, RecordDetail
from app.views.scalars_view import ScalarsView
from app.views.schema_view import SchemaView
from app.views.stats_panel import StatsPanel
from codec.format.framing import RecordStatus
from codec.sources.protocol import RecordData, RecordSource

# Qt's list view lays out every tile it holds (6-15 µs each, in the background, in row order), and a
# selected tile can be scrolled to only once its row is laid out: the top of the page shows until then
# (1-3 s for the last of 200,000 tiles). Past this many tiles the gallery pages (the page bar above it).
GALLERY_WINDOW_MAX = 200_000

TABLE_VIEW, GALLERY_VIEW = 0, 1


class QaViews(QObject):
    """Filter bar, Table | Gallery, and (made on demand) statistics and spec panels of one tab.

    ``message(str)``: a note for the status bar.
    """

    message = Signal(str)

    def __init__(self, session: TabSession, rows: FilteredTableModel, selection: RowSelection, table: QTableView,
                 detail: RecordDetail, settings: Settings, parent: QWidget) -> None:
        super().__init__(parent)
        self.session = session
        self.rows = rows
        self.selection = selection
        self.table = table
        self.detail = detail
        self._stats: StatsPanel | None = None
        self._schema: SchemaView | None = None
        self._projection: ProjectionView | None = None
        self._scalars: ScalarsView | None = None
        self._closed = False
        self.filter_bar = FilterBar(rows, self.source, session.is_running, settings)
        self.gallery = Gallery(rows, self.read, settings, status=self.status, source=self.records)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.left = QWidget(parent)
        layout = QVBoxLayout(self.left)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.views, 1)

        self.filter_bar.message.connect(self.message)
        for view in (table, self.gallery.view):  # "No records match …" over both
            self.filter_bar.attach_empty_state(view)
        self.filter_bar.filter_applied.connect(self._filter_applied)
        self.filter_bar.filter_started.connect(self._filter_started)
        self.filter_bar.matches_found.connect(self._matches_found)
        self.gallery.model.rowsInserted.connect(self._gallery_rows_added)
        self._kept = -1  # the record shown when a filter started: current again when it comes among the matches
        self.gallery.record_activated.connect(selection.select_record)
        self.gallery.open_requested.connect(self._open_images)
        table.selectionModel().currentRowChanged.connect(self._table_current)
        session.finished.connect(self._source_idle)
        session.reopened.connect(self._reopened)
        session.payload_changed.connect(self.gallery.payload_changed)
        session.payload_changed.connect(self.filter_bar.payload_changed)

    def around(self, table: QWidget) -> QWidget:
        """The tab's left side: the filter bar over "Table" (``table``) and "Gallery"."""
        self.views.addTab(table, "Table")
        self.views.addTab(self.gallery, "Gallery")
        self.views.currentChanged.connect(self._fit_window)
        self.gallery.size_slider.valueChanged.connect(self._fit_window)
        self.gallery.model.aspect_changed.connect(self._fit_window)
        return self.left

    # -- reading ----------------------------------------------------------
    def source(self) -> RecordSource:
        """What a codec pass (filter, statistics, spec) goes over: the records the table shows.

        That is the source itself while it has no unsaved edits (a verify pass
        over it keeps its results); the edited records otherwise (row ``i`` is
        the table's row ``i`` either way).
        """
        shown = self.session.records
        if shown.statuses_stored or shown.modified:
            return shown
        return self.session.source

    def source_busy(self) -> bool:
        """The file's own pass runs, or has not started yet: a whole-file pass must wait.

        A tab is made (and shown, which shows a docked panel) just before its
        index pass starts; a pass started then would go over 0 records.
        """
        return self.session.is_running() or self.session.phase == "index"

    def read(self, i: int) -> RecordData:
        """Record ``i`` as the table shows it (for thumbnails)."""
        return self.session.records.read(i)

    def records(self) -> RecordSource:
        """The records as the table shows them: their ``payload`` and ``labels`` say how thumbnails decode."""
        return self.session.records

    def status(self, i: int) -> RecordStatus:
        """Record ``i``'s status as known now (damage found by a later verify shows on its tile)."""
        return self.session.records.index.status(i)

    # -- views ------------------------------------------------------------
    def _fit_window(self, *_) -> None:
        """Size the rows' window for the view shown: the gallery's tiles are taller
        than table rows, a narrow gallery may hold one per row, and Qt lays out every tile
        it holds, so it pages sooner (at most GALLERY_WINDOW_MAX tiles)."""
        cap = type(self.rows).window_rows  # the most rows at once, whatever their height
        if self.views.currentWidget() is self.gallery:
            rows = min(GALLERY_WINDOW_MAX, window_rows_for(self.gallery.delegate.cell_size().height(), cap))
        else:
            rows = window_rows_for(self.table.verticalHeader().defaultSectionSize(), cap)
        record = self.selection.current_record()
        if self.rows.set_window_rows(rows) and record >= 0:
            self.selection.select_record(record)

    def show_table(self) -> None:
        self.views.setCurrentIndex(TABLE_VIEW)
        self.table.setFocus()

    def show_gallery(self) -> None:
        self.views.setCurrentIndex(GALLERY_VIEW)
        self.gallery.view.setFocus()

    def focus_filter(self) -> None:
        self.filter_bar.edit.setFocus()
        self.filter_bar.edit.selectAll()

    def stats_panel(self) -> StatsPanel:
        """The statistics panel (made on first use; the window places it)."""
        if self._stats is None:
            self._stats = StatsPanel(self.rows, self.source, self.source_busy)
            self._stats.stats_ready.connect(self._stats_ready)
        return self._stats

    def schema_view(self) -> SchemaView:
        """The feature-spec panel (made on first use; the window places it)."""
        if self._schema is None:
            self._schema = SchemaView(self.rows, self.source, self.source_busy)
            self._schema.message.connect(self.message)
            stats = self._stats.stats() if self._stats is not None else None
            if stats is not None and not self._stats.is_running():
                self._schema.offer_stats(stats, self._stats.bar.describe_scope(self.rows)[1])
        return self._schema

    def projection_view(self) -> ProjectionView:
        """The embedding projection (made on first use; the window places it): a click selects the record."""
        if self._projection is None:
            self._projection = ProjectionView(self.source, self.source_busy)
            self._projection.record_activated.connect(self.selection.select_record)
        return self._projection

    def scalars_view(self) -> ScalarsView:
        """A TensorBoard log's Scalars view (made on first use; the window places it)."""
        if self._scalars is None:
            self._scalars = ScalarsView(lambda: self.session.source, self.source_busy)
            self._scalars.message.connect(self.message)
        return self._scalars

    def records_grown(self) -> None:
        """The followed file grew: the Scalars view reads the events appended."""
        if self._scalars is not None:
            self._scalars.read_more()

    def _panels(self) -> tuple:
        return self._stats, self._schema, self._projection, self._scalars

    def close(self) -> None:
        """Stop every pass and thumbnail job (before the file closes); drop the panels."""
        if self._closed:
            return
        self._closed = True
        self.filter_bar.stop()
        self.gallery.stop()
        for panel in self._panels():
            if panel is not None:
                panel.stop()
                panel.setParent(None)
                panel.deleteLater()
        self._stats = self._schema = self._projection = self._scalars = None

    # -- keeping views on the same record ---------------------------------
    def _table_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.gallery.set_current_record(self.rows.record_at(current.row()))

    def _filter_started(self) -> None:
        self._kept = self.detail.current_record()

    def _matches_found(self, _count: int) -> None:
        """A filter's matches came: the record shown before it started is current again once among them;
        once the pass (in record order) went past it without a match, the first match is shown instead."""
        if self.selection.current_record() >= 0:
            return
        rows, kept = self.rows, self._kept
        if kept >= 0 and rows.row_for_record(kept) >= 0:
            self.selection.select_record(kept)
            self._kept = -1
            return
        matches = rows.matches()
        if matches is not None and len(matches) and int(matches[-1]) > kept and rows.position_of(kept) < 0 \
                and rows.rowCount():  # (a match outside the window's page is still a match: it waits)
            self.selection.select_record(rows.record_at(0))
            self._kept = -1

    def _gallery_rows_added(self, *_) -> None:
        """Tiles came after the table's current record did (they reach the grid in batches): make it current there."""
        record = self.selection.current_record()
        if record >= 0 and self.gallery.current_record() != record:
            self.gallery.set_current_record(record)

    def _filter_applied(self) -> None:
        """The rows changed wholesale: keep the record in view if it is still shown, else the first."""
        self._kept = -1
        rows = self.rows
        shown = self.detail.current_record()
        if rows.rowCount() == 0:
            self.detail.clear()
            return
        self.selection.select_record(shown if rows.row_for_record(shown) >= 0 else rows.record_at(0))

    def _open_images(self, record: int) -> None:
        self.selection.select_record(record)
        detail = self.detail
        if detail.tabs.isTabEnabled(IMAGES_TAB):
            detail.tabs.setCurrentIndex(IMAGES_TAB)

    def _stats_ready(self, stats, words: str) -> None:
        if self._schema is not None:
            self._schema.offer_stats(stats, words)

    def _reopened(self) -> None:
        """The session reads another file now (saved): thumbnails, statistics and spec are from the old one."""
        self.gallery.model.forget()
        for panel in self._panels():
            if panel is not None:
                panel.mark_stale()

    def _source_idle(self) -> None:
        if self._closed:
            return
        self.filter_bar.source_idle()
        for panel in self._panels():
            if panel is not None:
                panel.source_idle()
