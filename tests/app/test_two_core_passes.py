"""The filter bar and the Statistics panel use both cores on a big file, through the real main window,
and show exactly what one process finds (matches, statistics, and the damage a worker met)."""
from __future__ import annotations

import multiprocessing

import pytest

pytest.importorskip("PySide6.QtWidgets")

import codec.parallel.pool
import codec.stats.filter_pool
import codec.stats.pool
from codec import TFRecordFile
from codec.query.filter import compile_filter, matching_indices
from codec.stats.file_stats import compute_stats
from tests.codec.test_parallel_stats import _big_file
from tests.gui_helpers import open_done

TIMEOUT = 60000


@pytest.fixture
def pooled(monkeypatch):
    """Pool passes for any input size, on two workers however many cores CI has; counts the pool's runs."""
    runs = []
    monkeypatch.setattr(codec.stats.pool, "SMALL_INPUT", 0)
    monkeypatch.setattr(codec.parallel.pool, "available_cores", lambda: 2)
    merge = codec.stats.pool.pool_merge_iter

    def counted(source, result, runner, *args, **kwargs):
        runs.append(runner.__name__)
        return (yield from merge(source, result, runner, *args, **kwargs))

    monkeypatch.setattr(codec.stats.pool, "pool_merge_iter", counted)
    return runs


def _expected(path, where: str):
    with TFRecordFile(path) as f:
        f.build_index()
        return list(matching_indices(f, compile_filter(where))), compute_stats(f).to_json(), len(f)


@pytest.mark.slow
def test_filter_and_statistics_on_the_pool_equal_one_process(window, qtbot, tmp_path, pooled):
    path = _big_file(tmp_path)
    where = "label == 3 or name == 'n7'"
    matches, stats, n = _expected(path, where)
    tab = open_done(window, qtbot, str(path))
    bar = tab.qa.filter_bar
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        assert bar.run(where)
    assert pooled == ["FilterRunner"]
    model = tab.table.model()
    assert model.rowCount() == len(matches) and bar.count_text() == f"{len(matches):,} of {n:,} records match"
    assert [model.mapToSource(model.index(r, 0)).row() for r in (0, len(matches) - 1)] == [matches[0], matches[-1]]
    # The damaged record a worker met is one of the file's problems in the app too.
    damaged = [p for p in tab.corruption.model.problems() if p.kind == "data_crc"]
    assert len(damaged) == 1
    bar.clear()
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    assert pooled == ["FilterRunner", "StatsRunner"]
    assert panel.stats_json() == stats
    assert multiprocessing.active_children() == []
