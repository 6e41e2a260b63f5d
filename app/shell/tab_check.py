"""One tab's Dataset Check: runs the codec's doctor over the tab's files and acts on what it finds.

A :class:`TabCheck` owns the tab's :class:`~app.views.check_panel.CheckPanel`.
It runs :func:`codec.doctor.check_iter` over the tab's file (or every shard of
its set) on a :class:`~app.workers.pass_runner.PassRunner`, after the tab's own
index pass; closing the generator (Cancel) stops the codec's workers. A
finding names records as (file, index in that file); :meth:`TabCheck.row_of`
turns one into the tab's record number (a shard's offset in the set, or the
row an unsaved edit moved it to). From there: the records side by side, a
filter of them through the tab's filter bar, a JSON/CSV list of them, and,
where the tab can be edited (one file, not a shard set), deleting duplicates
or the evaluation side of a leak as one undoable command.
"""
from __future__ import annotations

import csv
import html
import io
import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from app.models.commands import DeleteRecords
from app.models.findings_model import check_title, ref_text
from app.models.settings import Settings
from app.views.check_panel import CheckPanel
from app.views.finding_compare import MAX_COMPARED, ComparedRecord
from app.workers.pass_runner import PassRunner
from app.workers.worker import one_line
from codec.decode.decoder import decode_record
from codec.errors import TFRecordError
from codec.sources.tfrecord_file import TFRecordFile, open_tfrecord
from codec.storage.remote import is_url
from codec.storage.writer import OutputFile

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab

DUPLICATE_CHECKS = ("exact_duplicate", "near_duplicate")
LEAK_CHECK = "split_leak"
TRAIN_SPLITS = frozenset({"train", "training"})
EXPORT_FILTERS = "JSON list (*.json);;CSV (*.csv)"
FILTER_EXPRESSION_MAX = 2000  # records shown through a filter expression; more are set as the filter's matches


@lru_cache(maxsize=4096)
def _key(path: str) -> str:
    """A path as compared between the codec's findings and the tab's files."""
    return path if is_url(path) else os.path.normcase(os.path.realpath(os.path.abspath(path)))


def records_list(findings: Sequence, fmt: str) -> bytes:
    """The findings' records, each once: a JSON array of {"path", "index", "check"} or CSV with those columns."""
    rows: dict[tuple[str, int], str] = {}
    for finding in findings:
        for ref in finding.records:
            rows.setdefault((ref.path, ref.index), finding.check)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["path", "index", "check"])
        writer.writerows([path, index, check] for (path, index), check in rows.items())
        return out.getvalue().encode("utf-8")
    items = [{"path": path, "index": index, "check": check} for (path, index), check in rows.items()]
    return (json.dumps(items, indent=1) + "\n").encode("utf-8")


