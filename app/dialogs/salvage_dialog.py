"""Salvage: write a clean copy of a damaged file, with progress, Cancel and a report.

:func:`salvage_steps` is the generator a :class:`~app.workers.worker.GeneratorWorker`
runs: it opens the file on disk afresh (so the open tab is never read from
two threads), checks every data CRC, then lets :func:`codec.ops.repair.repair_iter`
write the records that can be trusted. :class:`SalvageDialog` asks where to,
in which compression, and whether to include damaged records, then says how
many records were kept, dropped and included, and offers to open the result.
"""
from __future__ import annotations

import html
import os
import tempfile
from dataclasses import dataclass
from typing import Iterator

from PySide6.QtCore import QEvent, QObject, QStandardPaths, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.save_names import CompressionFollower, settle_name
from app.style import palette
from app.workers.worker import GeneratorWorker
from codec.format.framing import Compression
from codec.index.scan import IndexProgress
from codec.ops.repair import RepairReport, repair_iter
from codec.sources.tfrecord_file import TFRecordFile

COMPRESSION_CHOICES = ((Compression.NONE, "None (plain TFRecord)"), (Compression.GZIP, "GZIP"),
                       (Compression.ZLIB, "ZLIB"))
SUFFIXES = {Compression.NONE: "", Compression.GZIP: ".gz", Compression.ZLIB: ".zlib"}


@dataclass(frozen=True)
class SalvageStep:
    """Progress of a salvage: ``phase`` is "check" (data CRCs) or "write"."""

    phase: str
    progress: IndexProgress


@dataclass(frozen=True)
class SalvageResult:
    """What a finished salvage wrote, and what the source held."""

    report: RepairReport
    compression: Compression
    source_problems: int
    lost_bytes: int  # bytes that belong to no record (skipped garbage, lost headers)


def salvage_steps(source: str, output: str, compression: Compression, include_damaged: bool
                  ) -> Iterator[SalvageStep | SalvageResult]:
    """Check ``source`` and write its salvageable records to ``output``; the last value is the result.

    Stopping the generator early leaves ``output`` untouched (the codec's
    writer only renames its temporary file over it at the very end).
    """
    f = TFRecordFile(source)
    try:
        for p in f.index_iter(verify=True):
            yield SalvageStep("check", p)
        report = RepairReport(source, output)
        for p in repair_iter(f, output, compression, include_damaged, report):
            yield SalvageStep("write", p)
        lost = sum(p.size for p in f.problems if p.index is None)
        yield SalvageResult(report, compression, len(f.problems), lost)
    finally:
        f.close()


def default_output(source: str, compression: Compression, folder: str | None = None) -> str:
    """``shard.tfrecord.gz`` -> ``shard.salvaged.tfrecord`` (+ the chosen compression's suffix).

    In ``folder`` when given, else beside the source.
    """
    source_folder, name = os.path.split(source)
    folder = folder or source_folder
    for suffix in (".gz", ".zlib", ".gzip"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    stem, ext = os.path.splitext(name)
    if not ext:
        stem, ext = name, ".tfrecord"
    return os.path.join(folder, f"{stem}.salvaged{ext}{SUFFIXES[compression]}")


def writable(folder: str) -> bool:
    """Whether a file can be created in ``folder``: tried, since permissions do not tell a read-only
    mount (or, for root, anything)."""
    if not folder or not os.path.isdir(folder):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".tfrlens-probe-"):
            return True
    except OSError:
        return False


def output_folder(source: str, last: str | None) -> str:
    """Where a salvaged copy goes by default: beside the source when that folder is writable, else the
    folder last written to, else Documents, else home (a damaged file often sits on a read-only mount)."""
    beside = os.path.dirname(os.path.abspath(source))
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    for folder in (beside, last, documents, os.path.expanduser("~")):
        if folder and writable(folder):
            return folder
    return beside


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


