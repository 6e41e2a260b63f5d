"""TFRecord Lens, the desktop app: a PySide6 view over the ``codec`` library."""
from __future__ import annotations

__version__ = "0.1.0"
