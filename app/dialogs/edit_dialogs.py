"""Dialogs that ask for what an edit needs: a value, a list, a new feature, record bytes, a path.

Each ``ask_*`` function opens one dialog and returns the answer, or None
when the user cancels. Tests replace these functions (monkeypatch) instead of
clicking through modal dialogs. Parsing and type checks are the codec's
(:func:`codec.editing.record_editor.parse_value` / :func:`codec.editing.record_editor.parse_values`); a dialog
only keeps OK disabled and shows the codec's message while the input is bad.
"""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any, Sequence

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.save_names import CompressionFollower, ask_choice, settle_name
from app.dialogs.url_dialogs import writable_url
from app.models.value_text import edit_text
from app.style import palette
from codec.decode.decoder import is_text
from codec.editing.record_editor import DTYPES, parse_value, parse_values
from codec.errors import UsageError
from codec.format.framing import Compression
from codec.storage.remote import is_url

SHOWN_BYTES_MAX = 256 << 10  # a file's bytes are shown as hex up to this size, else only counted
LIST_EDIT_MAX = 10_000  # longer lists are not edited as one text
SCOPE_TEXT = {"features": "feature", "context": "context feature", "feature_lists": "feature list"}
COMPRESSIONS = (("none", "None (plain TFRecord)"), ("gzip", "GZIP"), ("zlib", "ZLIB"))


def _mono() -> Any:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _label(style: str) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(style)
    return label


def _list_line(value: Any, dtype: str) -> str:
    """One value of a list as one line of text (bytes with line breaks as hex:)."""
    text = edit_text(value, dtype)
    if dtype == "bytes" and ("\n" in text or "\r" in text):
        return "hex:" + bytes(value).hex()
    return text


def values_text(values: Sequence, dtype: str) -> str:
    """A list as the values box shows it: numbers comma-separated, bytes one per line."""
    if dtype == "bytes":
        return "\n".join(_list_line(v, dtype) for v in values)
    return ", ".join(edit_text(v, dtype) for v in values)


def values_hint(dtype: str | None) -> str:
    if dtype == "bytes":
        return "One value per line: text, or hex:89504e47 / base64:iVBORw== for binary."
    if dtype == "float":
        return "Numbers separated by commas; nan, inf and -inf are allowed."
    return "Whole numbers separated by commas (0x hex allowed)."


class _CheckedDialog(QDialog):
    """OK stays disabled while :meth:`result_value` raises UsageError; the message shows below.

    Nothing is called wrong before the user has typed or pressed OK: an empty form is not an error yet
    (a dialog that proposes a value sets :attr:`touched` to have it checked at once).
    """

    def __init__(self, parent: QWidget | None, title: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.error_label = _label(palette.ERROR_STYLE)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.touched = False  # the user typed or pressed OK: a bad input is said from now on

    def result_value(self) -> Any:
        raise NotImplementedError

    def edited(self, *_: Any) -> None:
        """The user changed the input: check it and say what is wrong."""
        self.touched = True
        self.check()

    def check(self) -> bool:
        try:
            self.result_value()
        except UsageError as exc:
            if self.touched:
                self.error_label.setText(str(exc))
                self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)
            return False
        self.error_label.setText("")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(True)
        return True

    def accept(self) -> None:
        self.touched = True
        if self.check():
            super().accept()


