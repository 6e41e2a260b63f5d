"""Gallery thumbnails made on a thread pool, most wanted first.

:func:`make_thumbnail` reads one record and makes its tile: the image
(``codec.decode.images.thumbnail``, which decodes JPEGs at a reduced scale), its
boxes, masks, keypoints and class maps scaled to the thumbnail, and a caption. :class:`ThumbnailLoader` runs
those jobs on a private ``QThreadPool``; :meth:`ThumbnailLoader.want`
replaces the queue, so requests for tiles scrolled away are dropped before
they cost anything. Results arrive as ``ready(ThumbResult)`` on the GUI
thread. :func:`sample_keys` looks at the first records to offer image and
caption features to choose from. Records decode with their source's payload
and captions name class ids when the source knows them (``source``: anything
with ``payload`` and ``labels``, as every record source has).
"""
from __future__ import annotations

import sys
import threading
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Iterable

from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal

from app.models.labels import STATUS_TEXT, caption_text
from app.models.overlay_layers import build_layers
from app.models.qimage import to_qimage
from app.models.tiles import AUDIO_ASPECT, ThumbRequest, ThumbResult, waveform_image
from app.style import palette
from app.workers.worker import GUI_SWITCH_INTERVAL, PAINT_GATE, one_line
from codec.decode.audio import AudioDecodeError, find_audio
from codec.decode.audio_summary import glance_text, tile_envelope, tile_text
from codec.decode.decoder import (
    DecodedRecord,
    RecordKind,
    decode_record,
    feature_cell,
    feature_values,
    format_value,
    is_text,
    record_feature_lists,
    record_features,
    shown_values,
)
from codec.decode.event_media import event_caption
from codec.decode.image_boxes import find_boxes
from codec.decode.images import ImageRef, RawShape, find_images, main_image, needs_frame, thumbnail
from codec.decode.tensor_view import tensor_label
from codec.decode.tensors import tensor_of
from codec.errors import ImageDecodeError, UsageError
from codec.format.framing import RecordStatus
from codec.sources.protocol import RecordData

# Tiles whose record is larger than this are not read for the gallery (the detail view still shows it).
MAX_RECORD_BYTES = 64 << 20
MAX_CAPTION_VALUES = 6
SAMPLE_RECORDS = 32

# What a caption feature's name says about it: higher is a better caption.
_TEXT_CLASS_NAMES = ("text", "label_text", "class_text", "class_name", "label_name", "category_name", "name_text")
_LABEL_NAMES = ("label", "labels", "class", "category", "target", "class_id", "label_id")
_DESCRIPTION_NAMES = ("caption", "description", "title", "sentence")
_ID_NAMES = ("filename", "file_name", "name", "id", "source_id", "key", "path", "video_id")


# ---------------------------------------------------------------- one tile


def _pick_image(decoded: DecodedRecord, key: str | None, raw_shape: RawShape | None = None) -> ImageRef | None:
    refs = find_images(decoded, raw_shape=raw_shape)
    if key is None:
        ref = main_image(refs)
        if ref is not None:
            return ref
        return next((r for r in refs if r.step == 0), None)  # a SequenceExample: the first step
    plain = [r for r in refs if r.key == key]
    return next((r for r in plain if r.step is None), None) or next((r for r in plain if r.step == 0), None)


def caption_score(key: str, dtype: str | None, count: int, text: bool) -> int:
    """How good feature ``key`` (``count`` values of ``dtype``) is as a tile caption; <= 0: not one."""
    k = key.lower()
    last = k.rsplit("/", 1)[-1]
    if "bbox" in k or dtype is None or count == 0 or (dtype == "bytes" and not text):
        return 0
    single = count == 1
    if dtype == "bytes" and (last in _TEXT_CLASS_NAMES or k.endswith("class/text")):
        return 100 if single else 60
    if last in _LABEL_NAMES or k.endswith("class/label"):
        return (95 if dtype == "bytes" else 90) if single else 55
    if dtype == "bytes" and last in _DESCRIPTION_NAMES:
        return 40
    if dtype == "bytes" and last in _ID_NAMES:
        return 35
    if not single:
        return 0
    return 20 if dtype == "bytes" else 10


