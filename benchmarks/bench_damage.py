"""Random damage over generated plain, GZIP and ZLIB files: is any intact record lost?

    .venv/bin/python benchmarks/bench_damage.py [--cases 600] [--seed 1] [--only CASE] [-v]

Each case writes ~48 records (a third of the GZIP files as several
concatenated members, split between records), damages the file once (bits
or bytes flipped, a range deleted, bytes inserted, the file truncated, a
run zeroed, a range duplicated; at a uniformly random position, or in
every other case within the first 300 bytes) and opens it twice: indexed
with verification in one pass (what ``tfrlens-cli verify`` and ``repair``
do on a fresh file) and indexed first, then verified (the GUI's open, then
Verify).

What is intact (the oracle):

- a plain file, or a GZIP/ZLIB file whose records were damaged before
  compression: every record whose framed bytes (header, data, both CRCs)
  occur unchanged in the damaged stream, at that offset;
- a GZIP/ZLIB file whose compressed bytes were damaged: every record that
  inflates whole from the original compressed bytes up to the first
  changed byte (a streaming decompressor fed that prefix), and every record
  of a GZIP member that lies wholly before the damage or wholly in the
  unchanged bytes after it.

A case loses a record when the reader does not give it with its data CRC
holding. Prints "N cases, 0 intact records lost" and any case that lost
one, with the command that reproduces it.
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from codec import NotTFRecordError, TFRecordFile, encode_record

COMPRESSIONS = ("none", "gzip", "zlib")
DAMAGES = ("flip", "delete", "insert", "truncate", "zero", "duplicate")
START = 300  # "biased to the start": damage within the first START bytes
RUNS = (1, 2, 3, 4, 8, 13, 49, 64, 500, 4000)


@dataclass
class Case:
    """One damaged file and what must be read from it."""

    number: int
    seed: int
    compression: str
    kind: str
    at: int
    run: int
    inside: bool  # the records were damaged before compression
    members: int
    original: bytes  # the file before the damage
    data: bytes  # the damaged file
    records: list[bytes]
    intact_offsets: dict[int, int] = field(default_factory=dict)  # plain oracle: {offset: record}
    intact_records: set[int] = field(default_factory=set)  # compressed oracle: record numbers
    silent: bool = False  # damage that nothing can see (see :func:`silent`)

    @property
    def label(self) -> str:
        where = "inside the records" if self.inside else "in the file"
        members = f", {self.members} members" if self.members > 1 else ""
        return (f"case {self.number} (seed {self.seed}): {self.compression}{members} {self.kind} "
                f"at {self.at} (run {self.run}) {where}")

    @property
    def intact(self) -> int:
        return len(self.intact_offsets) + len(self.intact_records)


def make_records(rng: random.Random, count: int) -> list[bytes]:
    """Distinct records (their number first), from empty payloads to a few KB."""
    sizes = [rng.choice((0, 1, 7, 40, 100, 300, 1000, 3000)) + rng.randrange(50) for _ in range(count)]
    return [k.to_bytes(4, "little") + rng.randbytes(size) for k, size in enumerate(sizes)]


def damage(rng: random.Random, blob: bytes, kind: str, at: int, run: int) -> bytes:
    """``blob`` with one damage of ``kind`` at byte ``at`` (``run`` bytes long where it has a length)."""
    b = bytearray(blob)
    if kind == "flip":  # a bit, or a whole byte, at ``at`` and up to three more soon after
        for k in range(rng.randint(1, 4)):
            p = min(len(b) - 1, at + (rng.randrange(64) if k else 0))
            b[p] ^= rng.choice((1 << rng.randrange(8), 0xFF))
        return bytes(b)
    if kind == "truncate":
        return bytes(b[:max(1, at)])
    if kind == "insert":
        return bytes(b[:at]) + rng.randbytes(run) + bytes(b[at:])
    if kind == "delete":
        return bytes(b[:at]) + bytes(b[at + run:])
    if kind == "zero":
        b[at:at + run] = bytes(len(b[at:at + run]))
        return bytes(b)
    end = min(len(b), at + run)  # duplicate [at, end) right after itself
    return bytes(b[:end]) + bytes(b[at:end]) + bytes(b[end:])


def compress(blob: bytes, compression: str, cuts: list[int]) -> tuple[bytes, list[tuple[int, int, int]]]:
    """The stream compressed, one GZIP member per piece between ``cuts``; and each member's
    (compressed start, uncompressed start, uncompressed end)."""
    if compression == "zlib":
        return zlib.compress(blob), [(0, 0, len(blob))]
    bounds = [0, *cuts, len(blob)]
    parts, members, pos = [], [], 0
    for a, b in zip(bounds, bounds[1:]):
        members.append((pos, a, b))
        parts.append(gzip.compress(blob[a:b], mtime=0))
        pos += len(parts[-1])
    return b"".join(parts), members


def prefix_output(packed: bytes, compression: str) -> bytes:
    """What a streaming decompressor gives for a prefix of a sound stream (everything it can)."""
    return zlib.decompressobj(31 if compression == "gzip" else 15).decompress(packed)


def frame_offsets(records: list[bytes]) -> list[int]:
    offsets, pos = [], 0
    for r in records:
        offsets.append(pos)
        pos += 16 + len(r)
    return offsets


def find_frames(stream: bytes, records: list[bytes]) -> dict[int, int]:
    """{offset in ``stream``: record number} for every whole copy of a record's frame."""
    found = {}
    for k, r in enumerate(records):
        frame = encode_record(r)
        at = stream.find(frame)
        while at >= 0:
            found[at] = k
            at = stream.find(frame, at + 1)
    return found


