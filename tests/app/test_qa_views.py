"""QaViews without the window: the filter bar, the gallery and the table kept on one record, and what
the whole-file passes read, over a session of a reference fixture, its table, selection and detail."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtWidgets import QVBoxLayout

from app.models.settings import Settings
from app.shell.qa_views import QaViews
from tests.app.tab_parts import TIMEOUT, TabParts

pytestmark = pytest.mark.gui


@pytest.fixture
def qa_over(tab_parts):
    def make(name: str, **options) -> tuple[TabParts, QaViews]:
        parts = tab_parts(name, **options)
        qa = QaViews(parts.session, parts.rows, parts.selection, parts.table, parts.detail, Settings(), parts.host)
        parts.closing(qa.close)
        layout = QVBoxLayout(parts.host)
        layout.addWidget(qa.around(parts.table))  # the filter bar over "Table | Gallery", as the tab lays them out
        parts.host.show()
        return parts, qa

    return make


def filtered(qtbot, qa: QaViews, text: str) -> None:
    """Run the filter ``text`` and wait until its matches are the rows shown."""
    assert qa.filter_bar.run(text)
    qtbot.waitUntil(lambda: not qa.filter_bar.is_running() and qa.rows.is_filtered, timeout=TIMEOUT)


def test_a_filter_keeps_the_record_shown_when_it_matches_else_shows_the_first_match(qtbot, qa_over):
    parts, qa = qa_over("structured.tfrecord")
    parts.select(60)
    filtered(qtbot, qa, "int_col >= 50")
    assert parts.rows.rowCount() == 50 and "50 of 100" in qa.filter_bar.count_text()
    assert parts.selection.current_record() == 60  # still shown: it matches
    filtered(qtbot, qa, "int_col < 10")
    assert parts.rows.rowCount() == 10
    qtbot.waitUntil(lambda: parts.detail.current_record() == 0, timeout=TIMEOUT)  # the first match
    assert parts.selection.current_record() == 0
    qa.filter_bar.clear()
    assert parts.rows.rowCount() == 100 and not parts.rows.is_filtered


def test_the_gallery_follows_the_table_and_holds_the_same_rows(qtbot, qa_over):
    parts, qa = qa_over("flowers_jpeg.tfrecord")
    parts.select(7)  # while the table is shown: the gallery catches up when it is shown
    qa.show_gallery()
    assert qa.gallery.model.active and qa.gallery.current_record() == 7
    parts.select(9)
    assert qa.gallery.current_record() == 9
    filtered(qtbot, qa, "label == 3")
    # matches reach the grid in batches as they are found (APPEND_DELAY_MS apart at most)
    qtbot.waitUntil(lambda: qa.gallery.model.rowCount() == parts.rows.rowCount() == 5, timeout=TIMEOUT)
    assert [qa.gallery.model.record_at(r) for r in range(5)] == [parts.rows.record_at(r) for r in range(5)]
    assert qa.gallery.current_record() == parts.selection.current_record()


def test_passes_read_the_file_until_it_has_edits_then_the_edited_records(qa_over):
    parts, qa = qa_over("structured.tfrecord", editing=True)
    session = parts.session
    assert qa.source() is session.source  # no edits: a pass over the file keeps its results
    first = session.source.read(0).data
    session.records.document.delete([0])
    assert qa.source() is session.records and len(qa.source()) == 99
    assert qa.read(0).data == session.source.read(1).data != first  # the table's row 0, as edited


def test_a_verified_records_damage_shows_in_its_status(qa_over):
    parts, qa = qa_over("corrupt_data_crc.tfrecord", verify=True)
    assert qa.status(5).damaged and not qa.status(4).damaged
    assert qa.read(4).data == parts.session.source.read(4).data


def test_the_panels_are_made_once_and_dropped_on_close(qa_over):
    _, qa = qa_over("structured.tfrecord")
    stats, spec = qa.stats_panel(), qa.schema_view()
    assert qa.stats_panel() is stats and qa.schema_view() is spec
    qa.close()
    assert stats.parent() is None and spec.parent() is None and not qa.filter_bar.is_running()
