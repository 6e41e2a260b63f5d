"""A run report's tab: what ``verify``, ``stats``, ``schema``, ``check`` or ``repair`` wrote with ``--out``,
read-only, in the views the app shows for the same things of an open file.

A header says it is a report and where it was read from. Below it: a check's
findings in the Dataset Check's :class:`~app.views.check_panel.CheckPanel` (its
run controls hidden), statistics in the Statistics panel's tree
(:func:`~app.views.stats_panel.show_stats`), a schema as the Feature Spec's
Python and JSON pages, and verify or repair as a tree of files with their
problems (or dropped records) under them. Double-clicking a file, a problem
or a finding asks for that file at that record: ``open_requested(path,
target)`` with a go-to target (``"12"`` a record, ``"@350"`` a byte offset,
``""`` the file). The view reads nothing itself.
"""
from __future__ import annotations

import json
import os

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTabWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.models.labels import COMPRESSION_TEXT
from app.models.problem_list_model import problem_title
from app.style import icons, palette
from app.views.check_panel import CheckPanel
from app.views.schema_view import CodePage
from app.views.stats_panel import records_text, show_stats, stats_tree
from codec.doctor.report import CHECKS
from codec.format.framing import ProblemKind
from codec.format.problem_text import KIND_WORDS
from codec.ops.reports import RunReport, schema_python

TARGET_ROLE = Qt.ItemDataRole.UserRole + 80  # (path, go-to target) of a row of the files tree
KIND_TITLES = {"verify": "Verify", "stats": "Statistics", "schema": "Feature spec", "check": "Dataset check",
               "repair": "Repair"}
VERIFY_COLUMNS = ("File", "Records", "OK", "Problems", "Compression")
REPAIR_COLUMNS = ("Source", "Kept", "Dropped", "Damaged kept", "Output")
STATUS_WORDS = {k.value: w for k, w in KIND_WORDS.items()}
HINTS = {"check": "double-click a finding to open its first record's file at that record",
         "verify": "double-click a file, or a problem to open its file there",
         "repair": "double-click a file, or a dropped record to open the source file there"}


def report_title(report: RunReport) -> str:
    """The tab's title: ``check.json (report)``."""
    name = os.path.basename(report.path.rstrip("/")) or report.path
    return f"{name} (report)"


def _item(text: str, tip: str | None = None, align_right: bool = False) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if tip:
        item.setToolTip(tip)
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _status_text(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " "))


