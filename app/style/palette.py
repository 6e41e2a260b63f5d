"""Every colour the app paints, in a light and a dark variant, and the theme in use.

Read colours where they are painted: ``palette.BAD_TEXT``, ``palette.MUTED_COLOR``.
QColors (for painting and models' roles) are changed in place when the theme
changes, so a module that keeps one (``LENGTH_BG = palette.HEX_LENGTH_BG``) stays
current; strings (for style sheets and rich text) are rebound, so read them
through the module at the moment you build the text. ``changes.changed`` fires
after a switch, for widgets that must rebuild what they drew with a colour.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget

LIGHT = "light"
DARK = "dark"

# name: (light, dark); "#rrggbb" or "#aarrggbb" (alpha first, as QColor reads it).
# Text colours hold a WCAG contrast of at least 3 on the theme's window and base.
COLORS: dict[str, tuple[str, str]] = {
    # text: statuses and remarks
    "OK_TEXT": ("#15803d", "#4ade80"),  # a CRC that holds, a file written
    "BAD_TEXT": ("#c62828", "#f87171"),  # damage named in text
    "WARN_TEXT": ("#c2410c", "#fb923c"),  # recovered despite a bad length CRC; warnings
    "MUTED_TEXT": ("#64748b", "#94a3b8"),  # secondary text
    "ERROR_TEXT": ("#b91c1c", "#fb7185"),  # input that cannot be used, an image that cannot be decoded
    "NOTE_TEXT": ("#b45309", "#fbbf24"),  # a remark about input that still works
    "CAPTION_TEXT": ("#475569", "#cbd5e1"),  # captions under images
    "DAMAGED_TEXT": ("#d32f2f", "#ef5350"),  # damaged records in tables, the map and the gallery
    "RECOVERED_TEXT": ("#b86b00", "#ffa726"),
    "ACCENT_TEXT": ("#2563eb", "#60a5fa"),  # rows edited and not saved; "more…" rows to click
    # backgrounds
    "CANVAS_BG": ("#f1f5f9", "#15181c"),  # behind images
    "ERROR_BG": ("#fef2f2", "#3b1d1f"),  # behind an image that cannot be decoded
    "HEADER_BG": ("#f1f5f9", "#2a2f37"),  # a report's header band
    "HEADER_RULE": ("#e2e8f0", "#3d444f"),  # the line under it
    "DIFF_BG": ("#fef3c7", "#4a3f12"),  # a feature whose values differ between two records
    # record table rows: tints over the row's own background
    "DAMAGED_TINT": ("#38e53935", "#52ef5350"),
    "RECOVERED_TINT": ("#30fb8c00", "#40ffa726"),
    "GAP_TINT": ("#28fbc02d", "#38fbc02d"),  # the first record found after skipped bytes
    # the hex view's bands
    "HEX_LENGTH_BG": ("#dbeafe", "#1e3a5f"),
    "HEX_CRC_OK_BG": ("#d1fae5", "#14442e"),
    "HEX_CRC_BAD_BG": ("#fecaca", "#5c1f24"),
    "HEX_CRC_UNKNOWN_BG": ("#e2e8f0", "#353c47"),
    "HEX_HIGHLIGHT_BG": ("#fde082", "#6b5413"),
    "HEX_ZERO_FG": ("#a0aab8", "#6b7685"),  # zero bytes, faded
    # the corruption map
    "MAP_GROOVE": ("#2894a3b8", "#3094a3b8"),
    "MAP_KNOWN": ("#2d22c55e", "#4022c55e"),  # indexed bytes
    "MAP_RECOVERED": ("#ea8c00", "#ffa726"),
    "MAP_CURRENT": ("#1e293b", "#f1f5f9"),  # the current record's tick
    # charts
    "CHART_BAR": ("#3b82f6", "#60a5fa"),
    "CHART_BAR_ALT": ("#f59e0b", "#fbbf24"),
    "CHART_AXIS": ("#94a3b8", "#64748b"),
    "CHART_LABEL": ("#475569", "#cbd5e1"),
    "CHART_TRACK": ("#2d94a3b8", "#3894a3b8"),
    # chart series, in order (the image formats' bar)
    "SERIES_1": ("#3b82f6", "#60a5fa"),
    "SERIES_2": ("#10b981", "#34d399"),
    "SERIES_3": ("#f59e0b", "#fbbf24"),
    "SERIES_4": ("#8b5cf6", "#a78bfa"),
    "SERIES_5": ("#ef4444", "#f87171"),
    "SERIES_6": ("#64748b", "#94a3b8"),
    # the message bar over the tabs: a red wash and a rule under it
    "MESSAGE_BG": ("#1ee53935", "#40e53935"),
    "MESSAGE_RULE": ("#78e53935", "#a0ef5350"),
    # the gallery's frames
    "TILE_FRAME": ("#cbd5e1", "#4b5563"),  # a tile without an image
    "TILE_LABEL_BG": ("#dcffffff", "#dc1e2126"),  # behind a tile's number
}

# The same colours as "#rrggbb" strings, for style sheets and rich text.
TEXT_NAMES = {"OK_COLOR": "OK_TEXT", "BAD_COLOR": "BAD_TEXT", "RECOVERED_COLOR": "WARN_TEXT",
              "MUTED_COLOR": "MUTED_TEXT", "ERROR_COLOR": "ERROR_TEXT", "NOTE_COLOR": "NOTE_TEXT",
              "CAPTION_COLOR": "CAPTION_TEXT"}

# The Qt palette of the dark theme (the light theme is the style's own).
DARK_ROLES: dict[QPalette.ColorRole, str] = {
    QPalette.ColorRole.Window: "#262a30",
    QPalette.ColorRole.WindowText: "#e5e7eb",
    QPalette.ColorRole.Base: "#1e2126",
    QPalette.ColorRole.AlternateBase: "#252930",
    QPalette.ColorRole.ToolTipBase: "#30353d",
    QPalette.ColorRole.ToolTipText: "#e5e7eb",
    QPalette.ColorRole.PlaceholderText: "#8b95a3",
    QPalette.ColorRole.Text: "#e5e7eb",
    QPalette.ColorRole.Button: "#30353d",
    QPalette.ColorRole.ButtonText: "#e5e7eb",
    QPalette.ColorRole.BrightText: "#ff6b6b",
    QPalette.ColorRole.Light: "#474d57",
    QPalette.ColorRole.Midlight: "#3a3f48",
    QPalette.ColorRole.Mid: "#4b5260",
    QPalette.ColorRole.Dark: "#15171b",
    QPalette.ColorRole.Shadow: "#000000",
    QPalette.ColorRole.Highlight: "#2f6fd6",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#60a5fa",
    QPalette.ColorRole.LinkVisited: "#a78bfa",
}
DARK_DISABLED_TEXT = "#6b7280"
DARK_DISABLED_HIGHLIGHT = "#3a3f48"

_theme = LIGHT

# Set by _apply below; declared here for readers and type checkers.
OK_TEXT: QColor
BAD_TEXT: QColor
WARN_TEXT: QColor
MUTED_TEXT: QColor
ERROR_TEXT: QColor
NOTE_TEXT: QColor
CAPTION_TEXT: QColor
DAMAGED_TEXT: QColor
RECOVERED_TEXT: QColor
ACCENT_TEXT: QColor
CANVAS_BG: QColor
ERROR_BG: QColor
HEADER_BG: QColor
HEADER_RULE: QColor
DIFF_BG: QColor
DAMAGED_TINT: QColor
RECOVERED_TINT: QColor
GAP_TINT: QColor
HEX_LENGTH_BG: QColor
HEX_CRC_OK_BG: QColor
HEX_CRC_BAD_BG: QColor
HEX_CRC_UNKNOWN_BG: QColor
HEX_HIGHLIGHT_BG: QColor
HEX_ZERO_FG: QColor
MAP_GROOVE: QColor
MAP_KNOWN: QColor
MAP_RECOVERED: QColor
MAP_CURRENT: QColor
CHART_BAR: QColor
CHART_BAR_ALT: QColor
CHART_AXIS: QColor
CHART_LABEL: QColor
CHART_TRACK: QColor
TILE_FRAME: QColor
TILE_LABEL_BG: QColor
OK_COLOR: str
BAD_COLOR: str
RECOVERED_COLOR: str
MUTED_COLOR: str
ERROR_COLOR: str
NOTE_COLOR: str
CAPTION_COLOR: str
ERROR_STYLE: str
HINT_STYLE: str
SERIES: tuple[QColor, ...]


class _Changes(QObject):
    """Announces a theme switch (after the colours above changed)."""

    changed = Signal(str)


changes = _Changes()


def theme() -> str:
    """The theme whose colours are in use: ``LIGHT`` or ``DARK``."""
    return _theme


def is_dark() -> bool:
    return _theme == DARK


def color(name: str, which: str | None = None) -> QColor:
    """A new QColor for ``name`` in theme ``which`` (the current one by default)."""
    light, dark = COLORS[name]
    return QColor(dark if (which or _theme) == DARK else light)


def _apply(which: str) -> None:
    """Set every module colour to theme ``which``: QColors in place, strings rebound."""
    global _theme
    _theme = which
    module = globals()
    for name in COLORS:
        current, fresh = module.get(name), color(name, which)
        if isinstance(current, QColor):
            current.setRgba(fresh.rgba())
        else:
            module[name] = fresh
    for text_name, color_name in TEXT_NAMES.items():
        module[text_name] = module[color_name].name()
    module["ERROR_STYLE"] = f"color: {module['ERROR_COLOR']};"  # a dialog's line saying what cannot be used
    module["HINT_STYLE"] = f"color: {module['MUTED_COLOR']};"  # a dialog's hint under a field


_apply(LIGHT)
SERIES = tuple(globals()[f"SERIES_{k}"] for k in range(1, 7))  # the same objects: they follow the theme


def rgba(c: QColor) -> str:
    """``c`` for a style sheet, with its alpha: ``rgba(229, 57, 53, 30)``."""
    return f"rgba({c.red()}, {c.green()}, {c.blue()}, {c.alpha()})"


def use(which: str) -> None:
    """Switch the app's own colours to ``which`` and tell the views."""
    if which not in (LIGHT, DARK):
        raise ValueError(f"no theme {which!r}")
    changed = which != _theme
    _apply(which)
    if changed:
        changes.changed.emit(which)


def qt_palette(which: str, light: QPalette) -> QPalette:
    """The QApplication palette for ``which``: ``light`` (the style's own) or the dark roles over it."""
    if which != DARK:
        return QPalette(light)
    qp = QPalette(light)
    for role, value in DARK_ROLES.items():
        qp.setColor(role, QColor(value))
    disabled = QColor(DARK_DISABLED_TEXT)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        qp.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    qp.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Highlight, QColor(DARK_DISABLED_HIGHLIGHT))
    return qp


class _Restyler(QObject):
    """A widget's style sheet rebuilt after each theme switch; dies with the widget."""

    def __init__(self, widget: QWidget, style: Callable[[], str]) -> None:
        super().__init__(widget)
        self._widget, self._style = widget, style
        widget.setStyleSheet(style())
        changes.changed.connect(self.restyle)

    @Slot(str)
    def restyle(self, _which: str = "") -> None:
        self._widget.setStyleSheet(self._style())


def follow(widget: QWidget, style: Callable[[], str]) -> None:
    """Give ``widget`` the style sheet ``style()`` now and again after each theme switch.

    For a widget whose colour never changes with its content (a hint, a caption)."""
    _Restyler(widget, style)
