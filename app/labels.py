"""Words the GUI shows for record kinds and statuses (one place for all views)."""
from __future__ import annotations

from codec.decode import RecordKind
from codec.framing import RecordStatus

KIND_TEXT = {RecordKind.EXAMPLE: "Example", RecordKind.SEQUENCE_EXAMPLE: "SequenceExample", RecordKind.RAW: "raw"}
STATUS_TEXT = {
    RecordStatus.UNCHECKED: "ok",
    RecordStatus.OK: "ok",
    RecordStatus.LENGTH_CRC: "length CRC bad (recovered)",
    RecordStatus.DATA_CRC: "data CRC bad",
    RecordStatus.TRUNCATED: "truncated",
}
