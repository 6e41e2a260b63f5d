"""Opening local paths in tabs, and the window's Open dialogs.

A file, or files, a folder or a glob as one set, is opened by
:func:`codec.sources.open.open_paths`, as the command line opens it, decoding
as chosen for it before (:class:`~app.shell.payload_choice.SettingsChoice`). A
URL opens on a worker through the same function (:mod:`app.shell.url_opening`).
"""
from __future__ import annotations

import os

from PySide6.QtWidgets import QFileDialog, QWidget

from app.models.settings import Settings
from app.shell.file_tab import FileTab
from app.shell.payload_choice import SettingsChoice
from codec.format.names import name_globs
from codec.sources.open import open_paths


def file_filters() -> str:
    """The Open dialog's name filters: TFRecord files first (the default), ArrayRecord files, then all files.

    The names the codec takes for TFRecord files, ``*.record`` (the Object Detection API's habit) and
    TensorBoard's event files (``events.out.tfevents.*``, TFRecord files of Events); ArrayRecord files as
    their writers name them (TFDS: ``name-train.array_record-00000-of-00001``). Any file opens as what its
    bytes are, whatever its name.
    """
    return (f"TFRecord files ({' '.join([*name_globs(), '*.record', '*tfevents*'])});;"
            "ArrayRecord files (*.array_record *.array_record-* *.arrayrecord);;All files (*)")


def open_file_tab(path: str, settings: Settings, parent: QWidget | None = None) -> FileTab:
    """One file in a new tab (raises codec.errors.TFRecordError with a one-line message); its records
    decode as chosen for it before, and :attr:`FileTab.open_note` says when they cannot."""
    chooser = SettingsChoice(settings)
    source = open_paths([path], chooser, as_set=False).source
    try:
        tab = FileTab(source, settings, parent)
    except BaseException:
        source.close()
        raise
    tab.open_note = chooser.note
    return tab


def ask_files(parent: QWidget, settings: Settings, title: str) -> list[str]:
    """Files chosen in a file dialog (none when cancelled); their folder is the next dialog's."""
    paths, _ = QFileDialog.getOpenFileNames(parent, title, settings.last_directory(), file_filters())
    if paths:
        settings.set_last_directory(os.path.dirname(paths[0]))
    return paths


def ask_folder(parent: QWidget, settings: Settings) -> str:
    """A folder chosen to open as one dataset ("" when cancelled)."""
    path = QFileDialog.getExistingDirectory(parent, "Open Folder as Dataset", settings.last_directory())
    if path:
        settings.set_last_directory(path)
    return path
