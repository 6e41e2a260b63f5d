"""Fixtures of the app's tests."""
from __future__ import annotations

import os

import pytest


@pytest.fixture
def tab_parts(qtbot):
    """``tab_parts("name.tfrecord" or a path, start=..., verify=..., editing=...)`` -> a TabParts, closed after the test."""
    from tests.app.tab_parts import TabParts
    from tests.builders import fixture_path

    made = []

    def make(name: str, **options):
        parts = TabParts(qtbot, name if os.path.isabs(name) else fixture_path(name), **options)
        made.append(parts)
        return parts

    yield make
    for parts in made:
        parts.close()


@pytest.fixture(params=[(1024, 700), (1600, 1000)], ids=lambda s: f"{s[0]}x{s[1]}")
def sized_window(request, qtbot):
    """The real main window at 1024×700 and at 1600×1000, shown."""
    from app.models.settings import Settings
    from app.shell.main_window import MainWindow

    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.resize(*request.param)
    w.show()
    qtbot.waitExposed(w)
    return w
