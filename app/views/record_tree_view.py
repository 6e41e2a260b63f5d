"""The record tree: a QTreeView that copies values and shows elided rows on demand."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QWidget,
)

from app.models.heat_strip import STRIP_SIZE
from app.models.record_tree_model import RecordTreeModel
from app.views.tree_edit_requests import (
    AddFeature,
    ChangeType,
    DeleteFeature,
    EditValue,
    EditValues,
    InsertStep,
    InsertValue,
    ReadOnly,
    RemoveStep,
    RemoveValue,
    RenameFeature,
    ReplaceRecord,
)

DTYPES = ("int64", "float", "bytes")
EXPAND_LISTS_UP_TO = 8  # feature lists opened when a SequenceExample is shown
SHOW_ALL_LIMIT = 10_000  # the context menu shows at most this many more rows at once
NAME_MIN_WIDTH = 160
VALUE_ROOM = 110  # the value column keeps at least this much when names are sized...
NAME_SHARE = 0.45  # ...unless the names need it: they may have this share of a narrow view


class _NameDelegate(QStyledItemDelegate):
    """Names elided in the middle: ``image/o…bbox/xmin`` keeps both the start and the end that tells it from xmax."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class RecordTreeView(QTreeView):
    """Shows a :class:`RecordTreeModel`.

    Ctrl+C (and the context menu's "Copy value") copies the current row's full
    value; "Copy as JSON" copies it as JSON. Clicking a "… N more" row, or
    pressing Enter on it, shows the next values. ``copied(str)`` says what was
    copied, for a status bar.

    Editing (when the model is editable): F2 or a double-click edits a value
    in place; everything else (a value too long to edit in place, adding,
    removing, renaming, retyping) goes out as ``edit_requested(request)``, a
    request of :mod:`app.views.tree_edit_requests`, for the owner to ask for
    details and push an undo command. ``edit_requested(ReadOnly())`` means an
    edit was tried while the model is not editable.
    """

    copied = Signal(str)
    edit_requested = Signal(object)  # a TreeEditRequest

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setUniformRowHeights(True)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setItemDelegateForColumn(0, _NameDelegate(self))
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAllColumnsShowFocus(True)
        self.setIconSize(QSize(*STRIP_SIZE))  # the model's only decoration: an embedding's heat strip
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.clicked.connect(self._show_more_at)
        self.doubleClicked.connect(self._edit_at)
        self.expanded.connect(self._span_more_row)
        self._fitting = False
        self._user_sized = False
        header = self.header()
        header.sectionResized.connect(self._section_resized)
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setDefaultSectionSize(60)  # (also the least the stretched value column keeps)

        self.copy_action = QAction("Copy value", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy_value)
        self.addAction(self.copy_action)
        self.copy_json_action = QAction("Copy as JSON", self)
        self.copy_json_action.triggered.connect(self.copy_json)

    def setModel(self, model) -> None:
        old = self.model()
        if isinstance(old, RecordTreeModel):
            old.rowsInserted.disconnect(self._span_more_row)
            old.dataChanged.disconnect(self._unspan_changed)
        super().setModel(model)
        if isinstance(model, RecordTreeModel):
            model.rowsInserted.connect(self._span_more_row)
            model.dataChanged.connect(self._unspan_changed)

    def tree_model(self) -> RecordTreeModel | None:
        model = self.model()
        return model if isinstance(model, RecordTreeModel) else None

    def reset_layout(self) -> None:
        """After a new record: expand the top levels and size the name column."""
        model = self.tree_model()
        if model is None:
            return
        root = model.root_index()
        if not root.isValid():
            return
        self.expand(root)
        for row in range(model.rowCount(root)):
            child = model.index(row, 0, root)
            node = model.node(child)
            if node is not None and node.role in ("features", "feature_lists"):
                self.expand(child)
            if node is not None and node.role in ("message", "repeated", "map") and row < EXPAND_LISTS_UP_TO:
                self.expand(child)  # a message's nested fields, one level down
            if node is not None and node.role == "feature_lists":
                for i in range(min(model.rowCount(child), EXPAND_LISTS_UP_TO)):
                    self.expand(model.index(i, 0, child))
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Names in full where the view has room (the values keep VALUE_ROOM, the names NAME_SHARE).

        A name cut anyway loses its middle, keeping its start and the end that
        tells image/object/bbox/xmin from .../xmax (see _NameDelegate).
        """
        self._fitting = True
        try:
            type_width = max(self.sizeHintForColumn(1) + 16, 90)
            viewport = self.viewport().width()
            room = max(viewport - type_width - VALUE_ROOM, int(viewport * NAME_SHARE))
            self.setColumnWidth(0, min(max(self.sizeHintForColumn(0) + 24, NAME_MIN_WIDTH), room))
            self.setColumnWidth(1, type_width)
        finally:
            self._fitting = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self._user_sized and self.tree_model() is not None and self.tree_model().root_index().isValid():
            self._fit_columns()

    def _section_resized(self, section: int, *_: int) -> None:
        if not self._fitting and section in (0, 1):
            self._user_sized = True  # the user dragged a column: leave the widths to them

    # -- copying ----------------------------------------------------------
    def _current(self) -> QModelIndex:
        index = self.currentIndex()
        if not index.isValid():
            rows = self.selectionModel().selectedRows() if self.selectionModel() else []
            index = rows[0] if rows else QModelIndex()
        return index

    def copy_value(self) -> str | None:
        """Copy the current row's full value to the clipboard; returns it."""
        model = self.tree_model()
        text = model.copy_text(self._current()) if model is not None else None
        return self._to_clipboard(text, "value")

    def copy_json(self) -> str | None:
        """Copy the current row as JSON to the clipboard; returns it."""
        model = self.tree_model()
        text = model.json_text(self._current()) if model is not None else None
        return self._to_clipboard(text, "JSON")

    def _to_clipboard(self, text: str | None, what: str) -> str | None:
        if text is None:
            return None
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(f"copied {what} ({len(text):,} characters)")
        return text

    def _context_menu(self, pos: QPoint) -> None:
        index = self.indexAt(pos)
        model = self.tree_model()
        if model is None or not index.isValid() or model.node(index) is None:
            return
        self.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(self.copy_action)
        menu.addAction(self.copy_json_action)
        self._add_edit_entries(menu, index)
        hidden = model.hidden_count(index)
        if hidden > 0:
            menu.addSeparator()
            if hidden <= SHOW_ALL_LIMIT:
                menu.addAction(f"Show all {hidden:,} more", lambda: model.show_more(index, hidden))
            else:
                menu.addAction(f"Show {SHOW_ALL_LIMIT:,} more", lambda: model.show_more(index, SHOW_ALL_LIMIT))
        menu.exec(self.viewport().mapToGlobal(pos))

    # -- elided rows ------------------------------------------------------
    def _span_more_row(self, parent: QModelIndex, *_: int) -> None:
        """Let a "… N more" row (always the last) use the whole width."""
        model = self.tree_model()
        if model is None:
            return
        last = model.rowCount(parent) - 1
        if last >= 0 and model.row_kind(model.index(last, 0, parent)) == "more":
            self.setFirstColumnSpanned(last, parent, True)

    def _unspan_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, *_: object) -> None:
        """A "more" row that turned into a value row gets its columns back."""
        model = self.tree_model()
        if model is not None and model.row_kind(top_left) == "value":
            self.setFirstColumnSpanned(top_left.row(), top_left.parent(), False)

    def _show_more_at(self, index: QModelIndex) -> None:
        model = self.tree_model()
        if model is not None and model.row_kind(index) == "more":
            model.show_more(index)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        model = self.tree_model()
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and model is not None \
                and model.row_kind(self.currentIndex()) == "more":
            model.show_more(self.currentIndex())
            return
        if model is not None and event.key() == Qt.Key.Key_F2 and self.state() != self.State.EditingState:
            self._edit_at(self.currentIndex())
            return
        if model is not None and event.key() == Qt.Key.Key_Delete and self.state() != self.State.EditingState:
            self.request_remove(self.currentIndex())
            return
        super().keyPressEvent(event)

    # -- editing ----------------------------------------------------------
    def current_path(self) -> tuple | None:
        """The tree path of the current row (a value row's path ends with its index)."""
        model = self.tree_model()
        node = model.node(self.currentIndex()) if model is not None else None
        return None if node is None else node.path

    def select_path(self, path: tuple) -> bool:
        """Make the row at ``path`` current (or its nearest shown ancestor); True if found exactly."""
        model = self.tree_model()
        index = model.root_index() if model is not None else QModelIndex()
        if not index.isValid():
            return False
        while model.node(index).path != tuple(path):
            found = QModelIndex()
            for r in range(model.rowCount(index)):
                child = model.index(r, 0, index)
                node = model.node(child)
                if node is not None and node.path and tuple(path[:len(node.path)]) == node.path:
                    found = child
                    break
            if not found.isValid():
                break
            self.expand(index)
            index = found
        self.setCurrentIndex(index)
        self.scrollTo(index)
        return model.node(index).path == tuple(path)

    def _edit_at(self, index: QModelIndex) -> None:
        """Edit a value row: in place when the model allows, else through the owner's dialog."""
        model = self.tree_model()
        if model is None or not index.isValid() or model.node(index) is None:
            return
        target = model.value_target(index)
        if not model.editable:
            if target is not None:
                self.edit_requested.emit(ReadOnly())
            return
        value_index = index.siblingAtColumn(2)
        if target is None:
            node = model.node(index)
            if node.role == "raw":
                self.edit_requested.emit(ReplaceRecord())
            elif node.role in ("feature", "step") and node.dtype:
                self.edit_requested.emit(EditValues(node.path, node.dtype))
            return
        if model.inline_editable(value_index):
            if self.state() != self.State.EditingState:
                self.setCurrentIndex(value_index)
                self.edit(value_index)
            return
        dtype, path, i = target
        self.edit_requested.emit(EditValue(path, i, dtype))

    def request_remove(self, index: QModelIndex) -> None:
        """Delete: a value, a step, a feature or a feature list, whichever the row is."""
        model = self.tree_model()
        if model is None or not index.isValid() or model.node(index) is None:
            return
        if not model.editable:
            self.edit_requested.emit(ReadOnly())
            return
        node = model.node(index)
        if model.row_kind(index) == "value":
            holder = index.internalPointer().node
            self.edit_requested.emit(RemoveValue(holder.path, index.row()))
        elif node.role == "step":
            self.edit_requested.emit(RemoveStep(node.path[1], node.path[2]))
        elif node.role in ("feature", "feature_list"):
            self.edit_requested.emit(DeleteFeature(node.path))

    def _add_edit_entries(self, menu: QMenu, index: QModelIndex) -> None:
        """The editing part of the context menu for the row at ``index``."""
        model = self.tree_model()
        node = model.node(index)
        if not model.editable:
            return
        ask = self.edit_requested.emit
        menu.addSeparator()
        if model.row_kind(index) == "value":
            holder = index.internalPointer().node
            i = index.row()
            menu.addAction("Edit Value…\tF2", lambda: self._edit_at(index))
            menu.addAction("Insert Value Before…",
                           lambda: ask(InsertValue(holder.path, i, holder.dtype)))
            menu.addAction("Insert Value After…",
                           lambda: ask(InsertValue(holder.path, i + 1, holder.dtype)))
            menu.addAction("Remove Value\tDel", lambda: self.request_remove(index))
            return
        role = node.role
        if role in ("feature", "step"):
            if model.value_target(index) is not None:
                menu.addAction("Edit Value…\tF2", lambda: self._edit_at(index))
            if node.dtype:
                menu.addAction("Edit Values…", lambda: ask(EditValues(node.path, node.dtype)))
                menu.addAction("Add Value…", lambda: ask(InsertValue(node.path, len(node.values), node.dtype)))
            self._add_type_menu(menu, node)
            if role == "step":
                key, step = node.path[1], node.path[2]
                menu.addSeparator()
                menu.addAction("Insert Step Before",
                               lambda: ask(InsertStep(key, step, node.dtype)))
                menu.addAction("Insert Step After",
                               lambda: ask(InsertStep(key, step + 1, node.dtype)))
                menu.addAction("Remove Step\tDel", lambda: self.request_remove(index))
            else:
                menu.addSeparator()
                menu.addAction("Rename Feature…", lambda: ask(RenameFeature(node.path)))
                menu.addAction("Delete Feature\tDel", lambda: self.request_remove(index))
        elif role == "feature_list":
            menu.addAction("Add Step", lambda: ask(InsertStep(node.path[1], len(node.children), node.dtype)))
            self._add_type_menu(menu, node)
            menu.addSeparator()
            menu.addAction("Rename Feature List…", lambda: ask(RenameFeature(node.path)))
            menu.addAction("Delete Feature List\tDel", lambda: self.request_remove(index))
        elif role in ("example", "features"):
            scope = "features" if role == "example" else "context"
            menu.addAction("Add Feature…", lambda: ask(AddFeature(scope)))
        elif role == "sequence_example":
            menu.addAction("Add Context Feature…", lambda: ask(AddFeature("context")))
            menu.addAction("Add Feature List…", lambda: ask(AddFeature("feature_lists")))
        elif role == "feature_lists":
            menu.addAction("Add Feature List…", lambda: ask(AddFeature("feature_lists")))
        elif role == "raw":
            menu.addAction("Replace Record Bytes…", lambda: ask(ReplaceRecord()))

    def _add_type_menu(self, menu: QMenu, node) -> None:
        types = menu.addMenu("Change Type")
        for dtype in DTYPES:
            action = types.addAction(dtype, lambda d=dtype: self.edit_requested.emit(ChangeType(node.path, d)))
            action.setCheckable(True)
            action.setChecked(dtype == node.dtype)
            action.setEnabled(dtype != node.dtype)
