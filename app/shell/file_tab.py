"""One open TFRecord file: the record table beside the record detail.

A FileTab lays out one :class:`~app.shell.session.TabSession` (the records
it shows, their document and their passes) in widgets: the table model
appends rows as the session's index pass reports them, the detail shows the
current row's record (``session.records.pinned(row)``), and its parts
(:class:`~app.shell.tab_editing.TabEditing`,
:class:`~app.shell.corruption_tools.CorruptionTools`,
:class:`~app.shell.qa_views.QaViews`) each take the session and the widgets
they drive. The window only reads :meth:`FileTab.state` and calls the actions.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QSplitter, QVBoxLayout, QWidget

from app.dialogs import edit_dialogs
from app.models.column_choice import schema_signature
from app.models.filtered_table_model import FilteredTableModel, window_rows_for
from app.models.record_format import format_text, format_tip, group_size_warning, read_only_reason
from app.models.record_table_model import REMOTE_CACHE_ROWS, RecordTableModel
from app.models.records_owner import RecordsOwner
from app.models.settings import Settings, full_path
from app.shell.corruption_tools import CorruptionTools
from app.shell.disk_changes import DiskChanges
from app.shell.log_tabs import settle_unfinished_tail
from app.shell.payload_choice import opening_choice
from app.shell.qa_views import QaViews
from app.shell.record_copy import RecordCopy
from app.shell.row_selection import RowSelection
from app.shell.session import OpenedSource, PassProgress, TabSession
from app.shell.tab_editing import TabEditing
from app.shell.tab_follow import TabFollow
from app.shell.tab_goto import TabGoTo
from app.shell.tab_state import GoTarget, TabState
from app.views.column_sizing import ColumnSizing
from app.views.message_bar import MessageBar
from app.views.page_bar import PageBar
from app.views.record_detail import RecordDetail
from app.views.record_table_view import RecordTableView
from app.workers.row_fetcher import RowFetcher
from app.workers.sort_runner import TableSorter
from app.workers.worker import GeneratorWorker, call_on_worker, one_line
from codec.datasets.payload_choice import apply
from codec.errors import TFRecordError
from codec.format.names import tensorflow_name_note
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.remote import is_url
from codec.storage.url_secrets import shown_path

if TYPE_CHECKING:
    from codec.datasets.tfds import TfdsDataset

# Files up to this size get every data CRC checked right after indexing, so
# damaged records are marked without asking; larger files on request.
AUTO_VERIFY_BYTES = 256 << 20
TABLE_SHARE = 0.56  # of the tab's width, for the table beside the record detail
MIN_TABLE_ROWS = 10  # the table keeps this many rows when panels and docks open


class FileTab(QWidget):
    """One open source: its table, its detail view and its session.

    Signals: ``state_changed()`` whenever :meth:`state` may read differently,
    ``indexing_finished()`` when the index (and any verify) pass ends,
    ``message(str)`` a one-line note for the status bar, ``reopened()`` the
    session shows a new file now (saved over or saved as), ``file_changed(str)``
    the file changed on disk while it was read (any thread may emit it),
    ``disk_changed(str)`` the tab's bar shows that its file changed on disk (a
    :class:`codec.storage.file_identity.Change` value; see :class:`DiskChanges`),
    ``follow_requested()`` Follow was pressed on the bar of a grown file, ``format_note(str)`` once indexed,
    what the file's format makes slow (an ArrayRecord group_size above 1), for the tab's message bar.
    """

    is_set = False  # its rows come from one file (a ShardSetTab: from several)
    dataset: TfdsDataset | None = None  # the TFDS dataset the tab shows (a ShardSetTab of a dataset folder)
    state_changed = Signal()
    indexing_finished = Signal()
    message = Signal(str)
    reopened = Signal()
    file_changed = Signal(str)
    disk_changed = Signal(str)
    follow_requested = Signal()
    format_note = Signal(str)

    def __init__(self, source: OpenedSource, settings: Settings, parent: QWidget | None = None,
                 *, auto_verify_bytes: int = AUTO_VERIFY_BYTES) -> None:
        super().__init__(parent)
        self.session = self._make_session(source, auto_verify=source.file_size <= auto_verify_bytes)
        self.settings = settings
        self.open_note: str | None = None  # why the file does not decode as it did last time, if so
        self._compression_noted = False
        self._format_noted = False  # the group_size warning was given
        self._reopening_from: str | None = None  # the path shown before a save reopened the tab
        self._columns_ready = False
        self._columns_fitted = False  # the feature columns shown are the default ones, fitted to the width
        self._closed = False
        self._reopen_worker: GeneratorWorker | None = None  # a URL opened again after it changed

        session = self.session
        self.model = self._make_model(session)
        if source.is_remote:  # its rows are read in the background, never while painting
            self.model.fetch_with(RowFetcher(self.model.row_job, self.model, capacity=REMOTE_CACHE_ROWS))
        self.model.failed.connect(self.message)
        self.model.samples_ready.connect(self._samples_ready)  # a URL's first rows came from the background
        self.change_bar = MessageBar(self, action="Reload")
        self.change_bar.action_button.setToolTip("Open the file again as it is on disk now (unsaved edits are lost)")
        # queued: it comes from workers, and from views in the middle of painting
        self.file_changed.connect(self._show_file_changed, Qt.ConnectionType.QueuedConnection)
        session.file_changed.connect(self.file_changed)
        self.model.file_changed.connect(self.file_changed)
        self.table = RecordTableView(self)
        self.proxy = FilteredTableModel(self.model, self)  # the rows shown: all records, or a filter's
        # a window of rows Qt can lay out: fewer than 2^31 px of rows
        self.proxy.set_window_rows(min(self.proxy.window_rows,
                                       window_rows_for(self.table.verticalHeader().defaultSectionSize())))
        self.proxy.filter_changed.connect(self._filter_changed)
        self.table.setModel(self.proxy)
        self.selection = RowSelection(self.table, self.proxy, self.model)
        # Go To, and the next damaged record (F8)
        self.goto = TabGoTo(session, self.selection, self.proxy, self.model, lambda: self.title,
                            lambda: self.qa.filter_bar.is_running(), self.message.emit)
        # The column headers get a selection of their own that stays empty: Qt asks of each
        # painted header section whether its whole column is selected, which checks every row
        # (after Select All on 10M records: minutes of calls into Python).
        header = self.table.horizontalHeader()
        header.setSelectionModel(QItemSelectionModel(self.proxy, header))
        self.table.copied.connect(self.message)
        self.table.message.connect(self.message)
        self.table.position_requested.connect(self.select_position)
        self.page_bar = PageBar(self.proxy, self)
        self.page_bar.step_requested.connect(self.step_page)
        self.table.horizontalHeader().customContextMenuRequested.connect(self._header_menu)
        self.table.resized.connect(self._fit_columns)  # until the user chooses columns
        self.table.customContextMenuRequested.connect(self._row_menu)
        self.table.selectionModel().currentRowChanged.connect(self._current_row_changed)
        self.detail = RecordDetail(self)
        self.detail.file_changed.connect(self.file_changed)
        self.sizing = ColumnSizing(self.table, self.model, lambda: self.session.source, self._extra_columns_width)
        self.sizing.size_fixed()
        session.problems_changed.connect(self._problems_found)
        session.rows_added.connect(self._rows_added)
        session.pass_finished.connect(self._pass_finished)
        session.source_changed.connect(self.model.records_replaced)  # editing began or stopped, or a reopen
        session.about_to_reopen.connect(self._about_to_reopen)
        session.payload_changed.connect(self._payload_changed)
        session.reopened.connect(self._reopened)
        # problems panel + corruption map
        self.corruption = CorruptionTools(session, self.selection, self.table, self.detail, self)
        # edits over a Document, undo, save
        self.editing = TabEditing(session, self.selection, self.model, self.detail, self)
        # filter bar, Table | Gallery, statistics, feature spec
        self.qa = QaViews(session, self.proxy, self.selection, self.table, self.detail, settings, self)
        # View > Follow: rows come as the file is written
        self.follow = TabFollow(session, self)
        # a header click sorts the rows (a pass on a worker; progress and Cancel in the status bar)
        self.sorter = TableSorter(self.proxy, self.qa.source, self.qa.source_busy, self.current_record,
                                  self.select_record, self)
        self.table.sort_requested.connect(self.sorter.header_clicked)
        self.sorter.message.connect(self.message)
        self.sorter.state_changed.connect(self.state_changed)
        session.finished.connect(self.sorter.runner.source_idle)
        self.follow.grown.connect(self._follow_grown)
        self.follow.grown.connect(self.qa.records_grown)  # a log's Scalars view reads the events appended
        # a log's end still being written is no damage
        session.finished.connect(lambda: settle_unfinished_tail(session, self.follow, self.model.refresh_status))
        self.follow.changed.connect(self._follow_changed)
        self.editing.modified_changed.connect(self._modified_changed)
        self.editing.feature_added.connect(self._show_new_feature)
        for part in (self.corruption, self.editing, self.qa, self.follow):
            part.message.connect(self.message)
        # the file changing on disk: the bar over the tab (the window's DiskWatch asks it to check)
        self.disk = DiskChanges(session, self.change_bar, lambda: self.editing.busy, self)
        self.disk.reload_requested.connect(self.reload)
        self.disk.follow_requested.connect(self.follow_requested)
        # Copy Record as JSON, Copy Offset
        self.copying = RecordCopy(session, self.model, self.current_record, self.message.emit)
        self.disk.follow_requested.connect(self.start_follow)  # the bar's Follow is View > Follow
        self.disk.changed.connect(self.disk_changed)
        session.state_changed.connect(self.state_changed)
        session.finished.connect(self.indexing_finished)
        session.reopened.connect(self.reopened)

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

    def _make_session(self, source: OpenedSource, *, auto_verify: bool) -> TabSession:
        return TabSession(source, self, auto_verify=auto_verify, edit_block=read_only_reason(source))

    def _make_model(self, owner: RecordsOwner) -> RecordTableModel:
        return RecordTableModel(owner, self)

    @classmethod
    def from_source(cls, source: TFRecordFile, settings: Settings, parent: QWidget | None = None) -> FileTab:
        """A tab over an opened file (a URL's is opened on a worker); the file is closed if the tab fails.

        Its records decode as chosen for it before, else as
        :func:`codec.datasets.payload_choice.choose_for` finds (see
        :func:`~app.shell.payload_choice.opening_choice`); :attr:`open_note`
        says when they cannot decode as they did before.
        """
        try:
            choice, note = opening_choice(source.path, settings)
            apply(choice, source)
            tab = cls(source, settings, parent)
        except BaseException:
            source.close()
            raise
        tab.open_note = note
        return tab

    # -- state ------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.session.source.path

    @property
    def title(self) -> str:
        path = shown_path(self.session.source.path)  # a signed URL's query is not shown
        return os.path.basename(path) or path

    def _payload_changed(self) -> None:
        """The records decode differently (Decode As, a label map): rows, feature columns and the detail again."""
        self.model.records_replaced()
        self._columns_ready = False
        self._rows_arrived()
        current = self.table.currentIndex()
        if current.isValid():
            self._current_row_changed(current, current)

    def is_running(self) -> bool:
        """A pass is under way (see :meth:`TabSession.is_running`)."""
        return self.session.is_running()

    def state(self) -> TabState:
        session, source = self.session, self.session.source
        sorting = self.sorter.is_running() and not session.is_running()
        return TabState(
            path=source.path,
            compression=source.compression.value,
            file_size=source.file_size,
            records=self.model.rowCount(),
            problems=self._problem_count(),
            phase="sort" if sorting else session.phase,
            fraction=self.sorter.fraction if sorting else session.fraction,
            running=session.is_running() or sorting,
            verified=source.verified,
            error=session.failure,
            decoded_as=None if source.payload is None else source.payload.name,
            fetched=session.fetched,
            rate=session.fetch_rate(),
            following=self.follow.active,
            writing=self.follow.active and len(source.index) > source.complete_records,
            can_follow=self.follow.active or self.follow.why_not() is None,
            resumable=session.resumable,
            compression_note=self.compression_note(),
            container=format_text(source),
            container_tip=format_tip(source),
        )

    def compression_note(self) -> str | None:
        """What TensorFlow makes of a file whose name says another compression than its bytes (one line)."""
        source = self.session.source
        return None if source.is_set else tensorflow_name_note(source.path, source.compression)

    # -- the passes (run by the session) ---------------------------------------
    def start(self) -> None:
        """Index the source on a worker thread (then verify it when it is small)."""
        self.session.start()

    def verify(self) -> bool:
        """Check every record's data CRC on a worker thread; False if busy."""
        return self.session.verify()

    def cancel(self) -> None:
        self.session.cancel()
        self.sorter.runner.cancel()

    def resume(self) -> bool:
        """Go on indexing from where a stopped pass stopped; False with a message when there is nothing to resume."""
        if not self.session.resume():
            self.message.emit(f"{self.title}: nothing to resume" if not self.is_running() else
                              f"{self.title}: busy: wait for the current pass, or stop it first")
            return False
        self.message.emit(f"resuming: indexing {self.title} from record {self.model.rowCount():,} on")
        return True

    # -- following a file being written (View > Follow) ---------------------
    def start_follow(self) -> bool:
        """Follow the file as it is written (rows come as it grows); False with a message if it cannot be."""
        return self.follow.start()

    def stop_follow(self) -> None:
        self.follow.stop()

    def _modified_changed(self, _modified: bool) -> None:
        if not self._closed:
            self.state_changed.emit()  # whether View > Follow applies

    def _follow_changed(self, on: bool) -> None:
        if on:
            self.sizing.make_room_for_writing()
        self.state_changed.emit()

    def _follow_grown(self) -> None:
        self._rows_arrived()  # the selection stays where it is
        self.state_changed.emit()

    def _problem_count(self) -> int:
        return self.session.source.problem_count()

    def _problems_found(self) -> None:
        if self.session.phase == "verify":
            self.model.refresh_status()  # a damaged record was found: repaint its row

    def _rows_added(self, pp: PassProgress) -> None:
        if pp.progress.problems:
            self._widen_for_damage()
        self._rows_arrived()

    def _pass_finished(self) -> None:
        session = self.session
        self._rows_arrived()
        self.model.refresh_status()
        if session.phase == "failed":
            self.goto.resolve(final=True)
            self.message.emit(f"{self.title}: {session.failure}")
            return
        self._widen_for_damage()
        self._note_format()
        session.start_editing()  # editing starts once the whole file is indexed
        self.goto.resolve(final=True)
        if session.phase == "cancelled":
            more = " (Resume goes on from there)" if session.resumable else ""
            self.message.emit(f"stopped: {self.model.rowCount():,} records indexed so far{more}")
        elif not self.model.rowCount():
            self.message.emit(f"{self.title}: no records")
        elif not self._compression_noted and self.compression_note():
            self._compression_noted = True  # said once; the status bar's compression keeps it as its tip
            self.message.emit(f"{self.title}: {self.compression_note()}")

    def _note_format(self) -> None:
        """Once: why random access into this ArrayRecord file is slow (its group_size > 1), for the message bar."""
        warning = None if self._format_noted else group_size_warning(self.session.source)
        if warning is not None:
            self._format_noted = True
            self.format_note.emit(f"{self.title}: {warning}")

    def _samples_ready(self) -> None:
        """The first rows of a remote source were read in the background: choose the feature columns now."""
        self._columns_ready = False
        self._rows_arrived()

    def _rows_arrived(self) -> None:
        self.model.sync()
        if self.model.rowCount():
            if not self._columns_ready:
                self._init_columns()
            if self.goto.pending is None and not self.table.currentIndex().isValid():
                self.select_record(0)
        self.goto.resolve(final=False)

    # -- the file changing under us ---------------------------------------
    def _show_file_changed(self, message: str) -> None:
        if self._closed or not self.session.changed_on_disk():
            return  # a notice queued before the tab reopened the file
        text = message if "changed" in message.lower() else f"the file changed while reading: {message}"
        self.disk.show_read_failure(f"{text[:1].upper()}{text[1:]} — reload it to see the file as it is now.")

    def reload(self) -> bool:
        """Reload pressed: open the file again as it is on disk now, after asking when edits are unsaved."""
        if self.session.modified and not edit_dialogs.ask_reload_unsaved(self, self.title):
            return False
        return self.reopen_changed()

    def reopen_changed(self) -> bool:
        """Open the file again as it is on disk now (after it changed); False with a note if it cannot be."""
        self.session.stop()
        self.editing.cancel()
        self.editing.wait()
        if is_url(self.path):  # asked over the network: on a worker, the bar says how it went
            self._reopen_remote()
            return True
        try:
            self.reopen(self.path)
        except (TFRecordError, OSError, ValueError) as exc:
            self._reopen_failed(one_line(exc))
            return False
        self.change_bar.hide()
        return True

    def _reopen_failed(self, why: str) -> None:
        self._reopen_worker = None
        if self._closed:
            return
        self.session.stop_editing()  # unsaved edits are lost either way
        self.change_bar.show_message(f"cannot reopen {self.path}: {why}")

    def _reopen_remote(self) -> None:
        url = self.path
        self.change_bar.show_message(f"Reopening {url}…")
        self._reopen_worker = call_on_worker(lambda: TFRecordFile(url), self, self._reopened_remote,
                                             self._reopen_failed)

    def _reopened_remote(self, source: TFRecordFile) -> None:
        self._reopen_worker = None
        if self._closed:
            source.close()
            return
        self.session.replace_source(source)
        self.change_bar.hide()

    # -- columns ----------------------------------------------------------
    def _schema_signature(self) -> str:
        return schema_signature(self.model.sample_schema())

    def _init_columns(self) -> None:
        """The columns remembered for this schema, else the default ones that fit."""
        self._columns_ready = True
        chosen = self.settings.feature_columns(self._schema_signature())
        self.sizing.size_fixed()
        self._columns_fitted = chosen is None
        if chosen is None:
            chosen = self.sizing.fitting(self.model.default_feature_columns())
        else:
            self.sizing.fitted_widths = {}
        self._set_columns(chosen, save=False)

    def _fit_columns(self) -> None:
        """Choose the default columns again for the table's width, unless the user chose columns."""
        if self._columns_ready and self._columns_fitted:
            self._set_columns(self.sizing.fitting(self.model.default_feature_columns()), save=False)

    def _set_columns(self, keys: list[str], *, save: bool = True) -> None:
        self.model.set_feature_columns(keys)
        if save:
            self._columns_fitted = False
            self.sizing.fitted_widths = {}
            self.settings.set_feature_columns(self._schema_signature(), keys)
        self.sizing.size_features()

    def default_columns(self) -> None:
        """Forget the columns chosen for this schema: show the default ones that fit, as on first open."""
        self.settings.forget_feature_columns(self._schema_signature())
        self._columns_fitted = True
        self._fit_columns()

    def _show_new_feature(self, key: str) -> None:
        """A feature just added gets a column, unless the user chose this schema's columns."""
        shown = self.model.feature_columns()
        if key in shown or self.settings.feature_columns(self._schema_signature()) is not None:
            return
        self._set_columns([*shown, key], save=False)

    def _cell_width(self, text: str) -> int:
        return self.sizing.cell_width(text)

    def _widen_for_damage(self) -> None:
        if self._columns_ready and self.sizing.widen_for_damage():
            self._fit_columns()

    def _extra_columns_width(self) -> int:
        """Width of columns a subclass adds to the fixed ones (a shard set's Shard column)."""
        return 0

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
        menu.addAction("Default Columns", self.default_columns).setToolTip(
            "Labels and class names first, then single values, as many as fit (forgets the columns chosen)")

    def toggle_column(self, key: str, on: bool) -> None:
        """Show or hide feature ``key``'s column: the columns shown are remembered for this schema."""
        shown = self.model.feature_columns()
        if on and key not in shown:  # in its place: the default columns' order, then by key
            order = dict.fromkeys(self.model.default_feature_columns() + self.model.sample_keys() + shown)
            shown = [k for k in order if k in shown or k == key]
        elif not on:
            shown = [k for k in shown if k != key]
        self._set_columns(shown)

    def _header_menu(self, pos: QPoint) -> None:
        menu = QMenu(self)
        self.fill_column_menu(menu)
        menu.exec(self.table.horizontalHeader().mapToGlobal(pos))
        menu.deleteLater()

    # -- the row menu -------------------------------------------------------
    def row_menu(self, index: QModelIndex) -> QMenu:
        """The menu of a right-click on ``index`` (its row is current): copy the rows, the cell, the record,
        show it in the gallery, then the actions the window put on the table (edits of the row)."""
        menu = QMenu(self)
        menu.addAction("Copy", self.table.copy_rows).setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        menu.addAction("Copy Cell", lambda: self.table.copy_cell(index))
        menu.addAction("Copy Record as JSON", self.copying.record_json).setShortcut(QKeySequence("Ctrl+Shift+C"))
        offset = menu.addAction("Copy Offset", self.copying.offset)
        record = self.current_record()
        if record >= 0 and self.model.is_edited(record):
            offset.setEnabled(False)
            offset.setToolTip("an edited record has no offset until it is saved")
        menu.addSeparator()
        menu.addAction("Show in Gallery", self.qa.show_gallery)
        if self.table.actions():  # the window's edits of the row (EditActions)
            menu.addSeparator()
            menu.addActions(self.table.actions())
        return menu

    def _row_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            return
        menu = self.row_menu(index)
        menu.exec(self.table.viewport().mapToGlobal(pos))
        menu.deleteLater()

    # -- navigation -------------------------------------------------------
    def current_record(self) -> int:
        return self.selection.current_record()

    def select_record(self, i: int) -> None:
        """Make record ``i`` current, selected and visible (shows its detail); see :class:`RowSelection`."""
        self.selection.select_record(i)

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
        """The detail shows the current row's record (a shard set's read from its shard, at its offsets)."""
        if not current.isValid():
            self.detail.clear()
            return
        record = self.proxy.record_at(current.row())
        try:
            pinned = self.session.records.pinned(record)
        except (TFRecordError, OSError, ValueError, IndexError) as exc:
            self.message.emit(f"cannot read record {record:,}: {one_line(exc)}")
            return
        self.detail.show_record(pinned, record)
        damage = self.model.problem_line(record)  # a damaged row says in words what happened, and what TF does
        if damage:
            self.message.emit(damage)

    def go_to(self, text: str) -> str | None:
        """Jump to a record number or byte offset; a one-line message when not possible (yet) (see :class:`TabGoTo`)."""
        return self.goto.go_to(text)

    def next_damaged(self, backwards: bool = False) -> int:
        """Select the next (or previous) damaged record, or record after skipped bytes; -1 if none."""
        return self.goto.next_damaged(backwards)

    # -- lifetime ---------------------------------------------------------
    def reopen(self, path: str) -> None:
        """Show ``path`` in this tab from now on (after a save): a new file, index and history.

        Raises codec.errors.TFRecordError (one line) when it cannot be opened.
        """
        self.session.reopen(path)

    def _about_to_reopen(self) -> None:
        """Come back to the current row once the new file has it; stop reading the old file."""
        self._reopening_from = self.path
        row = self.current_record()
        self.goto.pending = GoTarget("record", row) if row >= 0 else None
        self.detail.clear()
        self.detail.wait()

    def _reopened(self) -> None:
        """Saved as another file: it decodes as this one did, now and when it opens again."""
        old, self._reopening_from = self._reopening_from, None
        if old is not None and full_path(old) != full_path(self.path):
            self.settings.copy_file_choices(old, self.path)

    def close_file(self) -> None:
        """Stop the worker and close the file; the tab is unusable afterwards."""
        if self._closed:
            return
        self.follow.close()
        self.session.close()
        self.editing.close()
        self.qa.close()
        self.sorter.runner.stop()
        if self._reopen_worker is not None:
            self._reopen_worker.stop()  # a URL being opened again: its answer is dropped
        self._closed = True
        self.detail.clear()
        self.detail.wait()  # background loads may still be reading the file
        self.model.close()
        self.session.close_source()
