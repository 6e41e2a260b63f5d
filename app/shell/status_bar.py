"""The window's status bar: the current tab's progress, records, problems, compression, size and,
for a URL, the bytes fetched, filled from its :class:`~app.shell.tab_state.TabState`."""
from __future__ import annotations

import dataclasses
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QToolButton

from app.models.labels import COMPRESSION_TEXT
from app.shell.tab_state import TabState
from app.style import icons, palette
from app.style.elided_label import ElidedLabel
from app.views.start_page import human_size

FETCH_REFRESH_MS = 500  # the fetched bytes and throughput, while the tab shown reads a URL
COMPRESSION_TIP = "Compression, decided from the file's first bytes"
URL_SHOWN_CHARS = 60  # longer URLs are elided in the middle


class TabStatusBar(QObject):
    """The permanent widgets of ``bar``. While the tab shown reads a URL a timer keeps its bytes
    fetched current: ``refresh`` (everything) while a pass runs, else only ``fetched()``'s count."""

    def __init__(self, bar: QStatusBar, parent: QObject, *, refresh: Callable[[], None],
                 fetched: Callable[[], int | None]) -> None:
        super().__init__(parent)
        self._refresh, self._fetched = refresh, fetched
        self._shown: TabState | None = None  # the state last shown
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(16)
        self.progress.setTextVisible(False)
        self.records_label = QLabel()
        self.problems_label = QLabel()
        self.compression_label = QLabel()
        self.compression_label.setToolTip(COMPRESSION_TIP)
        self.payload_label = QLabel()
        self.payload_label.setToolTip("How the records decode: File > Decode As…")
        self.size_label = QLabel()
        self.fetch_label = QLabel()  # a URL's bytes fetched and throughput
        self.fetch_timer = QTimer(self)
        self.fetch_timer.setInterval(FETCH_REFRESH_MS)
        self.fetch_timer.timeout.connect(self._tick)
        self.cancel_button = QToolButton()
        self.cancel_button.setIcon(icons.icon("cancel"))
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.cancel_button.setAutoRaise(True)
        self.cancel_button.setToolTip("Stop indexing (Esc); the records found so far stay")
        # The bar's message in a label of its own, first and stretching: elided, never under the fields
        # beside it (QStatusBar paints a message only left of its first permanent widget: no room here).
        self.message_label = ElidedLabel()
        bar.addPermanentWidget(self.message_label, 1)
        bar.messageChanged.connect(self.message_label.setText)
        self.resume_button = QToolButton()
        self.resume_button.setText("Resume")
        self.resume_button.setAutoRaise(True)
        self.resume_button.setToolTip("Go on indexing from where it stopped (File > Resume Indexing)")
        self.widgets = (self.progress, self.records_label, self.fetch_label, self.problems_label,
                        self.payload_label, self.compression_label, self.size_label, self.cancel_button,
                        self.resume_button)
        for widget in self.widgets:
            bar.addPermanentWidget(widget)

    def clear(self) -> None:
        """No tab: nothing to say."""
        self._shown = None
        for widget in self.widgets:
            widget.hide()
        self.fetch_timer.stop()

    def show_state(self, s: TabState) -> None:
        """Say what ``s`` holds."""
        self._shown = s
        self._show_fetched(s)
        running = s.running
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.resume_button.setVisible(s.resumable)
        self.progress.setValue(int(s.fraction * 1000))
        records = f"{s.records:,} record" + ("" if s.records == 1 else "s")
        if s.following:
            done = s.records - s.writing
            records = f"following · {done:,} record" + ("" if done == 1 else "s") + \
                (" · 1 being written" if s.writing else "")
        elif running and s.phase == "index":
            records += " so far…"
        elif running and s.phase == "verify":
            records += f", checking {'chunks' if s.container else 'CRCs'}… {s.fraction:.0%}"
        elif running and s.phase == "sort":
            records += f", sorting… {s.fraction:.0%}"
        elif s.phase == "cancelled":
            records += " (stopped)"
        elif s.phase == "failed":
            records += " (indexing failed)"
        if s.shards is not None:  # a shard set
            records += f" · shards {s.shards[0]:,} of {s.shards[1]:,} indexed"
        self.records_label.setText(records)
        self.records_label.setToolTip(s.error or "")
        if s.problems:
            text = f"⚠ {s.problems:,} problem" + ("" if s.problems == 1 else "s")
            style = f"color: {palette.DAMAGED_TEXT.name()}; font-weight: bold;"
            tip = "Damaged records are marked in the table (F8: next damaged record)"
        elif s.container:  # ArrayRecord: the footer read, then every chunk decoded (and hashed, if it can be)
            text = "✓ all chunks ok" if s.verified else "✓ footer ok"
            style = f"color: {palette.OK_COLOR};"
            tip = "Every chunk decoded and its sizes checked" if s.verified else \
                "Chunks not checked yet: File > Verify Checksums"
        else:
            text = "✓ all CRCs ok" if s.verified else "✓ headers ok"
            style = f"color: {palette.OK_COLOR};"
            tip = "" if s.verified else "Data CRCs not checked yet: File > Verify Checksums"
        self.problems_label.setText(text)
        self.problems_label.setToolTip(tip)
        if self.problems_label.styleSheet() != style:  # restyling costs milliseconds: only on change
            self.problems_label.setStyleSheet(style)
        if s.container:  # its chunks compress themselves: the format and writer options say how
            self.compression_label.setText(s.container)
            self.compression_label.setToolTip(s.container_tip)
        else:
            self.compression_label.setText(COMPRESSION_TEXT.get(s.compression, s.compression)
                                           + (" ⚠" if s.compression_note else ""))
            self.compression_label.setToolTip(s.compression_note or COMPRESSION_TIP)
        self.size_label.setText(human_size(s.file_size))
        self.size_label.setToolTip(f"{s.file_size:,} bytes")
        self.payload_label.setText(f"as {s.decoded_as}" if s.decoded_as else "")
        self.payload_label.setVisible(bool(s.decoded_as))
        for widget in (self.records_label, self.problems_label, self.compression_label, self.size_label):
            widget.show()

    def _tick(self) -> None:
        s = self._shown
        if s is None or s.running:
            self._refresh()  # a pass: its progress and rate move too
            return
        fetched = self._fetched()
        if fetched is not None and fetched != s.fetched:  # rows and the record shown read bytes too
            self.show_state(dataclasses.replace(s, fetched=fetched))

    def _show_fetched(self, s: TabState) -> None:
        """A URL's bytes fetched (and throughput while a pass reads it), refreshed by the timer while the
        tab reads a URL: rows, a record's detail and passes all fetch bytes."""
        self.fetch_label.setVisible(s.fetched is not None)
        if s.fetched is None:
            self.fetch_timer.stop()
            return
        fetched = f"{human_size(s.fetched)} fetched"
        if s.running:
            url = s.path if len(s.path) <= URL_SHOWN_CHARS else \
                f"{s.path[:URL_SHOWN_CHARS // 2 - 1]}…{s.path[-(URL_SHOWN_CHARS // 2):]}"
            doing = {"verify": "Checking", "sort": "Sorting"}.get(s.phase, "Indexing")
            self.fetch_label.setText(f"{doing} {url} — {fetched}, {human_size(int(s.rate))}/s")
        else:
            self.fetch_label.setText(fetched)
        if not self.fetch_timer.isActive():
            self.fetch_timer.start()
        self.fetch_label.setToolTip(f"{s.fetched:,} bytes read from {s.path}")
