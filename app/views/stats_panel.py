"""Per-feature statistics of a file, or of the records a filter shows, with small plots.

:class:`StatsPanel` runs ``codec.stats.file_stats.stats_iter`` on a worker (progress,
Cancel) and shows ``FileStats.to_json()`` as a table with one row per
feature, grouped (numeric features, bytes features; for SequenceExamples the
context and the feature lists): presence, type(s) with mixed types flagged,
values per record, min/max/mean/std, NaN/inf, text/image shares, image
formats and sizes, audio codecs, durations, sample rates and channels, and a
chart per feature painted by :mod:`app.views.charts` (a histogram, the counts
of a few values, the most common values, the image formats, an audio
feature's durations beside its sample rates and channels), in the spirit of
Facets Overview.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from PySide6.QtCore import QModelIndex, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.models.filtered_table_model import FilteredTableModel
from app.models.labels import KIND_TEXT
from app.style import icons, palette
from app.views import charts
from app.workers.pass_runner import PassRunner, RecomputesWhenShown
from codec.decode.decoder import RecordKind
from codec.index.scan import IndexProgress
from codec.stats.file_stats import FileStats, stats_iter
from codec.stats.pool import pooled_stats_iter

NAME_ROLE = Qt.ItemDataRole.UserRole + 60  # the feature's name (feature rows)
CHART_ROLE = Qt.ItemDataRole.UserRole + 62  # what the chart column paints: (kind, ...)
TOP_ROLE = Qt.ItemDataRole.UserRole + 63  # the feature's "top" ((value, count), ...) or None

COLUMNS = ("Feature", "Type", "Present", "Values / record", "Summary", "Issues", "Distribution")
FEATURE, TYPE, PRESENT, PER_RECORD, SUMMARY, ISSUES, CHART = range(len(COLUMNS))
ROW_HEIGHT = 62  # room for a chart
BAR_ROWS = 5  # most common values drawn as bars
CHART_MAX_WIDTH = 440
COLUMN_CATEGORIES = 12  # int features with at most this many distinct values get one column each
FORMAT_COLORS = palette.SERIES  # the palette's QColors: they follow the theme in place
SCOPE_SHOWN, SCOPE_ALL = "shown", "all"
NUMERIC = ("int64", "float32", "float64")  # statistics dtypes with min, max, mean and a histogram


# ---------------------------------------------------------------- formatting

def _num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def _range(summary: dict | None, unit: str = "") -> str:
    """``1`` or ``1–3`` (with a mean when it varies)."""
    if not summary or summary.get("min") is None:
        return "–"
    lo, hi, mean = summary["min"], summary["max"], summary.get("mean")
    if lo == hi:
        return f"{_num(lo)}{unit}"
    text = f"{_num(lo)}–{_num(hi)}{unit}"
    return f"{text}\nmean {_num(mean)}" if mean is not None else text


def _value_text(v: Any) -> str:
    if isinstance(v, str):
        if v.startswith("base64:"):
            return f"<{(len(v) - 7) * 3 // 4} bytes>"
        return v.replace("\n", "⏎")
    return _num(v)


def top_text(top: list | None, limit: int = 10) -> str:
    """``0 ×5 · 1 ×5 · …`` for the most common values."""
    if not top:
        return ""
    return " · ".join(f"{_value_text(v)} ×{c:,}" for v, c in top[:limit])


def _dtype_text(f: dict) -> str:
    dtype = f.get("dtype") or "no values"
    if f.get("mixed_types"):
        kinds = " + ".join(k for k in f.get("dtypes", {}) if k != "none")
        return f"mixed: {kinds}"
    if f.get("audio"):
        return f"{dtype} · audio"
    if dtype == "bytes":
        if f.get("image_share", 0) >= 0.5:
            return "bytes · images"
        if f.get("text_share", 0) >= 0.5:
            return "bytes · text"
    return dtype


def _audio_summary(a: dict) -> str:
    """``wav 3, flac 3`` / ``0.25–0.45 s`` / ``16,000 Hz · 1 ch``: an audio feature's clips."""
    codecs = ", ".join(f"{k} {v:,}" for k, v in a["codecs"].items())
    if a["duration"].get("min") is None:
        return f"{codecs}\nnone decodes"
    rates = ", ".join(f"{r:,}" for r, _ in a["sample_rates"]) + " Hz"
    channels = ", ".join(str(c) for c, _ in a["channels"]) + " ch"
    return f"{codecs}\n{_span(a['duration'], ' s')}\n{rates} · {channels}"


