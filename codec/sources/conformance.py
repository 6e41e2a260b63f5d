"""Each record source is what :mod:`codec.sources.protocol` declares, and each payload what
:class:`codec.decode.payloads.Payload` declares: checked by mypy, nothing at run time
(the edited records of a document: at the end of :mod:`codec.editing.edited`).

A class that lacks a declared fact, or gives it another type, fails the type
check here (CI runs mypy), not in the app when it asks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codec.datasets.tfds import TfdsPayload
    from codec.decode.events import EventPayload
    from codec.decode.messages import MessageType
    from codec.decode.payloads import Payload
    from codec.sources.array_record_file import ArrayRecordFile
    from codec.sources.pinned import PinnedRecord
    from codec.sources.protocol import RecordReader, RecordSource
    from codec.sources.shard_set import ShardRecord, ShardSet
    from codec.sources.tfrecord_file import TFRecordFile

    def _sources(file: TFRecordFile, array_records: ArrayRecordFile, shards: ShardSet) -> list[RecordSource]:
        return [file, array_records, shards]

    def _readers(pinned: PinnedRecord, shard_record: ShardRecord) -> list[RecordReader]:
        return [pinned, shard_record]

    def _payloads(message: MessageType, events: EventPayload, tfds: TfdsPayload) -> list[Payload]:
        return [message, events, tfds]
