"""The Video tab through the real main window: scrubbing, stepping, playing and exporting frames."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("av")
pytestmark = pytest.mark.gui

from PIL import Image  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from app.views.record_detail import NO_VIDEO_TIP, VIDEO_TAB  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import example, sequence_example  # noqa: E402
from tests.codec.test_video import _encode, _frames, _png  # noqa: E402
from tests.gui_helpers import open_done, select_decoded  # noqa: E402

TIMEOUT = 20000


@pytest.fixture
def frames() -> list[np.ndarray]:
    out = _frames(6)
    for i, pixels in enumerate(out):
        pixels[i, i] = (255, 255, 255)  # each frame its own pixel: a frame shown is told apart exactly
    return out


@pytest.fixture
def videos_file(tmp_path, frames) -> str:
    """Record 0: six PNG frames in a feature list, no frame rate; 1: an MP4 at 25 fps; 2: no video."""
    path = tmp_path / "videos.tfrecord"
    write_records(path, [sequence_example({"label": 1}, {"camera": [_png(p) for p in frames]}),
                         example({"clip/encoded": _encode(frames, "mp4", "mpeg4", 25)}),
                         example({"label": 3})])
    return str(path)


def _video_tab(qtbot, window, path: str, record: int):
    tab = open_done(window, qtbot, path)
    return select_decoded(qtbot, tab, record, tab.detail.video, VIDEO_TAB, TIMEOUT)


def _shown_pixels(view) -> np.ndarray:
    image = view.canvas.image.convertToFormat(view.canvas.image.Format.Format_RGB888)
    bits = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    return bits.reshape(image.height(), image.bytesPerLine())[:, :image.width() * 3].reshape(
        image.height(), image.width(), 3)


def test_scrub_step_and_the_frame_label(qtbot, window, videos_file, frames) -> None:
    tab, view = _video_tab(qtbot, window, videos_file, 0)
    tabs = tab.detail.tabs
    assert tabs.isTabEnabled(VIDEO_TAB) and tabs.tabText(VIDEO_TAB) == "Video (1)"
    assert view.frame_count() == 6 and view.current_frame() == 0
    assert "no frame rate: plays at 10 fps" in view.header.text()
    assert np.array_equal(_shown_pixels(view), frames[0])
    with qtbot.waitSignal(view.frame_shown, check_params_cb=lambda n: n == 3, timeout=TIMEOUT):
        view.slider.setValue(3)
    assert view.frame_text() == "frame 4 / 6 · 10 fps"
    assert np.array_equal(_shown_pixels(view), frames[3])
    with qtbot.waitSignal(view.frame_shown, check_params_cb=lambda n: n == 4, timeout=TIMEOUT):
        qtbot.keyClick(view, Qt.Key.Key_Period)
    with qtbot.waitSignal(view.frame_shown, check_params_cb=lambda n: n == 3, timeout=TIMEOUT):
        qtbot.keyClick(view, Qt.Key.Key_Left)
    assert view.slider.value() == 3 and view.frame_text() == "frame 4 / 6 · 10 fps"
    tab.select_record(2)
    qtbot.waitUntil(lambda: tab.detail.current_record() == 2 and tab.detail.loaded() is not None, timeout=TIMEOUT)
    assert not tabs.isTabEnabled(VIDEO_TAB) and tabs.tabToolTip(VIDEO_TAB) == NO_VIDEO_TIP
    assert tabs.currentIndex() != VIDEO_TAB


def test_play_runs_to_the_last_frame_of_an_mp4_at_its_rate(qtbot, window, videos_file, frames) -> None:
    _tab, view = _video_tab(qtbot, window, videos_file, 1)
    assert view.frame_count() == 6 and view.frame_rate() == 25.0
    assert view.frame_text() == "frame 1 / 6 · 25 fps"
    shown = []
    view.frame_shown.connect(shown.append)
    with qtbot.waitSignal(view.frame_shown, check_params_cb=lambda n: n == 5, timeout=TIMEOUT):
        qtbot.mouseClick(view.play_button, Qt.MouseButton.LeftButton)
        assert view.playing()
    qtbot.waitUntil(lambda: not view.playing(), timeout=TIMEOUT)  # stops at the end
    assert shown == sorted(shown) and shown[-1] == 5  # forward only, dropping a frame at most when decoding lags
    shown_pixels = _shown_pixels(view).astype(int)  # lossy MPEG-4: the nearest of the frames made
    assert np.argmin([np.abs(shown_pixels - f.astype(int)).mean() for f in frames]) == 5


def test_export_the_frame_shown_and_every_frame(qtbot, window, videos_file, frames, tmp_path, monkeypatch) -> None:
    _tab, view = _video_tab(qtbot, window, videos_file, 0)
    with qtbot.waitSignal(view.frame_shown, check_params_cb=lambda n: n == 2, timeout=TIMEOUT):
        view.slider.setValue(2)
    asked = []
    target = tmp_path / "out" / "frame.png"
    target.parent.mkdir()
    monkeypatch.setattr(view, "ask_save_path", lambda name: asked.append(name) or str(target))
    with qtbot.waitSignal(view.export_done, timeout=TIMEOUT):
        qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    assert asked == ["000000_camera_frame_0003.png"]  # numbered as the label shows it
    assert np.array_equal(np.asarray(Image.open(target)), frames[2])

    folder = tmp_path / "all"
    folder.mkdir()
    monkeypatch.setattr(view, "ask_folder", lambda: str(folder))
    with qtbot.waitSignal(view.export_done, timeout=TIMEOUT) as done:
        qtbot.mouseClick(view.export_all_button, Qt.MouseButton.LeftButton)
    assert done.args[0] == f"6 frames written to {folder}"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"000000_camera_frame_{n:04d}.png" for n in range(1, 7)]
    for n, name in enumerate(names):
        assert np.array_equal(np.asarray(Image.open(folder / name)), frames[n])
    assert not view.progress.isVisible() and not view.cancel_button.isVisible()


def test_cancel_stops_an_export_of_every_frame(qtbot, window, videos_file, tmp_path, monkeypatch) -> None:
    import threading

    from app.views import video_view
    from app.workers.video_loader import export_frames

    _tab, view = _video_tab(qtbot, window, videos_file, 0)
    release = threading.Event()

    def held(video, record, folder):  # the real export, held after its first frame until Cancel is clicked
        frames = export_frames(video, record, folder)
        yield next(frames)
        release.wait(TIMEOUT / 1000)
        yield from frames

    monkeypatch.setattr(video_view, "export_frames", held)
    folder = tmp_path / "all"
    folder.mkdir()
    monkeypatch.setattr(view, "ask_folder", lambda: str(folder))
    qtbot.mouseClick(view.export_all_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.progress.value() == 1, timeout=TIMEOUT)
    assert view.cancel_button.isVisible() and not view.export_all_button.isEnabled()
    with qtbot.waitSignal(view.export_done, timeout=TIMEOUT) as done:
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        release.set()
    # the frame under way when Cancel came is finished (each file is whole), then the export stops
    assert done.args[0] == f"Export cancelled: 2 of 6 frames written to {folder}"
    assert sorted(p.name for p in folder.iterdir()) == ["000000_camera_frame_0001.png", "000000_camera_frame_0002.png"]
    assert view.export_all_button.isEnabled() and not view.cancel_button.isVisible()
