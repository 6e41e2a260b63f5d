"""The Scalars view of a TensorBoard log, through the real main window (offscreen)."""
from __future__ import annotations

import fnmatch
import os
import shutil

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from codec.cli.main import main
from codec.format.framing import RecordStatus
from tests.builders import FIXTURES
from tests.codec.test_scalars import simple, write_log
from tests.gui_helpers import open_done

LOGS = FIXTURES / "formats" / "logs"
TRAIN = next((LOGS / "train").iterdir())


def scalars_of(window, qtbot, tab):
    """The tab's Scalars view, once its points are read."""
    assert window.qa.scalars_dock.isVisible()  # shown by itself for a log
    view = tab.qa.scalars_view()
    assert window.qa.scalars_dock.stack.currentWidget() is view
    qtbot.waitUntil(lambda: bool(view.loader.series.points) and not view.loader.is_active(), timeout=20000)
    return view


def cut_short(path: str, out: str) -> bytes:
    """Copy the event file ``path`` to ``out`` with its last record cut in half (a writer at work);
    return the bytes left out."""
    data = open(path, "rb").read()
    at = 0
    while True:
        length = int.from_bytes(data[at:at + 8], "little")
        if at + 16 + length >= len(data):
            break
        at += 16 + length
    keep = at + 12 + length // 2
    with open(out, "wb") as f:
        f.write(data[:keep])
    return data[keep:]


def test_the_fixture_log_folder_plots_each_tag_with_both_runs(window, qtbot):
    tab = open_done(window, qtbot, str(LOGS))
    view = scalars_of(window, qtbot, tab)
    assert view.shown_tags() == ["loss", "metrics/accuracy"]
    assert view.runs() == ["train", "eval"]
    for tag in view.shown_tags():
        plot = view.plot(tag)
        assert plot.isVisible()
        assert [c.run for c in plot.curves] == ["train", "eval"]
        assert plot.curves[0].color != plot.curves[1].color
    view.filter.setText("metrics/*")
    assert view.shown_tags() == ["metrics/accuracy"] and not view.plot("loss").isVisible()
    view.set_run_shown("eval", False)
    assert [c.run for c in view.plot("metrics/accuracy").curves] == ["train"]
    assert "80 points" in view.bar.summary.text() and "1 histogram tag" in view.bar.summary.text()
    view.bar.refresh.click()  # read again: the same plots, new ones
    qtbot.waitUntil(lambda: not view.loader.is_active() and view.plot("metrics/accuracy") is not None, timeout=20000)
    assert [c.run for c in view.plot("metrics/accuracy").curves] == ["train"]  # eval is still hidden


def test_smoothing_changes_the_drawn_series(window, qtbot):
    view = scalars_of(window, qtbot, open_done(window, qtbot, str(LOGS)))
    with qtbot.waitSignal(view.redrawn):
        view.smoothing.setValue(0)
    raw = view.plot("loss").curves[0]
    assert raw.smoothed == raw.values
    with qtbot.waitSignal(view.redrawn):
        view.smoothing.setValue(90)
    smoothed = view.plot("loss").curves[0]
    assert smoothed.values == raw.values and smoothed.smoothed != raw.values
    assert smoothed.smoothed[0] == raw.values[0]  # debiased: the first point is its own value
    assert smoothed.smoothed[-1] > raw.values[-1]  # a falling loss: the average lags above it


def test_export_csv_equals_the_scalars_command(window, qtbot, tmp_path, capsys):
    view = scalars_of(window, qtbot, open_done(window, qtbot, str(LOGS)))
    for pattern, tag in (("", None), ("loss", "loss")):
        view.filter.setText(pattern)
        out = tmp_path / "out" / "shown.csv"
        out.parent.mkdir(exist_ok=True)
        with qtbot.waitSignal(view.exported, timeout=10000) as done:
            view.export_csv(str(out))
        assert done.args == [str(out), ""]
        capsys.readouterr()
        assert main(["scalars", "--csv", str(LOGS), *(["--tag", tag] if tag else [])]) == 0
        assert out.read_text() == capsys.readouterr().out
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["shown.csv"]  # no temporary file left beside it
    with qtbot.waitSignal(view.exported, timeout=10000) as failed:
        view.export_csv(str(tmp_path / "missing" / "x.csv"))
    assert failed.args[1] and "missing" in failed.args[1] and "\n" not in failed.args[1]


