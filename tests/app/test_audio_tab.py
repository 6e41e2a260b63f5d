"""The Audio tab through the real main window: a clip's header, waveform and spectrogram; zoom; no-audio records."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("soundfile")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.style import palette  # noqa: E402
from app.views.audio_view import level_colors  # noqa: E402
from app.views.record_detail import AUDIO_TAB, NO_AUDIO_TIP, TREE_TAB  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done, select_decoded  # noqa: E402

TIMEOUT = 20000
AUDIO = FIXTURES / "media" / "audio.tfrecord"


def _audio_tab(qtbot, window, record: int):
    return _select(qtbot, open_done(window, qtbot, str(AUDIO)), record)


def _select(qtbot, tab, record: int):
    """Select ``record`` and wait until its audio has decoded (the record may already be selected on open)."""
    return select_decoded(qtbot, tab, record, tab.detail.audio, AUDIO_TAB, TIMEOUT)


def test_record_0_shows_one_waveform_one_spectrogram_and_its_duration(qtbot, window) -> None:
    tab, view = _audio_tab(qtbot, window, 0)
    tabs = tab.detail.tabs
    assert tabs.isTabEnabled(AUDIO_TAB) and tabs.tabText(AUDIO_TAB) == "Audio (1)"
    [panel] = view.panels()
    assert "audio/encoded" in panel.header_text() and "wav" in panel.header_text()
    assert "16,000 Hz" in panel.header_text() and "1 channel" in panel.header_text()
    assert "0.250 s" in panel.header_text()  # 4000 frames at 16 kHz (MANIFEST.json)
    assert len(panel.waveforms) == 1 and panel.spectrogram is not None
    assert panel.visible_range() == (0, 4000)
    wave = panel.waveforms[0]
    qtbot.waitUntil(lambda: wave.isVisible() and wave.width() > 100, timeout=TIMEOUT)
    mins, maxs = wave.envelope()
    assert len(mins) == min(4000, wave.width())
    assert maxs.max() == wave.samples.max() and mins.min() == wave.samples.min()
    image = wave.grab().toImage()  # painted: the wave's colour is on it
    colors = {image.pixelColor(x, y).rgb() for x in range(0, image.width(), 3) for y in range(image.height())}
    assert palette.SERIES_1.rgb() in colors
    assert panel.spectrogram.image.width() > 1 and panel.spectrogram.image.height() == 257


def test_zoom_changes_the_visible_range_and_the_envelope(qtbot, window) -> None:
    _tab, view = _audio_tab(qtbot, window, 3)
    [panel] = view.panels()
    frames = panel.frames
    assert frames == 6400
    qtbot.mouseClick(panel.zoom_in, Qt.MouseButton.LeftButton)
    assert panel.visible_range() == (1600, 4800)
    assert panel.range_label.text() == "0.100–0.300 s"
    wave = panel.waveforms[0]
    mins, maxs = wave.envelope()
    assert maxs.max() == wave.samples[1600:4800].max()
    # the wheel zooms in about the pointer: at the left edge, the start stays
    event = QWheelEvent(QPointF(0, 10), QPointF(wave.mapToGlobal(QPoint(0, 10))), QPoint(0, 0), QPoint(0, 120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(wave, event)
    assert panel.visible_range() == (1600, 3200)
    for _ in range(5):
        qtbot.mouseClick(panel.zoom_out, Qt.MouseButton.LeftButton)
    assert panel.visible_range() == (0, frames)


def test_two_channels_and_a_record_without_audio(qtbot, window, tmp_path) -> None:
    from codec.storage.writer import write_records
    from tests.builders import example, floats, ints

    stereo = np.stack([np.linspace(-1, 1, 800), np.zeros(800)], axis=1).astype(np.float32).ravel()
    path = tmp_path / "mixed.tfrecord"
    write_records(str(path), [example({"audio/samples": floats(*stereo.tolist()), "audio/sample_rate": ints(8000),
                                       "audio/channels": ints(2)}),
                              example({"label": ints(3)})])
    tab, view = _select(qtbot, open_done(window, qtbot, str(path)), 0)
    [panel] = view.panels()
    assert len(panel.waveforms) == 2 and "2 channels" in panel.header_text() and "0.100 s" in panel.header_text()
    tab.select_record(1)
    qtbot.waitUntil(lambda: tab.detail.current_record() == 1 and tab.detail.loaded() is not None, timeout=TIMEOUT)
    tabs = tab.detail.tabs
    assert not tabs.isTabEnabled(AUDIO_TAB) and tabs.tabToolTip(AUDIO_TAB) == NO_AUDIO_TIP
    assert tabs.currentIndex() == TREE_TAB and view.panels() == []


def _colors(widget) -> set[int]:
    image = widget.grab().toImage()
    return {image.pixelColor(x, y).rgb() for x in range(0, image.width(), 3) for y in range(0, image.height(), 2)}


def test_dark_theme_repaints_waveform_and_spectrogram(qtbot, window) -> None:
    _tab, view = _audio_tab(qtbot, window, 0)
    [panel] = view.panels()
    wave, spec = panel.waveforms[0], panel.spectrogram
    qtbot.waitUntil(lambda: wave.isVisible() and wave.width() > 100, timeout=TIMEOUT)
    light_bg = palette.CANVAS_BG.rgb()
    light_spec = _colors(spec)
    assert light_bg in _colors(wave) and light_spec <= set(level_colors())  # the spectrogram's colours: the ramp's
    window.theme.actions[palette.DARK].trigger()
    try:
        assert palette.is_dark() and palette.CANVAS_BG.rgb() != light_bg
        assert {palette.CANVAS_BG.rgb(), palette.SERIES_1.rgb()} <= _colors(wave)
        assert light_bg not in _colors(wave)
        dark_spec = _colors(spec)
        assert dark_spec <= set(level_colors()) and not dark_spec & light_spec
    finally:
        window.theme.actions[palette.LIGHT].trigger()


def test_play_button_gives_the_player_the_clip_and_toggles(qtbot, window) -> None:
    from app.views.audio_player import PLAYBACK_EXTRA, playback_available

    _tab, view = _audio_tab(qtbot, window, 0)
    [panel] = view.panels()
    bar = panel.player
    if not playback_available():
        assert PLAYBACK_EXTRA in bar.note.text() and not bar.play_button.isVisibleTo(bar)
        pytest.skip("QtMultimedia is not installed: the note says so")
    assert bar.player.sourceDevice() is None
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert bar.play_button.isChecked() and "Pause" in bar.play_button.text()
    qtbot.waitUntil(lambda: bar.player.sourceDevice() is not None, timeout=TIMEOUT)  # the WAV is made on a worker
    device = bar.player.sourceDevice()
    assert device is not None and bytes(device.data())[:4] == b"RIFF"
    import io as _io

    import soundfile
    played, rate = soundfile.read(_io.BytesIO(bytes(device.data())), dtype="int16", always_2d=True)
    assert rate == 16000 and np.array_equal(played, panel.clip.samples)  # the clip's own samples
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert not bar.play_button.isChecked() and "Play" in bar.play_button.text()


def test_record_shown_waits_for_the_audio(qtbot, window) -> None:
    tab, _view = _audio_tab(qtbot, window, 0)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT) as shown:
        tab.select_record(2)
    assert shown.args == [2]
    [panel] = tab.detail.audio.panels()  # decoded before the detail said it was shown
    assert panel.clip.ref.codec == "pcm_float" and "0.350 s" in panel.header_text()  # 5600 frames at 16 kHz
