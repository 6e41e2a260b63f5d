"""A dismissable error strip over a tab or the window."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from app.style import icons, palette


class MessageBar(QFrame):
    """A dismissable one-line (or few-line) error strip, with an optional action button."""

    def __init__(self, parent: QWidget | None = None, action: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageBar")
        palette.follow(self, lambda: f"#MessageBar {{ background: {palette.rgba(palette.MESSAGE_BG)}; "
                                     f"border-bottom: 1px solid {palette.rgba(palette.MESSAGE_RULE)}; }}")
        icon = QLabel()
        icon.setPixmap(icons.pixmap("warning", 18))
        self._label = QLabel()
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton(action or "")
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        self.close_button = close
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self._label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self._layout = layout
        self.action_button.setHidden(action is None)
        self.hide()

    def add_button(self, text: str, *, before_action: bool = False) -> QPushButton:
        """Another button: before the action's, or after the last one (before the dismiss cross)."""
        button = QPushButton(text)
        at = self._layout.indexOf(self.action_button if before_action else self.close_button)
        self._layout.insertWidget(at, button, 0, Qt.AlignmentFlag.AlignTop)
        return button

    def show_message(self, text: str) -> None:
        self._label.setText(text)
        self.show()

    def text(self) -> str:
        """The message shown ("" when the bar is hidden)."""
        return "" if self.isHidden() else self._label.text()
