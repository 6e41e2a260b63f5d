"""TFRecord Lens, the desktop app: a PySide6 view over the ``codec`` library."""
from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path


def _version() -> str:
    """The installed distribution's version; in a checkout that is not installed, pyproject.toml's."""
    try:
        return importlib.metadata.version("tfrecord-lens")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            found = re.search(r'^version = "([^"]+)"', pyproject.read_text(encoding="utf-8"), re.M)
        except OSError:
            found = None
        return found.group(1) if found else "unknown"


__version__ = _version()
