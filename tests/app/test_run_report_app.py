"""Run reports in the real main window: File > Open Run Report… reads a report the command line wrote with
``--out`` on a worker and shows it read-only in the app's own views; a double-click opens the file it
names at the record; a file that is no report says so in one line."""
from __future__ import annotations

import json
import os
from collections import Counter

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from app.shell.file_tab import FileTab  # noqa: E402
from app.views.opening_page import OpeningPage  # noqa: E402
from app.views.run_report_view import RunReportView  # noqa: E402
from app.views.stats_panel import NAME_ROLE, PRESENT  # noqa: E402
from tests.codec.test_run_reports import write_reports  # noqa: E402
from tests.gui_helpers import wait_done  # noqa: E402

TIMEOUT = 20000


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return write_reports(tmp_path_factory.mktemp("reports"))


def open_report(window, qtbot, path) -> RunReportView:
    """Open ``path`` through File > Open Run Report… and wait for its tab."""
    with qtbot.waitSignal(window.reports.opened, timeout=TIMEOUT) as opened:
        page = window.reports.open_report(str(path))
        assert isinstance(page, OpeningPage) and window.tabs.currentWidget() is page  # read on a worker
    view = opened.args[0]
    assert window.tabs.currentWidget() is view and window.tabs.indexOf(page) < 0
    assert window.tabs.tabText(window.tabs.currentIndex()) == f"{os.path.basename(path)} (report)"
    header = view.header.text()
    assert "read-only" in header and str(path) in header
    return view


def double_click(qtbot, tree, index) -> None:
    """What a person does: press and release, then the double-click."""
    tree.scrollTo(index)
    pos = tree.visualRect(index).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_the_file_menu_offers_run_reports(window):
    texts = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert "Open Run &Report…" in texts and "Open Run Report from UR&L…" in texts


def test_a_check_report_shows_its_findings_in_the_dataset_check_view(window, qtbot, reports):
    path, printed = reports["check"]
    expected = json.loads(printed)
    view = open_report(window, qtbot, path)
    model = view.check_panel.model
    assert model.records == expected["records"]
    assert [(f.check, f.severity, f.detail) for f in model.findings()] == \
        [(f["check"], f["severity"], f["detail"]) for f in expected["findings"]]
    counts = Counter(f["check"] for f in expected["findings"])
    assert {check: model.count(check) for check in model.checks()} == counts
    assert not view.check_panel.run_button.isVisible()  # a report is read, not run

    records = window.reports._records[view]
    leak = next(f for f in expected["findings"] if f["check"] == "split_leak")
    assert view.check_panel.select_finding("split_leak", 0)
    qtbot.waitUntil(lambda: not records.is_reading() and len(view.check_panel.compare.records()) == 2,
                    timeout=TIMEOUT)
    shown = view.check_panel.compare.records()
    assert [r.title for r in shown] == [f"{os.path.basename(r['path'])} #{r['index']}" for r in leak["records"]]
    assert all(r.decoded is not None and r.error is None for r in shown)  # read from the files it names

    first = leak["records"][0]
    tree = view.check_panel.tree
    double_click(qtbot, tree, tree.currentIndex())
    tab = window.current_tab()
    assert isinstance(tab, FileTab) and tab.path == first["path"]
    wait_done(qtbot, tab)
    assert tab.current_record() == first["index"]

    window.close_tab(window.tabs.indexOf(view))  # the files read for the compare pane are let go
    assert window.reports.views() == [] and records._files == {}


def test_a_report_being_read_can_be_cancelled(window, qtbot, reports):
    opened = []
    window.reports.opened.connect(opened.append)
    page = window.reports.open_report(str(reports["check"][0]))
    page.cancel_button.click()
    assert window.tabs.indexOf(page) < 0
    qtbot.waitUntil(lambda: not window.reports._workers, timeout=TIMEOUT)  # its answer came, and was dropped
    assert opened == [] and window.tabs.count() == 0


def test_a_stats_report_shows_the_statistics_view(window, qtbot, reports):
    path, printed = reports["stats"]
    expected = json.loads(printed)
    view = open_report(window, qtbot, path)
    model = view.stats_model()
    rows = {}
    for g in range(model.rowCount()):
        head = model.index(g, 0)
        for r in range(model.rowCount(head)):
            rows[model.index(r, 0, head).data(NAME_ROLE)] = model.index(r, PRESENT, head).data()
    assert sorted(rows) == sorted(expected["features"])
    for name, feature in expected["features"].items():
        assert rows[name].splitlines()[0] == f"{feature['present']:,}"
    assert f"{expected['records']:,} records" in view.header.text()


