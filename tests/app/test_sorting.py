"""Sorting the record table through the real window: a header click sorts (a key pass on a worker),
a second reverses, a third returns to file order; the indicator, the selection, a filter and Cancel."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from app.models.filtered_table_model import FilteredTableModel
from app.models.record_table_model import BASE_COLUMNS, Column
from codec.index.scan import IndexProgress
from codec.storage.writer import write_records
from tests.builders import FIXTURES, example
from tests.gui_helpers import open_done, wait_done

pytestmark = pytest.mark.gui

TIMEOUT = 20000
N = 40


def _label(k: int) -> list[int]:
    """Record k's labels: every 7th has none, some have two (they sort by the first)."""
    if k % 7 == 3:
        return []
    return [(k * 13) % 10] + ([99] if k % 5 == 0 else [])


@pytest.fixture
def tab(window, qtbot, tmp_path):
    path = tmp_path / "labels.tfrecord"
    write_records(str(path), [example(label=_label(k), name=[f"n{(k * 7) % 12}".encode()]) for k in range(N)])
    tab = open_done(window, qtbot, str(path))
    tab._set_columns(["label", "name"], save=False)
    return tab


def shown(tab) -> list[int]:
    return [tab.proxy.record_at(r) for r in range(tab.proxy.rowCount())]


def click(qtbot, tab, column: int) -> None:
    """Click ``column``'s header and wait until the rows show the order it asked for."""
    with qtbot.waitSignal(tab.proxy.sort_changed, timeout=TIMEOUT):
        tab.table.horizontalHeader().sectionClicked.emit(column)
    assert not tab.sorter.is_running()


def indicator(tab) -> tuple[int, Qt.SortOrder]:
    header = tab.table.horizontalHeader()
    return header.sortIndicatorSection(), header.sortIndicatorOrder()


def test_clicks_sort_by_a_feature_reverse_then_return_to_file_order(qtbot, tab):
    column = BASE_COLUMNS + tab.model.feature_columns().index("label")
    keyed = [k for k in range(N) if _label(k)]
    empty = [k for k in range(N) if not _label(k)]
    tab.select_record(12)
    click(qtbot, tab, column)
    ascending = sorted(keyed, key=lambda k: _label(k)[0]) + empty  # stable: ties in record order
    assert shown(tab) == ascending
    assert indicator(tab) == (column, Qt.SortOrder.AscendingOrder)
    assert tab.current_record() == 12 and tab.detail.current_record() == 12  # still selected, on its new row
    assert tab.table.currentIndex().row() == ascending.index(12)

    click(qtbot, tab, column)  # reversed: ties still in record order, the empty ones still last
    assert shown(tab) == sorted(keyed, key=lambda k: -_label(k)[0]) + empty
    assert indicator(tab) == (column, Qt.SortOrder.DescendingOrder)
    assert tab.current_record() == 12

    click(qtbot, tab, column)
    assert shown(tab) == list(range(N))
    assert indicator(tab)[0] == -1 and tab.proxy.sort_column == -1
    assert tab.current_record() == 12


def test_bytes_size_and_number_columns(qtbot, tab):
    name = BASE_COLUMNS + tab.model.feature_columns().index("name")
    click(qtbot, tab, name)
    assert shown(tab) == sorted(range(N), key=lambda k: f"n{(k * 7) % 12}".encode())
    click(qtbot, tab, Column.SIZE)
    sizes = [tab.session.source.record_info(k).length for k in range(N)]
    assert shown(tab) == sorted(range(N), key=lambda k: sizes[k])
    assert indicator(tab) == (Column.SIZE, Qt.SortOrder.AscendingOrder)
    click(qtbot, tab, Column.INDEX)  # no pass: file order, then reversed
    assert shown(tab) == list(range(N)) and indicator(tab) == (Column.INDEX, Qt.SortOrder.AscendingOrder)
    click(qtbot, tab, Column.INDEX)
    assert shown(tab) == list(reversed(range(N)))


def test_a_filter_shows_its_matches_in_the_sort_order(qtbot, tab):
    column = BASE_COLUMNS + tab.model.feature_columns().index("label")
    click(qtbot, tab, column)
    click(qtbot, tab, column)  # descending
    assert tab.qa.filter_bar.run("label >= 5")
    qtbot.waitUntil(lambda: not tab.qa.filter_bar.is_running() and tab.proxy.is_filtered, timeout=TIMEOUT)
    matching = [k for k in range(N) if _label(k) and max(_label(k)) >= 5]  # (the filter: any value)
    assert shown(tab) == sorted(matching, key=lambda k: -_label(k)[0])
    assert indicator(tab) == (column, Qt.SortOrder.DescendingOrder)
    tab.qa.filter_bar.clear()
    assert len(shown(tab)) == N and shown(tab)[:3] == sorted(range(N), key=lambda k: -(_label(k) or [-1])[0])[:3]


