"""One pass over a run of records of one file: the per-record checks, and a few dozen bytes per record
for the checks across records (digests, perceptual hash, label, feature signature).

Runs in the pool's worker processes (:mod:`codec.doctor.pool`), or in the
caller's for a small input. Never raises for bad data: a record that does not
decode is a finding.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from codec.decode.decoder import decode_record, feature_values, record_features
from codec.decode.image_sniff import MAX_PIXELS, candidate_formats, open_image
from codec.doctor import checks as rules
from codec.doctor.audio_checks import AUDIO_CHECKS, MAX_RATE_EXAMPLES, record_audio
from codec.doctor.hashing import DIGEST_BYTES, digest, perceptual_hash, pixel_digest
from codec.doctor.keys import BBOX_KEYS, Roles, resolve_roles
from codec.errors import ImageTooLargeError, TFRecordError
from codec.format.framing import RecordStatus

__all__ = ["HAS_IMAGE", "MAX_FINDINGS", "SKIPPED", "Inspector", "Task", "TaskResult", "problem_findings"]

HAS_IMAGE = 1  # pixels decoded: pixel digest and perceptual hash are set
SKIPPED = 2  # damaged: its data is not what was written, so it is not compared with others
MAX_FINDINGS = 1000  # per check and task; the rest are counted
MAX_SIGNATURES = 4096  # distinct feature-key sets tracked per task (missing_feature)
UNTRACKED = 0xFFFF
PROGRESS_EVERY = 500
MIN_RUN = 32  # label_order: shorter runs happen by chance


@dataclass(frozen=True)
class Task:
    """Records ``start`` .. ``stop - 1`` (``stop`` None: to the end) of ``path``, file number ``file_id``."""

    task_id: int
    file_id: int
    path: str
    info: dict | None = None
    start: int = 0
    stop: int | None = None
    whole: bool = True  # the only task of its file: it reports every problem of the file


@dataclass
class TaskResult:
    """What one task found; arrays have one entry per record, in order from ``start``."""

    task_id: int
    file_id: int
    start: int
    count: int = 0
    rec_digest: np.ndarray | None = None
    pix_digest: np.ndarray | None = None
    phash: np.ndarray | None = None
    flags: np.ndarray | None = None
    label: np.ndarray | None = None
    sig: np.ndarray | None = None
    sigs: list[tuple] = field(default_factory=list)
    label_texts: dict[int, str] = field(default_factory=dict)
    findings: list[tuple[str, str, int | None, str]] = field(default_factory=list)
    kept: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    runs: list[tuple[int, int, str]] = field(default_factory=list)  # (first index, length, label)
    audio_rates: dict[tuple[str, int], list] = field(default_factory=dict)  # (key, rate) -> [clips, [indices]]
    error: str | None = None


class Inspector:
    """The per-record checks of one process, with what it decided once (payload, names, feature roles)."""

    def __init__(self, named: list[str], label_map: str | None, checks: frozenset[str],
                 image_key: str | None = None, label_key: str | None = None, shuffle_buffer: int = 10_000) -> None:
        from codec.datasets.payload_choice import choose_for

        choice = choose_for(named, label_map=label_map)
        self.payload = choice.payload
        self.labels = choice.labels
        self.checks = checks
        self.image_key = image_key
        self.label_key = label_key
        self.min_run = max(MIN_RUN, shuffle_buffer // 2)
        self._roles: dict[tuple, Roles] = {}
        self.hashing = bool(checks & {"near_duplicate", "split_leak", "label_conflict", "exact_duplicate"})
        self.imaging = self.hashing or bool(checks & {"image_decode", "image_format", "image_size"})
        self.hearing = bool(checks & AUDIO_CHECKS)

    # ------------------------------------------------------------ a task
    def run(self, task: Task, progress=None) -> TaskResult:
        """Check the task's records; ``progress(n)`` is told of every few hundred records done."""
        from codec.sources.record_file import open_record_file

        out = TaskResult(task.task_id, task.file_id, task.start)
        try:
            f = open_record_file(task.path, check_crc=True, use_cache=True, info=task.info)
        except TFRecordError as exc:
            out.error = str(exc)
            return out
        state = _TaskState()
        try:
            with f:
                f.build_index()
                if task.whole:
                    for finding in problem_findings(f.problems):
                        self._find(out, *finding)
                stop = len(f) if task.stop is None else min(task.stop, len(f))
                self._alloc(out, max(0, stop - task.start))
                for k, i in enumerate(range(task.start, stop)):
                    self._record(f, i, k, out, state)
                    if progress is not None and (k + 1) % PROGRESS_EVERY == 0:
                        progress(PROGRESS_EVERY)
                state.close_run(out, self.min_run, final=True)
                if progress is not None:
                    progress(out.count % PROGRESS_EVERY)
        except TFRecordError as exc:  # the file changed or went away while it was read
            out.error = str(exc)
        out.sigs = state.sig_list
        return out

    def _alloc(self, out: TaskResult, n: int) -> None:
        out.count = n
        out.rec_digest = np.zeros((n, DIGEST_BYTES), dtype=np.uint8)
        out.pix_digest = np.zeros((n, DIGEST_BYTES), dtype=np.uint8)
        out.phash = np.zeros(n, dtype=np.uint64)
        out.flags = np.zeros(n, dtype=np.uint8)
        out.label = np.zeros(n, dtype=np.uint64)
        out.sig = np.full(n, UNTRACKED, dtype=np.uint16)

    def _find(self, out: TaskResult, check: str, severity: str, index: int, detail: str) -> None:
        if check not in self.checks:
            return
        if out.kept[check] >= MAX_FINDINGS:
            out.dropped[check] += 1
            return
        out.kept[check] += 1
        out.findings.append((check, severity, index, detail))

    def _record(self, f, i: int, k: int, out: TaskResult, state: _TaskState) -> None:
        rec = f.read(i)
        if rec.status is RecordStatus.DATA_CRC:
            self._find(out, "damage", "error", i, f"data CRC: stored {rec.stored_crc:#010x}, "
                                                  f"computed {rec.computed_crc:#010x}")
        if not rec.status.data_intact:
            out.flags[k] = SKIPPED
            state.add_label(out, i, None, self.min_run)
            return
        out.rec_digest[k] = np.frombuffer(digest(rec.data), dtype=np.uint8)
        decoded = decode_record(rec.data, self.payload)
        features = record_features(decoded)
        if features is None:
            state.add_label(out, i, None, self.min_run)
            return
        values = {}
        types = {}
        for key in features:
            dtype, vals = feature_values(features[key])
            values[key] = vals
            types[key] = dtype or "empty"
        signature = tuple(sorted(types.items()))
        out.sig[k] = state.signature_id(signature)
        roles = self._roles.get(signature)
        if roles is None:
            roles = self._roles[signature] = resolve_roles(types, decoded, self.payload, self.labels,
                                                           self.image_key, self.label_key)
        labels = values.get(roles.label_key) if roles.label_key is not None else None
        if labels:
            out.label[k] = state.label_id(out, tuple(sorted(labels)), self._label_text)
        state.add_label(out, i, _primary(labels), self.min_run, self._label_text)
        if roles.bbox and "bbox" in self.checks:
            lists = {key: values.get(key) for key in BBOX_KEYS}
            for key in ("image/object/class/label", "image/object/class/text"):
                if values.get(key):
                    lists[key] = values[key]
            for problem in rules.bbox_problems(lists):
                self._find(out, "bbox", "error", i, problem)
        if decoded.boxes is not None and "bbox" in self.checks:
            found = [(x0, y0, x1, y1) for y0, x0, y1, x1, _ in decoded.boxes()]
            for problem in rules.box_problems(found):
                self._find(out, "bbox", "error", i, problem)
        if "unknown_label" in self.checks:
            for key, kind in roles.checked_labels:
                names = self.labels.get(key if kind == "id" else key.rsplit("/", 1)[0] + "/label")
                for problem in rules.label_problems(key, kind, values.get(key) or [], names):
                    self._find(out, "unknown_label", "error", i, problem)
        if self.hearing:
            self._audio(decoded, i, out)
        if roles.image_key is not None and roles.image_key in values and self.imaging:
            self._image(decoded, roles, values, types, i, k, out)

    def _audio(self, decoded, i: int, out: TaskResult) -> None:
        """The record's clips decoded: findings of each, and its sample rates for audio_sample_rate."""
        findings, rates = record_audio(decoded, self.checks)
        for check, detail in findings:
            self._find(out, check, "error" if check == "audio_decode" else "warning", i, detail)
        for where in rates:
            entry = out.audio_rates.setdefault(where, [0, []])
            entry[0] += 1
            if len(entry[1]) < MAX_RATE_EXAMPLES and i not in entry[1][-1:]:
                entry[1].append(i)

    def _label_text(self, label) -> str:
        if isinstance(label, bytes):
            return label.decode("utf-8", "replace")
        if isinstance(label, int) and self.labels:
            for key in ("image/class/label", "image/object/class/label", self.label_key):
                name = self.labels.name(key, label) if key else None
                if name is not None:
                    return f"{label} ({name})"
        return str(label)

    # ------------------------------------------------------------ the image
    def _image(self, decoded, roles: Roles, values: dict, types: dict, i: int, k: int, out: TaskResult) -> None:
        key = roles.image_key
        items = values[key]
        if types[key] != "bytes" or not items:
            return  # missing_feature says what is wrong with the feature itself
        data = bytes(items[0])
        formats = candidate_formats(data)
        if not formats:
            self._raw_image(decoded, key, data, i, k, out)
            return
        try:
            with open_image(data, formats) as image:
                actual, (width, height) = image.format or formats[0], image.size
                if roles.format_key is not None and values.get(roles.format_key) and "image_format" in self.checks:
                    problem = rules.format_problem(roles.format_key, values[roles.format_key][0], actual)
                    if problem is not None:
                        self._find(out, "image_format", "error", i, problem)
                declared = {"width": _one(values, roles.width_key), "height": _one(values, roles.height_key)}
                problem = rules.size_problem(declared, width, height)
                if problem is not None and "image_size" in self.checks:
                    self._find(out, "image_size", "error", i, problem)
                if width * height > MAX_PIXELS:
                    self._find(out, "image_decode", "warning", i, f"{key}: {actual} {width}x{height}: too large "
                                                                  "to decode here, not checked further")
                    return
                if not (self.hashing or "image_decode" in self.checks):
                    return
                if image.format == "JPEG":
                    image.draft(image.mode, (rules.HASH_SIDE, rules.HASH_SIDE))
                image.load()
                self._hash(image, k, out)
        except ImageTooLargeError as exc:  # past Pillow's own bomb limit: the size is not known
            self._find(out, "image_decode", "warning", i, f"{key}: {formats[0]} {exc}, not checked further")
        except Exception as exc:  # noqa: BLE001 - Pillow raises OSError, SyntaxError, struct.error...
            self._find(out, "image_decode", "error", i, f"{key}: {formats[0]} bytes do not decode: {exc}")

    def _raw_image(self, decoded, key: str, data: bytes, i: int, k: int, out: TaskResult) -> None:
        """An image key whose bytes have no known magic: raw pixels (shape from sibling features), or bad."""
        from codec.decode.images import decode_image, find_images

        refs = [r for r in find_images(decoded) if r.key == key and r.step is None and r.value_index == 0]
        if not refs:
            shown = data[:8].hex(" ") if data else "empty"
            self._find(out, "image_decode", "error", i, f"{key}: not an image of a known format "
                                                        f"({len(data):,} bytes: {shown})")
            return
        try:
            self._hash(decode_image(refs[0]), k, out)
        except Exception as exc:  # noqa: BLE001
            self._find(out, "image_decode", "error", i, f"{key}: {exc}")

    def _hash(self, image, k: int, out: TaskResult) -> None:
        if not self.hashing:
            return
        out.pix_digest[k] = np.frombuffer(pixel_digest(image), dtype=np.uint8)
        out.phash[k] = perceptual_hash(image)
        out.flags[k] |= HAS_IMAGE