def _summary(f: dict) -> str:
    dtype = f.get("dtype")
    if f.get("audio") and not f.get("mixed_types"):
        return _audio_summary(f["audio"])
    if dtype == "bool":
        return f"true {f['true']:,}\nfalse {f['false']:,}"
    if dtype in NUMERIC:
        if f.get("min") is None:
            return "no finite values"
        # min and max on lines of their own: int64 extremes are 26 characters each, and a cell too
        # narrow for both on one line elides them into one number
        return f"min {_num(f['min'])}\nmax {_num(f['max'])}\nmean {_num(f['mean'])} · std {_num(f['std'])}"
    if dtype == "bytes":
        if f.get("image_formats"):
            formats = ", ".join(f"{k} {v:,}" for k, v in f["image_formats"].items())
            w, h = f["image_width"], f["image_height"]
            size = f"{_span(w)} × {_span(h)} px"
            return f"{formats}\n{size}"
        length = f.get("value_bytes") or {}
        lengths = _span(length, " bytes") if length.get("min") is not None else "empty"
        shares = []
        if f.get("text_share"):
            shares.append(f"text {f['text_share']:.0%}")
        if f.get("image_share"):
            shares.append(f"images {f['image_share']:.0%}")
        return (" · ".join(shares) + "\n" if shares else "") + lengths
    return ""


def _span(s: dict, unit: str = "") -> str:
    lo, hi = s.get("min"), s.get("max")
    if lo is None:
        return "–"
    return f"{_num(lo)}{unit}" if lo == hi else f"{_num(lo)}–{_num(hi)}{unit}"


def _issues(f: dict, records: int, sequence: bool) -> tuple[str, QColor | None]:
    notes, color = [], None
    if f.get("nan"):
        notes.append(f"NaN {f['nan']:,}")
        color = palette.BAD_TEXT
    if f.get("inf"):
        notes.append(f"inf {f['inf']:,}")
        color = palette.BAD_TEXT
    if f.get("mixed_types"):
        notes.append("mixed types: " + ", ".join(f"{k} {v:,}" for k, v in f["dtypes"].items()))
        color = color or palette.WARN_TEXT
    none = f.get("dtypes", {}).get("none")
    if none:
        notes.append(f"{none:,} with no value list")
        color = color or palette.WARN_TEXT
    undecodable = f.get("audio", {}).get("undecodable")
    if undecodable:
        notes.append(f"{undecodable:,} audio value(s) do not decode")
        color = palette.BAD_TEXT
    missing = records - f.get("present", 0)
    if missing > 0 and not sequence:
        notes.append(f"missing in {missing:,}")
        color = color or palette.WARN_TEXT
    return "\n".join(notes), color


def _chart(f: dict) -> tuple | None:
    """What to plot for a feature: ("columns", items) | ("hist", counts, lo, hi) | ("bars", items, total)
    | ("share", parts); None when a chart would say nothing."""
    dtype = f.get("dtype")
    audio = f.get("audio")
    if audio and audio["duration"].get("min") is not None:
        d = audio["duration"]
        return ("audio", d["histogram"]["counts"], _num(d["min"]) + " s", _num(d["max"]) + " s",
                [(f"{r / 1000:g} kHz", n) for r, n in audio["sample_rates"]],
                [(f"{c} ch", n) for c, n in audio["channels"]])
    if dtype == "bool":
        return ("columns", [("true", f["true"]), ("false", f["false"])]) if f.get("count") else None
    if dtype in NUMERIC:
        top = f.get("top")
        distinct = f.get("distinct")
        if dtype == "int64" and top and distinct is not None and distinct <= min(COLUMN_CATEGORIES, len(top)):
            return ("columns", [(_num(v), c) for v, c in sorted(top)])
        hist = f.get("histogram") or {}
        if hist.get("counts"):
            return ("hist", hist["counts"], _num(f.get("min")), _num(f.get("max")))
        return None
    if dtype == "bytes":
        formats = f.get("image_formats")
        if formats and f.get("image_share", 0) >= 0.5:
            parts = [(name, n, FORMAT_COLORS[k % len(FORMAT_COLORS)]) for k, (name, n) in enumerate(formats.items())]
            sizes = [(axis, f[key]) for axis, key in (("width", "image_width"), ("height", "image_height"))
                     if f.get(key) and f[key].get("histogram", {}).get("counts")]
            return ("images", parts, [(axis, s["histogram"]["counts"], _num(s["min"]), _num(s["max"]))
                                      for axis, s in sizes])
        top = f.get("top") or []
        if any(c > 1 for _, c in top):
            return ("bars", [(_value_text(v), c) for v, c in top], f.get("count", 0))
    return None


