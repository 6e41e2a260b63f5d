"""The record table model over the codec's index, and the worker that feeds it (no widgets)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QModelIndex, Qt

from app.models.record_table_model import BASE_COLUMNS, DAMAGED_TINT, KIND_ROLE, STATUS_ROLE, Column, RecordTableModel
from app.models.records_owner import HeldRecords
from app.workers.worker import GeneratorWorker
from codec.decode.decoder import decode_record, feature_cell
from codec.format.framing import RecordStatus
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.writer import write_records

pytestmark = pytest.mark.gui


@pytest.fixture
def open_model(qapp, fixture_file):
    """``open_model(name)`` -> a model over the fully indexed fixture (closed afterwards)."""
    files = []

    def make(name: str, *, index: bool = True, cache_size: int = 256) -> RecordTableModel:
        f = TFRecordFile(fixture_file(name) if "/" not in name else name)
        files.append(f)
        if index:
            f.build_index()
        model = RecordTableModel(HeldRecords(f), cache_size=cache_size)
        model.sync()
        return model

    yield make
    for f in files:
        f.close()


def cell(model: RecordTableModel, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    return model.data(model.index(row, col), role)


def column_texts(model: RecordTableModel, col: int) -> list[str]:
    return [cell(model, r, col) for r in range(model.rowCount())]


def many_records(path, n: int) -> str:
    write_records(path, (b"record %d" % i for i in range(n)))
    return str(path)


# -- rows -----------------------------------------------------------------
def test_an_index_replaced_by_verify_resets_the_rows(qapp, tmp_path):
    """Verify found a record hidden in a damaged one's span and replaced the index: rows read
    before (and cached) give way to the new index's rows."""
    from tests.codec.test_lossless_damage import hidden_record_file

    path, _ = hidden_record_file(tmp_path)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        model = RecordTableModel(HeldRecords(f))
        model.sync()
        before = column_texts(model, Column.OFFSET)
        f.verify()
        resets: list[bool] = []
        model.modelReset.connect(lambda: resets.append(True))
        model.sync()
        assert resets and len(before) == 3
        assert column_texts(model, Column.OFFSET) == [f"{f.index.offset(i):,}" for i in range(4)]


def test_rows_appear_as_the_index_grows(qapp, tmp_path, qtmodeltester):
    f = TFRecordFile(many_records(tmp_path / "many.tfrecord", 5000))
    model = RecordTableModel(HeldRecords(f))
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    assert model.rowCount() == 0
    passes = f.index_iter()
    next(passes)  # the first batch
    model.sync()
    first_batch = model.rowCount()
    assert 0 < first_batch < 5000
    for _ in passes:
        model.sync()
    assert model.rowCount() == 5000
    assert inserted[0] == (0, first_batch - 1) and inserted[-1][1] == 4999
    assert model.sync() == 0  # nothing new: no signal
    qtmodeltester.check(model)
    f.close()


def test_headers_and_fixed_columns(open_model, manifest):
    model = open_model("structured.tfrecord")
    assert model.rowCount() == len(manifest["structured.tfrecord"]["records"])
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(BASE_COLUMNS)]
    assert headers == ["#", "Offset", "Size", "Kind", "Status"]
    for r in (0, 1, 99):
        info = model.records.record_info(r)
        assert cell(model, r, Column.INDEX) == str(r)
        assert cell(model, r, Column.OFFSET) == f"{info.offset:,}"
        assert cell(model, r, Column.SIZE) == f"{info.length:,}"
        assert info.length == manifest["structured.tfrecord"]["records"][r]["length"]


@pytest.mark.parametrize("name, kind", [
    ("my_example.tfrecords", "Example"),
    ("sequence_examples.tfrecord", "SequenceExample"),
    ("raw_strings.tfrecord", "raw"),
    ("structured.tfrecord.gz", "Example"),
    ("structured.zlib.tfrecord", "Example"),
])
def test_kind_column_matches_the_manifest(open_model, manifest, name, kind):
    model = open_model(name)
    records = manifest[name]["records"]
    assert model.rowCount() == len(records)
    expected = {"example": "Example", "sequence_example": "SequenceExample", "raw": "raw"}
    assert column_texts(model, Column.KIND) == [expected[r["kind"]] for r in records]
    assert set(column_texts(model, Column.KIND)) == {kind}
    assert cell(model, 0, Column.KIND, KIND_ROLE).value == records[0]["kind"]


def test_data_crc_damage_shows_once_the_row_is_read(open_model):
    model = open_model("corrupt_data_crc.tfrecord")
    assert model.rowCount() == 30
    assert model.records.index.status(5) is RecordStatus.UNCHECKED  # the index pass does not read data
    statuses = column_texts(model, Column.STATUS)  # showing a row reads it and checks its CRC
    assert statuses[5] == "data CRC bad"
    assert statuses[:5] + statuses[6:] == ["ok"] * 29
    assert cell(model, 5, Column.STATUS, STATUS_ROLE) is RecordStatus.DATA_CRC
    assert cell(model, 5, Column.KIND, Qt.ItemDataRole.BackgroundRole) == DAMAGED_TINT
    assert cell(model, 4, Column.KIND, Qt.ItemDataRole.BackgroundRole) is None
    assert not cell(model, 5, Column.STATUS, Qt.ItemDataRole.DecorationRole).isNull()


