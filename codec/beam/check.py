"""The dataset doctor (``check --runner ...``) as a Beam pipeline: the per-record pass in the workers, the
checks across records grouped by GroupByKey, the report assembled here as the local run assembles it.

Stages, and what travels between them (bytes per record, before Beam's own framing):

1. **Inspect**, one work item per task (the tasks :func:`codec.doctor.engine.prepare` plans: a shard, or a
   record range of a big plain file). An :class:`~codec.doctor.per_record.Inspector` runs the per-record
   checks (damage, bbox, image_decode, image_format, image_size, unknown_label) and computes each record's
   digests, pHash and label, as a local worker does. Out of it come:

   - per task, for the driver: its findings (at most 1,000 per check, the rest counted), its runs of one
     label (label_order), and per feature signature the number of records and the first 1,000 of them
     (missing_feature needs dataset-wide counts). This grows with findings and signatures, not records.
   - per intact record, keyed by its 16-byte record digest: (file, index, has image), ~35 bytes.
   - per record with decoded pixels, keyed by its 16-byte pixel digest: (file, index, label id, label
     text, record digest, pHash), ~70 bytes plus the label text (which a label_conflict finding quotes).

2. **GroupByKey on the record digest**: only groups of two or more records go on, to the driver
   (exact_duplicate, split_leak of identical records). Every other record stops here.
3. **GroupByKey on the pixel digest**: one element per distinct image. Groups of two or more go to the
   driver (split_leak, label_conflict, exact_duplicate of one image in records that differ otherwise).
4. **Near-duplicates**, multi-index hashing as :mod:`codec.doctor.hashing` does in memory, here as a join:
   each distinct image is keyed by each of its pHash's ``m`` bands, once under the band's value
   ("stored") and once under each value within ``r = threshold // m`` flipped bits ("query"). Two hashes
   within the threshold are within ``r`` bits on some band (pigeonhole), so every such pair meets in some
   group. :func:`band_plan` picks ``m`` from the number of distinct images (counted first, a side input)
   to balance elements shuffled against comparisons: about 40 bytes an element, 70 elements per image
   for a million images at threshold 8. **GroupByKey on (band, value)**; inside a group, stored x stored
   and query x stored pairs are compared by Hamming distance with the threshold; **Distinct** drops pairs
   found through several bands. The pairs (two digests and a distance) go to the driver, and a
   **CoGroupByKey** of the linked digests with the single-record images sends the members of each linked
   image that stage 3 did not already send (so a single-record image crosses one more shuffle, ~70 bytes;
   images of two or more records went to the driver in stage 3).

5. **The driver** reads the results back as :func:`codec.beam.pipeline.run_pipeline` does for every
   Beam pass, joins linked images into sets (union-find over the pairs), and draws the findings with
   :class:`codec.doctor.grouping.Store`'s per-group methods and :func:`codec.doctor.engine.finish`, so
   ``check --json`` prints what the local run prints, byte for byte.

Why: whatever grows with the records stays in the workers and the shuffles; only what a finding names
comes back. That is all the members of a duplicate group or a set of similar images (a million identical
records bring a million members, about 40 bytes each), as the local report lists up to 1,000 of them and
counts its splits and labels over all.
"""
from __future__ import annotations

import functools
import itertools
import math

from codec.doctor.report import CheckOptions, CheckProgress, CheckReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generator, Iterable, Iterator

__all__ = ["assemble", "band_keys", "band_pairs", "band_plan", "check_iter"]

SHUFFLE_COST = 50  # band_plan's cost model: one shuffled element costs about this many hash comparisons
RECORDS, IMAGES, SINGLE, HASH = "records", "images", "single", "hash"


# ---------------------------------------------------------------- near-duplicate bands (pure Python)
def band_plan(images: int, threshold: int) -> tuple[list[int], int]:
    """The band edges (bit positions 0..64) and the bits flipped per probe ``r`` for ``images`` distinct
    hashes: the cheapest of elements shuffled (bands times probes) and comparisons (their group sizes)."""
    best: tuple[list[int], int] | None = None
    best_cost = math.inf
    for m in range(1, 65):
        width = 64 // m
        r = threshold // m
        probes = sum(math.comb(width + 1, k) for k in range(r + 1))
        cost = m * probes * (SHUFFLE_COST + images / 2.0 ** width)
        if cost < best_cost:
            best, best_cost = ([round(64 * k / m) for k in range(m + 1)], r), cost
    assert best is not None
    return best