def _chart_text(f: dict) -> str:
    """The chart column's words: for copying, tooltips, and where no chart is drawn."""
    audio = f.get("audio")
    if audio and audio["duration"].get("min") is not None:
        rates = ", ".join(f"{r:,} Hz ×{n:,}" for r, n in audio["sample_rates"])
        channels = ", ".join(f"{c} ch ×{n:,}" for c, n in audio["channels"])
        return f"audio: {_span(audio['duration'], ' s')}; {rates}; {channels}"
    top = f.get("top")
    if f.get("dtype") == "bytes":
        if f.get("image_formats") and f.get("image_share", 0) >= 0.5:
            return "images: " + ", ".join(f"{k} {v:,}" for k, v in f["image_formats"].items())
        if top and not any(c > 1 for _, c in top):
            return "every value distinct" if f.get("top_complete") else "no value repeats among those tracked"
    if top:
        return top_text(top)
    hist = f.get("histogram") or {}
    return "histogram: " + " ".join(str(c) for c in hist.get("counts", [])) if hist.get("counts") else ""


# ---------------------------------------------------------------- the table

def _item(text: str = "", tip: str | None = None) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if tip:
        item.setToolTip(tip)
    return item


def _feature_row(name: str, f: dict, records: int, sequence: bool) -> list[QStandardItem]:
    present = f.get("present", 0)
    share = present / records if records else 0.0
    summary = _summary(f)
    row = [_item(name, name), _item(_dtype_text(f)), _item(f"{present:,}\n{share:.0%}"), None,
           _item(summary, summary or None), None, None]
    if f.get("mixed_types"):
        row[TYPE].setForeground(palette.WARN_TEXT)
        row[FEATURE].setIcon(icons.icon("warning"))
    if present < records and not sequence:
        row[PRESENT].setForeground(palette.WARN_TEXT)
    if sequence:
        row[PER_RECORD] = _item("steps " + _range(f.get("length")),
                                "steps per record (feature list length); values per step: " +
                                _range(f.get("values_per_step")).replace("\n", ", "))
    else:
        row[PER_RECORD] = _item(_range(f.get("values_per_record")))
    issues, color = _issues(f, records, sequence)
    row[ISSUES] = _item(issues, issues or None)
    if color is not None:
        row[ISSUES].setForeground(color)
    chart = _item(_chart_text(f), _chart_text(f) or None)
    chart.setData(_chart(f), CHART_ROLE)
    top = f.get("top")  # as tuples, which Qt keeps as they are: a list would become int64 QVariants, and uint64 overflow
    chart.setData(tuple(map(tuple, top)) if top is not None else None, TOP_ROLE)
    row[CHART] = chart
    for item in row:
        item.setData(name, NAME_ROLE)
    return row


def _group(model: QStandardItemModel, title: str, features: dict, records: int, sequence: bool) -> None:
    if not features:
        return
    head = _item(f"{title} ({len(features):,})")
    font = QFont(head.font())
    font.setBold(True)
    head.setFont(font)
    cells = [head] + [_item() for _ in COLUMNS[1:]]
    for name, f in features.items():
        head.appendRow(_feature_row(name, f, records, sequence))
    model.appendRow(cells)


