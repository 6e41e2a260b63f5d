"""The selected record in detail: a header line, then Tree, Images, Hex, Text, Audio and Video tabs.

Records decode with their source's payload; a record that is not what the
payload expects says why on a line under the header. A 1-D or 2-D tensor
also shows its values as a grid under the tree.

:meth:`RecordDetail.show_record` reads and decodes the record: on the GUI
thread when it is small and the file plain, otherwise on a thread pool while
"loading…" shows. ``record_shown(index)`` fires when every tab is filled
(images, audio and the first video frame included); ``record_failed(index, message)`` when it cannot be read, and also
``file_changed(message)`` when that is because the file changed on disk.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from app.models.hex_model import FramedRecord, framed_record
from app.models.labels import ARRAY_RECORD_STATUS_TEXT, STATUS_TEXT, kind_text
from app.models.record_tree_model import RecordTreeModel
from app.models.value_text import summarize
from app.style import palette
from app.views.audio_view import AudioView
from app.views.hex_view import HexView
from app.views.image_preview import ImagePreview
from app.views.record_tree_view import RecordTreeView
from app.views.tensor_view import TensorGrid
from app.views.video_view import VideoView
from app.workers.background import PoolJobs
from app.workers.worker import one_line
from codec.decode.audio import AudioRef, find_audio
from codec.decode.decoder import DecodedRecord, RecordKind, TreeNode, build_tree, decode_record, is_text
from codec.decode.images import ImageRef, find_images
from codec.decode.video import Video, find_videos
from codec.errors import FileChangedError
from codec.format.framing import Compression, RecordInfo, RecordStatus
from codec.sources.protocol import RecordReader

INLINE_RECORD_BYTES = 2 << 20  # bigger records load on the pool
# In a GZIP/ZLIB file a read inflates from the checkpoint before it (2 MiB apart: a few ms):
# small records are still read here, so the detail does not wait for the table's repaint.
INLINE_COMPRESSED_BYTES = 256 << 10
TEXT_LIMIT_BYTES = 1 << 20  # the Text tab shows at most this much of a raw record
LOADING_DELAY_MS = 150  # "loading…" replaces the previous record only after this long

TREE_TAB, IMAGES_TAB, HEX_TAB, TEXT_TAB, AUDIO_TAB, VIDEO_TAB = range(6)
NO_AUDIO_TIP = "This record holds no audio (WAV, FLAC, Ogg or MP3 bytes, or PCM samples beside a sample rate)"
NO_VIDEO_TIP = ("This record holds no video (a TFDS Video, a list of encoded frames, or MP4, WebM, Matroska "
                "or AVI bytes)")


@dataclass
class LoadedRecord:
    """Everything the tabs show of one record, made off the GUI thread when large."""

    info: RecordInfo
    decoded: DecodedRecord
    tree: TreeNode
    images: list[ImageRef]
    framed: FramedRecord
    text: str | None  # raw records only: the bytes as UTF-8 with replacement characters
    text_cut: bool = False
    summaries: dict | None = None  # the tree's value texts, see record_tree_model.summarize
    note: str | None = None  # instead of "at offset N" (an edited record: codec.sources.pinned.PinnedRecord)
    binary: bool = False  # a raw record whose bytes are not text: the Text tab would show boxes
    labels: object = None  # class names of label ids (the source's codec.datasets.label_maps.LabelNames)
    audio: list[AudioRef] | None = None  # found here, decoded by the Audio tab on its worker
    videos: list[Video] | None = None  # found here, decoded by the Video tab on its worker


def load_record(tfile: RecordReader, index: int) -> LoadedRecord:
    """Read record ``index`` and decode it for display (the file-sized work)."""
    rec = tfile.read(index)
    labels = tfile.labels
    decoded = decode_record(rec.data, tfile.payload)
    text = None
    cut = binary = False
    if decoded.kind is RecordKind.RAW:
        cut = len(rec.data) > TEXT_LIMIT_BYTES
        text = rec.data[:TEXT_LIMIT_BYTES].decode("utf-8", errors="replace")
        binary = bool(rec.data) and not is_text(rec.data[:TEXT_LIMIT_BYTES])
    tree = build_tree(decoded)
    return LoadedRecord(
        info=rec.info, decoded=decoded, tree=tree, images=find_images(decoded),
        framed=framed_record(tfile, rec.info.offset, rec.data, rec.stored_crc, rec.computed_crc),
        text=text, text_cut=cut, summaries=summarize(tree, decoded, labels=labels), note=tfile.note,
        binary=binary, labels=labels, audio=find_audio(decoded), videos=find_videos(decoded))


def _load_or_changed(tfile: RecordReader, index: int) -> LoadedRecord | FileChangedError:
    """:func:`load_record` on the pool; a changed file comes back as its error (the pool passes on text only)."""
    try:
        return load_record(tfile, index)
    except FileChangedError as exc:
        return exc


def _size_text(n: int) -> str:
    if n < 1 << 20:
        return f"{n:,} bytes"
    return f"{n / (1 << 20):,.1f} MB"


class RecordDetail(QWidget):
    """Header line plus Tree / Images / Hex / Text tabs for one record."""

    record_shown = Signal(int)
    record_failed = Signal(int, str)
    file_changed = Signal(str)  # a read found the file changed on disk

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._index = -1
        self._loaded: LoadedRecord | None = None
        self._awaiting_images = self._awaiting_audio = self._awaiting_video = False
        self._wanted_tab = TREE_TAB
        self._switching = False
        self._loading_text = ""
        self._loading_timer = QTimer(self)
        self._loading_timer.setSingleShot(True)
        self._loading_timer.setInterval(LOADING_DELAY_MS)
        self._loading_timer.timeout.connect(self._show_loading)
        self._jobs = PoolJobs(self, max_threads=1)
        self._jobs.finished.connect(self._load_done)
        self._jobs.failed.connect(self._load_failed)

        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)  # a long line wraps instead of making the detail (and the window) wider
        self.header.setContentsMargins(8, 6, 8, 6)
        font = self.header.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.header.setFont(font)
        palette.changes.changed.connect(self._restyle)  # the header's colours are in its text

        self.tree_model = RecordTreeModel(self)
        self.tree = RecordTreeView(self)
        self.tree.setModel(self.tree_model)
        self.grid = TensorGrid(self)
        self.tree_split = QSplitter(Qt.Orientation.Vertical, self)
        self.tree_split.setChildrenCollapsible(False)
        self.tree_split.addWidget(self.tree)
        self.tree_split.addWidget(self.grid)
        self.tree_split.setStretchFactor(0, 3)
        self.tree_split.setStretchFactor(1, 2)
        self.grid.hide()
        self.images = ImagePreview(self)
        self.images.images_shown.connect(self._images_shown)
        self.hex = HexView(self)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.tree_split, "Tree")
        self.tabs.addTab(self.images, "Images")
        self.tabs.addTab(self.hex, "Hex")
        self.tabs.addTab(self.text, "Text")
        self.audio = AudioView(self)
        self.audio.audio_shown.connect(self._audio_shown)
        self.tabs.addTab(self.audio, "Audio")
        self.video = VideoView(self)
        self.video.video_shown.connect(self._video_shown)
        self.tabs.addTab(self.video, "Video")
        self.tabs.currentChanged.connect(self._tab_changed)

        self.placeholder = QLabel(self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(f"color: {palette.MUTED_COLOR};")
        self.placeholder.setMargin(24)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.tabs)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.note_line = QLabel(self)  # why a record is not what its payload expects (one line)
        self.note_line.setContentsMargins(8, 0, 8, 6)
        self.note_line.setStyleSheet(f"color: {palette.RECOVERED_COLOR};")
        self.note_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note_line.hide()

        layout.addWidget(self.header)
        layout.addWidget(self.note_line)
        layout.addWidget(self.stack, 1)
        self.clear()

    # -- public -----------------------------------------------------------
    def current_record(self) -> int:
        """The record shown or loading (-1 when none)."""
        return self._index

    def header_text(self) -> str:
        """The header line as plain text."""
        return QTextDocumentFragment.fromHtml(self.header.text()).toPlainText()

    def note_text(self) -> str:
        """The line saying why the record is not what its payload expects ("" when there is none)."""
        return self.note_line.toolTip() if self.note_line.isVisibleTo(self) else ""

    def loaded(self) -> LoadedRecord | None:
        return self._loaded

    def show_record(self, tfile: RecordReader, index: int) -> None:
        """Show record ``index`` of ``tfile``; ``record_shown(index)`` when done."""
        self._generation += 1
        self._index = index
        self._loaded = None
        self._awaiting_images = self._awaiting_audio = self._awaiting_video = False
        remote = tfile.is_remote  # its bytes come over the network: never read on this thread
        try:
            info = None if remote else tfile.record_info(index)
        except Exception as exc:  # noqa: BLE001 - shown in the header, never raised at the table
            self._show_failure(index, one_line(exc), changed=isinstance(exc, FileChangedError))
            return
        inline = INLINE_RECORD_BYTES if tfile.compression is Compression.NONE else INLINE_COMPRESSED_BYTES
        if info is not None and info.length <= inline:
            try:
                loaded = load_record(tfile, index)
            except Exception as exc:  # noqa: BLE001
                self._show_failure(index, one_line(exc), changed=isinstance(exc, FileChangedError))
                return
            self._display(loaded)
            return
        size = f" ({_size_text(info.length)})" if info is not None else ""
        self.header.setText(f"<b>Record {index:,}</b> · <span style='color:{palette.MUTED_COLOR}'>loading…</span>")
        self._loading_text = f"Loading record {index:,}{size}…"
        # the previous record stays up for a moment: no flicker when loads are quick
        self._loading_timer.start()
        generation = self._generation
        # a queued load the user has already moved past is skipped, not run
        self._jobs.submit(generation, lambda: _load_or_changed(tfile, index) if generation == self._generation else None)

    def _show_loading(self) -> None:
        if self._loaded is None and self._index >= 0:
            self._show_placeholder(self._loading_text)
            self._clear_tabs()

    def clear(self) -> None:
        """Show nothing (no record selected)."""
        self._loading_timer.stop()
        self._generation += 1
        self._index = -1
        self._loaded = None
        self._awaiting_images = self._awaiting_audio = self._awaiting_video = False
        self.header.setText(f"<span style='color:{palette.MUTED_COLOR}'>No record selected</span>")
        self._show_placeholder("Select a record to see its features, images and bytes.")
        self._clear_tabs()

    def wait(self, msecs: int = -1) -> bool:
        """Block until background loads and image decodes have finished (tests, shutdown)."""
        return self._jobs.wait(msecs) and self.images.wait(msecs) and self.audio.wait(msecs) and self.video.wait(msecs)

    # -- loading ----------------------------------------------------------
    def _load_done(self, generation: int, loaded: LoadedRecord | FileChangedError | None) -> None:
        if generation != self._generation or loaded is None:
            return
        if isinstance(loaded, FileChangedError):
            self._show_failure(self._index, one_line(loaded), changed=True)
        else:
            self._display(loaded)

    def _load_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._show_failure(self._index, message)

    def _show_failure(self, index: int, message: str, *, changed: bool = False) -> None:
        self._loading_timer.stop()
        self.header.setText(f"<b>Record {index:,}</b> · "
                            f"<span style='color:{palette.BAD_COLOR}'>cannot read: {html.escape(message)}</span>")
        self._show_placeholder(f"Record {index:,} cannot be read:\n{message}")
        self._clear_tabs()
        self.record_failed.emit(index, message)
        if changed:
            self.file_changed.emit(message)

    def _show_placeholder(self, text: str) -> None:
        self.placeholder.setText(text)
        self.stack.setCurrentWidget(self.placeholder)

    def _set_note(self, note: str | None) -> None:
        line = " ".join((note or "").split())
        self.note_line.setToolTip(line)
        self.note_line.setText(self.note_line.fontMetrics().elidedText(
            line, Qt.TextElideMode.ElideRight, max(200, self.width() - 16)))
        self.note_line.setVisible(bool(line))

    def _clear_tabs(self) -> None:
        self._set_note(None)
        self.grid.clear()
        self.grid.hide()
        self.tree_model.clear()
        self.images.clear()
        self.hex.clear()
        self.text.clear()
        self.audio.clear()
        self.video.clear()
        self._update_tabs(image_count=0, raw=False)

    # -- display ----------------------------------------------------------
    def _display(self, loaded: LoadedRecord) -> None:
        self._loading_timer.stop()
        self._loaded = loaded
        self.header.setText(self._header_html(loaded))
        self._set_note(loaded.decoded.note)
        self.tree_model.set_record(loaded.decoded, loaded.tree, loaded.summaries, loaded.labels)
        self.tree.reset_layout()
        tensor = loaded.tree.detail if loaded.decoded.kind is RecordKind.TENSOR else None
        self.grid.setVisible(self.grid.set_array(tensor))
        self.hex.set_record(loaded.framed)
        raw = loaded.decoded.kind is RecordKind.RAW
        if raw:
            note = f"\n\n[… first {_size_text(TEXT_LIMIT_BYTES)} shown]" if loaded.text_cut else ""
            self.text.setPlainText((loaded.text or "") + note)
        else:
            self.text.clear()
        self.stack.setCurrentWidget(self.tabs)
        self._awaiting_images = True
        self._awaiting_audio = bool(loaded.audio)
        count = self.images.set_record(loaded.decoded, loaded.images, loaded.labels)  # may emit images_shown now
        audio_count = self.audio.set_record(loaded.audio or [], loaded.info.index)
        self._awaiting_video = bool(loaded.videos)
        video_count = self.video.set_record(loaded.videos or [], loaded.info.index)
        self._update_tabs(count, raw, hex_first=loaded.info.status.damaged or loaded.binary, audio_count=audio_count,
                          video_count=video_count)

    def _restyle(self, _theme: str) -> None:
        if self._loaded is not None:
            self.header.setText(self._header_html(self._loaded))

    def _images_shown(self, count: int) -> None:
        if self._awaiting_images and self._loaded is not None:
            self._awaiting_images = False
            self._shown_if_done()

    def _audio_shown(self, _count: int) -> None:
        if self._awaiting_audio and self._loaded is not None:
            self._awaiting_audio = False
            self._shown_if_done()

    def _video_shown(self, _count: int) -> None:
        if self._awaiting_video and self._loaded is not None:
            self._awaiting_video = False
            self._shown_if_done()

    def _shown_if_done(self) -> None:
        if not (self._awaiting_images or self._awaiting_audio or self._awaiting_video):
            self.record_shown.emit(self._loaded.info.index)

    def _header_html(self, loaded: LoadedRecord) -> str:
        info = loaded.info
        status = info.status
        color = palette.OK_COLOR if not status.damaged else (
            palette.RECOVERED_COLOR if status is RecordStatus.LENGTH_CRC else palette.BAD_COLOR)
        if status is RecordStatus.WRITING:
            color = palette.MUTED_COLOR  # its bytes are still arriving: neither ok nor damaged
        status_html = f"<span style='color:{color}'>{'&#9679; ' if status.damaged else ''}" \
                      f"{html.escape((ARRAY_RECORD_STATUS_TEXT if loaded.framed.chunked else STATUS_TEXT)[status])}</span>"
        if status.damaged:
            status_html = f"<b>{status_html}</b>"
        where = html.escape(loaded.note) if loaded.note else f"at offset {info.offset:,}"
        kind = html.escape(kind_text(loaded.decoded))
        return (f"<b>Record {info.index:,}</b> · {kind} · {info.length:,} bytes · "
                f"{status_html} <span style='color:{palette.MUTED_COLOR}'>&nbsp;{where}</span>")

    def _update_tabs(self, image_count: int, raw: bool, hex_first: bool = False, audio_count: int = 0,
                     video_count: int = 0) -> None:
        self._switching = True
        try:
            self.tabs.setTabText(IMAGES_TAB, f"Images ({image_count})" if image_count else "Images")
            self.tabs.setTabEnabled(IMAGES_TAB, image_count > 0)
            self.tabs.setTabVisible(TEXT_TAB, raw)
            self.tabs.setTabEnabled(TEXT_TAB, raw)
            self.tabs.setTabText(AUDIO_TAB, f"Audio ({audio_count})" if audio_count else "Audio")
            self.tabs.setTabEnabled(AUDIO_TAB, audio_count > 0)
            self.tabs.setTabToolTip(AUDIO_TAB, "" if audio_count else NO_AUDIO_TIP)
            self.tabs.setTabText(VIDEO_TAB, f"Video ({video_count})" if video_count else "Video")
            self.tabs.setTabEnabled(VIDEO_TAB, video_count > 0)
            self.tabs.setTabToolTip(VIDEO_TAB, "" if video_count else NO_VIDEO_TIP)
            self.tabs.setCurrentIndex(HEX_TAB if hex_first else self._tab_for(image_count, raw, audio_count,
                                                                              video_count))
        finally:
            self._switching = False

    def _tab_for(self, image_count: int, raw: bool, audio_count: int = 0, video_count: int = 0) -> int:
        """The user's last choice when this record has it, else the best stand-in."""
        wanted = self._wanted_tab
        if (wanted == AUDIO_TAB and not audio_count) or (wanted == VIDEO_TAB and not video_count):
            return TEXT_TAB if raw else TREE_TAB
        if wanted == IMAGES_TAB and not image_count:
            return TEXT_TAB if raw else TREE_TAB
        if wanted == TEXT_TAB and not raw:
            return TREE_TAB
        if raw and wanted in (TREE_TAB, IMAGES_TAB):
            return TEXT_TAB
        return wanted

    def _tab_changed(self, index: int) -> None:
        if not self._switching and index >= 0:
            self._wanted_tab = index
