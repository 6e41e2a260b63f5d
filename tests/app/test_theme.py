"""View > Theme through the real main window: the Qt palette, the app's own colours and models' roles
follow it at once, it is remembered, and every colour has a light and a dark variant that reads."""
from __future__ import annotations

import itertools

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.models.record_table_model import Column
from app.models.settings import Settings
from app.shell.main_window import MainWindow
from app.style import palette
from app.views import box_painting
from tests.gui_helpers import open_done

pytestmark = pytest.mark.gui

DAMAGED_ROW = 5  # corrupt_data_crc.tfrecord: record 5's data CRC fails
TEXT_NAMES = [name for name in palette.COLORS if name.endswith("_TEXT")] + ["CHART_LABEL"]


@pytest.fixture(autouse=True)
def light_again():
    """Every test after these sees the light theme again, whatever they switched to."""
    app = QApplication.instance()
    style, qpalette = app.style().name(), QPalette(app.palette())
    yield
    palette.use(palette.LIGHT)
    if app.style().name() != style:
        app.setStyle(style)
    app.setPalette(qpalette)


def luminance(c: QColor) -> float:
    """WCAG relative luminance."""
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())


def contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def window_colour() -> QColor:
    return QApplication.palette().color(QPalette.ColorRole.Window)


def test_dark_switches_the_application_palette_and_a_damaged_rows_colour_and_back(window, qtbot):
    tab = open_done(window, qtbot, "corrupt_data_crc.tfrecord")
    model = tab.model
    status = model.index(DAMAGED_ROW, Column.STATUS)
    light_window = window_colour()
    assert light_window.lightness() > 180 and window.theme.chosen() == "system"
    assert status.data(Qt.ItemDataRole.ForegroundRole) == palette.color("DAMAGED_TEXT", palette.LIGHT)
    light_summary = window.status.problems_label.styleSheet()

    window.theme.actions[palette.DARK].trigger()

    assert window_colour().lightness() < 80
    assert QApplication.palette().color(QPalette.ColorRole.Text).lightness() > 180
    assert QApplication.style().name().lower() == "fusion"
    assert status.data(Qt.ItemDataRole.ForegroundRole) == palette.color("DAMAGED_TEXT", palette.DARK)
    assert palette.BAD_COLOR == palette.color("BAD_TEXT", palette.DARK).name()  # the rich-text names too
    assert window.status.problems_label.styleSheet() != light_summary  # the status chip restyled at once
    assert palette.color("DAMAGED_TEXT", palette.DARK).name() in window.status.problems_label.styleSheet()
    assert window.theme.actions[palette.DARK].isChecked()

    window.theme.actions[palette.LIGHT].trigger()

    assert window_colour() == light_window
    assert status.data(Qt.ItemDataRole.ForegroundRole) == palette.color("DAMAGED_TEXT", palette.LIGHT)
    assert window.status.problems_label.styleSheet() == light_summary


def test_the_choice_is_remembered_for_the_next_window(window, qtbot):
    window.theme.actions[palette.DARK].trigger()
    assert Settings().theme() == palette.DARK
    window.close()
    palette.use(palette.LIGHT)  # as a new run starts

    again = MainWindow(Settings())
    qtbot.addWidget(again)
    assert again.theme.chosen() == palette.DARK and palette.is_dark()
    assert window_colour().lightness() < 80

    again.theme.actions["system"].trigger()  # offscreen reports no dark scheme: light
    assert Settings().theme() == "system" and not palette.is_dark()
    assert window_colour().lightness() > 180


def test_a_label_that_follows_the_theme_is_restyled_and_hex_summaries_rebuilt(window, qtbot):
    tab = open_done(window, qtbot, "corrupt_data_crc.tfrecord")
    with qtbot.waitSignal(tab.detail.record_shown, timeout=10000):
        tab.select_record(DAMAGED_ROW)
    hex_summary = tab.detail.hex.summary
    assert palette.color("BAD_TEXT", palette.LIGHT).name() in hex_summary.text()
    hint = tab.qa.filter_bar.count_label
    assert palette.color("MUTED_TEXT", palette.LIGHT).name() in hint.styleSheet()

    window.theme.choose(palette.DARK)

    assert palette.color("BAD_TEXT", palette.DARK).name() in hex_summary.text()
    assert palette.color("MUTED_TEXT", palette.DARK).name() in hint.styleSheet()
    assert palette.color("OK_TEXT", palette.DARK).name() in tab.detail.header.text() or \
        palette.color("BAD_TEXT", palette.DARK).name() in tab.detail.header.text()


def test_every_palette_colour_has_a_light_and_a_dark_variant():
    for name, (light, dark) in palette.COLORS.items():
        assert QColor(light).isValid() and QColor(dark).isValid(), name
        assert isinstance(getattr(palette, name), QColor), name
    for which in (palette.LIGHT, palette.DARK):
        palette.use(which)
        for name in palette.COLORS:
            assert getattr(palette, name) == palette.color(name, which), (which, name)
        for text_name, color_name in palette.TEXT_NAMES.items():
            assert getattr(palette, text_name) == palette.color(color_name, which).name()
    kept = palette.BAD_TEXT  # modules that keep a palette QColor see it change in place
    palette.use(palette.DARK)
    assert kept is palette.BAD_TEXT and kept == palette.color("BAD_TEXT", palette.DARK)


@pytest.mark.parametrize("which", [palette.LIGHT, palette.DARK])
def test_text_colours_read_on_both_backgrounds(which):
    light = QApplication.style().standardPalette()
    qt = palette.qt_palette(which, light)
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
        background = qt.color(role)
        for name in TEXT_NAMES:
            ratio = contrast(palette.color(name, which), background)
            assert ratio >= 3, f"{name} on {role.name} in {which}: {ratio:.2f}"
        assert contrast(qt.color(QPalette.ColorRole.Text), qt.color(QPalette.ColorRole.Base)) >= 4.5


def test_box_colours_stay_apart_and_visible_on_dark():
    palette.use(palette.DARK)
    colours = box_painting.box_colors()
    assert colours is box_painting.DARK_BOX_COLORS and len(colours) == len(box_painting.BOX_COLORS)
    canvas = palette.CANVAS_BG
    for c in colours:
        assert contrast(c, canvas) >= 3, c.name()
    for a, b in itertools.combinations(colours, 2):
        distance = sum((x - y) ** 2 for x, y in zip(a.getRgb()[:3], b.getRgb()[:3])) ** 0.5
        assert distance > 45, (a.name(), b.name())
    labels = ["cat", "dog", "bird"]
    assert {c.name() for c in box_painting.label_colors(labels).values()} <= {c.name() for c in colours}
