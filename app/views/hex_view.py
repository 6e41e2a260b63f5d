"""A hex view of one record's framed bytes: header, data, footer.

:class:`HexView` puts a summary of the header and both CRCs above the grid
of a :class:`~app.models.hex_model.HexModel` and colours the three parts;
:meth:`HexView.highlight` marks a byte range (damaged bytes).
"""
from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QFontDatabase, QPainter, QPalette, QTextDocumentFragment
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.models.hex_model import (
    ASCII_COLUMN,
    BYTES_PER_ROW,
    CRC_BAD_BG,
    CRC_OK_BG,
    LENGTH_BG,
    OFFSET_COLUMN,
    ROW_COLORS_ROLE,
    FramedRecord,
    HexModel,
)
from app.style import palette


class _AsciiDelegate(QStyledItemDelegate):
    """Paints the ASCII column one character per cell width, with each byte's band colour."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        cells = index.data(ROW_COLORS_ROLE) or []
        painter.save()
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, option.palette.color(QPalette.ColorRole.Highlight))
        painter.setFont(option.font)
        metrics = painter.fontMetrics()
        char_w = metrics.horizontalAdvance("M")
        x = option.rect.x() + 6
        text_color = option.palette.color(QPalette.ColorRole.Text)
        for text, bg, fg in cells:
            cell = QRect(x, option.rect.y(), char_w, option.rect.height())
            if bg is not None:
                painter.fillRect(cell, bg)
            painter.setPen(fg if fg is not None else text_color)
            painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, text)
            x += char_w
        painter.restore()


class HexView(QWidget):
    """A summary line of the framing above a lazy hex grid of the record's bytes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = HexModel(self)
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setContentsMargins(6, 4, 6, 4)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setFont(mono)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.setCornerButtonEnabled(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.table.setItemDelegateForColumn(ASCII_COLUMN, _AsciiDelegate(self.table))
        self.table.verticalHeader().hide()
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        metrics = self.table.fontMetrics()
        rows.setDefaultSectionSize(metrics.height() + 4)
        columns = self.table.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        columns.setMinimumSectionSize(8)
        columns.setFont(mono)
        char_w = metrics.horizontalAdvance("M")
        self.table.setColumnWidth(OFFSET_COLUMN, char_w * 14)
        for col in range(1, BYTES_PER_ROW + 1):
            # two hex digits and a space; one more space between the two halves of a row
            self.table.setColumnWidth(col, char_w * (4 if col == BYTES_PER_ROW // 2 else 3))
        self.table.setColumnWidth(ASCII_COLUMN, char_w * BYTES_PER_ROW + 14)
        columns.setStretchLastSection(True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self._record: FramedRecord | None = None
        palette.changes.changed.connect(self._restyle)  # the summary's colours are in its text

    def set_record(self, rec: FramedRecord | None) -> None:
        """Show ``rec`` (see :func:`framed_record`); None empties the view."""
        self._record = rec
        self.model.set_record(rec)
        self.summary.setText(self.summary_html(rec) if rec is not None else "")
        self.table.scrollToTop()

    def clear(self) -> None:
        self.set_record(None)

    def _restyle(self, _theme: str) -> None:
        if self._record is not None:
            self.summary.setText(self.summary_html(self._record))

    def highlight(self, start: int, end: int) -> bool:
        """Mark bytes [start, end) (offsets as in the Offset column) and scroll to them.

        Returns False when the range is outside this record.
        """
        span = self.model.set_highlight(start, end)
        if span is None:
            return False
        row = span[0] // BYTES_PER_ROW
        self.table.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def summary_text(self) -> str:
        """The summary line as plain text."""
        return QTextDocumentFragment.fromHtml(self.summary.text()).toPlainText()

    @staticmethod
    def summary_html(rec: FramedRecord) -> str:
        """The framing: length and length CRC, then the data CRC, each checked; where it is."""
        if rec.chunked:  # ArrayRecord: the chunk's compression and sizes were checked as it was decoded
            return (f"<b>{len(rec.data):,}</b> bytes, as decoded from the record's ArrayRecord chunk "
                    f"(record position {rec.position:,})<br><span style='color:{palette.MUTED_COLOR}'>"
                    "records in an ArrayRecord file have no framing of their own: offsets count from the "
                    "record's first byte</span>")
        parts = []
        length = rec.length
        if length is None:
            return f'<span style="color:{palette.BAD_COLOR}">header cut short: {len(rec.header)} of 12 bytes</span>'
        parts.append(f"length <b>{length:,}</b>")
        stored = rec.stored_length_crc
        if rec.length_crc_ok:
            parts.append(f'length CRC {stored:#010x} <span style="color:{palette.OK_COLOR}">ok</span>')
        else:
            parts.append(f"length CRC {stored:#010x} stored, {rec.computed_length_crc:#010x} computed: "
                         f'<b style="color:{palette.BAD_COLOR}">MISMATCH</b>')
        ok = rec.data_crc_ok
        if ok is None:
            parts.append(f'<span style="color:{palette.BAD_COLOR}">truncated: {len(rec.data):,} of {length:,} data bytes, '
                         f"no data CRC</span>")
        elif ok:
            parts.append(f'data CRC {rec.stored_data_crc:#010x} <span style="color:{palette.OK_COLOR}">ok</span>')
        else:
            parts.append(f"data CRC {rec.stored_data_crc:#010x} stored, {rec.computed_data_crc:#010x} computed: "
                         f'<b style="color:{palette.BAD_COLOR}">MISMATCH</b>')
        line = " · ".join(parts[:2]) + "<br>" + parts[2]
        crc_bad = not rec.length_crc_ok or ok is False
        legend = [("length", LENGTH_BG), ("CRC ok", CRC_OK_BG)]
        if crc_bad:
            legend.append(("CRC mismatch", CRC_BAD_BG))
        chips = " ".join(f'<span style="background:{color.name()}">&nbsp;{html.escape(name)}&nbsp;</span>'
                         for name, color in legend)
        if rec.unsaved:
            where = f"{rec.size:,} bytes framed as saving will write them (not in the file yet: offsets from 0)"
        else:
            stream = "decompressed stream" if rec.stream_offsets else "file"
            where = f"{rec.size:,} bytes framed at {stream} offset {rec.offset:,}"
        return f"{line}<br><span style='color:{palette.MUTED_COLOR}'>{where}</span>&nbsp;&nbsp;{chips}"
