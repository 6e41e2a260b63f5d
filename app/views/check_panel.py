"""The Dataset Check panel: run the dataset doctor, browse its findings by check, compare a finding's records.

:class:`CheckPanel` is a view: a bar (Run, which checks, progress, Cancel,
a summary), the findings tree (:class:`~app.models.findings_model.FindingsModel`)
with the actions on the findings selected, and the records of the current
finding side by side (:class:`~app.views.finding_compare.FindingCompare`).
It says what the user asked for through signals; the tab's
:class:`~app.shell.tab_check.TabCheck` runs the check, reads the records and
makes the edits.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QProgressBar,
    QSplitter,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.models.findings_model import FindingsModel, check_title
from app.style import icons, palette
from app.views.action_state import set_enabled
from app.views.finding_compare import FindingCompare

FINDING_SHARE = 0.58  # of the tree's width, for the findings' text beside their records
COMPARE_MIN_WIDTH = 160  # the findings list and the compare, each at least
EXPAND_UP_TO = 50  # a check with at most this many findings is shown open
HINT = ("Look for duplicates, leaks between splits, bad boxes and images, unknown labels, missing features "
        "and unshuffled shards: Run Check.")


class CheckPanel(QWidget):
    """See the module docstring. Signals (each with the findings it is about, a list):
    ``run_requested()``, ``cancel_requested()``, ``findings_selected(list)`` the selection changed
    (:meth:`current_findings` says which to compare), ``show_requested(list)``, ``export_requested(list)``,
    ``delete_duplicates_requested(list)``, ``delete_eval_requested(list)``, ``go_requested(list)`` a finding
    was double-clicked (show its first record in the table)."""

    run_requested = Signal()
    cancel_requested = Signal()
    findings_selected = Signal(object)
    show_requested = Signal(object)
    export_requested = Signal(object)
    delete_duplicates_requested = Signal(object)
    delete_eval_requested = Signal(object)
    go_requested = Signal(object)

    def __init__(self, checks: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checks = checks
        self.model = FindingsModel(self)
        self.summary = QLabel(HINT, self)
        self.summary.setStyleSheet(f"color: {palette.MUTED_COLOR};")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_button = self._button("Run Check", "Run every chosen check over the whole dataset",
                                       self.run_requested.emit)
        self.run_button.setIcon(icons.icon("verify"))
        self.run_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.checks_button = self._button("Checks", "Which checks to run", None)
        self.checks_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.checks_button)
        self.check_actions: dict[str, QAction] = {}
        for check in checks:
            action = menu.addAction(f"{check_title(check)}  ({check})")
            action.setCheckable(True)
            action.setChecked(True)
            self.check_actions[check] = action
        self.checks_button.setMenu(menu)
        self.others_button = self._button("Also Check", "Check other files together with this one (another split: "
                                          "leaks between them are found)", None)
        self.others_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        others = QMenu(self.others_button)
        self.add_files_action = others.addAction("Add Files…")
        self.add_folder_action = others.addAction("Add a Folder…")
        others.addSeparator()
        self.clear_others_action = others.addAction("Only This File")
        self.others_button.setMenu(others)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(14)
        self.cancel_button = self._button("Cancel", "Stop the check (nothing found so far is kept)",
                                          self.cancel_requested.emit)
        self.cancel_button.setIcon(icons.icon("cancel"))
        self.cancel_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)

        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setUniformRowHeights(True)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.doubleClicked.connect(lambda index: self.go_requested.emit(self.model.findings_at(index)))
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._user_sized = self._fitting = False
        header.sectionResized.connect(self._section_resized)
        self.tree.viewport().installEventFilter(self)
        self.tree.selectionModel().selectionChanged.connect(self._selection_changed)
        self.model.modelReset.connect(self._reset)

        self.show_action = self._action("Show These Records", "Filter the table to the records of the selected "
                                        "findings", self.show_requested)
        self.export_action = self._action("Export List…", "Save the selected findings' records as a JSON or CSV "
                                          "list of file and index", self.export_requested)
        self.delete_duplicates_action = self._action(
            "Delete Duplicates", "Delete every record of the selected duplicate findings but the first (one undoable "
            "edit)", self.delete_duplicates_requested)
        self.delete_eval_action = self._action(
            "Delete Eval Side", "Delete the evaluation split's records of the selected leaks (one undoable edit)",
            self.delete_eval_requested)
        self.record_actions = [self.show_action, self.export_action, self.delete_duplicates_action,
                               self.delete_eval_action]
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for action in self.record_actions:
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setAutoRaise(True)
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.compare = FindingCompare(self)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(2)
        left_layout.addWidget(self.tree, 1)
        left_layout.addLayout(buttons)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.compare)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setChildrenCollapsible(False)
        # The records shown set no minimum of their own: without this the divider jumps to make room for
        # each finding's columns; the sizes the user gives stay (restored after every finding shown).
        left.setMinimumWidth(COMPARE_MIN_WIDTH)
        self.compare.setMinimumWidth(COMPARE_MIN_WIDTH)
        self._split_sizes: list[int] | None = None
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_split_sizes", self.splitter.sizes()))
        self.compare.shown.connect(self._keep_split)

        top = QHBoxLayout()
        top.setContentsMargins(8, 4, 4, 2)
        top.setSpacing(6)
        top.addWidget(self.summary, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        top.addWidget(self.others_button)
        top.addWidget(self.checks_button)
        top.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self.set_idle()

    def _button(self, text: str, tip: str, slot) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        if slot is not None:
            button.clicked.connect(lambda *_: slot())
        return button

    def _action(self, text: str, tip: str, signal) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda *_: signal.emit(self.selected_findings()))
        return action

    # -- state ----------------------------------------------------------------
    def chosen_checks(self) -> frozenset[str]:
        """The checks ticked in the Checks menu."""
        return frozenset(c for c, a in self.check_actions.items() if a.isChecked())

    def _show_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        for button in (self.run_button, self.checks_button, self.others_button):
            button.setEnabled(not running)

    def _say(self, text: str, color: str | None = None) -> None:
        self.summary.setText(text)
        self.summary.setStyleSheet(f"color: {color or palette.MUTED_COLOR};")

    def set_idle(self, text: str = HINT) -> None:
        """Nothing found yet (or the findings were dropped): the hint, or why."""
        self._summary = ("", palette.MUTED_COLOR)  # of the findings shown
        self._show_running(False)
        self.model.clear()
        self._say(text)

    def set_waiting(self) -> None:
        self._show_running(True)
        self.model.clear()
        self.progress.setValue(0)
        self._say("waiting for indexing to finish…")

    def set_progress(self, fraction: float, text: str) -> None:
        self._show_running(True)
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self._say(text)

    def set_report(self, report, order: tuple[str, ...]) -> None:
        """Show a finished check's findings."""
        self._show_running(False)
        self.model.set_report(report, order)
        findings = self.model.findings()
        color = palette.OK_COLOR if not findings else (palette.ERROR_COLOR if any(f.severity == "error" for f in findings)
                                               else palette.MUTED_COLOR)
        self._summary = (("✓ " if not findings else "") + self.model.summary(), color)
        self._say(*self._summary)

    def set_stopped(self, text: str) -> None:
        """The run was cancelled or failed: no findings are shown (a part of them would mislead)."""
        self.set_idle(text)
        self._say(text, palette.ERROR_COLOR if text.startswith("check failed") else palette.MUTED_COLOR)

    def set_note(self, text: str) -> None:
        """A remark after the last check's summary (what it did not see...)."""
        summary, color = self._summary
        self._say(f"{summary} · {text}" if summary else text, color)

    def set_action(self, action: QAction, enabled: bool, why_not: str = "") -> None:
        """Enable ``action``, or disable it with ``Name: why_not`` as its tooltip and status tip."""
        set_enabled(action, enabled, why_not)

    # -- the findings -----------------------------------------------------------
    def selected_findings(self) -> list:
        """The findings of the selected rows (a check row: all of its findings), each once, in order."""
        rows = self.tree.selectionModel().selectedRows(0)
        if not rows and self.tree.currentIndex().isValid():
            rows = [self.tree.currentIndex().siblingAtColumn(0)]
        seen, out = set(), []
        for index in sorted(rows, key=lambda i: (i.parent().row(), i.row()) if i.parent().isValid()
                            else (i.row(), -1)):
            for finding in self.model.findings_at(index):
                if id(finding) not in seen:
                    seen.add(id(finding))
                    out.append(finding)
        return out

    def select_finding(self, check: str, k: int = 0) -> bool:
        """Make ``check``'s ``k``-th finding current (``k`` -1: the check's row); False when there is none."""
        index = self.model.check_index(check) if k < 0 else self.model.finding_index(check, k)
        if not index.isValid():
            return False
        self.tree.setCurrentIndex(index)
        self.tree.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                          | QItemSelectionModel.SelectionFlag.Rows)
        self.tree.scrollTo(index)
        return True

    def _reset(self) -> None:
        for row in range(self.model.rowCount()):
            index = self.model.index(row, 0)
            self.tree.setExpanded(index, self.model.rowCount(index) <= EXPAND_UP_TO)
        self._fit_columns()
        self.compare.clear()
        self.findings_selected.emit([])

    def _keep_split(self) -> None:
        """Put the list/compare divider back where the user left it, whatever the finding shown needs."""
        if self._split_sizes is not None and self.splitter.sizes() != self._split_sizes:
            self.splitter.setSizes(self._split_sizes)

    def current_findings(self) -> list:
        """The current row's finding, or every finding of the current check row."""
        return self.model.findings_at(self.tree.currentIndex())

    def _selection_changed(self, *_) -> None:
        self.findings_selected.emit(self.selected_findings())

    def _fit_columns(self) -> None:
        """The findings' text takes FINDING_SHARE of the tree's width (until the user sizes the columns)."""
        width = self.tree.viewport().width()
        if width > 200 and not self._user_sized:
            self._fitting = True
            self.tree.setColumnWidth(0, int(width * FINDING_SHARE))
            self._fitting = False

    def _section_resized(self, logical: int, _old: int, _new: int) -> None:
        if logical == 0 and not self._fitting:
            self._user_sized = True

    def eventFilter(self, watched, event) -> bool:
        if watched is self.tree.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def _context_menu(self, pos: QPoint) -> None:
        if not self.tree.indexAt(pos).isValid():
            return
        menu = QMenu(self)
        for action in self.record_actions:
            menu.addAction(action)
        menu.exec(self.tree.viewport().mapToGlobal(pos))
        menu.deleteLater()
