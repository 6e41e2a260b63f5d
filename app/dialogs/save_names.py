"""Where a save goes and how it is compressed: the compression follows the file name until the user
picks one, and a name that says another compression than the one chosen is settled with the user first.

Used by File > Save As, Export and Salvage; readers (TensorFlow among them)
choose the compression by the name, so the two never disagree unasked.
"""
from __future__ import annotations

import inspect
import os
import re
import weakref
from typing import Any, Callable, Sequence

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QMessageBox, QWidget

from app.style import palette
from codec.format.framing import Compression, name_disagrees

COMPRESSED_SUFFIXES = (".gz", ".gzip", ".zz", ".zlib")
NAME_SUFFIX = {Compression.NONE: "", Compression.GZIP: ".gz", Compression.ZLIB: ".zlib"}
COPY_TAG = "-edited"
_EXTENSION = re.compile(r"(\.(tfrecords?|tfrec|tfr)|-\d{5}-of-\d{5})$", re.IGNORECASE)
_EARLIER_COPY = re.compile(re.escape(COPY_TAG) + r"(-\d+)?$")
FOLLOW_HINT = "Compression follows the file name (.gz: GZIP, .zz/.zlib: ZLIB) until you choose one."


def with_compression_suffix(path: str, compression: Compression) -> str:
    """``out.tfrecord`` -> ``out.tfrecord.gz`` for GZIP (any compressed suffix replaced)."""
    lower = path.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return path + NAME_SUFFIX[compression]


def proposed_copy(path: str, exists: Callable[[str], bool] = os.path.exists) -> str:
    """A new name beside ``path`` for Save As: ``NAME-edited.tfrecord`` (``-edited-2``... when taken),
    keeping the extension and the compression suffix; never the path itself."""
    folder, base = os.path.split(path) if "://" not in path else path.rsplit("/", 1)
    lower = base.lower()
    compressed = next((base[-len(s):] for s in COMPRESSED_SUFFIXES if lower.endswith(s)), "")
    stem = base[: len(base) - len(compressed)]
    match = _EXTENSION.search(stem)
    extension = match.group(0) if match else ""
    stem = _EARLIER_COPY.sub("", stem[: len(stem) - len(extension)])
    join = (lambda name: f"{folder}/{name}") if "://" in path else (lambda name: os.path.join(folder, name))
    for n in range(1, 10_000):
        candidate = join(f"{stem}{COPY_TAG}{'' if n == 1 else f'-{n}'}{extension}{compressed}")
        if candidate != path and ("://" in path or not exists(candidate)):  # a bucket is not listed for this: Save As asks before replacing
            return candidate
    return join(f"{stem}{COPY_TAG}{extension}{compressed}")


class CompressionFollower(QObject):
    """Keeps a compression combo (data: "none"/"gzip"/"zlib") in step with a file name field.

    Until the user picks a compression in the combo, the name decides it as
    it is typed. ``note`` (a label) says so, or says that name and choice
    disagree. ``rename(compression) -> str | None`` gives the name a picked
    compression should take (None: keep the name the user typed).
    """

    def __init__(self, path_edit: QLineEdit, combo: QComboBox, note: QLabel | None = None,
                 rename: Callable[[Compression], str | None] | None = None) -> None:
        super().__init__(combo)
        self.path_edit, self.combo, self.note = path_edit, combo, note
        # a dialog's own method, held weakly: no reference cycle keeps a deleted dialog's wrapper alive
        self._rename = weakref.WeakMethod(rename) if inspect.ismethod(rename) else rename
        self.chosen = False  # the user picked a compression: the name no longer decides
        path_edit.textChanged.connect(self._name_changed)
        combo.activated.connect(self._picked)
        self._name_changed(path_edit.text())

    def compression(self) -> Compression:
        return Compression.parse(self.combo.currentData())

    def disagreement(self) -> str | None:
        """One line when the name says another compression than the one chosen."""
        name = self.path_edit.text().strip()
        return name_disagrees(name, self.compression()) if name else None

    def set_compression(self, compression: Compression) -> None:
        index = self.combo.findData(compression.value)
        if index >= 0 and index != self.combo.currentIndex():
            self.combo.setCurrentIndex(index)
        self._update_note()

    def _name_changed(self, text: str) -> None:
        if not self.chosen and text.strip():
            self.set_compression(Compression.for_name(text.strip()))
        self._update_note()

    def _picked(self, *_: Any) -> None:
        self.chosen = True
        rename = self._rename() if isinstance(self._rename, weakref.WeakMethod) else self._rename
        if rename is not None:
            name = rename(self.compression())
            if name is not None and name != self.path_edit.text():
                self.path_edit.setText(name)
        self._update_note()

    def _update_note(self) -> None:
        if self.note is None:
            return
        problem = self.disagreement()
        self.note.setStyleSheet(palette.ERROR_STYLE if problem else palette.HINT_STYLE)
        self.note.setText(problem + ": TensorFlow readers pick the compression by the name" if problem else
                          ("" if self.chosen else FOLLOW_HINT))


def ask_name_mismatch(parent: QWidget | None, path: str, compression: Compression) -> str:
    """"write" (as chosen), "fix" (follow the name, or give the name the suffix) or "cancel"."""
    problem = name_disagrees(path, compression)
    named = Compression.for_name(path)
    fix = f"Add {NAME_SUFFIX[compression]}" if named is Compression.NONE else f"Use {named.value.upper()}"
    return ask_choice(parent, "Name and Compression Disagree", f"{problem}.",
                      "Readers (TensorFlow among them) choose the compression by the name. Write it anyway?",
                      [("write", "Write Anyway", QMessageBox.ButtonRole.AcceptRole),
                       ("fix", fix, QMessageBox.ButtonRole.ActionRole)], default="fix")


def ask_choice(parent: QWidget | None, title: str, text: str, informative: str,
               choices: Sequence[tuple[str, str, QMessageBox.ButtonRole]], default: str) -> str:
    """A warning with a button per (answer, label, role) and Cancel; the answer clicked, "cancel" for Cancel or Esc."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(text)
    box.setInformativeText(informative)
    answers = {}
    for answer, label, role in choices:
        button = box.addButton(label, role)
        answers[button] = answer
        if answer == default:
            box.setDefaultButton(button)
    box.setEscapeButton(box.addButton(QMessageBox.StandardButton.Cancel))
    try:
        box.exec()
        clicked = box.clickedButton()
    finally:
        box.deleteLater()
    return answers.get(clicked, "cancel")


def settle_name(parent: QWidget | None, path: str, compression: Compression) -> tuple[str, Compression] | None:
    """(path, compression) to write after asking about a name that says another compression; None: cancel.

    Plain data is never written under a compressed name (or compressed data
    under a plain one) without the user saying so.
    """
    if name_disagrees(path, compression) is None:
        return path, compression
    answer = ask_name_mismatch(parent, path, compression)
    if answer == "write":
        return path, compression
    if answer != "fix":
        return None
    named = Compression.for_name(path)
    if named is Compression.NONE:
        return with_compression_suffix(path, compression), compression
    return path, named