# -- bytes ----------------------------------------------------------------
class BytesEditor(QWidget):
    """Bytes typed as text, hex or base64, or taken from a file."""

    MODES = ("text", "hex", "base64")

    def __init__(self, data: bytes = b"", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = QComboBox()
        self.mode.addItems(["Text (UTF-8)", "Hex", "Base64"])
        self.load_button = QPushButton("Load from File…")
        self.load_button.clicked.connect(self.load_dialog)
        self.edit = QPlainTextEdit()
        self.edit.setFont(_mono())
        self.edit.setTabChangesFocus(True)
        self.info = _label(palette.HINT_STYLE)
        top = QHBoxLayout()
        top.addWidget(QLabel("As:"))
        top.addWidget(self.mode)
        top.addStretch(1)
        top.addWidget(self.load_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.info)
        self._loaded: tuple[str, bytes] | None = None
        self._current = 0
        self.set_bytes(data)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.edit.textChanged.connect(self._text_changed)

    def set_bytes(self, data: bytes) -> None:
        """Show ``data`` as text when it is text, else as hex."""
        index = 0 if (not data or is_text(data)) else 1
        self._loaded = None
        self.mode.blockSignals(True)
        self.mode.setCurrentIndex(index)
        self.mode.blockSignals(False)
        self._current = index
        self._show(data, index)

    def _show(self, data: bytes, index: int) -> None:
        self.edit.blockSignals(True)
        if index == 0:
            self.edit.setPlainText(data.decode("utf-8", errors="replace"))
        elif index == 1:
            self.edit.setPlainText(" ".join(data[i:i + 4].hex() for i in range(0, len(data), 4)))
        else:
            self.edit.setPlainText(base64.b64encode(data).decode("ascii"))
        self.edit.blockSignals(False)
        self._update_info()

    def load_file(self, path: str) -> None:
        """Take the whole content of ``path`` (shown as hex when small enough)."""
        with open(path, "rb") as f:
            data = f.read()
        if len(data) <= SHOWN_BYTES_MAX:
            self.set_bytes(data)
        else:
            self.edit.blockSignals(True)
            self.edit.setPlainText("")
            self.edit.blockSignals(False)
        self._loaded = (os.path.basename(path), data)
        self._update_info()

    def load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load Bytes from File")
        if path:
            try:
                self.load_file(path)
            except OSError as exc:
                self.info.setText(f"cannot read {path}: {exc.strerror or exc}")

    def value(self) -> bytes:
        """The bytes as entered; UsageError when the text is not valid in its mode."""
        if self._loaded is not None:
            return self._loaded[1]
        text = self.edit.toPlainText()
        mode = self.MODES[self.mode.currentIndex()]
        if mode == "text":
            return text.encode("utf-8")
        if mode == "hex":
            compact = "".join(text.split())
            return parse_value("hex:" + compact, "bytes")
        return parse_value("base64:" + "".join(text.split()), "bytes")

    def _mode_changed(self, index: int) -> None:
        previous = self._current
        self._current = index
        if self._loaded is not None:
            data = self._loaded[1]
            if len(data) > SHOWN_BYTES_MAX:
                return
        else:
            self.mode.blockSignals(True)
            self.mode.setCurrentIndex(previous)
            try:
                data = self.value()
            except UsageError:
                data = None
            self.mode.setCurrentIndex(index)
            self.mode.blockSignals(False)
            if data is None:
                self._update_info()
                return
        loaded = self._loaded
        self._show(data, index)
        self._loaded = loaded

    def _text_changed(self) -> None:
        self._loaded = None
        self._update_info()

    def _update_info(self) -> None:
        if self._loaded is not None:
            name, data = self._loaded
            shown = "" if len(data) <= SHOWN_BYTES_MAX else " (too large to show)"
            self.info.setText(f"{len(data):,} bytes from {name}{shown}")
            return
        try:
            self.info.setText(f"{len(self.value()):,} bytes")
        except UsageError as exc:
            self.info.setText(str(exc))


class BytesValueDialog(_CheckedDialog):
    def __init__(self, parent: QWidget | None, title: str, data: bytes = b"", note: str = "") -> None:
        super().__init__(parent, title)
        self.editor = BytesEditor(data)
        self.editor.edit.textChanged.connect(self.edited)
        self.editor.mode.currentIndexChanged.connect(self.edited)
        layout = QVBoxLayout(self)
        if note:
            note_label = _label(palette.HINT_STYLE)
            note_label.setText(note)
            layout.addWidget(note_label)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.resize(560, 360)
        self.check()

    def result_value(self) -> bytes:
        return self.editor.value()


class NumberValueDialog(_CheckedDialog):
    def __init__(self, parent: QWidget | None, title: str, dtype: str, current: Any = None) -> None:
        super().__init__(parent, title)
        self.dtype = dtype
        self.line = QLineEdit("" if current is None else edit_text(current, dtype))
        self.line.textChanged.connect(self.edited)
        form = QFormLayout(self)
        form.addRow(f"{dtype} value:", self.line)
        form.addRow(self.error_label)
        form.addRow(self.buttons)
        self.check()

    def result_value(self) -> int | float:
        return parse_value(self.line.text(), self.dtype)


class ValuesDialog(_CheckedDialog):
    """A whole list of values, optionally with its type (and a feature name)."""

    def __init__(self, parent: QWidget | None, title: str, dtype: str | None, values: Sequence = (), *,
                 choose_type: bool = False, name: str | None = None, note: str = "") -> None:
        super().__init__(parent, title)
        self.name = QLineEdit(name or "") if name is not None else None
        self.type = QComboBox()
        self.type.addItems(list(DTYPES))
        self.type.setCurrentText(dtype or "int64")
        self.type.setEnabled(choose_type)
        self.values = QPlainTextEdit(values_text(values, dtype) if dtype else "")
        self.values.setFont(_mono())
        self.values.setTabChangesFocus(True)
        self.hint = _label(palette.HINT_STYLE)
        form = QFormLayout(self)
        if note:
            note_label = _label(palette.HINT_STYLE)
            note_label.setText(note)
            form.addRow(note_label)
        if self.name is not None:
            form.addRow("Name:", self.name)
            self.name.textChanged.connect(self.edited)
        form.addRow("Type:", self.type)
        form.addRow("Values:", self.values)
        form.addRow(self.hint)
        form.addRow(self.error_label)
        form.addRow(self.buttons)
        self.type.currentTextChanged.connect(self._type_changed)
        self.values.textChanged.connect(self.edited)
        self.resize(480, 320)
        self._type_changed()

    def _type_changed(self, *_: Any) -> None:
        self.hint.setText(values_hint(self.type.currentText()))
        self.check()

    def result_value(self) -> tuple[str, list]:
        if self.name is not None and not self.name.text().strip():
            raise UsageError("a feature needs a name")
        dtype = self.type.currentText()
        return dtype, parse_values(self.values.toPlainText(), dtype)


# -- apply to many records ------------------------------------------------
@dataclass(frozen=True)
class BatchEdit:
    """One edit for every selected record: set ``key`` to values, or delete ``key``."""

    action: str  # "set" or "delete"
    key: str
    dtype: str | None = None
    values: tuple = ()


class ApplyToSelectionDialog(_CheckedDialog):
    """``keys``: the features seen in the selection, or a dict of them to their type (chosen with the key)."""

    def __init__(self, parent: QWidget | None, count: int, keys: Sequence[str] | dict[str, str | None]) -> None:
        super().__init__(parent, "Edit Selected Records")
        self._types = dict(keys) if isinstance(keys, dict) else {}
        keys = list(keys)
        self.set_radio = QRadioButton("Set feature")
        self.delete_radio = QRadioButton("Delete feature")
        self.set_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.set_radio)
        group.addButton(self.delete_radio)
        self.key = QComboBox()
        self.key.setEditable(True)
        self.key.addItems(list(keys))
        self.key.setCurrentText(keys[0] if keys else "")
        self.type = QComboBox()
        self.type.addItems(list(DTYPES))
        self.values = QPlainTextEdit()
        self.values.setFont(_mono())
        self.values.setTabChangesFocus(True)
        self.values.setMaximumHeight(90)
        self.hint = _label(palette.HINT_STYLE)
        note = _label(palette.HINT_STYLE)
        note.setText(f"Applies to {count:,} selected record{'s' if count != 1 else ''}, as one undoable step. "
                     "Raw records are skipped; setting replaces the feature where it exists.")
        radios = QHBoxLayout()
        radios.addWidget(self.set_radio)
        radios.addWidget(self.delete_radio)
        radios.addStretch(1)
        form = QFormLayout(self)
        form.addRow(note)
        form.addRow(radios)
        form.addRow("Feature:", self.key)
        form.addRow("Type:", self.type)
        form.addRow("Values:", self.values)
        form.addRow(self.hint)
        form.addRow(self.error_label)
        form.addRow(self.buttons)
        for signal in (self.set_radio.toggled, self.key.currentTextChanged, self.type.currentTextChanged,
                       self.values.textChanged):
            signal.connect(self._changed)
            signal.connect(self.edited)
        self.key.currentTextChanged.connect(self._key_changed)
        self.resize(460, 300)
        self._key_changed(self.key.currentText())
        self._changed()

    def _key_changed(self, key: str) -> None:
        dtype = self._types.get(key.strip())
        if dtype:
            self.type.setCurrentText(dtype)

    def _changed(self, *_: Any) -> None:
        setting = self.set_radio.isChecked()
        self.type.setEnabled(setting)
        self.values.setEnabled(setting)
        self.hint.setText(values_hint(self.type.currentText()) if setting else "")
        self.check()

    def result_value(self) -> BatchEdit:
        key = self.key.currentText().strip()
        if not key:
            raise UsageError("a feature needs a name")
        if self.delete_radio.isChecked():
            return BatchEdit("delete", key)
        dtype = self.type.currentText()
        return BatchEdit("set", key, dtype, tuple(parse_values(self.values.toPlainText(), dtype)))


