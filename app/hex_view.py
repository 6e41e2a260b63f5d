"""A hex view of one record's framed bytes: header, data, footer.

:class:`HexModel` is a table over the bytes, 16 per row, made lazily from
the header, data and footer pieces (a 50 MB record is never copied or
formatted whole). :class:`HexView` puts a summary of the header and both CRCs
above the grid and colours the three parts; :meth:`HexView.highlight` marks a
byte range (damaged bytes, later).
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPalette, QTextDocumentFragment
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QStyle, QStyledItemDelegate,
                               QStyleOptionViewItem, QTableView, QVBoxLayout, QWidget)

from codec.crc import masked_crc
from codec.framing import CRC, FOOTER_SIZE, HEADER, HEADER_SIZE, LENGTH, Compression

BYTES_PER_ROW = 16
OFFSET_COLUMN = 0
ASCII_COLUMN = BYTES_PER_ROW + 1
BYTE_ROLE = Qt.ItemDataRole.UserRole + 1  # absolute offset of a byte cell
ROW_COLORS_ROLE = Qt.ItemDataRole.UserRole + 2  # per-byte (text, background, foreground) of a row

# Bands on a light theme: blue length, green CRC fields that hold, red ones
# that do not, amber for a highlighted range; data bytes stay plain.
LENGTH_BG = QColor(219, 234, 254)
CRC_OK_BG = QColor(209, 250, 229)
CRC_BAD_BG = QColor(254, 202, 202)
CRC_UNKNOWN_BG = QColor(226, 232, 240)
HIGHLIGHT_BG = QColor(253, 224, 130)
ZERO_FG = QColor(160, 170, 184)
OFFSET_FG = QColor(100, 116, 139)
OK_COLOR = "#15803d"
BAD_COLOR = "#c62828"
MUTED_COLOR = "#64748b"


@dataclass(frozen=True)
class FramedRecord:
    """A record's three pieces as read from the (uncompressed) stream.

    ``footer`` is empty and the CRCs None for a truncated record.
    ``computed_data_crc`` is the masked CRC-32C of ``data``.
    """

    offset: int
    header: bytes
    data: bytes
    footer: bytes
    computed_data_crc: int | None
    stream_offsets: bool = False  # offsets are in the decompressed stream (GZIP/ZLIB)
    unsaved: bool = False  # an edited record, framed as saving will write it: offsets count from its start

    @property
    def length(self) -> int | None:
        return LENGTH.unpack_from(self.header)[0] if len(self.header) >= LENGTH.size else None

    @property
    def stored_length_crc(self) -> int | None:
        return HEADER.unpack_from(self.header)[1] if len(self.header) >= HEADER_SIZE else None

    @property
    def computed_length_crc(self) -> int | None:
        return masked_crc(self.header[:LENGTH.size]) if len(self.header) >= LENGTH.size else None

    @property
    def stored_data_crc(self) -> int | None:
        return CRC.unpack_from(self.footer)[0] if len(self.footer) >= FOOTER_SIZE else None

    @property
    def length_crc_ok(self) -> bool:
        return self.stored_length_crc is not None and self.stored_length_crc == self.computed_length_crc

    @property
    def data_crc_ok(self) -> bool | None:
        """True/False when both CRCs are known, None when the footer is missing."""
        if self.stored_data_crc is None or self.computed_data_crc is None:
            return None
        return self.stored_data_crc == self.computed_data_crc

    @property
    def size(self) -> int:
        return len(self.header) + len(self.data) + len(self.footer)


def framed_record(tfile: Any, offset: int, data: bytes, stored_crc: int | None,
                  computed_crc: int | None) -> FramedRecord:
    """Collect header and footer around ``data`` (what ``TFRecordFile.read`` returned)."""
    header = tfile.read_bytes(offset, HEADER_SIZE)
    footer = b""
    if stored_crc is not None:
        footer = tfile.read_bytes(offset + HEADER_SIZE + len(data), FOOTER_SIZE)
    if computed_crc is None and stored_crc is not None:
        computed_crc = masked_crc(data)
    compressed = getattr(tfile, "compression", Compression.NONE) is not Compression.NONE
    return FramedRecord(offset, header, data, footer, computed_crc, compressed, getattr(tfile, "unsaved", False))


def _ascii(byte: int) -> str:
    return chr(byte) if 0x20 <= byte < 0x7F else "·"


class HexModel(QAbstractTableModel):
    """Rows of 16 bytes: offset, 16 hex cells, the ASCII of the row."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rec: FramedRecord | None = None
        self._highlight: tuple[int, int] | None = None  # record-relative [start, end)
        self._bad_length_crc = False
        self._bad_data_crc = False

    # -- content ----------------------------------------------------------
    def set_record(self, rec: FramedRecord | None) -> None:
        self.beginResetModel()
        self._rec = rec
        self._highlight = None
        self._bad_length_crc = rec is not None and not rec.length_crc_ok
        self._bad_data_crc = rec is not None and rec.data_crc_ok is False
        self.endResetModel()

    @property
    def record(self) -> FramedRecord | None:
        return self._rec

    def set_highlight(self, start: int, end: int) -> tuple[int, int] | None:
        """Mark absolute offsets [start, end) (clipped to the record); returns the relative range."""
        rec = self._rec
        old = self._highlight
        self._highlight = None
        if rec is not None:
            lo, hi = max(0, start - rec.offset), min(rec.size, end - rec.offset)
            if lo < hi:
                self._highlight = (lo, hi)
        for span in (old, self._highlight):
            if span is not None:
                self._rows_changed(span[0] // BYTES_PER_ROW, (span[1] - 1) // BYTES_PER_ROW)
        return self._highlight

    def _rows_changed(self, first: int, last: int) -> None:
        self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1))

    def byte_at(self, pos: int) -> int | None:
        """The byte at record-relative ``pos``, or None past the end."""
        rec = self._rec
        if rec is None or pos < 0:
            return None
        if pos < len(rec.header):
            return rec.header[pos]
        pos -= len(rec.header)
        if pos < len(rec.data):
            return rec.data[pos]
        pos -= len(rec.data)
        return rec.footer[pos] if pos < len(rec.footer) else None

    def part(self, pos: int) -> str:
        """"length", "length_crc", "data" or "footer" for a record-relative position."""
        rec = self._rec
        if pos < LENGTH.size:
            return "length"
        if pos < HEADER_SIZE:
            return "length_crc"
        return "data" if rec is None or pos < HEADER_SIZE + len(rec.data) else "footer"

    # -- table ------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if parent.isValid() or self._rec is None:
            return 0
        return (self._rec.size + BYTES_PER_ROW - 1) // BYTES_PER_ROW

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else BYTES_PER_ROW + 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and section > OFFSET_COLUMN:
            return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if section == OFFSET_COLUMN:
            return "Offset"
        if section == ASCII_COLUMN:
            return "ASCII"
        return f"{section - 1:02X}"

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._rec is None:
            return None
        row, col = index.row(), index.column()
        start = row * BYTES_PER_ROW
        if col == OFFSET_COLUMN:
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{self._rec.offset + start:,}"
            if role == Qt.ItemDataRole.ForegroundRole:
                return OFFSET_FG
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"byte {self._rec.offset + start:,} ({self._rec.offset + start:#x}); record byte {start:,}"
            return None
        if col == ASCII_COLUMN:
            if role == ROW_COLORS_ROLE:
                return self._row_cells(start)
            if role == Qt.ItemDataRole.DisplayRole:
                return "".join(text for text, _, _ in self._row_cells(start))
            return None
        pos = start + col - 1
        byte = self.byte_at(pos)
        if byte is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{byte:02x}"
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._background(pos)
        if role == Qt.ItemDataRole.ForegroundRole:
            return ZERO_FG if byte == 0 and self._background(pos) is None else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._byte_tooltip(pos, byte)
        if role == BYTE_ROLE:
            return self._rec.offset + pos
        return None

    def _background(self, pos: int) -> QColor | None:
        if self._highlight is not None and self._highlight[0] <= pos < self._highlight[1]:
            return HIGHLIGHT_BG
        part = self.part(pos)
        if part == "length":
            return LENGTH_BG
        if part == "length_crc":
            return CRC_BAD_BG if self._bad_length_crc else CRC_OK_BG
        if part == "footer":
            return CRC_BAD_BG if self._bad_data_crc else (
                CRC_UNKNOWN_BG if self._rec.data_crc_ok is None else CRC_OK_BG)
        return None

    def _row_cells(self, start: int) -> list[tuple[str, QColor | None, QColor | None]]:
        cells = []
        for pos in range(start, start + BYTES_PER_ROW):
            byte = self.byte_at(pos)
            if byte is None:
                break
            fg = ZERO_FG if byte == 0 else None
            cells.append((_ascii(byte), self._background(pos), fg))
        return cells

    def _byte_tooltip(self, pos: int, byte: int) -> str:
        rec = self._rec
        where = f"byte {rec.offset + pos:,} ({rec.offset + pos:#x}) = {byte:#04x} ({byte})"
        part = self.part(pos)
        if part == "length":
            return f"{where}\nheader: length, uint64 little-endian = {rec.length:,}"
        if part == "length_crc":
            return f"{where}\nheader: masked CRC-32C of the length bytes"
        if part == "footer":
            return f"{where}\nfooter: masked CRC-32C of the data"
        return f"{where}\ndata byte {pos - HEADER_SIZE:,}"


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

    def set_record(self, rec: FramedRecord | None) -> None:
        """Show ``rec`` (see :func:`framed_record`); None empties the view."""
        self.model.set_record(rec)
        self.summary.setText(self.summary_html(rec) if rec is not None else "")
        self.table.scrollToTop()

    def clear(self) -> None:
        self.set_record(None)

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

    def clear_highlight(self) -> None:
        self.model.set_highlight(0, 0)

    @staticmethod
    def summary_html(rec: FramedRecord) -> str:
        """The framing: length and length CRC, then the data CRC, each checked; where it is."""
        parts = []
        length = rec.length
        if length is None:
            return f'<span style="color:{BAD_COLOR}">header cut short: {len(rec.header)} of 12 bytes</span>'
        parts.append(f"length <b>{length:,}</b>")
        stored = rec.stored_length_crc
        if rec.length_crc_ok:
            parts.append(f'length CRC {stored:#010x} <span style="color:{OK_COLOR}">ok</span>')
        else:
            parts.append(f"length CRC {stored:#010x} stored, {rec.computed_length_crc:#010x} computed: "
                         f'<b style="color:{BAD_COLOR}">MISMATCH</b>')
        ok = rec.data_crc_ok
        if ok is None:
            parts.append(f'<span style="color:{BAD_COLOR}">truncated: {len(rec.data):,} of {length:,} data bytes, '
                         f"no data CRC</span>")
        elif ok:
            parts.append(f'data CRC {rec.stored_data_crc:#010x} <span style="color:{OK_COLOR}">ok</span>')
        else:
            parts.append(f"data CRC {rec.stored_data_crc:#010x} stored, {rec.computed_data_crc:#010x} computed: "
                         f'<b style="color:{BAD_COLOR}">MISMATCH</b>')
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
        return f"{line}<br><span style='color:{MUTED_COLOR}'>{where}</span>&nbsp;&nbsp;{chips}"
