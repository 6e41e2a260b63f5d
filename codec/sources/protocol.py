"""What every record source is: the one interface the app and the exporters read records through.

A tab shows a :class:`~codec.sources.tfrecord_file.TFRecordFile`, a
:class:`~codec.sources.shard_set.ShardSet`, the edited records of a document
(:class:`~codec.editing.edited.EditedFile`); its detail view shows one record pinned
at a moment (:class:`~codec.sources.pinned.PinnedRecord`). They differ in where
records come from, not in how they are read: each implements
:class:`RecordSource` (a pinned record: :class:`RecordReader`), so no caller
ever asks which kind it holds. Row ``i`` is always ``source.read(i)``.

What a caller needs to know about the kind is declared as a fact of the
interface instead (``container``, ``is_remote``, ``bytes_fetched``, ``is_set``,
``numbered_out_of_order`` with ``publish()``, ``files``, ``file_row()``,
``is_edited(i)``, ``complete_records``, ``info_lines()``, an ArrayRecord file's
``layout``, ``hashes_checked`` and ``group_size_warning()``); mypy checks that every
implementation has them (:mod:`codec.sources.conformance`). No caller uses
``getattr``/``hasattr`` on a source, a reader or its payload, nor ``isinstance`` on a
source kind (``tests/test_no_probes.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Protocol

from codec.format.framing import Compression, Problem, RecordInfo, RecordStatus

if TYPE_CHECKING:
    import numpy as np

    from codec.datasets.label_maps import LabelNames
    from codec.decode.payloads import Payload
    from codec.format.array_record import ArrayRecordLayout

NO_OFFSET = -1  # the offset of a record that has no place in a file yet (new or edited)


@dataclass(frozen=True)
class RecordData:
    """A record's bytes with what is known of it; ``data`` is partial when truncated."""

    info: RecordInfo
    data: bytes
    stored_crc: int | None
    computed_crc: int | None

    @property
    def status(self) -> RecordStatus:
        return self.info.status


class RecordIndexView(Protocol):
    """Per row: where the record starts and what is known of it."""

    def __len__(self) -> int: ...

    def status(self, i: int) -> RecordStatus: ...

    def offset(self, i: int) -> int: ...

    def statuses(self) -> np.ndarray: ...


class RecordFacts(Protocol):
    """What a record source and a record pinned from it both say (see :class:`RecordReader`)."""

    @property
    def compression(self) -> Compression: ...

    @property
    def note(self) -> str | None: ...

    @property
    def payload(self) -> Payload | None: ...

    @property
    def labels(self) -> LabelNames | None: ...

    @property
    def unsaved(self) -> bool: ...

    @property
    def modified(self) -> bool: ...

    @property
    def is_remote(self) -> bool: ...

    @property
    def container(self) -> str: ...

    def read(self, i: int) -> RecordData: ...

    def record_info(self, i: int) -> RecordInfo: ...


class RecordReader(RecordFacts, Protocol):
    """What a detail view needs of the records it shows: each one's bytes, facts and frame.

    ``note``: one line on where a record comes from when its offset alone does
    not say it (a record of a shard, an edited record), else None.
    ``unsaved``: the records have no place in a file yet; the hex view frames
    them itself. ``modified``: they differ from the file on disk.
    ``payload``: how the records decode (see :mod:`codec.decode.payloads`; None: by the kind rule).
    ``labels``: class names of label ids, None when unknown.
    ``is_remote``: the bytes come over the network (never read them on the GUI thread).
    ``container``: how the records are framed on disk, ``"tfrecord"`` or ``"array_record"``
    (:data:`codec.format.problem_text.ARRAY_RECORD`; a shard set: its first opened shard's).
    """

    def read_bytes(self, offset: int, size: int) -> bytes: ...


class RecordSource(RecordFacts, Protocol):
    """Records by row number, with their index and problems: what a tab shows.

    ``read(i)``, ``record_info(i)``, ``compression``, ``note``, ``unsaved`` and
    ``modified`` as for :class:`RecordReader`; ``pinned(i)`` is row ``i`` as a
    :class:`RecordReader` for a detail view (a shard set's reads from the
    shard, at the shard's own offsets). ``record_before(p)``: the last row
    starting at or before problem ``p`` (in the problem's own file: offsets
    name records only within one file, so a source of several files has no
    ``find_record(offset)``).
    ``statuses_stored``: a verify pass over this source keeps its results
    (False for a view whose statuses are mapped from another source).
    ``mtime_ns``: the modification time the records were read at (None for
    several files). ``problem_count()`` counts without building the list
    (a set of 10,000 shards). ``location(i)``: the file and offset of row
    ``i``. A :class:`~codec.sources.shard_set.ShardSet` also numbers its shards' records
    as they finish, out of order: its ``publish()`` says which rows appeared.

    Facts a caller would otherwise find out by asking which kind it holds:

    ``is_remote``: the records are read over the network (a URL, a set of
    URLs, or the edited records of one): a view reads them on a worker.
    ``bytes_fetched``: bytes read from the network so far; None when local.
    ``is_set``: rows are numbered across several files (a shard set): offsets
    are per file, a check goes over every file, salvage takes one file.
    ``numbered_out_of_order``: rows join the numbering anywhere, when
    ``publish()`` returns them as (first row, count); False: rows only grow at
    the end (``publish()`` returns []).
    ``files``: every file the records come from, in order (one for a file);
    ``unusable``: (path, why) of those that could not be read at all.
    ``file_row(k, j)``: the row showing record ``j`` of ``files[k]`` now, None
    when it has none (not numbered yet, out of range, or edited away).
    ``is_edited(i)``: row ``i`` is new or changed and not in a file yet (its
    offset is ``NO_OFFSET``; saving writes it).
    ``complete_records``: rows whose bytes are all there (all of them, less one
    being written at the end of a followed file).
    ``info_lines()``: what ``info`` and File Info say of the container beyond
    TFRecord's (an ArrayRecord file's format, writer options and hashes; [] for TFRecord).
    ``layout``, ``hashes_checked``, ``group_size_warning()``: an ArrayRecord file's footer
    (None, False and None for TFRecord; a set: its first opened shard's).
    """

    @property
    def path(self) -> str: ...

    @property
    def indexed(self) -> bool: ...

    @property
    def verified(self) -> bool: ...

    @property
    def statuses_stored(self) -> bool: ...

    @property
    def mtime_ns(self) -> int | None: ...

    @property
    def bytes_fetched(self) -> int | None: ...

    @property
    def is_set(self) -> bool: ...

    @property
    def numbered_out_of_order(self) -> bool: ...

    @property
    def files(self) -> list[str]: ...

    @property
    def unusable(self) -> list[tuple[str, str]]: ...

    def publish(self) -> list[tuple[int, int]]: ...

    def file_row(self, k: int, j: int) -> int | None: ...

    def is_edited(self, i: int) -> bool: ...

    @property
    def index(self) -> RecordIndexView: ...

    @property
    def problems(self) -> list[Problem]: ...

    def problem_count(self) -> int: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[bytes]: ...

    def record_before(self, problem: Problem) -> int: ...

    def location(self, i: int) -> tuple[str, int]: ...

    def pinned(self, i: int) -> RecordReader: ...

    @property
    def complete_records(self) -> int: ...

    def info_lines(self) -> list[str]: ...

    @property
    def layout(self) -> ArrayRecordLayout | None: ...

    @property
    def hashes_checked(self) -> bool: ...

    def group_size_warning(self) -> str | None: ...
