"""The checks across records: duplicates, leaks between splits, near-duplicates, label conflicts,
missing features and label order, over what the per-record pass kept (a few dozen bytes a record).

Decisions a user sees:

- ``split_leak`` (error): the same pixels, or the same record, in two splits.
- ``label_conflict`` (error): one image (identical pixels) with different labels, in any split.
- ``exact_duplicate`` (warning): identical records within a split, or one image in several records
  of a split that differ only in other features (boxes...). Training weighs them twice; nothing breaks.
- ``near_duplicate`` (warning): distinct pixels whose pHashes are within the threshold. Listed once:
  in two splits its detail says it is a leak too ("...; in eval (1) and train (1): a leak between
  splits"); only when ``near_duplicate`` is not checked is such a group a ``split_leak`` warning.
- ``missing_feature``: a feature at least 90% of records have; lacking it is a warning, holding it
  with another type is an error (``tf.io.parse_example`` fails on it).
- ``label_order`` (warning): a run of one label at least half the shuffle buffer long (and 32).
"""
from __future__ import annotations

import os
from collections import Counter

import numpy as np

from codec.doctor.audio_checks import sample_rate_findings
from codec.doctor.hashing import near_pairs
from codec.doctor.per_record import HAS_IMAGE, SKIPPED, TaskResult
from codec.doctor.report import ERROR, WARNING, Finding, RecordRef

__all__ = ["COMMON_SHARE", "MAX_GROUP_RECORDS", "NEAR_CHECKS", "Store", "digest_order", "label_order_findings",
           "missing_findings", "phash_text", "signature_summary"]

COMMON_SHARE = 0.9  # a feature this share of records has is expected in every record
MAX_GROUP_RECORDS = 1000  # records listed in one finding of a group; the detail gives the full count
NEAR_CHECKS = frozenset({"near_duplicate", "split_leak"})  # the checks the near-duplicate search serves


def phash_text(far: int) -> str:
    """How close similar images are: "identical pHash" (0 bits apart), else "pHash within N bits"."""
    return "identical pHash" if far == 0 else f"pHash within {far} bit{'s' if far != 1 else ''}"


