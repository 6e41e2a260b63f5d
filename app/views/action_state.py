"""Enabling an action or button with its reason: a disabled one says why in its tooltip and status tip."""
from __future__ import annotations

from PySide6.QtGui import QAction

_TIPS = "enabled_tips"  # the action's own (tooltip, status tip), kept while a reason stands in for them


def set_enabled(action: QAction, enabled: bool, why_not: str = "") -> None:
    """Enable ``action``, or disable it saying ``Name: why_not`` in its tooltip and status tip (its own tips
    come back with it: a toolbar's "Name (shortcut)" tooltip and the menus' status tip each stay theirs)."""
    tips = action.property(_TIPS)
    if tips is None:
        tips = (action.toolTip(), action.statusTip())
        action.setProperty(_TIPS, tips)
    action.setEnabled(enabled)
    if enabled or not why_not:
        tool_tip, status_tip = tips
    else:
        tool_tip = status_tip = f"{action.text().replace('&', '')}: {why_not}"
    action.setToolTip(tool_tip)
    action.setStatusTip(status_tip)


def retip(action: QAction, tool_tip: str) -> None:
    """Give ``action`` its own tooltip ``tool_tip`` (shown whenever it is enabled)."""
    tips = action.property(_TIPS)
    if tips is not None:
        action.setProperty(_TIPS, (tool_tip, tips[1]))
    if tips is None or action.isEnabled():
        action.setToolTip(tool_tip)


def own_status_tip(action: QAction) -> str:
    """What ``action`` does (its own status tip), also while a reason stands in for it."""
    tips = action.property(_TIPS)
    return tips[1] if tips is not None else action.statusTip()