def problem_findings(problems) -> list[tuple[str, str, int | None, str]]:
    """Damage the index pass found (data CRCs are found as records are read), as findings."""
    from codec.format.framing import ProblemKind

    return [("damage", "error", p.index, f"{p.kind.value} at offset {p.offset:,}: {p.detail}")
            for p in problems if p.kind is not ProblemKind.DATA_CRC]


def _one(values: dict, key: str | None) -> int | None:
    items = values.get(key) if key is not None else None
    return int(items[0]) if items and len(items) == 1 and isinstance(items[0], int) else None


def _primary(labels) -> object | None:
    """A record's label for label order: its most common class (the smallest among ties)."""
    if not labels:
        return None
    if len(labels) == 1:
        return labels[0]
    counts = Counter(labels)
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


class _TaskState:
    """Interned feature signatures and labels, and the current run of one label."""

    def __init__(self) -> None:
        self.sig_ids: dict[tuple, int] = {}
        self.sig_list: list[tuple] = []
        self.label_ids: dict[tuple, int] = {}
        self.run_label: object = None
        self.run_text = ""
        self.run_start = 0
        self.run_length = 0
        self.first_run = True

    def signature_id(self, signature: tuple) -> int:
        found = self.sig_ids.get(signature)
        if found is None:
            if len(self.sig_list) >= MAX_SIGNATURES:
                return UNTRACKED
            found = self.sig_ids[signature] = len(self.sig_list)
            self.sig_list.append(signature)
        return found

    def label_id(self, out: TaskResult, labels: tuple, text) -> int:
        """A 64-bit id of a record's labels (never 0), the same in every process."""
        found = self.label_ids.get(labels)
        if found is None:
            found = int.from_bytes(digest(repr(labels).encode())[:8], "little") | 1
            self.label_ids[labels] = found
            if len(out.label_texts) < 100_000:
                out.label_texts[found] = ", ".join(text(v) for v in labels)
        return found

    def add_label(self, out: TaskResult, index: int, label, min_run: int, text=str) -> None:
        if label is not None and self.run_length and label == self.run_label:
            self.run_length += 1
            return
        self.close_run(out, min_run)
        self.run_label, self.run_start = label, index
        self.run_length = 1 if label is not None else 0
        self.run_text = text(label) if label is not None else ""

    def close_run(self, out: TaskResult, min_run: int, final: bool = False) -> None:
        """Keep the run just ended if it is long, or the task's first or last (a neighbour task may go on)."""
        if self.run_length and (self.run_length >= min_run or self.first_run or final):
            out.runs.append((self.run_start, self.run_length, self.run_text))
        if self.run_length:
            self.first_run = False
