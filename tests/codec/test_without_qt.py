"""The Qt-free run of the codec's tests (``./dev test-codec``) really has no Qt, and every codec module imports in it."""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("TFRLENS_TESTS_WITHOUT_QT") != "1",
                                reason="only in ./dev test-codec, the run of the codec's tests with PySide6 blocked")


def test_this_run_cannot_import_qt():
    with pytest.raises(ImportError, match="blocked"):
        import PySide6  # noqa: F401
    assert not any(name.startswith("PySide6.") for name in sys.modules)


def test_every_codec_module_imports_without_qt():
    import codec

    names = [m.name for m in pkgutil.walk_packages(codec.__path__, "codec.")]
    for name in names:
        importlib.import_module(name)
    assert len(names) > 50
    assert not any(name.split(".")[0] in ("PySide6", "shiboken6") for name in sys.modules if sys.modules[name])
