"""What a tab does for a TensorBoard log: its unfinished last record is a writer at work, not damage.

A training job appends to its event file while it is read, so the file often
ends in a record cut short. Once the tab's pass has ended, a single local event
file ending so is followed (View > Follow on: the record shows as "being written"
and new events come); in a log folder opened as a set, each file ending so is
taken as being written (the set is not followed: open the file itself for that).
"""
from __future__ import annotations

from typing import Callable

from app.shell.session import TabSession
from app.shell.tab_follow import TabFollow
from app.views.scalars_view import is_log
from codec.datasets.event_logs import take_as_being_written, unfinished_tail


def settle_unfinished_tail(session: TabSession, follow: TabFollow, refresh_rows: Callable[[], None]) -> None:
    """After a tab's pass: a log's unfinished last record becomes "being written" (see the module)."""
    source = session.source
    if session.phase != "done" or not is_log(source) or source.is_remote or session.modified:
        return
    if not source.problem_count():
        return
    writing = source.is_set or unfinished_tail(source) is not None
    take_as_being_written(source)  # (the files are indexed: no reading here)
    refresh_rows()
    session.state_changed.emit()  # the problems panel, the map and the status bar count again
    if writing and not source.is_set and not follow.active:
        follow.start()
