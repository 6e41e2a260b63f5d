"""Debugging damaged files through the real main window: Problems panel, corruption map, salvage."""
from __future__ import annotations

import hashlib
import os
import shutil

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from app.dialogs.salvage_dialog import SalvageDialog, default_output  # noqa: E402
from app.models.problem_list_model import ProblemColumn, ProblemListModel, expected_found, problem_title  # noqa: E402
from app.models.record_table_model import Column  # noqa: E402
from app.models.records_owner import HeldRecords  # noqa: E402
from app.shell.corruption_tools import merge_marks  # noqa: E402
from app.shell.file_tab import FileTab  # noqa: E402
from app.shell.main_window import MainWindow  # noqa: E402
from app.views.corruption_map import CorruptionMap, Mark  # noqa: E402
from app.views.record_detail import HEX_TAB  # noqa: E402
from codec.format.framing import Compression, Problem, ProblemKind, encode_record  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.app.tab_parts import highlighted  # noqa: E402
from tests.gui_helpers import open_done, wait_done  # noqa: E402


def cell(tab: FileTab, row: int, col: int) -> str:
    model = tab.corruption.model
    return model.index(row, col).data()


def click_problem(qtbot, tab: FileTab, row: int) -> Problem:
    """Click row ``row`` of the Problems panel and wait until its record and bytes are shown."""
    table = tab.corruption.panel.table
    rect = table.visualRect(table.model().index(row, ProblemColumn.KIND))
    with qtbot.waitSignal(tab.corruption.problem_shown, timeout=10000) as shown:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    return shown.args[0]


