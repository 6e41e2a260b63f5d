"""The record table of a URL reads its rows on a background loader, never on the GUI thread:
placeholders at once, the rows as they come (equal to the local file's), one line when the
network is gone, nothing left running when the tab closes. A local file's table is read as
before. Through the real main window, against loopback servers started here."""
from __future__ import annotations

import os
import threading

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QTimer  # noqa: E402

from app.models.labels import KIND_TEXT  # noqa: E402
from app.models.record_table_model import LOADING_TEXT, Column, RecordTableModel  # noqa: E402
from app.models.records_owner import HeldRecords  # noqa: E402
from app.models.shard_set_table_model import ShardSetTableModel  # noqa: E402
from app.workers import row_fetcher, row_loader  # noqa: E402
from app.workers.row_fetcher import RowFetcher  # noqa: E402
from app.workers.row_loader import RowLoader  # noqa: E402
from codec.decode.decoder import RecordKind  # noqa: E402
from codec.sources.shard_set import ShardSet  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES, example  # noqa: E402
from tests.gui_helpers import open_done, open_remote  # noqa: E402
from tests.remote_servers import copy_into, range_server  # noqa: E402

TIMEOUT = 20000
RECORDS = 1500  # of about 4 KB: 6 MB, more than the remote block cache holds (16 x 256 KiB)
NAME = "many.tfrecord"
SHOWN = 40  # rows a test looks at, at the end of the file: in blocks no earlier read fetched


