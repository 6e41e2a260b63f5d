"""Shard sets through the real main window: a dataset of several files opened as one tab."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from app.__main__ import build_window, parse_args  # noqa: E402
from app.models.shard_set_table_model import SHARD_HEADER  # noqa: E402
from app.shell.main_window import MainWindow  # noqa: E402
from app.shell.shard_set_tab import READ_ONLY_REASON, ShardSetTab  # noqa: E402
from app.views.stats_panel import CHART, TOP_ROLE  # noqa: E402
from codec.sources.shard_set import MAX_OPEN  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES, example  # noqa: E402
from tests.gui_helpers import wait_done  # noqa: E402

SHARDS = FIXTURES / "shards"
TIMEOUT = 20000


def open_set(window: MainWindow, qtbot, paths) -> ShardSetTab:
    """Open ``paths`` as one dataset (window fixture from conftest) and wait until its passes end."""
    tab = window.open_set([str(p) for p in paths])
    assert isinstance(tab, ShardSetTab), window.message_bar.text()
    return wait_done(qtbot, tab)


def shard_column(tab: ShardSetTab) -> int:
    model = tab.model
    return next(c for c in range(model.columnCount())
                if model.headerData(c, Qt.Orientation.Horizontal) == SHARD_HEADER)




def test_a_folder_opens_as_one_tab_numbered_across_shards(window, qtbot):
    tab = open_set(window, qtbot, [SHARDS])
    assert window.tabs.count() == 1
    assert window.tabs.tabText(0) == "shards"
    assert tab.model.rowCount() == 100
    assert window.records_label.text() == "100 records · shards 4 of 4 indexed"
    col = shard_column(tab)
    assert tab.table.horizontalHeader().visualIndex(col) == 1  # right after "#"
    assert [tab.model.index(r, col).data() for r in (0, 24, 25, 99)] == [
        "train-00000-of-00004.tfrecord", "train-00000-of-00004.tfrecord",
        "train-00001-of-00004.tfrecord", "train-00003-of-00004.tfrecord"]

    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(25)
    loaded = tab.detail.loaded()
    assert loaded.info.index == 25
    assert loaded.framed.offset == 0  # record 0 of its shard: the hex view shows the shard's bytes
    raw = (SHARDS / "train-00001-of-00004.tfrecord").read_bytes()
    assert loaded.framed.header + loaded.framed.data + loaded.framed.footer == raw[:loaded.framed.size]
    assert tab.detail.hex.model.index(0, 0).data() == "0"
    header = tab.detail.header_text()
    assert header.startswith("Record 25 ·") and "record 0 of train-00001-of-00004.tfrecord, at offset 0" in header


def test_filter_stats_verify_and_export_cover_the_whole_set(window, qtbot, tmp_path):
    tab = open_set(window, qtbot, sorted(SHARDS.iterdir()))
    assert window.tabs.tabText(0) == "train-*-of-00004.tfrecord"
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run("shard == 2")
    assert bar.count_text().startswith("25 of 100")
    assert tab.proxy.record_at(0) == 50

    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
            assert bar.run("")
    assert panel.stats_json()["records"] == 100
    assert panel.feature_row("shard")[CHART].data(TOP_ROLE) == ((0, 25), (1, 25), (2, 25), (3, 25))

    with qtbot.waitSignal(tab.indexing_finished, timeout=TIMEOUT):
        window.verify_current()
    assert tab.state().verified and window.problems_label.text() == "✓ all CRCs ok"

    dialog = window.edit_actions.export_current()
    dialog.scope_all.setChecked(True)
    dialog.set_format("tfrecord")
    out = tmp_path / "all.tfrecord"
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None and blocker.args[0].records == 100, dialog.message
    dialog.close()
    with TFRecordFile(str(out)) as written:
        assert list(written.build_index()) == list(tab.session.source)


def test_a_set_is_read_only_with_a_reason(window, qtbot):
    tab = open_set(window, qtbot, [SHARDS])
    assert tab.editing.read_only_reason() == READ_ONLY_REASON
    assert tab.editing.target is None
    tab.select_record(3)
    assert not tab.editing.delete_selected()
    assert window.statusBar().currentMessage() == READ_ONLY_REASON
    assert tab.model.rowCount() == 100


def test_an_unusable_file_is_listed_and_skipped(window, qtbot, tmp_path):
    shutil.copy(SHARDS / "train-00000-of-00004.tfrecord", tmp_path / "a.tfrecord")
    shutil.copy(FIXTURES / "not_a_tfrecord.jpg", tmp_path / "b.tfrecord")
    with qtbot.waitSignal(window.tabs.currentChanged, timeout=TIMEOUT):
        window.open_files([str(tmp_path)])
    tab = wait_done(qtbot, window.current_tab())
    assert tab.model.rowCount() == 25
    lines = window.message_bar.text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skipped b.tfrecord: not a TFRecord file")
    # Named like a shard, it is taken without reading (a folder of 10,000 shards opens at once),
    # then found unusable when its turn comes: listed in the Shards list, with its reason.
    assert window.records_label.text() == "25 records · shards 2 of 2 indexed"
    assert tab.shards_panel.model.data(tab.shards_panel.model.index(1, 2)) == "unusable"


def test_a_named_file_that_is_not_a_tfrecord_is_skipped(window, qtbot):
    tab = open_set(window, qtbot, [SHARDS / "train-00002-of-00004.tfrecord", FIXTURES / "not_a_tfrecord.jpg"])
    assert tab.model.rowCount() == 25
    assert window.message_bar.text().startswith("skipped not_a_tfrecord.jpg: not a TFRecord file")
    assert window.records_label.text() == "25 records · shards 2 of 2 indexed"


@pytest.mark.slow
def test_many_shards_keep_few_files_open(window, qtbot, tmp_path):
    for k in range(200):
        write_records(tmp_path / f"part-{k:05d}-of-00200.tfrecord", [example(shard=k, idx=j) for j in range(3)])
    tab = window.open_set([str(tmp_path / "part-*-of-00200.tfrecord")])
    s = tab.shard_set
    assert s.open_files <= 1  # opening reads nothing yet
    peak, labels = [], []
    tab.state_changed.connect(lambda: peak.append(s.open_files))
    tab.state_changed.connect(lambda: labels.append(window.records_label.text()))
    wait_done(qtbot, tab)
    assert len(s.shards) == 200 and tab.model.rowCount() == 600
    assert max(peak) <= MAX_OPEN and s.open_files <= MAX_OPEN
    assert any(" · shards " in t and not t.endswith("200 of 200 indexed") for t in labels)  # in order, as it goes
    assert labels[-1] == "600 records · shards 200 of 200 indexed"
    assert window.tabs.tabText(0) == "part-*-of-00200.tfrecord"
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(599)
    assert s.open_files <= MAX_OPEN
    with qtbot.waitSignal(tab.indexing_finished, timeout=TIMEOUT):
        window.verify_current()
    assert s.open_files <= MAX_OPEN and tab.state().verified


@pytest.mark.slow
def test_a_shard_clicked_in_the_list_is_indexed_first_and_shown(window, qtbot, tmp_path, monkeypatch):
    import app.workers.worker as worker_module
    from app.models.shard_list_model import INDEXED, INDEXING, NAME, NEXT, RECORDS, STATE

    for k in range(200):
        write_records(tmp_path / f"part-{k:05d}-of-00200.tfrecord", [example(shard=k, idx=j) for j in range(3)])
    # Hold the worker at its first yield (as a long repaint would) while the shard is clicked.
    monkeypatch.setattr(worker_module, "PAINT_WAIT_MAX", 30.0)
    with worker_module.PAINT_GATE.painting():
        tab = window.open_set([str(tmp_path / "part-*-of-00200.tfrecord")])
        panel = tab.shards_panel
        assert panel.model.rowCount() == 200 and panel.isVisible()
        view = panel.view
        view.scrollTo(panel.model.index(150, 0))
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(panel.model.index(150, 0)).center())
        # next in line, or (a second worker free at that moment) already being indexed: ahead of 1..149 either way
        assert panel.model.data(panel.model.index(150, STATE)) in (NEXT, INDEXING)
        if panel.model.data(panel.model.index(150, STATE)) == NEXT:
            assert window.statusBar().currentMessage() == "indexing part-00150-of-00200.tfrecord next"
    s = tab.shard_set
    # Shown as soon as shard 150 is indexed, long before the shards before it (the first
    # record, selected when the first rows came, is shown before that).
    qtbot.waitUntil(lambda: s.is_numbered(150) and tab.current_record() == s.record_start(150), timeout=TIMEOUT)
    first_numbered = [k for k in range(200) if s.is_numbered(k)]
    assert 150 in first_numbered and len(first_numbered) < 100  # it did not wait for the 150 before it
    wait_done(qtbot, tab)
    # Shards before it came in later; the selection moved down with its record.
    assert tab.model.rowCount() == 600
    assert tab.current_record() == 450 and s.record_start(150) == 450
    assert tab.model.data(tab.model.index(450, shard_column(tab))) == "part-00150-of-00200.tfrecord"
    assert panel.model.data(panel.model.index(150, STATE)) == INDEXED
    assert panel.model.data(panel.model.index(150, RECORDS)) == "3"
    assert panel.model.data(panel.model.index(150, NAME)) == "00150"  # what tells the shards apart
    assert panel.summary.text() == "part-*-of-00200.tfrecord\n200 shards · 200 indexed · 600 records"
    # An indexed shard clicked shows its first record at once.
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.show_shard(7)
    assert tab.current_record() == 21

def test_command_line_and_drop(qtbot, tmp_path):
    assert parse_args(["--set", "a", "b"]).set and not parse_args(["a", "b"]).set
    files = sorted(str(p) for p in SHARDS.iterdir())

    w = build_window(parse_args(["--set", *files]))
    qtbot.addWidget(w)
    assert w.tabs.count() == 1 and wait_done(qtbot, w.current_tab()).model.rowCount() == 100

    w = build_window(parse_args(files[:2]))
    qtbot.addWidget(w)
    assert w.tabs.count() == 2 and not isinstance(w.current_tab(), ShardSetTab)

    w = build_window(parse_args([str(SHARDS / "train-*-of-00004.tfrecord")]))
    qtbot.addWidget(w)
    assert w.tabs.count() == 1 and wait_done(qtbot, w.current_tab()).model.rowCount() == 100

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(SHARDS))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    w.dropEvent(event)
    assert w.tabs.count() == 2 and wait_done(qtbot, w.current_tab()).model.rowCount() == 100


def test_damage_in_one_shard_is_found_in_the_set(window, qtbot):
    tab = open_set(window, qtbot, [SHARDS / "train-00000-of-00004.tfrecord", FIXTURES / "garbage_middle.tfrecord",
                                   FIXTURES / "corrupt_data_crc.tfrecord"])
    # garbage_middle loses its records 10..12 (27 left); corrupt_data_crc's record 5 fails its data CRC
    assert tab.model.rowCount() == 25 + 27 + 30
    assert window.tabs.tabText(0) == "train-00000-of-00004.tfrecord +2"
    assert window.problems_label.text() == "⚠ 2 problems"
    assert tab.model.flagged_rows().tolist() == [25 + 10, 25 + 27 + 5]  # after the skipped bytes; the bad CRC
    tab.corruption.set_panel_visible(True)
    model = tab.corruption.panel.model
    tips = [model.index(r, 0).data(Qt.ItemDataRole.ToolTipRole) for r in range(model.rowCount())]
    assert "at byte 725 (0x2d5) of garbage_middle.tfrecord" in tips[0] and "next record found is #35" in tips[0]
    assert "at byte 350 (0x15e) of corrupt_data_crc.tfrecord" in tips[1]
    assert tab.next_damaged() == 35 and tab.next_damaged() == 57
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.select_record(0)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        tab.corruption.show_problem(tab.shard_set.problems[1])
    assert tab.current_record() == 57
    assert "record 5 of corrupt_data_crc.tfrecord, at offset 350" in tab.detail.header_text()
    assert window.damage.salvage_current() is None and "open the damaged shard" in window.statusBar().currentMessage()
