"""The compact offset index: growth, copies, and statuses kept while it grows."""
from __future__ import annotations

import numpy as np

from codec.format.framing import RecordStatus
from codec.index.record_index import CHUNK, FIRST_CAPACITY, RecordIndex


def test_a_small_index_stays_small_and_a_large_one_uses_full_chunks():
    small = RecordIndex()
    small.append([0, 12, 30])
    assert small.nbytes == FIRST_CAPACITY * 9  # not CHUNK entries for three records
    assert small.offsets().tolist() == [0, 12, 30] and small.statuses().tolist() == [0, 0, 0]
    big = RecordIndex()
    expected = []
    for n in (3, 1000, 5000, CHUNK, 1, 3 * CHUNK + 17):  # across the growth of the first chunk and later ones
        batch = np.arange(len(expected), len(expected) + n, dtype=np.uint64) * 7
        big.append(batch, RecordStatus.OK)
        expected.extend(batch.tolist())
    assert len(big) == len(expected) and big.offsets().tolist() == expected
    assert big.statuses().shape == (len(expected),) and set(big.statuses().tolist()) == {int(RecordStatus.OK)}
    assert [big.offset(i) for i in (0, 2, 3, CHUNK - 1, CHUNK, len(expected) - 1)] == \
        [expected[i] for i in (0, 2, 3, CHUNK - 1, CHUNK, len(expected) - 1)]
    assert big.find_offset(expected[CHUNK] + 1) == CHUNK
    offsets, statuses = big.filled_chunks()  # views for writing out, trimmed to the records
    assert np.concatenate(offsets).tolist() == expected and sum(c.shape[0] for c in statuses) == len(expected)
    assert all(c.base is not None for c in offsets[-1:])



def test_statuses_survive_the_growth_of_the_first_chunk():
    index = RecordIndex()
    index.append([0, 1, 2])
    index.set_status(1, RecordStatus.DATA_CRC)
    index.append(np.arange(3, 5000, dtype=np.uint64))  # the first chunk is copied into a larger one
    index.set_statuses(np.array([4000, 4001]), np.array([int(RecordStatus.TRUNCATED)] * 2, dtype=np.uint8))
    index.append(np.arange(5000, CHUNK + 10, dtype=np.uint64))
    assert index.status(1) is RecordStatus.DATA_CRC and index.status(4001) is RecordStatus.TRUNCATED
    assert np.flatnonzero(index.statuses()).tolist() == [1, 4000, 4001]
