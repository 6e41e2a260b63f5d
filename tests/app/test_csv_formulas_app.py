"""The Export dialog's CSV option: cells a spreadsheet would run as formulas are escaped unless unticked."""
from __future__ import annotations

import csv

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.models.settings import Settings  # noqa: E402
from app.shell.main_window import MainWindow  # noqa: E402
from benchmarks.attacks_payloads import FORMULA, formula_file  # noqa: E402
from tests.gui_helpers import open_done  # noqa: E402

pytestmark = pytest.mark.gui
TIMEOUT = 20000


@pytest.fixture
def window(qtbot) -> MainWindow:
    w = MainWindow(Settings())
    qtbot.addWidget(w)
    w.show()
    return w


def _export(qtbot, dialog, out) -> dict:
    dialog.set_format("csv")
    dialog.output.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=TIMEOUT) as blocker:
        assert dialog.start(), dialog.note.text()
    assert blocker.args[0] is not None, dialog.message
    with open(out, newline="") as f:
        return next(csv.DictReader(f))


def test_the_export_dialog_escapes_formula_cells_by_default(window, qtbot, tmp_path):
    open_done(window, qtbot, str(formula_file(tmp_path)))
    dialog = window.edit_actions.export_current()
    qtbot.addWidget(dialog)
    dialog.set_format("tfrecord")
    assert not dialog.escape_formulas.isEnabled()  # a CSV choice only
    dialog.set_format("csv")
    assert dialog.escape_formulas.isEnabled() and dialog.escape_formulas.isChecked()
    row = _export(qtbot, dialog, tmp_path / "escaped.csv")
    assert row["link"] == "'" + FORMULA.decode() and row["count"] == "-3"
    assert "cell(s) starting with =" in window.statusBar().currentMessage()
    dialog.escape_formulas.setChecked(False)
    row = _export(qtbot, dialog, tmp_path / "kept.csv")
    assert row["link"] == FORMULA.decode()
    dialog.close()
