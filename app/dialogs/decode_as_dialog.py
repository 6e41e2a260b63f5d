"""File > Decode As…: pick a schema file and one of its message types, with a preview of the current record.

The dialog only chooses: it lists the types a descriptor set (``.desc``,
``.pb``, ``.protoset``) or ``.proto`` source holds (``codec.decode.messages``), shows
how the tab's current record decodes as the type picked (its kind and the
first lines of its JSON, or the one line saying why it does not parse), and
offers "Automatic" to go back to the kind rule. What OK means is
:meth:`DecodeAsDialog.choice`; the caller applies it. Every problem (a file
that is no schema, a ``.proto`` that does not compile, no protoc installed)
shows as one line in the dialog.
"""
from __future__ import annotations

import html
import json
import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.models.labels import kind_text
from app.style import palette
from app.style.elided_label import ElidedLabel
from app.workers.worker import one_line
from codec.decode.decoder import RecordKind, decode_record, record_json_value
from codec.errors import TFRecordError

SCHEMA_FILTERS = ("Protobuf schemas (*.desc *.pb *.protoset *.proto);;"
                  "Descriptor sets (*.desc *.pb *.protoset);;Proto sources (*.proto);;All files (*)")
AUTOMATIC_TEXT = "Automatic (Example / tensor / schema-less)"
PREVIEW_LINES = 14  # of the record's JSON
PREVIEW_LINE_CHARS = 160  # a base64 image field is one very long line
DIALOG_SIZE = (640, 560)  # its width stays as types are chosen: long names elide
PREVIEW_MAX_BYTES = 256 << 10  # larger records are not decoded for a preview (it runs on the GUI thread)


def preview_text(data: bytes | None, payload) -> tuple[str, str]:
    """(headline, body) for a record decoded with ``payload`` (None: the kind rule).

    The headline is the kind (``Message lens.demo.Frame``), or why the record
    does not parse as the payload; the body the first lines of its JSON.
    """
    if data is None:
        return "no record to preview (the file has none yet)", ""
    if len(data) > PREVIEW_MAX_BYTES:
        return f"the record is too large to preview ({len(data):,} bytes)", ""
    decoded = decode_record(data, payload)
    if payload is not None and decoded.kind is RecordKind.RAW:
        return f"does not parse: {decoded.note or 'not this type'}", ""
    headline = kind_text(decoded)
    if decoded.note:
        headline += f" · {decoded.note}"
    try:
        text = json.dumps(record_json_value(decoded), indent=2, ensure_ascii=False)
    except (TFRecordError, ValueError, TypeError) as exc:
        return headline, f"(no JSON view: {one_line(exc)})"
    lines = text.splitlines()
    shown = [line if len(line) <= PREVIEW_LINE_CHARS else line[:PREVIEW_LINE_CHARS - 1] + "…"
             for line in lines[:PREVIEW_LINES]]
    if len(lines) > PREVIEW_LINES:
        shown.append(f"… {len(lines) - PREVIEW_LINES:,} more lines")
    return headline, "\n".join(shown)