def band_keys(phash: int, edges: list[int], r: int) -> Iterator[tuple[tuple[int, int], bool]]:
    """Where a hash goes: ``((band, value), True)`` for each band's own value, ``((band, value ^ mask), False)``
    for each probe of up to ``r`` flipped bits."""
    for band, (lo, hi) in enumerate(zip(edges, edges[1:])):
        value = (phash >> lo) & ((1 << (hi - lo)) - 1)
        yield (band, value), True
        for mask in _flips(hi - lo, r):
            yield (band, value ^ mask), False


@functools.lru_cache(maxsize=16)
def _flips(width: int, r: int) -> tuple[int, ...]:
    """Every mask of 1 to ``r`` bits set among ``width``."""
    return tuple(sum(1 << b for b in bits) for k in range(1, r + 1) for bits in itertools.combinations(range(width), k))


def band_pairs(members: Iterable[tuple[bytes, int, bool]], threshold: int) -> Iterator[tuple[bytes, bytes, int]]:
    """The pairs one band group finds: ``(a, b, distance)``, ``a < b``, of members ``(key, hash, stored)``
    whose hashes are at most ``threshold`` bits apart (stored with stored, query with stored)."""
    stored: list[tuple[bytes, int]] = []
    queries: list[tuple[bytes, int]] = []
    for key, phash, own in members:
        (stored if own else queries).append((key, phash))
    for n, (a, ha) in enumerate(stored):
        for b, hb in stored[n + 1:]:
            d = (ha ^ hb).bit_count()
            if d <= threshold and a != b:
                yield (a, b, d) if a < b else (b, a, d)
    for a, ha in queries:
        for b, hb in stored:
            d = (ha ^ hb).bit_count()
            if d <= threshold and a != b:
                yield (a, b, d) if a < b else (b, a, d)


# ---------------------------------------------------------------- the workers' steps
class _Inspect:
    """One task's per-record pass: its summary (main output) and its records keyed for the groupings."""

    def __init__(self, setup: dict, records: bool, images: bool) -> None:
        self.setup = setup
        self.records = records
        self.images = images
        self._inspector = None

    def __getstate__(self) -> dict:
        return {"setup": self.setup, "records": self.records, "images": self.images}

    def __setstate__(self, state: dict) -> None:
        # Unpickled: built as the constructor builds it (no subclasses).
        self.__init__(**state)  # type: ignore[misc]

    def __call__(self, item):
        import numpy as np
        from apache_beam.pvalue import TaggedOutput

        from codec.doctor.grouping import signature_summary
        from codec.doctor.per_record import HAS_IMAGE, SKIPPED, Inspector, TaskResult

        k, task = item
        if self._inspector is None:
            self._inspector = Inspector(**self.setup)
        r = self._inspector.run(task)
        signatures = []
        if r.count:
            usable = (r.flags & SKIPPED) == 0
            has_image = (r.flags & HAS_IMAGE) != 0
            signatures = signature_summary(r.sigs, r.sig, usable, r.start)
            if self.records:
                for row in np.flatnonzero(usable).tolist():
                    yield TaggedOutput(RECORDS, (r.rec_digest[row].tobytes(),
                                                 (r.file_id, r.start + row, bool(has_image[row]))))
            if self.images:
                for row in np.flatnonzero(has_image).tolist():
                    label = int(r.label[row])
                    yield TaggedOutput(IMAGES, (r.pix_digest[row].tobytes(),
                                                (r.file_id, r.start + row, label, r.label_texts.get(label),
                                                 r.rec_digest[row].tobytes(), int(r.phash[row]))))
        summary = TaskResult(r.task_id, r.file_id, r.start, r.count, findings=r.findings, dropped=r.dropped,
                             runs=r.runs, error=r.error, audio_rates=r.audio_rates)
        yield "task", k, summary, signatures


def _duplicates(item):
    key, members = item
    members = sorted(members)
    if len(members) >= 2:
        yield "rec", key, members