class Store:
    """The per-record arrays of every task, in one place, and the findings drawn from them."""

    def __init__(self, paths: list[str], splits: list[str | None]) -> None:
        self.paths = paths
        self.splits = splits  # per file
        self.results: list[TaskResult] = []
        self.label_texts: dict[int, str] = {}

    def add(self, result: TaskResult) -> None:
        self.label_texts.update(result.label_texts)
        result.label_texts = {}
        result.findings = []
        self.results.append(result)

    def _arrays(self) -> None:
        results = [r for r in self.results if r.count]
        self.file = np.concatenate([np.full(r.count, r.file_id, dtype=np.uint32) for r in results] or
                                   [np.zeros(0, np.uint32)])
        self.index = np.concatenate([np.arange(r.start, r.start + r.count, dtype=np.int64) for r in results] or
                                    [np.zeros(0, np.int64)])
        for name, empty in (("rec_digest", np.zeros((0, 16), np.uint8)), ("pix_digest", np.zeros((0, 16), np.uint8)),
                            ("phash", np.zeros(0, np.uint64)), ("flags", np.zeros(0, np.uint8)),
                            ("label", np.zeros(0, np.uint64))):
            setattr(self, name, np.concatenate([getattr(r, name) for r in results] or [empty]))
            for r in results:
                setattr(r, name, None)  # one copy at a time
        self._split_ids()

    def _split_ids(self) -> None:
        names = sorted({s for s in self.splits if s is not None})
        split_ids = np.array([-1 if s is None else names.index(s) for s in self.splits] or [0], dtype=np.int16)
        self.split_names = names
        self.split = split_ids[self.file] if len(self.file) else np.zeros(0, np.int16)

    def set_rows(self, file: np.ndarray, index: np.ndarray, label: np.ndarray, rec_digest: np.ndarray,
                 label_texts: dict[int, str]) -> None:
        """Hold just these records (the members of groups found elsewhere, e.g. by a Beam GroupByKey), for
        :meth:`record_group`, :meth:`pixel_group` and :meth:`near_group` over their rows."""
        self.file = np.asarray(file, dtype=np.uint32)
        self.index = np.asarray(index, dtype=np.int64)
        self.label = np.asarray(label, dtype=np.uint64)
        self.rec_digest = np.asarray(rec_digest, dtype=np.uint8).reshape(-1, 16)
        self.label_texts = label_texts
        self._split_ids()

    def refs(self, rows: np.ndarray) -> list[RecordRef]:
        order = np.lexsort((self.index[rows], self.file[rows]))
        return [RecordRef(self.paths[f], int(i)) for f, i in zip(self.file[rows][order].tolist(),
                                                                  self.index[rows][order].tolist())]

    def _split_text(self, rows: np.ndarray) -> str:
        counts = Counter(self.split[rows].tolist())
        return " and ".join(f"{self.split_names[s]} ({n})" for s, n in sorted(counts.items()) if s >= 0)

    def _splits(self, rows: np.ndarray) -> int:
        return len({s for s in self.split[rows].tolist() if s >= 0})

    # ------------------------------------------------------------ findings
    def findings(self, checks: frozenset[str], threshold: int, min_run: int, shuffle_buffer: int) -> list[Finding]:
        self._arrays()
        out: list[Finding] = []
        usable = (self.flags & SKIPPED) == 0
        has_image = (self.flags & HAS_IMAGE) != 0
        for rows in _groups(self.rec_digest, usable):
            out += self.record_group(rows, bool(has_image[rows].any()))
        for rows in _groups(self.pix_digest, has_image):
            out += self.pixel_group(rows)
        if checks & NEAR_CHECKS:
            out += self._near(has_image, threshold, "near_duplicate" in checks)
        if "missing_feature" in checks:
            out += self._missing(usable)
        if "label_order" in checks:
            out += label_order_findings(self.results, self.paths, min_run, shuffle_buffer)
        if "audio_sample_rate" in checks:
            out += sample_rate_findings(self.results, self.paths)
        return [f for f in out if f.check in checks]

    def _finding(self, check: str, severity: str, rows: np.ndarray, detail: str) -> Finding:
        if len(rows) > MAX_GROUP_RECORDS:
            detail += f" (the first {MAX_GROUP_RECORDS:,} of {len(rows):,} records listed)"
            rows = np.sort(rows)[:MAX_GROUP_RECORDS]
        return Finding(check, severity, self.refs(rows), detail)

    def record_group(self, rows: np.ndarray, has_image: bool) -> list[Finding]:
        """The findings of records with identical bytes (``has_image``: any of them has decoded pixels)."""
        out = []
        if self._splits(rows) >= 2 and not has_image:
            out.append(self._finding("split_leak", ERROR, rows, f"identical records in {self._split_text(rows)}"))
        for split in np.unique(self.split[rows]).tolist():
            part = rows[self.split[rows] == split]
            if len(part) >= 2:
                where = f" in {self.split_names[split]}" if split >= 0 else ""
                out.append(self._finding("exact_duplicate", WARNING, part, f"{len(part)} identical records{where}"))
        return out

    def _labels_text(self, rows: np.ndarray) -> str:
        labels = [self.label_texts.get(v, "none") if v else "none" for v in self.label[rows].tolist()]
        return "; ".join(f"{os.path.basename(r.path)}:{r.index}: {t}"
                         for r, t in zip(self.refs(rows), _by_ref_order(self, rows, labels)))

    def pixel_group(self, rows: np.ndarray) -> list[Finding]:
        """The findings of records whose images have identical pixels."""
        out = []
        labels = {v for v in self.label[rows].tolist() if v}
        if self._splits(rows) >= 2:
            out.append(self._finding("split_leak", ERROR, rows,
                                     f"the same image (identical pixels) in {self._split_text(rows)}"))
        if len(labels) >= 2:
            out.append(self._finding("label_conflict", ERROR, rows,
                                     f"the same image (identical pixels) labelled differently: "
                                     f"{self._labels_text(rows)}"))
        elif self._splits(rows) < 2 and len(_unique_rows(self.rec_digest[rows])) > 1:
            out.append(self._finding("exact_duplicate", WARNING, rows,
                                     f"the same image (identical pixels) in {len(rows)} records that differ "
                                     "in other features"))
        return out

    def near_group(self, rows: np.ndarray, images: int, far: int, near: bool = True) -> list[Finding]:
        """The finding of one set of similar images: ``images`` distinct ones in the records ``rows``, the
        farthest linked pair ``far`` bits apart. Listed once: a ``near_duplicate`` that names the splits
        when it spans several, or, with ``near`` off (that check not asked for), a ``split_leak`` warning."""
        across = self._splits(rows) >= 2
        if not near:
            return [self._finding("split_leak", WARNING, rows, f"near-duplicate images ({phash_text(far)}) "
                                  f"in {self._split_text(rows)}")] if across else []
        detail = (f"{images} similar images in {len(rows)} records ({phash_text(far)})"
                  + (f"; labels {self._labels_text(rows)}" if len(rows) <= 20 else "")
                  + (f"; in {self._split_text(rows)}: a leak between splits" if across else ""))
        return [self._finding("near_duplicate", WARNING, rows, detail)]

    def _near(self, has_image: np.ndarray, threshold: int, near: bool) -> list[Finding]:
        rows = np.flatnonzero(has_image)
        if len(rows) < 2:
            return []
        _, first, inverse = np.unique(_prefix(self.pix_digest[rows]), return_index=True, return_inverse=True)
        i, j, distance = near_pairs(self.phash[rows[first]], threshold)
        if not len(i):
            return []
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = len(first)
        graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
        _, component = connected_components(graph, directed=False)
        linked = np.zeros(n, dtype=bool)
        linked[i] = linked[j] = True
        worst = np.zeros(n, dtype=np.int64)
        np.maximum.at(worst, i, distance)
        np.maximum.at(worst, j, distance)
        out = []
        member_component = component[inverse]
        member_linked = linked[inverse]
        for c in np.unique(component[linked]).tolist():
            group = rows[(member_component == c) & member_linked]
            reps = np.flatnonzero(component == c)
            out += self.near_group(group, len(reps), int(worst[reps].max()), near)
        return out

    def _missing(self, usable: np.ndarray) -> list[Finding]:
        tasks = []
        offset = 0
        for r in self.results:
            if not r.count:
                continue
            part = usable[offset:offset + r.count]
            offset += r.count
            tasks.append((self.paths[r.file_id], signature_summary(r.sigs, r.sig, part, r.start)))
            r.sig = None
        return missing_findings(tasks)