class DecodeAsDialog(QDialog):
    """Automatic, or a message type from a schema file (see the module docstring).

    ``record`` is the tab's current record's bytes (for the preview),
    ``current`` the (schema file, type) the tab decodes with now, ``automatic``
    the payload the kind rule stands for (None; a TFDS dataset's own).
    """

    def __init__(self, record: bytes | None, record_number: int, *, current: tuple[str, str] | None = None,
                 automatic=None, folder: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Decode As")
        self._record = record
        self._record_number = record_number
        self._automatic = automatic
        self._folder = folder
        self._schema_path: str | None = None
        self._types: list[str] = []
        self._payload = None  # the loaded message type, when one is picked and loads
        self._error = ""

        self.automatic_button = QRadioButton(AUTOMATIC_TEXT)
        self.message_button = QRadioButton("A message type from a schema file:")
        group = QButtonGroup(self)
        group.addButton(self.automatic_button)
        group.addButton(self.message_button)
        self.automatic_button.setChecked(True)
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText(".desc / .pb / .protoset (protoc --include_imports "
                                          "--descriptor_set_out) or .proto")
        self.path_edit.editingFinished.connect(self._path_edited)
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self.browse)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Type to filter the message types")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._filter_types)
        self.type_list = QListWidget()
        self.type_list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # "lens.demo.…Frame": package and name
        self.type_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.type_list.currentItemChanged.connect(lambda *_: self._type_picked())
        self.type_list.itemDoubleClicked.connect(lambda *_: self.accept())
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)  # one message; a long one (a list of types) wraps
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        # "Record 12 · Message lens.demo.Frame": one line, elided (a long type name must not widen the
        # dialog and move OK from under the pointer), the whole headline in its tooltip
        self.preview_where = QLabel()
        self.preview_where.setTextFormat(Qt.TextFormat.PlainText)
        font = self.preview_where.font()
        font.setBold(True)
        self.preview_where.setFont(font)
        self.preview_title = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.automatic_button.toggled.connect(lambda _on: self._update())

        layout = QVBoxLayout(self)
        layout.addWidget(self.automatic_button)
        layout.addWidget(self.message_button)
        path_row = QHBoxLayout()
        path_row.setContentsMargins(20, 0, 0, 0)
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.browse_button)
        layout.addLayout(path_row)
        types = QVBoxLayout()
        types.setContentsMargins(20, 0, 0, 0)
        types.addWidget(self.filter_edit)
        types.addWidget(self.type_list, 1)
        types.addWidget(self.error_label)
        layout.addLayout(types, 1)
        title = QHBoxLayout()
        title.addWidget(self.preview_where)
        title.addWidget(self.preview_title, 1)
        layout.addLayout(title)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.buttons)
        self.resize(DIALOG_SIZE[0], DIALOG_SIZE[1])

        if current is not None:
            self.load_schema(current[0])
            self.select_type(current[1])
        self._update()

    # -- what the user picks ----------------------------------------------
    def browse(self) -> None:
        folder = os.path.dirname(self._schema_path) if self._schema_path else self._folder
        path, _ = QFileDialog.getOpenFileName(self, "Schema File", folder, SCHEMA_FILTERS)
        if path:
            self.load_schema(path)

    def load_schema(self, path: str) -> bool:
        """List the message types of the schema file at ``path``; False (and one line here) if it has none."""
        from codec.decode.messages import message_types

        path = os.path.abspath(os.path.expanduser(path))
        self.message_button.setChecked(True)
        self.path_edit.setText(path)
        self._schema_path = path
        self._types = []
        self._payload = None
        self.type_list.clear()
        try:
            self._types = message_types(path)
        except (TFRecordError, OSError, ValueError) as exc:
            self._set_error(one_line(exc))
            self._update()
            return False
        self._set_error("")
        for name in self._types:
            self.type_list.addItem(QListWidgetItem(name))
        self._filter_types(self.filter_edit.text())
        if len(self._types) == 1:
            self.type_list.setCurrentRow(0)
        self._update()
        return True

    def select_type(self, name: str) -> bool:
        """Pick message type ``name`` from the list (False when the file does not hold it)."""
        for row in range(self.type_list.count()):
            item = self.type_list.item(row)
            if item.text() == name:
                item.setHidden(False)
                self.type_list.setCurrentItem(item)
                return True
        return False

    def set_automatic(self) -> None:
        self.automatic_button.setChecked(True)

    def types(self) -> list[str]:
        """The message types the chosen schema file holds."""
        return list(self._types)

    def shown_types(self) -> list[str]:
        """The types the filter leaves in the list."""
        return [self.type_list.item(r).text() for r in range(self.type_list.count())
                if not self.type_list.item(r).isHidden()]

    def choice(self) -> tuple[str, str] | None:
        """(schema file, message type) to decode as, or None for Automatic."""
        item = self.type_list.currentItem()
        if self.automatic_button.isChecked() or self._schema_path is None or item is None:
            return None
        return self._schema_path, item.text()

    def is_valid(self) -> bool:
        """OK can be pressed: Automatic, or a type that loads."""
        return self.automatic_button.isChecked() or self._payload is not None

    def error_text(self) -> str:
        return self._error

    def accept(self) -> None:
        if self.is_valid():
            super().accept()

    # -- internals ----------------------------------------------------------
    def _path_edited(self) -> None:
        text = self.path_edit.text().strip()
        if text and os.path.abspath(os.path.expanduser(text)) != self._schema_path:
            self.load_schema(text)

    def _filter_types(self, text: str) -> None:
        words = text.casefold().split()
        for row in range(self.type_list.count()):
            item = self.type_list.item(row)
            name = item.text().casefold()
            item.setHidden(not all(w in name for w in words))
        current = self.type_list.currentItem()
        if current is None or current.isHidden():
            shown = [self.type_list.item(r) for r in range(self.type_list.count())
                     if not self.type_list.item(r).isHidden()]
            if len(shown) == 1:
                self.type_list.setCurrentItem(shown[0])

    def _type_picked(self) -> None:
        from codec.decode.messages import load_message_type

        self._payload = None
        item = self.type_list.currentItem()
        if item is not None and self._schema_path is not None:
            self.message_button.setChecked(True)
            try:
                self._payload = load_message_type(self._schema_path, item.text())
            except (TFRecordError, OSError, ValueError) as exc:
                self._set_error(one_line(exc))
            else:
                self._set_error("")
        self._update()

    def _set_error(self, text: str) -> None:
        self._error = text
        self.error_label.setText(f"<span style='color:{palette.ERROR_COLOR}'>{html.escape(text)}</span>")
        self.error_label.setToolTip(text)
        self.error_label.setVisible(bool(text))

    def _update(self) -> None:
        automatic = self.automatic_button.isChecked()
        for widget in (self.filter_edit, self.type_list):
            widget.setEnabled(not automatic and bool(self._types))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(self.is_valid())
        where = f"Record {self._record_number:,}" if self._record is not None else "Preview"
        if automatic:
            headline, body = preview_text(self._record, self._automatic)
        elif self._payload is None:
            headline = "pick a schema file and a message type" if not self._types else "pick a message type"
            body = ""
        else:
            headline, body = preview_text(self._record, self._payload)
        color = palette.ERROR_COLOR if headline.startswith("does not parse") else palette.MUTED_COLOR
        self.preview_where.setText(f"{where} ·")
        self.preview_title.setText(headline)
        self.preview_title.setStyleSheet(f"color: {color};")
        self.preview.setPlainText(body)