_NUMBER_LISTS = {"int64_list": "int64", "float_list": "float"}


def _dtype_and_count(feature: Any) -> tuple[str | None, int, list]:
    """A feature's dtype, count and values, the values only of bytes: a number list's count is read
    without making its values (a raw PCM list of 80,000 samples costs milliseconds to make)."""
    kind = None if isinstance(feature, tuple) else feature.WhichOneof("kind")
    if kind in _NUMBER_LISTS:
        return _NUMBER_LISTS[kind], len(getattr(feature, kind).value), []
    dtype, values = feature_values(feature)
    return dtype, len(values), values


def _caption_candidates(decoded: DecodedRecord) -> list[tuple[int, str]]:
    features = record_features(decoded)
    if features is None:
        return []
    out = []
    for key in features:
        dtype, count, values = _dtype_and_count(features[key])
        text = dtype == "bytes" and all(is_text(v) for v in values[:MAX_CAPTION_VALUES])
        score = caption_score(key, dtype, count, text)
        if score > 0:
            out.append((score, key))
    return out


def _best_caption_key(decoded: DecodedRecord) -> str | None:
    candidates = _caption_candidates(decoded)
    return max(candidates, key=lambda c: (c[0], -len(c[1]), c[1]))[1] if candidates else None


def caption_for(decoded: DecodedRecord, key: str | None, labels: Any = None, run: str | None = None) -> str:
    """The caption of a record from feature ``key`` (None: the best one), "" when it has none.

    Text values bare (``daisy``, ``cat, dog``), numbers after their name's
    last part (``label 3``, ``label 3 (cat)`` when ``labels`` names the id);
    a tensor's dtype and shape (``uint8 [8, 8, 3]``); an event's run, tags and step.
    """
    if key is None and decoded.kind is RecordKind.TENSOR:
        return tensor_label(tensor_of(decoded))
    if key is None and decoded.kind is RecordKind.EVENT:
        return event_caption(decoded.message, run)
    if key is None:
        key = _best_caption_key(decoded)
        if key is None:
            return ""
    features = record_features(decoded)
    if features is None or key not in features:
        return feature_cell(decoded, key) if key is not None else ""
    dtype, values = shown_values(features[key])
    if not values:
        return ""
    shown = values[:MAX_CAPTION_VALUES]
    more = f" (+{len(values) - len(shown)})" if len(values) > len(shown) else ""
    if dtype == "bytes":
        if not all(is_text(v) for v in shown):
            return feature_cell(decoded, key)
        return ", ".join(bytes(v).decode("utf-8").replace("\n", " ") for v in shown) + more
    name = key.rsplit("/", 1)[-1]
    return f"{name} " + ", ".join(_id_text(v, dtype, key, labels) for v in shown) + more


def _id_text(value: Any, dtype: str, key: str, labels: Any) -> str:
    text = format_value(value, dtype)
    label = labels.name(key, value) if labels is not None and dtype == "int64" else None
    return f"{text} ({label})" if label else text


def _decoding(source: Any) -> tuple[Any, Any]:
    """The payload and class names of a record source (None, None without one)."""
    return (None, None) if source is None else (source.payload, source.labels)


def _run(source: Any, record: int, decoded: DecodedRecord) -> str | None:
    """The log folder run of an event record (None for other records and a file opened on its own)."""
    if source is None or source.payload is None or decoded.kind is not RecordKind.EVENT:
        return None
    return source.payload.run_of(source.location(record)[0])


_NO_STOP = threading.Event()  # a step's wait ends with the paint (or PAINT_WAIT_MAX), never sooner


def _between_steps() -> None:
    """Let a paint of the grid run before the next step of a tile: each step is a few long C calls
    (a raw PCM list becomes Python numbers, then an array) that a paint's Python calls would wait for."""
    PAINT_GATE.wait_open(_NO_STOP)


