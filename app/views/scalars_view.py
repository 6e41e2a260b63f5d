"""The Scalars view of a TensorBoard log: one plot per tag, runs overlaid, and the histograms.

Its points are read on a worker (:class:`~app.workers.scalars_loader.ScalarsLoader`,
with progress and Cancel) once the log's own pass has ended, and again as a
followed file grows. The "Scalars" tab is a scrollable grid of
:class:`~app.views.scalar_plots.ScalarPlot`, one per tag the filter box's glob
matches; the run legend's checkboxes choose the runs drawn, each in its colour of
``palette.SERIES``. Smoothing is TensorBoard's debiased moving average; Export CSV
writes the points shown as ``tfrlens-cli scalars --csv`` does. The "Histograms" tab
shows each run's histograms of a tag, at the step the slider picks or offset.
"""
from __future__ import annotations

import io
import os
from typing import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSlider,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.style import palette
from app.views.scalar_plots import Curve, HistogramPlot, ScalarPlot
from app.views.stats_panel import PassBar
from app.workers.scalars_loader import ScalarsLoader
from app.workers.worker import call_on_worker
from codec.decode.events import EVENT_TYPE
from codec.errors import TFRecordError
from codec.ops.scalar_series import RELATIVE, STEP, WALL, smooth
from codec.ops.scalars import write_csv
from codec.sources.protocol import RecordSource
from codec.storage.writer import atomic_write_bytes, describe_write_error

AXIS_NAMES = ((STEP, "Step"), (RELATIVE, "Relative (hours)"), (WALL, "Wall time"))
PLOT_WIDTH = 380  # a plot's width in the grid: as many columns as fit
SCALARS_TAB, HISTOGRAMS_TAB = 0, 1
DEFAULT_SMOOTHING = 0.6  # TensorBoard's own default
REDRAW_MS = 60  # a control's change (the smoothing slider dragged) is drawn once it rests this long
READ_REDRAW_MS = 600  # while a log is read, its plots grow this often


def is_log(source: RecordSource) -> bool:
    """Whether ``source``'s records decode as TensorBoard Events (an event file, a log folder)."""
    return source.payload is not None and source.payload.name == EVENT_TYPE


