"""Embeddings in the window: the heat strip in the Tree, and the projection dock (run, points, click)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from codec import write_records
from tests.app.test_tfds_app import tree_rows
from tests.builders import example
from tests.gui_helpers import open_done

TIMEOUT = 20000


def _embedding_file(tmp_path, n: int = 300) -> str:
    rng = np.random.default_rng(5)
    centres = rng.normal(0, 5, (3, 16))
    records = [example(emb=(centres[i % 3] + rng.normal(0, 0.3, 16)).astype(np.float32), label=i % 3,
                       short=np.ones(4, dtype=np.float32)) for i in range(n)]
    path = tmp_path / "embeddings.tfrecord"
    write_records(str(path), records)
    return str(path)


def test_an_embedding_shows_as_a_heat_strip_in_the_tree(window, qtbot, tmp_path):
    tab = open_done(window, qtbot, _embedding_file(tmp_path, 5))
    model, rows = tree_rows(qtbot, tab, 1)
    strip = rows["emb"].siblingAtColumn(2).data(Qt.ItemDataRole.DecorationRole)
    assert isinstance(strip, QImage) and not strip.isNull()
    assert strip.width() > strip.height()
    assert len({strip.pixel(x, strip.height() // 2) for x in range(0, strip.width(), 10)}) > 3  # the values differ
    for key in ("short", "label"):  # 4 floats, an int: no strip
        assert rows[key].siblingAtColumn(2).data(Qt.ItemDataRole.DecorationRole) is None


def test_the_projection_runs_draws_its_points_and_a_click_selects_the_record(window, qtbot, tmp_path):
    tab = open_done(window, qtbot, _embedding_file(tmp_path))
    view = tab.qa.projection_view()
    with qtbot.waitSignal(view.projection_ready, timeout=TIMEOUT) as ready:
        window.qa.projection_action.trigger()
    assert window.qa.projection_dock.isVisible() and window.qa.projection_dock.widget().currentWidget() is view
    projection = ready.args[0]
    assert view.embedding_keys() == {"emb": 16}
    assert projection.key == "emb" and len(projection.records) == 300
    assert projection.label_names == ["0", "1", "2"] and view.legend.count() == 3
    canvas = view.canvas
    assert canvas.point_count() == 300
    qtbot.waitUntil(lambda: canvas.isVisible() and canvas.width() > 100, timeout=TIMEOUT)
    k = 137
    at = canvas.position_of(k)
    hit = canvas.point_at(at)
    assert hit >= 0 and projection.labels[hit] == projection.labels[k]  # the clusters are tight: a neighbour at worst
    record = int(projection.records[hit])
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: tab.selection.current_record() == record, timeout=TIMEOUT)
    assert tab.detail.current_record() == record