def signature_summary(sigs: list[tuple], sig: np.ndarray, usable: np.ndarray,
                      start: int) -> list[tuple[tuple, int, list[int]]]:
    """What missing_feature needs of one task: per feature signature (``sigs``, by the ids in ``sig``), the
    usable records with it and the indices of the first :data:`MAX_GROUP_RECORDS` of them."""
    tracked = sig.astype(np.int64)
    tracked[~usable] = -1
    tracked[tracked >= len(sigs)] = -1  # UNTRACKED: past the task's signature limit
    counts = np.bincount(tracked[tracked >= 0], minlength=len(sigs))
    out = []
    for sid, s in enumerate(sigs):
        first = np.flatnonzero(tracked == sid)[:MAX_GROUP_RECORDS] if counts[sid] else np.zeros(0, np.int64)
        out.append((s, int(counts[sid]), (first + start).tolist()))
    return out


def missing_findings(tasks: list[tuple[str, list[tuple[tuple, int, list[int]]]]]) -> list[Finding]:
    """missing_feature over every task's :func:`signature_summary` (with its file's path), in task order."""
    signatures: dict[tuple, int] = {}
    records: dict[tuple, list[RecordRef]] = {}
    for path, summary in tasks:
        for s, n, indices in summary:
            signatures[s] = signatures.get(s, 0) + n
            listed = records.setdefault(s, [])
            listed += [RecordRef(path, i) for i in indices[:MAX_GROUP_RECORDS - len(listed)]]
    tracked = sum(signatures.values())
    if not tracked:
        return []
    present: Counter = Counter()
    types: dict[str, Counter] = {}
    for s, n in signatures.items():
        for key, dtype in s:
            present[key] += n
            if dtype != "empty":
                types.setdefault(key, Counter())[dtype] += n
    expected = {k for k, n in present.items() if n >= COMMON_SHARE * tracked}
    dominant = {}
    for key, seen in types.items():
        dtype, n = seen.most_common(1)[0]
        if n >= COMMON_SHARE * sum(seen.values()):
            dominant[key] = dtype
    out = []
    for s in signatures:
        keys = dict(s)
        lacks = sorted(expected - set(keys))
        wrong = sorted(k for k, t in keys.items() if k in dominant and t not in (dominant[k], "empty"))
        if not lacks and not wrong:
            continue
        for ref in records[s]:
            if wrong:
                detail = "; ".join(f"{k} is {keys[k]}, elsewhere {dominant[k]}" for k in wrong)
                out.append(Finding("missing_feature", ERROR, [ref], detail))
            if lacks:
                detail = "lacks " + ", ".join(f"{k} ({present[k]:,} of {tracked:,} records have it)" for k in lacks)
                out.append(Finding("missing_feature", WARNING, [ref], detail))
    return out


