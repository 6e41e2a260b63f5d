"""PassRunner without a window: a pass asked while the file's own pass runs waits for that pass
to end (the owner's ``source_idle``), then runs; a new request replaces a waiting one."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtCore")

from app.workers.pass_runner import PassRunner

pytestmark = pytest.mark.gui
TIMEOUT = 10000


def count_to(n: int):
    return lambda: iter(range(1, n + 1))


def test_a_pass_asked_while_the_file_is_busy_starts_when_told_it_is_free(qtbot):
    busy = [True]
    runner = PassRunner(lambda: busy[0])
    started, waited, ended = [], [], []
    runner.started.connect(lambda: started.append(True))
    runner.waiting.connect(lambda: waited.append(True))
    runner.finished.connect(lambda payload, last, cancelled: ended.append((payload, last, cancelled)))
    runner.start(count_to(3), "first")
    runner.start(count_to(5), "second")  # replaces the waiting one; ``waiting`` is said once
    assert waited == [True] and started == []
    busy[0] = False
    with qtbot.waitSignal(runner.finished, timeout=TIMEOUT):
        runner.source_idle()
    assert started == [True] and ended == [("second", 5, False)] and not runner.is_active()


def test_a_waiting_pass_cancelled_ends_at_once_and_never_starts(qtbot):
    runner = PassRunner(lambda: True)
    ended = []
    runner.finished.connect(lambda payload, last, cancelled: ended.append((payload, last, cancelled)))
    runner.start(count_to(3), "stats")
    runner.cancel()
    assert ended == [("stats", None, True)] and not runner.is_active()
    runner.source_idle()
    assert not runner.is_running()
