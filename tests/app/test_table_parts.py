"""The record table's parts without a window: the row cache, the remote row fetcher (requests
counted, a clock given), the sample rows that choose feature columns, and the session as the one
owner of what the table and the Problems list show."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtCore")

from PySide6.QtCore import QObject, Signal

from app.models.column_choice import SAMPLE_RECORDS, SampleRows, names_labels, ranked_keys, schema_of, schema_signature
from app.models.problem_list_model import ProblemListModel
from app.models.record_table_model import RecordTableModel
from app.models.row_cache import RowCache
from app.models.table_rows import TableRow
from app.shell.session import TabSession
from app.workers import row_fetcher
from app.workers.row_fetcher import RowFetcher
from codec.decode.decoder import decode_record
from codec.decode.example_proto import Example
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records
from tests.builders import example as any_example

pytestmark = pytest.mark.gui
TIMEOUT = 10000


def row(n: int) -> TableRow:
    return TableRow(n, None)


def example(features: dict[str, int]) -> bytes:
    ex = Example()
    for key, value in features.items():
        ex.features.feature[key].int64_list.value.append(value)
    return ex.SerializeToString(deterministic=True)


# -- the row cache ------------------------------------------------------------
def test_the_row_cache_keeps_the_rows_used_last():
    cache = RowCache(2)
    cache.put(0, row(0))
    cache.put(1, row(1))
    assert cache.get(0).length == 0  # 0 is now the most recent: 1 goes first
    cache.put(2, row(2))
    assert cache.get(1) is None and cache.get(0).length == 0 and cache.get(2).length == 2 and len(cache) == 2
    assert cache.pop(2).length == 2 and cache.pop(2) is None and len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.get(0) is None


# -- the remote fetcher ---------------------------------------------------------
class CountingLoader(QObject):
    """A RowLoader that reads nothing: it counts what is asked, and the test answers."""

    loaded = Signal(int, object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.asked: list[tuple[int, list[int]]] = []
        self.forgotten: list[int] = []
        self.closed = False

    def want(self, epoch, rows, load):
        self.asked.append((epoch, list(rows)))
        return []

    def forget(self, epoch):
        self.forgotten.append(epoch)

    def close(self):
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fetcher(qtbot):
    clock = Clock()
    fetcher = RowFetcher(lambda: (lambda i: None), clock=clock, make_loader=CountingLoader)
    fetcher.clock = clock
    arrivals, late = [], []
    fetcher.arrived.connect(arrivals.append)
    fetcher.late.connect(late.append)
    fetcher.arrivals, fetcher.lates = arrivals, late
    yield fetcher
    fetcher.close()


def sent(qtbot, fetcher, batches: int) -> CountingLoader:
    qtbot.waitUntil(lambda: fetcher.loader is not None and len(fetcher.loader.asked) == batches, timeout=TIMEOUT)
    return fetcher.loader


def test_the_rows_asked_in_one_turn_go_as_one_batch_each_row_once(qtbot, fetcher):
    for i in (5, 3, 5, 4, 3):
        fetcher.ask(i)
    loader = sent(qtbot, fetcher, 1)
    assert loader.asked == [(0, [3, 4, 5])] and fetcher.pending() == 3
    fetcher.ask(4)  # asked and not back: not asked again
    fetcher.ask(6)
    assert sent(qtbot, fetcher, 2).asked[1] == (0, [6])
    loader.loaded.emit(0, [(3, (row(3), None, "three")), (4, (row(4), None, None))])
    (arrival,) = fetcher.arrivals
    assert arrival.rows == [3, 4] and [(i, r.length, d) for i, r, d in arrival.kept] == [(3, 3, "three"), (4, 4, None)]
    assert arrival.failure is None and fetcher.pending() == 2  # 5 and 6 still out


def test_answers_asked_before_the_rows_changed_come_back_late(qtbot, fetcher):
    fetcher.ask(1)
    loader = sent(qtbot, fetcher, 1)
    fetcher.drop_answers()
    assert loader.forgotten == [1] and fetcher.pending() == 0
    loader.loaded.emit(0, [(1, (row(1), None, None))])
    assert fetcher.lates == [[1]] and fetcher.arrivals == []
    fetcher.ask(1)  # asked again, in the new epoch
    assert sent(qtbot, fetcher, 2).asked[1] == (1, [1])


def test_a_row_the_network_failed_shows_failed_until_it_is_asked_again(qtbot, fetcher):
    fetcher.ask(7)
    fetcher.ask(8)
    loader = sent(qtbot, fetcher, 1)
    down = OSError("connection reset")
    loader.loaded.emit(0, [(7, (row(7), down, None)), (8, (row(8), down, None))])
    (arrival,) = fetcher.arrivals
    assert arrival.failure == (7, down) and arrival.kept == []  # one failure told for the batch; nothing cached
    assert fetcher.failed_row(7).length == 7 and fetcher.failed_row(8).length == 8
    fetcher.clock.now += row_fetcher.RETRY_AFTER
    assert fetcher.failed_row(7) is None  # time to ask again
    fetcher.ask(7)
    assert sent(qtbot, fetcher, 2).asked[1] == (0, [7])
    loader.loaded.emit(0, [(7, (row(7), down, None))])
    assert fetcher.arrivals[1].failure is None  # the same failure is not told twice
    loader.loaded.emit(0, [(7, RuntimeError("bug in the row job"))])
    assert fetcher.arrivals[2].kept[0][1].error and fetcher.failed_row(7) is None  # shown unreadable, cached
    fetcher.close()
    fetcher.ask(9)
    assert loader.closed and fetcher.pending() == 0


# -- choosing feature columns ----------------------------------------------------
def test_sample_rows_are_decoded_once_and_give_their_schema_sorted_by_key():
    decoded = [decode_record(example({"b": 1, "a": 2})), None, decode_record(example({"c": 3, "a": 4}))]
    calls = []

    def decode(i):
        calls.append(i)
        return decoded[i]

    samples = SampleRows()
    rows = samples.read(3, decode)
    assert samples.read(3, decode) is rows and calls == [0, 1, 2]
    assert samples.known_schema(3) is None
    assert list(samples.schema(3, rows)) == ["a", "b", "c"] and list(samples.known_schema(3)) == ["a", "b", "c"]
    samples.forget()
    assert samples.known_schema(3) is None and samples.read(2, decode) == decoded[:2] and calls == [0, 1, 2, 0, 1]


def test_default_columns_rank_labels_then_single_values_then_short_lists_whatever_the_order():
    rows = [{"image/encoded": b"\x89PNG\r\n\x1a\n" + bytes(400), "blob": b"\x00\x01", "score": 0.5, "id": "a1",
             "image/object/class/text": [b"cat", b"dog"], "image/object/class/label": [1, 2], "xs": [1.0, 2.0],
             "long": list(range(40)), "category_id": 3},
            {"xs": [0.5], "id": "b2", "category_id": 1, "score": 0.25, "long": list(range(9)),
             "image/object/class/label": [4], "image/object/class/text": [b"owl"], "blob": b"\x02",
             "image/encoded": bytes(300)}]
    forward = schema_of([decode_record(any_example(r)) for r in rows])
    backward = schema_of([decode_record(any_example(dict(reversed(r.items())))) for r in reversed(rows)])
    ranked = ranked_keys(forward)
    assert ranked == ["image/object/class/text", "category_id", "image/object/class/label", "id", "score", "xs"]
    assert ranked_keys(backward) == ranked and schema_signature(backward) == schema_signature(forward)
    assert schema_signature(schema_of([decode_record(any_example({"score": 1}))])) != \
        schema_signature(schema_of([decode_record(any_example({"score": 1.0}))]))  # the kind counts, not only the key
    assert names_labels("label") and names_labels("objects/category_id") and not names_labels("image/filename")


def test_remote_sample_rows_are_asked_and_kept_only_once_all_have_come():
    samples = SampleRows()
    asked = []
    assert samples.fetched(40, asked.append) == [] and asked == list(range(SAMPLE_RECORDS))
    first = decode_record(example({"x": 1}))
    samples.came(0, first)
    samples.came(SAMPLE_RECORDS, first)  # past the samples: ignored
    partial = samples.fetched(2, asked.append)
    assert partial == [first] and asked[SAMPLE_RECORDS:] == [1] and not samples.all_came(2)
    assert list(samples.schema(2, partial)) == ["x"] and samples.known_schema(2) is None  # partial: not kept
    samples.came(1, None)
    assert samples.all_came(2) and samples.fetched(2, asked.append) == [first, None]
    assert list(samples.schema(2, samples.fetched(2, asked.append))) == ["x"] and list(samples.known_schema(2)) == ["x"]


# -- the session owns what the table and the problems list show ----------------------------
def test_the_models_read_the_sessions_records_and_follow_it_when_told(qtbot, tmp_path, fixture_file):
    session = TabSession(TFRecordFile(fixture_file("garbage_middle.tfrecord")))
    table = RecordTableModel(session)
    problems = ProblemListModel(session)
    session.source_changed.connect(table.records_replaced)
    session.source_changed.connect(problems.records_replaced)
    with qtbot.waitSignal(session.finished, timeout=TIMEOUT):
        session.start()
    table.sync()
    assert problems.sync() and problems.rowCount() == len(session.source.problems) > 0
    assert table.records is session.source and table.rowCount() == len(session.source)
    resets = []
    table.modelReset.connect(lambda: resets.append("table"))
    assert session.start_editing()
    assert table.records is session.records is session.edited and problems.records is session.edited
    assert problems.rowCount() == 0 and problems.sync() and problems.rowCount() == len(session.edited.problems)
    assert not problems.sync()  # told once
    session.edited.document.delete([0])
    table.records_changed(None)
    assert resets == ["table"] and table.rowCount() == len(session.source) - 1  # the edited rows, no copy
    path = tmp_path / "other.tfrecord"
    write_records(path, [example({"k": 1})] * 3)
    session.reopen(str(path))  # a save as: another source
    with qtbot.waitSignal(session.finished, timeout=TIMEOUT):
        pass
    table.sync()
    assert table.records is session.source and session.source.path == str(path) and table.rowCount() == 3
    assert problems.sync() and problems.rowCount() == 0
    session.close()
    session.close_source()
