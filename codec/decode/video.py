"""Video in a decoded record: TFDS ``Video`` features, lists of encoded frames, and encoded video bytes.

Frames decode lazily, one at a time, as uint8 H x W x C pixels; encoded video (MP4, WebM, Matroska,
AVI) decodes through PyAV, an optional extra. The rules are the ones docs/media.md states.
"""
from __future__ import annotations

import hashlib
import io
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from codec.decode.decoded import DecodedRecord
from codec.decode.decoder import feature_dtype, feature_values, number_beside, record_feature_lists, record_features
from codec.decode.image_sniff import probe_image
from codec.decode.images import ImageDecodeError, ImageRef, decode_image
from codec.decode.media_lines import media_line
from codec.errors import TFRecordError

__all__ = ["DEFAULT_FRAME_RATE", "VIDEO_HINT", "NoVideoStream", "Video", "VideoDecodeError", "find_videos", "frame_png",
           "sniff_video", "video_media"]

VIDEO_HINT = "encoded video needs PyAV: pip install 'tfrecord-lens[video]'"
DEFAULT_FRAME_RATE = 10.0  # what the app plays at when nothing says a rate
RATE_NAMES = ("frame_rate", "fps", "framerate", "frames_per_second")
# A key's last part holding one of these words names a list of frames in an Example (``video/frames``).
FRAME_WORDS = frozenset({"video", "frames", "frame", "clip"})
CACHE_FRAMES = 32  # decoded frames an encoded video keeps (a step back within them decodes nothing)
# ISO base media brands that are still images or audio, not video.
_NOT_VIDEO_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1", b"avif", b"avis",
                     b"M4A ", b"M4B ", b"M4P ", b"F4A "}


class VideoDecodeError(TFRecordError, ValueError):
    """A video whose frames do not decode, disagree in size, or need PyAV that is not installed."""


class NoVideoStream(VideoDecodeError):
    """Container bytes (MP4, WebM...) that hold no video stream: audio, not video."""


# ---------------------------------------------------------------- the videos


@dataclass(eq=False)
class Video:
    """One video of a record. ``source`` is "tfds" (a TFDS Video's decoded frames), "frames" (a list of
    encoded images: a SequenceExample feature list or an Example list named like frames) or "encoded"
    (video bytes); ``codec`` the frames' image format (png, jpeg) or the container (mp4, webm, mkv, avi).
    ``frame(i)`` is frame ``i`` (from 0) as uint8 H x W x C pixels, decoded on first use."""

    key: str
    source: str
    codec: str
    step: int | None = None
    value_index: int = 0
    feature_rate: float | None = None  # from a feature beside it (docs/media.md)
    array: np.ndarray | None = field(default=None, repr=False)  # tfds: T x H x W x C
    refs: list[ImageRef] = field(default_factory=list, repr=False)  # frames
    data: bytes = field(default=b"", repr=False)  # encoded
    error: str | None = None  # known before decoding (a TFDS value that did not decode)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._stream: _Stream | None = None

    @property
    def frame_rate(self) -> float | None:
        """Frames per second: the container's for encoded video (else a feature's), a feature's for the
        rest; None when nothing says (the app then plays at DEFAULT_FRAME_RATE)."""
        if self.source == "encoded":
            return self._open().rate or self.feature_rate
        return self.feature_rate

    def frame_count(self) -> int:
        """How many frames (for encoded video: video packets in the container, counted without decoding)."""
        self._check()
        if self.array is not None:
            return int(self.array.shape[0])
        if self.refs:
            return len(self.refs)
        return self._open().count

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as uint8 H x W x C pixels (C is 1, 3 or 4; encoded video is RGB)."""
        self._check()
        if not 0 <= i < self.frame_count():
            raise VideoDecodeError(f"{self.key}: no frame {i} in {self.frame_count()} frames")
        if self.array is not None:
            return self.array[i]
        with self._lock:
            if i in self._cache:
                self._cache.move_to_end(i)
                return self._cache[i]
            pixels = _image_pixels(self.refs[i]) if self.refs else self._open().frame(i, self._remember)
            self._remember(i, pixels)
            return pixels

    def frames(self) -> Iterator[np.ndarray]:
        """Every frame in order (encoded video decoded once, start to end)."""
        self._check()
        if self.source == "encoded":
            yield from self._open().decode_all()
        else:
            for i in range(self.frame_count()):
                yield self.frame(i)

    def summary(self) -> tuple[int, tuple[int, int, int, int], str]:
        """(frames, [T, H, W, C], sha256 of the frames as uint8 T x H x W x C in C order), all decoded;
        VideoDecodeError when frames do not decode or differ in size."""
        digest = hashlib.sha256()
        count, size = 0, None
        for pixels in self.frames():
            if size is None:
                size = pixels.shape
            elif pixels.shape != size:
                raise VideoDecodeError(f"{self.key}: frame {count} is {_dims(pixels.shape)}, frame 0 {_dims(size)}")
            digest.update(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes())
            count += 1
        if size is None:
            raise VideoDecodeError(f"{self.key}: no frames decode")
        return count, (count, *size), digest.hexdigest()

    def close(self) -> None:
        """Let go of an encoded video's decoder (it opens again on the next frame asked for)."""
        with self._lock:
            if self._stream is not None:
                self._stream.close()
            self._stream = None
            self._cache.clear()

    def _check(self) -> None:
        if self.error is not None:
            raise VideoDecodeError(self.error)

    def _remember(self, i: int, pixels: np.ndarray) -> None:
        self._cache[i] = pixels
        self._cache.move_to_end(i)
        while len(self._cache) > CACHE_FRAMES:
            self._cache.popitem(last=False)

    def _open(self) -> _Stream:
        if self._stream is None:
            self._stream = _Stream(self.data, self.key)
        return self._stream


