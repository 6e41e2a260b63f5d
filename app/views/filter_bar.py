"""The filter bar above the table and the gallery: an expression, Run, Clear, history, "N of M".

The expression language is :mod:`codec.query.filter`'s (see
docs/filters.md). A malformed expression is shown under the bar with a caret at
its position and what was expected there; nothing raises. A valid one runs
over the whole file on a :class:`~app.workers.worker.GeneratorWorker`
(``codec.stats.filter_pool.pooled_filter_iter``: both cores for a big file) with
progress and Cancel. When it starts the
:class:`~app.models.filtered_table_model.FilteredTableModel` the table and the
gallery share empties, and the matches are appended as the pass finds them
(a :class:`~codec.query.filter.MatchStream`, in record order): "1,234 matches
so far · 37% scanned", then "N of M records match". Cancel keeps the matches
found so far. With no match, an :class:`EmptyState` over the table and the
gallery says so, with a link that clears the filter. While the file is still
being indexed (or verified) the run waits and starts by itself when that
ends. When the run is over, a feature name no record has (a misspelt key,
most likely) is pointed at under the bar with the closest keys the file does
have, instead of a bare "0 of N". Only expressions that ran go into the
history: not a malformed one, not one naming a key no record has.
"""
from __future__ import annotations

import html
from array import array
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
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
from app.views.filter_help import TOOLTIP, help_menu
from app.workers.pass_runner import PassRunner
from codec.index.scan import IndexProgress
from codec.query.filter import (
    ExprError,
    FeatureCheck,
    Filter,
    MatchStream,
    MissingFeature,
    compile_filter,
    format_error,
)
from codec.stats.filter_pool import pooled_filter_iter

MAX_HISTORY = 25
SETTINGS_HISTORY = "filter/history"


@dataclass
class FilterPass:
    """One run of an expression: what the pass fills (all matches, the stream of new ones, the key check)."""

    flt: Filter
    matches: array
    stream: MatchStream
    check: FeatureCheck
    scanned: float = 0.0  # the fraction of the records checked, as last reported
    total: int = 0  # records to check, as last reported

    def stop_at(self, last: IndexProgress | None) -> None:
        """Stopped (Cancel, a failure): ``scanned`` becomes the part whose matches are all shown."""
        if last is not None:
            self.total = last.total
        if self.total:
            self.scanned = min(self.scanned, self.stream.through / self.total)

    def stopped_text(self) -> str:
        """What Cancel leaves: "stopped: 12 matches in the first 37%"."""
        n = len(self.matches)
        return f"stopped: {n:,} match{'' if n == 1 else 'es'} in the first {_percent(self.scanned)}"


def _percent(fraction: float) -> str:
    """37% (never 100% before the end: "99%")."""
    return f"{min(99, int(fraction * 100)) if fraction < 1 else 100}%"


