"""One record's framed bytes (header, data, footer) as a lazy table of 16 bytes a row.

:class:`HexModel` makes rows from the header, data and footer pieces on
demand (a 50 MB record is never copied or formatted whole) and colours the
three parts by role; :class:`~app.views.hex_view.HexView` shows it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from app.models.record_format import reads_array_record
from app.style import palette
from codec.format.crc import masked_crc
from codec.format.framing import CRC, FOOTER_SIZE, HEADER, HEADER_SIZE, LENGTH, Compression
from codec.sources.protocol import RecordReader

BYTES_PER_ROW = 16
OFFSET_COLUMN = 0
ASCII_COLUMN = BYTES_PER_ROW + 1
BYTE_ROLE = Qt.ItemDataRole.UserRole + 1  # absolute offset of a byte cell
ROW_COLORS_ROLE = Qt.ItemDataRole.UserRole + 2  # per-byte (text, background, foreground) of a row

# Bands on a light theme: blue length, green CRC fields that hold, red ones
# that do not, amber for a highlighted range; data bytes stay plain.
LENGTH_BG = palette.HEX_LENGTH_BG  # the palette's QColors: they follow the theme in place
CRC_OK_BG = palette.HEX_CRC_OK_BG
CRC_BAD_BG = palette.HEX_CRC_BAD_BG
CRC_UNKNOWN_BG = palette.HEX_CRC_UNKNOWN_BG
HIGHLIGHT_BG = palette.HEX_HIGHLIGHT_BG
ZERO_FG = palette.HEX_ZERO_FG


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
    position: int | None = None  # an ArrayRecord record's position: its bytes as decoded from its chunk, unframed

    @property
    def chunked(self) -> bool:
        """An ArrayRecord record: no header or footer of its own (its chunk is compressed), offsets from 0."""
        return self.position is not None

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


def framed_record(tfile: RecordReader, offset: int, data: bytes, stored_crc: int | None,
                  computed_crc: int | None) -> FramedRecord:
    """Collect header and footer around ``data`` (what ``TFRecordFile.read`` returned); an ArrayRecord
    record has neither: its bytes alone, as decoded from its chunk."""
    if reads_array_record(tfile):
        return FramedRecord(0, b"", data, b"", None, position=offset)
    header = tfile.read_bytes(offset, HEADER_SIZE)
    footer = b""
    if stored_crc is not None:
        footer = tfile.read_bytes(offset + HEADER_SIZE + len(data), FOOTER_SIZE)
    if computed_crc is None and stored_crc is not None:
        computed_crc = masked_crc(data)
    compressed = tfile.compression is not Compression.NONE
    return FramedRecord(offset, header, data, footer, computed_crc, compressed, tfile.unsaved)


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
        self._bad_length_crc = rec is not None and not rec.chunked and not rec.length_crc_ok
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
        if rec is not None and rec.chunked:
            return "data"
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
                return palette.MUTED_TEXT
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
        return f"{where}\ndata byte {pos - len(rec.header):,}"
