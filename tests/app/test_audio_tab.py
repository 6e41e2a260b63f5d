"""The Audio tab through the real main window: a clip's header, waveform and spectrogram; zoom; no-audio records;
the playhead, the channel choice, Save as WAV, and the export dialog's audio format."""
from __future__ import annotations

import enum
import io

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("soundfile")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt, Signal  # noqa: E402
from PySide6.QtGui import QMouseEvent, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.style import palette  # noqa: E402
from app.views.audio_player import PLAYBACK_EXTRA, playback_available  # noqa: E402
from app.views.audio_view import level_colors  # noqa: E402
from app.views.record_detail import AUDIO_TAB, NO_AUDIO_TIP, TREE_TAB  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import export_with, open_done, select_decoded  # noqa: E402

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


def test_dark_theme_repaints_the_waveform_and_the_spectrogram_keeps_its_colour_map(qtbot, window) -> None:
    _tab, view = _audio_tab(qtbot, window, 0)
    [panel] = view.panels()
    wave, spec = panel.waveforms[0], panel.spectrogram
    qtbot.waitUntil(lambda: wave.isVisible() and wave.width() > 100, timeout=TIMEOUT)
    light_bg = palette.CANVAS_BG.rgb()
    assert light_bg in _colors(wave)
    assert spec.image.colorTable() == level_colors()  # magma: perceptual, the same in both themes
    window.theme.actions[palette.DARK].trigger()
    try:
        assert palette.is_dark() and palette.CANVAS_BG.rgb() != light_bg
        assert {palette.CANVAS_BG.rgb(), palette.SERIES_1.rgb()} <= _colors(wave)
        assert light_bg not in _colors(wave)
        assert spec.image.colorTable() == level_colors()
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


