"""The Dataset Check panel through the real main window: run, findings by check, compare, filter, export, edit."""
from __future__ import annotations

import csv
import json
import os
import shutil
import threading
from collections import Counter

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.models.findings_model import SEVERITY_ROLE, FindingsModel, check_title  # noqa: E402
from app.shell.shard_set_tab import READ_ONLY_REASON, ShardSetTab  # noqa: E402
from app.shell.tab_check import TabCheck, records_list  # noqa: E402
from codec.decode.example_proto import Example  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done, wait_done  # noqa: E402

DOCTOR = FIXTURES / "doctor"
TIMEOUT = 60000


def manifest() -> dict:
    return json.loads((DOCTOR / "MANIFEST.json").read_text())


def run_check(window, qtbot) -> TabCheck:
    """Show the Dataset Check of the current tab (which starts it) and wait for its findings."""
    tab = window.current_tab()
    check = window.checks.check_for(tab)
    with qtbot.waitSignal(check.runner.finished, timeout=TIMEOUT) as blocker:
        assert window.checks.show_check() is check
    _paths, report, cancelled = blocker.args
    assert not cancelled and check.report is report
    return check


def open_doctor(window, qtbot) -> ShardSetTab:
    tab = window.open_set([str(DOCTOR)])
    assert isinstance(tab, ShardSetTab), window.message_bar.text()
    return wait_done(qtbot, tab)


def refs(finding) -> set[tuple[str, int]]:
    return {(os.path.basename(r.path), r.index) for r in finding.records}


def shard_starts(tab: ShardSetTab) -> dict[str, int]:
    """Each shard's first record number in the set, from the shards' own record counts (read by the codec)."""
    starts, total = {}, 0
    for shard in tab.shard_set.shards:
        starts[os.path.basename(shard.path)] = total
        with TFRecordFile(shard.path) as f:
            total += len(f.build_index())
    return starts


def leak_finding_index(check: TabCheck, planted: dict) -> int:
    """Which split_leak finding names the planted leak's records."""
    wanted = {(r["path"], r["index"]) for r in planted["records"]}
    found = [k for k, f in enumerate(f for f in check.panel.model.findings() if f.check == "split_leak")
             if wanted <= refs(f)]
    assert found, f"no split_leak finding names {wanted}"
    return found[0]


# -- the findings model and the list, without a window ------------------------------------------------
def test_findings_are_grouped_by_check_in_the_codecs_order_with_counts(qtbot):
    from codec.doctor import CHECKS, CheckReport, Finding, RecordRef

    a, b = RecordRef("/d/train-0.tfrecord", 3), RecordRef("/d/eval-0.tfrecord", 1)
    c = RecordRef("/d/train-0.tfrecord", 9)
    report = CheckReport(40, [Finding("bbox", "error", [a], "box 0: xmin 0.7 > xmax 0.3"),
                              Finding("split_leak", "error", [a, b], "same image"),
                              Finding("near_duplicate", "warning", [a, c], "similar"),
                              Finding("split_leak", "warning", [c, b], "similar image")])
    model = FindingsModel()
    model.set_report(report, CHECKS)
    assert model.checks() == [k for k in CHECKS if k in ("bbox", "split_leak", "near_duplicate")]
    leaks = model.check_index("split_leak")
    assert leaks.data() == f"{check_title('split_leak')} (2)"
    assert leaks.siblingAtColumn(1).data() == "3 records"  # a, b and c, each once
    assert leaks.data(SEVERITY_ROLE) == "error"  # its worst
    assert model.check_index("near_duplicate").data(SEVERITY_ROLE) == "warning"
    first = model.finding_index("split_leak", 0)
    assert model.finding(first) is report.findings[1]
    assert first.siblingAtColumn(1).data() == "train-0 #3, eval-0 #1"
    assert model.findings_at(leaks) == [report.findings[1], report.findings[3]]
    assert model.summary() == "4 findings (2 errors, 2 warnings) in 40 records"

    rows = list(csv.reader(records_list(model.findings_at(leaks), "csv").decode().splitlines()))
    assert rows == [["path", "index", "check"], [a.path, "3", "split_leak"], [b.path, "1", "split_leak"],
                    [c.path, "9", "split_leak"]]
    assert json.loads(records_list([report.findings[0]], "json")) == [{"path": a.path, "index": 3, "check": "bbox"}]


