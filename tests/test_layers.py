"""The codec never needs Qt: it imports, and its tests pass, with PySide6 unavailable."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _env_without_qt(tmp_path: Path) -> dict:
    """An environment in which ``import PySide6`` (and shiboken6) fails."""
    for name in ("PySide6", "shiboken6"):
        pkg = tmp_path / "blockers" / name
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f"raise ImportError('{name} is blocked for this test')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "blockers"), str(ROOT), env.get("PYTHONPATH", "")])
    env["TFRLENS_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def test_codec_source_never_mentions_qt():
    for path in (ROOT / "codec").rglob("*.py"):
        text = path.read_text()
        for name in ("PySide6", "PyQt", "shiboken", "QtCore"):
            assert name not in text, f"{path.relative_to(ROOT)} mentions {name}"


def test_codec_imports_every_module_without_qt(tmp_path):
    code = (
        "import importlib, pkgutil, codec\n"
        "for m in pkgutil.walk_packages(codec.__path__, 'codec.'):\n"
        "    importlib.import_module(m.name)\n"
        "import sys; assert 'PySide6' not in sys.modules or sys.modules['PySide6'] is None\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env_without_qt(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.skipif(os.environ.get("TFRLENS_CODEC_TESTS_RAN_WITHOUT_QT") == "1",
                    reason="./dev test has just run the codec's tests with Qt blocked "
                           "(tests/codec/test_without_qt.py checks that run had no Qt)")
def test_codec_test_suite_passes_without_qt(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:pytest-qt", "-p", "no:cacheprovider",
         "--rootdir", str(ROOT), str(ROOT / "tests" / "codec")],
        env=_env_without_qt(tmp_path), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout
