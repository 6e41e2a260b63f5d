"""Test-wide setup: Qt offscreen, a private index cache, private settings.

Importable without PySide6 (the codec's tests run with Qt blocked): Qt is only
touched when it is there, and tests marked ``gui`` are skipped when it is not.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.builders import MANIFEST, fixture_path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _qt_available() -> bool:
    try:
        return importlib.util.find_spec("PySide6.QtWidgets") is not None
    except (ImportError, ValueError):
        return False


HAVE_QT = _qt_available()


def pytest_collection_modifyitems(config, items) -> None:
    if HAVE_QT:
        return
    skip = pytest.mark.skip(reason="PySide6 is not importable")
    for item in items:
        if "gui" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> Path:
    """Index caches go to a temporary folder, never to the user's cache."""
    path = tmp_path / "index-cache"
    monkeypatch.setenv("TFRLENS_CACHE_DIR", str(path))
    from codec.index import cache as index_cache

    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)  # the tests' small files are cached too
    return path


@pytest.fixture(autouse=True)
def private_settings(tmp_path) -> Path | None:
    """QSettings (INI, user scope) read and write a temporary folder."""
    if not HAVE_QT:
        yield None
        return
    from PySide6.QtCore import QSettings

    path = tmp_path / "settings"
    path.mkdir()
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))
    yield path


@pytest.fixture(scope="session")
def manifest() -> dict:
    """MANIFEST.json of the reference fixtures written by TensorFlow."""
    return MANIFEST


@pytest.fixture
def fixture_file():
    """``fixture_file("name.tfrecord")`` -> its path as a string."""
    return fixture_path


@pytest.fixture(autouse=True)
def never_block_on_unsaved_prompt(monkeypatch) -> None:
    """A window closed by a test with unsaved edits discards them instead of waiting on a modal prompt."""
    if not HAVE_QT:
        return
    import app.dialogs.edit_dialogs

    monkeypatch.setattr(app.dialogs.edit_dialogs, "ask_unsaved", lambda parent, name: "discard")


@pytest.fixture
def window(qtbot):
    """The real main window, shown (offscreen in CI)."""
    from app.models.settings import Settings
    from app.shell.main_window import MainWindow

    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.resize(1300, 860)
    w.show()
    return w


@pytest.fixture(scope="module")
def s3_endpoint():
    """A moto S3 server on the loopback for one test module (skipped without s3fs, moto and flask)."""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    pytest.importorskip("flask")
    from tests.remote_servers import moto_server

    with moto_server() as endpoint:
        yield endpoint
