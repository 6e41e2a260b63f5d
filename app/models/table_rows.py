"""What the record table shows of one record, and how it is read and decoded (on any thread).

:func:`build_row` is the one place a table row is made: on the GUI thread for
a local file, on a :class:`~app.workers.row_loader.RowLoader`'s thread (as a
:class:`RowJob`) for a remote one. Nothing here touches Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codec.decode.decoder import RecordKind, decode_record, feature_cell, feature_values, record_features
from codec.format.framing import RecordStatus

# Larger records are not read or decoded for a table row (the detail view does it).
MAX_DECODE_BYTES = 16 << 20
MAX_NAMED_IDS = 8  # a cell names the classes of at most this many ids (longer lists stay numbers)
UNREADABLE = "this record could not be read"


@dataclass
class TableRow:
    """What the table shows of one record, besides its live status."""

    length: int | None
    kind: RecordKind | None
    cells: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    note: str | None = None
    loading: bool = False  # a remote row not read yet: a placeholder, never cached


LOADING_ROW = TableRow(None, None, note="loading from the server…", loading=True)


def cell_text(decoded, key: str, labels) -> str:
    """Feature ``key``'s cell: ids of a label feature with their names (``1 (cat)``) when ``labels`` knows them."""
    text = feature_cell(decoded, key)
    if labels is None or not text:
        return text
    features = record_features(decoded)
    dtype, values = feature_values(features[key]) if features is not None and key in features else (None, [])
    if dtype != "int64" or not values or len(values) > MAX_NAMED_IDS:
        return text
    parts = []
    for v in values:
        name = labels.name(key, v)
        parts.append(f"{v} ({name})" if name else str(v))
    return parts[0] if len(parts) == 1 else f"[{', '.join(parts)}]"


def build_row(source, i: int, features: list[str], payload, labels,
              max_bytes: int = MAX_DECODE_BYTES) -> tuple[TableRow, Exception | None, Any]:
    """What the table shows of record ``i`` (on any thread): the row, the error that kept it
    from being read (None), and the record decoded (None when it was not, or it is over ``max_bytes``)."""
    try:
        info = source.record_info(i)
    except (OSError, ValueError, IndexError) as exc:
        return TableRow(None, None, error=UNREADABLE), exc, None
    if info.status in (RecordStatus.TRUNCATED, RecordStatus.WRITING):
        return TableRow(info.length, None), None, None
    if info.length > max_bytes:
        return TableRow(info.length, None, note=f"{info.length:,} bytes: decoded in the detail view only"), None, None
    try:
        rec = source.read(i)
    except (OSError, ValueError, IndexError) as exc:
        return TableRow(info.length, None, error=UNREADABLE), exc, None
    decoded = decode_record(rec.data, payload)
    cells = {key: cell_text(decoded, key, labels) for key in features}
    return TableRow(info.length, decoded.kind, cells), None, decoded


class RowJob:
    """Reads one batch of a remote source's rows on the loader's thread. After a read fails
    for the whole file (the network, a change on the server), the rest of the batch is not
    tried: those rows come back with the same error."""

    def __init__(self, source, features: list[str], max_bytes: int = MAX_DECODE_BYTES) -> None:
        self.source, self.features, self.max_bytes = source, list(features), max_bytes
        self.payload, self.labels = source.payload, source.labels
        self.failed: OSError | None = None

    def __call__(self, i: int) -> tuple[TableRow, Exception | None, Any]:
        if self.failed is not None:
            return TableRow(None, None, error=UNREADABLE), self.failed, None
        out = build_row(self.source, i, self.features, self.payload, self.labels, self.max_bytes)
        if isinstance(out[1], OSError):
            self.failed = out[1]
        return out
