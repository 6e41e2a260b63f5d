"""A record's videos off the GUI thread: open one (frame count, rate, first frame), decode a frame, export frames.

Each function here runs on a worker: the Video tab's one-thread pool for opening and frames (so one
video's decoder is only ever used by one thread), a GeneratorWorker for exporting every frame.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from PySide6.QtGui import QImage

from codec.decode.video import Video, frame_png
from codec.ops.export import image_file_name
from codec.storage.writer import atomic_write_bytes

_FORMATS = {1: QImage.Format.Format_Grayscale8, 3: QImage.Format.Format_RGB888, 4: QImage.Format.Format_RGBA8888}


@dataclass(frozen=True)
class OpenedVideo:
    """What the tab needs to show a video: its frame count and rate, and its first frame."""

    count: int
    rate: float | None
    first: QImage


def pixels_qimage(pixels: np.ndarray) -> QImage:
    """uint8 H x W x C pixels (C 1-4) as a QImage of its own (grey with alpha shown as grey)."""
    if pixels.shape[2] == 2:
        pixels = pixels[:, :, :1]
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    height, width, channels = pixels.shape
    return QImage(pixels.data, width, height, width * channels, _FORMATS[channels]).copy()


def open_video(video: Video) -> OpenedVideo:
    """Count the frames and decode the first (VideoDecodeError, one line, when it does not decode)."""
    count = video.frame_count()
    return OpenedVideo(count, video.frame_rate, pixels_qimage(video.frame(0)))


def frame_image(video: Video, index: int) -> QImage:
    return pixels_qimage(video.frame(index))


def frame_file_name(record: int, video: Video, frame: int) -> str:
    """``000012_video_frame_0003.png``: named as image exports are, then the frame's number as shown."""
    return image_file_name(record, video.key, video.value_index, video.step, "png")[:-4] + f"_frame_{frame:04d}.png"


def save_frame(video: Video, index: int, path: str) -> str:
    """Frame ``index`` as a PNG at ``path``, written atomically; the path."""
    atomic_write_bytes(path, frame_png(video.frame(index)))
    return path


def export_frames(video: Video, record: int, folder: str) -> Iterator[tuple[int, int]]:
    """Every frame as a PNG in ``folder`` (numbered as the tab shows them, from 1), yielding (done, total).

    Decodes with a decoder of its own, so the tab goes on showing frames meanwhile."""
    own = dataclasses.replace(video)
    try:
        total = own.frame_count()
        for n, pixels in enumerate(own.frames()):
            atomic_write_bytes(os.path.join(folder, frame_file_name(record, video, n + 1)), frame_png(pixels))
            yield n + 1, total
    finally:
        own.close()
