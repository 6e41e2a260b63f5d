"""What every record source is: the one interface the app and the exporters read records through.

A tab shows a :class:`~codec.sources.tfrecord_file.TFRecordFile`, a
:class:`~codec.sources.shard_set.ShardSet`, the edited records of a document
(:class:`~codec.editing.edited.EditedFile`); its detail view shows one record pinned
at a moment (:class:`~codec.editing.edited.PinnedRecord`). They differ in where
records come from, not in how they are read: each implements
:class:`RecordSource` (a pinned record: :class:`RecordReader`), so no caller
ever asks which kind it holds. Row ``i`` is always ``source.read(i)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Protocol

from codec.format.framing import Compression, Problem, RecordInfo, RecordStatus

if TYPE_CHECKING:
    import numpy as np

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


class RecordReader(Protocol):
    """What a detail view needs of the records it shows: each one's bytes, facts and frame.

    ``note``: one line on where a record comes from when its offset alone does
    not say it (a record of a shard, an edited record), else None.
    ``unsaved``: the records have no place in a file yet; the hex view frames
    them itself. ``modified``: they differ from the file on disk.
    ``payload``: how the records decode (see :mod:`codec.decode.payloads`; None: by the kind rule).
    ``labels``: class names of label ids (a :class:`codec.datasets.label_maps.LabelNames`), None when unknown.
    """

    compression: Compression
    note: str | None
    payload: object
    labels: object
    unsaved: bool
    modified: bool

    def read(self, i: int) -> RecordData: ...

    def record_info(self, i: int) -> RecordInfo: ...

    def read_bytes(self, offset: int, size: int) -> bytes: ...


class RecordSource(Protocol):
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
    """

    path: str
    compression: Compression
    note: str | None
    payload: object  # how the records decode (see codec.decode.payloads); None: by the kind rule
    labels: object  # class names of label ids (codec.datasets.label_maps.LabelNames), None when unknown
    unsaved: bool
    modified: bool
    indexed: bool
    verified: bool
    statuses_stored: bool
    mtime_ns: int | None

    @property
    def index(self) -> RecordIndexView: ...

    @property
    def problems(self) -> list[Problem]: ...

    def problem_count(self) -> int: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[bytes]: ...

    def read(self, i: int) -> RecordData: ...

    def record_info(self, i: int) -> RecordInfo: ...

    def record_before(self, problem: Problem) -> int: ...

    def location(self, i: int) -> tuple[str, int]: ...

    def pinned(self, i: int) -> RecordReader: ...
