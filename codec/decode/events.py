"""TensorBoard event files: their records are ``Event`` messages, decoded as kind ``event``.

The message types come from TensorBoard's own ``.proto`` files (vendored in
``event_protos/``), loaded from the descriptor set protoc made of them
(``event_protos/events.desc``; ``python -m codec.decode.events`` writes it again): reading
needs only protobuf, and the types live in a private pool, clashing with nothing.
A file is an event file by its name (``tfevents`` in it, as TensorBoard decides)
or by its first record: an Event whose ``file_version`` starts ``brain.Event:``.
"""
from __future__ import annotations

import os

# typing and codec.decode.decoded (dataclasses) are not imported here: every command asks whether its files
# are event files (codec.datasets.event_logs), and a one-record `cat` should not pay for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from codec.decode.decoded import DecodedRecord

__all__ = ["EVENT_TYPE", "EventPayload", "event_class", "event_type", "is_event_file_name", "is_file_version_event"]

EVENT_TYPE = "tensorboard.Event"
FILE_VERSION_PREFIX = "brain.Event:"
_PROTOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "event_protos")
_DESCRIPTOR_SET = os.path.join(_PROTOS, "events.desc")
_ROOT_PROTO = "tensorboard/compat/proto/event.proto"

_type = None  # the loaded codec.decode.messages.MessageType, once


def event_type():
    """The Event message type (a :class:`codec.decode.messages.MessageType`), loaded once."""
    global _type
    if _type is None:
        from codec.decode.messages import load_message_type

        _type = load_message_type(_DESCRIPTOR_SET, EVENT_TYPE)
    return _type


def event_class() -> Any:
    """The generated ``Event`` class (upb), to parse or write events."""
    return event_type().message_class


def is_event_file_name(name: str) -> bool:
    """TensorBoard's own rule: an event file has ``tfevents`` in its base name (``events.out.tfevents.*``)."""
    return "tfevents" in os.path.basename(name.rstrip("/"))


def is_file_version_event(data: bytes) -> bool:
    """Is ``data`` the first record of an event file: an Event whose ``file_version`` starts ``brain.Event:``?"""
    from google.protobuf.message import DecodeError

    try:
        event = event_class().FromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError):
        return False
    return event.file_version.startswith(FILE_VERSION_PREFIX)


class EventPayload:
    """Decodes every record as an ``Event`` (kind ``event``); ``runs`` maps a file to its run in a log folder,
    which a ``cat --json`` line then names (``"run"``)."""

    name = EVENT_TYPE

    def __init__(self, runs: dict[str, str] | None = None) -> None:
        from codec.decode.decoded import RecordKind

        self.runs = dict(runs or {})
        self._type = event_type()
        self._message, self._event = RecordKind.MESSAGE, RecordKind.EVENT

    def __repr__(self) -> str:
        return f"EventPayload({len(self.runs)} files in runs)"

    def describe(self) -> str:
        """One line for ``info``."""
        return "TensorBoard events (tensorboard.Event, from TensorBoard's event.proto)"

    def decode(self, data: bytes) -> DecodedRecord:
        """The record as an Event (EVENT), or RAW with a note saying why not; never raises. Its images, audio
        and tree are its summaries' (:mod:`codec.decode.event_media`), read when asked for."""
        decoded = self._type.decode(data)
        if decoded.kind is self._message:
            decoded.kind = self._event
            event = decoded.message
            decoded.images = lambda: _media().event_images(event)
            decoded.audio = lambda: _media().event_audio(event)
            decoded.tree = lambda: _media().event_tree(event)
        return decoded

    def run_of(self, path: str | None) -> str | None:
        """The run of a log folder's file (None for a file named on its own)."""
        return self.runs.get(path) if path is not None else None

    def line_extras(self, decoded: DecodedRecord, path: str | None) -> dict:
        """``{"run": name}`` for a record of a log folder's file; nothing otherwise."""
        run = self.run_of(path)
        return {} if run is None else {"run": run}


def _media() -> Any:
    """codec.decode.event_media, imported when an event's media or tree is first asked for (Pillow, numpy)."""
    from codec.decode import event_media

    return event_media


def compiled_descriptor_set() -> bytes:
    """What protoc (from grpcio-tools) makes of the vendored .proto files now: what ``events.desc`` must hold."""
    import tempfile

    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "events.desc")
        code = protoc.main(["protoc", f"--proto_path={_PROTOS}", "--include_imports", f"--descriptor_set_out={out}",
                            os.path.join(_PROTOS, _ROOT_PROTO)])
        if code != 0:
            raise RuntimeError(f"protoc failed on {_ROOT_PROTO} (exit code {code})")
        with open(out, "rb") as f:
            return f.read()


if __name__ == "__main__":  # python -m codec.decode.events: write events.desc again from the vendored sources
    data = compiled_descriptor_set()
    with open(_DESCRIPTOR_SET, "wb") as f:
        f.write(data)
    print(f"wrote {_DESCRIPTOR_SET} ({len(data):,} bytes)")