def test_the_file_docks_step_aside_for_a_report_and_come_back_with_the_file(window, qtbot, reports):
    from tests.gui_helpers import open_done

    tab = open_done(window, qtbot, "flowers_jpeg.tfrecord")
    window.qa.show_statistics()
    assert window.qa.stats_dock.isVisible()
    view = open_report(window, qtbot, reports["stats"][0])
    assert not window.qa.stats_dock.isVisible()  # the report gets the whole window
    assert view.height() > window.height() // 2
    window.tabs.setCurrentWidget(tab)
    assert window.qa.stats_dock.isVisible()
    assert window.qa.stats_dock.stack.currentWidget() is tab.qa.stats_panel()


def test_a_schema_report_shows_the_feature_spec(window, qtbot, reports):
    path, printed = reports["schema"]
    expected = json.loads(printed)
    view = open_report(window, qtbot, path)
    assert json.loads(view.json.text.toPlainText()) == expected
    python = view.python.text.toPlainText()
    for name, spec in expected["features"].items():
        assert f'"{name}": tf.io.{spec["type"]}({spec["shape"]}, dtype=tf.{spec["dtype"]}),' in python


def test_a_verify_report_lists_files_and_opens_one_at_its_problem(window, qtbot, reports):
    path, printed = reports["verify"]
    lines = [json.loads(line) for line in printed.splitlines()]
    view = open_report(window, qtbot, path)
    model = view.files_model()
    assert model.rowCount() == len(lines)
    for row, line in enumerate(lines):
        cells = [model.index(row, c).data() for c in range(4)]
        assert cells == [os.path.basename(line["path"]), f"{line['records']:,}", f"{line['ok']:,}",
                         f"{len(line['problems']):,}"]
        assert model.rowCount(model.index(row, 0)) == len(line["problems"])
    damaged = next(k for k, line in enumerate(lines) if line["problems"] and line["problems"][0]["index"])
    problem = lines[damaged]["problems"][0]
    index = model.index(0, 0, model.index(damaged, 0))
    tree = view.files_tree
    double_click(qtbot, tree, index)
    tab = window.current_tab()
    assert isinstance(tab, FileTab) and tab.path == lines[damaged]["path"]
    wait_done(qtbot, tab)
    assert tab.current_record() == problem["index"]


def test_a_repair_report_lists_kept_and_dropped_records(window, qtbot, reports):
    path, _ = reports["repair"]
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    view = open_report(window, qtbot, path)
    model = view.files_model()
    assert model.rowCount() == len(entries)
    for row, entry in enumerate(entries):
        assert [model.index(row, c).data() for c in range(5)] == \
            [os.path.basename(entry["source"]), f"{entry['kept']:,}", f"{len(entry['dropped']):,}",
             f"{len(entry['included_damaged']):,}", entry["output"]]
        children = [model.index(k, 0, model.index(row, 0)).data() for k in range(model.rowCount(model.index(row, 0)))]
        assert [c.split(" dropped")[0] for c in children] == [f"record {i:,}" for i, _ in entry["dropped"]]


def test_a_file_that_is_no_report_says_so_in_one_line(window, qtbot, tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("these are not the reports you are looking for\n")
    with qtbot.waitSignal(window.reports.failed, timeout=TIMEOUT) as failed:
        window.reports.open_report(str(bad))
    message = failed.args[0]
    assert "\n" not in message and str(bad) in message and "not JSON" in message
    assert window.message_bar.isVisible() and "Traceback" not in window.message_bar.text()
    assert window.tabs.count() == 0  # its page went

    with qtbot.waitSignal(window.reports.failed, timeout=TIMEOUT) as failed:
        window.reports.open_report(str(tmp_path / "missing.json"))
    assert "no such file" in failed.args[0] and "\n" not in failed.args[0]


def test_a_dropped_report_opens_as_a_report_and_its_tab_closes(window, qtbot, reports):
    path, _ = reports["verify"]
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    with qtbot.waitSignal(window.reports.opened, timeout=TIMEOUT) as opened:
        window.dropEvent(QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                    Qt.KeyboardModifier.NoModifier))
    view = opened.args[0]
    assert view.report.kind == "verify" and window.file_tabs() == []
    assert window.reports.open_report(str(path)) is view  # open already: shown, not read again
    window.close_tab(window.tabs.indexOf(view))
    assert window.tabs.count() == 0 and window.reports.views() == []


@pytest.mark.network
def test_a_report_opens_from_a_url(window, qtbot, reports):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from tests.remote_servers import range_server

    with range_server(reports["stats"][0].parent) as srv:
        view = open_report(window, qtbot, srv.url_for("stats.json"))
        assert view.report.kind == "stats" and view.report.path == srv.url_for("stats.json")
        with qtbot.waitSignal(window.reports.failed, timeout=TIMEOUT) as failed:
            window.reports.open_report(srv.url_for("gone.json"))
        assert "not found" in failed.args[0] and "\n" not in failed.args[0]