class _Grid(QWidget):
    """Plots in as many columns as the width holds."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(6, 6, 6, 6)
        self.grid.setSpacing(8)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.plots: list[QWidget] = []
        self._columns = 0

    def set_plots(self, plots: list[QWidget]) -> None:
        for old in self.plots:
            if old not in plots:
                old.hide()
        self.plots = plots
        self._columns = 0
        self._lay_out()

    def _lay_out(self) -> None:
        columns = max(1, self.width() // PLOT_WIDTH)
        if columns == self._columns:
            return
        self._columns = columns
        while self.grid.count():
            self.grid.takeAt(0)
        for k, plot in enumerate(self.plots):
            self.grid.addWidget(plot, k // columns, k % columns)
            plot.show()
        for c in range(self.grid.columnCount()):
            self.grid.setColumnStretch(c, 1 if c < columns else 0)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._lay_out()


def _scroll(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(widget)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area


class ScalarsView(QWidget):
    """A log's scalars and histograms (see the module docstring).

    ``message(str)``: a note for the status bar (an export written, or why not).
    ``loaded()``: a pass over the records ended (points shown); ``redrawn()``: the plots show the points
    and controls as they are now; ``exported(path, error)``: an export ended ("" when written).
    """

    message = Signal(str)
    loaded = Signal()
    redrawn = Signal()
    exported = Signal(str, str)

    def __init__(self, source: Callable[[], RecordSource], busy: Callable[[], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loader = ScalarsLoader(source, busy, self)
        self._plots: dict[str, ScalarPlot] = {}
        self._histograms: dict[tuple[str, str], HistogramPlot] = {}
        self._hidden_runs: set[str] = set()
        self._smoothing_kept: dict[tuple[str, str], tuple[float, int, list[float]]] = {}
        self._started = False
        self._redraw = QTimer(self)  # points come in bursts: draw once per burst
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.refresh)

        self.bar = PassBar(self, scoped=False)
        self.bar.refresh.setToolTip("Read the log's points again")
        self.bar.refresh_requested.connect(self.load)
        self.bar.cancel_requested.connect(self.loader.cancel)

        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter tags (metrics/*, *acc*)")
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip("Only tags matching a glob (* crosses /); text without * ? [ matches tags holding it")
        self.filter.textChanged.connect(lambda _t: self.refresh())
        self.axis = QComboBox(self)
        for key, name in AXIS_NAMES:
            self.axis.addItem(name, key)
        self.axis.setToolTip("The x axis: the step, hours since the run's first point, or the time of day")
        self.axis.currentIndexChanged.connect(lambda _i: self.refresh())
        self.smoothing = QSlider(Qt.Orientation.Horizontal, self)
        self.smoothing.setRange(0, 99)
        self.smoothing.setValue(round(DEFAULT_SMOOTHING * 100))
        self.smoothing.setMaximumWidth(160)
        self.smoothing.setToolTip("TensorBoard's smoothing: an exponential moving average, debiased; "
                                  "the raw line is drawn faint behind")
        self.smoothing_label = QLabel(self)
        self.smoothing.valueChanged.connect(self._smoothing_changed)
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.setToolTip("The points shown (tags and runs) as CSV: run,tag,step,wall_time,value")
        self.export_button.clicked.connect(self.export_dialog)
        controls = QHBoxLayout()
        controls.setContentsMargins(8, 2, 8, 2)
        controls.addWidget(self.filter, 2)
        controls.addSpacing(8)
        controls.addWidget(QLabel("X axis:", self))
        controls.addWidget(self.axis)
        controls.addWidget(QLabel("Smoothing:", self))
        controls.addWidget(self.smoothing, 1)
        controls.addWidget(self.smoothing_label)
        controls.addWidget(self.export_button)
        zoom_hint = QLabel("Zoom: drag, or Ctrl+wheel · everything: double-click", self.bar)
        palette.follow(zoom_hint, lambda: palette.HINT_STYLE)
        self.bar.layout().addWidget(zoom_hint)

        self.legend = QListWidget(self)
        self.legend.setToolTip("The runs: uncheck one to hide it")
        self.legend.setMaximumWidth(220)
        self.legend.itemChanged.connect(self._run_toggled)
        self.scalar_grid = _Grid()
        self.empty = QLabel("", self.scalar_grid)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        palette.follow(self.empty, lambda: palette.HINT_STYLE)

        self.histogram_grid = _Grid()
        self.offset = QCheckBox("Offset", self)
        self.offset.setToolTip("Several steps one above another (older behind), instead of one step")
        self.offset.toggled.connect(self._offset_toggled)
        self.step_slider = QSlider(Qt.Orientation.Horizontal, self)
        self.step_slider.setToolTip("The step whose histograms are shown (the last at or before it)")
        self.step_slider.valueChanged.connect(self._step_chosen)
        self.step_label = QLabel(self)
        histogram_page = QWidget(self)
        hbar = QHBoxLayout()
        hbar.setContentsMargins(8, 2, 8, 2)
        hbar.addWidget(QLabel("Step:", histogram_page))
        hbar.addWidget(self.step_slider, 1)
        hbar.addWidget(self.step_label)
        hbar.addWidget(self.offset)
        hlayout = QVBoxLayout(histogram_page)
        hlayout.setContentsMargins(0, 0, 0, 0)
        hlayout.addLayout(hbar)
        hlayout.addWidget(_scroll(self.histogram_grid), 1)
        self._steps: list[int] = []

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(_scroll(self.scalar_grid), "Scalars")
        self.tabs.addTab(histogram_page, "Histograms")
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.legend)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 1)
        split.setSizes([160, 800])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addLayout(controls)
        layout.addWidget(split, 1)

        self.loader.waiting.connect(lambda: self._set_running(True, "waiting for indexing to finish…"))
        self.loader.started.connect(lambda: self._set_running(True, "reading the log…"))
        self.loader.progress.connect(lambda f: self.bar.progress.setValue(int(f * 1000)))
        self.loader.points_added.connect(self._points_added)
        self.loader.finished.connect(self._finished)
        self.loader.failed.connect(self._failed)
        palette.changes.changed.connect(self._recolor)
        self._smoothing_changed(self.smoothing.value())
        self._set_running(False, "")

    # -- public ------------------------------------------------------------
    def load(self) -> None:
        """Read the log's points (again) on a worker (nothing for a file that is not a log: a hint)."""
        self._started = True
        if not is_log(self.loader.source()):
            self.bar.summary.setText("not a TensorBoard log: its records do not decode as Events "
                                     "(Decode As… changes how they decode)")
            self._hint("Open a TensorBoard log (an event file or a log folder) to plot its scalars.")
            return
        self.scalar_grid.set_plots([])
        self.histogram_grid.set_plots([])
        for plot in [*self._plots.values(), *self._histograms.values()]:
            plot.deleteLater()
        self._plots.clear()
        self._histograms.clear()
        self._smoothing_kept.clear()
        self.loader.load()

    def ensure(self) -> None:
        if not self._started:
            self.load()

    def read_more(self) -> None:
        """The file grew (Follow): read what was appended."""
        if self._started:
            self.loader.read_more()

    def source_idle(self) -> None:
        self.loader.runner.source_idle()

    def mark_stale(self) -> None:
        if self._started:
            self.load()

    def stop(self) -> None:
        self._redraw.stop()
        self.loader.stop()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.ensure()

    def runs(self) -> list[str]:
        return list(self.loader.series.runs)

    def shown_runs(self) -> list[str]:
        return [run for run in self.loader.series.runs if run not in self._hidden_runs]

    def shown_tags(self) -> list[str]:
        return self.loader.series.scalar_tags(self.filter.text())

    def plot(self, tag: str) -> ScalarPlot | None:
        return self._plots.get(tag)

    def histogram_plot(self, tag: str, run: str) -> HistogramPlot | None:
        return self._histograms.get((tag, run))

    def set_run_shown(self, run: str, shown: bool) -> None:
        for k in range(self.legend.count()):
            item = self.legend.item(k)
            if item.data(Qt.ItemDataRole.UserRole) == run:
                item.setCheckState(Qt.CheckState.Checked if shown else Qt.CheckState.Unchecked)

    def smoothing_weight(self) -> float:
        return self.smoothing.value() / 100.0

    def export_csv(self, path: str) -> None:
        """Write the points shown (the tags the filter matches, the runs checked) to ``path`` as
        ``scalars --csv`` writes them, atomically, on a worker; ``exported(path, error)`` says how it went."""
        points = list(self.loader.series.shown_points(self.shown_tags(), self.shown_runs()))  # (as shown now)

        def write() -> str:
            out = io.StringIO()
            write_csv(points, out)
            try:
                atomic_write_bytes(path, out.getvalue().encode("utf-8"))
            except OSError as exc:
                return describe_write_error(path, exc)
            except TFRecordError as exc:
                return str(exc).splitlines()[0]
            return ""

        self.export_button.setEnabled(False)
        call_on_worker(write, self, lambda error: self._exported(path, error),
                       lambda error: self._exported(path, error))

    def _exported(self, path: str, error: str) -> None:
        self.export_button.setEnabled(True)
        self.message.emit(error or f"wrote {os.path.basename(path)}")
        self.exported.emit(path, error)

    def export_dialog(self) -> None:
        where = self.loader.source().path
        folder = "" if "://" in where else where if os.path.isdir(where) else os.path.dirname(where)  # beside a local log
        path, _ = QFileDialog.getSaveFileName(self, "Export Scalars as CSV", os.path.join(folder, "scalars.csv"),
                                              "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    # -- drawing -----------------------------------------------------------
    def refresh(self) -> None:
        """Draw the series as they are now: the legend, a plot per tag shown, the histograms."""
        self._redraw.stop()
        series = self.loader.series
        self._fill_legend()
        colors = self._run_colors()
        axis = self.axis.currentData()
        weight = self.smoothing_weight()
        shown = self.shown_runs()
        plots = []
        for tag in self.shown_tags():
            plot = self._plots.get(tag)
            if plot is None:
                plot = self._plots[tag] = ScalarPlot(tag, self.scalar_grid)
            curves = []
            for run in shown:
                points = series.scalars[tag].get(run)
                if points is None:
                    continue
                curves.append(Curve(run, colors[run], points.xs(axis, series.started[run]), points.values,
                                    self._smoothed(tag, run, points.values, weight), points.steps,
                                    points.wall_times))
            plot.set_curves(curves, axis)
            plots.append(plot)
        self.scalar_grid.set_plots(plots)
        if series.scalars and not plots:
            self._hint("No tag matches the filter.")
        elif not series.scalars and not self.loader.is_active():
            self._hint("No scalars in this log.")
        else:
            self.empty.hide()
        self._refresh_histograms(colors, shown)
        self.redrawn.emit()

    def _smoothed(self, tag: str, run: str, values: list[float], weight: float) -> list[float]:
        """``values`` smoothed by ``weight`` (the values themselves at 0), kept until either changes."""
        if weight <= 0:
            return values
        key = (tag, run)
        kept = self._smoothing_kept.get(key)
        if kept is not None and kept[0] == weight and kept[1] == len(values):
            return kept[2]
        smoothed = smooth(values, weight)
        self._smoothing_kept[key] = (weight, len(values), smoothed)
        return smoothed

    def _hint(self, text: str) -> None:
        self.empty.setText(text)
        self.empty.resize(self.scalar_grid.size().expandedTo(self.empty.sizeHint()))
        self.empty.show()

    def _refresh_histograms(self, colors: dict[str, QColor], shown: list[str]) -> None:
        series = self.loader.series
        plots = []
        steps: set[int] = set()
        for tag in series.histogram_tags(self.filter.text()):
            for run in shown:
                points = series.histograms[tag].get(run)
                if not points:
                    continue
                plot = self._histograms.get((tag, run))
                if plot is None:
                    plot = self._histograms[(tag, run)] = HistogramPlot(f"{tag} · {run}", colors[run],
                                                                        points, self.histogram_grid)
                plot.color = colors[run]
                plot.set_points(points)
                plot.set_offset(self.offset.isChecked())
                steps.update(p.step for p in points)
                plots.append(plot)
        self.histogram_grid.set_plots(plots)
        at_end = not self._steps or self.step_slider.value() >= len(self._steps) - 1
        self._steps = sorted(steps)
        self.step_slider.setRange(0, max(0, len(self._steps) - 1))
        if at_end:
            self.step_slider.setValue(self.step_slider.maximum())
        self._step_chosen(self.step_slider.value())
        self.tabs.setTabEnabled(HISTOGRAMS_TAB, bool(plots) or bool(series.histograms))

    def _run_colors(self) -> dict[str, QColor]:
        series = palette.SERIES
        return {run: series[k % len(series)] for k, run in enumerate(self.loader.series.runs)}

    def _fill_legend(self) -> None:
        runs = self.loader.series.runs
        known = {self.legend.item(k).data(Qt.ItemDataRole.UserRole) for k in range(self.legend.count())}
        colors = self._run_colors()
        self.legend.blockSignals(True)
        for run in runs:
            if run in known:
                continue
            item = QListWidgetItem(run)
            item.setData(Qt.ItemDataRole.UserRole, run)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if run in self._hidden_runs else Qt.CheckState.Checked)
            item.setIcon(_swatch(colors[run]))
            self.legend.addItem(item)
        self.legend.blockSignals(False)

    def _recolor(self, *_) -> None:
        colors = self._run_colors()
        for k in range(self.legend.count()):
            item = self.legend.item(k)
            item.setIcon(_swatch(colors[item.data(Qt.ItemDataRole.UserRole)]))
        self.refresh()

    # -- controls ----------------------------------------------------------
    def _smoothing_changed(self, value: int) -> None:
        self.smoothing_label.setText(f"{value / 100:.2f}")
        self._redraw.start()  # (once the slider rests a moment: a long log takes a while to smooth)

    def _run_toggled(self, item: QListWidgetItem) -> None:
        run = item.data(Qt.ItemDataRole.UserRole)
        if item.checkState() == Qt.CheckState.Checked:
            self._hidden_runs.discard(run)
        else:
            self._hidden_runs.add(run)
        self.refresh()

    def _offset_toggled(self, on: bool) -> None:
        for plot in self.histogram_grid.plots:
            plot.set_offset(on)
        self.step_slider.setEnabled(not on)

    def _step_chosen(self, k: int) -> None:
        if not self._steps:
            self.step_label.setText("")
            return
        step = self._steps[min(k, len(self._steps) - 1)]
        self.step_label.setText(f"{step:,}")
        for plot in self.histogram_grid.plots:
            plot.set_step(step)

    def _points_added(self) -> None:
        if not self._redraw.isActive():  # a long read redraws every READ_REDRAW_MS, not at each batch
            self._redraw.start(READ_REDRAW_MS if self.loader.is_active() else REDRAW_MS)

    # -- the pass --------------------------------------------------------
    def _set_running(self, running: bool, text: str) -> None:
        self.bar.set_running(running)
        self.bar.refresh.setEnabled(not running)
        if running:
            self.bar.progress.setValue(0)
            self.bar.summary.setText(text)

    def _finished(self, cancelled: bool) -> None:
        self._set_running(False, "")
        self.refresh()
        series = self.loader.series
        runs, tags = len(series.runs), len(series.scalars)
        words = [f"{runs} run{'s' if runs != 1 else ''}", f"{tags} scalar tag{'s' if tags != 1 else ''}",
                 f"{len(series.points):,} points"]
        if series.histograms:
            words.append(f"{len(series.histograms)} histogram tag{'s' if len(series.histograms) != 1 else ''}")
        not_events = self.loader.not_events
        if not_events:
            words.append(f"{not_events:,} records not Events, left out")
        if cancelled:
            words.insert(0, "stopped: Refresh reads the log again")
        self.bar.summary.setText(" · ".join(words))
        self.loaded.emit()

    def _failed(self, error: str) -> None:
        self._set_running(False, "")
        self.bar.summary.setText(f"failed: {error}")
        self.loaded.emit()


def _swatch(color: QColor) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(color)
    return QIcon(pixmap)
