"""The JSON line of one record, as ``cat --json`` and ``export --format jsonl`` write it.

An Example or SequenceExample in the canonical layout is written straight from
its bytes (:func:`codec.decode.example_text.example_json_line`), byte for byte what
protobuf's JSON mapping and ``json.dumps`` give; any other record, a chosen
payload or label names go through :func:`json_line` (protobuf, imported then).
"""
from __future__ import annotations

import base64
import json

from codec.decode.example_text import example_json_line
from codec.errors import PayloadDecodeError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from codec.format.framing import RecordStatus

__all__ = ["json_line", "json_line_text", "label_names"]


def json_line_text(index: int, data: bytes, status: RecordStatus, offset: int | None = None,
                   length: int | None = None, payload=None, path: str | None = None, labels=None) -> str:
    """``json.dumps(json_line(...))``, without protobuf for a canonical Example or SequenceExample."""
    if payload is None and not labels:
        line = example_json_line(index, data, status, offset, length)
        if line is not None:
            return line
    return json.dumps(json_line(index, data, status, offset, length, payload, path, labels))


def json_line(index: int, data: bytes, status: RecordStatus, offset: int | None = None,
              length: int | None = None, payload=None, path: str | None = None, labels=None) -> dict:
    """The object of one ``cat --json`` / jsonl line (``offset`` only for records in a file).

    ``note`` says why a record is not what its ``payload`` expects; a payload
    may add members of its own (a TFDS record's ``split`` and ``features``),
    for which ``path`` is the file the record is in. With ``labels`` (a
    :class:`codec.datasets.label_maps.LabelNames`), ``names`` gives the class names of
    each label feature's ids (null where the map has none).
    """
    from codec.decode.decoder import decode_record, record_json_value

    decoded = decode_record(data, payload)
    obj: dict[str, Any] = {"index": index}
    if offset is not None:
        obj["offset"] = offset
    try:
        value = record_json_value(decoded)
    except PayloadDecodeError as exc:  # parsed, but no JSON form (a Timestamp out of range, a corrupt Any)
        value = {"base64": base64.b64encode(decoded.data).decode("ascii")}
        decoded.note = "; ".join(filter(None, (decoded.note, str(exc))))
    obj.update({"length": len(data) if length is None else length, "status": status.label,
                "kind": decoded.kind.value, "value": value})
    if decoded.note:
        obj["note"] = decoded.note
    if payload is not None:
        obj.update(payload.line_extras(decoded, path))
    if labels:
        names = label_names(decoded, labels)
        if names:
            obj["names"] = names
    return obj


def label_names(decoded, labels) -> dict[str, list]:
    """``{key: [name or None per id]}`` for the record's int64 features that ``labels`` names."""
    from codec.decode.decoder import feature_values, record_features

    features = record_features(decoded)
    out = {}
    for key in sorted(features or ()):
        if labels.get(key) is not None:
            # features is set: the loop runs over it.
            dtype, values = feature_values(features[key])  # type: ignore[index]
            if dtype == "int64":
                out[key] = [labels.name(key, v) for v in values]
    return out
