"""Which container a source's records are in, and what the window says of it (no Qt).

A TFRecord file and an ArrayRecord file open alike (the codec sniffs their first bytes); the window
names an ArrayRecord source's writer options in the status bar and File Info, warns when its
``group_size`` makes random access slow, and says why TFRecord-only actions are off for it.
"""
from __future__ import annotations

from codec.format.problem_text import ARRAY_RECORD
from codec.sources.protocol import RecordReader, RecordSource

READ_ONLY_REASON = "an ArrayRecord file is read-only here: File > Export… writes a copy (as TFRecord, for one)"
FOLLOW_REASON = "an ArrayRecord file is indexed by its footer, written when the writer closes it: it cannot be followed"
SALVAGE_REASON = ("salvage rewrites TFRecord files; the damaged chunks of an ArrayRecord file are marked in the table, "
                  "and File > Export… copies its intact records")


def container_of(source: RecordSource) -> str:
    """``"array_record"`` when ``source``'s records are in ArrayRecord chunks (a set: its first shard's),
    else ``"tfrecord"``."""
    return source.container


def format_text(source: RecordSource) -> str | None:
    """The status bar's words for an ArrayRecord source: ``ArrayRecord · zstd · group_size 1`` (None: TFRecord)."""
    if source.container != ARRAY_RECORD:
        return None
    layout = source.layout
    if layout is None:
        return "ArrayRecord"
    return f"ArrayRecord · {layout.compression} · group_size {layout.group_size:,}"


def format_tip(source: RecordSource) -> str:
    """The writer options the file stores, and whether its chunk hashes are checked (a tooltip)."""
    layout = source.layout
    if layout is None:
        return ""
    options = layout.writer_options or "(no options recorded)"
    hashes = ("checked by File > Verify Checksums (through Google's array-record package)" if source.hashes_checked
              else "not checked (sizes and structure are)")
    return f"ArrayRecord writer options: {options}\nChunk hashes: {hashes}\nFile > File Info… for all of it"


def group_size_warning(source: RecordSource) -> str | None:
    """Why random access into ``source`` is slow (its group_size > 1), as the codec words it; else None."""
    return source.group_size_warning()


def reads_array_record(reader: RecordReader | RecordSource) -> bool:
    """Whether a detail view's record reader (a pinned record, or a file) reads from an ArrayRecord file."""
    return reader.container == ARRAY_RECORD


def read_only_reason(source: RecordSource) -> str | None:
    """Why ``source``'s records cannot be edited in place (an ArrayRecord file), else None."""
    return READ_ONLY_REASON if source.container == ARRAY_RECORD else None
