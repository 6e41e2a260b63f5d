"""Dialogs about URLs: File > Open URL… and "replace the object at this URL?".

Open URL takes a URL typed or picked from the recent ones (``s3://``,
``gs://``, ``https://``...). A glob or a prefix (``s3://bucket/train-*``,
``gs://bucket/data/``) opens as one dataset, as a local glob or folder does.
The dialog only checks the text looks like a URL; whether it can be read is
found out when it opens. The ``ask_*`` functions are what tests replace.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QLabel, QMessageBox, QVBoxLayout, QWidget

from app.style import palette
from codec.errors import TFRecordError, UsageError
from codec.storage.remote import is_url
from codec.storage.remote_write import check_writable_url

PROMPT = "URL of a TFRecord file, a glob of shards, or a prefix:"
HINT = ("A file or a dataset: s3://bucket/train.tfrecord, gs://bucket/data/train-*-of-01024, "
        "https://host/x.tfrecord. Credentials come from the environment (AWS/gcloud config).")


def url_problem(text: str) -> str | None:
    """Why ``text`` cannot be opened as a URL, in one line; None when it looks like one."""
    text = text.strip()
    if not text:
        return "type a URL, e.g. s3://bucket/train.tfrecord"
    if not is_url(text):
        return f"not a URL: {text} (a URL starts with a scheme: s3://, gs://, https://...)"
    if not text.split("://", 1)[1].strip("/"):
        return f"{text}: name a bucket or host, and a path"
    return None


def writable_url(url: str) -> str:
    """``url`` when it can be written (a bucket's, not http(s)://); else UsageError, one line, no request."""
    try:
        check_writable_url(url)
    except TFRecordError as exc:
        raise UsageError(str(exc)) from None
    return url


class OpenUrlDialog(QDialog):
    """An editable drop-down: type a URL or pick a recent one (the last used first)."""

    def __init__(self, parent: QWidget | None, recent: Sequence[str], title: str = "Open URL",
                 prompt: str = PROMPT, hint: str = HINT) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.combo = QComboBox()
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.combo.addItems(list(recent))
        self.combo.setCurrentIndex(0 if recent else -1)
        self.combo.lineEdit().setPlaceholderText("s3://bucket/path/train-*.tfrecord")
        self.combo.lineEdit().selectAll()
        self.combo.setMinimumContentsLength(48)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        hint_label = QLabel(hint)
        hint_label.setWordWrap(True)
        hint_label.setStyleSheet(palette.HINT_STYLE)
        self.error_label = QLabel()
        self.error_label.setStyleSheet(palette.ERROR_STYLE)
        self.error_label.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(prompt))
        layout.addWidget(self.combo)
        layout.addWidget(hint_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.combo.editTextChanged.connect(self.check)
        self.check()

    def url(self) -> str:
        return self.combo.currentText().strip()

    def check(self) -> bool:
        """Open stays disabled while the text is no URL; the reason shows once something is typed."""
        problem = url_problem(self.url())
        self.error_label.setText(problem if problem and self.url() else "")
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(problem is None)
        return problem is None

    def accept(self) -> None:
        if self.check():
            super().accept()


def ask_url(parent: QWidget | None, recent: Sequence[str], title: str = "Open URL", prompt: str = PROMPT,
            hint: str = HINT) -> str | None:
    """A URL to open, or None (tests replace this)."""
    dialog = OpenUrlDialog(parent, recent, title, prompt, hint)
    try:
        return dialog.url() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def ask_replace_remote(parent: QWidget | None, url: str) -> bool:
    """True when the user agrees to replace the object at ``url`` (a remote file is never replaced unasked)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Replace Remote File")
    box.setText(f"{url} already exists.")
    box.setInformativeText("Replace it with the edited records? The object is uploaded whole once written; "
                           "until then it stays as it is.")
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Yes).setText("Replace")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    try:
        return box.exec() == QMessageBox.StandardButton.Yes
    finally:
        box.deleteLater()
