"""The filter bar above the table and the gallery: an expression, Run, Clear, history, "N of M".

The expression language is :mod:`codec.query.filter`'s (see
docs/filters.md). A malformed expression is shown under the bar with a caret at
its position and what was expected there; nothing raises. A valid one runs
over the whole file on a :class:`~app.workers.worker.GeneratorWorker`
(``codec.stats.filter_pool.pooled_filter_iter``: both cores for a big file) with
progress and Cancel, and the matches go to the
:class:`~app.models.filtered_table_model.FilteredTableModel` the table and the
gallery share. While the file is still being indexed (or verified) the run
waits and starts by itself when that ends. When the run is over, a feature
name no record has (a misspelt key, most likely) is pointed at under the bar
with the closest keys the file does have, instead of a bare "0 of N".
"""
from __future__ import annotations

import html
from array import array
from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.models.filtered_table_model import FilteredTableModel
from app.style import icons, palette
from app.workers.pass_runner import PassRunner
from codec.index.scan import IndexProgress
from codec.query.filter import ExprError, FeatureCheck, MissingFeature, compile_filter, format_error
from codec.stats.filter_pool import pooled_filter_iter

MAX_HISTORY = 25
SETTINGS_HISTORY = "filter/history"
SYNTAX_TIP = (
    "<b>Filter records</b> (Enter to run, Esc to stop)<br>"
    "<code>label == 3</code> &nbsp; <code>image/height &gt; 100 and image/width &gt; 100</code><br>"
    "<code>\"cat\" in image/object/class/text</code> &nbsp; <code>len(image/object/bbox/xmin) &gt;= 5</code><br>"
    "<code>has(image/encoded)</code> &nbsp; <code>text ~ \"(?i)rose\"</code> &nbsp; <code>not (a or b)</code><br>"
    "<code>status != \"ok\"</code> &nbsp; <code>size &gt; 1e5</code> &nbsp; "
    "<code>kind == \"sequence_example\"</code> &nbsp; <code>index &lt; 100</code><br>"
    "<code>is_crowd</code> (is <code>is_crowd == true</code>) &nbsp; <code>state == \"ACTIVE\"</code> or "
    "<code>state == 2</code> for an enum<br>"
    "Names with other characters in backquotes: <code>`my feature` == \"x\"</code>. "
    "A comparison holds when <i>any</i> value of a feature satisfies it.")