class RunReportView(QWidget):
    """One report (see the module docstring). ``open_requested(str path, str target)``: open the file a
    report names, at a record (``"12"``), a byte offset (``"@350"``) or its start (``""``);
    ``message(str)``: a note for the status bar."""

    open_requested = Signal(str, str)
    message = Signal(str)

    def __init__(self, report: RunReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report = report
        self.title = report_title(report)
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setText(self._header_html())
        self.header.setToolTip(report.path)
        self.check_panel: CheckPanel | None = None
        self.stats_tree: QTreeView | None = None
        self.files_tree: QTreeView | None = None
        self.python: CodePage | None = None
        self.json: CodePage | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        header = QWidget(self)
        header.setObjectName("reportHeader")
        palette.follow(header, lambda: f"#reportHeader {{ background: {palette.HEADER_BG.name()}; "
                                       f"border-bottom: 1px solid {palette.HEADER_RULE.name()}; }}")
        header_layout = QVBoxLayout(header)
        header_layout.setContentsMargins(10, 6, 10, 6)
        header_layout.addWidget(self.header)
        layout.addWidget(header)
        layout.addWidget(self._body(), 1)

    def _header_html(self) -> str:
        import html

        r = self.report
        summary = "" if r.kind == "check" else f" · {html.escape(r.summary())}"  # the panel says it, in color
        hint = HINTS.get(r.kind, "")
        return (f"<b>{KIND_TITLES[r.kind]} report</b> · read-only{summary}<br>"
                f"<span style='color: {palette.MUTED_COLOR};'>from {html.escape(r.path)} — written by "
                f"<code>tfrlens-cli {r.kind} --out</code>{'; ' + hint if hint else ''}</span>")

    # -- the body per kind --------------------------------------------------------
    def _body(self) -> QWidget:
        kind = self.report.kind
        if kind == "check":
            return self._check_body()
        if kind == "stats":
            return self._stats_body()
        if kind == "schema":
            return self._schema_body()
        return self._files_body()

    def _check_body(self) -> QWidget:
        panel = CheckPanel(tuple(CHECKS), self)
        for widget in (panel.run_button, panel.checks_button, panel.others_button, panel.progress,
                       panel.cancel_button):
            widget.hide()
        for button in panel.findChildren(QToolButton):  # the actions on an open file's table and edits
            if button.defaultAction() in panel.record_actions:
                button.hide()
        panel.set_report(self.report.data, tuple(CHECKS))
        panel.go_requested.connect(self._go_to_finding)
        self.check_panel = panel
        return panel

    def _go_to_finding(self, findings: list) -> None:
        refs = [r for f in findings[:1] for r in f.records]
        if refs:
            self.open_requested.emit(refs[0].path, str(refs[0].index))

    def _stats_body(self) -> QWidget:
        self.stats_tree = stats_tree(self)
        self.stats_tree.setToolTip(records_text(self.report.data))
        show_stats(self.stats_tree, self.report.data)
        return self.stats_tree

    def _schema_body(self) -> QWidget:
        schema = self.report.data
        tabs = QTabWidget(self)
        tabs.setDocumentMode(True)
        self.python = CodePage("Python", tabs)
        self.json = CodePage("JSON", tabs)
        for page in (self.python, self.json):
            page.copied.connect(self.message)
        self.python.set_code(schema_python(schema), "ready to paste into a tf.data input pipeline")
        self.json.set_code(json.dumps(schema, indent=2, ensure_ascii=False) + "\n",
                           "the tfrlens-cli schema --json form, as the report holds it")
        tabs.addTab(self.python, "Python (tf.io)")
        tabs.addTab(self.json, "JSON")
        return tabs

    def _files_body(self) -> QWidget:
        verify = self.report.kind == "verify"
        model = QStandardItemModel(self)
        model.setHorizontalHeaderLabels(list(VERIFY_COLUMNS if verify else REPAIR_COLUMNS))
        for entry in self.report.data:
            model.appendRow(self._verify_rows(entry) if verify else self._repair_rows(entry))
        tree = QTreeView(self)
        tree.setModel(model)
        tree.setAlternatingRowColors(True)
        tree.setUniformRowHeights(True)
        tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        for row in range(model.rowCount()):
            parent = model.index(row, 0)
            for child in range(model.rowCount(parent)):
                tree.setFirstColumnSpanned(child, parent, True)
        tree.expandAll()
        header = tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = tree.fontMetrics()
        em = metrics.horizontalAdvance("M")
        tree.setColumnWidth(0, 30 * em)
        for column in range(1, model.columnCount() - 1):
            tree.setColumnWidth(column, max(7 * em, metrics.horizontalAdvance(model.headerData(column,
                                        Qt.Orientation.Horizontal)) + 3 * em))
        tree.doubleClicked.connect(self._activated)
        self.files_tree = tree
        return tree

    def _file_cells(self, path: str, texts: list[str], bad: bool) -> list[QStandardItem]:
        cells = [_item(os.path.basename(path.rstrip("/")) or path, path)]
        cells += [_item(text, align_right=k < len(texts) - 1) for k, text in enumerate(texts)]
        font = QFont(cells[0].font())
        font.setBold(True)
        cells[0].setFont(font)
        cells[0].setIcon(icons.icon("damaged" if bad else "ok"))
        for cell in cells:
            cell.setData((path, ""), TARGET_ROLE)
        return cells

    def _verify_rows(self, entry) -> list[QStandardItem]:
        shown, total = len(entry.problems), entry.problems_total
        count = f"{total:,}" if shown == total else f"{total:,} ({shown:,} listed)"
        compression = COMPRESSION_TEXT.get(entry.compression, entry.compression)
        cells = self._file_cells(entry.path, [f"{entry.records:,}", f"{entry.ok:,}", count, compression],
                                 bool(total))
        if total:
            cells[3].setForeground(palette.DAMAGED_TEXT)
        for p in entry.problems:
            where = f"record {p.index:,}" if p.index is not None else "no record"
            title = problem_title(p)
            said = p.detail.lower().startswith(title.lower())
            text = f"{where} · offset {p.offset:,} · " + (p.detail if said else f"{title}: {p.detail}")
            child = _item(text, text)
            recovered = p.kind is ProblemKind.LENGTH_CRC and p.index is not None
            child.setIcon(icons.icon("warning" if recovered else "damaged"))
            target = str(p.index) if p.index is not None else f"@{p.offset}"
            child.setData((p.path or entry.path, target), TARGET_ROLE)
            cells[0].appendRow([child] + [_item("") for _ in VERIFY_COLUMNS[1:]])
        if shown < total:
            cells[0].appendRow([_item(f"… {total - shown:,} more not in the report (--max-problems)")] +
                               [_item("") for _ in VERIFY_COLUMNS[1:]])
        return cells

    def _repair_rows(self, entry) -> list[QStandardItem]:
        cells = self._file_cells(entry.source, [f"{entry.kept:,}", f"{len(entry.dropped):,}",
                                                f"{len(entry.included_damaged):,}", entry.output],
                                 bool(entry.dropped or entry.included_damaged))
        cells[4].setToolTip(entry.output)
        cells[4].setForeground(palette.MUTED_TEXT)
        for what, pairs in (("dropped", entry.dropped), ("kept though damaged", entry.included_damaged)):
            for index, status in pairs:
                child = _item(f"record {index:,} {what}: {_status_text(status)}")
                child.setIcon(icons.icon("damaged" if what == "dropped" else "warning"))
                child.setData((entry.source, str(index)), TARGET_ROLE)
                cells[0].appendRow([child] + [_item("") for _ in REPAIR_COLUMNS[1:]])
        return cells

    def _activated(self, index: QModelIndex) -> None:
        target = index.siblingAtColumn(0).data(TARGET_ROLE)
        if target is not None:
            self.open_requested.emit(*target)

    # -- for tests and the shell ----------------------------------------------------
    def files_model(self) -> QStandardItemModel | None:
        return self.files_tree.model() if self.files_tree is not None else None

    def stats_model(self) -> QStandardItemModel | None:
        return self.stats_tree.model() if self.stats_tree is not None else None