def test_the_panel_lists_every_planted_check_with_its_count(window, qtbot):
    open_doctor(window, qtbot)
    check = run_check(window, qtbot)
    model = check.panel.model
    assert window.checks.dock.isVisible()
    assert window.checks.dock.stack.currentWidget() is check.panel

    # a near-duplicate pair across train and eval is listed once, as a near-duplicate that says it leaks
    planted = manifest()["planted"]
    near = [f for f in model.findings() if f.check == "near_duplicate" and "a leak between splits" in f.detail]
    assert near and not any(refs(f) & refs(g) for f in near for g in model.findings() if g.check == "split_leak")
    for kind, n in Counter(p["check"] for p in planted).items():
        assert model.count(kind) >= n, f"{kind}: {model.count(kind)} findings for {n} planted"
        row = model.check_index(kind)
        assert row.isValid()
        assert row.data().endswith(f"({model.count(kind):,})")  # the check's row shows its count
        assert model.rowCount(row) == model.count(kind)
    for p in planted:
        wanted = {(r["path"], r["index"]) for r in p["records"]}
        assert any(wanted <= refs(f) for f in model.findings() if f.check == p["check"]), p
    # every finding is under its own check's row, each check once
    assert len(model.checks()) == len(set(model.checks()))
    assert sum(model.rowCount(model.index(r, 0)) for r in range(model.rowCount())) == len(check.report.findings)
    assert str(len(check.report.findings)) in check.panel.summary.text()

    assert check.panel.others_button.isHidden()  # a set checks all of its shards
    # a shard set is read-only: the edits say why they are off
    assert check.panel.select_finding("exact_duplicate", 0)
    for action in (check.panel.delete_duplicates_action, check.panel.delete_eval_action):
        assert not action.isEnabled()
        assert action.toolTip() == action.statusTip() == f"{action.text()}: {READ_ONLY_REASON}"


def test_a_leak_shows_its_records_side_by_side_and_becomes_a_filter_and_a_list(window, qtbot, monkeypatch,
                                                                              tmp_path):
    tab = open_doctor(window, qtbot)
    check = run_check(window, qtbot)
    panel = check.panel
    leak = next(p for p in manifest()["planted"] if p["check"] == "split_leak")
    k = leak_finding_index(check, leak)
    index = panel.model.finding_index("split_leak", k)
    panel.tree.scrollTo(index)
    with qtbot.waitSignal(panel.compare.shown, timeout=TIMEOUT):  # a click on the finding
        qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=panel.tree.visualRect(index).center())
    finding = panel.current_findings()[0]
    assert finding is panel.model.finding(index)
    shown = panel.compare.records()
    assert len(shown) == len(finding.records) >= 2
    examples = []
    for ref, record, preview in zip(finding.records, shown, panel.compare.columns()):
        assert os.path.basename(ref.path) in record.title and record.error is None
        assert preview.isVisible() and preview.image_count() >= 1
        assert preview.image(0) is not None and not preview.image(0).isNull()
        with TFRecordFile(ref.path) as f:
            example = Example.FromString(f.build_index().read(ref.index).data)
        examples.append(example.features.feature)
        xmin = example.features.feature["image/object/bbox/xmin"].float_list.value
        assert preview.box_count(0) == len(xmin)  # the boxes drawn are the record's
    # the highlighted features are those protobuf says differ
    keys = set().union(*(set(e) for e in examples))
    differ = {key for key in keys if any((key in e) != (key in examples[0]) or
                                         (key in e and e[key] != examples[0][key]) for e in examples)}
    assert panel.compare.differing() == differ

    # a double-click goes to the finding's first record; Show These Records: the table shows exactly
    # the leak's records (set-wide numbers)
    starts = shard_starts(tab)
    first = finding.records[0]
    qtbot.mouseDClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=panel.tree.visualRect(index).center())
    assert tab.current_record() == starts[os.path.basename(first.path)] + first.index
    expected = sorted(starts[os.path.basename(r.path)] + r.index for r in finding.records)
    with qtbot.waitSignal(tab.qa.filter_bar.filter_applied, timeout=TIMEOUT):
        panel.show_action.trigger()
    assert tab.proxy.matches().tolist() == expected
    assert tab.proxy.rowCount() == len(expected)

    # a whole check's row: every leak's records
    assert panel.select_finding("split_leak", -1)
    leaks = [f for f in panel.model.findings() if f.check == "split_leak"]
    with qtbot.waitSignal(tab.qa.filter_bar.filter_applied, timeout=TIMEOUT):
        panel.show_action.trigger()
    every = sorted({starts[os.path.basename(r.path)] + r.index for f in leaks for r in f.records})
    assert tab.proxy.matches().tolist() == every
    assert tab.qa.filter_bar.text().startswith("index in [")
    # too many records to spell out in an expression: they are the filter's matches themselves
    monkeypatch.setattr("app.shell.tab_check.FILTER_EXPRESSION_MAX", 3)
    tab.qa.filter_bar.clear()
    panel.show_action.trigger()
    assert tab.proxy.matches().tolist() == every
    assert tab.qa.filter_bar.count_text() == f"{len(every)} of {tab.proxy.total()} records match"
    assert tab.qa.filter_bar.text() == ""

    # Export List…: the records as CSV, then JSON
    out = tmp_path / "leaks.csv"
    monkeypatch.setattr("app.shell.tab_check.QFileDialog.getSaveFileName",
                        lambda *a, **k: (str(out), "CSV (*.csv)"))
    panel.export_action.trigger()
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert {(r["path"], int(r["index"])) for r in rows} == {(r.path, r.index) for f in leaks for r in f.records}
    assert {r["check"] for r in rows} == {"split_leak"}
    out = tmp_path / "leaks.json"
    monkeypatch.setattr("app.shell.tab_check.QFileDialog.getSaveFileName",
                        lambda *a, **k: (str(out), "JSON list (*.json)"))
    panel.export_action.trigger()
    items = json.loads(out.read_text())
    assert sorted((i["path"], i["index"]) for i in items) == sorted({(r.path, r.index) for f in leaks
                                                                     for r in f.records})
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary file, renamed over