def make_thumbnail(read: Callable[[int], RecordData], request: ThumbRequest, source: Any = None) -> ThumbResult:
    """Read record ``request.record`` and make its tile; never raises.

    ``source`` (the record source: its ``payload`` and ``labels``) says how records decode.
    """
    try:
        rec = read(request.record)
    except Exception as exc:  # noqa: BLE001 - a tile says why, the gallery goes on
        return ThumbResult(request, "unreadable", note=f"cannot read record {request.record:,}: {one_line(exc)}",
                           status=RecordStatus.TRUNCATED)
    status = rec.info.status
    if rec.info.length > MAX_RECORD_BYTES:
        return ThumbResult(request, "none", note=f"{rec.info.length:,} bytes: shown in the detail view only",
                           status=status)
    payload, labels = _decoding(source)
    decoded = decode_record(rec.data, payload)
    _between_steps()
    caption = caption_for(decoded, request.caption_key, labels, _run(source, request.record, decoded))
    if request.side <= 0:
        return ThumbResult(request, "caption", caption=caption, status=status)
    if decoded.kind is RecordKind.RAW:
        note = decoded.note or "raw record (not an Example)"
        return ThumbResult(request, "none", caption=caption, status=status,
                           note=note if status.data_intact else STATUS_TEXT[status])
    _between_steps()
    ref = _pick_image(decoded, request.image_key, request.raw_shape)
    _between_steps()
    if ref is None:
        audio = _audio_tile(decoded, request, caption, status)
        if audio is not None:
            return audio
        what = f"no image in {request.image_key!r}" if request.image_key else "no image"
        return ThumbResult(request, "none", caption=caption, note=what, status=status)
    boxes = find_boxes(decoded, ref, labels)
    try:
        image = thumbnail(ref, request.side, request.stretch)
    except (ImageDecodeError, ValueError, OSError, MemoryError) as exc:
        return ThumbResult(request, "error", caption=caption, status=status,
                           note=str(exc) if isinstance(exc, ImageDecodeError) else f"cannot decode: {one_line(exc)}")
    sx = image.width / ref.width if ref.width else 1.0
    sy = image.height / ref.height if ref.height else 1.0
    scaled = [replace(b, xmin=b.xmin * sx, ymin=b.ymin * sy, xmax=b.xmax * sx, ymax=b.ymax * sy) for b in boxes]
    main = main_image(find_images(decoded))  # only the main image has masks and keypoints, as only it has boxes
    layers = build_layers(decoded, boxes, labels, (sx, sy), max(image.width, image.height)) \
        if main is not None and (main.key, main.value_index, main.step) == (ref.key, ref.value_index, ref.step) \
        else None
    return ThumbResult(request, "ok", to_qimage(image, request.stretch), scaled, caption, caption_text(ref, len(boxes)),
                       status, framed=needs_frame(ref, image), overlays=layers or None)


def _audio_tile(decoded: DecodedRecord, request: ThumbRequest, caption: str,
                status: RecordStatus) -> ThumbResult | None:
    """The tile of the record's first audio value (of ``request.image_key`` when set): its waveform at the
    tile's width, with its duration; None when the record has no audio."""
    refs = [r for r in find_audio(decoded) if request.image_key in (None, r.key) and r.step in (None, 0)]
    _between_steps()
    for ref in sorted(refs, key=lambda r: r.step is not None):  # a feature before a list's first step
        try:
            glance, low, high = tile_envelope(ref, request.side)
        except (AudioDecodeError, UsageError) as exc:
            if ref.weak:
                continue  # bare MPEG frame sync that does not decode is not audio
            return ThumbResult(request, "error", caption=caption, note=f"{ref.key}: {exc}", status=status,
                               medium="audio")
        colors = (palette.CANVAS_BG, palette.CHART_AXIS, palette.SERIES_1)
        image = waveform_image(low, high, request.side, max(8, round(request.side * AUDIO_ASPECT)), colors)
        note = f"{ref.key}: {glance_text(glance, raw=ref.samples is not None)}"
        return ThumbResult(request, "ok", image, caption=caption, note=note, status=status, medium="audio",
                           badge=tile_text(glance))
    return None


