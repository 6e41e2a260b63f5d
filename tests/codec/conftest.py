"""Shared helpers for the codec tests: the reference fixtures and their manifest."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())


@pytest.fixture(autouse=True)
def _private_index_cache(tmp_path, monkeypatch):
    """Never read or write the user's real index cache from a test."""
    monkeypatch.setenv("TFRLENS_CACHE_DIR", str(tmp_path / "index-cache"))


def fixture_path(name: str) -> str:
    return os.fspath(FIXTURES / name)


def expected_intact(name: str) -> list[str]:
    """sha256 of every record a careful reader must recover from ``name``."""
    entry = MANIFEST[name]
    damage = entry.get("corruption", {})
    if "intact_sha256" in damage:
        return damage["intact_sha256"]
    if "intact_prefix_of_sha256" in damage:
        return damage["intact_prefix_of_sha256"][: entry["tf_records_read"]]
    return [r["sha256"] for r in entry["records"]]
