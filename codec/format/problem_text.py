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

TFRECORD = "tfrecord"  # a source's ``container`` when its records are TFRecord frames
ARRAY_RECORD = "array_record"  # a source's ``container`` when its records are in ArrayRecord chunks

# The same kinds found in an ArrayRecord file: its records sit in chunks of ``group_size`` records, so
# damage is a chunk's, and the reader that meets it is Google's ArrayRecordReader (what tfds.data_source
# and Grain read through), not tf.data. Its ``tensorflow`` field holds what that reader does.
ARRAY_RECORD_DAMAGE: dict[str, DamageText] = {
    "data_crc": DamageText(
        "damaged chunk",
        "the chunk that holds this record does not read back as it was written (its bytes changed after it "
        "was written: a bad copy or bit rot), so none of its records can be trusted; the chunks around it "
        "are read as usual",
        "fails with RuntimeError (\"Corrupted Riegeli/records file\") on any read of this chunk's records"),
    "truncated": DamageText(
        "no footer",
        "the file's end, which indexes its chunks, is missing or damaged (a file cut short, or a writer that "
        "never closed it): the chunks were found by walking them from the start, and every record written "
        "whole is read",
        "reads no record of the file: it needs the footer"),
    "garbage": DamageText(
        "damaged chunk header",
        "a chunk's header does not read (overwritten bytes): the chunks after it cannot be found, so their "
        "records are not read",
        "reads no record of the file: it needs the footer"),
}
ARRAY_RECORD_DAMAGE = {**DAMAGE, **ARRAY_RECORD_DAMAGE}  # (other kinds do not arise in an ArrayRecord file)


def damage_table(container: str = "tfrecord") -> dict[str, DamageText]:
    """:data:`DAMAGE` for a TFRecord source, :data:`ARRAY_RECORD_DAMAGE` for an ArrayRecord one."""
    return ARRAY_RECORD_DAMAGE if container == ARRAY_RECORD else DAMAGE


def kind_words(kind: ProblemKind, container: str = "tfrecord") -> str:
    """A problem kind in a few words, as the container's damage reads (a damaged ArrayRecord chunk, not a CRC)."""
    return damage_table(container)[kind.value].name


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


def tensorflow_stops(key: str, record: int | None, first: int | None = None, container: str = "tfrecord") -> str:
    """What ``tf.data.TFRecordDataset`` does at this damage, at ``record`` (the number of records before it).

    ``first`` is the record of the file's first damage: TensorFlow never reads on past it. In an
    ArrayRecord file (``container``): what Google's ArrayRecordReader does there instead.
    """
    if container == ARRAY_RECORD:
        return f"Google's ArrayRecordReader (tfds.data_source, Grain) {ARRAY_RECORD_DAMAGE[key].tensorflow}"
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


def explain(key: str, record: int | None = None, first: int | None = None, container: str = "tfrecord") -> str:
    """Two sentences: what happened, and what TensorFlow does there (see :func:`tensorflow_stops`)."""
    happened = damage_table(container)[key].happened
    return f"{happened[0].upper()}{happened[1:]}. {tensorflow_stops(key, record, first, container)}."


def damage_line(key: str, record: int | None = None, first: int | None = None, container: str = "tfrecord") -> str:
    """One line (a status bar's): ``data CRC: what happened; what TensorFlow does``."""
    text = damage_table(container)[key]
    return f"{text.name}: {text.happened}; {tensorflow_stops(key, record, first, container)}"


def explain_problem(p: Problem, record: int | None = None, first: int | None = None,
                    container: str = "tfrecord") -> str:
    """:func:`explain` for ``p``: ``record`` is where TensorFlow meets it (``p.index`` when None)."""
    return explain(damage_key(p), p.index if record is None else record, first, container)
