"""CorruptionTools without the window: the problem list, the map and what a picked problem selects,
over a session of a damaged reference fixture, its table, selection and detail."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.models.problem_list_model import ProblemColumn
from app.shell.corruption_tools import CorruptionTools
from codec.format.framing import ProblemKind
from tests.app.tab_parts import TIMEOUT, TabParts, highlighted
from tests.builders import MANIFEST

pytestmark = pytest.mark.gui


@pytest.fixture
def tools_over(tab_parts):
    def make(name: str, *, verify: bool = True) -> tuple[TabParts, CorruptionTools]:
        parts = tab_parts(name, verify=verify)
        tools = CorruptionTools(parts.session, parts.selection, parts.table, parts.detail, parts.host)
        tools.refresh()  # what the session's state_changed makes it do as the passes go
        return parts, tools

    return make


def cells(tools: CorruptionTools, row: int) -> dict:
    return {col: tools.model.index(row, col).data() for col in ProblemColumn}


def test_the_problem_list_holds_what_the_passes_found(tools_over):
    entry = MANIFEST["garbage_middle.tfrecord"]["corruption"]
    parts, tools = tools_over("garbage_middle.tfrecord")
    assert tools.model.rowCount() == 1 and not tools.panel.isHidden()  # problems open the panel
    row = cells(tools, 0)
    assert row[ProblemColumn.OFFSET] == f"{entry['offset']:,}" and row[ProblemColumn.RECORD] == "—"
    assert row[ProblemColumn.KIND] == "length CRC, 237 bytes skipped"
    (mark,) = tools.map.marks()
    assert (mark.start, mark.end) == (entry["offset"], entry["offset"] + 237)


def test_a_clean_file_has_no_problems_and_no_panel(tools_over):
    _, tools = tools_over("structured.tfrecord")
    assert tools.model.rowCount() == 0 and tools.map.marks() == [] and tools.panel.isHidden()


def test_a_problem_in_a_record_selects_it_and_highlights_its_data_and_footer(qtbot, tools_over):
    parts, tools = tools_over("corrupt_data_crc.tfrecord")
    (problem,) = tools.model.problems()
    assert problem.kind is ProblemKind.DATA_CRC and tools.record_for(problem) == 5
    tools.show_problem(problem)
    qtbot.waitUntil(lambda: parts.detail.current_record() == 5 and parts.detail.loaded() is not None,
                    timeout=TIMEOUT)
    assert parts.selection.current_record() == 5
    info = parts.session.source.record_info(5)
    qtbot.waitUntil(lambda: bool(highlighted(parts.detail)), timeout=TIMEOUT)
    assert highlighted(parts.detail) == list(range(info.offset + 12, info.end))  # data + footer, not the header


def test_damage_between_records_picks_the_next_record_found(tools_over):
    parts, tools = tools_over("garbage_middle.tfrecord")
    source = parts.session.source
    assert tools.select_near(800) == 10  # inside the 237 skipped bytes from 725: the record after them
    assert parts.selection.current_record() == 10
    far = source.index.offset(20)
    assert tools.select_near(far + 5) == 20  # elsewhere: the record at that byte
    (gap,) = tools.model.problems()
    assert tools.record_for(gap) == 10
