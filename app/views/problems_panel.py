"""The Problems panel: every piece of damage the codec found in the open file.

:class:`ProblemsPanel` shows a :class:`~app.models.problem_list_model.ProblemListModel`
with a one-line summary and says which problem the user picked; what that
selects elsewhere is decided by :mod:`app.shell.corruption_tools`.
"""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.models.problem_list_model import ProblemColumn, ProblemListModel, problems_summary
from app.models.record_format import container_of
from app.style import palette
from codec.format.framing import Problem

DETAIL_HINT = "Pick a problem to read what happened there."


class ProblemsTable(QTableView):
    """The panel's table: whole rows, compact, read-only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        vh = self.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.horizontalHeader()
        hh.setStretchLastSection(True)
        hh.setHighlightSections(False)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._press_changed_row = False

    def mousePressEvent(self, event) -> None:
        before = self.currentIndex().row()
        super().mousePressEvent(event)
        self._press_changed_row = self.currentIndex().row() != before

    def take_press_changed_row(self) -> bool:
        """Did the last mouse press change the current row (already announced)? Resets."""
        changed, self._press_changed_row = self._press_changed_row, False
        return changed


class ProblemsPanel(QWidget):
    """A titled table of problems.

    ``problem_activated(Problem)`` when the user picks one (click, keys, Enter);
    ``salvage_requested()`` from the Salvage button; ``close_requested()``
    from the ✕ button.
    """

    problem_activated = Signal(object)
    salvage_requested = Signal()
    close_requested = Signal()

    def __init__(self, model: ProblemListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._quiet = False
        self._note = ""
        self.title = QLabel("<b>Problems</b>", self)
        self.summary = QLabel(self)
        palette.follow(self.summary, lambda: palette.HINT_STYLE)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.salvage_button = QPushButton("Salvage Intact Records…", self)
        self.salvage_button.setToolTip("Write a clean copy with every record that can be trusted")
        self.salvage_button.clicked.connect(self.salvage_requested)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Hide the Problems panel (View > Problems Panel shows it again)")
        self.close_button.clicked.connect(self.close_requested)

        self.table = ProblemsTable(self)
        self.table.setModel(model)
        # Expected and Found have columns; the problem's whole sentence (which says them too, and how
        # the numbering goes on) shows under the table for the current row, wrapped, not cut in a cell.
        self.table.setColumnHidden(ProblemColumn.DETAIL, True)
        self.detail = QLabel(self)
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setContentsMargins(8, 3, 8, 3)
        self.detail.hide()
        palette.changes.changed.connect(self._show_current_detail)  # the hint's colour
        self._size_columns()
        self._show_compressed_column()
        model.modelReset.connect(self._show_compressed_column)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.clicked.connect(self._clicked)
        model.modelReset.connect(self._update_summary)
        model.modelReset.connect(self._show_current_detail)
        model.rowsInserted.connect(self._show_current_detail)
        model.rowsInserted.connect(self._update_summary)

        top = QHBoxLayout()
        top.setContentsMargins(8, 4, 4, 2)
        top.setSpacing(8)
        top.addWidget(self.title)
        top.addWidget(self.summary, 1)
        top.addWidget(self.salvage_button)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        self._update_summary()

    def _size_columns(self) -> None:
        fm = self.table.fontMetrics()
        samples = {ProblemColumn.RECORD: "Record 8,888", ProblemColumn.OFFSET: "8,888,888,888",
                   ProblemColumn.COMPRESSED: "Compressed at 8,888",
                   ProblemColumn.KIND: "length CRC, 88,888 bytes skipped",
                   ProblemColumn.EXPECTED: "888 bytes (888 data + CRC)", ProblemColumn.FOUND: "computed 0x88888888"}
        for col, sample in samples.items():
            extra = 30 if col == ProblemColumn.KIND else 16
            self.table.setColumnWidth(col, fm.horizontalAdvance(sample) + extra)

    def _show_compressed_column(self) -> None:
        self.table.setColumnHidden(ProblemColumn.COMPRESSED, not self.model.compressed)

    def set_note(self, note: str) -> None:
        """A few words after the summary (how far checking has come)."""
        if note != self._note:
            self._note = note
            self._update_summary()

    def _update_summary(self, *_) -> None:
        text = problems_summary(self.model.problems(), container_of(self.model.records))
        self.summary.setText(f"{text} · {self._note}" if self._note else text)

    def select_problem(self, problem: Problem) -> None:
        """Make ``problem``'s row current without announcing it (the caller is showing it)."""
        row = self.model.row_of(problem)
        if row < 0:
            return
        self._quiet = True
        try:
            self.table.selectRow(row)
        finally:
            self._quiet = False
        self.table.scrollTo(self.model.index(row, 0))

    def _show_detail(self, row: int) -> None:
        text = self.model.index(row, ProblemColumn.DETAIL).data() if row >= 0 else None
        self.detail.setText(text or DETAIL_HINT)
        self.detail.setStyleSheet("" if text else palette.HINT_STYLE)
        self.detail.setVisible(self.model.rowCount() > 0)

    def _show_current_detail(self, *_) -> None:
        self._show_detail(self.table.currentIndex().row())

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._show_detail(current.row() if current.isValid() else -1)
        if current.isValid() and not self._quiet:
            self.problem_activated.emit(self.model.problem(current.row()))

    def _clicked(self, index: QModelIndex) -> None:
        # a click on the row that was already current shows it again (the user may have moved away)
        if index.isValid() and not self.table.take_press_changed_row():
            self.problem_activated.emit(self.model.problem(index.row()))
