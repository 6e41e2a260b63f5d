"""The app over URLs, through the real main window, against loopback servers started here:
File > Open URL…, a URL on the command line, opening on a worker (the GUI stays responsive),
bytes fetched in the status bar, Cancel, one-line errors, recent URLs, saving to a URL."""
from __future__ import annotations

import hashlib
import os
import shutil
from collections import Counter

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from app.__main__ import build_window, parse_args  # noqa: E402
from app.dialogs import edit_dialogs, url_dialogs  # noqa: E402
from app.dialogs.url_dialogs import OpenUrlDialog  # noqa: E402
from app.models.settings import Settings  # noqa: E402
from app.shell.fetch_meter import FetchMeter  # noqa: E402
from app.shell.file_tab import FileTab  # noqa: E402
from app.shell.main_window import MainWindow  # noqa: E402
from app.shell.shard_set_tab import ShardSetTab  # noqa: E402
from app.views.opening_page import OpeningPage  # noqa: E402
from codec.sources.tfrecord_file import TFRecordFile  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done, open_remote, wait_done  # noqa: E402
from tests.remote_servers import RangeServer, copy_into, make_bucket, range_server, use_s3_env  # noqa: E402

TIMEOUT = 20000
BIG_RECORDS = 1200  # of 10 KB: a file of several of the index pass's 8 MiB reads


def _big_records() -> list[bytes]:
    return [hashlib.sha256(str(i).encode()).digest() * 320 for i in range(BIG_RECORDS)]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A served folder: two fixtures, a file that is not a TFRecord, and a 12 MB file."""
    folder = tmp_path_factory.mktemp("served")
    for name in ("structured.tfrecord", "my_example.tfrecords", "not_a_tfrecord.jpg"):
        copy_into(folder, FIXTURES / name, name)
    write_records(folder / "big.tfrecord", _big_records())
    return folder


@pytest.fixture(scope="module")
def http(root):
    with range_server(root, deny=("secret.tfrecord",)) as srv:
        yield srv


def records_of(path) -> list[bytes]:
    """Every record of a file, read by the codec (local or URL)."""
    with TFRecordFile(os.fspath(path)) as f:
        f.build_index()
        return list(f)


def rows(tab: FileTab) -> list[list]:
    """Every cell the table shows, row by row."""
    m = tab.model
    return [[m.index(r, c).data() for c in range(m.columnCount())] for r in range(m.rowCount())]



def wait_failed(window: MainWindow, qtbot, url: str) -> str:
    """Open ``url``, expect it to fail; the message bar's text."""
    opening = window.open_url(url)
    with qtbot.waitSignal(opening.failed, timeout=TIMEOUT):
        pass
    return window.message_bar.text()


# -- opening ------------------------------------------------------------------
@pytest.mark.network
def test_open_url_dialog_opens_the_same_rows_as_the_local_file(window, qtbot, http, monkeypatch, manifest):
    url = http.url_for("structured.tfrecord")
    shown = {}

    def exec_typed(dialog: OpenUrlDialog) -> int:  # the user types the URL and presses Open
        shown["recent"] = [dialog.combo.itemText(i) for i in range(dialog.combo.count())]
        dialog.combo.setEditText("not a url")
        shown["refused"] = (dialog.buttons.button(dialog.buttons.StandardButton.Open).isEnabled(),
                            dialog.error_label.text())
        dialog.combo.setEditText(f"  {url} ")
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(OpenUrlDialog, "exec", exec_typed)
    local = open_done(window, qtbot, "structured.tfrecord")
    opening = window.open_url_dialog()
    assert isinstance(opening.page, OpeningPage) and window.tabs.currentWidget() is opening.page
    assert "Opening" in opening.page.label.text() and url in opening.page.label.text()
    with qtbot.waitSignal(opening.opened, timeout=TIMEOUT) as opened:
        pass
    tab = wait_done(qtbot, opened.args[0])
    assert shown["recent"] == [] and shown["refused"][0] is False and "not a URL" in shown["refused"][1]
    assert tab.path == url and window.current_tab() is tab
    assert window.tabs.count() == 2 and window.tabs.tabToolTip(window.tabs.indexOf(tab)) == url
    assert tab.model.rowCount() == local.model.rowCount() == 100
    qtbot.waitUntil(lambda: all(row[3] != "…" for row in rows(tab)), timeout=TIMEOUT)  # rows come from the background
    assert rows(tab) == rows(local)
    reference = manifest["structured.tfrecord"]["records"]  # what TensorFlow wrote
    assert [hashlib.sha256(tab.session.records.read(i).data).hexdigest() for i in range(100)] == \
        [r["sha256"] for r in reference]
    assert tab.session.fetched is not None and tab.session.fetched >= os.path.getsize(FIXTURES / "structured.tfrecord")
    assert local.session.fetched is None