def salvage(window: MainWindow, qtbot, out: str, *, include_damaged: bool = False,
            compression: Compression | None = None) -> SalvageDialog:
    window.damage.salvage_action.trigger()
    dialog = window.findChild(SalvageDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.path_edit.setText(out)
    dialog.include_box.setChecked(include_damaged)
    if compression is not None:
        dialog.compression_box.setCurrentIndex(dialog.compression_box.findData(compression.value))
    with qtbot.waitSignal(dialog.salvage_finished, timeout=30000) as done:
        dialog.salvage_button.click()
    assert done.args[0] is not None, dialog.error
    return dialog


def sha256s(path: str) -> list[str]:
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index(verify=True)
        assert f.problems == []
        return [hashlib.sha256(f[i]).hexdigest() for i in range(len(f))]


# -- the test -------------------------------------------------------------
def test_garbage_middle_found_clicked_and_salvaged(window, qtbot, fixture_file, manifest, tmp_path):
    """Open garbage_middle, see the damage where MANIFEST says, click it, salvage, reopen clean."""
    entry = manifest["garbage_middle.tfrecord"]["corruption"]
    tab = open_done(window, qtbot, fixture_file("garbage_middle.tfrecord"))
    tools = tab.corruption
    assert tools.panel.isVisible() and window.damage.problems_action.isChecked()
    assert tools.model.rowCount() == 1
    assert cell(tab, 0, ProblemColumn.OFFSET) == f"{entry['offset']:,}"
    assert cell(tab, 0, ProblemColumn.RECORD) == "—"  # no record is left at the damage
    assert cell(tab, 0, ProblemColumn.KIND) == "length CRC, 237 bytes skipped"
    assert cell(tab, 0, ProblemColumn.EXPECTED).startswith("stored 0x")
    assert cell(tab, 0, ProblemColumn.FOUND).startswith("computed 0x")
    assert "1 problem: 1 length CRC" in tools.panel.summary.text()
    # the map marks it at its byte position
    (mark,) = tools.map.marks()
    assert mark.start == entry["offset"] and mark.end == entry["offset"] + 237 and not mark.recovered

    problem = click_problem(qtbot, tab, 0)
    assert problem.offset == entry["offset"]
    # the nearest record: the first one found again after the damage
    nearest = tab.session.source.find_record(entry["offset"]) + 1
    assert nearest == 10 and tab.current_record() == nearest
    assert tab.table.selectionModel().isRowSelected(nearest)
    # the hex view shows the skipped bytes, all of them highlighted
    assert tab.detail.tabs.currentIndex() == HEX_TAB
    assert highlighted(tab.detail) == list(range(725, 725 + 237))
    assert "Damaged bytes 725–961" in tab.detail.hex.summary_text()
    # a click on the record in the table brings its own bytes back
    with qtbot.waitSignal(tab.detail.record_shown, timeout=5000):
        rect = tab.table.visualRect(tab.table.model().index(nearest, Column.INDEX))  # unfiltered: row = record
        qtbot.mouseClick(tab.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert tab.detail.hex.model.record.offset == tab.session.source.index.offset(nearest) == 962

    out = str(tmp_path / "salvaged.tfrecord")
    dialog = salvage(window, qtbot, out)
    assert dialog.result.report.kept == 27 and dialog.result.report.dropped == []
    assert "Kept <b>27</b> records, dropped <b>0</b>" in dialog.status.text()
    assert "237 bytes belonged to no record" in dialog.status.text()
    assert dialog.open_button.isVisible()
    dialog.open_button.click()
    again = window.current_tab()
    assert again is not None and again.path == out
    wait_done(qtbot, again)
    assert again.model.rowCount() == 27 and again.state().problems == 0 and again.state().verified
    assert again.corruption.model.rowCount() == 0 and not again.corruption.panel.isVisible()
    assert sha256s(out) == entry["intact_sha256"]


# -- problems in records: hex highlights ----------------------------------------
def test_data_crc_problem_highlights_data_and_footer(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    assert tab.corruption.model.rowCount() == 1
    assert cell(tab, 0, ProblemColumn.RECORD) == "5"
    assert cell(tab, 0, ProblemColumn.KIND) == "data CRC"
    p = click_problem(qtbot, tab, 0)
    assert p.kind is ProblemKind.DATA_CRC and tab.current_record() == 5
    info = tab.session.source.record_info(5)
    assert tab.detail.hex.model.record.offset == info.offset
    assert highlighted(tab.detail) == list(range(info.offset + 12, info.end))  # data + footer, not the header
    assert "MISMATCH" in tab.detail.hex.summary_text()
    # the map marks the whole damaged record
    (mark,) = tab.corruption.map.marks()
    assert (mark.start, mark.end) == (info.offset, tab.session.source.index.offset(6))


def test_truncated_record_shows_claimed_length_and_bytes_left(window, qtbot, fixture_file, manifest):
    tab = open_done(window, qtbot, fixture_file("truncated.tfrecord"))
    offset = manifest["truncated.tfrecord"]["corruption"]["offset"]
    assert cell(tab, 0, ProblemColumn.OFFSET) == f"{offset:,}"
    assert cell(tab, 0, ProblemColumn.RECORD) == "20"
    assert cell(tab, 0, ProblemColumn.KIND) == "truncated"
    assert cell(tab, 0, ProblemColumn.EXPECTED) == "76 bytes (72 data + CRC)"
    assert cell(tab, 0, ProblemColumn.FOUND) == "36 bytes left"
    assert tab.corruption.panel.table.isColumnHidden(ProblemColumn.COMPRESSED)  # plain file
    click_problem(qtbot, tab, 0)
    assert tab.current_record() == 20
    assert highlighted(tab.detail) == list(range(offset, tab.session.source.file_size))


def test_gzip_problem_says_where_the_compressed_stream_broke(window, qtbot, fixture_file):
    path = fixture_file("truncated.tfrecord.gz")
    tab = open_done(window, qtbot, path)
    panel = tab.corruption.panel
    assert not panel.table.isColumnHidden(ProblemColumn.COMPRESSED)
    (p,) = tab.corruption.model.problems()
    assert p.compressed_offset == os.path.getsize(path) == 932
    assert cell(tab, 0, ProblemColumn.COMPRESSED) == "932"
    assert cell(tab, 0, ProblemColumn.RECORD) == "61"
    tip = tab.corruption.model.index(0, ProblemColumn.KIND).data(Qt.ItemDataRole.ToolTipRole)
    assert "compressed stream broke at byte 932" in tip and "decompressed stream" in tip
    click_problem(qtbot, tab, 0)
    assert tab.current_record() == 61
    assert highlighted(tab.detail) == list(range(p.offset, p.offset + p.size))
    # the map is drawn over the decompressed stream, whose size is found off the GUI thread
    qtbot.waitUntil(lambda: tab.corruption.map.extent == p.offset + p.size, timeout=5000)


def test_a_broken_gzip_member_opens_with_the_members_after_it(window, qtbot, tmp_path):
    """Damage in the second of three GZIP members: the tab lists the first and third members'
    records, the Problems panel names where the stream broke, and a record after it shows."""
    import gzip

    records = [b"record %03d " % k + bytes(range(k % 40)) * 2 for k in range(60)]
    members = [gzip.compress(b"".join(encode_record(r) for r in records[a:a + 20]), mtime=0) for a in (0, 20, 40)]
    broken = bytearray(b"".join(members))
    broken[len(members[0]) + 40] ^= 0xFF
    path = tmp_path / "members.tfrecord.gz"
    path.write_bytes(bytes(broken))
    tab = open_done(window, qtbot, str(path))
    source = tab.session.source
    assert source.compression is Compression.GZIP
    good = [i for i in range(len(source)) if source.index.status(i).data_intact]
    assert [source.read(i).data for i in good][:20] == records[:20]
    assert [source.read(i).data for i in good][-20:] == records[40:]
    (broke,) = [p for p in tab.corruption.model.problems() if p.compressed_offset is not None]
    assert len(members[0]) < broke.compressed_offset < len(members[0]) + len(members[1])
    assert not tab.corruption.panel.table.isColumnHidden(ProblemColumn.COMPRESSED)
    last = len(source) - 1
    with qtbot.waitSignal(tab.detail.record_shown, timeout=5000):
        tab.select_record(last)
    assert tab.detail.hex.model.record.offset == source.index.offset(last)


def test_a_record_hidden_in_a_damaged_records_span_joins_the_table_after_verify(window, qtbot, tmp_path,
                                                                               monkeypatch):
    """Indexed, its rows shown, then verified: the verify pass finds a record the index pass
    stepped over (inside a damaged record's claimed span), and the table shows the new rows."""
    from tests.codec.test_lossless_damage import hidden_record_file

    monkeypatch.setattr(FileTab.__init__, "__kwdefaults__", {"auto_verify_bytes": 0})  # index only
    path, records = hidden_record_file(tmp_path)
    tab = open_done(window, qtbot, path)
    source = tab.session.source

    def shown() -> list[str]:
        return [tab.model.index(row, Column.OFFSET).data() for row in range(tab.model.rowCount())]

    before = shown()
    assert not source.verified and len(before) == 3
    assert tab.verify()
    wait_done(qtbot, tab)
    assert source.verified and len(source) == 4
    assert shown() == [f"{source.index.offset(i):,}" for i in range(4)] != before + [shown()[-1]]
    with qtbot.waitSignal(tab.detail.record_shown, timeout=5000):
        tab.select_record(2)
    assert source.read(2).data == records[2]
    assert tab.detail.hex.model.record.offset == source.index.offset(2)


def test_two_problems_at_one_record_each_show_their_own_bytes(window, qtbot, tmp_path):
    """A bad data CRC in the last record and a cut header after it: each click shows its own bytes."""
    path = tmp_path / "two.tfrecord"
    write_records(path, [b"record %d " % i + b"x" * 40 for i in range(8)])
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        last = f.record_info(7)
    blob = bytearray(path.read_bytes())
    blob[last.offset + 20] ^= 0x01  # a bit of record 7's data
    blob += b"\x07" * 5  # the start of a header, cut short
    path.write_bytes(bytes(blob))
    tab = open_done(window, qtbot, str(path))
    kinds = [(p.index, p.kind) for p in tab.corruption.model.problems()]
    assert kinds == [(7, ProblemKind.DATA_CRC), (None, ProblemKind.TRUNCATED)]
    assert cell(tab, 1, ProblemColumn.KIND) == "truncated: 5 bytes of a header"
    assert (cell(tab, 1, ProblemColumn.EXPECTED), cell(tab, 1, ProblemColumn.FOUND)) == ("12-byte header",
                                                                                          "5 bytes left")
    click_problem(qtbot, tab, 1)
    assert tab.current_record() == 7 and highlighted(tab.detail) == list(range(last.end, last.end + 5))
    click_problem(qtbot, tab, 0)  # the same record: its own bytes come back
    assert tab.current_record() == 7 and tab.detail.hex.model.record.offset == last.offset
    assert highlighted(tab.detail) == list(range(last.offset + 12, last.end))
    assert len(tab.corruption.map.marks()) == 2


# -- the corruption map ---------------------------------------------------------
def test_map_click_selects_the_nearest_record(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("garbage_middle.tfrecord"))
    strip = tab.corruption.map
    assert strip.isVisible() and abs(strip.height() - tab.table.height()) <= 2
    x = strip.width() // 2
    # a click far from the damage selects the record drawn there
    target = tab.session.source.index.offset(20)
    y = strip.y_for_offset(target + 5)
    qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert tab.current_record() == tab.session.source.find_record(strip.offset_at(y))
    assert abs(tab.current_record() - 20) <= 1
    # a click on the red mark shows the problem (the record after it, bytes highlighted)
    with qtbot.waitSignal(tab.corruption.problem_shown, timeout=5000):
        qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(x, strip.y_for_offset(725)))
    assert tab.current_record() == 10
    assert tab.corruption.panel.table.currentIndex().row() == 0
    # inside a gap (not on a mark: test the rule directly) the next record is chosen
    assert tab.corruption.select_near(800) == 10
    assert "length CRC, 237 bytes skipped at byte 725" in strip.tooltip_at(strip.y_for_offset(725))


def test_the_gaps_follow_the_problem_list_to_a_new_view_of_the_file(window, qtbot, fixture_file):
    # When the first refresh after indexing comes once editing has begun (a quick pass on a
    # busy machine), the panel's model switches to the edited view and loads the problems in
    # one go: the skipped bytes must still be known, so a click inside them picks the next record.
    tab = open_done(window, qtbot, fixture_file("garbage_middle.tfrecord"))
    tools = tab.corruption
    assert tools.records is not tab.session.source  # the edited view (editing begins once indexed)
    tools.model.records_replaced()  # as the session says when editing begins, before that first refresh
    tools._gaps, tools._gap_starts = [], []
    tools.refresh()
    assert tools.model.records is tools.records and tools.model.rowCount() == len(tools.records.problems)
    assert tools.select_near(800) == 10


def test_map_shows_the_table_viewport_and_current_record(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("structured.tfrecord"))
    strip = tab.corruption.map
    assert strip.marks() == [] and not tab.corruption.panel.isVisible()
    assert strip.extent == tab.session.source.file_size
    with qtbot.waitSignal(tab.detail.record_shown, timeout=5000):
        tab.select_record(50)
    assert strip._current[0] == tab.session.source.index.offset(50)
    assert strip._view is not None and strip._view[0] <= tab.session.source.index.offset(50) < strip._view[1]


def test_merge_marks_keeps_thousands_of_problems_drawable():
    marks = [Mark(i * 10, i * 10 + 2, f"p{i}") for i in range(10_000)]
    merged = merge_marks(marks, 100_000, resolution=100)
    assert len(merged) < 200
    assert merged[0].start == 0 and merged[-1].end == marks[-1].end
    assert merge_marks(marks[:5], 100_000, resolution=100) == marks[:5]


def test_map_geometry_round_trips(qtbot):
    strip = CorruptionMap()
    qtbot.addWidget(strip)
    strip.resize(16, 402)
    strip.set_extent(1_000_000)
    for offset in (0, 1234, 500_000, 999_999):
        assert abs(strip.offset_at(strip.y_for_offset(offset)) - offset) <= 1_000_000 / 398 + 1
    assert strip.offset_at(-50) == 0 and strip.offset_at(10_000) == 999_999


# -- verify ------------------------------------------------------------------------
def test_verify_action_refills_the_panel_and_marks_records(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    tools = tab.corruption
    resets = []
    tools.model.modelReset.connect(lambda: resets.append(True))
    with qtbot.waitSignal(tab.indexing_finished, timeout=10000):
        window.verify_action.trigger()
    assert resets  # the codec replaced its list: the panel followed
    assert [(p.index, p.kind) for p in tools.model.problems()] == [(5, ProblemKind.DATA_CRC)]
    assert tab.model.index(5, Column.STATUS).data() == "data CRC bad"
    assert "every data CRC checked" in tools.panel.summary.text()


def test_verify_can_be_cancelled(window, qtbot, tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(path, (b"r%06d" % i for i in range(100_000)))
    tab = open_done(window, qtbot, str(path))
    with qtbot.waitSignal(tab.indexing_finished, timeout=30000):
        window.verify_action.trigger()
        window.cancel_action.trigger()
    assert tab.state().phase == "cancelled"
    assert "stopped" in tab.corruption.panel.summary.text() or not tab.corruption.panel.isVisible()


def test_problems_panel_action_hides_and_shows(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_length.tfrecord"))
    assert tab.corruption.panel.isVisible() and window.damage.problems_action.isChecked()
    tab.corruption.panel.close_button.click()
    assert not tab.corruption.panel.isVisible() and not window.damage.problems_action.isChecked()
    window.damage.problems_action.trigger()
    assert tab.corruption.panel.isVisible() and window.damage.problems_action.isChecked()
    clean = open_done(window, qtbot, os.path.join(os.path.dirname(tab.path), "structured.tfrecord"))
    assert not window.damage.problems_action.isChecked() and not clean.corruption.panel.isVisible()
    window.tabs.setCurrentWidget(tab)
    assert window.damage.problems_action.isChecked()


def test_problems_follow_the_rows_after_records_are_deleted(window, qtbot, fixture_file):
    tab = open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    if getattr(tab, "editing", None) is None or not tab.editing.editable:
        pytest.skip("editing is not available")
    tab.editing.select_records([0, 1])
    assert tab.editing.delete_selected()  # in memory only: nothing is saved
    assert tab.corruption.model.rowCount() == 1 and cell(tab, 0, ProblemColumn.RECORD) == "3"
    click_problem(qtbot, tab, 0)
    assert tab.current_record() == 3
    assert highlighted(tab.detail)[0] == 350 + 12  # still the file's bytes of the damaged record
    tab.editing.stack.undo()  # unmodified again: closing the window asks nothing
    assert tab.corruption.model.rowCount() == 1 and cell(tab, 0, ProblemColumn.RECORD) == "5"


# -- salvage -----------------------------------------------------------------------
def test_salvage_can_include_damaged_records(window, qtbot, fixture_file, manifest, tmp_path):
    open_done(window, qtbot, fixture_file("corrupt_data_crc.tfrecord"))
    out = str(tmp_path / "with_damaged.tfrecord.gz")
    dialog = salvage(window, qtbot, out, include_damaged=True, compression=Compression.GZIP)
    report = dialog.result.report
    assert report.kept == 29 and report.dropped == [] and report.included_damaged == [(5, "data_crc")]
    assert "Included 1 damaged record on request: #5 (data crc)" in dialog.status.text()
    with TFRecordFile(out, use_cache=False) as f:
        assert f.compression is Compression.GZIP
    hashes = sha256s(out)  # the damaged record came with fresh CRCs: the copy reads clean
    intact = manifest["corrupt_data_crc.tfrecord"]["corruption"]["intact_sha256"]
    assert len(hashes) == 30 and hashes[:5] + hashes[6:] == intact
    # without the box, record 5 is dropped and said so
    dialog.include_box.setChecked(False)
    dialog.path_edit.setText(str(tmp_path / "without.tfrecord"))
    with qtbot.waitSignal(dialog.salvage_finished, timeout=30000):
        dialog.salvage_button.click()
    assert dialog.result.report.dropped == [(5, "data_crc")]
    assert "Dropped: #5 (data crc)" in dialog.status.text()
    assert sha256s(str(tmp_path / "without.tfrecord")) == intact


def test_salvage_cancel_leaves_nothing_behind(window, qtbot, tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(path, (b"r%06d" % i for i in range(200_000)))
    open_done(window, qtbot, str(path))
    window.damage.salvage_action.trigger()
    dialog = window.findChild(SalvageDialog)
    out = tmp_path / "out.tfrecord"
    dialog.path_edit.setText(str(out))
    with qtbot.waitSignal(dialog.salvage_finished, timeout=30000) as done:
        assert dialog.start()
        assert dialog.close_button.text() == "Cancel"
        dialog.close_button.click()
    assert done.args[0] is None and "Cancelled" in dialog.status.text()
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert dialog.isVisible() and dialog.salvage_button.isEnabled()


def test_salvage_refuses_to_replace_its_source(window, qtbot, fixture_file, tmp_path):
    src = tmp_path / "copy.tfrecord"
    shutil.copyfile(fixture_file("garbage_middle.tfrecord"), src)
    open_done(window, qtbot, str(src))
    window.damage.salvage_action.trigger()
    dialog = window.findChild(SalvageDialog)
    assert dialog.path_edit.text() == str(tmp_path / "copy.salvaged.tfrecord")
    dialog.path_edit.setText(str(src))
    assert not dialog.start()
    assert "must not replace" in dialog.error


def test_default_output_names():
    assert default_output("/d/a.tfrecord", Compression.NONE) == "/d/a.salvaged.tfrecord"
    assert default_output("/d/a.tfrecord.gz", Compression.GZIP) == "/d/a.salvaged.tfrecord.gz"
    assert default_output("/d/a.tfrecord.gz", Compression.NONE) == "/d/a.salvaged.tfrecord"
    assert default_output("/d/shard-0001", Compression.ZLIB) == "/d/shard-0001.salvaged.tfrecord.zlib"


# -- the model alone ------------------------------------------------------------
class _FakeFile:
    """Just what ProblemListModel reads of a TFRecordFile."""

    compression = Compression.NONE

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def find_record(self, offset: int) -> int:
        return offset // 100 - 1

    def __len__(self) -> int:
        return 10


def test_problem_model_appends_rows_and_resets_when_the_list_is_replaced(qapp):
    f = _FakeFile()
    model = ProblemListModel(HeldRecords(f))
    inserted, resets = [], []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    model.modelReset.connect(lambda: resets.append(True))
    a = Problem(None, 100, ProblemKind.GARBAGE, "header claims too much", size=40)
    b = Problem(3, 300, ProblemKind.DATA_CRC, "data CRC", expected=1, found=2)
    f.problems.append(a)
    assert model.sync() and inserted == [(0, 0)]
    f.problems.append(b)
    assert model.sync() and inserted == [(0, 0), (1, 1)] and not resets
    assert not model.sync()
    f.problems = [b]  # verify drops data CRC problems and starts again
    assert model.sync() and resets == [True] and model.problems() == [b]
    assert model.index(0, ProblemColumn.EXPECTED).data() == "stored 0x00000001"
    assert model.index(0, ProblemColumn.FOUND).data() == "computed 0x00000002"


def test_problem_words():
    assert problem_title(Problem(None, 0, ProblemKind.GARBAGE, "", size=12)) == "garbage run of 12 bytes"
    assert problem_title(Problem(4, 0, ProblemKind.LENGTH_CRC, "", size=12)) == "length CRC (recovered)"
    assert problem_title(Problem(None, 0, ProblemKind.DECOMPRESS, "")) == "decompression error"
    assert expected_found(Problem(None, 0, ProblemKind.TRUNCATED, "", size=5)) == ("12-byte header", "5 bytes left")
