"""Statistics gathered a batch of columnar-decoded records at a time equal those gathered record by record
through protobuf, byte for byte, whatever the batch size."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec.stats.file_stats
from codec.stats.file_stats import FileStats

from .test_query import example
from .test_query_columns import records


def _report(data: list[bytes], batched: bool) -> str:
    stats = FileStats()
    for d in data:
        (stats.add if batched else stats.add_one)(d)
        stats.counts.visited += 1
    return json.dumps(stats.to_json(), sort_keys=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(records(), max_size=60), st.sampled_from([1, 7, 2048]))
def test_batches_give_the_record_by_record_report(monkeypatch, data, batch):
    monkeypatch.setattr(codec.stats.file_stats, "BATCH", batch)
    assert _report(data, True) == _report(data, False)


def test_a_batch_still_waiting_is_in_the_report_and_in_a_merge():
    data = [example(label=[k, 2 * k], name=["x"]) for k in range(5)] + [b"\n\x02\n\x00", b"raw"]  # under a batch
    one, other = FileStats(), FileStats()
    for d in data:
        one.add(d)
        other.add(d)
    one.merge(other)
    expected = FileStats()
    for d in data * 2:
        expected.add_one(d)
    assert one.to_json() == expected.to_json() and one.kinds["example"] >= 3
