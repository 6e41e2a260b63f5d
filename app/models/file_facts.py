"""What File > File Info shows of a source: the facts ``tfrlens-cli info`` prints, read from the opened
source (no Qt, and no pass: the index and the problems are already there).

Each fact is a ``(name, value)`` pair; the codec words them (its ``info_lines``, payload and dataset lines),
so the dialog and the command line say the same things.
"""
from __future__ import annotations

from typing import Any

from codec.datasets.payload_choice import Choice, info_lines
from codec.format.framing import Compression
from codec.format.names import tensorflow_name_note
from codec.format.problem_text import ARRAY_RECORD
from codec.ops.verify import status_counts
from codec.sources.protocol import RecordSource
from codec.storage.url_secrets import shown_path

Fact = tuple[str, str]
INFO_WIDTH = 13  # ``info`` aligns its values after "compression: "


def _split(line: str) -> Fact:
    """``"format:      ArrayRecord (...)"`` -> ("format", "ArrayRecord (...)")."""
    name, _, value = line.partition(":")
    return name.strip(), value.strip()


def file_facts(source: RecordSource, dataset: Any = None) -> list[Fact]:
    """The source's path, shards, format and writer options (and their warning), size, records by status,
    payload, label names, a TFDS dataset's splits, and its problems."""
    facts: list[Fact] = [("path", shown_path(source.path))]
    if source.is_set:
        facts.append(("shards", f"{len(source.files):,}" + (f" ({len(source.unusable)} unusable)" if source.unusable else "")))
    chunked = source.container == ARRAY_RECORD
    if chunked:
        facts.extend(_split(line) for line in source.info_lines())
        if source.is_set:
            facts.append(("note", "the format of the first shard"))
    else:
        facts.append(("format", "TFRecord"))
        facts.append(("compression", source.compression.value))
        note = None if source.is_set else tensorflow_name_note(source.path, source.compression)
        if note:
            facts.append(("note", note))
    size = f"{source.file_size:,} bytes"
    if not chunked and not source.is_set and source.compression is not Compression.NONE:
        size += f" ({source.data_end:,} uncompressed)"
    facts.append(("size", size))
    statuses = status_counts(source)
    ok = statuses.get("ok", 0)
    facts.append(("records", f"{len(source):,} ({ok:,} ok" + "".join(
        f", {c:,} {s}" for s, c in sorted(statuses.items()) if s != "ok") + ")"))
    choice = Choice(source.payload, source.labels, dataset)
    facts.extend(_split(line) for line in info_lines(choice, source)[0])
    n = len(source.problems)
    facts.append(("problems", "none" if not n else f"{n:,}: the Problems panel lists them (View > Problems Panel)"))
    return facts


def facts_text(facts: list[Fact]) -> str:
    """The facts as ``info`` prints them (for the clipboard)."""
    width = max([INFO_WIDTH - 1, *(len(name) for name, _ in facts)]) + 1
    return "\n".join(f"{name + ':':<{width}}{value}" for name, value in facts)
