"""The inferred feature spec, as Python code for a tf.data pipeline and as JSON, each with Copy.

The spec comes from ``codec.stats.schema``: from the statistics when the
statistics panel has just gone over the same records
(``schema_from_stats``, no second pass), else from its own
``schema_iter`` pass on a worker.
"""
from __future__ import annotations

import json
import os
from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QTabWidget, QToolButton, QVBoxLayout, QWidget

from app.models.filtered_table_model import FilteredTableModel
from app.style import palette
from app.views.stats_panel import SCOPE_SHOWN, PassBar
from app.workers.pass_runner import PassRunner, RecomputesWhenShown
from codec.index.scan import IndexProgress
from codec.stats.schema import FileSchema, schema_from_stats, schema_iter


class CodePage(QWidget):
    """Read-only code with a Copy button above it."""

    copied = Signal(str)

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.copy_button = QToolButton(self)
        self.copy_button.setText(f"Copy {what}")
        self.copy_button.setToolTip(f"Copy the spec as {what} to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        self.note = QLabel(self)
        palette.follow(self.note, lambda: palette.HINT_STYLE)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 2)
        bar.addWidget(self.note, 1)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)

    def set_code(self, code: str, note: str = "") -> None:
        self.text.setPlainText(code)
        self.note.setText(note)
        self.copy_button.setEnabled(bool(code))

    def copy(self) -> str:
        code = self.text.toPlainText()
        QGuiApplication.clipboard().setText(code)
        self.copied.emit(f"copied the feature spec as {self.what}")
        return code


class SchemaView(RecomputesWhenShown, QWidget):
    """The feature spec of one file's records; ``message(str)`` for the status bar."""

    message = Signal(str)

    def __init__(self, rows: FilteredTableModel, source: Callable, busy: Callable[[], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._source = source
        self._schema: FileSchema | None = None
        self._stale = True
        self.runner = PassRunner(busy, self)
        self.bar = PassBar(self)
        self.bar.refresh_requested.connect(self.compute)
        self.bar.cancel_requested.connect(self.runner.cancel)
        self.bar.scope_changed.connect(self._scope_changed)
        self.runner.waiting.connect(lambda: self.bar.set_running(True))
        self.runner.waiting.connect(lambda: self.bar.summary.setText("waiting for indexing to finish…"))
        self.runner.started.connect(lambda: self.bar.set_running(True))
        self.runner.progress.connect(self.bar.set_progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        self.python = CodePage("Python", self)
        self.json = CodePage("JSON", self)
        self.python.copied.connect(self.message)
        self.json.copied.connect(self.message)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.python, "Python (tf.io)")
        self.tabs.addTab(self.json, "JSON")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addWidget(self.tabs, 1)
        rows.filter_changed.connect(self._filter_changed)

    # -- public -----------------------------------------------------------
    def schema(self) -> FileSchema | None:
        return self._schema

    def python_text(self) -> str:
        return self.python.text.toPlainText()

    def json_text(self) -> str:
        return self.json.text.toPlainText()

    def compute(self) -> None:
        """Infer the spec of the chosen records on a worker."""
        indices, words = self.bar.describe_scope(self._rows)
        result = FileSchema()
        source = self._source()
        self._stale = False
        self.runner.start(lambda: schema_iter(source, indices, result), (result, words))

    def offer_stats(self, stats, words: str) -> None:
        """The statistics of some records are ready: take the spec from them if they are this view's records."""
        _, mine = self.bar.describe_scope(self._rows)
        if mine == words and (self._stale or self._schema is None) and not self.runner.is_running():
            self.runner.cancel()
            self._set_schema(schema_from_stats(stats), words)

    # -- internals --------------------------------------------------------
    def _filter_applies(self) -> bool:
        return self.bar.scope_value() == SCOPE_SHOWN

    def _finished(self, payload, last: IndexProgress | None, cancelled: bool) -> None:
        self.bar.set_running(False)
        if cancelled:
            self._stale = True
            self.bar.summary.setText("stopped: the spec needs every record")
            return
        result, words = payload
        self._set_schema(result, words)

    def _failed(self, error: str) -> None:
        self.bar.set_running(False)
        self._stale = True
        self.bar.summary.setText(f"failed: {error}")

    def _set_schema(self, schema: FileSchema, words: str) -> None:
        self._schema = schema
        self._stale = False
        name = os.path.basename(self._source().path)
        self.python.set_code(schema.to_python(name), "ready to paste into a tf.data input pipeline")
        self.json.set_code(json.dumps(schema.to_json(), indent=2) + "\n", "the tfrlens-cli schema --json form")
        what = f"{schema.records:,} record" + ("" if schema.records == 1 else "s")
        notes = [f"from {what}", words]
        if schema.raw_records:
            notes.append(f"{schema.raw_records:,} raw records cannot be parsed")
        if schema.counts.damaged:
            notes.append(f"{schema.counts.damaged:,} damaged left out")
        self.bar.summary.setText(" · ".join(notes))
        self.bar.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
