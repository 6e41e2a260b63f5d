"""A TensorBoard Event's summaries as what the rest of the codec reads: images, audio, text, a tree named by tag.

Images: TF2 ``images`` plugin string tensors ``[width, height, encoded image...]`` and TF1
``Summary.Value.image``. Audio: TF2 ``audio`` plugin string tensors (rows of ``[encoded clip, label]``)
and TF1 ``Summary.Value.audio``. Text: ``text`` plugin string tensors (TF2 and TF1 alike). A writer
names a tag's plugin only on its first value, so a value without one is read by its content: encoded
images and audio by their bytes, a one-number tensor as a scalar, a tensor of UTF-8 strings as text.
Media are keyed by the value's tag (``value_index`` counts a tag's images or clips in one event).
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from codec.decode.audio import AudioRef, sniff_audio
from codec.decode.decoded import TreeNode, is_text
from codec.decode.image_sniff import probe_image
from codec.decode.images import ImageRef
from codec.decode.message_view import message_tree
from codec.errors import TFRecordError

__all__ = ["event_audio", "event_caption", "event_images", "event_tree", "summary_kind"]

IMAGES, AUDIO, TEXT, SCALARS = "images", "audio", "text", "scalars"
_DT_STRING = 7
_MAX_CAPTION_TAGS = 3


def _plugin(value: Any) -> str:
    return value.metadata.plugin_data.plugin_name if value.HasField("metadata") else ""


def _strings(value: Any) -> list[bytes]:
    """A string tensor's elements; [] for a value that is not one."""
    if value.WhichOneof("value") != "tensor" or value.tensor.dtype != _DT_STRING:
        return []
    return [bytes(s) for s in value.tensor.string_val]


def _sized(strings: list[bytes]) -> bool:
    """The images plugin's layout: width and height as decimal text, then the encoded images."""
    return len(strings) >= 2 and all(s.isdigit() for s in strings[:2])


def _image_payloads(value: Any) -> list[bytes]:
    """The bytes of a value that hold encoded images (a TF1 image; an images plugin tensor's entries after the size)."""
    what = value.WhichOneof("value")
    if what == "image":
        return [bytes(value.image.encoded_image_string)]
    plugin = _plugin(value)
    if plugin not in ("", IMAGES):
        return []
    strings = _strings(value)
    return strings[2:] if _sized(strings) else strings if not plugin else []


def _clips(value: Any) -> tuple[list[bytes], bool]:
    """(the encoded clips of a value, whether its schema says they are audio): a TF1 audio value; an audio plugin
    tensor's first column (its rows are ``[clip, label]``); elsewhere string entries whose bytes are audio."""
    what = value.WhichOneof("value")
    if what == "audio":
        return [bytes(value.audio.encoded_audio_string)], True
    plugin = _plugin(value)
    if plugin not in ("", AUDIO):
        return [], False
    strings = _strings(value)
    dims = [d.size for d in value.tensor.tensor_shape.dim] if strings else []
    if len(dims) == 2 and dims[1] == 2 and len(strings) == 2 * dims[0]:
        strings = strings[0::2]
    return strings, plugin == AUDIO


def event_images(event: Any) -> list[ImageRef]:
    """The encoded images of an Event's image summaries, keyed by tag, in value order; bytes that are no
    image are left out, as elsewhere."""
    refs: list[ImageRef] = []
    for value in event.summary.value:
        n = 0
        for data in _image_payloads(value):
            info = probe_image(data)
            if info is not None:
                refs.append(ImageRef(value.tag, n, None, "encoded", info.format, info.width, info.height,
                                     info.channels, data))
                n += 1
    return refs


def event_audio(event: Any) -> list[AudioRef]:
    """The clips of an Event's audio summaries, keyed by tag: found by their bytes (WAV, FLAC, Ogg, MP3), or,
    where the summary says it is audio, for libsndfile to try (an empty one with its problem)."""
    return [ref for value in event.summary.value for ref in _value_audio(value)]


def _value_audio(value: Any) -> list[AudioRef]:
    refs: list[AudioRef] = []
    clips, meant = _clips(value)
    for data in clips:
        found = sniff_audio(data)
        if found is None or found[1]:  # not audio by its bytes: only where the summary says it is
            if not meant:
                continue
            found = (found[0] if found else "unknown", False)
        problem = None if data else f"{value.tag}: empty (0 bytes)"
        refs.append(AudioRef(value.tag, found[0], len(refs), data=data, problem=problem))
    return refs


def _texts(value: Any) -> list[str] | None:
    """A text summary's strings (decoded UTF-8), or None: a text plugin tensor, or, without a plugin, a string
    tensor whose entries are all text and not an image summary's size."""
    plugin = _plugin(value)
    strings = _strings(value)
    if not strings or plugin not in ("", TEXT):
        return None
    if not plugin and (_sized(strings) or not all(is_text(s) for s in strings)):
        return None
    return [s.decode("utf-8", "backslashreplace") for s in strings]


