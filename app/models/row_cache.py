"""The record table's rows already read and decoded, the most recently shown kept (no Qt)."""
from __future__ import annotations

from collections import OrderedDict

from app.models.table_rows import TableRow


class RowCache:
    """An LRU of :class:`TableRow` by record number, at most ``capacity`` of them."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[int, TableRow] = OrderedDict()

    def get(self, i: int) -> TableRow | None:
        """Row ``i`` if cached (it becomes the most recent), else None."""
        row = self._rows.get(i)
        if row is not None:
            self._rows.move_to_end(i)
        return row

    def put(self, i: int, row: TableRow) -> None:
        self._rows[i] = row
        if len(self._rows) > self.capacity:
            self._rows.popitem(last=False)

    def pop(self, i: int) -> TableRow | None:
        return self._rows.pop(i, None)

    def clear(self) -> None:
        self._rows.clear()

    def __len__(self) -> int:
        return len(self._rows)
