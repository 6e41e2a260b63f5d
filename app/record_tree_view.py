"""The record tree: a QTreeView that copies values and shows elided rows on demand."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTreeView, QWidget

from app.record_tree_model import RecordTreeModel

EXPAND_LISTS_UP_TO = 8  # feature lists opened when a SequenceExample is shown
SHOW_ALL_LIMIT = 10_000  # the context menu shows at most this many more rows at once


class RecordTreeView(QTreeView):
    """Shows a :class:`RecordTreeModel`.

    Ctrl+C (and the context menu's "Copy value") copies the current row's full
    value; "Copy as JSON" copies it as JSON. Clicking a "… N more" row, or
    pressing Enter on it, shows the next values. ``copied(str)`` says what was
    copied, for a status bar.
    """

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setAllColumnsShowFocus(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.clicked.connect(self._show_more_at)
        self.expanded.connect(self._span_more_row)
        header = self.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setDefaultSectionSize(110)

        self.copy_action = QAction("Copy value", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy_value)
        self.addAction(self.copy_action)
        self.copy_json_action = QAction("Copy as JSON", self)
        self.copy_json_action.triggered.connect(self.copy_json)

    def setModel(self, model) -> None:  # noqa: N802 - Qt override
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
            if node is not None and node.role == "feature_lists":
                for i in range(min(model.rowCount(child), EXPAND_LISTS_UP_TO)):
                    self.expand(model.index(i, 0, child))
        width = max(self.sizeHintForColumn(0) + 24, 160)
        self.setColumnWidth(0, min(width, max(160, self.viewport().width() // 2)))
        self.setColumnWidth(1, max(self.sizeHintForColumn(1) + 16, 90))

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
        super().keyPressEvent(event)