@pytest.mark.network
def test_a_url_on_the_command_line_opens(qtbot, http, tmp_path):
    url = http.url_for("my_example.tfrecords")
    window = build_window(parse_args([url]))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: bool(window.file_tabs()), timeout=TIMEOUT)
    tab = wait_done(qtbot, window.file_tabs()[0])
    local = records_of(FIXTURES / "my_example.tfrecords")
    assert tab.path == url and tab.state().phase == "done"
    assert [tab.session.records.read(i).data for i in range(tab.model.rowCount())] == local
    assert window.settings.recent_files()[0] == url  # a URL is kept as it is, not made a local path


@pytest.mark.network
def test_urls_on_the_command_line_with_set_open_as_one_dataset(qtbot):
    shards = sorted((FIXTURES / "shards").glob("*.tfrecord"))[:2]
    with range_server(FIXTURES / "shards") as srv:
        urls = [srv.url_for(p.name) for p in shards]
        window = build_window(parse_args(["--set", *urls]))
        qtbot.addWidget(window)
        qtbot.waitUntil(lambda: bool(window.file_tabs()), timeout=TIMEOUT)
        tab = wait_done(qtbot, window.file_tabs()[0])
        assert isinstance(tab, ShardSetTab) and [s.path for s in tab.shard_set.shards] == urls
        expected = [data for path in shards for data in records_of(path)]
        assert [tab.session.records.read(i).data for i in range(tab.model.rowCount())] == expected
        window.close()


@pytest.mark.network
def test_a_dropped_url_opens(window, qtbot, http):
    url = http.url_for("structured.tfrecord")
    mime = QMimeData()
    mime.setUrls([QUrl(url)])
    window.dropEvent(QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier))
    assert [o.url for o in window.openings.pending] == [url]
    with qtbot.waitSignal(window.openings.pending[0].opened, timeout=TIMEOUT) as opened:
        pass
    assert wait_done(qtbot, opened.args[0]).model.rowCount() == 100


@pytest.mark.network
def test_the_gui_stays_responsive_while_a_slow_url_opens(window, qtbot, root):
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(opening.page.isVisible()))
    with range_server(root, latency=0.05) as slow:
        opening = window.open_url(slow.url_for("structured.tfrecord"))
        assert window.tabs.currentWidget() is opening.page and not window.file_tabs()
        timer.start()
        with qtbot.waitSignal(opening.opened, timeout=TIMEOUT) as opened:
            pass
        timer.stop()
        tab = wait_done(qtbot, opened.args[0])
    assert sum(ticks) >= 3  # the event loop ran timers while the open was in flight, its page shown
    assert slow.stats.requests >= 2
    assert tab.model.rowCount() == 100 and window.tabs.count() == 1


@pytest.mark.network
def test_progress_shows_bytes_fetched_and_throughput(window, qtbot, root):
    with range_server(root, latency=0.05) as slow:  # each read takes a while: the passes are seen running
        url = slow.url_for("big.tfrecord")
        opening = window.open_url(url)
        with qtbot.waitSignal(opening.opened, timeout=TIMEOUT) as opened:
            pass
        tab = opened.args[0]
        seen = []
        tab.state_changed.connect(lambda: seen.append((tab.is_running(), window.fetch_label.text())))
        wait_done(qtbot, tab, TIMEOUT)
    size = os.path.getsize(root / "big.tfrecord")
    running = [text for busy, text in seen if busy]
    assert running and all(text.startswith((f"Indexing {url} — ", f"Checking {url} — ")) for text in running)
    assert all(" fetched, " in text and text.endswith("/s") for text in running)
    assert any(" MB/s" in text or " KB/s" in text for text in running)  # a rate from the pass's start
    assert tab.model.rowCount() == BIG_RECORDS
    final = window.fetch_label.text()
    assert window.fetch_label.isVisible() and final.endswith(" fetched") and "MB" in final
    # the count follows what is fetched after the pass too (the table's rows, the record shown)
    qtbot.waitUntil(lambda: f"{tab.session.fetched:,} bytes" in window.fetch_label.toolTip(), timeout=TIMEOUT)
    # checked as it was indexed (a small file is verified at once): downloaded once, not once per pass
    assert tab.state().verified and "all CRCs ok" in window.problems_label.text()
    assert size <= tab.session.fetched < 1.5 * size


