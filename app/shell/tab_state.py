"""What a tab reports (:class:`TabState`) and where "Go to" goes (:func:`parse_goto`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class TabState:
    """What the status bar shows about a tab."""

    path: str
    compression: str
    file_size: int
    records: int
    problems: int
    phase: str  # "index", "verify", "done", "cancelled", "failed"; "sort" while the rows are sorted
    fraction: float
    running: bool
    verified: bool
    error: str | None = None
    shards: tuple[int, int] | None = None  # (indexed, all) for a shard set
    decoded_as: str | None = None  # the payload's name (File > Decode As…, a TFDS dataset); None: by kind
    fetched: int | None = None  # bytes read from the network so far (a URL's); None: a local file
    rate: float = 0.0  # bytes per second fetched lately
    following: bool = False  # View > Follow is on: rows come as the file grows
    writing: bool = False  # the last row is a record still being written (following)
    can_follow: bool = False  # View > Follow applies (a local file, no unsaved edits, indexed)
    resumable: bool = False  # indexing was stopped before the end: Resume goes on from there
    compression_note: str | None = None  # the name says another compression than the bytes: what TensorFlow does
    container: str | None = None  # an ArrayRecord source's format and writer options (None: TFRecord)
    container_tip: str = ""  # its writer options string and whether its hashes are checked


class GoTarget(NamedTuple):
    kind: str  # "record" or "offset"
    value: int


def parse_goto(text: str) -> GoTarget:
    """``12`` or ``-1`` is a record; ``@12345``, ``@0x3039`` or ``0x3039`` a byte offset.

    Thousands separators (``1,234`` / ``1_234`` / spaces) are allowed.
    Raises ValueError with a one-line message.
    """
    raw = text.strip()
    s = raw.replace(",", "").replace("_", "").replace(" ", "")
    kind = "record"
    if s.startswith("@"):
        kind, s = "offset", s[1:]
    if s.lower().startswith("0x"):
        kind = "offset"
    try:
        value = int(s, 0) if kind == "offset" else int(s)
    except ValueError:
        raise ValueError(f"not a record number or byte offset: {raw!r} (try 42, -1, @12345 or 0x3039)") from None
    if kind == "offset" and value < 0:
        raise ValueError(f"a byte offset cannot be negative: {raw!r}")
    return GoTarget(kind, value)
