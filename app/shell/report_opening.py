"""File > Open Run Report…: the JSON reports ``tfrlens-cli`` writes with ``--out``, opened in tabs.

A report may sit in a bucket (a run on a cluster wrote it there), so
:class:`ReportOpenings` reads it with :func:`codec.ops.reports.load_report` on
a worker while an :class:`~app.views.opening_page.OpeningPage` holds its tab's
place, then shows it in a :class:`~app.views.run_report_view.RunReportView`.
A file, problem or finding double-clicked there opens that file (when it is on
this machine, or a URL) at that record, through the window's own opening. A
check report's findings show their records side by side as the Dataset Check
does, read on a worker from the files the report names (:class:`ReportRecords`).
"""
from __future__ import annotations

import html
import os
from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QTabWidget, QWidget

from app.dialogs import url_dialogs
from app.models.findings_model import check_title, ref_text
from app.models.settings import Settings
from app.style import icons
from app.views.finding_compare import MAX_COMPARED, ComparedRecord
from app.views.opening_page import OpeningPage
from app.views.run_report_view import RunReportView
from app.workers.worker import GeneratorWorker, call_on_worker, one_line
from codec.decode.decoder import decode_record
from codec.errors import TFRecordError
from codec.ops.reports import JSON_NAMES, RunReport, load_report, local_path
from codec.sources.tfrecord_file import TFRecordFile, open_tfrecord
from codec.storage.remote import is_url

REPORT_FILTERS = "Run reports (*.json *.jsonl *.ndjson);;All files (*)"
URL_PROMPT = "URL of a report written by tfrlens-cli verify, stats, schema, check or repair with --out:"
URL_HINT = "For example gs://bucket/runs/check.json or s3://bucket/verify.jsonl. Credentials come from the " \
           "environment (AWS/gcloud config)."


def is_report_name(path: str) -> bool:
    """Does ``path`` name a JSON report (``.json``, ``.jsonl``, ``.ndjson``) rather than TFRecords?"""
    name = path.split("?", 1)[0] if is_url(path) else path
    return name.lower().endswith(JSON_NAMES)


