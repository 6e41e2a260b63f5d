"""What every ``media`` line of a value starts with: where it is (record, key, step, value), its type and codec."""
from __future__ import annotations

__all__ = ["media_line"]


def media_line(index: int, key: str, kind: str, codec: str, step: int | None, value_index: int) -> dict:
    """``{"index", "key", "type", "codec"}``, with ``step`` (a feature list's) and ``value`` (after the first
    of a list) where they apply."""
    line: dict = {"index": index, "key": key, "type": kind, "codec": codec}
    if step is not None:
        line["step"] = step
    if value_index:
        line["value"] = value_index
    return line