def test_deleting_the_duplicates_is_one_undoable_edit(window, qtbot, tmp_path):
    with TFRecordFile(str(DOCTOR / "train-00001-of-00003.tfrecord")) as f:
        f.build_index()
        records = [f.read(i).data for i in range(6)]
    records.append(records[1])  # record 6: an exact copy of record 1
    path = tmp_path / "dups.tfrecord"
    write_records(path, records)
    tab = open_done(window, qtbot, str(path))
    check = run_check(window, qtbot)
    panel = check.panel
    dups = [f for f in panel.model.findings() if f.check == "exact_duplicate"]
    assert [sorted(r.index for r in f.records) for f in dups] == [[1, 6]]

    assert panel.select_finding("exact_duplicate", 0)
    assert panel.delete_duplicates_action.isEnabled()
    assert not panel.delete_eval_action.isEnabled()  # no leak in one file
    stack = tab.session.stack
    before = stack.count()
    panel.delete_duplicates_action.trigger()
    assert stack.count() == before + 1  # one command
    assert tab.model.rowCount() == 6
    assert [tab.session.records.read(i).data for i in range(6)] == records[:6]  # the first copy stays
    assert not panel.delete_duplicates_action.isEnabled()  # nothing left to delete
    # the deleted copy is still shown, read from the file, and said to be deleted
    shown = panel.compare.records()
    assert [r.note for r in shown] == [None, "deleted by an unsaved edit"]

    window.edit_actions.undo_action.trigger()
    assert tab.model.rowCount() == 7
    assert tab.session.records.read(6).data == records[1]
    assert panel.delete_duplicates_action.isEnabled()


def test_an_eval_file_checked_with_its_train_split_loses_its_leaked_records_in_one_edit(window, qtbot, tmp_path):
    eval_copy = tmp_path / "eval-00000-of-00001.tfrecord"
    shutil.copyfile(DOCTOR / "eval-00000-of-00001.tfrecord", eval_copy)
    tab = open_done(window, qtbot, str(eval_copy))
    check = window.checks.check_for(tab)
    assert not check.panel.others_button.isHidden()  # one file: other files can be checked with it
    check.set_others(sorted(str(p) for p in DOCTOR.glob("train-*")))
    check = run_check(window, qtbot)
    panel = check.panel
    planted = {r["index"] for p in manifest()["planted"] if p["check"] == "split_leak"
               for r in p["records"] if r["path"].startswith("eval-")}
    leaks = [f for f in panel.model.findings() if f.check == "split_leak"]
    in_eval = {r.index for f in leaks for r in f.records if os.path.basename(r.path) == eval_copy.name}
    assert planted <= in_eval
    assert all(any(os.path.basename(r.path).startswith("train-") for r in f.records) for f in leaks)

    # the train side of a leak is read from its own file to be compared
    k = leak_finding_index(check, next(p for p in manifest()["planted"] if p["check"] == "split_leak"))
    with qtbot.waitSignal(panel.compare.shown, timeout=TIMEOUT):
        assert panel.select_finding("split_leak", k)
    notes = {os.path.basename(r.title.split(" #")[0]): r.note for r in panel.compare.records()}
    assert notes == {eval_copy.name: None, "train-00000-of-00003.tfrecord": "in a file checked with this one"}
    assert all(p.image(0) is not None for p in panel.compare.columns())

    assert panel.select_finding("split_leak", -1)  # every leak
    assert panel.delete_eval_action.isEnabled() and not panel.delete_duplicates_action.isEnabled()
    stack = tab.session.stack
    before = stack.count()
    panel.delete_eval_action.trigger()
    assert stack.count() == before + 1
    with TFRecordFile(str(eval_copy)) as f:
        total = len(f.build_index())
    assert tab.model.rowCount() == total - len(in_eval)
    with TFRecordFile(str(eval_copy)) as f:
        f.build_index()
        assert [tab.session.records.read(i).data for i in range(tab.model.rowCount())] == \
            [f.read(i).data for i in range(len(f)) if i not in in_eval]
    window.edit_actions.undo_action.trigger()
    assert tab.model.rowCount() == total


