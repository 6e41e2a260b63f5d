"""The Qt-free run of the codec's tests (``./dev test``) really has no Qt."""
from __future__ import annotations

import os
import sys

import pytest


@pytest.mark.skipif(os.environ.get("TFRLENS_TESTS_WITHOUT_QT") != "1",
                    reason="only in ./dev test's run of the codec's tests with PySide6 blocked")
def test_this_run_cannot_import_qt():
    with pytest.raises(ImportError, match="blocked"):
        import PySide6  # noqa: F401
    assert not any(name.startswith("PySide6.") for name in sys.modules)
