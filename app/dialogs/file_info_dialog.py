"""File > File Info…: what ``tfrlens-cli info`` says of the current tab's file or set, in a window.

The facts come from :func:`app.models.file_facts.file_facts` (the codec's words); a warning (an
ArrayRecord ``group_size`` above 1, with its reason) stands out in the theme's warning colour.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from app.models.file_facts import Fact, facts_text
from app.style import palette

WARNING = "warning"


class FileInfoDialog(QDialog):
    """The facts of one source, name by name; Copy puts them on the clipboard as ``info`` prints them."""

    def __init__(self, title: str, facts: list[Fact], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"File Info — {title}")
        self.facts = facts
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.values: dict[str, QLabel] = {}
        for name, value in facts:
            label = QLabel(value)
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if name == WARNING:
                palette.follow(label, lambda: f"color: {palette.WARN_TEXT.name()};")
            self.values.setdefault(name, label)
            form.addRow(QLabel(f"<b>{name}</b>"), label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setToolTip("Copy these lines, as tfrlens-cli info prints them")
        self.copy_button.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)
        self.resize(720, self.sizeHint().height())

    def text(self) -> str:
        return facts_text(self.facts)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
