"""What `pip install tfrecord-lens` gets: the wheel built from the checkout holds every module and data file."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = ("codec", "app", "resources")


@pytest.mark.slow
def test_the_wheel_ships_every_module_and_data_file(tmp_path):
    # A copy of what git tracks there: a checkout's own build/ folder may hold stale modules.
    files = subprocess.run(["git", "ls-files", "pyproject.toml", "README.md", "docs", *SHIPPED], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    source = tmp_path / "source"
    for name in files:
        os.makedirs(source / os.path.dirname(name), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), source / name, follow_symlinks=False)  # docs/images is a link
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = (tmp_path / "dist").iterdir()
    names = set(zipfile.ZipFile(wheel).namelist())

    modules = {name for name in files if name.endswith(".py")}
    assert {name for name in names if name.endswith(".py")} == modules
    assert {"codec/beam/check.py", "codec/doctor/__init__.py", "app/shell/__init__.py"} <= modules
    data = {name for name in files if name.startswith("resources/") and name.endswith((".svg", ".png", ".tfrecord"))
            and not name.startswith("resources/screenshots/")}
    assert "resources/demo.tfrecord" in data and data <= names
    assert not any(name.startswith(("tests/", "benchmarks/", "resources/screenshots/")) for name in names)
    # the user guide's pages and images, as data files (Help > User Guide reads them offline)
    share = next(name for name in names if name.endswith("/share/tfrecord-lens/docs/index.md"))[:-len("index.md")]
    pages = {name for name in files if name.startswith("docs/") and name.endswith(".md")}
    assert {share + name[len("docs/"):] for name in pages} <= names
    assert share + "decisions/0001-records-numbered-as-found.md" in names
    assert share + "images/damaged-file.png" in names
