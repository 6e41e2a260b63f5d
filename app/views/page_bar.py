"""The page bar over the table and the gallery: which records the window shows, Previous and Next.

A view can hold only so many rows (see :mod:`app.models.filtered_table_model`);
when the matching records are more, the rows are a window over them and this
bar says which ("Records 1,000 – 1,999 of 2,500") and steps the window a page
at a time. It is hidden while the window holds every matching record.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStyle, QToolButton, QWidget

from app.models.filtered_table_model import FilteredTableModel


class PageBar(QWidget):
    """The window's place among the matching records; ``step_requested(-1 | +1)`` from Previous / Next."""

    step_requested = Signal(int)

    def __init__(self, rows: FilteredTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self.label = QLabel(self)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.previous_button = QToolButton(self)
        self.previous_button.setText("Previous")
        self.previous_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowBack))
        self.next_button = QToolButton(self)
        self.next_button.setText("Next")
        self.next_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowForward))
        for button in (self.previous_button, self.next_button):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setAutoRaise(True)
        self.previous_button.clicked.connect(lambda: self.step_requested.emit(-1))
        self.next_button.clicked.connect(lambda: self.step_requested.emit(1))

        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.previous_button)
        layout.addWidget(self.next_button)
        rows.window_changed.connect(self.refresh)
        rows.counts_changed.connect(self.refresh)
        self.refresh()

    def text(self) -> str:
        return self.label.text()

    def refresh(self) -> None:
        rows = self._rows
        paged = rows.is_paged()
        self.setVisible(paged)
        if not paged:
            return
        start, count, total = rows.window_start, rows.rowCount(), rows.matching_count()
        end = start + max(count, 1) - 1
        if rows.is_filtered:
            text = (f"Matches {start:,} – {end:,} of {total:,} · records {rows.matching_record(start):,} – "
                    f"{rows.matching_record(end):,}")
        else:
            text = f"Records {start:,} – {end:,} of {total:,}"
        self.label.setText(text)
        step = rows.window_rows
        self.setToolTip(f"The table shows at most {step:,} rows at a time; Previous and Next show the "
                        f"{step:,} before or after them, Go to Record (Ctrl+G) any record")
        self.previous_button.setEnabled(start > 0)
        self.next_button.setEnabled(start + count < total)
        self.previous_button.setToolTip(f"Show the {min(step, start):,} records before these")
        self.next_button.setToolTip(f"Show the {min(step, total - start - count):,} records after these")