def build_model(stats: dict, parent=None) -> QStandardItemModel:
    """The table of ``FileStats.to_json()``: a group row per kind of feature, a row per feature."""
    model = QStandardItemModel(parent)
    model.setHorizontalHeaderLabels(list(COLUMNS))
    records = stats.get("records", 0)
    if "features" in stats:
        sections = [("", stats["features"], False)]
    else:
        sections = [("Context: ", stats.get("context", {}), False)]
    for prefix, features, sequence in sections:
        numeric = {k: f for k, f in features.items() if f.get("dtype") in NUMERIC + ("bool",)}
        data = {k: f for k, f in features.items() if f.get("dtype") == "bytes"}
        empty = {k: f for k, f in features.items() if f.get("dtype") is None}
        _group(model, f"{prefix}numeric features" if prefix else "Numeric features", numeric, records, sequence)
        _group(model, f"{prefix}bytes features" if prefix else "Bytes features", data, records, sequence)
        _group(model, f"{prefix}features without values" if prefix else "Features without values", empty, records,
               sequence)
    if "sequence" in stats:
        _group(model, "Feature lists", stats["sequence"], records, True)
    return model


class ChartDelegate(QStyledItemDelegate):
    """Paints the chart column (and gives feature rows room for two-line cells)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(NAME_ROLE) is not None:
            height = ROW_HEIGHT
            chart = index.siblingAtColumn(CHART).data(CHART_ROLE)
            if chart is not None and chart[0] == "bars":
                line = option.fontMetrics.height() * 0.85 + 1
                height = max(height, int(len(chart[1][:BAR_ROWS]) * line) + 14)
            size.setHeight(max(size.height() + 8, height))
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        chart = index.data(CHART_ROLE) if index.column() == CHART else None
        if chart is None:
            if index.column() == CHART and index.data(NAME_ROLE) is not None:
                opt = QStyleOptionViewItem(option)
                self.initStyleOption(opt, index)
                opt.palette.setColor(opt.palette.ColorRole.Text, palette.MUTED_TEXT)
                super().paint(painter, opt, index)
                return
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        rect = QRectF(option.rect).adjusted(6, 5, -8, -5)
        rect.setWidth(min(rect.width(), CHART_MAX_WIDTH))
        painter.save()
        painter.setFont(option.font)
        kind = chart[0]
        if kind == "columns":
            charts.paint_columns(painter, rect, chart[1])
        elif kind == "hist":
            charts.paint_histogram(painter, rect, chart[1], chart[2], chart[3])
        elif kind == "bars":
            charts.paint_bars(painter, rect, chart[1][:BAR_ROWS], chart[2])
        elif kind == "images":  # formats, then the width and height distributions
            sizes = chart[2]
            share_w = rect.width() * (0.4 if sizes else 1.0)
            charts.paint_share(painter, QRectF(rect.left(), rect.top() + 8, share_w - 12, rect.height() - 8),
                               chart[1])
            slot = (rect.width() - share_w) / max(1, len(sizes))
            for k, (axis, counts, lo, hi) in enumerate(sizes):
                area = QRectF(rect.left() + share_w + k * slot, rect.top(), slot - 12, rect.height())
                if lo == hi:  # every image this wide (high): one labelled column
                    charts.paint_columns(painter, area, [(f"{axis} {lo}", sum(counts))], color=charts.BAR_ALT_COLOR)
                else:
                    charts.paint_histogram(painter, area, counts, f"{axis} {lo}", hi, color=charts.BAR_ALT_COLOR)
        elif kind == "audio":  # durations, then the sample rates and the channels
            charts.paint_histogram_with_counts(painter, rect, chart[1], chart[2], chart[3], [chart[4], chart[5]])
        painter.restore()


# ---------------------------------------------------------------- the bar over a pass

class PassBar(QWidget):
    """Scope (shown records / all records; left out when not ``scoped``), Refresh, progress, Cancel and a
    one-line summary."""

    refresh_requested = Signal()
    cancel_requested = Signal()
    scope_changed = Signal()

    def __init__(self, parent: QWidget | None = None, scoped: bool = True) -> None:
        super().__init__(parent)
        self.scope = QComboBox(self)
        self.scope.addItem("Shown records", SCOPE_SHOWN)
        self.scope.addItem("All records", SCOPE_ALL)
        self.scope.setToolTip("Shown records: the records the table shows (a filter's matches, or all)")
        self.scope.currentIndexChanged.connect(lambda _: self.scope_changed.emit())
        self.refresh = QToolButton(self)
        self.refresh.setText("Refresh")
        self.refresh.setToolTip("Go over the records again")
        self.refresh.setAutoRaise(True)
        self.refresh.clicked.connect(self.refresh_requested)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(140)
        self.progress.setMaximumHeight(14)
        self.cancel = QToolButton(self)
        self.cancel.setIcon(icons.icon("cancel"))
        self.cancel.setText("Cancel")
        self.cancel.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.cancel.setAutoRaise(True)
        self.cancel.clicked.connect(self.cancel_requested)
        self.summary = QLabel(self)
        palette.follow(self.summary, lambda: palette.HINT_STYLE)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(6)
        if scoped:  # (a pass over all records, whatever is shown, has no scope to choose)
            layout.addWidget(QLabel("Over:", self))
            layout.addWidget(self.scope)
        else:
            self.scope.hide()
        layout.addWidget(self.refresh)
        layout.addWidget(self.progress)
        layout.addWidget(self.cancel)
        layout.addSpacing(6)
        layout.addWidget(self.summary, 1)
        self.set_running(False)

    def scope_value(self) -> str:
        return self.scope.currentData()

    def set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel.setVisible(running)
        if running:
            self.progress.setValue(0)

    def set_progress(self, p: IndexProgress) -> None:
        self.progress.setValue(int(p.fraction * 1000))
        self.summary.setText(f"{p.records:,} of {p.total:,} records…")

    def describe_scope(self, rows: FilteredTableModel) -> tuple[Any, str]:
        """(indices or None, words) for the chosen scope."""
        if self.scope_value() == SCOPE_SHOWN and rows.is_filtered:
            return rows.matches().copy(), f"{rows.shown():,} filtered records ({rows.expression})"
        return None, "all records"


class StatsPanel(RecomputesWhenShown, QWidget):
    """Statistics of one file's records; ``stats_ready(FileStats, scope words)`` when computed."""

    stats_ready = Signal(object, str)

    def __init__(self, rows: FilteredTableModel, source: Callable, busy: Callable[[], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = rows
        self._source = source
        self._stats: FileStats | None = None
        self._json: dict | None = None
        self._stale = True
        self.runner = PassRunner(busy, self)
        self.bar = PassBar(self)
        self.bar.refresh_requested.connect(self.compute)
        self.bar.cancel_requested.connect(self.runner.cancel)
        self.bar.scope_changed.connect(self._scope_changed)
        self.runner.waiting.connect(lambda: self.bar.summary.setText("waiting for indexing to finish…"))
        self.runner.started.connect(lambda: self.bar.set_running(True))
        self.runner.progress.connect(self.bar.set_progress)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        self.runner.waiting.connect(lambda: self.bar.set_running(True))

        self.tree = stats_tree(self)
        self.placeholder = QLabel("Statistics of every feature appear here.", self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        palette.follow(self.placeholder, lambda: palette.HINT_STYLE)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.tree)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addWidget(self.stack, 1)
        rows.filter_changed.connect(self._filter_changed)

    # -- public -----------------------------------------------------------
    def stats(self) -> FileStats | None:
        return self._stats

    def stats_json(self) -> dict | None:
        return self._json

    def model(self) -> QStandardItemModel | None:
        model = self.tree.model()
        return model if isinstance(model, QStandardItemModel) else None

    def feature_row(self, name: str) -> dict[int, QModelIndex]:
        """The cells of feature ``name``'s row by column (empty when absent)."""
        model = self.model()
        if model is None:
            return {}
        for g in range(model.rowCount()):
            head = model.index(g, 0)
            for r in range(model.rowCount(head)):
                if model.index(r, 0, head).data(NAME_ROLE) == name:
                    return {c: model.index(r, c, head) for c in range(len(COLUMNS))}
        return {}

    def is_running(self) -> bool:
        return self.runner.is_active()

    def compute(self) -> None:
        """Go over the chosen records (on a worker; waits for indexing to finish)."""
        indices, words = self.bar.describe_scope(self._rows)
        result = FileStats()
        source = self._source()
        self._stale = False
        if indices is None:  # every record: both cores when the file is big enough
            self.runner.start(lambda: pooled_stats_iter(source, result), (result, words))
        else:
            self.runner.start(lambda: stats_iter(source, indices, result), (result, words))

    # -- internals --------------------------------------------------------
    def _filter_applies(self) -> bool:
        return self.bar.scope_value() == SCOPE_SHOWN

    def _finished(self, payload, last: IndexProgress | None, cancelled: bool) -> None:
        self.bar.set_running(False)
        result, words = payload
        if cancelled and last is None:
            self.bar.summary.setText("stopped")
            self._stale = True
            return
        self._stats = result
        self._json = result.to_json()
        self._show(self._json, words, cancelled)
        if cancelled:
            self._stale = True
        else:
            self.stats_ready.emit(result, words)

    def _failed(self, error: str) -> None:
        self.bar.set_running(False)
        self._stale = True
        self.bar.summary.setText(f"failed: {error}")
        self.placeholder.setText(f"Statistics could not be computed:\n{error}")
        self.stack.setCurrentWidget(self.placeholder)

    def _show(self, stats: dict, words: str, cancelled: bool) -> None:
        model = show_stats(self.tree, stats)
        parts = [records_text(stats), words]
        if stats.get("damaged_records"):
            parts.append(f"{stats['damaged_records']:,} damaged left out")
        if cancelled:
            parts.append("stopped early: partial")
        self.bar.summary.setText(" · ".join(parts))
        if model.rowCount():
            self.stack.setCurrentWidget(self.tree)
        else:
            self.placeholder.setText("No features: the records are raw bytes, or there are none.")
            self.stack.setCurrentWidget(self.placeholder)


def stats_tree(parent: QWidget | None = None) -> QTreeView:
    """A tree for :func:`show_stats`: charts painted, whole rows, read-only."""
    tree = QTreeView(parent)
    tree.setItemDelegate(ChartDelegate(tree))
    tree.setAlternatingRowColors(True)
    tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    tree.setRootIsDecorated(True)
    tree.setWordWrap(False)
    tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    return tree


def show_stats(tree: QTreeView, stats: dict) -> QStandardItemModel:
    """Show a ``stats --json`` object in ``tree``: its groups open, the columns sized to their text."""
    old = tree.model()
    model = build_model(stats, tree)
    tree.setModel(model)
    if old is not None:
        old.deleteLater()
    tree.expandAll()
    for g in range(model.rowCount()):
        tree.setFirstColumnSpanned(g, QModelIndex(), True)
    _size_columns(tree)
    return model


def records_text(stats: dict) -> str:
    """``100 records (100 Examples)``."""
    kinds = ", ".join(f"{n:,} {KIND_TEXT[RecordKind(k)]}" for k, n in stats.get("kinds", {}).items())
    return f"{stats['records']:,} records" + (f" ({kinds})" if kinds else "")


def _size_columns(tree: QTreeView) -> None:
    """Text columns as wide as their words (within limits); the chart takes the rest."""
    header = tree.header()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    header.setMinimumSectionSize(40)
    em = tree.fontMetrics().horizontalAdvance("M")
    limits = {FEATURE: (10, 32), TYPE: (6, 14), PRESENT: (5, 8), PER_RECORD: (7, 12), SUMMARY: (10, 22),
              ISSUES: (7, 18)}
    for col, (low, high) in limits.items():
        tree.resizeColumnToContents(col)
        high = max(high * em, _whole_numbers_width(tree, col) + em) if col == SUMMARY else high * em
        header.resizeSection(col, max(low * em, min(high, header.sectionSize(col) + em)))


def _whole_numbers_width(tree: QTreeView, column: int) -> int:
    """Room for the widest min/max line of ``column``: numbers are never elided, words may be."""
    model, metrics = tree.model(), tree.fontMetrics()
    if model is None:
        return 0
    widest = 0
    for g in range(model.rowCount()):
        head = model.index(g, 0)
        indent = 2 * tree.indentation() if column == 0 else 0
        for r in range(model.rowCount(head)):
            text = model.index(r, column, head).data() or ""
            for line in text.splitlines():
                if line.startswith(("min ", "max ")):
                    widest = max(widest, metrics.horizontalAdvance(line) + indent)
    return widest
