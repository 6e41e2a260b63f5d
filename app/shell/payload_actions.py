"""How a tab's records decode: File > Decode As…, File > Label Map…, and what a file opens with.

Every decision goes through :func:`codec.datasets.payload_choice.choose_for`, as the
command line's do: the schema file and message type the user chose for a file
(else a TFDS dataset the file belongs to, else the kind rule) and the label
map they chose (else a ``label_map.pbtxt`` beside the file). The choices are
remembered per file (:class:`~app.models.settings.Settings`) and used again by
:func:`~app.shell.payload_choice.opening_choice` when the file opens next time.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu

from app.dialogs.decode_as_dialog import DecodeAsDialog
from app.models.settings import Settings
from app.shell.payload_choice import CHOICE_ERRORS
from app.workers.worker import one_line
from codec.datasets.payload_choice import choose_for

if TYPE_CHECKING:
    from app.shell.file_tab import FileTab

LABEL_MAP_FILTERS = "Label maps (*.pbtxt *.prototxt *.textproto *.json *.txt);;All files (*)"


class PayloadActions(QObject):
    """Decode As… and Label Map… in the File menu (before ``before``), for the current tab.

    ``failed(str)``: one line for the message bar; ``message(str)``: a note for
    the status bar. :attr:`dialog` is the Decode As dialog while it is open.
    """

    failed = Signal(str)
    message = Signal(str)

    def __init__(self, window: QMainWindow, settings: Settings, current_tab: Callable[[], FileTab | None],
                 file_menu: QMenu, before: QAction) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._tab = current_tab
        self.dialog: DecodeAsDialog | None = None
        self.decode_as_action = self._action("Decode &As…", self.decode_as_dialog,
                                             "Decode the records as your own protobuf message type")
        self.label_map_action = self._action("&Label Map…", self.label_map_dialog,
                                             "Give class ids their names (label_map.pbtxt, JSON or labels.txt)")
        for action in (self.decode_as_action, self.label_map_action):
            file_menu.insertAction(before, action)
        file_menu.insertSeparator(before)
        self.actions = [self.decode_as_action, self.label_map_action]

    def _action(self, text: str, slot, tip: str) -> QAction:
        action = QAction(text, self.window)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.window.addAction(action)
        return action

    # -- Decode As ------------------------------------------------------------
    def decode_as_dialog(self) -> DecodeAsDialog | None:
        """Open the Decode As dialog for the current tab (window-modal; OK applies the choice)."""
        tab = self._tab()
        if tab is None:
            return None
        if self.dialog is not None:
            self.dialog.deleteLater()
        row = tab.current_record()
        record = None
        if row >= 0:
            try:
                record = tab.session.records.read(row).data
            except CHOICE_ERRORS as exc:
                self.message.emit(f"cannot read record {row:,} for a preview: {one_line(exc)}")
        current = self.settings.decode_as(tab.path)
        if current is not None and not os.path.isfile(current[0]):
            current = None
        folder = os.path.dirname(current[0]) if current else os.path.dirname(tab.path)
        dialog = DecodeAsDialog(record, row, current=current, automatic=self._automatic_payload(tab),
                                folder=folder, parent=self.window)
        dialog.accepted.connect(lambda: self._dialog_accepted(tab, dialog))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _automatic_payload(self, tab: FileTab):
        """What the tab's records decode with when no type is chosen (a TFDS dataset's payload, or None)."""
        try:
            return choose_for([tab.path]).payload
        except CHOICE_ERRORS:
            return None

    def _dialog_accepted(self, tab: FileTab, dialog: DecodeAsDialog) -> None:
        choice = dialog.choice()
        self.decode_as(tab, *(choice if choice is not None else (None, None)))

    def decode_as(self, tab: FileTab, proto: str | None, type_name: str | None) -> bool:
        """Decode ``tab``'s records as ``type_name`` from the schema file ``proto`` (both None: automatically),
        and remember it for the file; False (with one line on ``error``) when the type does not load."""
        try:
            choice = choose_for([tab.path], proto=proto, type_name=type_name, label_map=self._label_map(tab))
        except CHOICE_ERRORS as exc:
            self.failed.emit(f"cannot decode {tab.title} as {type_name}: {one_line(exc)}")
            return False
        tab.session.set_choice(choice)
        self.settings.set_decode_as(tab.path, proto, type_name)
        what = f"as {choice.payload.name}" if choice.payload is not None else "by each record's kind"
        self.message.emit(f"{tab.title}: records decode {what}")
        return True

    # -- label maps -------------------------------------------------------------
    def label_map_dialog(self) -> None:
        tab = self._tab()
        if tab is None:
            return
        chosen = self._label_map(tab)
        folder = os.path.dirname(chosen) if chosen else os.path.dirname(tab.path)
        path, _ = QFileDialog.getOpenFileName(self.window, "Label Map", folder, LABEL_MAP_FILTERS)
        if path:
            self.set_label_map(tab, path)

    def set_label_map(self, tab: FileTab, path: str) -> bool:
        """Name ``tab``'s class ids from the label map at ``path``, and remember it for the file;
        False (with one line on ``error``) when it does not load."""
        decode_as = self.settings.decode_as(tab.path)
        proto, type_name = decode_as if decode_as is not None and os.path.isfile(decode_as[0]) else (None, None)
        try:
            choice = choose_for([tab.path], proto=proto, type_name=type_name, label_map=path)
        except CHOICE_ERRORS as exc:
            self.failed.emit(f"cannot use the label map {os.path.basename(path)}: {one_line(exc)}")
            return False
        tab.session.set_choice(choice)
        self.settings.set_label_map(tab.path, path)
        self.message.emit(f"{tab.title}: class names from {os.path.basename(path)}")
        return True

    def _label_map(self, tab: FileTab) -> str | None:
        """The label map chosen for the tab's file, if it is still there."""
        path = self.settings.label_map(tab.path)
        return path if path is not None and os.path.isfile(path) else None
