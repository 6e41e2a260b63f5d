"""Go To of one tab (Go > Go To, F8 and Shift+F8): a record number or byte offset, the next damaged record.

A :class:`TabGoTo` is made by the tab with its parts. While indexing, a target
not reached yet is kept (:attr:`TabGoTo.pending`) and jumped to when its row
arrives (:meth:`TabGoTo.resolve`, called by the tab as rows come); a record a
filter hides is said so, and the nearest match is shown.
"""
from __future__ import annotations

from typing import Callable

from app.models.filtered_table_model import FilteredTableModel
from app.models.record_table_model import RecordTableModel
from app.shell.row_selection import RowSelection
from app.shell.session import TabSession
from app.shell.tab_state import GoTarget, parse_goto


class TabGoTo:
    """Go To and the next damaged record over ``selection`` (see the module docstring); ``title()`` names the
    tab in its notes, ``filter_running()`` says a filter pass is under way, ``say`` shows a one-line note."""

    def __init__(self, session: TabSession, selection: RowSelection, proxy: FilteredTableModel,
                 model: RecordTableModel, title: Callable[[], str], filter_running: Callable[[], bool],
                 say: Callable[[str], None]) -> None:
        self.session = session
        self.selection = selection
        self.proxy = proxy
        self.model = model
        self.title = title
        self.filter_running = filter_running
        self.say = say
        self.pending: GoTarget | None = None  # a target not indexed yet, jumped to when its row comes

    def go_to(self, text: str) -> str | None:
        """Jump to a record number or byte offset (see :func:`~app.shell.tab_state.parse_goto`).

        Returns a one-line message when the jump is not possible (yet), else None.
        While indexing, a target not reached yet is remembered and jumped to
        when its row arrives.
        """
        try:
            target = parse_goto(text)
        except ValueError as exc:
            return str(exc)
        self.pending = target
        note = self.resolve(final=not self.session.is_running(), announce=False)
        if self.pending is not None:
            what = f"record {target.value:,}" if target.kind == "record" else f"byte {target.value:,}"
            return f"{what} is not indexed yet: going there when it is"
        return note

    def resolve(self, *, final: bool, announce: bool = True) -> str | None:
        """Jump to the pending go-to target once its row exists; say so when it never will."""
        target = self.pending
        if target is None:
            return None
        n = self.model.rowCount()
        note: str | None = None
        if target.kind == "record":
            i = target.value + n if target.value < 0 else target.value
            if 0 <= i < n and (target.value >= 0 or final):
                self.selection.select_record(i)
                note = self._filtered_out(i)
            elif final:
                note = f"no record {target.value:,}: {self.title()} has {n:,} records"
            else:
                return None  # its row may still come
        else:
            offset = target.value
            records = self.session.records  # the edited rows, once editing is on
            i = records.find_record(offset)
            if not final and (n == 0 or (i == n - 1 and offset >= records.record_info(i).end)):
                return None  # the record holding it may still come
            if i < 0:
                if n:
                    self.selection.select_record(0)
                note = f"byte {offset:,} is before the first record"
            else:
                self.selection.select_record(i)
                info = records.record_info(i)
                where = "in" if offset < info.end else "past the end of"
                note = f"byte {offset:,} is {where} record {i:,}, which starts at byte {info.offset:,}"
                note = "; ".join(filter(None, [note, self._filtered_out(i)]))
        self.pending = None
        if note and announce:
            self.say(note)
        return note

    def _filtered_out(self, record: int) -> str | None:
        """Say so when go-to's ``record`` is not among the filter's matches (the nearest match is shown instead)."""
        rows = self.proxy
        if not rows.is_filtered or rows.position_of(record) >= 0:
            return None
        if self.filter_running():
            what = f"record {record:,} is not among the matches of `{rows.expression}` found so far"
        else:
            what = f"record {record:,} does not match the filter `{rows.expression}`"
        nearest = rows.matching_record(rows.position_of(record, nearest=True))
        if nearest < 0:
            return f"{what}, and no record does yet: Show All clears the filter"
        return f"{what}; showing the nearest match, {nearest:,} (Show All clears the filter)"

    def next_damaged(self, backwards: bool = False) -> int:
        """Select the next (or previous) damaged record, or record after skipped bytes; -1 if none."""
        bad = self.model.flagged_rows()
        cur = self.selection.current_record()
        if backwards:
            before = bad[bad < cur] if cur >= 0 else bad
            found = int(before[-1]) if before.size else -1
        else:
            after = bad[bad > cur]
            found = int(after[0]) if after.size else -1
        if found >= 0:
            self.selection.select_record(found)
        else:
            self.say("no damaged record " + ("before" if backwards else "after") + " this one"
                     + ("" if self.session.source.verified else " (data CRCs not checked yet: File > Verify Checksums)"))
        return found