class SalvageDialog(QDialog):
    """Salvage the records of ``source`` into a new file.

    Signals: ``salvage_finished(object)`` with the :class:`SalvageResult`, or
    None when cancelled or failed; ``open_requested(str)`` when the user asks
    to open the written file.
    """

    salvage_finished = Signal(object)
    open_requested = Signal(str)

    def __init__(self, source: str, compression: Compression, problems: int = 0,
                 parent: QWidget | None = None, *, folder: str | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.result: SalvageResult | None = None
        self.error: str | None = None
        self._worker: GeneratorWorker | None = None
        self._close_when_done = False
        self._confirmed: str | None = None  # a path the user already agreed to replace (file dialog)
        self.folder = output_folder(source, folder)
        self._default = default_output(source, compression, self.folder)
        self.setWindowTitle(f"Salvage {os.path.basename(source)}")
        self.setMinimumWidth(560)

        found = f"The open file shows {problems:,} problem{'' if problems == 1 else 's'}. " if problems else ""
        intro = QLabel(
            f"Write a clean copy of <b>{html.escape(os.path.basename(source))}</b> with every record whose "
            "data CRC holds, including those found again after damaged bytes. "
            f"{found}Records with a failing data CRC and a truncated last record are left out unless "
            "you include them; bytes that belong to no record are never copied. The file on disk is read; "
            "it is not changed.", self)
        intro.setWordWrap(True)

        self.path_edit = QLineEdit(self._default, self)
        self.path_edit.setMinimumWidth(360)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)
        self.compression_box = QComboBox(self)
        for comp, text in COMPRESSION_CHOICES:
            self.compression_box.addItem(text, comp.value)
        self.compression_box.setCurrentIndex([c for c, _ in COMPRESSION_CHOICES].index(compression))
        self.compression_note = QLabel(self)
        self.compression_note.setWordWrap(True)
        # the name decides the compression until one is picked; a picked one renames the default name
        self.follower = CompressionFollower(self.path_edit, self.compression_box, self.compression_note,
                                            rename=self._default_for)
        self.include_box = QCheckBox("Include damaged records (their data as found, with fresh CRCs)", self)
        self.include_box.setToolTip("Records whose data CRC fails, and a truncated record's bytes, are written "
                                    "too and listed in the report. Their content may be wrong.")
        form = QFormLayout()
        form.addRow("Save to:", path_row)
        form.addRow("Compression:", self.compression_box)
        form.addRow("", self.compression_note)
        form.addRow("", self.include_box)

        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        beside = os.path.dirname(os.path.abspath(source))
        if self.folder != beside:
            self.status.setText(f"<span style='color:{palette.MUTED_COLOR}'>{html.escape(beside)} is read-only: "
                                f"the copy goes to {html.escape(self.folder)}.</span>")

        self.buttons = QDialogButtonBox(self)
        self.salvage_button = self.buttons.addButton("Salvage", QDialogButtonBox.ButtonRole.AcceptRole)
        self.salvage_button.setDefault(True)
        self.open_button = self.buttons.addButton("Open Salvaged File", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.hide()
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.salvage_button.clicked.connect(self.start)
        self.open_button.clicked.connect(self._open_result)
        self.close_button.clicked.connect(self._cancel_or_close)
        if parent is not None:
            parent.installEventFilter(self)  # the window closing stops a running salvage first

        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # grows with the report
        layout.addWidget(intro)
        layout.addSpacing(6)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addStretch(1)
        layout.addWidget(self.buttons)

    # -- choices ----------------------------------------------------------
    def compression(self) -> Compression:
        return Compression.parse(self.compression_box.currentData())

    def output_path(self) -> str:
        return os.path.abspath(os.path.expanduser(self.path_edit.text().strip()))

    def _default_for(self, compression: Compression) -> str | None:
        """The default name for a picked compression, unless the user chose a name."""
        if self.path_edit.text() != self._default:
            return None
        self._default = default_output(self.source, compression, self.folder)
        return self._default

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save Salvaged Copy", self.path_edit.text(),
                                              "TFRecord files (*.tfrecord *.tfrecords *.gz *.zlib);;All files (*)")
        if path:
            self.path_edit.setText(path)
            self._confirmed = path

    # -- running ----------------------------------------------------------
    def is_running(self) -> bool:
        return self._worker is not None and self._worker.is_running()

    def start(self) -> bool:
        """Start writing (after checking the target); False when it cannot start."""
        if self.is_running():
            return False
        out = self.output_path()
        if not self.path_edit.text().strip():
            self._show_error("choose where to write the salvaged copy")
            return False
        if same_file(out, self.source):
            self._show_error("the salvaged copy must not replace the damaged file: choose another name")
            return False
        if os.path.isdir(out):
            self._show_error(f"is a folder: {out}")
            return False
        folder = os.path.dirname(out)
        if not writable(folder):
            why = "it is read-only" if os.path.isdir(folder) else "it does not exist"
            self._show_error(f"cannot write to {folder}: {why}; choose another folder")
            return False
        settled = settle_name(self, out, self.compression())
        if settled is None:
            return False
        if settled[0] != out:
            out = settled[0]
            self.path_edit.setText(out)
        self.follower.set_compression(settled[1])
        if os.path.exists(out) and self._confirmed != self.path_edit.text():
            answer = QMessageBox.question(self, "Replace File?", f"{out} exists. Replace it?")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.result = None
        self.error = None
        self._set_inputs_enabled(False)
        self.open_button.hide()
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText("Checking data CRCs…")
        self.close_button.setText("Cancel")
        source, comp, include = self.source, self.compression(), self.include_box.isChecked()
        self._worker = GeneratorWorker(lambda: salvage_steps(source, out, comp, include), self)
        self._worker.progress.connect(self._on_progress)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.start()
        return True

    def cancel(self) -> None:
        """Stop at the next step; the target file is left as it was."""
        if self._worker is not None:
            self._worker.cancel()

    def _set_inputs_enabled(self, on: bool) -> None:
        for w in (self.path_edit, self.compression_box, self.include_box, self.salvage_button):
            w.setEnabled(on)

    def _on_progress(self, step: SalvageStep | SalvageResult) -> None:
        if not isinstance(step, SalvageStep):
            return
        p = step.progress
        self.progress.setValue(int(p.fraction * 1000))
        if step.phase == "check":
            self.status.setText(f"Checking data CRCs… {p.fraction:.0%} ({p.records:,} records so far)")
        else:
            self.status.setText(f"Writing… {p.records:,} of {p.total:,} records")

    def _on_finished(self, last: SalvageStep | SalvageResult | None) -> None:
        self._worker_done()
        if isinstance(last, SalvageResult):  # finished, even if Cancel came in at the very end
            self.result = last
            self.status.setText(self.result_html(last))
            self.open_button.show()
            self.open_button.setDefault(True)
            self.salvage_button.setText("Salvage Again")
            self._fit()
            self.salvage_finished.emit(last)
        else:
            written = isinstance(last, SalvageStep) and last.phase == "write" and last.progress.done
            what = "the copy had already been written" if written else \
                f"nothing was written ({html.escape(self.output_path())} is as it was)"
            self.status.setText(f"<span style='color:{palette.MUTED_COLOR}'>Cancelled: {what}.</span>")
            self._fit()
            self.salvage_finished.emit(None)
        self._maybe_close()

    def _on_failed(self, message: str) -> None:
        self._worker_done()
        self._show_error(message)
        self.salvage_finished.emit(None)
        self._maybe_close()

    def _worker_done(self) -> None:
        self.progress.hide()
        self._set_inputs_enabled(True)
        self.close_button.setText("Close")

    def _maybe_close(self) -> None:
        if self._close_when_done:
            self._close_when_done = False
            super().reject()

    def _fit(self) -> None:
        """Grow to show every line of the wrapped labels at the current width."""
        layout = self.layout()
        layout.activate()
        height = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else \
            layout.totalSizeHint().height()
        if height > self.height():
            self.resize(self.width(), height)

    def _show_error(self, message: str) -> None:
        self.error = message
        self.status.setText(f"<span style='color:{palette.BAD_COLOR}'>{html.escape(message)}</span>")
        self._fit()

    @staticmethod
    def result_html(result: SalvageResult) -> str:
        """The report: kept, dropped, included on request, and what was not records at all."""
        r = result.report
        kind = "plain" if result.compression is Compression.NONE else result.compression.value.upper()
        lines = [f"<b style='color:{palette.OK_COLOR}'>✓ Wrote {html.escape(r.output)}</b> ({kind})",
                 f"Kept <b>{r.kept:,}</b> record{'' if r.kept == 1 else 's'}, dropped <b>{len(r.dropped):,}</b>."]
        if r.dropped:
            lines.append("Dropped: " + html.escape(_listing(r.dropped)))
        if r.included_damaged:
            lines.append(f"<span style='color:{palette.BAD_COLOR}'>Included {len(r.included_damaged):,} damaged "
                         f"record{'' if len(r.included_damaged) == 1 else 's'} on request: "
                         f"{html.escape(_listing(r.included_damaged))}</span>")
        if result.source_problems:
            lost = f"; {result.lost_bytes:,} bytes belonged to no record and were not copied" \
                if result.lost_bytes else ""
            lines.append(f"<span style='color:{palette.MUTED_COLOR}'>The source has {result.source_problems:,} "
                         f"problem{'' if result.source_problems == 1 else 's'}{lost}.</span>")
        return "<br>".join(lines)

    def _open_result(self) -> None:
        if self.result is not None:
            self.open_requested.emit(self.result.report.output)
            self.accept()

    # -- closing ----------------------------------------------------------
    def _cancel_or_close(self) -> None:
        if self.is_running():
            self.cancel()
        else:
            self.reject()

    def stop(self) -> None:
        """Cancel and wait for the worker (before the window goes away)."""
        if self._worker is not None:
            self._worker.stop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parent() and event.type() == QEvent.Type.Close and self.is_running():
            self.stop()
        return False

    def reject(self) -> None:
        """Cancel a running salvage (the dialog closes when it has stopped), else close."""
        if self.is_running():
            self._close_when_done = True
            self.cancel()
            return
        super().reject()


def _listing(items: list[tuple[int, str]], limit: int = 10) -> str:
    text = ", ".join(f"#{i:,} ({status.replace('_', ' ')})" for i, status in items[:limit])
    return text + (f", … {len(items) - limit:,} more" if len(items) > limit else "")
