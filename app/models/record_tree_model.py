"""A Qt item model over a decoded record's tree (:class:`codec.decode.decoder.TreeNode`).

Columns: Name, Type, Value. An Example shows feature -> values; a
SequenceExample shows its context features, then each feature list with its
steps -> values. A tensor shows its dtype and shape, then its values; a
message or schema-less protobuf its fields, nested messages, repeated items
and map entries; a TFDS record's ZLIB- or BYTES-encoded tensors show as the tensors they hold
(``uint8 [6, 6] zlib``), not their stored bytes. Class ids show their names (``1 (cat)``) when the record's
source knows them. Only Examples, SequenceExamples and raw records are
editable. A feature, step, field or tensor with one value shows it on its own row;
longer lists get one row per value, the first ``FIRST_CHUNK`` of them, then a
"… N more" row that shows the next ``NEXT_CHUNK`` when activated
(:meth:`RecordTreeModel.show_more`). Text comes from :mod:`app.models.value_text`.

An index's internal pointer is the *parent's* entry and its row says which
child it is, so an index never points at a row that has turned into something
else after more rows were shown.
"""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QImage

from app.models.heat_strip import heat_strip
from app.models.value_text import LabelSource, edit_text, json_value, node_json, type_text, value_name, value_text
from app.style import palette
from codec.datasets.tfds import with_decoded_tensors
from codec.decode.decoder import DecodedRecord, RecordKind, TreeNode, is_text, value_count, value_node
from codec.editing.record_editor import parse_value
from codec.errors import UsageError
from codec.stats.embeddings import MIN_DIMS

FIRST_CHUNK = 20
NEXT_CHUNK = 200
NODE_ROLE = Qt.ItemDataRole.UserRole + 1  # the TreeNode of a row (a value node for value rows)
KIND_ROLE = Qt.ItemDataRole.UserRole + 2  # "node", "value" or "more"
TOOLTIP_MAX_LEN = 600
INLINE_EDIT_MAX = 1000  # longer (or multi-line, or binary) bytes values are edited in a dialog

_COLUMNS = ("Name", "Type", "Value")
_VALUE_HOLDERS = ("feature", "step", "field", "tensor")  # roles whose values are rows of their own
_EDITABLE_KINDS = {RecordKind.EXAMPLE, RecordKind.SEQUENCE_EXAMPLE, RecordKind.RAW}
_Index = QModelIndex | QPersistentModelIndex


class _Entry:
    """A row that has children: the invisible root, a container or a multi-value feature, field or tensor."""

    __slots__ = ("node", "parent", "row", "total", "shown", "kids")

    def __init__(self, node: TreeNode | None, parent: _Entry | None, row: int, total: int) -> None:
        self.node = node
        self.parent = parent
        self.row = row
        self.total = total
        self.shown = min(total, FIRST_CHUNK)
        self.kids: dict[int, _Entry] = {}

    @property
    def holds_values(self) -> bool:
        return self.node is not None and not self.node.children and self.node.role in _VALUE_HOLDERS

    def row_count(self) -> int:
        return self.shown + (1 if self.shown < self.total else 0)


def _child_total(node: TreeNode) -> int:
    """How many child rows ``node`` has before elision (a single value stays on its row)."""
    if node.children:
        return len(node.children)
    if node.role in _VALUE_HOLDERS:
        n = value_count(node)
        return n if n > 1 else 0
    return 0