def compressed_oracle(packed: bytes, data: bytes, compression: str, members, records: list[bytes]) -> set[int]:
    """Record numbers that inflate whole from the unchanged bytes of ``packed`` (see the module)."""
    same = 0
    limit = min(len(packed), len(data))
    while same < limit and packed[same] == data[same]:
        same += 1
    tail = 0
    while tail < limit - same and packed[-1 - tail] == data[-1 - tail]:
        tail += 1
    offsets = frame_offsets(records)
    ends = [o + 16 + len(r) for o, r in zip(offsets, records)]
    starts = [m[0] for m in members] + [len(packed)]
    intact = set()
    for (c0, u0, u1), c1 in zip(members, starts[1:]):
        if c1 <= same or c0 >= len(packed) - tail:  # the member is unchanged
            got = u1
        elif c0 <= same:  # the damage starts in this member
            got = u0 + len(prefix_output(packed[c0:same], compression))
        else:
            continue
        intact.update(k for k in range(len(records)) if u0 <= offsets[k] and ends[k] <= got)
    return intact


def make_case(seed: int, number: int) -> Case:
    """Case ``number`` of the run seeded ``seed`` (a case depends on nothing else)."""
    rng = random.Random(seed * 1_000_003 + number)
    compression = COMPRESSIONS[number % 3]
    kind = DAMAGES[(number // 3) % len(DAMAGES)]
    inside = compression != "none" and rng.random() < 0.25
    records = make_records(rng, 48)
    plain = b"".join(encode_record(r) for r in records)
    members = 1
    cuts: list[int] = []
    if compression == "gzip" and rng.random() < 1 / 3:
        members = rng.randint(2, 4)
        bounds = frame_offsets(records)[1:]
        cuts = sorted(rng.sample(bounds, members - 1))
    target = plain if compression == "none" or inside else compress(plain, compression, cuts)[0]
    start_biased = (number // 18) % 2 == 1
    at = rng.randrange(min(START, len(target)) if start_biased else len(target))
    run = rng.choice(RUNS)
    case = Case(number, seed, compression, kind, at, run, inside, members, b"", b"", records)
    if compression == "none":
        case.original = plain
        case.data = damage(rng, plain, kind, at, run)
        case.intact_offsets = find_frames(case.data, records)
        case.silent = silent(plain, case.data, records, False)
    elif inside:
        case.original = compress(plain, compression, [])[0]
        stream = damage(rng, plain, kind, at, run)
        case.data = compress(stream, compression, [])[0]
        case.intact_offsets = find_frames(stream, records)
        case.silent = silent(plain, stream, records, False)
    else:
        packed, spans = compress(plain, compression, cuts)
        case.original = packed
        case.data = damage(rng, packed, kind, at, run)
        case.intact_records = compressed_oracle(packed, case.data, compression, spans, records)
        case.silent = compression == "gzip" and silent(packed, case.data, records, True)
    return case


def good_records(path: str, index_first: bool) -> tuple[dict[int, bytes], list]:
    """{offset: data} of every record read with its data CRC holding, and the problems."""
    with TFRecordFile(path, use_cache=False) as f:
        if index_first:
            f.build_index()
        f.verify()
        good = {}
        for i in range(len(f)):
            rec = f.read(i)
            if rec.status.data_intact:
                good[f.index.offset(i)] = rec.data
        return good, list(f.problems)


def lost_in(case: Case, good: dict[int, bytes]) -> list[int]:
    """The intact records of ``case`` that ``good`` lacks (record numbers)."""
    if case.intact_offsets:
        return sorted(k for offset, k in case.intact_offsets.items() if good.get(offset) != case.records[k])
    found = set(good.values())
    return sorted(k for k in case.intact_records if case.records[k] not in found)


def check_case(case: Case, path: str) -> tuple[list[int], list[int], list]:
    """(lost verifying in one pass, lost indexing then verifying, the problems)."""
    with open(path, "wb") as fh:
        fh.write(case.data)
    try:
        good_v, problems = good_records(path, index_first=False)
        good_i, _ = good_records(path, index_first=True)
    except NotTFRecordError as exc:  # refused: the error names why
        good_v = good_i = {}
        problems = [str(exc)]
    return lost_in(case, good_v), lost_in(case, good_i), problems


def silent(original: bytes, damaged: bytes, records: list[bytes], compressed: bool) -> bool:
    """Damage no reader can see: a plain stream cut between records, a GZIP header's time, flags
    for extra compression or OS bytes changed."""
    if compressed:
        return len(damaged) == len(original) and all(
            a == b or 4 <= k < 10 for k, (a, b) in enumerate(zip(damaged, original)))
    return len(damaged) < len(original) and len(damaged) in {0, *frame_offsets(records)} and \
        original.startswith(damaged)


def run(cases: int, seed: int, verbose: bool = False, only: int | None = None) -> dict:
    """The seeded run: totals, and each case that lost a record or crashed."""
    totals = {"cases": 0, "intact": 0, "lost": 0, "losing": [], "crashes": [], "unnamed": [],
              "slowest": 0.0, "slowest_case": ""}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "damaged.tfrecord")
        for number in ([only] if only is not None else range(cases)):
            case = make_case(seed, number)
            t = time.perf_counter()
            try:
                lost_v, lost_i, problems = check_case(case, path)
            except Exception as exc:  # noqa: BLE001 - counted and shown: a crash is a finding
                totals["crashes"].append(f"{case.label}: {type(exc).__name__}: {exc}")
                continue
            elapsed = (time.perf_counter() - t) / 2
            if elapsed > totals["slowest"]:
                totals["slowest"], totals["slowest_case"] = elapsed, case.label
            totals["cases"] += 1
            totals["intact"] += case.intact
            lost = sorted(set(lost_v) | set(lost_i))
            totals["lost"] += len(lost)
            if not problems and case.data != case.original and not case.silent:
                totals["unnamed"].append(case.label)
            if lost:
                totals["losing"].append(f"{case.label}: lost records {lost} "
                                        f"(verify: {len(lost_v)}, index then verify: {len(lost_i)})")
            if verbose:
                print(f"  {case.label}: {case.intact} intact, lost {lost}; "
                      + "; ".join(getattr(p, "detail", p) for p in problems[:3]))
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=600, help="cases (a third each plain, GZIP, ZLIB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", type=int, help="run this case number alone (with -v: what was found)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    t = time.perf_counter()
    r = run(args.cases, args.seed, args.verbose, args.only)
    print(f"{r['cases']:,} cases, {r['lost']:,} intact records lost "
          f"(plain, GZIP, ZLIB; {', '.join(DAMAGES)}; seed {args.seed}; "
          f"{r['intact']:,} intact records; {time.perf_counter() - t:.1f} s)")
    print(f"  slowest case (one open): {r['slowest']:.3f} s ({r['slowest_case']})")
    for line in r["losing"]:
        print(f"  LOST {line}; reproduce: benchmarks/bench_damage.py --seed {args.seed} "
              f"--only {line.split()[1]} -v")
    for line in r["crashes"]:
        print(f"  CRASH {line}")
    for line in r["unnamed"]:
        print(f"  UNNAMED damage (no problem reported): {line}")


if __name__ == "__main__":
    main()
