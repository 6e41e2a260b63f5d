"""A tab's stand-in while its URL opens: what opens, a busy bar, and Cancel.

Opening a remote file asks the store about it and reads its first bytes
(network round trips), so it happens on a worker; this page holds the tab's
place meanwhile and is replaced by the file's tab when it has opened.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.style import icons, palette
from app.views.start_page import display_name
from codec.storage.url_secrets import shown_path


class OpeningPage(QWidget):
    """"Opening URL…" with an endless progress bar; ``cancel_requested()`` when Cancel is clicked."""

    cancel_requested = Signal()

    def __init__(self, url: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.url = url
        self.label = QLabel(f"Opening {shown_path(url)}…")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note = QLabel("Asking the server about the file and reading its first bytes")
        palette.follow(self.note, lambda: palette.HINT_STYLE)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy: there is no fraction to show until the file is open
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(320)
        self.cancel_button = QPushButton(icons.icon("cancel"), "Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addWidget(self.note)
        layout.addLayout(row)
        layout.addStretch(2)

    @property
    def title(self) -> str:
        return display_name(shown_path(self.url))
