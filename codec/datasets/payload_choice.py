"""What the command line's payload options and a path's surroundings say about how records decode.

``--proto FILE --type NAME`` decodes every record as the user's own message;
a TFDS dataset folder (``features.json`` beside the shards) decodes per its
feature spec; ``--label-map FILE``, or a ``label_map.pbtxt`` found beside
the file or in its folder, gives class ids their names. :func:`choose`
gathers all of it once per command, before any file is opened.
"""
from __future__ import annotations

import os

from codec.errors import UsageError

# typing and dataclasses cost ~14 ms to import, which a one-record `cat` should not pay.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Sequence

LABEL_MAP_NAME = "label_map.pbtxt"  # found on its own beside a file, or in a folder

__all__ = ["Choice", "add_arguments", "apply", "choose", "choose_for", "info_lines", "record_text"]


class Choice:
    """The payload, the label names and the TFDS dataset (if any) a command reads its files with.

    ``labels``: a :class:`codec.datasets.label_maps.LabelNames` or None; ``dataset``: a
    :class:`codec.datasets.tfds.TfdsDataset` or None; ``files``: what to open (the
    arguments, or a dataset's shards).
    """

    __slots__ = ("payload", "labels", "dataset", "files", "notes")

    def __init__(self, payload: Any = None, labels: Any = None, dataset: Any = None,
                 files: list[str] | None = None) -> None:
        self.payload = payload
        self.labels = labels
        self.dataset = dataset
        self.files = list(files or [])
        self.notes: list[str] = []  # one line each: what was found but not used (a broken label map beside)

    def __repr__(self) -> str:
        return f"Choice(payload={self.payload!r}, labels={self.labels!r}, files={self.files!r})"


def add_arguments(parser) -> None:
    """``--proto``, ``--type`` and ``--label-map`` on a subcommand's parser."""
    parser.add_argument("--proto", metavar="FILE",
                        help="decode records as a protobuf message: a descriptor set (.desc/.pb/.protoset, "
                             "from protoc --include_imports --descriptor_set_out) or a .proto source; "
                             "give the message with --type")
    parser.add_argument("--type", metavar="NAME", help="the message type for --proto, e.g. my.package.Frame")
    parser.add_argument("--label-map", metavar="FILE",
                        help="class names for label ids (label_map.pbtxt, JSON or labels.txt; default: a "
                             "label_map.pbtxt beside the file)")


def choose(args, files: Sequence[str]) -> Choice:
    """The payload and names for ``files`` per a command's ``args``; a bad option is a :class:`UsageError`."""
    return choose_for(files, proto=getattr(args, "proto", None), type_name=getattr(args, "type", None),
                      label_map=getattr(args, "label_map", None))


def choose_for(files: Sequence[str], *, proto: str | None = None, type_name: str | None = None,
               label_map: str | None = None) -> Choice:
    """How ``files`` decode: as ``type_name`` from ``proto``, else per a TFDS dataset they are (in), else by
    the kind rule; with names from ``label_map``, else a label map found beside them, else the dataset's."""
    files = [os.fspath(f) for f in files]
    choice = Choice(files=list(files))
    if len(files) == 1 and _beside(files[0], "features.json") is not None:
        from codec.datasets.tfds import TfdsDataset, find_tfds_dir

        folder = find_tfds_dir(files[0])
        if folder is not None:
            choice.dataset = TfdsDataset.open(folder)
            choice.payload = choice.dataset.payload()
            if os.path.isdir(files[0]):
                choice.files = [os.fspath(p) for split in choice.dataset.splits.values() for p in split.files]
                if not choice.files:
                    raise UsageError(f"TFDS dataset {choice.dataset.name} {choice.dataset.version}: no shard "
                                     f"files in {files[0]}")
    elif proto is None and type_name is None and files:
        _event_files(choice, files)
    if proto is not None or type_name is not None:  # the user's type, over a dataset's spec too
        if proto is None or type_name is None:
            raise UsageError("--proto and --type go together: --proto FILE --type full.MessageName")
        from codec.decode.messages import load_message_type

        choice.payload = load_message_type(proto, type_name)
    choice.labels = _labels(label_map, files, choice)
    return choice


