"""Dataset-wide passes on Apache Beam: each shard (or range of a big plain file) is one unit of work for any Beam runner.

Beam is an optional extra. Nothing here imports it at module level: the command
line loads it only when ``--runner`` names a Beam runner (see :mod:`codec.cli.beam`).
"""
from __future__ import annotations

from codec.errors import UsageError

__all__ = ["BEAM_EXTRA", "beam_available", "require_beam"]

BEAM_EXTRA = "pip install 'tfrecord-lens[beam]'"


def beam_available() -> bool:
    """True when apache_beam can be imported (found, not imported: importing it takes a second)."""
    import importlib.util

    try:
        return importlib.util.find_spec("apache_beam") is not None
    except (ImportError, ValueError):
        return False


def require_beam(runner: str) -> None:
    """A one-line UsageError saying how to install Beam when it is missing."""
    if not beam_available():
        raise UsageError(f"--runner {runner} needs Apache Beam: {BEAM_EXTRA}")