class RecordTreeModel(QAbstractItemModel):
    """Rows of a decoded record; :meth:`set_record` replaces them, :meth:`clear` empties.

    When :meth:`set_editable` is on and the record is an Example,
    SequenceExample or raw, a row showing one value is editable in the Value
    column: ``setData`` checks the text against the value's type and
    emits ``value_edited(path, value_index, value)`` (the owner turns it into
    an undo command and shows the record again) or ``failed(message)``.
    """

    value_edited = Signal(object, int, object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._decoded_tensors: dict[int, str] = {}  # id(node) -> "uint8 [6, 6] zlib", shown as the Type
        self._editable = False
        self._decoded: DecodedRecord | None = None
        self._tree: TreeNode | None = None
        self._summaries: dict = {}
        self._labels: LabelSource | None = None
        self._root = _Entry(None, None, -1, 0)
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._italic = QFont()
        self._italic.setItalic(True)

    # -- content ----------------------------------------------------------
    def set_record(self, decoded: DecodedRecord | None, tree: TreeNode | None,
                   summaries: dict | None = None, labels: LabelSource | None = None) -> None:
        """Show ``tree`` (from ``codec.decode.decoder.build_tree(decoded)``); None clears.

        ``summaries`` (from :func:`summarize` with the same ``labels``, made off the GUI thread)
        pre-fills the text cache; ``labels`` names class ids (the record source's ``labels``).
        """
        self.beginResetModel()
        self._decoded = decoded
        self._labels = labels
        self._decoded_tensors: dict[int, str] = {}
        if decoded is not None and tree is not None:  # a TFDS record's ZLIB tensors: the tensor, not its bytes
            tree, self._decoded_tensors = with_decoded_tensors(decoded, tree)
        self._tree = tree  # keeps the nodes the cache is keyed by alive
        self._summaries = dict(summaries or {})
        self._root = _Entry(None, None, -1, 0 if tree is None else 1)
        if tree is not None:
            self._root.kids[0] = _Entry(tree, self._root, 0, _child_total(tree))
        self.endResetModel()

    def clear(self) -> None:
        self.set_record(None, None)

    @property
    def decoded(self) -> DecodedRecord | None:
        return self._decoded

    def root_index(self) -> QModelIndex:
        """The record's own row (Example, SequenceExample, tensor, message, protobuf or raw)."""
        return self.index(0, 0) if self._root.total else QModelIndex()

    # -- structure --------------------------------------------------------
    def _entry(self, index: _Index) -> _Entry | None:
        """The entry of ``index`` if its row has children (made on first use)."""
        if not index.isValid():
            return self._root
        parent: _Entry = index.internalPointer()
        row = index.row()
        if row >= parent.shown or parent.holds_values:
            return None
        entry = parent.kids.get(row)
        if entry is None:
            node = parent.node.children[row]
            total = _child_total(node)
            if not total:
                return None
            entry = parent.kids[row] = _Entry(node, parent, row, total)
        return entry

    def node(self, index: _Index) -> TreeNode | None:
        """The TreeNode of a row: a value node for value rows, None for a "more" row."""
        if not index.isValid():
            return None
        parent: _Entry = index.internalPointer()
        row = index.row()
        if row >= parent.shown:
            return None
        if parent.node is None:
            return self._root.kids[0].node
        if parent.holds_values:
            return value_node(parent.node, row)
        return parent.node.children[row]

    def row_kind(self, index: _Index) -> str | None:
        """"node", "value" or "more" (None for an invalid index)."""
        if not index.isValid():
            return None
        parent: _Entry = index.internalPointer()
        if index.row() >= parent.shown:
            return "more"
        return "value" if parent.holds_values else "node"

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        entry = self._entry(parent)
        if entry is None or not (0 <= row < entry.row_count()) or not 0 <= column < len(_COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column, entry)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        entry: _Entry = index.internalPointer()
        if entry.parent is None:
            return QModelIndex()
        return self.createIndex(entry.row, 0, entry.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        entry = self._entry(parent)
        return 0 if entry is None else entry.row_count()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return len(_COLUMNS)

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _COLUMNS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if self.row_kind(index) != "node":
            flags |= Qt.ItemFlag.ItemNeverHasChildren
        if index.column() == 2 and self.inline_editable(index):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    # -- editing ----------------------------------------------------------
    def set_editable(self, on: bool) -> None:
        self._editable = on

    def _kind_editable(self) -> bool:
        return self._decoded is not None and self._decoded.kind in _EDITABLE_KINDS

    @property
    def editable(self) -> bool:
        """Editing is on and the record is of a kind edits apply to (tensors and messages are read-only)."""
        return self._editable and self._kind_editable()

    def value_target(self, index: _Index) -> tuple[str, tuple, int] | None:
        """(dtype, feature or step path, value index) of a row that shows one value, else None."""
        if self.row_kind(index) == "value":
            holder: TreeNode = index.internalPointer().node
            if id(holder) in self._decoded_tensors:  # decoded from the stored bytes: not edited in place
                return None
            return (holder.dtype, holder.path, index.row()) if holder.dtype else None
        node = self.node(index)
        if node is not None and id(node) not in self._decoded_tensors and node.role in _VALUE_HOLDERS and node.dtype and not node.children \
                and value_count(node) == 1:
            return node.dtype, node.path, 0
        return None

    def target_value(self, index: _Index) -> Any:
        """The value a :meth:`value_target` row shows."""
        node = self.node(index)
        return None if node is None else node.values[0]

    def inline_editable(self, index: _Index) -> bool:
        """True when the row's value is edited in place (numbers, short one-line text)."""
        if not self.editable or self.value_target(index) is None:
            return False
        node = self.node(index)
        if node.dtype != "bytes":
            return True
        b = bytes(node.values[0])
        return len(b) <= INLINE_EDIT_MAX and b"\n" not in b and b"\r" not in b and (not b or is_text(b))

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        target = self.value_target(index) if self.editable else None
        if role != Qt.ItemDataRole.EditRole or target is None:
            return False
        dtype, path, value_index = target
        try:
            parsed = parse_value(str(value), dtype)
        except UsageError as exc:
            self.failed.emit(str(exc))
            return False
        old = self.target_value(index)
        same = parsed == old if dtype != "float" else edit_text(parsed, dtype) == edit_text(old, dtype)
        if same:
            return False
        self.value_edited.emit(path, value_index, parsed)
        return True

    # -- elision ----------------------------------------------------------
    def hidden_count(self, parent: _Index) -> int:
        """How many children of ``parent`` are not shown yet."""
        entry = self._entry(parent)
        return 0 if entry is None else entry.total - entry.shown

    def show_more(self, index: _Index, count: int = NEXT_CHUNK) -> bool:
        """Show up to ``count`` more children; ``index`` is a "more" row or its parent.

        The new rows go in before the "more" row; when the last ones are
        shown, the "more" row itself turns into the last value row.
        """
        if self.row_kind(index) == "more":
            index = index.parent()
        entry = self._entry(index)
        if entry is None or entry.shown >= entry.total or count < 1:
            return False
        parent = QModelIndex(index)
        first = entry.shown
        new_shown = min(entry.total, first + count)
        if new_shown < entry.total:
            self.beginInsertRows(parent, first, new_shown - 1)
            entry.shown = new_shown
            self.endInsertRows()
            return True
        if new_shown - 1 > first:
            self.beginInsertRows(parent, first + 1, new_shown - 1)
            entry.shown = new_shown
            self.endInsertRows()
        else:
            entry.shown = new_shown
        changed = self.createIndex(first, 0, entry)
        self.dataChanged.emit(changed, changed.siblingAtColumn(len(_COLUMNS) - 1))
        return True

    # -- data -------------------------------------------------------------
    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        kind = self.row_kind(index)
        column = index.column()
        if role == KIND_ROLE:
            return kind
        if kind == "more":
            return self._more_data(index, column, role)
        node = self.node(index)
        if role == NODE_ROLE:
            return node
        if role == Qt.ItemDataRole.EditRole and column == 2 and self._kind_editable() \
                and self.value_target(index) is not None:
            return edit_text(node.values[0], node.dtype)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 2 and kind == "value":  # cached: a value may be megabytes to check
                key = (id(index.internalPointer().node), index.row())
                text = self._summaries.get(key)
                if text is None:
                    text = self._summaries[key] = value_text(node, self._decoded, labels=self._labels)
                return text
            if column == 0 and kind == "value":
                return value_name(index.internalPointer().node, index.row()) or node.name
            return self._text(node, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node, column)
        if role == Qt.ItemDataRole.FontRole and column == 2:
            return self._mono
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return palette.MUTED_TEXT
        if role == Qt.ItemDataRole.DecorationRole and column == 2 and kind == "node":
            return self._strip(node)
        return None

    def _strip(self, node: TreeNode) -> QImage | None:
        """A float feature or step of MIN_DIMS or more values: its heat strip (see app.models.heat_strip)."""
        if node.role not in ("feature", "step") or node.children or node.dtype != "float" \
                or value_count(node) < MIN_DIMS:
            return None
        key = (id(node), "strip")
        strip = self._summaries.get(key)
        if strip is None:
            strip = self._summaries[key] = heat_strip(node.values)
        return strip

    def _more_data(self, index: _Index, column: int, role: int) -> Any:
        hidden = self.hidden_count(index.parent())
        if role == Qt.ItemDataRole.DisplayRole:
            return f"… {hidden:,} more  (click to show {min(hidden, NEXT_CHUNK):,})" if column == 0 else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return palette.ACCENT_TEXT
        if role == Qt.ItemDataRole.FontRole:
            return self._italic
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hidden:,} more not shown: click or press Enter to show the next {min(hidden, NEXT_CHUNK):,}"
        return None

    def _text(self, node: TreeNode, column: int) -> str:
        if column == 0:
            return node.name
        if column == 1:
            return self._decoded_tensors.get(id(node)) or type_text(node, self._decoded)
        text = self._summaries.get(id(node))
        if text is None:
            text = self._summaries[id(node)] = value_text(node, self._decoded, labels=self._labels)
        return text

    def _tooltip(self, node: TreeNode, column: int) -> str | None:
        if column == 2 and node.role in ("value", "raw", *_VALUE_HOLDERS):
            key = (id(node), "tip")
            text = self._summaries.get(key) if node.role != "value" else None
            if text is None:
                text = value_text(node, self._decoded, TOOLTIP_MAX_LEN, self._labels)
                if node.role != "value":
                    self._summaries[key] = text
            return text
        if column == 0 and node.path:
            return " / ".join(str(p) for p in node.path)
        return None

    # -- copying ----------------------------------------------------------
    def copy_text(self, index: _Index) -> str | None:
        """The full value of a row: whole text, base64 for binary bytes, JSON list for several."""
        node = self.node(index)
        if node is None:
            return None
        if node.role == "raw":
            return node_json(node, self._decoded)  # the text, or base64
        if node.role in ("value", *_VALUE_HOLDERS) and not node.children and value_count(node) == 1:
            value = json_value(node.values[0], node.dtype)
            return value if isinstance(value, str) else json.dumps(value)
        return self.json_text(index)

    def json_text(self, index: _Index) -> str | None:
        """The row as JSON: a scalar for a value, a list for a feature, an object for containers."""
        node = self.node(index)
        if node is None:
            return None
        return json.dumps(node_json(node, self._decoded), ensure_ascii=False)

    @property
    def kind(self) -> RecordKind | None:
        return None if self._decoded is None else self._decoded.kind
