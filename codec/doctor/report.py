"""The doctor's types: what a check reports (:class:`CheckReport` of :class:`Finding`), its options and
its progress. Re-exported by :mod:`codec.doctor`."""
from __future__ import annotations

from dataclasses import dataclass, field

from codec.storage.url_secrets import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Callable, Generator

__all__ = ["CHECKS", "ERROR", "NEAR_THRESHOLD", "SHUFFLE_BUFFER", "WARNING", "CheckOptions", "CheckProgress",
           "CheckReport", "Finding", "RecordRef"]

CHECKS: tuple[str, ...] = ("damage", "exact_duplicate", "split_leak", "near_duplicate", "label_conflict", "bbox",
                           "image_decode", "image_format", "image_size", "audio_decode", "audio_silent",
                           "audio_clipped", "audio_sample_rate", "unknown_label", "missing_feature",
                           "label_order")
ERROR, WARNING = "error", "warning"
NEAR_THRESHOLD = 8  # bits of 64 (pHash): re-encoded and resized copies differ by 0-4, light edits by up to ~8
SHUFFLE_BUFFER = 10_000  # tf.data's usual buffer_size


@dataclass(frozen=True, order=True)
class RecordRef:
    """A record by its file and its index within that file."""

    path: str
    index: int

    def __str__(self) -> str:
        return f"{shown_path(self.path)}:{self.index}"


@dataclass
class Finding:
    """One problem: which check found it, how sure it is (``error`` | ``warning``), the records, and why."""

    check: str
    severity: str
    records: list[RecordRef]
    detail: str

    def to_json(self) -> dict:
        return {"check": self.check, "severity": self.severity,
                "records": [{"path": shown_path(r.path), "index": r.index} for r in self.records],
                "detail": self.detail}


@dataclass
class CheckReport:
    """Every finding over ``records`` records, grouped by check in :data:`CHECKS` order."""

    records: int
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"records": self.records, "findings": [f.to_json() for f in self.findings]}

    @property
    def exit_code(self) -> int:
        """1 if any finding is an error, else 0 (the command line's exit code)."""
        return 1 if any(f.severity == ERROR for f in self.findings) else 0

    def by_check(self) -> dict[str, list[Finding]]:
        """Findings per check, in :data:`CHECKS` order, checks without findings left out."""
        out: dict[str, list[Finding]] = {}
        for finding in self.findings:
            out.setdefault(finding.check, []).append(finding)
        return {c: out[c] for c in CHECKS if c in out}


@dataclass
class CheckOptions:
    """What to check and how.

    ``splits``: split name -> a glob on the file name (None: splits from the
    shard names). ``label_map``: a label map file (None: ``label_map.pbtxt``
    beside the files, or a TFDS dataset's class names). ``image_key`` and
    ``label_key`` override the detected features. ``near_threshold``: the
    largest Hamming distance (bits of a 64-bit pHash) of near-duplicates.
    ``shuffle_buffer``: the buffer runs of one label are measured against.
    ``workers``: processes (0: one per core, none for a small input).
    """

    checks: frozenset[str] = frozenset(CHECKS)
    splits: dict[str, str] | None = None
    label_map: str | None = None
    image_key: str | None = None
    label_key: str | None = None
    near_threshold: int = NEAR_THRESHOLD
    shuffle_buffer: int = SHUFFLE_BUFFER
    workers: int = 0
    # In place of codec.parallel.pool.run_tasks (Beam's, from --runner); None: the local pool.
    task_runner: Callable[..., Generator[Any, None, None]] | None = None


@dataclass(frozen=True)
class CheckProgress:
    """How far a check is: ``done`` of ``total`` records (``total`` may be an estimate) in ``phase``."""

    phase: str
    done: int
    total: int