def test_cancel_in_the_status_bar_stops_the_sort_and_keeps_the_rows(qtbot, window, tab, monkeypatch):
    def endless(source, key, into, workers=None):
        n = len(source)
        while True:
            yield IndexProgress(n // 2, n // 2, n, 0)

    monkeypatch.setattr("app.workers.sort_runner.sort_iter", endless)
    column = BASE_COLUMNS + tab.model.feature_columns().index("label")
    tab.table.horizontalHeader().sectionClicked.emit(column)
    qtbot.waitUntil(lambda: "sorting… 50%" in window.status.records_label.text(), timeout=TIMEOUT)
    assert window.status.cancel_button.isVisible() and window.cancel_action.isEnabled()
    with qtbot.waitSignal(tab.sorter.runner.finished, timeout=TIMEOUT) as done:
        window.status.cancel_button.click()
    assert done.args[2]  # cancelled
    assert shown(tab) == list(range(N)) and tab.proxy.sort_column == -1 and indicator(tab)[0] == -1
    qtbot.waitUntil(lambda: not window.status.cancel_button.isVisible(), timeout=TIMEOUT)
    assert "sorting" not in window.status.records_label.text()


def test_a_paged_table_pages_through_the_sort_order(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(FilteredTableModel, "window_rows", 8)
    path = tmp_path / "paged.tfrecord"
    write_records(str(path), [example(n=[(k * 11) % N]) for k in range(N)])  # a permutation of 0 .. N-1
    tab = open_done(window, qtbot, str(path))
    tab._set_columns(["n"], save=False)
    column = BASE_COLUMNS
    click(qtbot, tab, column)
    click(qtbot, tab, column)  # descending: record k where (k * 11) % N == N - 1 first
    order = sorted(range(N), key=lambda k: -((k * 11) % N))
    assert tab.current_record() == 0  # selected when the file opened: still, on the last page now
    assert tab.proxy.window_start == 32 and shown(tab) == order[32:] and tab.table.currentIndex().row() == 7
    tab.select_record(order[29])  # on the fourth page
    assert tab.proxy.window_start == 24 and tab.table.currentIndex().row() == 5
    assert tab.current_record() == order[29]
    tab.step_page(1)
    assert shown(tab) == order[32:] and tab.current_record() == order[32]
    tab.select_position(0)
    assert tab.proxy.window_start == 0 and shown(tab) == order[:8] and tab.current_record() == order[0]


def test_deleting_a_record_returns_to_file_order(qtbot, window, tab):
    qtbot.waitUntil(lambda: tab.editing.editable, timeout=TIMEOUT)
    column = BASE_COLUMNS + tab.model.feature_columns().index("label")
    click(qtbot, tab, column)
    tab.select_record(4)
    with qtbot.waitSignal(tab.proxy.sort_changed, timeout=TIMEOUT):
        assert tab.editing.delete_selected()
    assert tab.proxy.sort_column == -1 and indicator(tab)[0] == -1
    assert shown(tab) == list(range(N - 1))


def test_the_indicator_follows_its_feature_when_columns_change_and_hiding_it_unsorts(qtbot, tab):
    click(qtbot, tab, BASE_COLUMNS + tab.model.feature_columns().index("name"))
    sorted_rows = shown(tab)
    tab._set_columns(["name"], save=False)  # label hidden: name moves one column left
    qtbot.waitUntil(lambda: indicator(tab)[0] == BASE_COLUMNS, timeout=TIMEOUT)
    assert shown(tab) == sorted_rows and tab.proxy.sort_column == BASE_COLUMNS
    with qtbot.waitSignal(tab.proxy.sort_changed, timeout=TIMEOUT):
        tab._set_columns(["label"], save=False)  # the sorted column hidden: file order
    assert shown(tab) == list(range(N)) and indicator(tab)[0] == -1


def test_a_shard_set_sorts_across_its_shards(qtbot, window):
    tab = window.open_set([str(FIXTURES / "shards")])
    wait_done(qtbot, tab)
    tab._set_columns(["idx", "shard"], save=False)
    n = tab.proxy.total()
    click(qtbot, tab, BASE_COLUMNS)  # idx: each shard numbers its records from 0
    keys = [int(tab.model.data(tab.model.index(k, BASE_COLUMNS))) for k in range(n)]
    assert shown(tab) == sorted(range(n), key=lambda k: keys[k])
    assert [keys[k] for k in shown(tab)][:4] == [0, 0, 0, 0]
    shard = tab.model.shard_column
    click(qtbot, tab, shard)  # the Shard column: file order, no pass
    assert shown(tab) == list(range(n)) and indicator(tab) == (shard, Qt.SortOrder.AscendingOrder)