def _press(widget, x: int, buttons=Qt.MouseButton.LeftButton, kind=QEvent.Type.MouseButtonPress) -> None:
    """A left-button press (or, with ``kind``, a move while held) at ``x`` across ``widget``."""
    where = QPointF(x, widget.height() / 2)
    event = QMouseEvent(kind, where, QPointF(widget.mapToGlobal(where.toPoint())),
                        Qt.MouseButton.LeftButton if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton,
                        buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def test_click_and_drag_move_the_playhead_and_its_time(qtbot, window) -> None:
    _tab, view = _audio_tab(qtbot, window, 3)  # 6400 frames at 16 kHz
    [panel] = view.panels()
    wave, spec, axis = panel.waveforms[0], panel.spectrogram, panel.axis
    qtbot.waitUntil(lambda: wave.isVisible() and wave.width() > 100, timeout=TIMEOUT)
    assert panel.position == 0 and panel.position_text() == "0:00.0 / 0:00.4"
    with qtbot.waitSignal(panel.position_changed, timeout=TIMEOUT) as moved:
        _press(wave, wave.width() // 2)
    assert moved.args == [round(wave.width() // 2 / wave.width() * 6400)]
    assert panel.position_text() == "0:00.2 / 0:00.4"
    assert abs(wave.playhead_x() - wave.width() // 2) < 1 and abs(spec.playhead_x() - spec.width() // 2) < 1
    for strip in (wave, spec):  # painted there
        image = strip.grab().toImage()
        assert palette.SERIES_5.rgb() in {image.pixelColor(x, 30).rgb() for x in range(strip.width() // 2 - 2,
                                                                                       strip.width() // 2 + 3)}
    _press(spec, spec.width() * 3 // 8, kind=QEvent.Type.MouseMove)  # a drag
    assert abs(panel.position - 2400) <= 6400 / spec.width() and panel.position_text() == "0:00.1 / 0:00.4"
    _press(wave, wave.width() - 1, buttons=Qt.MouseButton.NoButton, kind=QEvent.Type.MouseMove)  # no button: no move
    assert abs(panel.position - 2400) <= 6400 / spec.width()
    qtbot.mouseClick(panel.zoom_in, Qt.MouseButton.LeftButton)  # 1600..4800: the playhead a quarter across
    assert panel.visible_range() == (1600, 4800) and abs(wave.playhead_x() - wave.width() / 4) < 2
    _press(axis, axis.width())  # the time axis takes clicks too: the range's end
    assert panel.position == 4800 and [label for _, label in axis.ticks()][0] == "0:00.10"
    if not playback_available():
        assert PLAYBACK_EXTRA in panel.player.note.text()  # the one-line note stays


class _FakeOutput(QObject):
    """Stands in for QAudioOutput where QtMultimedia is not installed."""


class _FakePlayer(QObject):
    """Stands in for QMediaPlayer: records seeks and reports positions as a player does."""

    positionChanged = Signal(int)
    playbackStateChanged = Signal(object)
    mediaStatusChanged = Signal(object)
    PlaybackState = enum.Enum("PlaybackState", "StoppedState PlayingState PausedState")
    MediaStatus = enum.Enum("MediaStatus", "NoMedia LoadingMedia LoadedMedia")
    made: list[_FakePlayer] = []

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.device, self.seeks, self.playing, self.at = None, [], False, 0
        _FakePlayer.made.append(self)

    def setAudioOutput(self, _output) -> None:
        pass

    def setSourceDevice(self, device, _url) -> None:
        self.device = device

    def setSource(self, _url) -> None:
        self.device = None

    def sourceDevice(self):
        return self.device

    def setPosition(self, ms: int) -> None:
        self.seeks.append(ms)
        self.at = ms
        self.positionChanged.emit(ms)

    def position(self) -> int:
        return self.at

    def play(self) -> None:
        self.playing = True

    def pause(self) -> None:
        self.playing = False

    stop = pause


@pytest.fixture
def fake_player(monkeypatch):
    from app.views import audio_player

    monkeypatch.setattr(audio_player, "QMediaPlayer", _FakePlayer)
    monkeypatch.setattr(audio_player, "QAudioOutput", _FakeOutput)
    _FakePlayer.made.clear()
    return _FakePlayer.made


def _played(bar) -> np.ndarray:
    import soundfile

    return soundfile.read(io.BytesIO(bytes(bar.player.sourceDevice().data())), dtype="int16", always_2d=True)[0]


def test_a_click_seeks_the_player_and_playback_moves_the_playhead(qtbot, window, fake_player) -> None:
    _tab, view = _audio_tab(qtbot, window, 3)
    [panel] = view.panels()
    bar, wave = panel.player, panel.waveforms[0]
    qtbot.waitUntil(lambda: wave.isVisible() and wave.width() > 100, timeout=TIMEOUT)
    assert bar.player in fake_player and not bar.note.isVisibleTo(bar)
    _press(wave, wave.width() // 2)  # before the first play: remembered, the time shows it
    assert bar.time.text() == "0:00.2 / 0:00.4" and bar.slider.value() == 200
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.player.sourceDevice() is not None and bar.player.playing, timeout=TIMEOUT)
    assert bar.player.seeks == [200]  # playback starts at the playhead
    bar.player.at = 0  # a player that dropped it (media not loaded yet) is given it again once loaded
    bar.player.mediaStatusChanged.emit(_FakePlayer.MediaStatus.LoadedMedia)
    assert bar.player.seeks == [200, 200]
    _press(wave, wave.width() // 4)
    assert bar.player.seeks[-1] == 100 and panel.position == 1600
    with qtbot.waitSignal(panel.position_changed, timeout=TIMEOUT) as moved:
        bar.player.positionChanged.emit(260)  # playback runs on
    assert moved.args == [4160] and panel.position_text() == "0:00.3 / 0:00.4" and bar.slider.value() == 260
    qtbot.mouseClick(panel.zoom_in, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.zoom_in, Qt.MouseButton.LeftButton)  # 1600 frames about the middle: 2400..4000
    start, end = panel.visible_range()
    assert end - start == 1600
    bar.player.positionChanged.emit(350)  # past the range's end: the view pages along
    assert panel.position == 5600 and panel.visible_range() == (4800, 6400)


def _stereo_file(tmp_path):
    import soundfile

    from codec.storage.writer import write_records
    from tests.builders import bytestrings, example

    rate = 8000
    t = np.arange(rate // 2) / rate
    left = (0.5 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    right = (0.25 * np.sin(2 * np.pi * 2000 * t) * 32767).astype(np.int16)
    samples = np.stack([left, right], axis=1)
    wav = io.BytesIO()
    soundfile.write(wav, samples, rate, subtype="PCM_16", format="WAV")
    path = tmp_path / "stereo.tfrecord"
    write_records(str(path), [example({"audio/encoded": bytestrings(wav.getvalue())})])
    return path, samples


def test_channel_choice_drives_waveforms_spectrogram_and_playback(qtbot, window, tmp_path, fake_player) -> None:
    path, samples = _stereo_file(tmp_path)
    _tab, view = _select(qtbot, open_done(window, qtbot, str(path)), 0)
    [panel] = view.panels()
    box, bar, spec = panel.channel_box, panel.player, panel.spectrogram
    assert [box.itemText(i) for i in range(box.count())] == ["All channels", "Channel 1", "Channel 2"]
    assert all(w.isVisibleTo(panel) for w in panel.waveforms) and spec.levels is panel.clip.levels
    # the mix shows both tones; channel 2's spectrogram has only its 2 kHz tone (bin 128 of 512 at 8 kHz)
    assert panel.clip.levels[28].mean() > 200 and panel.clip.levels[128].mean() > 200
    box.setCurrentIndex(2)
    assert panel.channel == 1 and not panel.waveforms[0].isVisibleTo(panel) and panel.waveforms[1].isVisibleTo(panel)
    assert spec.levels is panel.clip.channel_levels[1] and spec.levels[128].mean() > 200 > spec.levels[28].mean()
    assert "channel 2" in spec.toolTip()
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.player.sourceDevice() is not None, timeout=TIMEOUT)
    assert np.array_equal(_played(bar), samples[:, 1:2])  # only channel 2 plays
    box.setCurrentIndex(0)
    assert not bar.play_button.isChecked() and bar.player.sourceDevice() is None  # pauses; the mix is made anew
    assert all(w.isVisibleTo(panel) for w in panel.waveforms) and spec.levels is panel.clip.levels
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.player.sourceDevice() is not None, timeout=TIMEOUT)
    assert np.array_equal(_played(bar), samples)


def test_save_as_wav_writes_the_clip_as_export_does(qtbot, window, tmp_path, monkeypatch) -> None:
    import soundfile

    from app.views import audio_view
    from codec.decode.audio import wav_bytes

    _tab, view = _audio_tab(qtbot, window, 3)  # int16 PCM list: written as PCM_16
    [panel] = view.panels()
    assert panel.default_wav_name() == "000003_audio_pcm16.wav"
    out = tmp_path / "clip.wav"
    asked = []
    monkeypatch.setattr(audio_view.QFileDialog, "getSaveFileName",
                        lambda _parent, _title, start, _filter: (asked.append(start), (str(out), ""))[1])
    with qtbot.waitSignal(panel.saved, timeout=TIMEOUT) as saved:
        qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    assert asked[0].endswith("000003_audio_pcm16.wav") and saved.args == [f"saved to {out}"]
    assert out.read_bytes() == wav_bytes(panel.clip.ref)
    written, rate = soundfile.read(str(out), dtype="int16", always_2d=True)
    assert rate == 16000 and np.array_equal(written, panel.clip.samples)
    assert panel.status.text() == f"saved to {out}" and panel.save_button.isEnabled()
    with qtbot.waitSignal(panel.saved, timeout=TIMEOUT) as failed:
        panel.save_wav(str(tmp_path / "missing" / "clip.wav"))
    assert failed.args[0].startswith("cannot save the clip: ") and "\n" not in failed.args[0]


def test_export_dialog_writes_one_wav_per_audio_value_with_the_source_samples(qtbot, window, tmp_path) -> None:
    import soundfile

    from codec.decode.audio import decode_audio, find_audio
    from codec.decode.decoder import decode_record
    from codec.ops.export import image_file_name

    tab = open_done(window, qtbot, str(AUDIO))
    dialog = window.edit_actions.export_current()
    dialog.set_format("audio")
    assert dialog.output.text().endswith("audio-export_audio") and "WAV" in dialog.note.text()
    assert not dialog.compression.isEnabled() and dialog.export_button.isEnabled()
    out = tmp_path / "wavs"
    report = export_with(qtbot, dialog, out, TIMEOUT)
    assert report is not None and report.files == 12 and dialog.message == f"wrote 12 audio files to {out}"
    records = tab.session.records
    for i in range(len(records)):
        [ref] = find_audio(decode_record(records.data(i), records.payload))
        want = decode_audio(ref).samples
        got, rate = soundfile.read(str(out / image_file_name(i, ref.key, 0, None, "wav")), dtype=want.dtype.name,
                                   always_2d=True)
        assert rate == 16000 and np.array_equal(got, want), i


def test_zoomed_in_the_spectrogram_is_computed_for_the_range_in_the_clips_colours(qtbot, window, tmp_path) -> None:
    path, _samples = _stereo_file(tmp_path)  # 4,000 frames: the clip's own picture is 219 columns wide
    _tab, view = _select(qtbot, open_done(window, qtbot, str(path)), 0)
    [panel] = view.panels()
    spec, clip = panel.spectrogram, panel.clip
    qtbot.waitUntil(lambda: spec.isVisible() and spec.width() > 100, timeout=TIMEOUT)
    with qtbot.waitSignal(panel.detail_shown, timeout=TIMEOUT):
        for _ in range(3):
            qtbot.mouseClick(panel.zoom_in, Qt.MouseButton.LeftButton)  # 500 frames: ~27 of its columns
    start, end = panel.visible_range()
    assert (start, end) == (1750, 2250) and spec.zoomed_in()
    detail = spec.shown_detail()
    assert np.array_equal(detail, clip.detail_levels(None, start, end, spec.width()))
    assert detail.shape[1] >= spec.width() // 2  # about a column per pixel, not 27 stretched
    # coloured as the whole clip: its tones at the levels the clip's own picture gives them
    for tone_bin in (28, 128):
        assert abs(float(detail[tone_bin].mean()) - float(clip.levels[tone_bin].mean())) < 8
    with qtbot.waitSignal(panel.detail_shown, timeout=TIMEOUT):
        panel.channel_box.setCurrentIndex(1)  # channel 1: its 440 Hz only
    assert spec.shown_detail()[28].mean() > 200 > spec.shown_detail()[128].mean()
    qtbot.mouseClick(panel.zoom_out, Qt.MouseButton.LeftButton)
    assert spec.shown_detail() is None  # another range: the clip's picture until its own is made