class _Pending:
    """A report being read: its path, its page, its worker; cancelled ones are dropped when they answer."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.page = OpeningPage(path)
        self.page.note.setText("Reading the run report")
        self.cancelled = False
        self.worker: GeneratorWorker | None = None


class ReportOpenings(QObject):
    """The window's run reports: the File menu's actions, reports being read, and their tabs.

    ``open_file(path)`` and ``open_url(url)`` are the window's (a FileTab, or a UrlOpening whose
    ``opened`` brings the tab). Signals: ``failed(str)`` one line for the message bar,
    ``message(str)`` for the status bar, ``opened(RunReportView)``, ``finished()`` a page or tab
    went or came (the current tab may differ).
    """

    failed = Signal(str)
    message = Signal(str)
    opened = Signal(object)
    finished = Signal()

    def __init__(self, window: QMainWindow, tabs: QTabWidget, settings: Settings, open_file: Callable,
                 open_url: Callable, file_menu: QMenu) -> None:
        super().__init__(window)
        self.window = window
        self.tabs = tabs
        self.settings = settings
        self._open_file = open_file
        self._open_url = open_url
        self.pending: list[_Pending] = []
        self._workers: list[GeneratorWorker] = []  # every worker not known to have ended
        self._records: dict[RunReportView, ReportRecords] = {}
        self.open_action = QAction(icons.icon("verify"), "Open Run &Report…", window)
        self.open_action.setStatusTip("Open the JSON report of a tfrlens-cli run (verify, stats, schema, check, "
                                      "repair with --out)")
        self.open_action.triggered.connect(self.open_dialog)
        self.open_url_action = QAction("Open Run Report from UR&L…", window)
        self.open_url_action.setStatusTip("Open a run's JSON report from s3://, gs://, https://...")
        self.open_url_action.triggered.connect(self.open_url_dialog)
        file_menu.addSeparator()
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_url_action)

    # -- opening --------------------------------------------------------------------
    def views(self) -> list[RunReportView]:
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, RunReportView)]

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open Run Report", self.settings.last_directory(),
                                              REPORT_FILTERS)
        if path:
            self.settings.set_last_directory(os.path.dirname(path))
            self.open_report(path)

    def open_url_dialog(self) -> None:
        url = url_dialogs.ask_url(self.window, [], "Open Run Report from URL", URL_PROMPT, URL_HINT)
        if url:
            self.open_report(url)

    def open_report(self, path: str) -> QWidget:
        """Read the report at ``path`` (a file or URL) on a worker; its tab shows "Opening…" meanwhile.
        Returns that page, or the report's tab when it is open already."""
        path = path.strip() if is_url(path.strip()) else os.path.abspath(os.path.expanduser(path))
        for view in self.views():
            if view.report.path == path:
                self.tabs.setCurrentWidget(view)
                return view
        for pending in self.pending:
            if pending.path == path:
                self.tabs.setCurrentWidget(pending.page)
                return pending.page
        pending = _Pending(path)
        self.pending.append(pending)
        pending.page.cancel_requested.connect(lambda: self._cancel(pending))
        index = self.tabs.addTab(pending.page, icons.icon("verify"), pending.page.title)
        self.tabs.setTabToolTip(index, path)
        self.tabs.setCurrentIndex(index)
        pending.worker = self._call(lambda: load_report(path), lambda report: self._loaded(pending, report),
                                    lambda text: self._failed(pending, text))
        return pending.page

    def _call(self, fn: Callable, done: Callable, failed: Callable) -> GeneratorWorker:
        worker: GeneratorWorker | None = None

        def end(callback: Callable, value) -> None:
            if worker in self._workers:
                self._workers.remove(worker)
            callback(value)

        worker = call_on_worker(fn, self, lambda value: end(done, value), lambda text: end(failed, text))
        self._workers.append(worker)
        return worker

    def _remove_page(self, pending: _Pending) -> int:
        if pending in self.pending:
            self.pending.remove(pending)
        index = self.tabs.indexOf(pending.page)
        if index >= 0:
            self.tabs.removeTab(index)
        pending.page.deleteLater()
        return index

    def _cancel(self, pending: _Pending) -> None:
        """Stop waiting for the report: the page goes now, the answer is dropped when it comes."""
        pending.cancelled = True
        self._remove_page(pending)
        self.finished.emit()

    def _failed(self, pending: _Pending, text: str) -> None:
        if pending.cancelled:
            return
        self._remove_page(pending)
        self.failed.emit(text if pending.path in text else f"cannot open the report {pending.path}: {text}")
        self.finished.emit()

    def _loaded(self, pending: _Pending, report: RunReport) -> None:
        if pending.cancelled:
            return
        index = self._remove_page(pending)
        view = RunReportView(report, self.window)
        view.open_requested.connect(lambda path, target: self.open_named(view, path, target))
        view.message.connect(self.message)
        if view.check_panel is not None:
            self._records[view] = ReportRecords(view, self)
        index = self.tabs.insertTab(index, view, icons.icon("verify"), view.title)
        self.tabs.setTabToolTip(index, f"Run report (read-only): {report.path}")
        self.tabs.setCurrentIndex(index)
        self.opened.emit(view)
        self.finished.emit()

    # -- the files a report names --------------------------------------------------------
    def open_named(self, view: RunReportView, path: str, target: str) -> object:
        """Open a file ``view``'s report names, at ``target`` (a go-to: ``"12"``, ``"@350"``, or ``""``);
        the FileTab (or the UrlOpening of a URL), or None with a message when it is not here."""
        local = local_path(view.report.path, path)
        if local is None:
            self.failed.emit(f"{path} is not on this machine: the report names it, but no such file is here "
                            f"(nor beside the report)")
            return None
        if is_url(local):
            opening = self._open_url(local)
            if opening is not None and target:
                opening.opened.connect(lambda tab: self._go(tab, target))
            return opening
        tab = self._open_file(local)
        if tab is not None and target:
            self._go(tab, target)
        return tab

    def _go(self, tab, target: str) -> None:
        note = tab.go_to(target)
        if note:
            self.message.emit(note)

    # -- closing --------------------------------------------------------------------------
    def close_page(self, widget: QWidget) -> bool:
        """Close ``widget``'s tab if it is a report's (or a report's page while it is read); False if not."""
        for pending in self.pending:
            if widget is pending.page:
                self._cancel(pending)
                return True
        if not isinstance(widget, RunReportView):
            return False
        records = self._records.pop(widget, None)
        if records is not None:
            records.close()
        self.tabs.removeTab(self.tabs.indexOf(widget))
        widget.deleteLater()
        self.finished.emit()
        return True

    def close(self) -> None:
        """Wait for every worker (the window is closing): a thread must end before its objects go."""
        for pending in self.pending:
            pending.cancelled = True
        for records in self._records.values():
            records.close(wait=True)
        for worker in list(self._workers):
            worker.wait()


