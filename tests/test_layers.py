"""The codec never needs Qt: its source never names it.

Static checks only (fast). That the codec imports, and its tests pass, with
PySide6 unimportable is checked by running them that way: ``./dev test-codec``
(a step of ``./dev test`` and of CI; ``tests/codec/test_without_qt.py``).
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_codec_source_never_mentions_qt():
    for path in (ROOT / "codec").rglob("*.py"):
        text = path.read_text()
        for name in ("PySide6", "PyQt", "shiboken", "QtCore"):
            assert name not in text, f"{path.relative_to(ROOT)} mentions {name}"