def _images(item, near: bool):
    """A distinct image: its group to the driver when it has two or more records; for the near-duplicate
    search its hash, and (one record) its member, held back until a pair links it."""
    from apache_beam.pvalue import TaggedOutput

    key, members = item
    members = sorted(members)
    if len(members) >= 2:
        yield "pix", key, members
    if near:
        if len(members) == 1:
            yield TaggedOutput(SINGLE, (key, members))
        yield TaggedOutput(HASH, (key, members[0][5]))


def _bands(item, images: int, threshold: int):
    """A distinct image's (band, value) keys, the plan made for the number of distinct images."""
    key, phash = item
    for band_key, stored in band_keys(phash, *_plan(images, threshold)):
        yield band_key, (key, phash, stored)


@functools.lru_cache(maxsize=4)
def _plan(images: int, threshold: int) -> tuple[list[int], int]:
    return band_plan(images, threshold)


def _compare(item, threshold: int):
    yield from band_pairs(item[1], threshold)


def _ends(pair):
    yield pair[0], True
    yield pair[1], True


def _linked_single(item):
    key, joined = item
    members = list(joined["members"])
    if members and list(joined["linked"]):
        yield "pix", key, members[0]


def _pair_item(pair):
    return ("pair", *pair)


def _build(p, plan, threshold: int):
    """The pipeline: tasks in, the items :func:`assemble` reads out."""
    from codec.beam.pipeline import import_beam
    from codec.doctor.grouping import NEAR_CHECKS

    beam = import_beam()
    near = bool(plan.checks & NEAR_CHECKS)
    records = bool(plan.checks & {"exact_duplicate", "split_leak"})
    images = bool(plan.checks & {"exact_duplicate", "split_leak", "label_conflict", "near_duplicate"})
    inspected = (p
                 | "Tasks" >> beam.Create(list(enumerate(plan.tasks)))
                 | "Spread" >> beam.Reshuffle()
                 | "Inspect" >> beam.FlatMap(_Inspect(plan.setup, records, images)).with_outputs(
                     RECORDS, IMAGES, main="tasks"))
    duplicates = (inspected[RECORDS]
                  | "ByRecordDigest" >> beam.GroupByKey()
                  | "Duplicates" >> beam.FlatMap(_duplicates))
    distinct = (inspected[IMAGES]
                | "ByPixelDigest" >> beam.GroupByKey()
                | "Images" >> beam.FlatMap(_images, near).with_outputs(SINGLE, HASH, main="groups"))
    out = [inspected.tasks, duplicates, distinct.groups]
    if near:
        count = distinct[HASH] | "CountImages" >> beam.combiners.Count.Globally()
        pairs = (distinct[HASH]
                 | "Bands" >> beam.FlatMap(_bands, beam.pvalue.AsSingleton(count), threshold)
                 | "ByBand" >> beam.GroupByKey()
                 | "Compare" >> beam.FlatMap(_compare, threshold)
                 | "OncePerPair" >> beam.Distinct())
        linked = pairs | "Ends" >> beam.FlatMap(_ends)
        singles = ({"members": distinct[SINGLE], "linked": linked}
                   | "JoinLinked" >> beam.CoGroupByKey()
                   | "LinkedSingles" >> beam.FlatMap(_linked_single))
        out += [singles, pairs | "Pairs" >> beam.Map(_pair_item)]
    return tuple(out) | "All" >> beam.Flatten()


# ---------------------------------------------------------------- the driver
def check_iter(paths: list[str], options: CheckOptions, runner: str,
               beam_options: list[str] | None) -> Generator[CheckProgress | CheckReport, None, None]:
    """:func:`codec.doctor.check_iter` on a Beam ``runner``: progress, then the report the local run gives."""
    from codec.beam.pipeline import run_pipeline
    from codec.doctor.engine import prepare

    plan = yield from prepare(list(paths), options)
    yield CheckProgress("check", 0, plan.counted or 0)
    items = run_pipeline(lambda p: _build(p, plan, options.near_threshold), runner, beam_options)
    report = assemble(plan, options, items, runner)
    yield CheckProgress("check", report.records, report.records)
    yield CheckProgress("compare", report.records, report.records)
    yield report


