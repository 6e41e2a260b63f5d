"""A log folder with image, text and audio summaries of both TensorFlow eras, written with the Event class the
codec loads (TensorBoard's own .proto files) and the project's TFRecord writer; shared by the codec and app tests."""
from __future__ import annotations

import io
import os

import numpy as np
from PIL import Image

from codec.decode.events import event_class
from codec.storage.writer import write_records

WALL_TIME = 1795775431.5  # 2026-11-27T10:30:31.500Z
DT_FLOAT, DT_STRING = 1, 7
RECORDS = {"scalar": 1, "tf2_images": 2, "tf1_image": 3, "tf2_text": 4, "tf2_audio": 5, "tf1_audio": 6,
           "tf1_scalar": 7, "tf2_image_later": 8, "tf1_text": 9}
TEXT = "héllo *world*\nline two"


def png(color: tuple[int, int, int], size: tuple[int, int] = (6, 4)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def wav(frames: int = 800, rate: int = 8000) -> bytes:
    import soundfile

    out = io.BytesIO()
    samples = (np.sin(np.arange(frames) / 5) * 8000).astype(np.int16)
    soundfile.write(out, samples, rate, subtype="PCM_16", format="WAV")
    return out.getvalue()


IMAGES = {"red": png((255, 0, 0)), "green": png((0, 255, 0)), "blue": png((0, 0, 255), (5, 3)),
          "grey": png((90, 90, 90))}


def _event(step: int):
    return event_class()(wall_time=WALL_TIME + step, step=step)


def _value(event, tag: str, plugin: str = ""):
    value = event.summary.value.add(tag=tag)
    if plugin:
        value.metadata.plugin_data.plugin_name = plugin
    return value


def _strings(value, strings: list[bytes], shape: list[int]) -> None:
    value.tensor.dtype = DT_STRING
    for size in shape:
        value.tensor.tensor_shape.dim.add(size=size)
    value.tensor.string_val.extend(strings)


def media_events(clip: bytes) -> list[bytes]:
    """The records of the log, in order (RECORDS names them by number)."""
    events = [event_class()(wall_time=WALL_TIME, file_version="brain.Event:2")]
    e = _event(1)  # TF2 scalar
    v = _value(e, "loss", "scalars")
    v.tensor.dtype = DT_FLOAT
    v.tensor.float_val.append(0.5)
    events.append(e)
    e = _event(2)  # TF2 images: [width, height, png, png]
    _strings(_value(e, "samples", "images"), [b"6", b"4", IMAGES["red"], IMAGES["green"]], [4])
    events.append(e)
    e = _event(3)  # TF1 image
    v = _value(e, "input")
    v.image.height, v.image.width, v.image.colorspace = 3, 5, 3
    v.image.encoded_image_string = IMAGES["blue"]
    events.append(e)
    e = _event(4)  # TF2 text
    _strings(_value(e, "notes", "text"), [TEXT.encode()], [])
    events.append(e)
    e = _event(5)  # TF2 audio: rows of [clip, label]
    _strings(_value(e, "speech", "audio"), [clip, b"a label"], [1, 2])
    events.append(e)
    e = _event(6)  # TF1 audio
    v = _value(e, "voice")
    v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames = 8000, 1, 800
    v.audio.encoded_audio_string, v.audio.content_type = clip, "audio/wav"
    events.append(e)
    e = _event(7)  # TF1 scalar
    _value(e, "acc").simple_value = 0.75
    events.append(e)
    e = _event(8)  # TF2 images later: the writer leaves the plugin out after a tag's first value
    _strings(_value(e, "samples"), [b"6", b"4", IMAGES["grey"]], [3])
    events.append(e)
    e = _event(9)  # TF1 text (tf.compat.v1.summary.text): a string tensor of the text plugin, two strings
    _strings(_value(e, "log", "text"), [b"first", b"second"], [2])
    events.append(e)
    return [event.SerializeToString() for event in events]


def write_media_log(folder: str | os.PathLike, run: str = "train") -> str:
    """A log folder holding one run, ``run``, whose event file holds :func:`media_events`; the event file's path."""
    path = os.path.join(os.fspath(folder), run, "events.out.tfevents.1795775431.vm.1.0.v2")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_records(path, media_events(wav()))
    return path