def label_order_findings(results: list, paths: list[str], min_run: int, shuffle_buffer: int) -> list[Finding]:
    """label_order over the tasks' runs of one label (``results``: objects with ``file_id``, ``start``, ``runs``),
    the runs of neighbouring tasks of a file joined."""
    out = []
    by_file: dict[int, list] = {}
    for r in results:
        by_file.setdefault(r.file_id, []).append(r)
    for file_id, found in by_file.items():
        runs: list[list] = []
        for r in sorted(found, key=lambda r: r.start):
            for start, length, text in r.runs:
                if runs and runs[-1][2] == text and runs[-1][0] + runs[-1][1] == start:
                    runs[-1][1] += length
                else:
                    runs.append([start, length, text])
        for start, length, text in runs:
            if length < min_run:
                continue
            if length > shuffle_buffer:
                why = f"longer than the shuffle buffer ({shuffle_buffer:,}): shuffled batches hold only it"
            else:
                why = f"over half the shuffle buffer ({shuffle_buffer:,}): shuffled batches lean to it"
            refs = [RecordRef(paths[file_id], start), RecordRef(paths[file_id], start + length - 1)]
            out.append(Finding("label_order", WARNING, refs,
                               f"{length:,} records in a row labelled {text} (records {start:,}.."
                               f"{start + length - 1:,}), {why}"))
    return out


def digest_order(digest: bytes) -> tuple[int, bytes]:
    """The order :func:`_groups` lists groups in (the first 8 bytes as a native uint64), for groups found elsewhere."""
    return int(np.frombuffer(digest[:8], dtype=np.uint64)[0]), digest


def _by_ref_order(store: Store, rows: np.ndarray, values: list) -> list:
    order = np.lexsort((store.index[rows], store.file[rows]))
    return [values[k] for k in order.tolist()]


def _unique_rows(digests: np.ndarray, **kwargs):
    """``np.unique`` of 16-byte rows."""
    keys = np.ascontiguousarray(digests).view(np.dtype((np.void, digests.shape[1]))).reshape(-1)
    return np.unique(keys, **kwargs)


def _prefix(digests: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each 16-byte digest as one uint64: sorting these costs half the memory."""
    return np.ascontiguousarray(digests[:, :8]).view(np.uint64).reshape(-1)


def _groups(digests: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """Rows (among ``mask``) whose digests are equal, for every digest two or more rows share.

    Sorted by the digests' first 8 bytes; rows sharing those are then told apart by all 16.
    """
    rows = np.flatnonzero(mask)
    if len(rows) < 2:
        return []
    prefix = _prefix(digests[rows])
    order = np.argsort(prefix, kind="stable")
    same = prefix[order][1:] == prefix[order][:-1]
    edges = np.flatnonzero(np.diff(np.concatenate(([0], same.view(np.int8), [0]))))
    out = []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        members = rows[order[a:b + 1]]
        full: dict[bytes, list[int]] = {}
        for row in members.tolist():
            full.setdefault(digests[row].tobytes(), []).append(row)
        out.extend(np.array(group, dtype=np.int64) for group in full.values() if len(group) >= 2)
    return out
