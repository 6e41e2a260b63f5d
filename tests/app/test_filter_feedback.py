"""The filter bar tells a misspelt feature name from an empty result, through the real main window."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt

from codec.decode.example_proto import Example
from codec.storage.writer import write_records
from tests.gui_helpers import open_done

TIMEOUT = 20000


def type_and_run(qtbot, bar, text: str) -> None:
    """Type ``text`` into the filter box as a user would, press Enter, wait for the result."""
    bar.edit.setFocus()
    bar.edit.clear()
    qtbot.keyClicks(bar.edit, text)
    assert bar.text() == text
    with qtbot.waitSignal(bar.filter_applied, timeout=TIMEOUT):
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)


def test_a_misspelt_key_is_named_with_the_closest_key(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    messages = []
    bar.message.connect(messages.append)
    type_and_run(qtbot, bar, "image/object/clas/label == 3")
    assert bar.count_text() == "0 of 12 records match"
    note = bar.error_text()
    assert "no record has feature 'image/object/clas/label' \N{EM DASH} did you mean " \
           "'image/object/class/label'?" in note
    assert note.splitlines()[0] == "image/object/clas/label == 3"
    assert note.splitlines()[1].startswith("^ no record has")  # the caret under the name, at position 0
    assert messages[-1].startswith("filter: no record has feature 'image/object/clas/label'")
    # fixed and run again: the note goes, the matches come
    type_and_run(qtbot, bar, "image/object/class/label == 1")
    assert bar.error_text() == ""
    shown = tab.table.model().rowCount()
    assert 0 < shown < 12 and bar.count_text() == f"{shown} of 12 records match"


def test_the_caret_points_at_the_unknown_name_not_the_known_one(window, qtbot):
    tab = open_done(window, qtbot, "detection.tfrecord")
    bar = tab.qa.filter_bar
    type_and_run(qtbot, bar, "image/width > 0 and xmin < 0.5")
    note = bar.error_text().splitlines()
    assert note[1] == " " * 20 + "^ no record has feature 'xmin' \N{EM DASH} did you mean 'image/object/bbox/xmin'?"
    assert bar.count_text() == "0 of 12 records match"


def test_no_note_for_a_key_only_the_last_record_has(window, qtbot, tmp_path):
    """The note comes from the whole pass, so a rare key past any sample is no misspelling."""
    records = []
    for i in range(1200):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(i % 3)
        if i == 1199:
            ex.features.feature["rare"].int64_list.value.append(7)
        records.append(ex.SerializeToString())
    path = tmp_path / "rare.tfrecord"
    write_records(str(path), records)
    tab = open_done(window, qtbot, str(path))
    bar = tab.qa.filter_bar
    type_and_run(qtbot, bar, "rare == 7")
    assert bar.count_text() == "1 of 1,200 records match" and bar.error_text() == ""
    type_and_run(qtbot, bar, "raer == 7")
    assert "no record has feature 'raer'" in bar.error_text()
    # a missing feature the expression is right to ask about still gets the note, and its matches
    type_and_run(qtbot, bar, "not has(lable) and label == 1")
    assert "no record has feature 'lable' \N{EM DASH} did you mean 'label'?" in bar.error_text()
    assert bar.count_text() == "400 of 1,200 records match"
