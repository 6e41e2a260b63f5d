"""Helpers shared by the GUI tests: open a file in the real window and wait for its passes."""
from __future__ import annotations

import os

from tests.builders import FIXTURES


def wait_done(qtbot, tab, timeout: int = 30000):
    """Wait until the tab's worker has ended (indexing, then verifying small files)."""
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase in ("done", "failed", "cancelled"),
                    timeout=timeout)
    return tab


def open_done(window, qtbot, name_or_path: str, timeout: int = 30000):
    """Open a fixture (by name) or any path in ``window`` and wait until its passes end."""
    path = name_or_path if os.path.isabs(name_or_path) else os.fspath(FIXTURES / name_or_path)
    tab = window.open_file(path)
    assert tab is not None, window.message_bar.text()
    return wait_done(qtbot, tab, timeout)


def open_remote(window, qtbot, url: str, timeout: int = 30000):
    """Open ``url`` in ``window`` (on a worker) and wait until its tab's passes end."""
    opening = window.open_url(url)
    assert opening is not None
    with qtbot.waitSignal(opening.opened, timeout=timeout) as opened:
        pass
    return wait_done(qtbot, opened.args[0], timeout)


def select_decoded(qtbot, tab, record: int, view, tab_index: int, timeout: int = 20000):
    """Select ``record`` in ``tab``, wait until the detail has it and ``view`` (a detail tab decoding on a
    worker) is no longer pending, then show that tab; ``(tab, view)``."""
    detail = tab.detail
    tab.select_record(record)
    qtbot.waitUntil(lambda: detail.current_record() == record and detail.loaded() is not None
                    and not view.pending(), timeout=timeout)
    detail.tabs.setCurrentIndex(tab_index)
    return tab, view


def export_with(qtbot, dialog, out, timeout: int = 20000):
    """Run the Export dialog to ``out`` (as if typed there) and wait for it: the report (None when it failed)."""
    dialog._touched = True
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=timeout) as finished:
        assert dialog.start()
    return finished.args[0]