def assemble(plan, options: CheckOptions, items: list, runner: str = "beam") -> CheckReport:
    """The report from the pipeline's items: per task ``("task", k, summary, signatures)``, record groups
    ``("rec", digest, members)``, images ``("pix", digest, members)`` and near pairs ``("pair", a, b, d)``."""
    import numpy as np

    from codec.doctor.audio_checks import sample_rate_findings
    from codec.doctor.engine import add_task_findings, finish, min_run
    from codec.doctor.grouping import NEAR_CHECKS, Store, digest_order, label_order_findings, missing_findings
    from codec.errors import TFRecordError

    tasks, record_groups, images, pairs = {}, [], {}, []
    for item in items:
        if item[0] == "task":
            tasks[item[1]] = item[2:]
        elif item[0] == "rec":
            record_groups.append(item[1:])
        elif item[0] == "pix":
            images[item[1]] = item[2]
        else:
            pairs.append(item[1:])
    if sorted(tasks) != list(range(len(plan.tasks))):
        raise TFRecordError(f"the {runner} runner returned {len(tasks)} result(s) for {len(plan.tasks)} task(s)")
    findings = list(plan.damage)
    dropped: dict[str, int] = {}
    records = 0
    results = []
    for k in range(len(plan.tasks)):
        result, _ = tasks[k]
        records += add_task_findings(result, plan.file_paths, findings, dropped)
        results.append(result)
    # Rows: each group's members in (file, index) order, as the local rows of an in-process run.
    file: list[int]  # file ids
    file, index, label, digests, texts = [], [], [], [], {}
    spans: list[tuple[str, int, int, Any]] = []  # (kind, first row, end row, what the kind's group takes)

    def lay_out(kind: str, members: list, extra) -> None:
        start = len(file)
        for m in members:
            file.append(m[0])
            index.append(m[1])
            if kind == "rec":
                label.append(0)
                digests.append(extra[0])
            else:
                label.append(m[2])
                digests.append(m[4])
                if m[2] and m[3] is not None:
                    texts[m[2]] = m[3]
        spans.append((kind, start, len(file), extra))

    for key, members in sorted(record_groups, key=lambda g: digest_order(g[0])):
        lay_out("rec", members, (key, any(m[2] for m in members)))
    for key in sorted(images, key=digest_order):
        if len(images[key]) >= 2:
            lay_out("pix", images[key], None)
    if plan.checks & NEAR_CHECKS:
        for keys, far in _similar_sets(pairs):
            members = sorted(m for key in keys for m in images[key])
            lay_out("near", members, (len(keys), far))
    store = Store(plan.file_paths, plan.splits)
    store.set_rows(np.array(file, dtype=np.uint32), np.array(index, dtype=np.int64),
                   np.array(label, dtype=np.uint64),
                   np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, 16), texts)
    out = []
    for kind, a, b, extra in spans:
        rows = np.arange(a, b)
        if kind == "rec":
            out += store.record_group(rows, extra[1])
        elif kind == "pix":
            out += store.pixel_group(rows)
        else:
            images_count, far = extra
            out += store.near_group(rows, images_count, far, "near_duplicate" in plan.checks)
    if "missing_feature" in plan.checks:
        out += missing_findings([(plan.file_paths[r.file_id], tasks[k][1]) for k, r in enumerate(results) if r.count])
    if "label_order" in plan.checks:
        out += label_order_findings(results, plan.file_paths, min_run(options), options.shuffle_buffer)
    if "audio_sample_rate" in plan.checks:
        out += sample_rate_findings(results, plan.file_paths)
    findings += [f for f in out if f.check in plan.checks]
    return finish(records, findings, dropped)


def _similar_sets(pairs: list[tuple[bytes, bytes, int]]) -> list[tuple[list[bytes], int]]:
    """Images joined by near pairs (union-find): each set's digests and its farthest pair's distance, in the
    order the local search lists them (by their smallest digest)."""
    from codec.doctor.grouping import digest_order

    parent: dict[bytes, bytes] = {}

    def root(x: bytes) -> bytes:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, _ in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    sets: dict[bytes, list[bytes]] = {}
    for key in parent:
        sets.setdefault(root(key), []).append(key)
    far: dict[bytes, int] = {}
    for a, _, d in pairs:
        r = root(a)
        far[r] = max(far.get(r, 0), d)
    found = [(sorted(keys, key=digest_order), far[r]) for r, keys in sets.items()]
    found.sort(key=lambda s: digest_order(s[0][0]))
    return found