class ReportRecords(QObject):
    """A check report's finding's records, read on a worker from the files it names (when they are on
    this machine) and shown side by side in the panel's compare pane. One read at a time; a newer
    selection waits for it and replaces any other waiting."""

    def __init__(self, view: RunReportView, openings: ReportOpenings) -> None:
        super().__init__(view)
        self.view = view
        self.panel = view.check_panel
        self._report_path = view.report.path
        self._openings = openings
        self._files: dict[str, TFRecordFile] = {}  # touched only by the one worker running, then by close()
        self._worker: GeneratorWorker | None = None
        self._wanted = None  # the finding to show next
        self._closed = False
        self.panel.compare.clear("Select a finding to compare its records (read from the files the report "
                                 "names, where they are on this machine).")
        self.panel.findings_selected.connect(self._selected)

    def is_reading(self) -> bool:
        return self._worker is not None

    def _selected(self, _findings) -> None:
        if self._closed:
            return
        findings = self.panel.current_findings()
        if len(findings) != 1:
            self._wanted = None
            if self._worker is None:
                self.panel.compare.clear("Select one finding to compare its records." if findings else
                                         "Select a finding to compare its records.")
            return
        self._wanted = findings[0]
        if self._worker is None:
            self._start()

    def _start(self) -> None:
        finding, self._wanted = self._wanted, None
        refs = list(finding.records[:MAX_COMPARED])
        self.panel.compare.clear("reading the records…")
        self._worker = self._openings._call(lambda: [self._read(r) for r in refs],
                                            lambda records: self._done(finding, records),
                                            lambda text: self._done(finding, None, text))

    def _read(self, ref) -> ComparedRecord:
        """One record, on the worker: decoded, or why not."""
        title = ref_text(ref)
        path = local_path(self._report_path, ref.path)
        if path is None:
            return ComparedRecord(title, note="not on this machine")
        if is_url(path):
            return ComparedRecord(title, note="in a remote file: double-click the finding to open it")
        try:
            tfile = self._files.get(path)
            if tfile is None:
                tfile = self._files[path] = open_tfrecord(path)
            return ComparedRecord(title, decode_record(tfile.read(ref.index).data))
        except (TFRecordError, OSError, ValueError, IndexError) as exc:
            return ComparedRecord(title, error=f"cannot read it: {one_line(exc)}")

    def _done(self, finding, records: list | None, error: str = "") -> None:
        self._worker = None
        if self._closed:
            self._close_files()
            return
        if self._wanted is not None:  # the selection moved on meanwhile
            self._start()
            return
        if records is None:
            self.panel.compare.clear(f"cannot read the records: {error}")
            return
        heading = f"<b>{check_title(finding.check)}</b> ({finding.severity}): {html.escape(finding.detail)}"
        self.panel.compare.show_records(heading, records, more=max(0, len(finding.records) - MAX_COMPARED))

    def close(self, wait: bool = False) -> None:
        """Stop showing records and close the files: now, or (not ``wait``) when a read under way ends."""
        self._closed = True
        if self._worker is not None:
            if not wait:
                return
            self._worker.wait()
        self._close_files()

    def _close_files(self) -> None:
        for tfile in self._files.values():
            tfile.close()
        self._files.clear()
