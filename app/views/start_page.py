"""What the window shows with no file open: open, recent files, the demo."""
from __future__ import annotations

import glob
import os

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.style import icons
from codec.datasets.tfds import dataset_title
from codec.storage.remote import is_url


def display_name(path: str) -> str:
    """A short name for a file: its base name (a TFDS folder's dataset: ``mnist 1.2.0``); a URL's last part
    (the whole URL for a bare bucket)."""
    if not is_url(path):
        return dataset_title(path) or os.path.basename(path) or path
    rest = path.split("://", 1)[1].rstrip("/")
    return rest.rsplit("/", 1)[1] if "/" in rest else path


def human_size(n: int) -> str:
    """``2,475 bytes``, ``24.2 KB``, ``1.3 GB``."""
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


class StartPage(QWidget):
    """The start page. Signals: ``open_requested()`` (show the file dialog),
    ``open_url_requested()`` (the Open URL dialog), ``recent_requested(str)`` (a recent file), ``demo_requested()``."""

    open_requested = Signal()
    open_url_requested = Signal()
    recent_requested = Signal(str)
    demo_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StartPage")

        logo = QLabel()
        logo.setPixmap(icons.pixmap("app", 72))
        title = QLabel("TFRecord Lens")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.9)
        font.setBold(True)
        title.setFont(font)
        subtitle = QLabel("Open a TFRecord file to browse its records, features and images,\n"
                          "and see which records are damaged and why.")
        subtitle.setEnabled(False)  # the palette's muted text colour
        heading = QVBoxLayout()
        heading.addWidget(title)
        heading.addWidget(subtitle)
        top = QHBoxLayout()
        top.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        top.addSpacing(12)
        top.addLayout(heading, 1)

        self.open_button = QPushButton(icons.icon("open"), "  Open a File…")
        self.open_button.setToolTip("Open a .tfrecord file (Ctrl+O); you can also drop files on the window")
        self.url_button = QPushButton(icons.icon("remote"), "  Open a URL…")
        self.url_button.setToolTip("A file or a dataset in a bucket or on a web server: s3://, gs://, https://… "
                                   "(Ctrl+Shift+O)")
        self.demo_button = QPushButton(icons.icon("demo"), "  Open the Demo Dataset")
        self.demo_button.setToolTip("A small file with images, labels, boxes and SequenceExamples")
        for button in (self.open_button, self.url_button, self.demo_button):
            button.setIconSize(QSize(22, 22))
            button.setMinimumHeight(40)
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_requested)
        self.url_button.clicked.connect(self.open_url_requested)
        self.demo_button.clicked.connect(self.demo_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.url_button)
        buttons.addWidget(self.demo_button)
        buttons.addStretch(1)

        recent_label = QLabel("Recent files")
        bold = recent_label.font()
        bold.setBold(True)
        recent_label.setFont(bold)
        self.recent_list = QListWidget()
        self.recent_list.setIconSize(QSize(20, 20))
        self.recent_list.setFrameShape(QFrame.Shape.StyledPanel)
        self.recent_list.setUniformItemSizes(True)
        self.recent_list.setSpacing(2)
        self.recent_list.setToolTip("Double-click or press Enter to open")
        self.recent_list.itemActivated.connect(self._activated)
        self.empty_recent = QLabel("No recent files yet.")
        self.empty_recent.setEnabled(False)

        hint = QLabel("Tip: drop .tfrecord files anywhere on this window · Ctrl+G goes to a record or byte offset")
        hint.setEnabled(False)

        column = QVBoxLayout()
        column.addLayout(top)
        column.addSpacing(20)
        column.addLayout(buttons)
        column.addSpacing(24)
        column.addWidget(recent_label)
        column.addWidget(self.recent_list, 1)
        column.addWidget(self.empty_recent)
        column.addSpacing(8)
        column.addWidget(hint)
        column.addStretch(0)  # takes the room the recent list leaves when hidden
        self._column = column
        box = QWidget()
        box.setLayout(column)
        box.setMaximumWidth(720)

        outer = QHBoxLayout(self)
        outer.setContentsMargins(32, 40, 32, 32)
        outer.addStretch(1)
        outer.addWidget(box, 4)
        outer.addStretch(1)
        self.set_recent([])

    def set_recent(self, paths: list[str]) -> None:
        """Show these files (most recent first); missing ones are listed greyed out."""
        self.recent_list.clear()
        for path in paths:
            if is_url(path):  # not looked up: that is a network round trip
                item = QListWidgetItem(icons.icon("remote"), f"{display_name(path)} · remote\n{path}")
                item.setData(Qt.ItemDataRole.UserRole, path)
                item.setToolTip(path)
                self.recent_list.addItem(item)
                continue
            exists = os.path.isfile(path) or os.path.isdir(path) or bool(glob.glob(path))  # a dataset: folder, glob
            tfds = dataset_title(path) if exists else None
            size = f" · {human_size(os.path.getsize(path))}" if os.path.isfile(path) else \
                (" · TFDS dataset" if tfds else " · dataset" if exists else " · missing")
            item = QListWidgetItem(icons.icon("file"), f"{tfds or os.path.basename(path)}{size}\n"
                                   f"{os.path.dirname(path) if not tfds else os.path.dirname(os.path.dirname(path))}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            if not exists:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.recent_list.addItem(item)
        self.recent_list.setVisible(bool(paths))
        self.empty_recent.setVisible(not paths)
        self._column.setStretch(self._column.count() - 1, 0 if paths else 1)

    def _activated(self, item: QListWidgetItem) -> None:
        self.recent_requested.emit(item.data(Qt.ItemDataRole.UserRole))
