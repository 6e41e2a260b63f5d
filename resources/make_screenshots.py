"""Make the docs' screenshots: ten subjects, light and dark, at 1600×1000 and 1024×700 (masks, video, audio,
array-record and scalars at 1600×1000 only).

Drives the real main window (a throwaway Settings and index cache in a temporary
folder), switches the theme through View > Theme, and saves
``{sorted,help,filter-scan,pixel-inspector,projection}-{light,dark}-{1600x1000,1024x700}.png`` and
``masks-keypoints-{light,dark}-1600x1000.png`` and ``{video,audio,array-record,scalars}-{light,dark}-1600x1000.png``.
Run it under Xvfb with the xcb platform, so dialogs and the screen can be grabbed:

    Xvfb :81 -screen 0 1700x1100x24 &
    DISPLAY=:81 QT_QPA_PLATFORM=xcb python -m resources.make_screenshots [OUT_DIR] [--only SUBJECT]
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
DEMO = HERE / "demo.tfrecord"
SIZES = ((1600, 1000), (1024, 700))
THEMES = ("light", "dark")
SCAN_RECORDS = 2_500_000  # a filter pass over this many takes seconds: long enough to be caught half way
TIMEOUT = 120.0


def wait_until(ready: Callable[[], bool], timeout: float = TIMEOUT, what: str = "") -> None:
    """Run the event loop until ``ready()``; a clear error when it never comes."""
    from PySide6.QtCore import QCoreApplication, QEventLoop

    end = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > end:
            raise TimeoutError(f"screenshots: gave up waiting for {what or 'the window'}")
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.005)


def settle(seconds: float = 0.3) -> None:
    """Let layouts, repaints and the window system catch up before a grab."""
    end = time.monotonic() + seconds
    wait_until(lambda: time.monotonic() > end, seconds + 5)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def make_scan_file(path: Path) -> Path:
    """``SCAN_RECORDS`` small Examples (a label 0–9, a score, a name): a file a filter takes seconds over."""
    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    if path.exists():
        return path
    variants = []
    for v in range(100):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append((v * 7) % 10)
        ex.features.feature["score"].float_list.value.append(round(v / 100, 2))
        ex.features.feature["name"].bytes_list.value.append(f"item-{v:02d}".encode())
        variants.append(ex.SerializeToString())
    write_records(str(path), (variants[(i * 37) % 100] for i in range(SCAN_RECORDS)))
    return path


def make_array_record_file(path: Path, n: int = 48) -> Path:
    """``n`` PNG Examples with boxes and class names (shapes on a plain ground), as an ArrayRecord file written
    by Google's writer with group_size 4: the window warns that random access reads whole groups."""
    from array_record.python.array_record_module import ArrayRecordWriter

    from codec.decode.example_proto import Example

    names = ("circle", "square", "triangle")
    colours = ((220, 80, 60), (60, 140, 220), (90, 180, 90))
    writer = ArrayRecordWriter(str(path), "group_size:4")
    for k in range(n):
        w, h = 160, 120
        img = Image.new("RGB", (w, h), (70 + (k * 13) % 60, 80, 120 + (k * 9) % 80))
        draw = ImageDraw.Draw(img)
        ex = Example()
        f = ex.features.feature
        for j in range(k % 3 + 1):
            cls = (k + j) % 3
            x0, y0 = 10 + 48 * j, 15 + (k * 7 + j * 23) % 50
            box = (x0, y0, x0 + 40, y0 + 40)
            if cls == 0:
                draw.ellipse(box, fill=colours[cls])
            elif cls == 1:
                draw.rectangle(box, fill=colours[cls])
            else:
                draw.polygon([(box[0], box[3]), ((box[0] + box[2]) // 2, box[1]), (box[2], box[3])], fill=colours[cls])
            f["image/object/bbox/xmin"].float_list.value.append(box[0] / w)
            f["image/object/bbox/xmax"].float_list.value.append(box[2] / w)
            f["image/object/bbox/ymin"].float_list.value.append(box[1] / h)
            f["image/object/bbox/ymax"].float_list.value.append(box[3] / h)
            f["image/object/class/label"].int64_list.value.append(cls + 1)
            f["image/object/class/text"].bytes_list.value.append(names[cls].encode())
        out = io.BytesIO()
        img.save(out, "PNG")
        f["image/encoded"].bytes_list.value.append(out.getvalue())
        f["image/format"].bytes_list.value.append(b"png")
        f["image/height"].int64_list.value.append(h)
        f["image/width"].int64_list.value.append(w)
        f["caption"].bytes_list.value.append(f"shapes {k}".encode())
        writer.write(ex.SerializeToString())
    writer.close()
    return path


def make_depth_file(path: Path) -> Path:
    """One Example: a 16-bit depth PNG (a ramp with two raised blocks) and three boxes with class names."""
    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    w, h = 320, 240
    y, x = np.mgrid[0:h, 0:w]
    depth = 8000 + x * 60 + y * 40
    canvas = Image.fromarray(depth.astype(np.int32), "I")
    draw = ImageDraw.Draw(canvas)
    draw.rectangle((40, 50, 130, 170), fill=47000)
    draw.ellipse((190, 40, 290, 140), fill=30000)
    pixels = np.asarray(canvas, dtype=np.uint16)
    ex = Example()
    f = ex.features.feature
    f["image/encoded"].bytes_list.value.append(_png(Image.fromarray(pixels)))
    f["image/format"].bytes_list.value.append(b"png")
    f["image/height"].int64_list.value.append(h)
    f["image/width"].int64_list.value.append(w)
    boxes = [("block", 40, 50, 131, 171), ("ball", 190, 40, 291, 141), ("floor", 10, 190, 310, 235)]
    for name, x0, y0, x1, y1 in boxes:
        f["image/object/bbox/xmin"].float_list.value.append(x0 / w)
        f["image/object/bbox/xmax"].float_list.value.append(x1 / w)
        f["image/object/bbox/ymin"].float_list.value.append(y0 / h)
        f["image/object/bbox/ymax"].float_list.value.append(y1 / h)
        f["image/object/class/text"].bytes_list.value.append(name.encode())
    write_records(str(path), [ex.SerializeToString()])
    return path


def make_masks_file(path: Path) -> Path:
    """One Example: a photo-like RGB scene with three objects, each with a box, a class, a PNG instance mask,
    and keypoints (one labelled but not visible)."""
    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    w, h = 360, 240
    y, x = np.mgrid[0:h, 0:w]
    sky = np.stack([110 + y // 4, 150 + y // 5, 200 - y // 6], -1)
    ground = np.stack([90 + x // 12, 120 + x // 14, 70 + 0 * x], -1)
    scene = Image.fromarray(np.where((y > 150)[..., None], ground, sky).astype(np.uint8))
    draw = ImageDraw.Draw(scene)
    shapes = [("cat", 1, "ellipse", (40, 90, 150, 200), (120, 100, 80)),
              ("dog", 2, "rectangle", (180, 70, 260, 210), (170, 140, 100)),
              ("ball", 3, "ellipse", (280, 160, 330, 210), (220, 60, 50))]
    ex = Example()
    f = ex.features.feature
    for name, label, kind, (x0, y0, x1, y1), fill in shapes:
        getattr(draw, kind)((x0, y0, x1, y1), fill=fill)
        mask = Image.new("L", (w, h), 0)
        getattr(ImageDraw.Draw(mask), kind)((x0, y0, x1, y1), fill=1)
        f["image/object/mask"].bytes_list.value.append(_png(mask))
        f["image/object/bbox/xmin"].float_list.value.append(x0 / w)
        f["image/object/bbox/xmax"].float_list.value.append((x1 + 1) / w)
        f["image/object/bbox/ymin"].float_list.value.append(y0 / h)
        f["image/object/bbox/ymax"].float_list.value.append((y1 + 1) / h)
        f["image/object/class/text"].bytes_list.value.append(name.encode())
        f["image/object/class/label"].int64_list.value.append(label)
    for px, py, seen in ((70, 120, 1), (120, 120, 1), (95, 160, 1), (200, 90, 1), (240, 90, 1), (220, 150, 0)):
        f["image/object/keypoint/x"].float_list.value.append(px / w)
        f["image/object/keypoint/y"].float_list.value.append(py / h)
        f["image/object/keypoint/visibility"].int64_list.value.append(seen)
    f["image/encoded"].bytes_list.value.append(_png(scene))
    f["image/format"].bytes_list.value.append(b"png")
    f["image/height"].int64_list.value.append(h)
    f["image/width"].int64_list.value.append(w)
    write_records(str(path), [ex.SerializeToString()])


def make_video_file(path: Path, frames: int = 48) -> Path:
    """One SequenceExample: 48 PNG frames of a ball crossing a sky (a feature list), 10 fps in its context."""
    from codec.decode.example_proto import SequenceExample
    from codec.storage.writer import write_records

    w, h = 320, 200
    y, x = np.mgrid[0:h, 0:w]
    sky = np.stack([110 + y // 4, 150 + y // 5, 200 - y // 6], -1).astype(np.uint8)
    pngs = []
    for n in range(frames):
        scene = Image.fromarray(sky)
        cx, cy = 20 + n * (w - 40) // (frames - 1), h - 40 - int(110 * np.sin(np.pi * n / (frames - 1)))
        ImageDraw.Draw(scene).ellipse((cx - 14, cy - 14, cx + 14, cy + 14), fill=(220, 60, 50))
        pngs.append(_png(scene))
    se = SequenceExample()
    se.context.feature["video/frame_rate"].int64_list.value.append(10)
    steps = se.feature_lists.feature_list["video/frames"]
    for png in pngs:
        steps.feature.add().bytes_list.value.append(png)
    write_records(str(path), [se.SerializeToString()])
    return path


def make_audio_file(path: Path, rate: int = 22_050, seconds: float = 8.0) -> Path:
    """One Example: an 8 s stereo WAV, eight decaying notes on the left, noise bursts over a rising sweep on the right."""
    import soundfile

    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    t = np.arange(int(rate * seconds)) / rate
    notes = np.sin(2 * np.pi * 330 * t) * np.exp(-4 * (t % 1.0))
    sweep = 0.25 * np.sin(2 * np.pi * (200 * t + 600 * t * t))  # 200 Hz rising to 9.8 kHz
    bursts = np.where(t % 0.5 < 0.03, 0.7, 0.0) * np.random.default_rng(1).standard_normal(len(t))
    stereo = np.stack([0.8 * notes, bursts + sweep], -1)
    wav = io.BytesIO()
    soundfile.write(wav, (np.clip(stereo, -1, 1) * 32767).astype(np.int16), rate, format="WAV", subtype="PCM_16")
    ex = Example()
    ex.features.feature["audio/encoded"].bytes_list.value.append(wav.getvalue())
    ex.features.feature["label"].int64_list.value.append(1)
    write_records(str(path), [ex.SerializeToString()])
    return path


def make_embedding_file(path: Path, n: int = 20_000, dims: int = 64) -> Path:
    """``n`` Examples with a ``dims``-float ``embedding`` around one of six centres, its ``label`` and an ``id``."""
    from codec.decode.example_proto import Example
    from codec.storage.writer import write_records

    rng = np.random.default_rng(11)
    centres = rng.normal(0, 3, (6, dims))
    labels = rng.integers(0, 6, n)
    vectors = (centres[labels] + rng.normal(0, 1.2, (n, dims))).astype(np.float32)
    records = []
    for i, (label, vec) in enumerate(zip(labels.tolist(), vectors)):
        ex = Example()
        f = ex.features.feature
        f["embedding"].float_list.value.extend(vec.tolist())
        f["label"].int64_list.value.append(label)
        f["id"].bytes_list.value.append(f"item-{i:05d}".encode())
        records.append(ex.SerializeToString())
    write_records(str(path), records)
    return path


def make_log_folder(folder: Path, steps: int = 400) -> Path:
    """A TensorBoard log folder written with the vendored Event class: runs ``train`` and ``eval``, a noisy
    falling ``loss``, a rising ``metrics/accuracy``, train's ``learning_rate`` (TF1 simple values) and
    ``weights`` histograms (TF2 tensors of the histograms plugin)."""
    import struct

    from codec.decode.events import event_class
    from codec.storage.writer import write_records

    Event = event_class()
    rng = np.random.default_rng(5)
    start = 1_795_700_000.0
    for k, (run, every, noise) in enumerate((("train", 1, 0.08), ("eval", 10, 0.03))):
        events = [Event(wall_time=start + k, file_version="brain.Event:2").SerializeToString()]
        for step in range(0, steps, every):
            t = start + k + step * 9.0
            loss = 2.2 * np.exp(-step / (110 if run == "train" else 140)) + 0.25 + rng.normal(0, noise)
            accuracy = 0.95 - 0.85 * np.exp(-step / 120) + rng.normal(0, noise / 3)
            for tag, value in (("loss", loss), ("metrics/accuracy", accuracy)):
                event = Event(wall_time=t, step=step)
                summary = event.summary.value.add(tag=tag)
                summary.metadata.plugin_data.plugin_name = "scalars"
                summary.tensor.dtype = 1  # DT_FLOAT
                summary.tensor.tensor_shape.SetInParent()
                summary.tensor.tensor_content = struct.pack("<f", value)
                events.append(event.SerializeToString())
            if run == "train":
                events.append(Event(wall_time=t, step=step, summary={"value": [
                    {"tag": "learning_rate", "simple_value": 1e-3 * 0.5 ** (step // 100)}]}).SerializeToString())
            if step % 20 == 0:
                weights = rng.normal(0, 0.2 + step / steps, 4000)
                counts, edges = np.histogram(weights, bins=30)
                buckets = np.stack([edges[:-1], edges[1:], counts]).T.astype("<f8")
                event = Event(wall_time=t, step=step)
                summary = event.summary.value.add(tag="weights")
                summary.metadata.plugin_data.plugin_name = "histograms"
                summary.tensor.dtype = 2  # DT_DOUBLE
                summary.tensor.tensor_shape.dim.add(size=30)
                summary.tensor.tensor_shape.dim.add(size=3)
                summary.tensor.tensor_content = buckets.tobytes()
                events.append(event.SerializeToString())
        (folder / run).mkdir(parents=True, exist_ok=True)
        write_records(str(folder / run / f"events.out.tfevents.{int(start) + k}.host.1.v2"), events)
    return folder


class Shooter:
    """One main window per screenshot, in a given theme and size; its grabs saved as optimised PNGs."""

    def __init__(self, out: Path, work: Path) -> None:
        self.out, self.work = out, work
        self.window = None

    def new_window(self, theme: str, size: tuple[int, int]):
        from app.models.settings import Settings
        from app.shell.main_window import MainWindow

        window = MainWindow(Settings())
        window.theme.actions[theme].trigger()  # View > Theme, as a user picks it
        window.move(0, 0)
        window.resize(*size)
        window.show()
        window.raise_()
        window.activateWindow()
        wait_until(lambda: window.isVisible() and window.windowHandle() is not None
                   and window.windowHandle().isExposed(), what="the window to show")
        wait_until(lambda: (window.width(), window.height()) == size, 10,
                   f"the window at {size[0]}×{size[1]} (it is {window.width()}×{window.height()})")
        self.window = window
        return window

    def close(self) -> None:
        if self.window is not None:
            self.window.close()
            self.window.deleteLater()
            self.window = None
            settle(0.1)

    def open_done(self, path: Path):
        tab = self.window.open_file(str(path))
        if tab is None:
            raise RuntimeError(f"screenshots: {path} did not open: {self.window.message_bar.text()}")
        wait_until(lambda: not tab.is_running() and tab.state().phase in ("done", "failed", "cancelled"),
                   what=f"{path.name} to be indexed")
        return tab

    def save(self, image, name: str, size: tuple[int, int]) -> Path:
        """Save a QImage or QPixmap at exactly ``size`` as an optimised PNG."""
        from PySide6.QtCore import QBuffer, QIODevice

        if (image.width(), image.height()) != size:
            raise RuntimeError(f"screenshots: {name} grabbed {image.width()}×{image.height()}, not {size[0]}×{size[1]}")
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")
        picture = Image.open(io.BytesIO(bytes(buffer.data()))).convert("RGB")
        path = self.out / name
        picture.save(path, "PNG", optimize=True)
        return path

    def grab_window(self):
        settle()
        return self.window.grab()

    def grab_screen(self):
        """The screen under the window: dialogs and menus shown over it are in the picture."""
        settle(0.6)
        g = self.window.frameGeometry()
        return self.window.screen().grabWindow(0, g.x(), g.y(), self.window.width(), self.window.height())

    # -- the subjects --------------------------------------------------------
    def sorted(self):
        """The demo sorted by its class names, descending; a record selected, its detail shown."""
        from app.models.record_table_model import BASE_COLUMNS

        tab = self.open_done(DEMO)
        key = "image/object/class/text"
        tab._set_columns([key, "image/object/class/label", "caption"], save=False)  # as View > Feature Columns
        column = BASE_COLUMNS + tab.model.feature_columns().index(key)
        tab.select_record(5)
        changes = []
        tab.proxy.sort_changed.connect(lambda: changes.append(1))
        for clicks in (1, 2):  # ascending, then descending
            tab.table.horizontalHeader().sectionClicked.emit(column)
            wait_until(lambda n=clicks: len(changes) >= n and not tab.sorter.is_running(), what="the sort")
        wait_until(lambda: tab.proxy.sort_descending and tab.detail.current_record() == 5, what="the sorted rows")
        tab.table.scrollTo(tab.proxy.index(tab.table.currentIndex().row(), column))  # the indicator in view
        return self.grab_window()

    def help(self):
        """Help > User Guide on the app's page, over the demo's window."""
        self.open_done(DEMO)
        guide = self.window.help.show_guide("app.md")
        if guide is None:
            raise RuntimeError("screenshots: the user guide's pages were not found")
        w, h = self.window.width(), self.window.height()
        guide.resize(int(w * 0.72), int(h * 0.78))
        guide.move(self.window.x() + (w - guide.width()) // 2, self.window.y() + (h - guide.height()) // 2 + 20)
        wait_until(lambda: guide.isVisible() and guide.current_page() == "app.md", what="the guide")
        shot = self.grab_screen()
        guide.close()
        return shot

    def filter_scan(self):
        """A filter half way through a big file: "N matches so far · X% scanned"."""
        from PySide6.QtCore import QCoreApplication, QEvent

        tab = self.open_done(make_scan_file(self.work / "scan.tfrecord"))
        bar = tab.qa.filter_bar
        caught = []

        def found(_n: int) -> None:
            if not caught and "so far" in bar.count_label.text() and "0%" not in bar.count_label.text()[-12:]:
                # the label's new width is laid out before the grab (a posted layout request, otherwise)
                QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
                caught.append(self.window.grab())

        bar.matches_found.connect(found)
        bar.edit.setText("label == 3 and score > 0.5")
        bar.run()
        wait_until(lambda: bool(caught) or not bar.is_running(), what="the filter's first matches")
        bar.matches_found.disconnect(found)
        if bar.is_running():
            bar.cancel()
            wait_until(lambda: not bar.is_running(), what="the filter to stop")
        if not caught:
            raise RuntimeError("screenshots: the filter ended before a grab; make SCAN_RECORDS larger")
        return caught[0]

    def pixel_inspector(self):
        """A 16-bit depth PNG with boxes, the pointer over it: the inspector line reads the pixel."""
        from PySide6.QtCore import QPoint
        from PySide6.QtGui import QCursor
        from PySide6.QtTest import QTest

        from app.views.record_detail import IMAGES_TAB

        tab = self.open_done(make_depth_file(self.work / "depth16.tfrecord"))
        tab.select_record(0)
        tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
        preview = tab.detail.images
        wait_until(lambda: tab.detail.current_record() == 0 and preview.image_count() > 0
                   and preview.pending() == 0 and preview.image(0) is not None, what="the image")
        settle()
        canvas = preview.canvas(0)
        natural = canvas.natural_size()
        x, y = 85, 110  # inside the raised block
        pos = QPoint(int((x + 0.5) * canvas.width() / natural.width()),
                     int((y + 0.5) * canvas.height() / natural.height()))
        QCursor.setPos(canvas.mapToGlobal(pos))
        QTest.mouseMove(canvas, pos)
        wait_until(lambda: preview.pixel_text().startswith("x "), what="the pixel inspector's values")
        return self.grab_window()

    def masks(self):
        """Instance masks in their classes' colours, keypoints as dots (one hollow) and the legend."""
        from app.views.record_detail import IMAGES_TAB

        tab = self.open_done(make_masks_file(self.work / "masks.tfrecord"))
        tab.select_record(0)
        tab.detail.tabs.setCurrentIndex(IMAGES_TAB)
        preview = tab.detail.images
        wait_until(lambda: tab.detail.current_record() == 0 and preview.image_count() > 0 and preview.pending() == 0
                   and preview.image(0) is not None and preview.overlays(0) is not None, what="the image's masks")
        return self.grab_window()


    def video(self):
        """The Video tab: a feature list of 48 PNG frames scrubbed to frame 12, its label and controls."""
        from app.views.record_detail import VIDEO_TAB

        tab = self.open_done(make_video_file(self.work / "video.tfrecord"))
        tab.select_record(0)
        view = tab.detail.video
        wait_until(lambda: tab.detail.current_record() == 0 and view.frame_count() > 0, what="the video")
        tab.detail.tabs.setCurrentIndex(VIDEO_TAB)
        view.slider.setValue(11)
        wait_until(lambda: view.current_frame() == 11, what="frame 12")
        return self.grab_window()

    def audio(self):
        """The Audio tab: a stereo WAV's two waveforms and its spectrogram, the playhead at 0:03."""
        from app.views.record_detail import AUDIO_TAB

        tab = self.open_done(make_audio_file(self.work / "audio.tfrecord"))
        tab.select_record(0)
        view = tab.detail.audio
        wait_until(lambda: tab.detail.current_record() == 0 and bool(view.panels()), what="the audio")
        tab.detail.tabs.setCurrentIndex(AUDIO_TAB)
        panel = view.panels()[0]
        panel.seek(3 * panel.clip.sample_rate)
        settle()
        return self.grab_window()

    def projection(self):
        """View > Embedding Projection over 20,000 64-dim embeddings in six classes, a point hovered;
        the record's embedding as a heat strip in the Tree."""
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QCursor
        from PySide6.QtTest import QTest

        from app.views.record_detail import TREE_TAB

        tab = self.open_done(make_embedding_file(self.work / "embeddings.tfrecord"))
        view = tab.qa.projection_view()
        ready = []
        view.projection_ready.connect(ready.append)
        self.window.qa.show_projection()  # (View > Embedding Projection; a toggle, and the last window left it on)
        if self.window.height() >= 900:  # half the window for the points; a small one keeps the table's share
            self.window.resizeDocks([self.window.qa.projection_dock], [int(self.window.height() * 0.5)],
                                    Qt.Orientation.Vertical)
        wait_until(lambda: bool(ready), what="the projection")
        settle()
        canvas = view.canvas
        k = int(np.flatnonzero(ready[0].labels == 2)[0])
        pos = canvas.position_of(k)
        QCursor.setPos(canvas.mapToGlobal(pos))
        QTest.mouseMove(canvas, pos)
        if canvas.hovered < 0:  # no move event came through the window system: send one as it would
            from PySide6.QtCore import QEvent, QPointF
            from PySide6.QtGui import QMouseEvent
            from PySide6.QtWidgets import QApplication

            QApplication.sendEvent(canvas, QMouseEvent(QEvent.Type.MouseMove, QPointF(pos),
                                                       QPointF(canvas.mapToGlobal(pos)), Qt.MouseButton.NoButton,
                                                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
        wait_until(lambda: canvas.hovered >= 0, what="the hovered point")
        record = int(ready[0].records[canvas.hovered])  # the point on top there: as a click would open it
        tab.select_record(record)
        tab.detail.tabs.setCurrentIndex(TREE_TAB)
        wait_until(lambda: tab.detail.current_record() == record, what="the record")
        return self.grab_screen()

    def scalars(self):
        """A log folder of two runs: View > Scalars, shown by itself, its per-tag plots smoothed, a point hovered."""
        from PySide6.QtCore import QPointF, Qt

        tab = self.open_done(make_log_folder(self.work / "logs"))
        view = tab.qa.scalars_view()
        wait_until(lambda: view.isVisible() and bool(view.loader.series.points) and not view.loader.is_active(),
                   what="the scalars")
        self.window.resizeDocks([self.window.qa.scalars_dock], [int(self.window.height() * 0.72)],
                                Qt.Orientation.Vertical)
        settle()
        plot = view.plot("loss")
        frame = plot.frame()
        curve = plot.curves[0]
        k = len(curve.xs) * 2 // 3
        plot._show_hover(QPointF(frame.px(curve.xs[k]), frame.py(curve.smoothed[k])),
                         plot.mapToGlobal(QPointF(frame.px(curve.xs[k]), frame.py(curve.smoothed[k])).toPoint()))
        return self.grab_screen()


    def array_record(self):
        """An ArrayRecord file of images written with group_size 4: the gallery, the warning over the tab,
        the writer options in the status bar and File > File Info… open over the window."""
        tab = self.open_done(make_array_record_file(self.work / "shapes.array_record"))
        tab.select_record(5)
        tab.qa.show_gallery()
        gallery = tab.qa.gallery.model
        wait_until(lambda: gallery.rowCount() > 0 and gallery.pending() == 0, what="the gallery")
        dialog = self.window.file_info_current()
        geometry = self.window.frameGeometry()
        dialog.move(geometry.x() + geometry.width() - dialog.width() - 40,
                    geometry.y() + geometry.height() - dialog.height() - 80)
        wait_until(lambda: dialog.isVisible(), what="File Info")
        return self.grab_screen()


SUBJECTS = {"sorted": "sorted", "help": "help", "filter-scan": "filter_scan", "pixel-inspector": "pixel_inspector",
            "masks": "masks", "projection": "projection", "video": "video", "audio": "audio",
            "array-record": "array_record", "scalars": "scalars"}
SUBJECT_SIZES = {"masks": ((1600, 1000),), "video": ((1600, 1000),), "audio": ((1600, 1000),),
                 "array-record": ((1600, 1000),), "scalars": ((1600, 1000),)}  # a subject shot at fewer sizes than SIZES
SUBJECT_FILES = {"masks": "masks-keypoints"}  # a subject whose files are named otherwise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(HERE / "screenshots"), help="the folder the PNGs go to")
    parser.add_argument("--only", choices=sorted(SUBJECTS), action="append", help="just this subject (repeatable)")
    args = parser.parse_args(argv)
    if os.environ.get("QT_QPA_PLATFORM") != "xcb" or not os.environ.get("DISPLAY"):
        print("make_screenshots: run under Xvfb with QT_QPA_PLATFORM=xcb and DISPLAY set (see the module's help)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tfrlens-shots-") as tmp:
        work = Path(tmp)
        os.environ["TFRLENS_CACHE_DIR"] = str(work / "index-cache")
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(work / "settings"))
        app = QApplication.instance() or QApplication([sys.argv[0]])
        app.setApplicationName("tfrlens")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        shooter = Shooter(out, work)
        for subject in args.only or list(SUBJECTS):
            for theme in THEMES:
                for size in SUBJECT_SIZES.get(subject, SIZES):
                    name = f"{SUBJECT_FILES.get(subject, subject)}-{theme}-{size[0]}x{size[1]}.png"
                    shooter.new_window(theme, size)
                    try:
                        shot = getattr(shooter, SUBJECTS[subject])()
                        path = shooter.save(shot, name, size)
                    finally:
                        shooter.close()
                    print(f"{path}  {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
