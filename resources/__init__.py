"""Files shipped with TFRecord Lens: icons and the demo dataset."""
from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
ICONS_DIR = os.path.join(HERE, "icons")


def demo_path() -> str:
    """Path of the demo TFRecord file (Examples with images and boxes, SequenceExamples)."""
    return os.path.join(HERE, "demo.tfrecord")


def icon_path(name: str) -> str:
    """Path of ``icons/<name>.svg``."""
    return os.path.join(ICONS_DIR, f"{name}.svg")