class TabCheck(QObject):
    """The Dataset Check of one tab. ``message(str)``: a note for the status bar; ``failed(str)``: for the
    message bar."""

    message = Signal(str)
    failed = Signal(str)

    def __init__(self, tab: FileTab, settings: Settings, dialog_parent: QWidget) -> None:
        super().__init__(tab)
        from codec.doctor import CHECKS

        self.tab = tab
        self.session = tab.session
        self.settings = settings
        self._dialog_parent = dialog_parent
        self.order = tuple(CHECKS)
        self.report = None
        self.others: list[str] = []  # files checked together with a single file's tab (another split)
        self._other_files: dict[str, TFRecordFile] = {}  # opened to show their records
        self._shards: dict[str, int] | None = None  # a set's shards by path, once asked
        self._closed = False
        self.panel = CheckPanel(self.order)
        self.runner = PassRunner(self._busy, self)
        self.runner.waiting.connect(self.panel.set_waiting)
        self.runner.started.connect(lambda: self.panel.set_progress(0.0, "checking…"))
        self.runner.progress.connect(self._progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        panel = self.panel
        panel.run_requested.connect(self.run)
        panel.cancel_requested.connect(self.cancel)
        panel.findings_selected.connect(self._selected)
        panel.show_requested.connect(self.show_records)
        panel.export_requested.connect(self.export)
        panel.delete_duplicates_requested.connect(self.delete_duplicates)
        panel.delete_eval_requested.connect(self.delete_eval_side)
        panel.go_requested.connect(self.go_to_first)
        panel.others_button.setVisible(not self.session.source.is_set)  # a set checks every shard
        panel.add_files_action.triggered.connect(self._ask_files)
        panel.add_folder_action.triggered.connect(self._ask_folder)
        panel.clear_others_action.triggered.connect(lambda: self.set_others([]))
        self.session.finished.connect(self.runner.source_idle)
        self.session.records_changed.connect(self._records_changed)
        self.session.source_changed.connect(self.refresh_actions)
        self.session.about_to_reopen.connect(self._file_replaced)
        self.tab.editing.changed.connect(self.refresh_actions)
        self.refresh_actions()

    # -- running --------------------------------------------------------------
    def _busy(self) -> bool:
        """The tab's own index pass runs (or has not started): the check starts after it."""
        return self.session.is_running() or self.session.phase == "index"

    def is_running(self) -> bool:
        return self.runner.is_active()

    def paths(self) -> list[str]:
        """The files the check goes over: the tab's file (and the others chosen), or every shard of its set."""
        source = self.session.source
        if source.is_set:
            unusable = {path for path, _ in source.unusable}  # named already
            return [path for path in source.files if path not in unusable]
        return [source.path, *self.others]

    def set_others(self, paths: Sequence[str]) -> None:
        """Check these files or folders together with the tab's file from the next run on."""
        own = _key(self.session.source.path)
        self.others = [p for p in dict.fromkeys(paths) if _key(p) != own]
        n = len(self.others)
        button = self.panel.others_button
        button.setText(f"Also Check ({n:,})" if n else "Also Check")
        button.setToolTip("\n".join(["Checked together with this file:", *self.others]) if n else
                          "Check other files together with this one (another split: leaks between them are found)")
        self.panel.clear_others_action.setEnabled(bool(n))
        if n:
            self.message.emit(f"Run Check to check this file together with {n:,} more "
                              + ("file or folder" if n == 1 else "files or folders"))

    def _ask_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self._dialog_parent, "Check Together With",
                                                self.settings.last_directory())
        if paths:
            self.set_others([*self.others, *paths])

    def _ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self._dialog_parent, "Check Together With",
                                                self.settings.last_directory())
        if path:
            self.set_others([*self.others, path])

    def label_map(self) -> str | None:
        """The label map the tab names classes with (chosen, or found beside the files), if it is a file."""
        chosen = self.settings.label_map(self.tab.path)
        labels = self.session.source.labels
        for path in (chosen, None if labels is None else labels.source):
            if path and not is_url(path) and os.path.isfile(path):
                return path
        return None

    def run(self) -> bool:
        """Check the tab's files (once its index pass is over); False when no check is chosen."""
        from codec.doctor import CheckOptions, check_iter

        checks = self.panel.chosen_checks()
        if not checks:
            self.message.emit("choose at least one check (the Checks menu)")
            return False
        options = CheckOptions(checks=checks, label_map=self.label_map())
        paths = self.paths()
        self.report = None
        self.panel.set_idle()  # the findings of an earlier run go: this one's come when it is over
        self.panel.set_progress(0.0, "starting the check…")
        self.runner.start(lambda: check_iter(paths, options), paths)
        return True

    def cancel(self) -> None:
        """Stop the check: its generator is closed, which stops the codec's workers."""
        self.runner.cancel()

    def _progress(self, p) -> None:
        from codec.doctor import CheckProgress

        if not isinstance(p, CheckProgress):  # the report itself, relayed before it is handed over as the last item
            return
        fraction = p.done / p.total if p.total else 0.0
        self.panel.set_progress(fraction, f"{p.phase}: {p.done:,} of {p.total:,} records…")

    def _finished(self, _paths, last, cancelled: bool) -> None:
        from codec.doctor import CheckReport

        if cancelled or not isinstance(last, CheckReport):
            self.report = None
            self.panel.set_stopped("stopped: nothing is shown of an unfinished check (Run Check to start again)")
            self.message.emit("dataset check stopped")
            return
        self.report = last
        self.panel.set_report(last, self.order)
        if self.session.modified:
            self.panel.set_note("of the file as saved: unsaved edits are not checked")
        self.message.emit(f"dataset check: {self.panel.model.summary()}")
        self.refresh_actions()

    def _failed(self, error: str) -> None:
        self.report = None
        self.panel.set_stopped(f"check failed: {error}")
        self.failed.emit(f"dataset check failed: {error}")

    # -- records ----------------------------------------------------------------
    def row_of(self, ref) -> int | None:
        """The tab's record number of a finding's record now; None when it is not among the tab's records
        (another file, a shard not indexed yet, or deleted by an unsaved edit)."""
        source = self.session.source
        key = _key(ref.path)
        if source.is_set:
            if self._shards is None:
                self._shards = {_key(path): k for k, path in enumerate(source.files)}
            k = self._shards.get(key)
            return None if k is None else source.file_row(k, ref.index)
        if key != _key(source.path) or not 0 <= ref.index < len(source):
            return None
        edited = self.session.edited
        return edited.row_of(ref.index) if edited is not None else ref.index

    def in_tab_file(self, ref) -> bool:
        """The record is in the tab's own file (a single file; a shard set's are all read-only)."""
        source = self.session.source
        return not source.is_set and _key(ref.path) == _key(source.path)

    def rows_of(self, refs: Iterable) -> list[int]:
        return sorted({row for ref in refs if (row := self.row_of(ref)) is not None})

    def compared(self, ref) -> ComparedRecord:
        """One record of a finding, read and decoded for the side-by-side view."""
        row = self.row_of(ref)
        source, records = self.session.source, self.session.records
        title = ref_text(ref)
        if row is not None and (source.is_set or row != ref.index):
            title += f" · record {row:,}"
        labels = records.labels
        try:
            if row is not None:
                data, note = records.read(row).data, None
            elif self.in_tab_file(ref) and 0 <= ref.index < len(source):
                data, note = source.read(ref.index).data, "deleted by an unsaved edit"
            elif not source.is_set:
                data, note = self._other_file(ref.path).read(ref.index).data, "in a file checked with this one"
            else:
                return ComparedRecord(title, note="not among this tab's records", labels=labels)
            return ComparedRecord(title, decode_record(data, records.payload), note=note, labels=labels)
        except (TFRecordError, OSError, ValueError, IndexError) as exc:
            return ComparedRecord(title, error=f"cannot read it: {one_line(exc)}", labels=labels)

    def _other_file(self, path: str) -> TFRecordFile:
        """A file checked together with the tab's, opened and indexed once (its records are read to compare)."""
        tfile = self._other_files.get(path)
        if tfile is None:
            tfile = self._other_files[path] = open_tfrecord(path)
        return tfile

    def show_finding(self, findings: Sequence) -> None:
        """Compare one finding's records side by side (a check's row: a hint to pick one)."""
        compare = self.panel.compare
        if len(findings) != 1:
            compare.clear("Select one finding to compare its records." if findings else
                          "Select a finding to compare its records.")
            return
        finding = findings[0]
        refs = finding.records
        heading = f"<b>{check_title(finding.check)}</b> ({finding.severity}): {html.escape(finding.detail)}"
        compare.show_records(heading, [self.compared(ref) for ref in refs[:MAX_COMPARED]],
                             more=max(0, len(refs) - MAX_COMPARED))

    def _selected(self, findings: list) -> None:
        if self._closed:
            return
        self.refresh_actions()
        self.show_finding(self.panel.current_findings())

    # -- acting on findings -------------------------------------------------------
    def edit_block(self) -> str:
        """Why the tab's records cannot be deleted now ("" when they can)."""
        return self.tab.editing.read_only_reason()

    def refresh_actions(self, *_) -> None:
        """Enable the panel's actions for the selected findings, or say why not in their tooltips."""
        if self._closed:
            return
        panel = self.panel
        findings = panel.selected_findings() if self.report is not None else []
        none = "select findings first" if self.report is not None else "run the check first (Run)"
        shown = bool(findings) and any(self.row_of(r) is not None for f in findings for r in f.records)
        panel.set_action(panel.show_action, shown, none if not findings else "none of these records is in this tab")
        panel.set_action(panel.export_action, bool(findings), none)
        block = self.edit_block()
        dups = not block and bool(self._duplicate_rows(findings))
        panel.set_action(panel.delete_duplicates_action, dups,
                         block or (none if not findings else "no duplicate left to delete among the selected findings"))
        evals = not block and bool(self._eval_rows(findings))
        panel.set_action(panel.delete_eval_action, evals,
                         block or (none if not findings else "no evaluation-split record of a leak in this file "
                                   "among the selected findings"))

    def show_records(self, findings: Sequence) -> bool:
        """Filter the tab's table (and gallery) to the findings' records, through its filter bar."""
        rows = self.rows_of(r for f in findings for r in f.records)
        if not rows:
            self.message.emit("none of these records is in this tab")
            return False
        if len(rows) <= FILTER_EXPRESSION_MAX:  # an expression the user can read, edit and find in the history
            return self.tab.qa.filter_bar.run(f"index in [{', '.join(str(r) for r in rows)}]")
        bar = self.tab.qa.filter_bar
        bar.clear()
        bar.edit.clear()  # no expression says which records these are
        self.tab.proxy.set_matches(rows)  # too many to spell out: the records themselves ("Show All" undoes it)
        self.tab.select_record(rows[0])
        self.message.emit(f"showing the {len(rows):,} records of the findings")
        return True

    def go_to_first(self, findings: Sequence) -> bool:
        """Select the first of the findings' records that the tab shows, in its table and record detail."""
        row = next((row for f in findings[:1] for r in f.records if (row := self.row_of(r)) is not None), None)
        if row is None:
            self.message.emit("none of these records is in this tab")
            return False
        self.tab.select_record(row)
        return True

    def export(self, findings: Sequence) -> str | None:
        """Ask where, then save the findings' records as a list; the path written, or None."""
        if not findings:
            return None
        folder = self.settings.last_output_directory() or self.settings.last_directory()
        name = "check-" + (findings[0].check if len({f.check for f in findings}) == 1 else "findings") + ".json"
        path, chosen = QFileDialog.getSaveFileName(self._dialog_parent, "Export Records List",
                                                   os.path.join(folder, name), EXPORT_FILTERS)
        if not path:
            return None
        fmt = "csv" if path.lower().endswith(".csv") or (chosen.startswith("CSV") and
                                                         not path.lower().endswith(".json")) else "json"
        return path if self.export_to(findings, path, fmt) else None

    def export_to(self, findings: Sequence, path: str, fmt: str = "json") -> bool:
        """Write the findings' records to ``path`` (``fmt`` "json" or "csv"), safely (temp file, rename)."""
        try:
            with OutputFile(path) as out:
                out.write(records_list(findings, fmt))
        except (TFRecordError, OSError) as exc:
            self.failed.emit(f"cannot export the list: {one_line(exc)}")
            return False
        if not is_url(path):
            self.settings.add_output_directory(os.path.dirname(os.path.abspath(path)))
        n = len({(r.path, r.index) for f in findings for r in f.records})
        self.message.emit(f"exported {n:,} record" + ("" if n == 1 else "s") + f" to {path}")
        return True

    def _duplicate_rows(self, findings: Sequence) -> list[int]:
        """The rows "Delete Duplicates" deletes: each duplicate finding's records in this file but its first
        (the first one still there)."""
        rows: set[int] = set()
        for finding in findings:
            if finding.check not in DUPLICATE_CHECKS:
                continue
            present = [(ref, self.row_of(ref)) for ref in finding.records]
            present = [(ref, row) for ref, row in present if row is not None or not self.in_tab_file(ref)]
            rows.update(row for ref, row in present[1:] if row is not None and self.in_tab_file(ref))
        return sorted(rows)

    def eval_side(self, finding) -> list:
        """A leak's records outside the training split (by the shards' names, as the check found the splits);
        when no record is in a training split, those outside the first record's split."""
        from codec.doctor.splits import split_of

        dataset = self.tab.dataset
        splits = [(ref, (split_of(ref.path, dataset=dataset) or "").lower()) for ref in finding.records]
        if any(split in TRAIN_SPLITS for _, split in splits):
            return [ref for ref, split in splits if split not in TRAIN_SPLITS]
        first = splits[0][1] if splits else ""
        return [ref for ref, split in splits if split != first]

    def _eval_rows(self, findings: Sequence) -> list[int]:
        """The rows "Delete Eval Side" deletes: the leaks' records on the evaluation side, in this file."""
        return sorted({row for f in findings if f.check == LEAK_CHECK for ref in self.eval_side(f)
                       if self.in_tab_file(ref) and (row := self.row_of(ref)) is not None})

    def delete_duplicates(self, findings: Sequence) -> bool:
        """Delete every duplicate but the first of each selected duplicate finding: one undoable edit."""
        return self._delete(self._duplicate_rows(findings), "duplicate")

    def delete_eval_side(self, findings: Sequence) -> bool:
        """Delete the evaluation split's records of the selected leaks: one undoable edit."""
        return self._delete(self._eval_rows(findings), "leaked")

    def _delete(self, rows: list[int], what: str) -> bool:
        block = self.edit_block()
        if block:
            self.message.emit(block)
            return False
        if not rows:
            self.message.emit(f"no {what} record to delete in this file")
            return False
        command = DeleteRecords(self.session.target, rows)
        command.setText(f"Delete {len(rows):,} {what} record" + ("" if len(rows) == 1 else "s"))
        self.session.stack.push(command)
        self.message.emit(f"deleted {len(rows):,} {what} record" + ("" if len(rows) == 1 else "s")
                          + " (Undo brings them back)")
        return True

    # -- the tab changing -----------------------------------------------------------
    def _records_changed(self, _change) -> None:
        """An edit, undo or redo: the findings' records have other rows now (or none)."""
        if self._closed or self.report is None:
            return
        self.refresh_actions()
        self.show_finding(self.panel.current_findings())

    def _file_replaced(self) -> None:
        """The tab is about to show another file (saved, or reopened after it changed): the findings' indexes
        are of the old one."""
        if self._closed:
            return
        self.runner.cancel()
        if self.report is not None:
            self.report = None
            self.panel.set_idle("The file was saved or reopened since the check: Run Check again.")
            self.refresh_actions()

    def close(self) -> None:
        """Stop a running check and drop the panel (the tab is closing)."""
        if self._closed:
            return
        self._closed = True
        self.runner.stop()
        for tfile in self._other_files.values():
            tfile.close()
        self._other_files.clear()
        self.panel.compare.clear()
        self.panel.setParent(None)
        self.panel.deleteLater()