def test_zoom_and_hover(window, qtbot):
    view = scalars_of(window, qtbot, open_done(window, qtbot, str(LOGS)))
    plot = view.plot("loss")
    whole = plot.full_range()
    area = plot.frame().area
    qtbot.mousePress(plot, Qt.MouseButton.LeftButton, pos=QPoint(int(area.left()) + 10, int(area.top()) + 10))
    qtbot.mouseMove(plot, QPoint(int(area.center().x()), int(area.center().y())))
    qtbot.mouseRelease(plot, Qt.MouseButton.LeftButton, pos=QPoint(int(area.center().x()), int(area.center().y())))
    assert plot.view is not None and plot.view[1] < whole[1]
    qtbot.mouseDClick(plot, Qt.MouseButton.LeftButton, pos=QPoint(int(area.center().x()), int(area.center().y())))
    assert plot.view is None
    center = QPointF(area.center())
    for modifiers in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ControlModifier):
        wheel = QWheelEvent(center, QPointF(plot.mapToGlobal(center.toPoint())), QPoint(0, 0), QPoint(0, 120),
                            Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(plot, wheel)
        if modifiers == Qt.KeyboardModifier.NoModifier:
            assert plot.view is None  # the wheel alone scrolls the grid
    assert plot.view is not None and plot.view[1] - plot.view[0] < whole[1] - whole[0]
    qtbot.mouseDClick(plot, Qt.MouseButton.LeftButton, pos=center.toPoint())
    frame = plot.frame()
    curve = plot.curves[0]
    hit = plot.nearest(QPointF(frame.px(curve.xs[5]), frame.py(curve.smoothed[5])))
    assert hit == (0, 5)
    text = plot.hover_text(*hit)
    assert "train" in text and f"step {curve.steps[5]}" in text and "smoothed" in text


def test_histograms_at_a_step_and_offset(window, qtbot):
    view = scalars_of(window, qtbot, open_done(window, qtbot, str(LOGS)))
    view.tabs.setCurrentIndex(1)
    plot = view.histogram_plot("weights", "train")
    assert plot is not None and plot.isVisible()
    first = view._steps[0]
    view.step_slider.setValue(0)
    assert [h.step for h in plot.shown()] == [first]
    at_step = plot.grab().toImage()
    view.offset.setChecked(True)
    assert len(plot.shown()) > 1 and [h.step for h in plot.shown()] == sorted(h.step for h in plot.shown())
    assert plot.grab().toImage() != at_step  # (pytest-qt fails the test if painting raised)


def test_an_event_file_being_written_opens_without_damage_and_follow_adds_its_events(window, qtbot, tmp_path):
    path = str(tmp_path / TRAIN.name)
    rest = cut_short(str(TRAIN), path)
    tab = open_done(window, qtbot, path)
    qtbot.waitUntil(lambda: tab.follow.active and tab.state().writing, timeout=10000)
    source = tab.session.source
    assert source.problems == [] and source.index.status(len(source) - 1) is RecordStatus.WRITING
    assert not tab.corruption.panel_visible() and window.message_bar.text() == ""
    view = scalars_of(window, qtbot, tab)
    before = len(view.loader.series.points)
    with open(path, "ab") as f:  # the writer goes on: the record finished, and a new TF1 point
        f.write(rest)
    appended = write_log(tmp_path / "more", "events.out.tfevents.9.x", [simple(10_000, 2e9, loss=0.01)])
    with open(path, "ab") as f:
        f.write(open(appended, "rb").read())
    qtbot.waitUntil(lambda: len(view.loader.series.points) >= before + 1 and view.plot("loss") is not None
                    and view.plot("loss").curves[0].steps[-1] == 10_000, timeout=10000)
    assert source.problems == []


def test_a_log_folder_whose_file_is_being_written_has_no_damage(window, qtbot, tmp_path):
    shutil.copytree(LOGS / "eval", tmp_path / "logs" / "eval")
    os.makedirs(tmp_path / "logs" / "train")
    cut_short(str(TRAIN), str(tmp_path / "logs" / "train" / TRAIN.name))
    tab = open_done(window, qtbot, str(tmp_path / "logs"))
    qtbot.waitUntil(lambda: tab.session.source.problem_count() == 0, timeout=10000)
    assert tab.state().problems == 0
    view = scalars_of(window, qtbot, tab)
    assert view.runs() == ["train", "eval"]


def test_a_log_folder_is_named_as_itself_and_its_files_open_on_their_own(window, qtbot):
    folder = open_done(window, qtbot, str(LOGS))
    assert folder.title == "logs" and folder.path == str(LOGS)
    single = open_done(window, qtbot, str(TRAIN))
    assert single is not folder and len(single.session.source) == 50
    assert [c.run for c in scalars_of(window, qtbot, single).plot("loss").curves] == ["train"]


def test_the_open_dialog_shows_event_files():
    from app.shell.opening import file_filters

    globs = file_filters().split(";;")[0].split("(")[1].rstrip(")").split()
    assert any(fnmatch.fnmatch(TRAIN.name, g) for g in globs)


def test_a_log_folder_dropped_on_the_window_opens_with_its_scalars(window, qtbot):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(LOGS))])
    event = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, data, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    tab = window.current_tab()
    assert tab is not None and tab.title == "logs"
    qtbot.waitUntil(lambda: not tab.is_running() and tab.state().phase == "done", timeout=20000)
    assert scalars_of(window, qtbot, tab).runs() == ["train", "eval"]


def test_a_file_that_is_not_a_log_gets_a_hint_not_a_pass(window, qtbot):
    tab = open_done(window, qtbot, "structured.tfrecord")
    assert not window.qa.scalars_dock.isVisible()  # not shown by itself
    window.qa.scalars_action.trigger()  # View > Scalars
    view = tab.qa.scalars_view()
    assert view.isVisible() and not view.loader.is_active()
    assert view.bar.summary.text().startswith("not a TensorBoard log")
