"""Copy Record as JSON and Copy Offset of one tab: the current record's text on the clipboard.

A :class:`RecordCopy` is made by the tab with its parts; it reads the record through the session
(a URL's bytes are small: one record), and says what it copied, or why not, in one line.
"""
from __future__ import annotations

import json
from typing import Callable

from PySide6.QtGui import QGuiApplication

from app.models.record_table_model import RecordTableModel
from app.shell.session import TabSession
from app.workers.worker import one_line
from codec.decode.decoder import decode_record, record_json_value
from codec.errors import PayloadDecodeError, TFRecordError


class RecordCopy:
    """The current record (``current()``, -1: none) of ``session`` onto the clipboard; ``say`` shows a note."""

    def __init__(self, session: TabSession, model: RecordTableModel, current: Callable[[], int],
                 say: Callable[[str], None]) -> None:
        self.session = session
        self.model = model
        self.current = current
        self.say = say

    def record_json(self) -> str:
        """Copy the current record as TensorFlow's protobuf JSON; the text copied ("" when none)."""
        i = self.current()
        if i < 0:
            return ""
        try:
            with self.session.watching_changes():
                data = self.session.records.read(i).data
        except (TFRecordError, OSError, ValueError) as exc:
            self.say(f"cannot read record {i:,}: {one_line(exc)}")
            return ""
        try:
            text = json.dumps(record_json_value(decode_record(data, self.session.records.payload)), indent=2)
        except PayloadDecodeError as exc:  # a message with no JSON form (a Timestamp out of range)
            self.say(f"cannot copy record {i:,} as JSON: {one_line(exc)}")
            return ""
        QGuiApplication.clipboard().setText(text)
        self.say(f"copied record {i:,} as JSON")
        return text

    def offset(self) -> str:
        """Copy the current record's byte offset in its file; the text copied ("" for an edited record)."""
        i = self.current()
        if i < 0:
            return ""
        if self.model.is_edited(i):
            self.say(f"record {i:,} is edited and not saved yet: it has no offset in the file")
            return ""
        text = str(self.session.records.index.offset(i))
        QGuiApplication.clipboard().setText(text)
        self.say(f"copied the offset of record {i:,}: {text}")
        return text