class FilterBar(QWidget):
    """Expression box with history, Run / Clear / Cancel, progress, and the "N of M" count.

    ``filter_applied()`` after matches (or no filter) are shown;
    ``message(str)`` a one-line note for the status bar.
    """

    filter_applied = Signal()
    message = Signal(str)

    def __init__(self, rows: FilteredTableModel, source: Callable, busy: Callable[[], bool], settings=None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._source = source  # -> the file (or edited document) to filter
        self._settings = settings
        self._error: ExprError | None = None
        self.runner = PassRunner(busy, self)
        self.runner.waiting.connect(self._waiting)
        self.runner.started.connect(self._started)
        self.runner.progress.connect(self._progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)

        self.combo = QComboBox(self)
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.combo.setMaxCount(MAX_HISTORY)
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.combo.setMinimumContentsLength(20)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setToolTip(SYNTAX_TIP)
        self.edit = self.combo.lineEdit()
        self.edit.setPlaceholderText('Filter: label == 3 and "cat" in image/object/class/text')
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self.run)
        self.edit.textEdited.connect(self._edited)
        self.combo.activated.connect(lambda _i: self.run())
        self.run_button = self._button("Filter", "Run the filter over every record (Enter)", self.run)
        self.clear_button = self._button("Show All", "Show every record again", self.clear)
        self.cancel_button = self._button("Cancel", "Stop filtering (Esc)", self.cancel)
        self.cancel_button.setIcon(icons.icon("cancel"))
        self.cancel_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(110)
        self.progress.setMaximumHeight(14)
        self.count_label = QLabel(self)
        palette.follow(self.count_label, lambda: palette.HINT_STYLE)
        self.count_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel(self)
        self.error_label.setTextFormat(Qt.TextFormat.RichText)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.error_label.setContentsMargins(8, 0, 8, 4)
        self.error_label.setWordWrap(False)
        self.edit.installEventFilter(self)  # Esc in the box stops a running filter

        row = QHBoxLayout()
        row.setContentsMargins(6, 4, 6, 4)
        row.setSpacing(4)
        row.addWidget(self.combo, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.clear_button)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.addSpacing(4)
        row.addWidget(self.count_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.error_label)

        self._load_history()
        rows.counts_changed.connect(self._update_count)
        rows.filter_changed.connect(self._update_count)
        self._show_running(False)
        self.error_label.hide()
        self._update_count()

    def _button(self, text: str, tip: str, slot) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    # -- public -----------------------------------------------------------
    def text(self) -> str:
        return self.edit.text()

    def count_text(self) -> str:
        return self.count_label.text()

    def error_text(self) -> str:
        """The error or note shown under the bar, as plain text ("" when none)."""
        return "" if self.error_label.isHidden() else _plain(self.error_label.text())

    def is_running(self) -> bool:
        """A filter runs, or waits for indexing to end."""
        return self.runner.is_active()

    def payload_changed(self) -> None:
        """The records decode differently (Decode As, a label map): a filter shown is run again on them."""
        if self._rows.is_filtered and self._rows.expression:
            self.run(self._rows.expression)

    def run(self, text: str | None = None) -> bool:
        """Filter by ``text`` (default: the box's); False, with the error shown, when it is malformed."""
        if text is not None:
            self.edit.setText(text)
        text = self.edit.text()
        if not text.strip():
            self.clear()
            return True
        source = self._source()
        try:
            flt = compile_filter(text, names=source.labels)
        except ExprError as exc:
            self._show_error(text, exc)
            return False
        self._show_error(text, None)
        self._remember(text)
        matches = array("Q")
        check = FeatureCheck(flt)
        self.runner.start(lambda: pooled_filter_iter(source, flt, matches, check=check), (flt, matches, check))
        return True

    def clear(self) -> None:
        """Show every record again."""
        self.runner.cancel()
        self._show_error("", None)
        if self._rows.is_filtered:
            self._rows.clear_filter()
            self.filter_applied.emit()
        self._update_count()

    def cancel(self) -> None:
        """Stop a running filter (the matches found so far are shown)."""
        self.runner.cancel()

    def source_idle(self) -> None:
        """The file's own pass (indexing, verifying) ended: start a waiting filter."""
        self.runner.source_idle()

    def stop(self) -> None:
        """Cancel and wait (before the file closes)."""
        self.runner.stop()

    # -- running ----------------------------------------------------------
    def _waiting(self) -> None:
        self._show_running(True)
        self.progress.setValue(0)
        self.count_label.setText("waiting for indexing to finish…")

    def _started(self) -> None:
        self._show_running(True)
        self.progress.setValue(0)
        self.count_label.setText("filtering…")

    def _progress(self, p: IndexProgress) -> None:
        self.progress.setValue(int(p.fraction * 1000))
        self.count_label.setText(f"checked {p.records:,} of {p.total:,}")

    def _finished(self, payload, last: IndexProgress | None, cancelled: bool) -> None:
        self._show_running(False)
        flt, matches, check = payload
        if last is None and cancelled:  # stopped before it started
            self._update_count()
            return
        self._rows.set_matches(matches, flt.text)
        self._update_count()
        if cancelled:
            checked = last.records if last is not None else 0
            self.count_label.setText(self.count_label.text() + f" (stopped after {checked:,})")
            self.message.emit(f"filter stopped: {len(matches):,} matches in the first {checked:,} records")
        else:
            self.message.emit(f"{len(matches):,} of {self._rows.total():,} records match {flt.text}")
            missing = check.missing()  # only a whole pass can tell that no record has a name
            if missing:
                self._show_missing(flt.text, missing)
        self.filter_applied.emit()

    def _failed(self, error: str) -> None:
        self._show_running(False)
        self._update_count()
        self.error_label.setText(f"<span style='color:{palette.ERROR_COLOR}'>filter failed: {html.escape(error)}</span>")
        self.error_label.show()
        self.message.emit(f"filter failed: {error}")

    def _show_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.clear_button.setEnabled(running or self._rows.is_filtered)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.edit and isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape \
                and self.runner.is_active():
            if event.type() == QEvent.Type.ShortcutOverride:
                event.accept()  # ours, not the window's Stop
                return True
            if event.type() == QEvent.Type.KeyPress:
                self.cancel()
                return True
        return super().eventFilter(watched, event)

    # -- errors -----------------------------------------------------------
    def _show_error(self, text: str, exc: ExprError | None) -> None:
        self._error = exc
        if exc is None:
            self.error_label.clear()
            self.error_label.hide()
            self.edit.setStyleSheet("")
            return
        expression, caret = format_error(text, exc).split("\n")
        self.error_label.setText(
            f"<pre style='margin:0'>{html.escape(expression)}\n"
            f"<span style='color:{palette.ERROR_COLOR}'>{html.escape(caret)} {html.escape(str(exc))}</span></pre>")
        self.error_label.setToolTip(str(exc))
        self.error_label.show()
        self.edit.setStyleSheet(f"QLineEdit {{ border: 1px solid {palette.ERROR_COLOR}; }}")
        self.edit.setCursorPosition(min(exc.position, len(text)))
        self.message.emit(f"filter: {exc}")

    def _show_missing(self, text: str, missing: list[MissingFeature]) -> None:
        """Point at the first feature name no record has, with the closest keys as suggestions."""
        first = missing[0]
        note = f"no record has feature {first.name!r}"
        if first.hint():
            note += f" \N{EM DASH} {first.hint()}"
        if len(missing) > 1:
            note += " (nor " + ", ".join(repr(m.name) for m in missing[1:]) + ")"
        line = text.replace("\n", " ").replace("\t", " ")
        caret = " " * min(max(first.position, 0), len(line)) + "^"
        self.error_label.setText(
            f"<pre style='margin:0'>{html.escape(line)}\n"
            f"<span style='color:{palette.NOTE_COLOR}'>{html.escape(caret)} {html.escape(note)}</span></pre>")
        self.error_label.setToolTip(note)
        self.error_label.show()
        self.message.emit(f"filter: {note}")

    def _edited(self, text: str) -> None:
        """After an error, re-check as the user types (errors clear as soon as the text is fine)."""
        if self._error is None:
            return
        try:
            compile_filter(text, names=self._source().labels)
        except ExprError as exc:
            self._show_error(text, exc)
        else:
            self._show_error(text, None)

    # -- history ----------------------------------------------------------
    def _load_history(self) -> None:
        if self._settings is None:
            return
        items = [str(t) for t in self._settings.qsettings.value(SETTINGS_HISTORY, [], type=list) if t]
        self.combo.blockSignals(True)
        self.combo.addItems(items[:MAX_HISTORY])
        self.combo.setCurrentIndex(-1)
        self.combo.blockSignals(False)
        self.edit.clear()

    def history(self) -> list[str]:
        return [self.combo.itemText(i) for i in range(self.combo.count())]

    def _remember(self, text: str) -> None:
        self.combo.blockSignals(True)
        found = self.combo.findText(text, Qt.MatchFlag.MatchExactly)
        if found >= 0:
            self.combo.removeItem(found)
        self.combo.insertItem(0, text)
        while self.combo.count() > MAX_HISTORY:
            self.combo.removeItem(self.combo.count() - 1)
        self.combo.setCurrentIndex(0)
        self.combo.blockSignals(False)
        if self.edit.text() != text:
            self.edit.setText(text)
        if self._settings is not None:
            self._settings.qsettings.setValue(SETTINGS_HISTORY, self.history())

    # -- the count ----------------------------------------------------------
    def _update_count(self) -> None:
        if self.runner.is_active():
            return
        shown, total = self._rows.shown(), self._rows.total()
        if self._rows.is_filtered:
            self.count_label.setText(f"{shown:,} of {total:,} records")
            self.count_label.setToolTip(f"records matching {self._rows.expression}")
        else:
            self.count_label.setText(f"{total:,} record" + ("" if total == 1 else "s"))
            self.count_label.setToolTip("")
        self.clear_button.setEnabled(self._rows.is_filtered)


def _plain(rich: str) -> str:
    from PySide6.QtGui import QTextDocumentFragment

    return QTextDocumentFragment.fromHtml(rich).toPlainText()