def test_cancel_stops_the_run_and_shows_no_findings(window, qtbot, monkeypatch):
    import codec.doctor

    real = codec.doctor.check_iter
    closed = threading.Event()

    def held(paths, options):
        """The real check, held after its first progress until the panel closes it."""
        gen = real(paths, options)
        try:
            yield next(gen)
            while True:
                yield codec.doctor.CheckProgress("held", 0, 1)
        finally:
            gen.close()
            closed.set()

    monkeypatch.setattr(codec.doctor, "check_iter", held)
    open_doctor(window, qtbot)
    check = window.checks.check_for(window.current_tab())
    with qtbot.waitSignal(check.runner.progress, timeout=TIMEOUT):
        window.checks.show_check()
    assert check.is_running() and check.panel.cancel_button.isVisible()
    with qtbot.waitSignal(check.runner.finished, timeout=TIMEOUT) as blocker:
        check.panel.cancel_button.click()
    assert blocker.args[2] is True  # cancelled
    assert closed.is_set()  # the codec's generator was closed
    assert not check.is_running() and check.report is None
    assert check.panel.model.rowCount() == 0
    assert check.panel.summary.text().startswith("stopped")
    assert not check.panel.cancel_button.isVisible() and check.panel.run_button.isEnabled()

    # closing the tab while a check runs stops it too
    closed.clear()
    with qtbot.waitSignal(check.runner.progress, timeout=TIMEOUT):
        check.panel.run_button.click()
    window.close_current()
    assert closed.is_set() and not check.runner.is_running()
    assert window.tabs.count() == 0 and window.checks.current_check() is None


def _compare(panel, qtbot, check: str, k: int = 0) -> None:
    with qtbot.waitSignal(panel.compare.shown, timeout=TIMEOUT):
        assert panel.select_finding(check, k)


def test_the_doctors_folder_opens_quietly_and_the_compare_keeps_its_place(window, qtbot):
    window.resize(1600, 1000)
    open_doctor(window, qtbot)
    # the label map (and MANIFEST.json) beside the shards are the dataset's, not stray files
    assert "label_map.pbtxt" not in window.message_bar.text()
    assert "skipped" not in window.message_bar.text()
    check = run_check(window, qtbot)
    panel = check.panel
    _compare(panel, qtbot, "split_leak")
    assert panel.compare.table.columnCount() == 1 + len(panel.compare.records()) >= 3
    handle = panel.splitter.handle(1)  # the user drags the divider 200 px left
    middle = handle.rect().center()
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=middle)
    qtbot.mouseMove(handle, middle - QPoint(200, 0))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=middle - QPoint(200, 0))
    sizes = panel.splitter.sizes()
    assert panel._split_sizes == sizes
    # a finding of one record: the table has its column only, not the last finding's second one
    _compare(panel, qtbot, "bbox")
    assert len(panel.compare.records()) == 1
    assert panel.compare.table.columnCount() == 2
    assert panel.compare.table.headerItem().text(1) == panel.compare.records()[0].title
    QApplication.processEvents()  # layouts settle on the event loop: the divider must not have moved
    assert panel.splitter.sizes() == sizes
    _compare(panel, qtbot, "split_leak")
    QApplication.processEvents()
    assert panel.splitter.sizes() == sizes
