"""Audio in the gallery and the record tree, through the real main window: each audio record's tile is its
waveform with the clip's duration and rate, a clip that does not decode says so, the Show chooser offers
audio keys, and the tree's row of an audio value says its codec, rate, channels and duration."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
sf = pytest.importorskip("soundfile")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QStyleOptionViewItem  # noqa: E402

from app.models.gallery_model import TILE_ROLE  # noqa: E402
from app.style import palette  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES, bytestrings, example, ints  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 20000
AUDIO = FIXTURES / "media" / "audio.tfrecord"
EXPECTED = json.loads((FIXTURES / "media" / "MANIFEST.json").read_text())["audio.tfrecord"]["audio"]


def _gallery(window, qtbot, path, count: int):
    tab = open_done(window, qtbot, str(path))
    gallery = tab.qa.gallery
    tab.qa.show_gallery()
    model = gallery.model
    qtbot.waitUntil(lambda: model.rowCount() == count and model.tile_count() == count, timeout=TIMEOUT)
    return tab, gallery


def _tile(gallery, row: int):
    return gallery.model.index(row, 0).data(TILE_ROLE)


def _shot(gallery, row: int) -> QImage:
    """The tile as the delegate paints it."""
    delegate = gallery.delegate
    option = QStyleOptionViewItem()
    option.rect = QRect(QPoint(0, 0), delegate.cell_size())
    option.palette = gallery.palette()
    image = QImage(option.rect.size(), QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    delegate.paint(painter, option, gallery.model.index(row, 0))
    painter.end()
    return image


def _count(image: QImage, color: QColor) -> int:
    """Pixels of ``image`` in exactly ``color``."""
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return int(np.all(pixels[:, :image.width()] == color.getRgb(), axis=2).sum())


def _clock(frames: int, rate: int) -> str:
    tenths = int(frames * 10 / rate + 0.5)
    return f"0:{tenths // 10:02d}.{tenths % 10} · {rate // 1000} kHz"


def test_audio_records_tiles_are_waveforms_with_their_duration(window, qtbot):
    _, gallery = _gallery(window, qtbot, AUDIO, len(EXPECTED))
    for row, clip in enumerate(EXPECTED):
        tile = _tile(gallery, row)
        assert (tile.state, tile.medium) == ("ok", "audio"), tile.note
        assert tile.badge == _clock(clip["frames"], clip["sample_rate"])
        assert tile.note.startswith(f"{clip['key']}: ")
        wave = _count(tile.image, palette.SERIES_1)
        background = _count(tile.image, palette.CANVAS_BG)
        # the test clips are loud noise: most columns span a third or more of the height
        assert wave > tile.image.width() * tile.image.height() // 3, (row, wave)
        assert background > 0 and wave + background < tile.image.width() * tile.image.height() + 1
    shot = _shot(gallery, 0)
    assert _count(shot, palette.SERIES_1) > 1000  # the delegate draws the waveform
    keys = [gallery.image_combo.itemData(i) for i in range(gallery.image_combo.count())]
    assert {"audio/encoded", "audio/samples", "audio/pcm16"} <= set(keys)


def test_waveforms_follow_the_theme(window, qtbot):
    _, gallery = _gallery(window, qtbot, AUDIO, len(EXPECTED))
    before = QColor(palette.SERIES_1)
    other = palette.LIGHT if palette.is_dark() else palette.DARK
    back = palette.theme()
    window.theme.actions[other].trigger()
    try:
        assert QColor(palette.SERIES_1) != before
        gallery.view.viewport().repaint()  # painting asks for the tiles dropped with the old colours
        qtbot.waitUntil(lambda: gallery.model.tile_count() == len(EXPECTED), timeout=TIMEOUT)
        image = _tile(gallery, 0).image
        assert _count(image, palette.SERIES_1) > 0 and _count(image, before) == 0
    finally:
        window.theme.actions[back].trigger()


def test_a_silent_clip_draws_its_centre_line_only(window, qtbot, tmp_path):
    path = tmp_path / "silent.tfrecord"
    write_records(str(path), [example(audio=ints(*([0] * 1600)), sample_rate=ints(16000))])
    _, gallery = _gallery(window, qtbot, path, 1)
    tile = _tile(gallery, 0)
    assert tile.badge == "0:00.1 · 16 kHz"
    image = tile.image.convertToFormat(QImage.Format.Format_RGBA8888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    rows = np.flatnonzero(np.all(pixels == palette.SERIES_1.getRgb(), axis=2).any(axis=1))
    mid = (image.height() - 1) / 2
    assert len(rows) and all(abs(r - mid) < 1 for r in rows)  # the wave sits on the centre line, every column
    assert _count(tile.image, palette.SERIES_1) >= image.width()


def test_a_clip_that_does_not_decode_has_a_tile_saying_so(window, qtbot, tmp_path):
    good = io.BytesIO()
    sf.write(good, np.zeros(800, dtype=np.int16), 8000, format="WAV", subtype="PCM_16")
    path = tmp_path / "broken.tfrecord"
    write_records(str(path), [example(**{"audio/encoded": bytestrings(b"fLaC" + b"\x00" * 60), "label": ints(3)}),
                              example(**{"audio/encoded": bytestrings(good.getvalue())})])
    _, gallery = _gallery(window, qtbot, path, 2)
    broken = _tile(gallery, 0)
    assert (broken.state, broken.medium) == ("error", "audio")
    assert broken.note.startswith("audio/encoded: flac bytes do not decode")
    assert _tile(gallery, 1).state == "ok"
    shot = _shot(gallery, 0)
    assert _count(shot, palette.ERROR_BG) > 100  # drawn as a tile that cannot be shown, not an empty one
    assert gallery.delegate.placeholder_text(broken) == "audio does not decode"


def test_choosing_an_audio_key_shows_it_where_the_record_has_an_image_too(window, qtbot, tmp_path):
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 30, 30)).save(png, "PNG")
    wav = io.BytesIO()
    sf.write(wav, np.full(1600, 8000, dtype=np.int16), 16000, format="WAV", subtype="PCM_16")
    path = tmp_path / "both.tfrecord"
    write_records(str(path), [example(**{"image/encoded": bytestrings(png.getvalue()),
                                         "speech": bytestrings(wav.getvalue())})])
    _, gallery = _gallery(window, qtbot, path, 1)
    assert _tile(gallery, 0).medium == "image"  # Auto: the image first
    combo = gallery.image_combo
    qtbot.waitUntil(lambda: combo.findData("speech") >= 0, timeout=TIMEOUT)
    combo.setCurrentIndex(combo.findData("speech"))
    qtbot.waitUntil(lambda: gallery.model.tile_count() == 1, timeout=TIMEOUT)
    tile = _tile(gallery, 0)
    assert (tile.state, tile.medium, tile.badge) == ("ok", "audio", "0:00.1 · 16 kHz")


def test_tree_rows_of_audio_values_say_rate_channels_and_duration(window, qtbot):
    tab = open_done(window, qtbot, str(AUDIO))
    model = tab.detail.tree_model

    def values() -> dict:
        root = model.root_index()
        return {model.index(r, 0, root).data(): model.index(r, 2, root).data() for r in range(model.rowCount(root))}

    texts = []
    for record in range(4):
        tab.select_record(record)
        key = EXPECTED[record]["key"]
        qtbot.waitUntil(lambda: tab.detail.current_record() == record and tab.detail.loaded() is not None  # noqa: B023
                        and key in values(), timeout=TIMEOUT)  # noqa: B023
        texts.append(values()[key])
    assert texts == ["WAV · 16 kHz · mono · 0.25 s", "FLAC · 16 kHz · mono · 0.30 s",
                     "float PCM · 16 kHz · 1 ch · 0.35 s", "int16 PCM · 16 kHz · 1 ch · 0.40 s"]
