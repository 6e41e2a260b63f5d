"""Random damage over generated plain, GZIP and ZLIB files: is any intact record lost?

    .venv/bin/python benchmarks/bench_damage.py [--cases 2400] [--seed 1]

Each case writes ~48 records, damages the file (bit flips, a cut, an
inserted or deleted byte run, a zeroed block, a duplicated chunk) and opens
it twice: indexed with verification in one pass (``verify`` on a fresh
file, what ``tfrlens-cli verify`` and ``repair`` do), and indexed first then
verified (the GUI's open, then Verify). A record is intact when its framed
bytes (header, data, footer) survive contiguous in the damaged stream; for
GZIP/ZLIB, in the part of the stream that still inflates. GZIP/ZLIB cases
damage either the compressed bytes or the records before compression (so
the damage lies inside the uncompressed stream). Prints the intact records
lost, crashes, and the slowest case; the target is zero lost.
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from codec import NotTFRecordError, RecordStatus, TFRecordFile, encode_record  # noqa: E402

DAMAGES = ("flip", "cut", "insert", "delete", "zero", "duplicate")


def make_records(rng: random.Random, count: int) -> list[bytes]:
    sizes = [rng.choice((0, 1, 7, 40, 100, 300, 1000, 3000)) + rng.randrange(50) for _ in range(count)]
    return [k.to_bytes(4, "little") + rng.randbytes(size) for k, size in enumerate(sizes)]


def damage(rng: random.Random, blob: bytes, kind: str) -> bytes:
    """One random damage of ``kind`` to ``blob``."""
    b = bytearray(blob)
    n = len(b)
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(n)
            b[p] ^= 1 << rng.randrange(8)
        return bytes(b)
    if kind == "cut":
        return bytes(b[:rng.randrange(1, n)])
    run = rng.choice((1, 2, 3, 4, 8, 13, 64, 500, 4000))
    p = rng.randrange(n)
    if kind == "insert":
        return bytes(b[:p]) + rng.randbytes(run) + bytes(b[p:])
    if kind == "delete":
        return bytes(b[:p]) + bytes(b[p + run:])
    if kind == "zero":
        b[p:p + run] = bytes(len(b[p:p + run]))
        return bytes(b)
    q = min(n, p + run)  # duplicate [p, q) right after itself
    return bytes(b[:q]) + bytes(b[p:q]) + bytes(b[q:])


def inflatable(data: bytes, compression: str) -> bytes:
    """The uncompressed bytes a damaged GZIP/ZLIB file still gives, up to its damage."""
    wbits = 31 if compression == "gzip" else 15
    out = []
    d = zlib.decompressobj(wbits)
    pos = 0
    while pos < len(data):
        try:
            out.append(d.decompress(data[pos:pos + 16]))
        except zlib.error:
            break
        pos += 16
        if d.eof:
            rest = d.unused_data + data[pos:]
            if compression == "gzip" and rest[:2] == b"\x1f\x8b":
                d = zlib.decompressobj(wbits)
                data, pos = rest, 0
                continue
            break
    return b"".join(out)


def compress(blob: bytes, compression: str) -> bytes:
    if compression == "gzip":
        return gzip.compress(blob, mtime=0)
    return zlib.compress(blob)


def intact_offsets(stream: bytes, framed: list[bytes]) -> dict[int, int]:
    """{offset in ``stream``: record number} for every intact copy of a record."""
    found = {}
    for k, frame in enumerate(framed):
        at = stream.find(frame)
        while at >= 0:
            found[at] = k
            at = stream.find(frame, at + 1)
    return found


def lost_records(path: str, expected: dict[int, int], records: list[bytes], index_first: bool) -> int:
    with TFRecordFile(path, use_cache=False) as f:
        if index_first:
            f.build_index()
        f.verify()
        ok = {}
        for i in range(len(f)):
            if f.index.status(i) in (RecordStatus.OK, RecordStatus.LENGTH_CRC):
                ok[f.index.offset(i)] = i
        lost = 0
        for offset, k in expected.items():
            i = ok.get(offset)
            if i is None or f.read(i).data != records[k]:
                lost += 1
        return lost


def run(cases: int, seed: int, verbose: bool) -> dict:
    rng = random.Random(seed)
    totals = {"cases": 0, "intact": 0, "lost_verify": 0, "lost_index_then_verify": 0, "cases_with_loss": 0,
              "crashes": 0, "slowest": 0.0, "slowest_case": ""}
    by_kind: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "damaged.tfrecord")
        for case in range(cases):
            compression = ("none", "gzip", "zlib")[case % 3]
            kind = DAMAGES[(case // 3) % len(DAMAGES)]
            inside = compression != "none" and (case // 18) % 2 == 0  # damage the records, then compress
            records = make_records(rng, 48)
            framed = [encode_record(r) for r in records]
            plain = b"".join(framed)
            if compression == "none":
                stream = data = damage(rng, plain, kind)
            elif inside:
                stream = damage(rng, plain, kind)
                data = compress(stream, compression)
            else:
                data = damage(rng, compress(plain, compression), kind)
                stream = inflatable(data, compression)
            with open(path, "wb") as fh:
                fh.write(data)
            expected = intact_offsets(stream, framed)
            totals["intact"] += len(expected)
            label = f"case {case}: {compression} {kind}{' (inside)' if inside else ''}"
            t = time.perf_counter()
            try:
                lost_v = lost_records(path, expected, records, index_first=False)
                lost_i = lost_records(path, expected, records, index_first=True)
            except NotTFRecordError:
                lost_v = lost_i = len(expected)
            except Exception as exc:  # noqa: BLE001 - counted and shown: a crash is a finding
                totals["crashes"] += 1
                print(f"  CRASH {label}: {type(exc).__name__}: {exc}")
                continue
            elapsed = (time.perf_counter() - t) / 2
            if elapsed > totals["slowest"]:
                totals["slowest"], totals["slowest_case"] = elapsed, label
            totals["cases"] += 1
            totals["lost_verify"] += lost_v
            totals["lost_index_then_verify"] += lost_i
            if lost_v or lost_i:
                totals["cases_with_loss"] += 1
                by_kind[label.split(": ")[1]] = by_kind.get(label.split(": ")[1], 0) + max(lost_v, lost_i)
                if verbose:
                    print(f"  {label}: lost {lost_v} (verify), {lost_i} (index, then verify)")
    totals["by_kind"] = by_kind
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    t = time.perf_counter()
    r = run(args.cases, args.seed, args.verbose)
    print(f"random damage: {r['cases']:,} cases (plain, GZIP, ZLIB; {', '.join(DAMAGES)}), "
          f"{r['intact']:,} intact records, {time.perf_counter() - t:.1f} s")
    print(f"  intact records lost, verify in one pass:      {r['lost_verify']:,}")
    print(f"  intact records lost, index then verify:       {r['lost_index_then_verify']:,}")
    print(f"  cases with a loss:                            {r['cases_with_loss']:,}")
    print(f"  crashes:                                      {r['crashes']:,}")
    print(f"  slowest case (one open):                      {r['slowest']:.3f} s ({r['slowest_case']})")
    for kind, lost in sorted(r["by_kind"].items(), key=lambda kv: -kv[1]):
        print(f"    lost {lost:,} in {kind}")


if __name__ == "__main__":
    main()