def test_verified_damage_has_its_problem_as_tooltip(open_model, fixture_file):
    f = TFRecordFile(fixture_file("corrupt_data_crc.tfrecord"))
    f.build_index(verify=True)
    model = RecordTableModel(HeldRecords(f))
    model.sync()
    tip = cell(model, 5, Column.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("data CRC: data CRC stored") and "data_crc" not in tip
    assert "bit rot" in tip and "tf.data stops with DataLossError" in tip
    f.close()


def test_truncated_tail_is_the_last_row(open_model):
    model = open_model("truncated.tfrecord")
    assert model.rowCount() == 21
    assert cell(model, 20, Column.STATUS) == "truncated"
    assert cell(model, 20, Column.STATUS, STATUS_ROLE) is RecordStatus.TRUNCATED
    assert cell(model, 20, Column.KIND) == "—"
    assert column_texts(model, Column.STATUS)[:20] == ["ok"] * 20


def test_records_after_skipped_garbage_are_flagged(open_model):
    model = open_model("garbage_middle.tfrecord")
    assert model.rowCount() == 27
    statuses = column_texts(model, Column.STATUS)
    assert statuses[10] == "ok, after skipped bytes"
    assert statuses.count("ok") == 26
    assert "skipped" in cell(model, 10, Column.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert cell(model, 10, Column.STATUS, STATUS_ROLE) is not None
    assert not cell(model, 10, Column.STATUS, STATUS_ROLE).damaged


def test_length_crc_recovered_record(tmp_path, open_model):
    data = [b"alpha" * 10, b"beta" * 10, b"gamma" * 10]
    path = tmp_path / "len.tfrecord"
    write_records(path, data)
    blob = bytearray(path.read_bytes())
    blob[8 + 16 + 50] ^= 0x01  # a bit of record 1's length CRC
    path.write_bytes(bytes(blob))
    model = open_model(str(path))
    assert model.rowCount() == 3
    assert cell(model, 1, Column.STATUS, STATUS_ROLE) is RecordStatus.LENGTH_CRC
    assert "recovered" in cell(model, 1, Column.STATUS)


# -- feature columns -------------------------------------------------------
def test_default_feature_columns_put_labels_first_and_never_images(open_model):
    model = open_model("detection.tfrecord")
    keys = model.sample_keys()
    assert keys == sorted(keys) and "image/encoded" in keys and "image/object/bbox/xmin" in keys
    ranked = model.default_feature_columns()
    assert ranked[:2] == ["image/object/class/text", "image/object/class/label"]  # class names, then their ids
    assert ranked[2:7] == ["image/filename", "image/format", "image/source_id", "image/height", "image/width"]
    assert "image/encoded" not in ranked  # an image is never a default column
    model.set_feature_columns(ranked[:4])
    assert model.columnCount() == BASE_COLUMNS + 4
    assert model.headerData(BASE_COLUMNS, Qt.Orientation.Horizontal) == "…/class/text"
    assert "image/object/class/text" in model.headerData(BASE_COLUMNS, Qt.Orientation.Horizontal,
                                                         Qt.ItemDataRole.ToolTipRole)


def test_feature_cells_match_the_codec(open_model, qtmodeltester):
    model = open_model("flowers_jpeg.tfrecord")
    model.set_feature_columns(["label", "encoded", "text"])
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(BASE_COLUMNS, 8)] == \
        ["label", "encoded", "text"]
    decoded = decode_record(model.records.read(3).data)
    assert cell(model, 3, BASE_COLUMNS) == feature_cell(decoded, "label")
    assert cell(model, 3, BASE_COLUMNS + 1).startswith("<JPEG")
    model.set_feature_columns(["text"])
    assert model.columnCount() == BASE_COLUMNS + 1
    assert cell(model, 3, BASE_COLUMNS) == feature_cell(decoded, "text")
    qtmodeltester.check(model)


def test_sequence_example_feature_lists_are_columns_too(open_model):
    model = open_model("sequence_examples.tfrecord")
    keys = model.sample_keys()
    assert {"my_bytes", "length", "my_ints", "frames"} <= set(keys)
    model.set_feature_columns(["frames"])
    assert [cell(model, r, BASE_COLUMNS) for r in range(3)] == ["1 step", "2 steps", "3 steps"]


def test_raw_records_have_empty_feature_cells(open_model):
    model = open_model("raw_strings.tfrecord")
    assert model.sample_keys() == []
    model.set_feature_columns(["anything"])
    assert cell(model, 0, BASE_COLUMNS) == ""


# -- laziness ----------------------------------------------------------------
def test_only_rows_asked_for_are_decoded_and_the_cache_is_bounded(qapp, tmp_path):
    f = TFRecordFile(many_records(tmp_path / "many.tfrecord", 3000))
    f.build_index()
    model = RecordTableModel(HeldRecords(f), cache_size=64)
    model.sync()
    assert model.rowCount() == 3000
    assert model.cached_rows == 0
    assert cell(model, 2500, Column.KIND) == "raw"
    assert model.cached_rows == 1
    assert f.index.status(2499) is RecordStatus.UNCHECKED  # its neighbours were never read
    for r in range(500):
        cell(model, r, Column.SIZE)
    assert model.cached_rows == 64
    f.close()


def test_model_never_shows_dialogs_it_reports_unreadable_rows(open_model, qtbot):
    model = open_model("structured.tfrecord")
    model.records.close()  # reading now fails
    with qtbot.waitSignal(model.failed, timeout=1000) as blocker:
        text = cell(model, 7, Column.KIND)
    assert text == "unreadable"
    assert "record 7" in blocker.args[0] and "\n" not in blocker.args[0]


def test_invalid_indexes(open_model):
    model = open_model("structured.tfrecord")
    assert model.data(QModelIndex()) is None
    assert model.data(model.index(500, 0)) is None
    assert model.rowCount(model.index(0, 0)) == 0


# -- the worker --------------------------------------------------------------
def test_worker_feeds_the_model_from_another_thread(qtbot, tmp_path):
    f = TFRecordFile(many_records(tmp_path / "many.tfrecord", 200_000))
    model = RecordTableModel(HeldRecords(f))
    worker = GeneratorWorker(f.index_iter)
    seen: list[int] = []
    worker.progress.connect(lambda p: seen.append(p.records))
    worker.progress.connect(lambda p: model.sync())
    worker.finished.connect(lambda p: model.sync())
    with qtbot.waitSignal(worker.finished, timeout=30000) as blocker:
        worker.start()
    assert blocker.args[0].done
    assert model.rowCount() == 200_000
    assert seen and seen[0] < 200_000  # rows arrived before the end
    worker.wait()
    f.close()


def test_worker_failure_is_one_line(qtbot):
    def boom():
        yield 1
        raise ValueError("first line\nsecond line")

    worker = GeneratorWorker(boom)
    with qtbot.waitSignal(worker.failed, timeout=5000) as blocker:
        worker.start()
    assert blocker.args == ["first line"]
    worker.wait()


def test_worker_cancel_stops_at_the_next_yield(qtbot):
    import threading

    release = threading.Event()
    steps: list[int] = []

    def slow():
        for i in range(1000):
            steps.append(i)
            yield i
            release.wait(5)

    worker = GeneratorWorker(slow)
    with qtbot.waitSignal(worker.progress, timeout=5000):
        worker.start()
    with qtbot.waitSignal(worker.finished, timeout=5000):
        worker.cancel()
        release.set()
    worker.wait()
    assert worker.cancelled
    assert len(steps) < 1000


def test_worker_pauses_while_a_view_paints(qtbot, monkeypatch):
    # A repaint makes hundreds of calls into Python; the worker must not
    # compete for the GIL meanwhile, so it stops at its next yield until the
    # paint ends (PAINT_WAIT_MAX raised so a slow machine cannot time it out).
    import app.workers.worker as worker_module

    monkeypatch.setattr(worker_module, "PAINT_WAIT_MAX", 30.0)
    steps: list[int] = []

    def count():
        for i in range(500):
            steps.append(i)
            yield i

    worker = GeneratorWorker(count)
    with worker_module.PAINT_GATE.painting():
        worker.start()
        qtbot.waitUntil(lambda: len(steps) >= 1, timeout=5000)
        assert not worker.wait(300)  # still running: it is held at the gate
        assert len(steps) == 1
    with qtbot.waitSignal(worker.finished, timeout=5000) as blocker:
        pass
    assert blocker.args[0] == 499 and len(steps) == 500
    worker.wait()


def test_table_paint_closes_the_gate(qtbot, tmp_path, monkeypatch):
    import app.workers.worker as worker_module
    from app.views.record_table_view import RecordTableView

    seen: list[int] = []
    original = RecordTableModel._value

    def spy(self, i, col, role, status=None):
        seen.append(worker_module.PAINT_GATE._busy)
        return original(self, i, col, role, status)

    monkeypatch.setattr(RecordTableModel, "_value", spy)
    f = TFRecordFile(many_records(tmp_path / "few.tfrecord", 50))
    f.build_index()
    model = RecordTableModel(HeldRecords(f))
    model.sync()
    view = RecordTableView()
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    qtbot.waitExposed(view)
    seen.clear()
    view.grab()  # renders the view: every visible cell is painted
    assert seen and all(busy == 1 for busy in seen)
    assert worker_module.PAINT_GATE._busy == 0
    f.close()
