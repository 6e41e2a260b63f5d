"""Export records (TFRecord, JSON Lines, CSV, images, audio) or the index, with progress and Cancel.

The work is the codec's: :func:`codec.ops.export.export_iter` for records (over
the records as the table shows them, edits included) and ``tfrlens-cli
index`` for the index of the file on disk. It runs on a
:class:`~app.workers.worker.GeneratorWorker`; the dialog stays open with a progress
bar, and Cancel stops it at the next record (a TFRecord, JSON Lines or CSV
output is then not written at all; image and audio files already written stay).
"""
from __future__ import annotations

import os
from typing import Iterator, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.edit_dialogs import COMPRESSIONS
from app.dialogs.save_names import CompressionFollower, settle_name, with_compression_suffix
from app.style import palette
from app.workers.worker import GeneratorWorker
from codec.format.framing import Compression
from codec.index.cache import write_index
from codec.index.scan import IndexProgress
from codec.ops.export import ExportReport, export_iter
from codec.sources.array_record_file import EXTRA, array_record_available
from codec.sources.tfrecord_file import TFRecordFile

# (key, label, file suffix; None: a folder)
FORMATS = (
    ("tfrecord", "TFRecord", ".tfrecord"),
    ("array_record", "ArrayRecord (Google's writer, group_size 1)", ".array_record"),
    ("jsonl", "JSON Lines (one record per line, as cat --json)", ".jsonl"),
    ("csv", "CSV (one column per feature)", ".csv"),
    ("images", "Images (a folder, one file per image)", None),
    ("audio", "Audio (a folder, one WAV per audio value)", None),
    ("index-native", "Index, native format (of the file on disk)", ".tfri"),
    ("index-dali", "Index, DALI format (of the file on disk)", ".idx"),
)
RECORD_FORMATS = ("tfrecord", "array_record", "jsonl", "csv", "images", "audio")
FOLDER_FORMATS = {"images": "_images", "audio": "_audio"}  # and the default folder's suffix


def _dispose(worker: GeneratorWorker) -> None:
    """Delete a worker whose generator has ended, once its thread has (a running QThread must not die)."""
    worker.wait()
    worker.deleteLater()


def index_export_iter(path: str, out: str, fmt: str) -> Iterator[IndexProgress]:
    """Write the index of ``path`` (native or DALI) as ``tfrlens-cli index`` does, on a worker."""
    with TFRecordFile(path) as f:
        yield from f.index_iter()  # from the cache when the file was indexed before
        write_index(f, out, fmt)


def default_output(path: str, fmt: str, selection: bool) -> str:
    """``data.tfrecord`` -> ``data-selection.jsonl``, ``data_images/``..."""
    folder, name = os.path.split(path)
    for ext in (".gz", ".zlib"):
        if name.endswith(ext):
            name = name[:-len(ext)]
    stem = os.path.splitext(name)[0] or name
    suffix = dict((k, s) for k, _, s in FORMATS)[fmt]
    if fmt.startswith("index"):
        return os.path.join(folder, name + suffix)
    stem += "-selection" if selection else "-export"
    return os.path.join(folder, stem + (FOLDER_FORMATS[fmt] if suffix is None else suffix))


