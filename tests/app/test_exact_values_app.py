"""Every protobuf scalar type in the app, through the real main window and File > Decode As…:
the table's cell and the tree's value read the same, exactly (docs/exact-values.md)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from app.models.record_table_model import BASE_COLUMNS, KIND_ROLE, Column
from codec.decode.decoded import RecordKind
from tests.app.test_decode_as import decode_as
from tests.codec.test_exact_values import present, value_text
from tests.gui_helpers import open_done
from tests.scalar_messages import write_scalar_files

pytestmark = pytest.mark.gui
TIMEOUT = 20000


@pytest.mark.parametrize("syntax", ["proto2", "proto3"])
def test_table_and_tree_show_each_scalar_the_same_exact_way(window, qtbot, tmp_path, syntax):
    desc, data, messages = write_scalar_files(tmp_path, syntax)
    tab = open_done(window, qtbot, data)
    with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
        decode_as(window, desc, f"lens.{syntax}.Scalars")
    model = tab.model
    qtbot.waitUntil(lambda: model.data(model.index(0, Column.KIND), KIND_ROLE) is RecordKind.MESSAGE,
                    timeout=TIMEOUT)
    keys = sorted(name for name in messages[0].DESCRIPTOR.fields_by_name if not name.startswith("r_"))
    model.set_feature_columns(keys)
    assert model.feature_columns() == keys

    for record, message in enumerate(messages):
        fields = {name: values[0] for name, values in present(message).items() if not name.startswith("r_")}
        want = {key: value_text(key, fields[key]) if key in fields else "" for key in keys}
        table = {key: model.data(model.index(record, BASE_COLUMNS + c)) for c, key in enumerate(keys)}
        assert table == want, record

        if tab.current_record() != record:
            with qtbot.waitSignal(tab.detail.record_shown, timeout=TIMEOUT):
                tab.select_record(record)
        qtbot.waitUntil(lambda: tab.detail.current_record() == record and tab.detail.loaded() is not None,  # noqa: B023
                        timeout=TIMEOUT)
        tree = tab.detail.tree_model
        root = tree.root_index()
        tree.show_more(root, tree.hidden_count(root))  # past the first chunk: created_ms is field 200
        rows = [tree.index(r, 0, root) for r in range(tree.rowCount(root))]
        shown = {tree.data(i): tree.data(i.siblingAtColumn(2)) for i in rows}
        assert {key: shown[key] for key in fields} == {key: want[key] for key in fields}, record
    assert "18446744073709551615" in {model.data(model.index(r, BASE_COLUMNS + keys.index("f_uint64")))
                                      for r in range(len(messages))}


def test_statistics_panel_lists_bools_doubles_and_uint64_exactly(window, qtbot, tmp_path):
    from app.views.stats_panel import CHART, SUMMARY, TYPE

    desc, data, messages = write_scalar_files(tmp_path, "proto2")
    tab = open_done(window, qtbot, data)
    panel = tab.qa.stats_panel()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        window.qa.show_statistics()
    with qtbot.waitSignal(panel.stats_ready, timeout=TIMEOUT):
        decode_as(window, desc, "lens.proto2.Scalars")
    flags = panel.feature_row("f_bool")
    true = sum(m.f_bool for m in messages)
    assert flags and flags[TYPE].data() == "bool"
    assert flags[SUMMARY].data() == f"true {true}\nfalse {len(messages) - true}"
    assert f"true ×{true}" in flags[CHART].data()
    doubles = panel.feature_row("f_double")
    assert doubles and doubles[TYPE].data() == "float64"
    big = panel.feature_row("f_uint64")
    assert big[TYPE].data() == "int64" and "max 18,446,744,073,709,551,615" in big[SUMMARY].data()