@pytest.mark.network
def test_a_changed_remote_file_reopens_on_a_worker(window, qtbot, tmp_path):
    served = copy_into(tmp_path, FIXTURES / "structured.tfrecord", "data.tfrecord")
    with range_server(tmp_path, latency=0.05) as slow:
        tab = open_remote(window, qtbot, slow.url_for("data.tfrecord"))
        assert tab.model.rowCount() == 100
        shutil.copyfile(FIXTURES / "my_example.tfrecords", served)  # replaced on the server
        old = tab.session.source
        assert tab.reopen_changed()
        assert tab.session.source is old and "Reopening" in tab.change_bar.text()  # not opened on this thread
        qtbot.waitUntil(lambda: tab.session.source is not old, timeout=TIMEOUT)
        wait_done(qtbot, tab)
        assert tab.change_bar.isHidden()
        assert [tab.session.records.read(i).data for i in range(tab.model.rowCount())] == \
            records_of(FIXTURES / "my_example.tfrecords")


def test_fetch_meter_averages_over_its_window():
    meter = FetchMeter(window=2.0)
    assert meter.sample(0, now=10.0) == 0.0
    assert meter.sample(1000, now=11.0) == 1000.0
    assert meter.sample(5000, now=12.0) == 2500.0  # (5000 - 0) / 2 s
    assert meter.sample(9000, now=14.0) == pytest.approx(4000 / 2)  # the samples before 12 s left the window
    assert meter.sample(100, now=15.0) == 0.0  # a new counter (the file reopened) starts again
    meter.reset(500, now=20.0)  # a pass starts with 500 bytes fetched already
    assert meter.sample(1500, now=20.5) == 2000.0


@pytest.mark.network
def long_records(folder) -> list[bytes]:
    """A 40 MB file in ``folder`` (5 reads of 8 MiB); its records."""
    records = [hashlib.sha256(str(i).encode()).digest() * 320 for i in range(4000)]
    write_records(folder / "long.tfrecord", records)
    return records


def cancelled_tab(window, qtbot, slow) -> FileTab:
    """long.tfrecord opened from ``slow``, its indexing stopped with Cancel once rows came."""
    opening = window.open_url(slow.url_for("long.tfrecord"))
    with qtbot.waitSignal(opening.opened, timeout=TIMEOUT) as opened:
        pass
    tab = opened.args[0]
    qtbot.waitUntil(lambda: tab.model.rowCount() > 0, timeout=TIMEOUT)
    assert tab.is_running() and window.cancel_button.isVisible()
    window.cancel_button.click()
    wait_done(qtbot, tab, TIMEOUT)
    assert tab.state().phase == "cancelled" and 0 < tab.model.rowCount() < 4000
    return tab


