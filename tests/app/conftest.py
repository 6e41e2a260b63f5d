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