# -- save as ----------------------------------------------------------------
class SaveAsDialog(_CheckedDialog):
    """A path and a compression; the compression follows the name until chosen (see CompressionFollower)."""

    def __init__(self, parent: QWidget | None, path: str, compression: str) -> None:
        super().__init__(parent, "Save As")
        self.path = QLineEdit(path)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.compression = QComboBox()
        for value, text in COMPRESSIONS:
            self.compression.addItem(text, value)
        self.compression.setCurrentIndex(max(0, [v for v, _ in COMPRESSIONS].index(compression)
                                             if compression in dict(COMPRESSIONS) else 0))
        self.compression_note = _label(palette.HINT_STYLE)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form = QFormLayout(self)
        form.addRow("File:", row)
        form.addRow("Compression:", self.compression)
        form.addRow(self.compression_note)
        form.addRow(self.error_label)
        form.addRow(self.buttons)
        self.follower = CompressionFollower(self.path, self.compression, self.compression_note)
        self.path.textChanged.connect(self.edited)
        self.resize(560, 170)
        self.touched = bool(path)  # a path proposed that cannot be written to is said at once
        self.check()

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save As", self.path.text())
        if path:
            self.path.setText(path)

    def accept(self) -> None:
        if not self.check():
            return
        path, compression = self.result_value()
        settled = settle_name(self, path, Compression.parse(compression))
        if settled is None:
            return
        self.path.setText(settled[0])
        self.follower.set_compression(settled[1])
        super().accept()

    def result_value(self) -> tuple[str, str]:
        path = self.path.text().strip()
        if not path:
            raise UsageError("choose a file to save to")
        if is_url(path):  # written locally, uploaded whole when complete (asked first if it exists)
            return writable_url(path), self.compression.currentData()
        if os.path.isdir(path):
            raise UsageError(f"{path} is a folder")
        return os.path.abspath(os.path.expanduser(path)), self.compression.currentData()


