"""The corruption map: a slim strip showing where in the file the damage lies.

Top to bottom is the file's byte range (the decompressed stream for GZIP and
ZLIB files). Red marks are damage (lost headers, garbage, failing data CRCs,
a truncated end), orange ones records recovered despite a bad length CRC; a
translucent band shows the rows the table has on screen and a dark tick the
current record. While indexing, the part not read yet is hatched.

The widget only draws what it is given (:meth:`CorruptionMap.set_marks`,
:meth:`set_extent`...). A click emits ``mark_clicked(Mark)`` when it lands on
(or within a few pixels of) a mark, else ``offset_clicked(int)``; dragging
keeps emitting offsets, so the strip works as a scrubber.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from app.style import palette
from codec.format.framing import Problem

STRIP_WIDTH = 16
MARGIN = 2  # pixels above the first and below the last byte
SNAP_PIXELS = 4  # a click this close to a mark picks the mark
MIN_MARK_PIXELS = 3

# The palette's own QColors, changed in place when the theme changes.
GROOVE = palette.MAP_GROOVE
KNOWN = palette.MAP_KNOWN
RECOVERED = palette.MAP_RECOVERED
CURRENT = palette.MAP_CURRENT


@dataclass(frozen=True)
class Mark:
    """Damage at bytes [start, end) of the file (or stream); ``recovered`` draws it orange."""

    start: int
    end: int
    text: str
    problem: Problem | None = None
    recovered: bool = False


class CorruptionMap(QWidget):
    """A vertical strip the height of the record table: the whole file, with its damage."""

    offset_clicked = Signal(int)
    mark_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._extent = 0
        self._known = 0
        self._marks: list[Mark] = []
        self._current: tuple[int, int] | None = None
        self._view: tuple[int, int] | None = None
        self._what = "file"
        self.setFixedWidth(STRIP_WIDTH)
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("")  # tooltips are made per position in event()
        self.setAccessibleName("Corruption map")

    # -- content ----------------------------------------------------------
    def set_extent(self, extent: int, known: int | None = None, *, stream: bool = False) -> None:
        """The byte range drawn (``extent``) and how much of it is indexed (``known``)."""
        known = extent if known is None else min(known, extent)
        what = "decompressed stream" if stream else "file"
        if (extent, known, what) != (self._extent, self._known, self._what):
            self._extent, self._known, self._what = max(0, extent), max(0, known), what
            self.update()

    def set_marks(self, marks: list[Mark]) -> None:
        if marks != self._marks:
            self._marks = list(marks)
            self.update()

    def marks(self) -> list[Mark]:
        return list(self._marks)

    def set_current(self, start: int | None, end: int | None = None) -> None:
        """The current record's bytes, drawn as a tick; None for no record."""
        span = None if start is None else (start, max(start + 1, end if end is not None else start + 1))
        if span != self._current:
            self._current = span
            self.update()

    def set_view(self, start: int | None, end: int | None = None) -> None:
        """The bytes of the rows the table shows, drawn as a band; None for none."""
        span = None if start is None or end is None else (start, max(start + 1, end))
        if span != self._view:
            self._view = span
            self.update()

    @property
    def extent(self) -> int:
        return self._extent

    # -- geometry ---------------------------------------------------------
    def _span_pixels(self) -> int:
        return max(1, self.height() - 2 * MARGIN)

    def y_for_offset(self, offset: int) -> int:
        """The pixel row where byte ``offset`` is drawn."""
        if self._extent <= 0:
            return MARGIN
        frac = min(1.0, max(0.0, offset / self._extent))
        return MARGIN + min(self._span_pixels() - 1, int(frac * self._span_pixels()))

    def offset_at(self, y: int) -> int:
        """The byte drawn at pixel row ``y`` (clamped to the file)."""
        if self._extent <= 0:
            return 0
        frac = (y - MARGIN + 0.5) / self._span_pixels()
        return max(0, min(self._extent - 1, int(frac * self._extent)))

    def _mark_rect(self, mark: Mark) -> QRect:
        top = self.y_for_offset(mark.start)
        bottom = max(self.y_for_offset(max(mark.start, mark.end - 1)), top + MIN_MARK_PIXELS - 1)
        if bottom >= self.height() - MARGIN:
            top, bottom = max(MARGIN, top - (bottom - self.height() + MARGIN + 1)), self.height() - MARGIN - 1
        return QRect(1, top, self.width() - 2, bottom - top + 1)

    def mark_at(self, y: int) -> Mark | None:
        """The mark drawn at (or nearest within a few pixels of) row ``y``."""
        best, best_d = None, SNAP_PIXELS + 1
        for mark in self._marks:
            r = self._mark_rect(mark)
            d = 0 if r.top() <= y <= r.bottom() else min(abs(y - r.top()), abs(y - r.bottom()))
            if d < best_d:
                best, best_d = mark, d
        return best

    def sizeHint(self) -> QSize:
        return QSize(STRIP_WIDTH, 200)

    def minimumSizeHint(self) -> QSize:
        return QSize(STRIP_WIDTH, 40)

    # -- painting ---------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        w, h = self.width(), self.height()
        p.fillRect(QRect(0, 0, w, h), self.palette().color(QPalette.ColorRole.Base))
        groove = QRect(1, MARGIN, w - 2, h - 2 * MARGIN)
        p.fillRect(groove, GROOVE)
        if self._extent > 0:
            known_bottom = self.y_for_offset(self._known) if self._known < self._extent else groove.bottom() + 1
            p.fillRect(QRect(groove.left(), groove.top(), groove.width(), known_bottom - groove.top()), KNOWN)
            if known_bottom <= groove.bottom():
                hatch = QBrush(self.palette().color(QPalette.ColorRole.Mid), Qt.BrushStyle.BDiagPattern)
                p.fillRect(QRect(groove.left(), known_bottom, groove.width(), groove.bottom() - known_bottom + 1),
                           hatch)
            if self._view is not None:
                top, bottom = self.y_for_offset(self._view[0]), self.y_for_offset(self._view[1] - 1)
                band = QColor(self.palette().color(QPalette.ColorRole.Highlight))
                band.setAlpha(45)
                rect = QRect(0, top, w, max(2, bottom - top + 1))
                p.fillRect(rect, band)
                band.setAlpha(150)
                p.setPen(QPen(band, 1))
                p.drawRect(rect.adjusted(0, 0, -1, -1))
            for mark in self._marks:
                p.fillRect(self._mark_rect(mark), RECOVERED if mark.recovered else palette.DAMAGED_TEXT)
            if self._current is not None:
                y = self.y_for_offset(self._current[0])
                p.fillRect(QRect(0, max(0, y - 1), w, 3), CURRENT)
        frame = QColor(self.palette().color(QPalette.ColorRole.Mid))
        p.setPen(QPen(frame, 1))
        p.drawRect(QRect(0, 0, w - 1, h - 1))
        p.end()

    # -- mouse ------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._extent <= 0:
            super().mousePressEvent(event)
            return
        y = int(event.position().y())
        mark = self.mark_at(y)
        if mark is not None:
            self.mark_clicked.emit(mark)
        else:
            self.offset_clicked.emit(self.offset_at(y))
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton and self._extent > 0:
            self.offset_clicked.emit(self.offset_at(int(event.position().y())))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            pos = event.pos()
            QToolTip.showText(event.globalPos(), self.tooltip_at(pos.y()), self)
            return True
        return super().event(event)

    def tooltip_at(self, y: int) -> str:
        """What the strip shows at pixel row ``y``, in words."""
        if self._extent <= 0:
            return "Corruption map: nothing indexed yet"
        mark = self.mark_at(y)
        offset = self.offset_at(y)
        lines = [mark.text] if mark is not None else []
        lines.append(f"byte {offset:,} of {self._extent:,} ({offset / self._extent:.0%} into the {self._what})")
        if offset >= self._known:
            lines.append("not indexed yet")
        if not self._marks:
            lines.append("no damage found" if self._known >= self._extent else "no damage found so far")
        lines.append("Click to go there" if mark is None else "Click to show this problem")
        return "\n".join(lines)
