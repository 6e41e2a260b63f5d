"""The main window: a switchboard wiring menus, tabs and the status bar.

Each open file is a :class:`~app.shell.file_tab.FileTab`; everything about a file
(indexing, table, detail, go-to) lives there. The window's parts each own a
share of the menus: :class:`~app.shell.edit_actions.EditActions` (saving,
export, undo, record edits), :class:`~app.shell.qa_docks.QaDocks` (gallery,
filter, statistics, feature spec), :class:`~app.shell.damage_actions.DamageActions`
(Problems Panel, salvage), :class:`~app.shell.payload_actions.PayloadActions`
(Decode As, label maps) and :class:`~app.shell.recent_files.RecentFiles`. They
get what they need as arguments and report through signals; this module wires
them, routes user actions to the current tab and shows its state.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QInputDialog,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.dialogs import url_dialogs
from app.dialogs.file_info_dialog import FileInfoDialog
from app.models.file_facts import file_facts
from app.models.settings import Settings
from app.shell import opening
from app.shell.check_actions import CheckActions
from app.shell.damage_actions import DamageActions
from app.shell.disk_watch import DiskWatch
from app.shell.edit_actions import EditActions
from app.shell.file_dialogs import FileDialogSizer
from app.shell.file_tab import FileTab
from app.shell.help_actions import HelpActions
from app.shell.payload_actions import PayloadActions
from app.shell.qa_docks import QaDocks, TabQa
from app.shell.recent_files import RecentFiles, sweep_stale_temps_in
from app.shell.report_opening import ReportOpenings, is_report_name
from app.shell.shard_set_tab import ShardSetTab
from app.shell.status_bar import TabStatusBar
from app.shell.tab_messages import TabMessages
from app.shell.tab_state import TabState
from app.shell.theme_actions import ThemeActions
from app.shell.toolbar import make_toolbar
from app.shell.url_opening import UrlOpening, UrlOpenings
from app.shell.window_tabs import WindowMenu, WindowTabs
from app.style import icons
from app.views.action_state import set_enabled
from app.views.message_bar import MessageBar
from app.views.scalars_view import is_log
from app.views.start_page import StartPage
from app.workers.worker import PAINT_GATE
from codec.errors import TFRecordError
from codec.sources.open import opens_as_set
from codec.storage.remote import is_url
from codec.storage.url_secrets import shown_path
from resources import demo_path

APP_NAME = "TFRecord Lens"
DEFAULT_SIZE = (1200, 780)  # a first start's window, when the screen has room
SCREEN_SHARE = 0.85  # of a larger screen


class MainWindow(QMainWindow):
    """Tabs of open files (or the start page), menus, and a status bar."""

    def __init__(self, settings: Settings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings or Settings()
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(icons.icon("app"))
        self.setAcceptDrops(True)
        self.setMinimumSize(640, 400)  # explicit: opening a tab never resizes the window's limits

        self.message_bar = MessageBar()  # the current tab's errors, and the window's (see TabMessages)
        self.start_page = StartPage()
        self.start_page.open_requested.connect(self.open_dialog)
        self.start_page.open_url_requested.connect(self.open_url_dialog)
        self.start_page.recent_requested.connect(self.open_file)
        self.start_page.demo_requested.connect(self.open_demo)
        self.tabs = WindowTabs()
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.tabBarClicked.connect(self._tab_clicked)
        self.tabs.currentChanged.connect(self._current_changed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(self.tabs)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self._make_status_bar()
        self.messages = TabMessages(self.statusBar(), self.message_bar, self.tabs, self)  # each tab's own
        self._make_actions()
        self._make_menus()
        self._make_toolbar()
        self._current_changed()
        geometry = self.settings.window_geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(self.sizeHint())
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)
        self.sweep_thread = sweep_stale_temps_in(self.recent.written_folders())
        self.openings = UrlOpenings(self.tabs, self.settings, self)  # URLs opening on workers, each with a page
        self.openings.tab_ready.connect(self._url_tab_ready)
        self.openings.failed.connect(self.show_open_error)
        self.openings.finished.connect(self._current_changed)
        self.disk_watch = DiskWatch(self.file_tabs, self)  # open files changing on disk: each tab's bar
        self.tabs.currentChanged.connect(lambda *_: self.disk_watch.check_all())

    # -- building ---------------------------------------------------------
    def _make_status_bar(self) -> None:
        self.status = TabStatusBar(self.statusBar(), self, refresh=self._refresh_status, fetched=self._fetched_now)
        self.status.cancel_button.clicked.connect(self.cancel_current)
        self.status.resume_button.clicked.connect(lambda: self._tab_call(FileTab.resume))
        status = self.status  # its widgets by their names here too (tests and the actions read them)
        self.progress, self.records_label, self.problems_label = status.progress, status.records_label, \
            status.problems_label
        self.compression_label, self.payload_label, self.size_label = status.compression_label, \
            status.payload_label, status.size_label
        self.fetch_label, self.cancel_button = status.fetch_label, status.cancel_button

    def _action(self, text: str, slot, shortcut=None, icon: str | None = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if icon:
            action.setIcon(icons.icon(icon))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _make_actions(self) -> None:
        a = self._action
        self.open_action = a("&Open…", self.open_dialog, QKeySequence.StandardKey.Open, "open",
                             "Open TFRecord files (plain, GZIP or ZLIB) or ArrayRecord files")
        self.open_folder_action = a("Open &Folder as Dataset…", self.open_folder_dialog, None, "open",
                                    "Open every TFRecord or ArrayRecord file in a folder (a TFDS dataset: split by split) as one dataset")
        self.open_set_action = a("Open Files as One &Dataset…", self.open_set_dialog, None, None,
                                 "Open several shards as one dataset, records numbered across them")
        self.open_url_action = a("Open &URL…", self.open_url_dialog, "Ctrl+Shift+O", "remote",
                                 "Open a file, a glob of shards or a prefix from s3://, gs://, https://...")
        self.demo_action = a("Open &Demo Dataset", self.open_demo, None, "demo")
        self.verify_action = a("&Verify Checksums", self.verify_current, "Ctrl+Shift+V", "verify",
                               "Check every record's data CRC (in an ArrayRecord file: decode every chunk)")
        self.info_action = a("File &Info…", self.file_info_current, None, None,
                             "The file's format, writer options, size and records, as tfrlens-cli info says them")
        self.cancel_action = a("&Stop", self.cancel_current, "Esc", "cancel", "Stop indexing or verifying")
        self.resume_action = a("&Resume Indexing", lambda: self._tab_call(FileTab.resume), None, None,
                               "Go on indexing a stopped file from where it stopped")
        self.resume_action.setEnabled(False)  # (while the current tab's indexing is stopped)
        self.close_action = a("&Close Tab", self.close_current, QKeySequence.StandardKey.Close)
        self.quit_action = a("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.copy_rows_action = a("&Copy Selected Rows", lambda: self._tab_call(lambda t: t.table.copy_rows()))
        self.copy_json_action = a("Copy Record as &JSON", lambda: self._tab_call(lambda t: t.copying.record_json()),
                                  "Ctrl+Shift+C")
        self.copy_offset_action = a("Copy Record &Offset", lambda: self._tab_call(lambda t: t.copying.offset()))
        self.follow_action = a("F&ollow", self._toggle_follow, None, None,
                               "Show records as the file is written, like tail -f (a file still being written)")
        self.follow_action.setCheckable(True)
        self.fullscreen_action = a("&Full Screen", self._toggle_full_screen, QKeySequence.StandardKey.FullScreen)
        self.goto_action = a("&Go to Record…", self.go_to_dialog, "Ctrl+G", "goto",
                             "Jump to a record number or a byte offset")
        self.first_action = a("&First Record", lambda: self._tab_call(lambda t: t.select_record(0)), "Ctrl+Home")
        self.last_action = a("&Last Record",
                             lambda: self._tab_call(lambda t: t.select_record(t.model.rowCount() - 1)), "Ctrl+End")
        self.next_bad_action = a("&Next Damaged Record", lambda: self._tab_call(FileTab.next_damaged), "F8",
                                 "damaged")
        self.prev_bad_action = a("&Previous Damaged Record",
                                 lambda: self._tab_call(lambda t: t.next_damaged(backwards=True)), "Shift+F8")
        self._tab_actions = [self.info_action, self.verify_action, self.cancel_action, self.close_action, self.copy_rows_action,
                             self.copy_json_action, self.copy_offset_action, self.goto_action, self.first_action,
                             self.last_action, self.next_bad_action, self.prev_bad_action, self.follow_action]

    def _make_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_folder_action)
        file_menu.addAction(self.open_set_action)
        file_menu.addAction(self.open_url_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent = RecentFiles(self.settings, self.recent_menu, self.start_page, self.open_file, self)
        file_menu.addAction(self.demo_action)
        self.reports = ReportOpenings(self, self.tabs, self.settings, self.open_file, self.open_url, file_menu)
        self.reports.failed.connect(self.show_open_error)
        self.reports.message.connect(self.say)
        self.reports.finished.connect(self._current_changed)
        file_menu.addSeparator()
        file_menu.addAction(self.info_action)
        file_menu.addAction(self.verify_action)
        file_menu.addAction(self.cancel_action)
        file_menu.addAction(self.resume_action)
        file_menu.addSeparator()
        file_menu.addAction(self.close_action)
        file_menu.addAction(self.quit_action)
        edit_menu = mb.addMenu("&Edit")
        for action in (self.copy_rows_action, self.copy_json_action, self.copy_offset_action):
            edit_menu.addAction(action)
        view_menu = mb.addMenu("&View")
        self.columns_menu = view_menu.addMenu("Feature &Columns")
        self.columns_menu.aboutToShow.connect(self._fill_columns_menu)
        self.qa = QaDocks(self, view_menu, self._current_qa, lambda: self.tabs.count() > 0)
        self.tabs.currentChanged.connect(self.qa.refresh)
        self.checks = CheckActions(self, view_menu, self.current_tab, self.settings, beside=self.qa.stats_dock)
        self.checks.message.connect(self.say)  # (text, its tab)
        self.checks.failed.connect(self.show_error)
        self.tabs.currentChanged.connect(self.checks.refresh)
        self._tab_actions += self.checks.actions
        view_menu.addSeparator()
        view_menu.addAction(self.follow_action)
        view_menu.addAction(self.fullscreen_action)
        self.view_menu = view_menu  # View > Toolbar joins it
        self.theme = ThemeActions(self, self.settings, view_menu, refresh=self._refresh_status)
        self.file_dialogs = FileDialogSizer(self)  # Qt's own file dialogs: a sensible size, dates in full
        go_menu = mb.addMenu("&Go")
        go_menu.addAction(self.goto_action)
        go_menu.addSeparator()
        for action in (self.first_action, self.last_action, self.next_bad_action, self.prev_bad_action):
            go_menu.addAction(action)
        self.window_menu = WindowMenu(self, mb.addMenu("&Window"), self.tabs, self.select_tab, self._is_remote)
        self.help = HelpActions(self, mb.addMenu("&Help"))  # guide, shortcuts, About
        self.payloads = PayloadActions(self, self.settings, self.current_tab, file_menu, before=self.verify_action)
        self.payloads.failed.connect(self.show_error)
        self.payloads.message.connect(self.say)
        self._tab_actions += self.payloads.actions
        self.damage = DamageActions(self, self.settings, self.current_tab, self.open_file, file_menu, view_menu,
                                    after=self.cancel_action)
        self.damage.message.connect(self.say)
        self._tab_actions += self.damage.actions
        self.tabs.currentChanged.connect(self.damage.current_changed)
        self.edit_actions = EditActions(self, self.tabs, self.settings, self.current_tab, file_menu, edit_menu,
                                        view_menu, before=self.close_action)
        self.edit_actions.failed.connect(self.show_error)
        self.edit_actions.message.connect(self.say)
        self.edit_actions.error_cleared.connect(self.clear_error)
        self.edit_actions.saved.connect(self._saved)

    def _make_toolbar(self) -> None:
        """The toolbar of the main actions (View > Toolbar hides it)."""
        qa = self.qa
        self.toolbar = make_toolbar(self, [
            [(self.open_action, "open"), (self.open_url_action, "remote"), (self.edit_actions.save_action, "save")],
            [(self.verify_action, "verify"), (self.cancel_action, "cancel")],
            [(self.goto_action, "goto"), (qa.filter_action, "filter")],
            [(qa.table_action, "table"), (qa.gallery_action, "gallery"), (qa.stats_action, "statistics")],
        ])
        self.view_menu.insertAction(self.fullscreen_action, self.toolbar.toggleViewAction())

    # -- tabs -------------------------------------------------------------
    def current_tab(self) -> FileTab | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, FileTab) else None

    def file_tabs(self) -> list[FileTab]:
        """The open files' tabs (not those of URLs still opening)."""
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, FileTab)]

    def _current_qa(self) -> TabQa | None:
        tab = self.current_tab()
        return tab.qa if tab is not None else None

    def _tab_call(self, fn) -> None:
        tab = self.current_tab()
        if tab is not None:
            fn(tab)

    def open_files(self, paths: list[str]) -> list[FileTab]:
        """Open each path in a tab; failures are listed together in the message bar."""
        opened, errors = [], []
        self.messages.action_started()
        for path in paths:
            if is_report_name(path):  # a run report: read on a worker, says so itself if it fails
                self.reports.open_report(path)
                continue
            if is_url(path):  # opens on a worker; says so itself if it fails
                self.open_url(path)
                continue
            tab, error = self._open_one(path)
            if tab is not None:
                opened.append(tab)
            else:
                errors.append(error)
        if errors:
            self.show_open_error("\n".join(errors))
        return opened

    def open_file(self, path: str) -> FileTab | None:
        """Open ``path`` in a new tab (or switch to it); None with a message on failure.

        A URL opens on a worker (see :meth:`open_url`): None here, its tab comes later.
        """
        if is_url(path):
            self.open_url(path)
            return None
        self.messages.action_started()
        tab, error = self._open_one(path)
        if error:
            self.show_open_error(error)
        return tab

    def _open_one(self, path: str) -> tuple[FileTab | None, str | None]:
        """A file in its tab; a folder or a glob pattern as one shard set."""
        path = os.path.abspath(os.path.expanduser(path))
        if opens_as_set(path):
            return self._open_set([path])
        for tab in self.file_tabs():
            if os.path.abspath(tab.path) == path:
                self.tabs.setCurrentWidget(tab)
                return tab, None
        try:
            tab = opening.open_file_tab(path, self.settings, self)
        except (TFRecordError, OSError, ValueError) as exc:
            return None, str(exc).splitlines()[0] if str(exc) else f"cannot open {path}"
        self._add_tab(tab, path)
        if tab.open_note:
            self.show_error(tab.open_note, tab)
        return tab, None

    def open_set(self, paths: list[str]) -> FileTab | None:
        """Open files, a folder or a glob as one dataset in one tab; None with a message on failure.

        URLs open on a worker (see :meth:`open_url`): None here, the tab comes later.
        """
        if any(is_url(p) for p in paths):
            self._open_remote(list(paths), as_set=True)
            return None
        self.messages.action_started()
        tab, error = self._open_set([os.path.abspath(os.path.expanduser(p)) for p in paths])
        if error:
            self.show_open_error(error)
        return tab

    def _open_set(self, paths: list[str]) -> tuple[FileTab | None, str | None]:
        for tab in self.file_tabs():
            if tab.is_set and (tab.path == paths[0] if len(paths) == 1 else
                                                 [s.path for s in tab.shard_set.shards] == paths):
                self.tabs.setCurrentWidget(tab)
                return tab, None
        try:
            tab = ShardSetTab.open_set(paths, self.settings, self)
        except (TFRecordError, OSError, ValueError) as exc:
            return None, str(exc).splitlines()[0] if str(exc) else f"cannot open {paths[0]}"
        tab.unusable.connect(lambda text, t=tab: self.show_error(text, t))
        return self._add_tab(tab, paths[0], recent=len(paths) == 1), None

    def _add_tab(self, tab: FileTab, path: str, *, recent: bool = True, at: int = -1) -> FileTab:
        """Wire a new tab in (at index ``at``, else last), show it and start indexing it."""
        tab.state_changed.connect(self._refresh_status)
        tab.message.connect(lambda text, t=tab: self.say(text, t))
        tab.format_note.connect(lambda text, t=tab: self.show_error(text, t))  # (the tab's message bar)
        tab.qa.filter_bar.runner.started.connect(lambda t=tab: self.messages.action_started(t))  # a new filter
        self.damage.tab_opened(tab)
        self.edit_actions.tab_opened(tab)
        tab.reopened.connect(self.disk_watch.refresh)  # saved as another file: watch that one
        tab.reopened.connect(lambda t=tab: self.tabs.setTabIcon(self.tabs.indexOf(t), self._tab_icon(t.path)))
        index = self.tabs.insertTab(at, tab, self._tab_icon(path), tab.title)
        self.tabs.setTabToolTip(index, shown_path(path))
        self.tabs.setCurrentIndex(index)
        if recent:
            self.recent.add(path)
        self.disk_watch.refresh()
        tab.start()
        tab.table.setFocus()
        if is_log(tab.session.source):  # a TensorBoard log: its plots are what it is opened for
            self.qa.show_scalars()
        return tab

    # -- URLs -------------------------------------------------------------------
    def open_url(self, url: str) -> UrlOpening | None:
        """Open a URL (a file, or a glob or prefix as one dataset) on a worker, its tab showing
        "Opening…" with Cancel meanwhile; None when it is open already (its tab is shown)."""
        return self._open_remote([url.strip()], as_set=opens_as_set(url.strip()))

    def open_url_dialog(self) -> UrlOpening | None:
        url = url_dialogs.ask_url(self, self.settings.recent_urls())
        return self.open_url(url) if url else None

    def _open_remote(self, urls: list[str], *, as_set: bool) -> UrlOpening | None:
        self.messages.action_started()  # the last URL's error goes
        for tab in self.file_tabs():
            shown = [s.path for s in tab.shard_set.shards] if tab.is_set and len(urls) > 1 \
                else [tab.path]
            if shown == urls and tab.is_set == as_set:
                self.tabs.setCurrentWidget(tab)
                return None
        opening = self.openings.find(urls)
        if opening is not None:
            self.tabs.setCurrentWidget(opening.page)
            return opening
        return self.openings.start(urls, as_set)

    def _url_tab_ready(self, tab: FileTab, url: str, recent: bool, index: int) -> None:
        if tab.is_set:
            tab.unusable.connect(lambda text, t=tab: self.show_error(text, t))
        self._add_tab(tab, url, recent=recent, at=index)
        if tab.open_note and not tab.is_set:  # a set says it with its unusable shards
            self.show_error(tab.open_note, tab)

    def file_info_current(self) -> FileInfoDialog | None:
        """File > File Info…: the current tab's facts, as ``tfrlens-cli info`` says them (non-modal)."""
        tab = self.current_tab()
        if tab is None:
            return None
        dialog = FileInfoDialog(tab.title, file_facts(tab.session.source, tab.dataset), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def open_demo(self) -> FileTab | None:
        return self.open_file(demo_path())

    def open_dialog(self) -> None:
        paths = opening.ask_files(self, self.settings, "Open TFRecord or ArrayRecord Files")
        if paths:
            self.open_files(paths)

    def open_folder_dialog(self) -> None:
        path = opening.ask_folder(self, self.settings)
        if path:
            self.open_set([path])

    def open_set_dialog(self) -> None:
        paths = opening.ask_files(self, self.settings, "Open Files as One Dataset")
        if paths:
            self.open_set(sorted(paths))

    def close_tab(self, index: int) -> None:
        tab = self.tabs.widget(index)
        if self.openings.cancel_page(tab) or self.reports.close_page(tab) or not isinstance(tab, FileTab):
            return
        if not self.edit_actions.confirm_close(tab, lambda: self.close_tab(self.tabs.indexOf(tab))):
            return
        self.checks.tab_closed(tab)
        self.tabs.removeTab(index)
        tab.close_file()
        tab.deleteLater()
        self.disk_watch.refresh()
        self._current_changed()

    def close_current(self) -> None:
        if self.tabs.count():
            self.close_tab(self.tabs.currentIndex())

    def cancel_current(self) -> None:
        """Stop the current tab's pass, or the opening of its URL."""
        if not self.openings.cancel_page(self.tabs.currentWidget()):
            self._tab_call(FileTab.cancel)

    def verify_current(self) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        self.messages.action_started(tab)
        if not tab.verify():
            self.say("busy: wait for indexing to finish, or stop it first", tab)

    # -- go to ------------------------------------------------------------
    def go_to(self, text: str) -> str | None:
        """Go to a record number or byte offset in the current tab; return its message."""
        tab = self.current_tab()
        if tab is None:
            return None
        self.messages.action_started(tab)
        note = tab.go_to(text)
        if note:
            self.say(note, tab)
        return note

    def go_to_dialog(self) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Go to Record")
        dialog.setLabelText(f"Record number (0 to {max(0, tab.model.rowCount() - 1):,}, -1 for the last)\n"
                            "or byte offset (@12345 or 0x3039):")
        dialog.setTextValue(str(max(0, tab.current_record())))
        if dialog.exec():
            self.go_to(dialog.textValue())

    # -- messages: each tab's own (see TabMessages) ---------------------------
    def say(self, text: str, tab: QWidget | None = None) -> None:
        """A note in the status bar from or about ``tab`` (None: the current tab), shown while it is current."""
        self.messages.say(text, tab)

    def show_error(self, text: str, tab: QWidget | None = None) -> None:
        """Something went wrong on ``tab`` (None: the current tab): the message bar, one line per problem,
        shown while that tab is current."""
        self.messages.error(text, tab)

    def show_open_error(self, text: str) -> None:
        """An open that failed (no tab to show it on): shown over every tab until the next action."""
        self.messages.window_error(text)

    def clear_error(self) -> None:
        """Something the user did went right (an edit, a save): the last error no longer applies."""
        self.messages.clear_error()

    # -- switching tabs -------------------------------------------------------
    def select_tab(self, index: int) -> None:
        """Show tab ``index`` as the user asked (Window menu): an action, so an error of no tab's goes."""
        self.messages.action_started()
        self.tabs.setCurrentIndex(index)

    def _tab_clicked(self, index: int) -> None:
        if index >= 0 and index != self.tabs.currentIndex():
            self.messages.action_started()

    @staticmethod
    def _tab_icon(path: str) -> QIcon:
        """A cloud for a tab that reads from the network, a file for the others."""
        return icons.icon("remote" if is_url(path) else "file")

    def _is_remote(self, widget: QWidget) -> bool:
        """The tab reads from the network (a URL's, or a URL still opening)."""
        return is_url(widget.path) if isinstance(widget, FileTab) else self.openings.is_page(widget)

    def _current_changed(self, *_) -> None:
        tab = self.current_tab()
        self.messages.current_changed()
        self.stack.setCurrentWidget(self.tabs if self.tabs.count() else self.start_page)
        for action in self._tab_actions:
            set_enabled(action, tab is not None, "open a file first")
        if tab is None and self.tabs.count():  # a URL opening: Esc and Ctrl+W stop it
            self.cancel_action.setEnabled(True)
            self.close_action.setEnabled(True)
        self.columns_menu.setEnabled(tab is not None)
        if tab is None:
            self.setWindowTitle(APP_NAME)
            self.setWindowFilePath("")
        else:
            self.setWindowTitle(f"{tab.title}[*] — {APP_NAME}")
            self.setWindowFilePath(tab.path)
        self.edit_actions.current_changed(tab)  # its undo stack becomes the active one; the modified mark
        self._refresh_status()

    def _fetched_now(self) -> int | None:
        tab = self.current_tab()
        return None if tab is None else tab.session.fetched

    def _refresh_status(self) -> None:
        tab = self.current_tab()
        sender = self.sender()
        if isinstance(sender, FileTab) and sender is not tab:
            return
        if tab is None:
            self.status.clear()
            self.follow_action.setChecked(False)
            self.resume_action.setEnabled(False)
            return
        s = tab.state()
        set_enabled(self.cancel_action, s.running, "nothing is running")
        set_enabled(self.resume_action, s.resumable, "nothing to resume: indexing was not stopped")
        self._show_follow(s, tab.follow.why_not() or "")
        self.status.show_state(s)

    def _toggle_follow(self, on: bool) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        if on:
            tab.start_follow()
        else:
            tab.stop_follow()
        self._refresh_status()

    def _show_follow(self, s: TabState, why_not: str) -> None:
        """View > Follow: checked while the tab follows its file; enabled where following makes sense."""
        self.follow_action.setChecked(s.following)
        set_enabled(self.follow_action, s.can_follow, why_not)

    def _saved(self, path: str) -> None:
        """A tab was written to ``path``: a recent file now, and the tab's title may have changed."""
        self.recent.add(path)
        self._current_changed()

    def _fill_columns_menu(self) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        tab.fill_column_menu(self.columns_menu)

    def _toggle_full_screen(self) -> None:
        self.setWindowState(self.windowState() ^ Qt.WindowState.WindowFullScreen)

    # -- Qt events --------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.isLocalFile() or is_url(url.toString()) for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [url.toLocalFile() if url.isLocalFile() else url.toString() for url in event.mimeData().urls()
                 if url.isLocalFile() or is_url(url.toString())]
        if paths:
            event.acceptProposedAction()
            self.open_files(paths)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            # The whole window repaints here (every widget in it, each with its calls into
            # Python): workers wait at their next step meanwhile (see app.workers.worker.PaintGate).
            with PAINT_GATE.painting():
                return super().event(event)
        return super().event(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.edit_actions.confirm_quit():  # unsaved changes: Save / Discard / Cancel
            event.ignore()
            return
        self.settings.save_window(self.saveGeometry(), self.saveState())
        self.openings.close()  # waits for network calls under way: they end within the store's timeouts
        self.reports.close()
        self.edit_actions.remote_saves.close()
        while self.tabs.count():
            self.close_tab(0)
        self.settings.sync()
        super().closeEvent(event)

    def sizeHint(self) -> QSize:
        """A first start's size: most of a large screen, at least 1200×780, never more than the screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return QSize(*DEFAULT_SIZE)
        room = screen.availableGeometry().size()
        width = max(DEFAULT_SIZE[0], int(room.width() * SCREEN_SHARE))
        height = max(DEFAULT_SIZE[1], int(room.height() * SCREEN_SHARE))
        return QSize(min(width, room.width()), min(height, room.height()))