class ExportDialog(QDialog):
    """Choose what to export and where; :meth:`start` runs it (the Export button calls it).

    ``export_finished(result)``: an :class:`ExportReport` (or the index path)
    when done, None when cancelled or failed (:attr:`message` says why).
    """

    export_finished = Signal(object)

    def __init__(self, records, path: str, selected: Sequence[int], parent: QWidget | None = None, *,
                 modified: bool = False, filtered: Sequence[int] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.setWindowModality(Qt.WindowModality.WindowModal)  # no edits while the worker reads the records
        self.records = records
        self.path = path
        self.selected = list(selected)
        self.filtered = None if filtered is None else list(filtered)
        self.modified = modified
        self.message = ""
        self.worker: GeneratorWorker | None = None
        self._report: ExportReport | None = None
        self._out = ""
        self._touched = False  # the output path was typed or browsed: keep it

        self.format = QComboBox()
        for key, label, _ in FORMATS:
            self.format.addItem(label, key)
        self.output = QLineEdit()
        self.output.textEdited.connect(lambda *_: setattr(self, "_touched", True))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.output, 1)
        out_row.addWidget(browse)
        self.compression = QComboBox()
        for value, text in COMPRESSIONS:
            self.compression.addItem(text, value)
        # the name decides the compression until one is picked; a picked one renames an untouched default
        self.follower = CompressionFollower(self.output, self.compression, rename=self._default_for)
        self.compression.currentIndexChanged.connect(self._update)
        self.escape_formulas = QCheckBox("Escape cells a spreadsheet would run as formulas (=, +, -, @)")
        self.escape_formulas.setChecked(True)
        self.escape_formulas.setToolTip("A text cell starting with =, +, -, @, tab or CR is written after a ' "
                                        "(tfrlens-cli export --csv-formulas)")
        n = len(records)
        self.scope_all = QRadioButton(f"All records ({n:,})")
        self.scope_selected = QRadioButton(f"Selected records ({len(self.selected):,})")
        self.scope_filtered = QRadioButton("Filtered rows" + (f" ({len(self.filtered):,})" if self.filtered is not None
                                                              else " (no filter)"))
        self.scope_selected.setEnabled(bool(self.selected))
        self.scope_filtered.setEnabled(self.filtered is not None)
        (self.scope_selected if len(self.selected) > 1 else self.scope_all).setChecked(True)
        scopes = QButtonGroup(self)
        scope_box = QVBoxLayout()
        for button in (self.scope_all, self.scope_selected, self.scope_filtered):
            scopes.addButton(button)
            scope_box.addWidget(button)
            button.toggled.connect(self._format_changed)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet(palette.HINT_STYLE)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.reject)

        form = QFormLayout()
        form.addRow("Format:", self.format)
        form.addRow("Output:", out_row)
        form.addRow("Compression:", self.compression)
        form.addRow("CSV:", self.escape_formulas)
        form.addRow("Records:", scope_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.format.currentIndexChanged.connect(self._format_changed)
        self.output.textChanged.connect(self._update)
        self.resize(560, 340)
        self._format_changed()

    # -- choices ----------------------------------------------------------
    def fmt(self) -> str:
        return self.format.currentData()

    def set_format(self, fmt: str) -> None:
        self.format.setCurrentIndex(self.format.findData(fmt))

    def indices(self) -> list[int] | None:
        """The records to export (None: all)."""
        if self.scope_selected.isChecked():
            return self.selected
        if self.scope_filtered.isChecked() and self.filtered is not None:
            return self.filtered
        return None

    def _default_for(self, compression: Compression) -> str | None:
        """The default name for a picked compression, unless the user chose a name."""
        if self._touched or self.fmt() != "tfrecord":
            return None
        return with_compression_suffix(self.output.text(), compression)

    def _format_changed(self, *_) -> None:
        if not self._touched:
            out = default_output(self.path, self.fmt(), self.scope_selected.isChecked())
            if self.fmt() == "tfrecord" and self.follower.chosen:
                out = with_compression_suffix(out, self.follower.compression())
            self.output.setText(out)
        self._update()

    def _browse(self) -> None:
        fmt = self.fmt()
        if fmt in FOLDER_FORMATS:
            start = os.path.dirname(self.output.text())
            path = QFileDialog.getExistingDirectory(self, f"Export {fmt.title()} to Folder", start)
        else:
            path, _ = QFileDialog.getSaveFileName(self, "Export To", self.output.text())
        if path:
            self._touched = True
            self.output.setText(path)

    def _problem(self) -> str | None:
        """Why Export cannot start now, or None."""
        fmt = self.fmt()
        if not self.output.text().strip():
            return "choose where to write"
        if fmt == "index-dali" and self.records_compression() is not Compression.NONE:
            return "the DALI index format needs an uncompressed file"
        if fmt.startswith("index") and self.modified:
            return "the index describes the file on disk, which does not have your unsaved edits: save first"
        if fmt in RECORD_FORMATS and self.indices() == []:
            return "no records to export"
        if fmt == "array_record" and not array_record_available():
            return f"writing ArrayRecord files needs Google's array-record package: {EXTRA}"
        return None

    def records_compression(self) -> Compression:
        return self.records.compression

    def _update(self, *_) -> None:
        fmt = self.fmt()
        running = self.worker is not None
        records = fmt in RECORD_FORMATS
        self.compression.setEnabled(fmt == "tfrecord" and not running)
        self.escape_formulas.setEnabled(fmt == "csv" and not running)
        for button in (self.scope_all, self.scope_selected, self.scope_filtered):
            button.setEnabled(records and not running and (button is self.scope_all or (
                button is self.scope_selected and bool(self.selected)) or (
                button is self.scope_filtered and self.filtered is not None)))
        problem = self._problem()
        mismatch = self.follower.disagreement() if fmt == "tfrecord" else None
        self.note.setStyleSheet(palette.ERROR_STYLE if problem or mismatch else palette.HINT_STYLE)
        self.note.setText(problem or (mismatch and f"{mismatch}: TensorFlow readers pick the compression by the name")
                          or {
            "tfrecord": "Records as shown, edits included; TensorFlow reads the file as is.",
            "array_record": "Records as shown, one per chunk (group_size:1, zstd), written by Google's array-record "
                            "package, for tfds.data_source and Grain.",
            "jsonl": "One JSON object per record, as tfrlens-cli cat --json writes it.",
            "csv": "Lists as JSON arrays; binary bytes as base64. Feature lists of SequenceExamples are left out.",
            "images": "Every encoded image as its own file (raw pixel buffers as PNG), named by record and key.",
            "audio": "Every audio value as a WAV file named by record and key (000012_audio_encoded.wav); "
                     "lossless samples unchanged, as tfrlens-cli export --format audio writes them.",
            "index-native": "TFRecord Lens's own binary index (offsets and statuses).",
            "index-dali": "One line per record: offset and framed size, for NVIDIA DALI's TFRecord reader.",
        }[fmt])
        self.export_button.setEnabled(problem is None and not running)
        self.cancel_button.setEnabled(running)
        self.close_button.setEnabled(not running)
        self.format.setEnabled(not running)
        self.output.setEnabled(not running)

    # -- running ----------------------------------------------------------
    def start(self) -> bool:
        """Start the export on a worker thread; False when the choices are not valid."""
        if self.worker is not None or self._problem() is not None:
            return False
        fmt = self.fmt()
        out = os.path.abspath(os.path.expanduser(self.output.text().strip()))
        if fmt == "tfrecord":
            settled = settle_name(self, out, self.follower.compression())
            if settled is None:
                return False
            out = settled[0]
            if out != os.path.abspath(os.path.expanduser(self.output.text().strip())):
                self._touched = True
                self.output.setText(out)
            self.follower.set_compression(settled[1])
        self._out = out
        if fmt in RECORD_FORMATS:
            report = self._report = ExportReport(out, fmt)
            records, indices = self.records, self.indices()
            compression = self.compression.currentData() if fmt == "tfrecord" else None
            formulas = "escape" if self.escape_formulas.isChecked() else "keep"
            make = lambda: export_iter(records, out, fmt, indices, compression, report, formulas)  # noqa: E731
        else:
            self._report = None
            path, kind = self.path, fmt.split("-", 1)[1]
            make = lambda: index_export_iter(path, out, kind)  # noqa: E731
        self.message = ""
        self.progress.setValue(0)
        self.status.setText("exporting…")
        self.worker = GeneratorWorker(make, self)
        self.worker.progress.connect(lambda p: self.progress.setValue(int(p.fraction * 1000)))
        self.worker.finished.connect(self._finished)
        self.worker.failed.connect(self._failed)
        self.worker.start()
        self._update()
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _finished(self, _last) -> None:
        worker, self.worker = self.worker, None
        if worker.cancelled:
            kept = (f"; {'image' if self.fmt() == 'images' else 'audio'} files written so far stay"
                    if self.fmt() in FOLDER_FORMATS else "; nothing was written")
            self.message = f"export cancelled{kept}"
            result = None
        else:
            self.progress.setValue(1000)
            self.message = self._report.summary() if self._report is not None else f"wrote the index to {self._out}"
            result = self._report if self._report is not None else self._out
        _dispose(worker)
        self.status.setText(self.message)
        self._update()
        self.export_finished.emit(result)

    def _failed(self, message: str) -> None:
        worker, self.worker = self.worker, None
        _dispose(worker)
        self.message = f"export failed: {message}"
        self.status.setText(f"<span style='{palette.ERROR_STYLE}'>{self.message}</span>")
        self._update()
        self.export_finished.emit(None)

    def reject(self) -> None:
        if self.worker is not None:
            self.cancel()
            return
        super().reject()

    def wait(self) -> None:
        if self.worker is not None:
            self.worker.wait()