def test_cancel_keeps_the_records_indexed_so_far_readable(window, qtbot, tmp_path):
    records = long_records(tmp_path)
    with range_server(tmp_path, latency=0.1) as slow:
        tab = cancelled_tab(window, qtbot, slow)
        n = tab.model.rowCount()
        assert "(stopped)" in window.records_label.text()
        assert window.fetch_label.text().endswith(" fetched")
        assert [tab.session.records.read(i).data for i in (0, n // 2, n - 1)] == \
            [records[0], records[n // 2], records[n - 1]]


@pytest.mark.network
def test_cancel_while_opening_drops_the_tab(window, qtbot, root):
    with range_server(root, latency=0.3) as slow:
        opening = window.open_url(slow.url_for("structured.tfrecord"))
        page = opening.page
        assert window.tabs.currentWidget() is page
        with qtbot.waitSignal(opening.cancelled, timeout=1000):
            page.cancel_button.click()
        assert window.tabs.count() == 0 and window.stack.currentWidget() is window.start_page
        with qtbot.waitSignal(opening.finished, timeout=TIMEOUT):
            pass  # the worker's answer comes, and is dropped
    assert window.tabs.count() == 0 and not window.openings.pending
    assert window.message_bar.isHidden()


@pytest.mark.network
@pytest.mark.parametrize("name, why", [
    ("missing.tfrecord", "not found"),
    ("secret.tfrecord", "access denied"),
    ("not_a_tfrecord.jpg", "not a TFRecord"),
])
def test_errors_are_one_line_naming_the_url_and_leave_no_tab(window, qtbot, http, name, why):
    url = http.url_for(name)
    text = wait_failed(window, qtbot, url)
    assert len(text.splitlines()) == 1 and url in text and why in text
    assert "Traceback" not in text
    assert window.tabs.count() == 0 and not window.openings.pending
    assert window.stack.currentWidget() is window.start_page
    assert window.statusBar().currentMessage() == text
    assert url not in window.settings.recent_urls()


def test_an_unknown_protocol_is_one_line(window, qtbot):
    url = "nosuchproto://bucket/train.tfrecord"
    text = wait_failed(window, qtbot, url)
    assert len(text.splitlines()) == 1 and url in text and "unknown protocol" in text
    assert window.tabs.count() == 0


def test_a_url_that_is_no_url_is_refused_by_the_dialog(qtbot):
    dialog = OpenUrlDialog(None, ["s3://b/old.tfrecord"])
    qtbot.addWidget(dialog)
    open_button = dialog.buttons.button(dialog.buttons.StandardButton.Open)
    assert dialog.url() == "s3://b/old.tfrecord" and open_button.isEnabled()
    for text, enabled in (("/tmp/local.tfrecord", False), ("s3://", False), ("gs://bucket/train-*", True)):
        dialog.combo.setEditText(text)
        assert open_button.isEnabled() is enabled, text
    dialog.combo.setEditText("s3://")
    dialog.accept()
    assert dialog.result() == 0 and "bucket" in dialog.error_label.text()


# -- recent URLs ----------------------------------------------------------------
@pytest.mark.network
def test_recent_urls_are_remembered_most_recent_first(window, qtbot, http, monkeypatch, tmp_path):
    first, second = http.url_for("structured.tfrecord"), http.url_for("my_example.tfrecords")
    open_remote(window, qtbot, first)
    open_remote(window, qtbot, second)
    assert window.open_url(first) is None  # already open: its tab is shown again
    assert window.current_tab().path == first
    settings = Settings()  # what the next start reads
    assert settings.recent_urls()[:2] == [second, first]
    assert settings.recent_files()[:2] == [second, first]
    for i in range(12):  # ten are kept
        settings.add_recent_url(f"s3://bucket/{i}.tfrecord")
    assert settings.recent_urls() == [f"s3://bucket/{i}.tfrecord" for i in range(11, 1, -1)]
    settings.add_recent_url(second)
    settings.add_recent_url(first)
    asked = []
    monkeypatch.setattr(url_dialogs, "ask_url", lambda parent, recent: asked.append(recent) or None)
    assert window.open_url_dialog() is None
    assert asked[0][:3] == [first, second, "s3://bucket/11.tfrecord"] and len(asked[0]) == 10
    # the temp-file sweep looks only in local folders
    local = tmp_path / "local.tfrecord"
    shutil.copyfile(FIXTURES / "structured.tfrecord", local)
    window.settings.add_recent(os.fspath(local))
    assert window.recent.written_folders() == [os.fspath(tmp_path)]

    # the recent menu and the start page list the URLs (the start page cannot look them up: enabled)
    window.recent.fill_menu()
    texts = [a.text() for a in window.recent_menu.actions()]
    assert texts[:3] == ["local.tfrecord", "my_example.tfrecords", "structured.tfrecord"]
    items = [window.start_page.recent_list.item(i) for i in range(window.start_page.recent_list.count())]
    remote = [item for item in items if "://" in item.toolTip()]
    assert [item.toolTip() for item in remote] == [second, first]
    assert all(item.isSelected() is False and item.flags() & item.flags().ItemIsEnabled for item in remote)

@pytest.mark.network
def test_a_signed_url_opens_but_is_not_remembered(window, qtbot, http):
    signed = http.url_for("structured.tfrecord") + "?X-Amz-Credential=AKIA&X-Amz-Signature=SECRET"
    tab = open_remote(window, qtbot, signed)
    assert tab.model.rowCount() == 100
    index = window.tabs.indexOf(tab)
    assert tab.title == "structured.tfrecord?…" and "SECRET" not in window.tabs.tabToolTip(index)
    settings = Settings()
    settings.add_recent_url(f"simplecache::{signed}")  # in any part of a chain
    settings.add_recent_url("simplecache::https://user:pw@example.com/x.tfrecord")
    assert not any("SECRET" in u or "pw@" in u for u in settings.recent_urls() + settings.recent_files())


@pytest.mark.network
def test_urls_failing_together_are_listed_one_line_each(window, qtbot, http):
    urls = [http.url_for(f"gone-{i}.tfrecord") for i in range(3)]
    window.open_files(urls)
    assert len(window.openings.pending) == 3
    qtbot.waitUntil(lambda: not window.openings.pending, timeout=TIMEOUT)
    lines = window.message_bar.text().splitlines()
    assert len(lines) == 3 and all(any(url in line for line in lines) for url in urls)
    assert window.tabs.count() == 0
    text = wait_failed(window, qtbot, http.url_for("later.tfrecord"))  # a new opening: a new list
    assert len(text.splitlines()) == 1 and "later.tfrecord" in text


# -- S3: a prefix as a dataset, saving to a URL ----------------------------------------
@pytest.fixture
def bucket(s3_endpoint, monkeypatch, tmp_path):
    """A fresh bucket with two shards and a single file; the fake S3 environment lasts this test only."""
    use_s3_env(monkeypatch, s3_endpoint, tmp_path)
    shards = sorted((FIXTURES / "shards").glob("*.tfrecord"))[:2]
    files = {f"set/{p.name}": p for p in shards}
    files["one/structured.tfrecord"] = FIXTURES / "structured.tfrecord"
    fs, name = make_bucket(files)
    return fs, name, shards


@pytest.mark.network
@pytest.mark.parametrize("spelled", ["set/", "set"])
def test_an_s3_prefix_opens_as_one_dataset(window, qtbot, bucket, spelled):
    fs, name, shards = bucket
    opening = window.open_url(f"s3://{name}/{spelled}")
    assert opening is not None and opening.as_set == spelled.endswith("/")  # without "/": found by the store
    with qtbot.waitSignal(opening.opened, timeout=TIMEOUT) as opened:
        pass
    tab = wait_done(qtbot, opened.args[0], TIMEOUT)
    assert isinstance(tab, ShardSetTab) and len(tab.shard_set.shards) == 2
    expected = [data for path in shards for data in records_of(path)]
    assert tab.model.rowCount() == len(expected)
    assert [tab.session.records.read(i).data for i in range(len(expected))] == expected


def edited_remote_tab(window, qtbot, url: str) -> FileTab:
    """``url`` open, its record 0 deleted (not saved yet)."""
    tab = open_remote(window, qtbot, url)
    assert tab.session.start_editing()
    tab.select_record(0)
    assert tab.editing.edits.delete_selected()
    assert tab.editing.modified and tab.model.rowCount() == 99
    return tab


@pytest.mark.network
def test_saving_a_remote_file_goes_through_save_as_and_asks_before_replacing(window, qtbot, bucket,
                                                                             monkeypatch):
    fs, name, _ = bucket
    url = f"s3://{name}/one/structured.tfrecord"
    before = fs.cat_file(f"{name}/one/structured.tfrecord")
    tab = edited_remote_tab(window, qtbot, url)
    asked, replace = [], []
    monkeypatch.setattr(edit_dialogs, "ask_save_as", lambda parent, path, c: asked.append(path) or (url, "none"))
    monkeypatch.setattr(url_dialogs, "ask_replace_remote", lambda parent, u: replace.append(u) or False)
    assert window.edit_actions.save_current()  # Save: the Save As question, the URL proposed
    qtbot.waitUntil(lambda: bool(replace) and not window.edit_actions.remote_saves.busy, timeout=TIMEOUT)
    assert asked == [url] and replace == [url]
    assert fs.cat_file(f"{name}/one/structured.tfrecord") == before and tab.editing.modified  # said no
    monkeypatch.setattr(url_dialogs, "ask_replace_remote", lambda parent, u: replace.append(u) or True)
    with qtbot.waitSignal(window.edit_actions.saved, timeout=TIMEOUT) as saved:
        assert window.edit_actions.save_current()
    assert saved.args == [url] and not tab.editing.modified
    assert records_of(url) == records_of(FIXTURES / "structured.tfrecord")[1:]
    wait_done(qtbot, tab, TIMEOUT)
    assert tab.session.source.path == url and tab.model.rowCount() == 99


@pytest.mark.network
def test_save_as_a_new_url_does_not_ask(window, qtbot, bucket, monkeypatch):
    fs, name, _ = bucket
    tab = edited_remote_tab(window, qtbot, f"s3://{name}/one/structured.tfrecord")
    target = f"s3://{name}/out/edited.tfrecord"
    monkeypatch.setattr(edit_dialogs, "ask_save_as", lambda parent, path, c: (target, "none"))
    monkeypatch.setattr(url_dialogs, "ask_replace_remote", lambda parent, u: pytest.fail("asked for a new object"))
    with qtbot.waitSignal(window.edit_actions.saved, timeout=TIMEOUT):
        assert window.edit_actions.save_as_current()
    assert tab.path == target and fs.exists(f"{name}/out/edited.tfrecord")
    assert target in window.settings.recent_files() and target not in window.settings.output_directories()


def test_save_as_refuses_an_https_target_in_the_dialog(qtbot):
    dialog = edit_dialogs.SaveAsDialog(None, "https://host/x.tfrecord", "none")
    qtbot.addWidget(dialog)
    assert not dialog.check() and "read-only" in dialog.error_label.text()
    dialog.path.setText("s3://bucket/x.tfrecord")
    assert dialog.check() and dialog.result_value() == ("s3://bucket/x.tfrecord", "none")


@pytest.mark.network
def test_a_stopped_server_fails_a_read_within_seconds_in_one_line(window, qtbot, root, tmp_path):
    copy_into(tmp_path, root / "big.tfrecord", "big.tfrecord")
    srv = RangeServer(tmp_path).start()
    try:
        tab = open_remote(window, qtbot, srv.url_for("big.tfrecord"))
    finally:
        srv.kill()  # as a server that went away: its kept connections close, its port refuses
    last = BIG_RECORDS - 1
    with qtbot.waitSignal(tab.detail.record_failed, timeout=3000) as failed:  # not seconds of retries
        tab.select_record(last)
    index, message = failed.args
    assert index == last and "\n" not in message
    assert "cannot connect to http://127.0.0.1:" in message and "(connection refused)" in message


@pytest.mark.network
def test_resume_goes_on_indexing_from_where_cancel_stopped(window, qtbot, tmp_path):
    records = long_records(tmp_path)
    with range_server(tmp_path, latency=0.1) as slow:
        tab = cancelled_tab(window, qtbot, slow)
        stopped = tab.model.rowCount()
        assert "Resume" in window.statusBar().currentMessage()
        assert window.status.resume_button.isVisible() and window.resume_action.isEnabled()
        first_ranges = list(slow.stats.ranges)
        window.status.resume_button.click()  # (File > Resume Indexing does the same)
        assert tab.is_running() and not window.status.resume_button.isVisible()
        wait_done(qtbot, tab, TIMEOUT)
        assert tab.state().phase == "done" and tab.model.rowCount() == len(records)
        resumed_from = tab.session.source.record_info(stopped - 1).end
        again = Counter(slow.stats.ranges) - Counter(first_ranges)
    # not from zero: before where it stopped, at most the odd block the table or the detail shows (a restart
    # would read every byte before resumed_from again)
    early = sum(n * (end - start) for (start, end), n in again.items() if start < resumed_from - (8 << 20))
    assert early <= 1 << 20, again
    assert not window.status.resume_button.isVisible() and not window.resume_action.isEnabled()
    assert [tab.session.records.read(i).data for i in (0, stopped, len(records) - 1)] == \
        [records[0], records[stopped], records[-1]]
