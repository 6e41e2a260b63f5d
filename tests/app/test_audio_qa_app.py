"""Audio in the Statistics panel and the Dataset Check panel, through the real main window."""
from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

import soundfile as sf  # noqa: E402

from app.models.findings_model import check_title  # noqa: E402
from app.views import charts  # noqa: E402
from app.views.stats_panel import CHART, CHART_ROLE, ISSUES, SUMMARY, TYPE  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import example  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

TIMEOUT = 60000


def _wav(samples: np.ndarray, rate: int) -> bytes:
    out = io.BytesIO()
    sf.write(out, samples, rate, format="WAV", subtype="PCM_16")
    return out.getvalue()


def _clips(tmp_path) -> str:
    """Records 0-2: 0.1 s at 16 kHz; 3: 0.2 s at 8 kHz, stereo; 4: silent; 5: a WAV cut short."""
    tone = np.sin(np.arange(1600) / 5) * 0.5
    good = _wav(tone, 16000)
    records = [example({"audio/encoded": good, "label": k}) for k in range(3)]
    records.append(example({"audio/encoded": _wav(np.stack([tone, tone], axis=1), 8000), "label": 3}))
    records.append(example({"audio/encoded": _wav(np.zeros(1600), 16000), "label": 4}))
    records.append(example({"audio/encoded": good[:30], "label": 5}))
    path = tmp_path / "clips.tfrecord"
    write_records(str(path), records)
    return str(path)


def test_statistics_panel_shows_an_audio_feature(window, qtbot, tmp_path):
    tab = open_done(window, qtbot, _clips(tmp_path))
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    row = panel.feature_row("audio/encoded")
    assert row[TYPE].data() == "bytes · audio"
    assert row[SUMMARY].data() == "wav 6\n0.1–0.2 s\n16,000, 8,000 Hz · 1, 2 ch"
    assert row[ISSUES].data() == "1 audio value(s) do not decode"
    kind, durations, low, high, rates, channels = row[CHART].data(CHART_ROLE)
    assert (kind, sum(durations), low, high) == ("audio", 5, "0.1 s", "0.2 s")
    assert rates == [("16 kHz", 4), ("8 kHz", 1)] and channels == [("1 ch", 4), ("2 ch", 1)]
    assert row[CHART].data() == "audio: 0.1–0.2 s; 16,000 Hz ×4, 8,000 Hz ×1; 1 ch ×4, 2 ch ×1"
    # The chart is painted: the sample-rate and channel columns in the alternate bar colour.
    panel.tree.scrollTo(row[CHART])
    image = panel.tree.viewport().grab(panel.tree.visualRect(row[CHART])).toImage()
    colors = {image.pixelColor(x, y).rgb() for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)}
    assert charts.BAR_ALT_COLOR.rgb() in colors and charts.BAR_COLOR.rgb() in colors


def test_dataset_check_lists_the_audio_findings(window, qtbot, tmp_path):
    open_done(window, qtbot, _clips(tmp_path))
    tab = window.current_tab()
    check = window.checks.check_for(tab)
    with qtbot.waitSignal(check.runner.finished, timeout=TIMEOUT) as blocker:
        window.checks.show_check()
    _paths, report, cancelled = blocker.args
    assert not cancelled
    model = check.panel.model
    for kind, records in (("audio_decode", [5]), ("audio_silent", [4]), ("audio_sample_rate", [3])):
        assert model.count(kind) == 1
        row = model.check_index(kind)
        assert row.data() == f"{check_title(kind)} (1)"
        [finding] = [f for f in model.findings() if f.check == kind]
        assert [r.index for r in finding.records] == records
    assert model.count("audio_clipped") == 0