def _event_files(choice: Choice, files: list[str]) -> None:
    """TensorBoard event files decode as Events; a log folder opens as its runs' files, run by run."""
    from codec.datasets.event_logs import is_event_file, is_log_folder, log_runs

    if len(files) == 1 and is_log_folder(files[0]):
        from codec.decode.events import EventPayload

        runs = log_runs(files[0])
        choice.files = [path for run in runs for path in run.files]
        choice.payload = EventPayload({path: run.name for run in runs for path in run.files})
    elif all(not os.path.isdir(path) and is_event_file(path) for path in files):
        from codec.decode.events import EventPayload

        choice.payload = EventPayload()


def _beside(path: str, name: str) -> str | None:
    """``name`` in the folder ``path`` is, or beside the file ``path``, if it is a file there.

    A stat, not a listing: a folder of 10,000 shards costs nothing, and
    neither module that reads these files is imported when there are none.
    Never beside a URL: that would cost a request per command (give ``--label-map``).
    """
    if "://" in path:
        from codec.storage.remote import is_url

        if is_url(path):
            return None
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    candidate = os.path.join(folder, name)
    return candidate if os.path.isfile(candidate) else None


def _labels(path: str | None, files: Sequence[str], choice: Choice):
    if path is None and choice.dataset is None and len(files) == 1:
        found = _beside(files[0], LABEL_MAP_NAME)
        if found is not None:
            from codec.datasets.label_maps import LabelNames, load_label_map
            from codec.errors import SchemaError

            try:
                return LabelNames.for_map(load_label_map(found))
            except SchemaError as exc:  # found, not asked for: the records still read, without names
                choice.notes.append(f"not used: {exc}")
                return None
    if path is not None:
        from codec.datasets.label_maps import LabelNames, load_label_map

        return LabelNames.for_map(load_label_map(path))
    if choice.dataset is not None:
        names = choice.dataset.payload_label_names()
        if names:
            from codec.datasets.label_maps import LabelNames

            return LabelNames.from_lists(names)
    return None


def apply(choice: Choice, source) -> None:
    """Give an opened source the chosen payload and label names."""
    source.payload = choice.payload
    source.labels = choice.labels


def info_lines(choice: Choice, source) -> tuple[list[str], list[str]]:
    """``info``'s lines on the payload, the label names and a TFDS dataset, and the dataset's count mismatches
    (records per split against ``dataset_info.json``)."""
    lines: list[str] = []
    if choice.payload is not None and getattr(choice.payload, "dataset", None) is None:
        lines.append(f"decoded as:  {choice.payload.describe()}")
    if choice.labels is not None:
        lines.append(f"label names: {choice.labels.describe()}")
    if choice.dataset is None:
        return lines, []
    dataset = choice.dataset
    lines.extend(dataset.describe())
    shards = getattr(source, "shards", None)
    if shards is None:  # one shard: its own count
        expected = dataset.shard_examples(source.path)
        mismatches = [] if expected is None or expected == len(source) else [
            f"{os.path.basename(source.path)}: {len(source):,} records, dataset_info.json says {expected:,}"]
    else:
        counts = dict.fromkeys(dataset.splits, 0)  # a split whose shards are all missing counts 0
        for shard in shards:
            split = dataset.split_of(shard.path)
            if split is not None:
                n = len(shard.file.index) if shard.file is not None and shard.error is None else 0
                counts[split] = counts.get(split, 0) + n
        mismatches = dataset.check_counts(counts)
    lines.extend(f"mismatch:    {line}" for line in mismatches)
    return lines, mismatches


def record_text(decoded) -> str:
    """``cat``'s text for one record: protobuf text format, a tensor's values, ``protoc --decode_raw``'s view."""
    from codec.decode.decoder import RecordKind

    if decoded.kind is RecordKind.TENSOR:
        import numpy as np

        from codec.decode.tensor_view import tensor_label
        from codec.decode.tensors import tensor_of

        array = tensor_of(decoded)
        with np.printoptions(threshold=200, edgeitems=4):
            return f"tensor {tensor_label(array)}\n{array!r}"
    if decoded.kind is RecordKind.PROTOBUF:
        from codec.decode.schemaless import wire_text

        return "protobuf (no schema)\n" + wire_text(decoded.value).rstrip()
    note = "" if decoded.note is None else f"# {decoded.note}\n"
    if decoded.message is None:
        import base64

        return note + "raw base64: " + base64.b64encode(decoded.data).decode()
    from google.protobuf import text_format

    return note + text_format.MessageToString(decoded.message, as_utf8=True).rstrip()