# -- the ask_* entry points (tests replace these) ---------------------------
def _run(dialog: _CheckedDialog) -> Any:
    try:
        return dialog.result_value() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def ask_value(parent: QWidget | None, title: str, dtype: str, current: Any = None) -> Any:
    """One typed value (bytes through the bytes editor), or None."""
    if dtype == "bytes":
        return _run(BytesValueDialog(parent, title, b"" if current is None else bytes(current)))
    return _run(NumberValueDialog(parent, title, dtype, current))


def ask_values(parent: QWidget | None, title: str, dtype: str | None, values: Sequence = (), *,
               choose_type: bool = False) -> tuple[str, list] | None:
    """A list of values (and its type when ``choose_type``), or None."""
    return _run(ValuesDialog(parent, title, dtype, values, choose_type=choose_type))


def ask_new_feature(parent: QWidget | None, scope: str) -> tuple[str, str, list] | None:
    """(name, type, values) of a feature to add in ``scope``, or None."""
    note = "Each value becomes one step of the list." if scope == "feature_lists" else ""
    dialog = ValuesDialog(parent, f"Add {SCOPE_TEXT.get(scope, 'feature').title()}", "int64", (),
                          choose_type=True, name="", note=note)
    answer = _run(dialog)
    if answer is None:
        return None
    return dialog.name.text().strip(), answer[0], answer[1]


def ask_text(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    line = QLineEdit(text)
    line.selectAll()
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    form = QFormLayout(dialog)
    form.addRow(label, line)
    form.addRow(buttons)
    try:
        return line.text() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def ask_record_bytes(parent: QWidget | None, current: bytes) -> bytes | None:
    """New bytes for a whole record (typed as hex or text, or a file's content), or None."""
    return _run(BytesValueDialog(parent, "Replace Record Bytes", current,
                                 note="These bytes replace the whole record (Ctrl+Z takes it back)."))


def ask_batch_edit(parent: QWidget | None, count: int, keys: Sequence[str] | dict[str, str | None]) -> BatchEdit | None:
    return _run(ApplyToSelectionDialog(parent, count, keys))


def ask_save_as(parent: QWidget | None, path: str, compression: str) -> tuple[str, str] | None:
    """(path, compression name) to save to, or None."""
    return _run(SaveAsDialog(parent, path, compression))


def ask_unsaved(parent: QWidget | None, name: str) -> str:
    """"save", "discard" or "cancel" for a file with unsaved changes."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unsaved Changes")
    box.setText(f"{name} has unsaved changes.")
    box.setInformativeText("Save them before closing?")
    box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                           | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    try:
        answer = box.exec()
    finally:
        box.deleteLater()
    return {QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer), "cancel")


def ask_save_over_changed(parent: QWidget | None, name: str, why: str) -> str:
    """"overwrite", "save_as" or "cancel" for a Save over a file that changed (or went) on disk meanwhile."""
    return ask_choice(parent, "File Changed on Disk", f"{name} changed on disk since it was opened.",
                      f"{why[:1].upper()}{why[1:]}.\nOverwrite it with your version, or save yours as another file?",
                      [("overwrite", "Overwrite", QMessageBox.ButtonRole.DestructiveRole),
                       ("save_as", "Save As…", QMessageBox.ButtonRole.AcceptRole)], default="save_as")


def ask_reload_unsaved(parent: QWidget | None, name: str) -> bool:
    """True when the user agrees to drop unsaved edits to show the file as it is on disk now."""
    answer = QMessageBox.question(parent, "Reload", f"{name} has unsaved changes.\n"
                                  "Reload it from disk and discard them?",
                                  QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
                                  QMessageBox.StandardButton.Cancel)
    return answer == QMessageBox.StandardButton.Discard