def _scalar(value: Any) -> tuple[str, float | int | bool] | None:
    """(dtype, number) of a TF1 ``simple_value`` or a tensor holding one number; None otherwise."""
    what = value.WhichOneof("value")
    if what == "simple_value":
        return "float", value.simple_value
    if what != "tensor" or value.tensor.dtype == _DT_STRING or _plugin(value) not in ("", SCALARS):
        return None
    from codec.decode.tensors import decode_tensor

    try:
        array = decode_tensor(value.tensor.SerializeToString())
    except (TFRecordError, ValueError):
        return None
    if array.size != 1 or array.dtype.kind not in "biuf":
        return None
    number = array.reshape(-1)[0].item()
    dtype = "double" if array.dtype.kind == "f" and array.dtype.itemsize == 8 else \
        "float" if array.dtype.kind == "f" else "bool" if array.dtype.kind == "b" else "int64"
    return dtype, number


def summary_kind(value: Any) -> str:
    """What a summary value holds, as a person reads it: its plugin's name (``scalars``, ``images``, ``text``,
    ``audio``, ``histograms``...), else the TF1 field (``simple_value``, ``image``, ``audio``, ``histo``),
    else what its tensor's content says, else ``tensor``."""
    plugin = _plugin(value)
    if plugin:
        return plugin
    what = value.WhichOneof("value")
    if what != "tensor":
        return what or "empty"
    if any(probe_image(data) is not None for data in _image_payloads(value)):
        return IMAGES
    if _value_audio(value):
        return AUDIO
    if _texts(value) is not None:
        return TEXT
    return SCALARS if _scalar(value) is not None else "tensor"




# ---------------------------------------------------------------- the tree


def _time_text(wall_time: float) -> str | None:
    """``2026-11-28T05:23:53.500Z`` (RFC 3339, UTC, milliseconds); None for a time no date holds."""
    if not math.isfinite(wall_time):
        return None
    try:
        moment = datetime.fromtimestamp(wall_time, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _readable(value: Any, path: tuple) -> list[TreeNode]:
    """The rows put first under a summary value: its number (a tensor's), text, images or clips."""
    def row(name: str, dtype: str, values: list) -> list[TreeNode]:
        return [TreeNode(name=name, role="field", dtype=dtype, values=values, path=path + (name,))]

    if value.WhichOneof("value") == "simple_value":
        return []  # shown as it is already
    scalar = _scalar(value)
    if scalar is not None:
        return row("scalar", scalar[0], [scalar[1]])
    texts = _texts(value)
    if texts is not None:
        return row("text", "string", texts)
    images = [data for data in _image_payloads(value) if probe_image(data) is not None]
    if images:
        return row("images", "bytes", images)
    clips = [ref.data for ref in _value_audio(value)]
    return row("clips", "bytes", clips) if clips else []


def event_tree(event: Any) -> TreeNode:
    """An Event's tree: the message's fields, with its time in UTC beside ``wall_time``, and its summary as a map
    of its values by tag (role "map", no ``value`` level between), each typed by what it holds
    (:func:`summary_kind`) with its scalar, text, images or clips as its first row; a tag node's ``values`` are
    that row's, for a view to show on the tag's own row. Paths stay the message's (``summary/value/0/tag``)."""
    root = message_tree(event)
    for i, node in enumerate(root.children):
        if node.name == "wall_time":
            shown = _time_text(event.wall_time)
            if shown is not None:
                root.children.insert(i + 1, TreeNode(name="time (UTC)", role="field", dtype="timestamp",
                                                     values=[shown], path=("time",)))
            break
    summary = next((n for n in root.children if n.name == "summary" and n.role == "message"), None)
    values = next((n for n in summary.children if n.name == "value"), None) if summary is not None else None
    if summary is None or values is None or values.role != "repeated" or len(summary.children) != 1:
        return root
    for node, value in zip(values.children, event.summary.value):
        node.name = value.tag or node.name
        node.dtype = summary_kind(value)
        readable = _readable(value, node.path)
        node.children[:0] = readable
        node.values = list(readable[0].values) if readable else []
    summary.role, summary.children = "map", values.children
    return root


def event_caption(event: Any, run: str | None) -> str:
    """A gallery tile's words: ``samples · step 20 · train`` (the tags holding images or audio, else every tag;
    the step; the run): a narrow tile cuts the end, and tag and step tell a run's tiles apart."""
    media = [ref.key for ref in event_images(event)] + [ref.key for ref in event_audio(event)]
    tags = list(dict.fromkeys(media or [v.tag for v in event.summary.value]))
    shown = ", ".join(tags[:_MAX_CAPTION_TAGS]) + (f" (+{len(tags) - _MAX_CAPTION_TAGS})"
                                                   if len(tags) > _MAX_CAPTION_TAGS else "")
    return " · ".join(part for part in (shown, f"step {event.step}", run) if part)
