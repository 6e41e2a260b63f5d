"""Each kind of damage in plain words: what happened to the bytes, and what TensorFlow does there.

One table for the app (Problems panel, tooltips, status bar), the command line's
human output and docs/damage.md (a test keeps the page in step). What TensorFlow
does is what ``tf.data.TFRecordDataset`` did on the fixtures' planted damage
(tests/fixtures/MANIFEST.json): it stops with ``DataLossError`` at the first
damaged record and yields none after it.
"""
from __future__ import annotations

from dataclasses import dataclass

from codec.format.framing import Problem, ProblemKind, RecordStatus


@dataclass(frozen=True)
class DamageText:
    """One kind of damage: a few words, what happened, and what TensorFlow does (its error's words)."""

    name: str
    happened: str
    tensorflow: str  # TensorFlow's message, as in "DataLossError: corrupted record at 207"


# The keys are ProblemKind values, plus the cases that read differently: a bad length CRC whose
# record was recovered, a record still being written, and a file with no TFRecord in it at all.
DAMAGE: dict[str, DamageText] = {
    "length_crc_recovered": DamageText(
        "length CRC (recovered)",
        "the record's 12-byte header changed (its length or the length's CRC), but the data's CRC proves "
        "the length: the record itself is intact and is read here",
        "corrupted record"),
    "length_crc": DamageText(
        "length CRC",
        "a record's header changed, so its length cannot be trusted: the bytes up to the next record whose "
        "CRCs hold were skipped, and any records in them are lost (overwritten bytes or a bad copy)",
        "corrupted record"),
    "data_crc": DamageText(
        "data CRC",
        "the record's bytes changed after it was written: a bad copy or bit rot (its header is intact, "
        "so the records after it are found as usual)",
        "corrupted record"),
    "truncated": DamageText(
        "truncated",
        "the file ends inside this record: the copy or the write stopped early (an unfinished download, "
        "a full disk, a writer that crashed)",
        "truncated record"),
    "garbage": DamageText(
        "garbage",
        "a header claims more bytes than the file holds: the bytes up to the next record whose CRCs hold "
        "are not a record (overwritten or inserted bytes)",
        "truncated record"),
    "decompress": DamageText(
        "decompression error",
        "the GZIP or ZLIB stream is damaged here: nothing after this point inflates from it "
        "(a bad copy of a compressed file, or a file cut short)",
        "inflate() failed"),
    "writing": DamageText(
        "being written",
        "the file is still being written: this record's bytes are still arriving (not damage)",
        "truncated record"),
    "not_a_tfrecord": DamageText(
        "not a TFRecord",
        "the file's first bytes are neither a TFRecord header nor a GZIP or ZLIB stream: it is another "
        "kind of file, or its start was overwritten",
        "corrupted record"),
}

KIND_WORDS = {kind: DAMAGE[kind.value].name for kind in ProblemKind}  # a problem kind in a few words


def damage_key(p: Problem) -> str:
    """The :data:`DAMAGE` key of ``p``: its kind, or ``length_crc_recovered`` when its record was recovered."""
    if p.kind is ProblemKind.LENGTH_CRC and p.index is not None:
        return "length_crc_recovered"
    return p.kind.value


def status_key(status: RecordStatus) -> str | None:
    """The :data:`DAMAGE` key of a damaged or unfinished record's status; None for a sound one."""
    if status <= RecordStatus.OK:
        return None
    return "length_crc_recovered" if status is RecordStatus.LENGTH_CRC else status.label


def tensorflow_stops(key: str, record: int | None, first: int | None = None) -> str:
    """What ``tf.data.TFRecordDataset`` does at this damage, at ``record`` (the number of records before it).

    ``first`` is the record of the file's first damage: TensorFlow never reads on past it.
    """
    error = f'DataLossError ("{DAMAGE[key].tensorflow}")'
    if first is not None and record is not None and first < record:
        return f"tf.data never gets here: it stops with DataLossError at record {first:,}, the first damage"
    if key == "writing":
        return (f"tf.data reading the file now stops here with {error}; "
                "once the writer has finished, it reads this record")
    if record is None:
        return f"tf.data stops here with {error}"
    if record == 0:
        return f"tf.data stops with {error} at record 0, before yielding any record"
    read = "record 0" if record == 1 else f"records 0–{record - 1:,}"
    return f"tf.data stops with {error} at record {record:,}, after yielding {read}"


def explain(key: str, record: int | None = None, first: int | None = None) -> str:
    """Two sentences: what happened, and what TensorFlow does there (see :func:`tensorflow_stops`)."""
    happened = DAMAGE[key].happened
    return f"{happened[0].upper()}{happened[1:]}. {tensorflow_stops(key, record, first)}."


def damage_line(key: str, record: int | None = None, first: int | None = None) -> str:
    """One line (a status bar's): ``data CRC: what happened; what TensorFlow does``."""
    return f"{DAMAGE[key].name}: {DAMAGE[key].happened}; {tensorflow_stops(key, record, first)}"


def explain_problem(p: Problem, record: int | None = None, first: int | None = None) -> str:
    """:func:`explain` for ``p``: ``record`` is where TensorFlow meets it (``p.index`` when None)."""
    return explain(damage_key(p), p.index if record is None else record, first)
