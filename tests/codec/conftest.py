"""Shared helpers for the codec tests: what the reference fixtures must yield, damage made in place, a fresh interpreter."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

from tests.builders import MANIFEST

ROOT = Path(__file__).resolve().parent.parent.parent


def expected_intact(name: str) -> list[str]:
    """sha256 of every record a careful reader must recover from ``name``."""
    entry = MANIFEST[name]
    damage = entry.get("corruption", {})
    if "intact_sha256" in damage:
        return damage["intact_sha256"]
    if "intact_prefix_of_sha256" in damage:
        return damage["intact_prefix_of_sha256"][: entry["tf_records_read"]]
    return [r["sha256"] for r in entry["records"]]


def record_offset(records: list[bytes], i: int) -> int:
    """Where record ``i`` starts in a plain file of ``records`` written in order."""
    from codec.format.framing import OVERHEAD

    return sum(len(r) + OVERHEAD for r in records[:i])


def flip_in_place(path, pos: int) -> None:
    """Change one byte, keeping the file's size and mtime (what bit rot looks like: a cached index still applies).

    Bit rot leaves the ctime alone too, which a write cannot: the file's cache entries
    are stamped with its new ctime, as if the byte had rotted unseen.
    """
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x01]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    restamp_cache(path, st, after)


def restamp_cache(path, before: os.stat_result, after: os.stat_result) -> None:
    """Key the cache entries made of ``path`` as it was at ``before`` to its stat ``after``."""
    from codec.index import cache as index_cache
    from codec.storage.file_identity import FileIdentity

    old, new = FileIdentity.of(before).stamp, FileIdentity.of(after).stamp
    for entry in (index_cache.cache_path(os.fspath(path)), index_cache.zran_path(os.fspath(path))):
        try:
            blob = Path(entry).read_bytes()
        except OSError:
            continue
        (n,) = struct.unpack_from("<I", blob, 8)
        header = json.loads(blob[12:12 + n])
        if header.get("stamp") == old:
            header["stamp"] = new
            text = json.dumps(header).encode()
            Path(entry).write_bytes(blob[:8] + struct.pack("<I", len(text)) + text + blob[12 + n:])


def run_fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing imported yet) and return its stdout."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