def sample_keys(read: Callable[[int], RecordData], records: Iterable[int],
                source: Any = None) -> tuple[list[str], list[str]]:
    """The keys a tile can show (images', then audio's) and caption feature keys seen in ``records``,
    best captions first."""
    payload = _decoding(source)[0]
    image_keys: dict[str, None] = {}
    audio_keys: dict[str, None] = {}
    captions: dict[str, int] = {}
    for i in records:
        try:
            rec = read(i)
        except Exception:  # noqa: BLE001 - an unreadable record offers nothing
            continue
        if rec.info.length > MAX_RECORD_BYTES:
            continue
        decoded = decode_record(rec.data, payload)
        for ref in find_images(decoded):
            if ref.step is None or ref.step == 0:
                image_keys.setdefault(ref.key)
        for audio in find_audio(decoded):
            if audio.step is None or audio.step == 0:
                audio_keys.setdefault(audio.key)
        for score, key in _caption_candidates(decoded):
            captions[key] = max(score, captions.get(key, 0))
        lists = record_feature_lists(decoded)
        for key in sorted(lists) if lists is not None else ():
            captions.pop(key, None)
    ranked = sorted(captions, key=lambda k: (-captions[k], k))
    return list(image_keys) + [k for k in audio_keys if k not in image_keys], ranked


# ---------------------------------------------------------------- the pool


class _Drain(QRunnable):
    """Takes requests from the loader's queue until it is empty."""

    def __init__(self, loader: ThumbnailLoader) -> None:
        super().__init__()
        self._loader = loader

    def run(self) -> None:
        loader = self._loader
        while True:
            PAINT_GATE.wait_open(loader._stop)  # a tile is all Python and numpy: not while the grid paints
            request = loader._next()
            if request is None:
                return
            result = make_thumbnail(loader._read, request, loader.source())
            loader._finished(request, result)


class ThumbnailLoader(QObject):
    """Makes tiles on a private thread pool; ``ready(ThumbResult)``, and ``finished()`` when all are done.

    ``source`` returns the record source as it is now (its ``payload`` and ``labels``), read per tile.
    """

    ready = Signal(object)
    finished = Signal()

    def __init__(self, read: Callable[[int], RecordData], threads: int | None = None,
                 parent: QObject | None = None, *, source: Callable[[], Any] | None = None) -> None:
        super().__init__(parent)
        self._read = read
        self.source: Callable[[], Any] = source or (lambda: None)
        self._lock = threading.Lock()
        self._queue: deque[ThumbRequest] = deque()
        self._in_flight: set[ThumbRequest] = set()
        self._draining = 0
        self._closed = False
        self._stop = threading.Event()  # set on close: a tile waiting for a paint to end waits no more
        self.pool = QThreadPool(self)
        count = threads if threads is not None else max(2, min(4, QThread.idealThreadCount() - 1))
        self.pool.setMaxThreadCount(count)

    def want(self, requests: Iterable[ThumbRequest]) -> None:
        """Make these tiles, in this order, instead of whatever was queued (tiles in the making finish)."""
        with self._lock:
            if self._closed:
                return
            self._queue = deque(dict.fromkeys(r for r in requests if r not in self._in_flight))
            start = min(self.pool.maxThreadCount() - self._draining, len(self._queue))
            self._draining += max(0, start)
        if start > 0 and sys.getswitchinterval() > GUI_SWITCH_INTERVAL:
            sys.setswitchinterval(GUI_SWITCH_INTERVAL)  # painting waits less for the GIL (see app.workers.worker)
        for _ in range(start):
            self.pool.start(_Drain(self))

    def pending(self) -> int:
        """Tiles queued or in the making."""
        with self._lock:
            return len(self._queue) + len(self._in_flight)

    def close(self) -> None:
        """Drop the queue and wait for the tiles in the making (call before closing the file)."""
        with self._lock:
            self._closed = True
            self._queue.clear()
        self._stop.set()
        self.pool.waitForDone()

    # -- on pool threads --------------------------------------------------
    def _next(self) -> ThumbRequest | None:
        with self._lock:
            if self._closed or not self._queue:
                self._draining -= 1
                now_idle = not self._closed and self._draining == 0 and not self._in_flight
                request = None
            else:
                request = self._queue.popleft()
                self._in_flight.add(request)
                now_idle = False
        if now_idle:
            self._emit(self.finished)
        return request

    def _finished(self, request: ThumbRequest, result: ThumbResult) -> None:
        with self._lock:
            self._in_flight.discard(request)
            closed = self._closed
        if not closed:
            self._emit(self.ready, result)

    @staticmethod
    def _emit(signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:
            pass  # the loader was deleted while a tile was in the making
