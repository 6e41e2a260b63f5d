"""Who says which records a model shows: the tab's session, or a fixed source.

A model over a tab's records reads ``owner.records`` each time it needs them
and keeps no copy; the owner tells it when that becomes another object
(``records_replaced()``), so there is one place that says what a tab shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from codec.sources.protocol import RecordSource


class RecordsOwner(Protocol):
    """Anything with the records a model shows (``app.shell.session.TabSession``)."""

    @property
    def records(self) -> RecordSource: ...


@dataclass
class HeldRecords:
    """A source nothing replaces, as a :class:`RecordsOwner` (a model outside a tab)."""

    records: RecordSource