def _dims(shape: tuple) -> str:
    return "×".join(str(n) for n in shape)


def _image_pixels(ref: ImageRef) -> np.ndarray:
    """An encoded frame as uint8 H x W x C (grey 1, colour 3, with alpha 4), high depths scaled to 8 bits."""
    try:
        image = decode_image(ref)
    except ImageDecodeError as exc:
        raise VideoDecodeError(str(exc)) from None
    if image.mode not in ("L", "RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    pixels = np.asarray(image, dtype=np.uint8)
    return pixels[:, :, None] if pixels.ndim == 2 else pixels


# ---------------------------------------------------------------- encoded video (PyAV)


def _av() -> Any:
    try:
        import av
    except ImportError:
        raise VideoDecodeError(VIDEO_HINT) from None
    return av


class _Stream:
    """An encoded video's first video stream: its packet count and rate, and frames decoded in order
    (a frame before the decoder's position starts it again from the first frame)."""

    def __init__(self, data: bytes, key: str) -> None:
        self._av = _av()
        self._data, self._key = data, key
        self._errors = (self._av.FFmpegError, ValueError, IndexError, OSError, EOFError)
        self._container: Any = None
        self._decoding: Iterator[np.ndarray] | None = None
        self._next = 0
        container = self._container_or_error()
        try:
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate or stream.base_rate
            self.rate = float(rate) if rate and math.isfinite(float(rate)) and float(rate) > 0 else None
            self.count = sum(1 for packet in container.demux(stream) if packet.size)
        except self._errors as exc:
            raise self._failed(exc) from None
        finally:
            container.close()

    def _container_or_error(self) -> Any:
        try:
            container = self._av.open(io.BytesIO(self._data), mode="r")
        except self._errors as exc:
            raise self._failed(exc) from None
        if not container.streams.video:
            container.close()
            raise NoVideoStream(f"{self._key}: no video stream in the container")
        return container

    def _failed(self, exc: Exception) -> VideoDecodeError:
        why = getattr(exc, "strerror", None) or str(exc)  # FFmpeg's reason without its errno and '<none>' file
        return VideoDecodeError(f"{self._key}: the video does not decode: {' '.join(why.split())}")

    def _restart(self) -> Iterator[np.ndarray]:
        self.close()
        container = self._container = self._container_or_error()
        self._decoding = (f.to_ndarray(format="rgb24") for f in container.decode(video=0))
        self._next = 0
        return self._decoding

    def frame(self, i: int, passed: Any) -> np.ndarray:
        """Frame ``i``; each frame decoded on the way is handed to ``passed(n, pixels)`` (the cache)."""
        decoding = self._restart() if self._decoding is None or i < self._next else self._decoding
        try:
            while True:
                pixels = next(decoding)
                self._next += 1
                if self._next - 1 == i:
                    return pixels
                passed(self._next - 1, pixels)
        except StopIteration:
            raise VideoDecodeError(f"{self._key}: frame {i} does not decode ({self._next} of "
                                   f"{self.count} frames did)") from None
        except self._errors as exc:
            self._decoding = None
            raise self._failed(exc) from None

    def decode_all(self) -> Iterator[np.ndarray]:
        container = self._container_or_error()
        try:
            for frame in container.decode(video=0):
                yield frame.to_ndarray(format="rgb24")
        except self._errors as exc:
            raise self._failed(exc) from None
        finally:
            container.close()

    def close(self) -> None:
        if self._container is not None:
            self._container.close()
        self._container = self._decoding = None


def sniff_video(data: bytes) -> str | None:
    """The container of encoded video bytes by their first bytes (mp4, mov, webm, mkv, avi), else None."""
    head = bytes(data[:64])
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in _NOT_VIDEO_BRANDS:
            return None
        return "mov" if brand == b"qt  " else "mp4"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "webm" if b"webm" in head else "mkv"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "avi"
    return None


# ---------------------------------------------------------------- finding


def _key_words(part: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", part.lower()) if w}


def _rate_beside(features: Any, key: str) -> float | None:
    """A frame rate beside ``key``: a positive number under RATE_NAMES (decoder.number_beside's places)."""
    value = number_beside(features, key, RATE_NAMES, "video")
    return None if value is None else float(value)


def _frame_refs(key: str, frames: list[tuple[int | None, Any]]) -> list[ImageRef] | None:
    """ImageRefs of encoded frames (step, bytes), or None when any is not an encoded image."""
    refs = []
    for step, value in frames:
        info = probe_image(value)
        if info is None:
            return None
        refs.append(ImageRef(key, 0, step, "encoded", info.format, info.width, info.height, info.channels,
                             bytes(value)))
    return refs


def _tfds_videos(decoded: DecodedRecord, features: Any) -> list[Video]:
    """A TFDS record's Video features (its payload's decoded values), by duck type: datasets sits above."""
    values = decoded.value if isinstance(decoded.value, dict) else {}
    out = []
    for key in sorted(values):
        spec = getattr(getattr(values[key], "leaf", None), "spec", None)
        if getattr(spec, "kind", None) != "video":
            continue
        value = values[key]
        codec = getattr(getattr(spec, "feature", None), "encoding", "") or "frames"
        array = value.array if value.note is None else None
        error = None if array is not None else (value.note or f"{key}: the video did not decode")
        out.append(Video(key, "tfds", codec, feature_rate=_rate_beside(features, key), array=array, error=error))
    return out


def _encoded(key: str, dtype: str | None, values: list, step: int | None, rate: float | None) -> list[Video]:
    if dtype != "bytes":
        return []
    found = ((n, value, sniff_video(value)) for n, value in enumerate(values))
    return [Video(key, "encoded", codec, step, n, rate, data=bytes(value)) for n, value, codec in found if codec]


def _frame_list(key: str, frames: list[tuple[int | None, Any]], rate: float | None) -> list[Video]:
    refs = _frame_refs(key, frames) if len(frames) >= 2 else None
    return [Video(key, "frames", refs[0].format.lower(), feature_rate=rate, refs=refs)] if refs else []


def find_videos(decoded: DecodedRecord) -> list[Video]:
    """Every video of a record, keys in sorted order: TFDS Video features, encoded video bytes in any bytes
    feature, an Example's list of 2+ encoded images under a key naming frames, and a SequenceExample feature
    list of 2+ steps holding one encoded image each. Nothing is decoded here; never raises for odd data."""
    features = record_features(decoded) or {}
    videos = _tfds_videos(decoded, features)
    taken = {video.key for video in videos}
    for key in sorted(features):
        if key in taken:
            continue
        if feature_dtype(features[key]) != "bytes":  # (encoded video and frame lists are bytes)
            continue
        dtype, values = feature_values(features[key])
        rate = _rate_beside(features, key)
        videos.extend(_encoded(key, dtype, values, None, rate))
        if dtype == "bytes" and _key_words(key.rpartition("/")[2]) & FRAME_WORDS:
            videos.extend(_frame_list(key, [(None, v) for v in values], rate))
    lists = record_feature_lists(decoded) or {}
    for key in sorted(lists):
        rate = _rate_beside(features, key)
        steps = [feature_values(feature) for feature in lists[key].feature]
        for step, (dtype, values) in enumerate(steps):
            videos.extend(_encoded(key, dtype, values, step, rate))
        if all(dtype == "bytes" and len(values) == 1 for dtype, values in steps):
            videos.extend(_frame_list(key, [(step, values[0]) for step, (_d, values) in enumerate(steps)], rate))
    return videos


# ---------------------------------------------------------------- outputs


def frame_png(pixels: np.ndarray) -> bytes:
    """One frame's pixels (uint8 H x W x C, C 1-4) as PNG bytes that decode to the same pixels."""
    from PIL import Image

    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[pixels.shape[2]]
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels[:, :, 0] if mode == "L" else pixels), mode).save(out, "PNG")
    return out.getvalue()


def video_media(index: int, decoded: DecodedRecord) -> list[dict]:
    """``media``'s lines for the videos of record ``index``: codec, frames, [T, H, W, C], frame rate and the
    frames' sha256; a video that does not decode has an ``error`` and null figures. Encoded bytes whose
    container holds no video stream (audio in MP4 or WebM) are not video and are left out."""
    lines = []
    for video in find_videos(decoded):
        line = media_line(index, video.key, "video", video.codec, video.step, video.value_index)
        try:
            frames, shape, sha = video.summary()
            line.update(frames=frames, shape=list(shape), frame_rate=video.frame_rate, sha256=sha)
        except NoVideoStream:
            continue
        except VideoDecodeError as exc:
            line.update(frames=None, shape=None, frame_rate=video.feature_rate, sha256=None, error=str(exc))
        finally:
            video.close()
        lines.append(line)
    return lines
