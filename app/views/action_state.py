"""Enabling an action or button with its reason: a disabled one says why in its tooltip and status tip."""
from __future__ import annotations

from PySide6.QtGui import QAction

_TIP = "enabled_tip"  # the action's own tip, kept while a reason stands in for it


def set_enabled(action: QAction, enabled: bool, why_not: str = "") -> None:
    """Enable ``action``, or disable it saying ``Name: why_not`` where its tip was (the tip comes back with it)."""
    tip = action.property(_TIP)
    if tip is None:
        tip = action.statusTip() or action.toolTip()
        action.setProperty(_TIP, tip)
    action.setEnabled(enabled)
    shown = tip if enabled or not why_not else f"{action.text().replace('&', '')}: {why_not}"
    action.setToolTip(shown)
    action.setStatusTip(shown)