def numbered(i: int) -> bytes:
    return example(label=i % 7, name=f"item-{i}", pad=bytes([i % 251]) * 4000)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A folder holding a 6 MB file of Examples and a small reference fixture."""
    folder = tmp_path_factory.mktemp("rows")
    write_records(folder / NAME, [numbered(i) for i in range(RECORDS)])
    copy_into(folder, FIXTURES / "structured.tfrecord", "structured.tfrecord")
    return folder



def remote_model(cls, source):
    """A table model over a remote ``source``, its rows read in the background as a tab does."""
    model = cls(HeldRecords(source))
    model.fetch_with(RowFetcher(model.row_job, model))
    return model


def cells(model, rows: range) -> list[list]:
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in rows]


def settled(qtbot, model) -> None:
    """Wait until the first rows (the samples) and every row asked so far have come back."""
    qtbot.waitUntil(lambda: bool(model.sample_keys()) and model.loading_rows() == 0, timeout=TIMEOUT)


@pytest.mark.network
def test_a_slow_urls_rows_come_without_waiting_and_equal_the_local_files(window, qtbot, served):
    local = open_done(window, qtbot, os.fspath(served / NAME))
    with range_server(served, latency=0.2) as slow:
        tab = open_remote(window, qtbot, slow.url_for(NAME))
        model = tab.model
        assert model.rowCount() == local.model.rowCount() == RECORDS
        settled(qtbot, model)  # the rows on screen and the samples the columns are chosen from
        # the feature columns were chosen once the first rows came from the background
        assert model.sample_keys() == local.model.sample_keys() == ["label", "name", "pad"]
        assert model.feature_columns() and set(model.feature_columns()) <= {"label", "name", "pad"}
        model.set_feature_columns(local.model.feature_columns())
        settled(qtbot, model)

        far = range(RECORDS - SHOWN, RECORDS)
        before = slow.stats.requests
        shown = cells(model, far)
        assert slow.stats.requests == before  # no read on this thread: the rows are asked for, not read
        assert all(row[Column.SIZE] == row[Column.KIND] == LOADING_TEXT for row in shown)
        assert all(row[Column.STATUS] == "ok" and row[Column.INDEX] == f"{r:,}" for r, row in zip(far, shown))
        assert model.loading_rows() == SHOWN  # asked once each, sent as one batch on the next turn

        ticks = []
        timer = QTimer()
        timer.timeout.connect(lambda: ticks.append(1))
        timer.start(10)
        tab.select_record(RECORDS - 1)  # scrolled to the end: the view asks for those rows too
        qtbot.waitUntil(lambda: all(row[Column.KIND] != LOADING_TEXT for row in cells(model, far)), timeout=TIMEOUT)
        timer.stop()
        assert slow.stats.requests > before and len(ticks) >= 5  # the event loop ran while they were read
    assert cells(model, far) == cells(local.model, far)
    assert cells(model, far)[0][Column.KIND] == "Example"


@pytest.mark.network
def test_the_selected_record_of_a_slow_url_loads_in_the_background(window, qtbot, served):
    with range_server(served, latency=0.2) as slow:
        tab = open_remote(window, qtbot, slow.url_for(NAME))
        settled(qtbot, tab.model)
        last = RECORDS - 1
        with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT) as shown:
            slow.hold()  # a read on this thread would wait here, and then find the record loaded
            tab.select_record(last)
            assert tab.detail.loaded() is None and "loading" in tab.detail.header_text()
            slow.release()
    assert shown.args == [last]
    loaded = tab.detail.loaded()
    assert loaded.info.index == last and loaded.info.length == len(numbered(last))
    assert tab.detail.current_record() == last


@pytest.mark.network
def test_a_stale_answer_is_dropped_and_the_rows_read_again(window, qtbot, served):
    with range_server(served, latency=0.1) as slow:
        tab = open_remote(window, qtbot, slow.url_for(NAME))
        model = tab.model
        settled(qtbot, model)
        model.set_feature_columns(["label"])
        far = range(RECORDS - SHOWN, RECORDS)
        tab.select_record(RECORDS - 1)
        cells(model, far)  # asked with the column "label"
        qtbot.waitUntil(lambda: model.fetcher.loader.is_busy() and model.loading_rows() > 0, timeout=TIMEOUT)
        model.set_feature_columns(["name"])  # while they are read: those answers have no "name" cells
        qtbot.waitUntil(lambda: all(row[Column.KIND] != LOADING_TEXT for row in cells(model, far)), timeout=TIMEOUT)
        settled(qtbot, model)
    assert [row[-1] for row in cells(model, far)] == [f'"item-{r}"' for r in far]


@pytest.mark.network
def test_a_dead_network_is_one_line_and_never_hangs_the_gui(window, qtbot, served, monkeypatch):
    with range_server(served) as srv:
        tab = open_remote(window, qtbot, srv.url_for(NAME))
        model = tab.model
        settled(qtbot, model)
        tab.session.source.remote.backoff = 0.1  # its retries wait 0.1, 0.2, 0.4 s (0.5, 1, 2 s by default)
        errors = []
        model.failed.connect(errors.append)
        srv.down = True  # every GET from now on is dropped
        far = range(RECORDS - SHOWN, RECORDS)
        before = srv.stats.requests
        shown = cells(model, far)
        assert srv.stats.requests == before and all(row[Column.KIND] == LOADING_TEXT for row in shown)
        ticks = []
        timer = QTimer()
        timer.timeout.connect(lambda: ticks.append(1))
        timer.start(10)
        qtbot.waitUntil(lambda: bool(errors) and model.loading_rows() == 0, timeout=TIMEOUT)
        timer.stop()
        assert len(ticks) >= 20  # the event loop ran every 10 ms while the reads were retried
        shown = cells(model, far)
        assert len(errors) == 1, [e[:40] for e in errors]  # one line for the batch, not one per row
        text = window.statusBar().currentMessage()  # where a tab's row errors go
        assert text == errors[0] and len(text.splitlines()) == 1 and "Traceback" not in text
        assert text.startswith(f"cannot read record {RECORDS - SHOWN:,}: ") and NAME in text
        assert all(row[Column.KIND] == "unreadable" for row in shown)
        assert model.loading_rows() == 0
        assert cells(model, far) == shown  # not asked again at once
        srv.down = False  # the network is back: a row that failed is read again once shown after a while
        monkeypatch.setattr(row_fetcher, "RETRY_AFTER", 0.0)
        qtbot.waitUntil(lambda: all(row[Column.KIND] == "Example" for row in cells(model, far)), timeout=TIMEOUT)
    assert len(errors) == 1


@pytest.mark.network
def test_closing_a_tab_stops_its_loader(window, qtbot, served):
    with range_server(served, latency=0.2) as slow:
        tab = open_remote(window, qtbot, slow.url_for(NAME))
        model = tab.model
        settled(qtbot, model)
        loader = model.fetcher.loader
        assert loader is not None
        far = range(RECORDS - 400, RECORDS)
        cells(model, far)
        qtbot.waitUntil(loader.is_busy, timeout=TIMEOUT)  # the batch went out and is being read
        window.close_tab(window.tabs.indexOf(tab))
        assert not loader.is_busy() and loader.pool.activeThreadCount() == 0
        assert loader.pending() == 0
        assert model.index(RECORDS - 1, Column.KIND).data() == LOADING_TEXT and model.loading_rows() == 0
    assert window.tabs.count() == 0


def test_a_local_files_rows_are_read_as_they_are_asked(window, qtbot, manifest):
    tab = open_done(window, qtbot, "structured.tfrecord")
    model = tab.model
    reference = manifest["structured.tfrecord"]["records"]
    expected = {"example": KIND_TEXT[RecordKind.EXAMPLE]}
    for r in range(model.rowCount()):  # read right away, on this thread: never a placeholder
        assert model.index(r, Column.KIND).data() == expected[reference[r]["kind"]]
        assert model.index(r, Column.SIZE).data() == f"{reference[r]['length']:,}"
    before = cells(model, range(model.rowCount()))
    tab.select_record(model.rowCount() - 1)
    assert cells(model, range(model.rowCount())) == before
    assert model.fetcher is None and model.loading_rows() == 0
    assert LOADING_TEXT not in {v for row in before for v in row}


@pytest.mark.network
def test_a_local_and_a_remote_model_agree_row_for_row(qtbot, served):
    local = TFRecordFile(os.fspath(served / "structured.tfrecord")).build_index()
    with range_server(served) as srv:
        remote = TFRecordFile(srv.url_for("structured.tfrecord")).build_index()
        a, b = RecordTableModel(HeldRecords(local)), remote_model(RecordTableModel, remote)
        a.sync(), b.sync()
        with qtbot.waitSignal(b.samples_ready, timeout=TIMEOUT):
            assert b.sample_keys() == [] and a.sample_keys()  # the remote samples are read in the background
        assert b.sample_keys() == a.sample_keys()
        for m in (a, b):
            m.set_feature_columns(m.default_feature_columns())
        assert b.feature_columns() == a.feature_columns()
        assert all(row[Column.KIND] == LOADING_TEXT for row in cells(b, range(b.rowCount())))
        qtbot.waitUntil(lambda: b.loading_rows() == 0, timeout=TIMEOUT)
        assert cells(b, range(b.rowCount())) == cells(a, range(a.rowCount()))
        b.close()
        a.close()
    local.close()
    remote.close()


@pytest.mark.network
def test_a_shard_set_of_urls_reads_its_rows_in_the_background(qtbot):
    shards = sorted((FIXTURES / "shards").glob("*.tfrecord"))[:2]
    local = ShardSet([os.fspath(p) for p in shards])
    list(local.index_iter(publish=False))  # the models number the records (ShardSet.publish)
    with range_server(FIXTURES / "shards") as srv:
        remote = ShardSet([srv.url_for(p.name) for p in shards])
        list(remote.index_iter(publish=False))
        a, b = ShardSetTableModel(HeldRecords(local)), remote_model(ShardSetTableModel, remote)
        a.sync(), b.sync()
        assert a.rowCount() == b.rowCount() > 0
        every = range(b.rowCount())
        assert all(row[Column.KIND] == LOADING_TEXT for row in cells(b, every))
        assert [row[-1] for row in cells(b, every)] == [row[-1] for row in cells(a, every)]  # the shard's name
        qtbot.waitUntil(lambda: all(row[Column.KIND] != LOADING_TEXT for row in cells(b, every)), timeout=TIMEOUT)
        assert cells(b, every) == cells(a, every)
        b.close()
        remote.close()
    local.close()


def test_the_loader_reads_the_newest_batch_first_and_drops_the_oldest(qtbot, monkeypatch):
    monkeypatch.setattr(row_loader, "MAX_QUEUED_ROWS", 4)
    gate = threading.Event()
    read = []

    def load(i: int) -> int:
        gate.wait(TIMEOUT / 1000)
        read.append(i)
        return i * 10

    loader = RowLoader()
    got = []
    loader.loaded.connect(lambda epoch, results: got.extend((epoch, *r) for r in results))
    assert loader.want(0, [0], load) == []
    qtbot.waitUntil(lambda: loader.pending() == 0)  # row 0 is being read (held at the gate)
    assert loader.want(0, [1, 2], load) == [] and loader.want(0, [3, 4], load) == []
    assert loader.want(0, [5], load) == [1, 2]  # five queued: the batch asked longest ago goes
    assert loader.pending() == 3
    gate.set()
    qtbot.waitUntil(lambda: len(got) == 4 and not loader.is_busy(), timeout=TIMEOUT)
    assert read == [0, 5, 3, 4] and got == [(0, 0, 0), (0, 5, 50), (0, 3, 30), (0, 4, 40)]
    gate.clear()
    loader.want(1, [6], load)
    qtbot.waitUntil(lambda: loader.pending() == 0)
    loader.want(1, [7, 8], load)
    loader.forget(2)  # a new epoch: what was queued is not read
    assert loader.pending() == 0
    gate.set()
    qtbot.waitUntil(lambda: not loader.is_busy(), timeout=TIMEOUT)
    assert read[4:] == [6] and got[4:] == [(1, 6, 60)]
    loader.close()
    assert loader.want(3, [9], load) == [9] and not loader.is_busy()
