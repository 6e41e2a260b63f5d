"""Words the GUI shows for record kinds, statuses and images (one place for all views and workers)."""
from __future__ import annotations

from codec.decode.decoder import DecodedRecord, RecordKind
from codec.decode.images import ImageRef
from codec.format.framing import RecordStatus
from codec.format.problem_text import ARRAY_RECORD

KIND_TEXT = {RecordKind.EXAMPLE: "Example", RecordKind.SEQUENCE_EXAMPLE: "SequenceExample", RecordKind.RAW: "raw",
             RecordKind.TENSOR: "Tensor", RecordKind.MESSAGE: "Message", RecordKind.PROTOBUF: "Protobuf (no schema)",
             RecordKind.EVENT: "Event"}
STATUS_TEXT = {
    RecordStatus.UNCHECKED: "ok",
    RecordStatus.OK: "ok",
    RecordStatus.LENGTH_CRC: "length CRC bad (recovered)",
    RecordStatus.DATA_CRC: "data CRC bad",
    RecordStatus.TRUNCATED: "truncated",
    RecordStatus.WRITING: "being written",
}
ARRAY_RECORD_STATUS_TEXT = {**STATUS_TEXT, RecordStatus.DATA_CRC: "chunk damaged"}  # (no CRCs: chunks)


def status_words(status: RecordStatus, container: str) -> str:
    """A status in words, as the records' container has it (an ArrayRecord file's chunks carry no CRCs)."""
    return (ARRAY_RECORD_STATUS_TEXT if container == ARRAY_RECORD else STATUS_TEXT)[status]
EDITED_STATUS = "edited"  # a record's Status while it is new or changed and not saved
GAP_STATUS = "ok, after skipped bytes"  # the Status of the first record found after damage
UNREADABLE_KIND, LARGE_KIND, NO_KIND = "unreadable", "large", "—"  # the Kind of a record not decoded, and why
COMPRESSION_TEXT = {"none": "plain", "gzip": "GZIP", "zlib": "ZLIB"}  # a Compression's value, as shown


def kind_text(decoded: DecodedRecord) -> str:
    """``Tensor``, or ``Message lens.demo.Frame`` with the message's type when there is one."""
    text = KIND_TEXT[decoded.kind]
    descriptor = getattr(decoded.message, "DESCRIPTOR", None) if decoded.kind is RecordKind.MESSAGE else None
    return f"{text} {descriptor.full_name}" if descriptor is not None else text


def image_dims(ref: ImageRef) -> str:
    """``160×120``, or ``32×32×3`` for raw pixels with channels."""
    dims = f"{ref.width}×{ref.height}"
    return f"{dims}×{ref.channels}" if ref.kind == "raw" and ref.channels else dims


def caption_text(ref: ImageRef, boxes: int, with_index: bool = False) -> str:
    """``image/encoded · JPEG · 160×120 · 3 boxes`` (``step N`` for a step, ``value N`` when asked)."""
    parts = [ref.key, f"raw {ref.dtype}" if ref.kind == "raw" else ref.format, image_dims(ref)]
    if ref.step is not None:
        parts.append(f"step {ref.step}")
    if with_index:
        parts.append(f"value {ref.value_index}")
    if boxes:
        parts.append(f"{boxes} box" if boxes == 1 else f"{boxes} boxes")
    return " · ".join(parts)
