"""The editing tests' window (unsaved edits discarded on close, edits waited for) and private fixture copies."""
from __future__ import annotations

import os
import shutil

import pytest

from tests.builders import FIXTURES


@pytest.fixture
def window(qtbot):
    from app.models.settings import Settings
    from app.shell.main_window import MainWindow

    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.edit_actions.ask_unsaved = lambda parent, name: "discard"  # a test never blocks on the prompt
    w.show()
    yield w
    for tab in w.file_tabs():
        tab.editing.wait()


@pytest.fixture
def copy(tmp_path):
    """``copy("name.tfrecord")`` -> the path of a private copy of a fixture."""
    def make(name: str) -> str:
        target = tmp_path / os.path.basename(name)
        shutil.copy(FIXTURES / name, target)
        return str(target)
    return make