class FilterBar(QWidget):
    """Expression box with history, Run / Clear / Cancel, progress, and the "N of M" count.

    ``filter_applied()`` after matches (or no filter) are shown;
    ``message(str)`` a one-line note for the status bar.
    """

    filter_applied = Signal()
    message = Signal(str)
    matches_found = Signal(int)  # matches shown so far, after each batch a running filter adds
    filter_started = Signal()  # a pass begins: the rows are about to empty

    def __init__(self, rows: FilteredTableModel, source: Callable, busy: Callable[[], bool], settings=None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._source = source  # -> the file (or edited document) to filter
        self._settings = settings
        self._error: ExprError | None = None
        self._pending: FilterPass | None = None  # the last pass asked for
        self._active: FilterPass | None = None  # the pass running (its matches are being shown)
        self._stopped: FilterPass | None = None  # a pass Cancel stopped, while its matches show
        self._empty_states: list[EmptyState] = []
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
        self.combo.setToolTip(TOOLTIP)
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
        self.help_menu = help_menu(self, self.insert_example)
        self.help_button = QToolButton(self)
        self.help_button.setText("?")
        self.help_button.setToolTip("The filter language, with examples to try")
        self.help_button.setAutoRaise(True)
        self.help_button.setMenu(self.help_menu)
        self.help_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.edit.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.edit.customContextMenuRequested.connect(self._context_menu)

        row = QHBoxLayout()
        row.setContentsMargins(6, 4, 6, 4)
        row.setSpacing(4)
        row.addWidget(self.combo, 1)
        row.addWidget(self.help_button)
        row.addWidget(self.run_button)
        row.addWidget(self.clear_button)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.addSpacing(4)
        row.addWidget(self.count_label)
        self._row = row
        self._under = QHBoxLayout()  # the count, on a line of its own when the row has no room for it
        self._under.setContentsMargins(8, 0, 6, 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addLayout(self._under)
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

    def insert_example(self, text: str) -> None:
        """Put ``text`` in the box, ready to run or edit (Enter runs it)."""
        self.edit.setText(text)
        self.edit.setFocus()
        self._edited(text)

    def attach_empty_state(self, view: QAbstractScrollArea) -> EmptyState:
        """Show "no records match" over ``view`` (the table, the gallery) when the filter shown has no match."""
        state = EmptyState(view, self)
        self._empty_states.append(state)
        self._show_empty()
        return state

    def empty_text(self) -> str:
        """What the empty state says now, as plain text ("" when hidden)."""
        return _plain(self._empty_html()) if self._empty_html() else ""

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
        run = self._pending = FilterPass(flt, array("Q"), MatchStream(), FeatureCheck(flt))
        self.runner.start(lambda: pooled_filter_iter(source, flt, run.matches, check=run.check, stream=run.stream),
                          run)
        return True

    def clear(self) -> None:
        """Show every record again."""
        self.runner.cancel()
        self._show_error("", None)
        self._stopped = None
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
        self._set_count("waiting for indexing to finish…")

    def _started(self) -> None:
        """The pass asked for last begins: the table empties, to fill as matches come."""
        self._show_running(True)
        self.progress.setValue(0)
        self._active, self._stopped = self._pending, None
        self.filter_started.emit()
        self._rows.set_matches([], self._active.flt.text if self._active is not None else "", complete=False)
        self._show_so_far()

    def _progress(self, p: IndexProgress) -> None:
        run = self._active
        if run is None:
            return
        self.progress.setValue(int(p.fraction * 1000))
        run.scanned = p.fraction if not p.done else 1.0
        run.total = p.total
        self._take(run)
        self._show_so_far()

    def _take(self, run: FilterPass) -> None:
        """Show the matches the pass found since last asked."""
        batch = run.stream.take()
        if batch.size:
            self._rows.append_matches(batch)
            self.matches_found.emit(self._rows.matching_count())

    def _show_so_far(self) -> None:
        run = self._active
        if run is None:
            return
        found = self._rows.matching_count()
        so_far = "no matches yet" if not found else f"{found:,} match{'' if found == 1 else 'es'} so far"
        self._set_count(f"{so_far} · {_percent(run.scanned)} scanned")
        self._show_empty()

    def _finished(self, payload: FilterPass, last: IndexProgress | None, cancelled: bool) -> None:
        self._show_running(False)
        run = payload
        if run is not self._active:  # stopped while it waited: nothing was shown
            self._update_count()
            return
        self._active = None
        if last is not None:
            run.scanned = 1.0 if last.done else last.fraction
        if cancelled:
            run.stop_at(last)
        self._take(run)
        text = run.flt.text
        if self._rows.matching_count() != len(run.matches):  # the records changed under the pass: show its result
            self._rows.set_matches(run.matches, text)
        missing = [] if cancelled else run.check.missing()  # only a whole pass can tell that no record has a name
        if not missing:
            self._remember(text)  # it ran: parsed, and went over the records (or some of them)
        if cancelled:
            self._stopped = run
            self.message.emit(f"filter {run.stopped_text()}")
        else:
            self.message.emit(f"{len(run.matches):,} of {self._rows.total():,} records match {text}")
            if missing:
                self._show_missing(text, missing)
        self._update_count()
        self._rows.matches_complete = True
        self._rows.filter_changed.emit()  # the matches are complete: what follows the filter goes over them now
        self.filter_applied.emit()

    def _failed(self, error: str) -> None:
        self._show_running(False)
        run, self._active = self._active, None
        if run is not None:  # the matches found before it failed stay, said to be partial
            self._take(run)
            run.stop_at(None)
            self._stopped = run
            self._rows.matches_complete = True  # (as many as there will be: what follows the filter takes them)
            self._rows.filter_changed.emit()
        self._update_count()
        self.error_label.setText(f"<span style='color:{palette.ERROR_COLOR}'>filter failed: {html.escape(error)}</span>")
        self.error_label.show()
        self.message.emit(f"filter failed: {error}")

    def _set_count(self, text: str) -> None:
        self.count_label.setText(text)
        self._place_count()

    def _place_count(self) -> None:
        """The count beside the buttons while the row has room for it whole, else on a line under them
        ("1,234 matches so far · 37% scanned" is never cut on a narrow side of the window)."""
        row, spacing = self._row, self._row.spacing()
        shown = [row.itemAt(i).widget() for i in range(row.count())]
        widgets = [w for w in shown if w is not None and w is not self.count_label and not w.isHidden()]
        needed = (self.combo.minimumSizeHint().width() + sum(w.sizeHint().width() for w in widgets[1:])
                  + self.count_label.sizeHint().width() + spacing * (len(widgets) + 1) + 4 + 12)
        under = needed > self.width()
        if under == (self._under.indexOf(self.count_label) >= 0):
            return
        (self._row if under else self._under).removeWidget(self.count_label)
        (self._under if under else self._row).addWidget(self.count_label)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_count()

    def _show_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.clear_button.setEnabled(running or self._rows.is_filtered)
        self._place_count()

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
        """Put ``text`` first in the history; what the box holds now (typed meanwhile) stays."""
        typed, cursor = self.edit.text(), self.edit.cursorPosition()
        self.combo.blockSignals(True)
        found = self.combo.findText(text, Qt.MatchFlag.MatchExactly)
        if found >= 0:
            self.combo.removeItem(found)
        self.combo.insertItem(0, text)
        while self.combo.count() > MAX_HISTORY:
            self.combo.removeItem(self.combo.count() - 1)
        self.combo.setCurrentIndex(0 if typed == text else -1)
        self.combo.blockSignals(False)
        if self.edit.text() != typed:
            self.edit.setText(typed)
            self.edit.setCursorPosition(cursor)
        if self._settings is not None:
            self._settings.qsettings.setValue(SETTINGS_HISTORY, self.history())

    # -- the count ----------------------------------------------------------
    def _update_count(self) -> None:
        if self.runner.is_running() and self._active is not None:
            self._show_so_far()
            return
        if self.runner.is_active():
            return
        shown, total = self._rows.shown(), self._rows.total()
        if self._rows.is_filtered and self._stopped:
            self._set_count(self._stopped.stopped_text())
            self.count_label.setToolTip(f"records matching {self._rows.expression}, until the filter was stopped")
        elif self._rows.is_filtered:
            self._set_count(f"{shown:,} of {total:,} records match")
            self.count_label.setToolTip(f"records matching {self._rows.expression}")
        else:
            self._stopped = None
            self._set_count(f"{total:,} record" + ("" if total == 1 else "s"))
            self.count_label.setToolTip("")
        self.clear_button.setEnabled(self._rows.is_filtered)
        self._show_empty()

    # -- no match ---------------------------------------------------------
    def _empty_html(self) -> str:
        """What the views say when the filter shown has no match ("" when it has some, or none is shown)."""
        rows = self._rows
        if not rows.is_filtered or rows.matching_count():
            return ""
        clear = "<a href='clear'>Show all records</a>"
        expression = html.escape(rows.expression)
        if self._active is not None:
            return f"No matches yet · {_percent(self._active.scanned)} scanned"
        if self.runner.is_active():
            return ""
        if self._stopped:
            return (f"No records match <code>{expression}</code> in the first {_percent(self._stopped.scanned)} "
                    f"(stopped)<br>{clear}")
        return (f"No records match <code>{expression}</code><br>"
                f"Check the names and values (the <b>?</b> beside the box lists the language), or {clear}")

    def _show_empty(self) -> None:
        text = self._empty_html()
        for state in self._empty_states:
            state.show_text(text)

    def _context_menu(self, at: QPoint) -> None:
        """The line edit's own menu, then the filter language's examples."""
        menu = self.edit.createStandardContextMenu()
        menu.addSeparator()
        menu.addMenu(self.help_menu)
        menu.exec(self.edit.mapToGlobal(at))
        menu.deleteLater()


class EmptyState(QLabel):
    """A note in the middle of a view's viewport, shown only while it has text (the Clear link clears the filter)."""

    def __init__(self, view: QAbstractScrollArea, bar: FilterBar) -> None:
        super().__init__(view.viewport())
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {palette.MUTED_COLOR}; padding: 24px;")
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByMouse)
        self.linkActivated.connect(lambda _link: bar.clear())
        view.viewport().installEventFilter(self)
        self.hide()

    def show_text(self, text: str) -> None:
        self.setText(text)
        self.setVisible(bool(text))
        if text:
            self.setGeometry(self.parentWidget().rect())
            self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self.setGeometry(self.parentWidget().rect())
        return super().eventFilter(watched, event)


def _plain(rich: str) -> str:
    from PySide6.QtGui import QTextDocumentFragment

    return QTextDocumentFragment.fromHtml(rich).toPlainText()
