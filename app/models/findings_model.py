"""The Dataset Check's findings as a tree: one row per check (with counts), its findings under it.

:class:`FindingsModel` adapts a :class:`codec.doctor.CheckReport` (plain
Python) for a ``QTreeView``: top-level rows are the checks that found
something, in the codec's order (:data:`codec.doctor.CHECKS`), each with its
number of findings and worst severity; their children are the findings, with
the detail text and the records they name. Nothing here reads records.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from app.style import icons, palette

_Index = QModelIndex | QPersistentModelIndex

FINDING_ROLE = Qt.ItemDataRole.UserRole + 1  # a finding row's Finding (None on a check row)
CHECK_ROLE = Qt.ItemDataRole.UserRole + 2  # the check name of any row
SEVERITY_ROLE = Qt.ItemDataRole.UserRole + 3  # "error" or "warning" (a check row: its worst)

FINDING_COLUMN, RECORDS_COLUMN = 0, 1
HEADERS = ("Finding", "Records")
SHOWN_REFS = 3  # records named in the Records column; the tooltip lists them all (up to TIP_REFS)
TIP_REFS = 30
SHORT_EXTENSIONS = (".tfrecord", ".tfrecords", ".tfrec", ".tfr", ".record")  # left out in the Records column

CHECK_TITLES = {
    "damage": "Damaged records",
    "exact_duplicate": "Exact duplicates",
    "split_leak": "Leaks between splits",
    "near_duplicate": "Near-duplicate images",
    "label_conflict": "One image, different labels",
    "bbox": "Bad boxes",
    "image_decode": "Images that do not decode",
    "image_format": "Declared format differs from the bytes",
    "image_size": "Declared size differs from the pixels",
    "unknown_label": "Labels not in the label map",
    "missing_feature": "Missing or mistyped features",
    "label_order": "Long runs of one label (written unshuffled)",
}


def check_title(check: str) -> str:
    """A person's name for a check ("Leaks between splits"); the check's own name when unknown."""
    return CHECK_TITLES.get(check, check.replace("_", " ").capitalize())


def ref_text(ref: Any, short: bool = False) -> str:
    """``train-00000-of-00003.tfrecord #20``: a record as its file's name and its index in that file
    (``short``: without a usual TFRecord extension)."""
    name = os.path.basename(ref.path.rstrip('/')) or ref.path
    if short:
        stem, ext = os.path.splitext(name)
        name = stem if ext.lower() in SHORT_EXTENSIONS and stem else name
    return f"{name} #{ref.index:,}"


def refs_text(refs: Sequence[Any], shown: int = SHOWN_REFS) -> str:
    text = ", ".join(ref_text(r, short=True) for r in refs[:shown])
    return text + (f" +{len(refs) - shown:,} more" if len(refs) > shown else "")


class _Group:
    __slots__ = ("check", "findings", "severity", "records")

    def __init__(self, check: str, findings: list) -> None:
        self.check = check
        self.findings = findings
        self.severity = "error" if any(f.severity == "error" for f in findings) else "warning"
        self.records = len({(r.path, r.index) for f in findings for r in f.records})


class FindingsModel(QAbstractItemModel):
    """Checks (with counts) over their findings; :meth:`set_report` replaces them all."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._groups: list[_Group] = []
        self._records = 0
        self._bold = QFont()
        self._bold.setBold(True)

    # -- content ----------------------------------------------------------
    def set_report(self, report: Any | None, order: Sequence[str] = ()) -> None:
        """Show ``report``'s findings grouped by check (checks in ``order`` first); None empties."""
        self.beginResetModel()
        self._groups = []
        self._records = 0 if report is None else report.records
        if report is not None:
            by_check: dict[str, list] = {}
            for finding in report.findings:
                by_check.setdefault(finding.check, []).append(finding)
            rank = {check: k for k, check in enumerate(order)}
            for check in sorted(by_check, key=lambda c: (rank.get(c, len(rank)), c)):
                self._groups.append(_Group(check, by_check[check]))
        self.endResetModel()

    def clear(self) -> None:
        self.set_report(None)

    @property
    def records(self) -> int:
        """How many records the report's check went over."""
        return self._records

    def checks(self) -> list[str]:
        """The checks that found something, in the order shown."""
        return [g.check for g in self._groups]

    def count(self, check: str) -> int:
        """How many findings ``check`` has (0 when none)."""
        return next((len(g.findings) for g in self._groups if g.check == check), 0)

    def findings(self) -> list:
        """Every finding, in the order shown."""
        return [f for g in self._groups for f in g.findings]

    def finding(self, index: _Index) -> Any | None:
        """The finding of a finding row (None for a check row)."""
        if not index.isValid() or not index.internalId():
            return None
        return self._groups[index.internalId() - 1].findings[index.row()]

    def findings_at(self, index: _Index) -> list:
        """A finding row's finding, or every finding of a check row."""
        if not index.isValid():
            return []
        if index.internalId():
            return [self.finding(index)]
        return list(self._groups[index.row()].findings)

    def check_index(self, check: str) -> QModelIndex:
        row = next((k for k, g in enumerate(self._groups) if g.check == check), -1)
        return self.index(row, 0) if row >= 0 else QModelIndex()

    def finding_index(self, check: str, k: int) -> QModelIndex:
        """The row of ``check``'s ``k``-th finding (invalid when there is none)."""
        parent = self.check_index(check)
        return self.index(k, 0, parent) if parent.isValid() else QModelIndex()

    def summary(self) -> str:
        """One line: how many findings, errors and warnings, over how many records."""
        findings = self.findings()
        if not findings:
            return f"No problems found in {self._records:,} records"
        errors = sum(1 for f in findings if f.severity == "error")
        warnings = len(findings) - errors
        parts = [f"{len(findings):,} finding" + ("" if len(findings) == 1 else "s"),
                 f"{errors:,} error" + ("" if errors == 1 else "s"),
                 f"{warnings:,} warning" + ("" if warnings == 1 else "s")]
        return f"{parts[0]} ({parts[1]}, {parts[2]}) in {self._records:,} records"

    # -- Qt model ---------------------------------------------------------
    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        if not 0 <= column < len(HEADERS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0) if 0 <= row < len(self._groups) else QModelIndex()
        if parent.internalId():  # findings have no children
            return QModelIndex()
        group = self._groups[parent.row()]
        return self.createIndex(row, column, parent.row() + 1) if 0 <= row < len(group.findings) else QModelIndex()

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or not index.internalId():
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId() or parent.column() != 0:
            return 0
        return len(self._groups[parent.row()].findings)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(HEADERS):
            return HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        finding = self.finding(index)
        if finding is None:
            return self._group_data(self._groups[index.row()], index.column(), role)
        column = index.column()
        if role == FINDING_ROLE:
            return finding
        if role == CHECK_ROLE:
            return finding.check
        if role == SEVERITY_ROLE:
            return finding.severity
        if role == Qt.ItemDataRole.DisplayRole:
            return finding.detail if column == FINDING_COLUMN else refs_text(finding.records)
        if role == Qt.ItemDataRole.DecorationRole and column == FINDING_COLUMN:
            return icons.icon("damaged" if finding.severity == "error" else "warning")
        if role == Qt.ItemDataRole.ToolTipRole:
            refs = finding.records
            lines = [f"{finding.severity}: {finding.detail}", *(ref_text(r) for r in refs[:TIP_REFS])]
            if len(refs) > TIP_REFS:
                lines.append(f"… {len(refs) - TIP_REFS:,} more")
            return "\n".join(lines)
        if role == Qt.ItemDataRole.ForegroundRole and column == RECORDS_COLUMN:
            return palette.MUTED_TEXT
        return None

    def _group_data(self, group: _Group, column: int, role: int) -> Any:
        if role == CHECK_ROLE:
            return group.check
        if role == SEVERITY_ROLE:
            return group.severity
        n = len(group.findings)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == FINDING_COLUMN:
                return f"{check_title(group.check)} ({n:,})"
            return f"{group.records:,} record" + ("" if group.records == 1 else "s")
        if role == Qt.ItemDataRole.DecorationRole and column == FINDING_COLUMN:
            return icons.icon("damaged" if group.severity == "error" else "warning")
        if role == Qt.ItemDataRole.ForegroundRole and column == FINDING_COLUMN:
            return palette.ERROR_TEXT if group.severity == "error" else palette.WARN_TEXT
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{group.check}: {n:,} finding" + ("" if n == 1 else "s") + \
                f" naming {group.records:,} record" + ("" if group.records == 1 else "s")
        if role == Qt.ItemDataRole.FontRole and column == FINDING_COLUMN:
            return self._bold
        return None
