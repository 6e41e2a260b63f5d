"""Hostile and crash-shaped files: a huge length header, a long zero run, a long garbage run.

    .venv/bin/python benchmarks/bench_hostile.py [--gib 1] [--keep]

Cases (each opened in a fresh subprocess, so its peak RSS is its own):
5 records, a valid header claiming 2**31 - 1 bytes, then GiB of zeros (plain
and GZIP); 5 records then GiB of zeros (what a preallocated file looks like
after a crash; plain and GZIP); 5 records, GiB of random bytes, 5 records
(plain). Prints records found, problems, time, MB/s over the damaged region
and peak RSS, for the index pass and for index + verify. Files go to
benchmarks/_data (``--keep`` leaves them there).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zlib
from itertools import chain

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import data_path
from codec.format.crc import masked_crc
from codec.format.framing import CRC, LENGTH, encode_record

MIB = 1 << 20
HUGE = (1 << 31) - 1

_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[3])
from codec import TFRecordFile
path, verify = sys.argv[1], sys.argv[2] == "1"
t = time.perf_counter()
with TFRecordFile(path, use_cache=False) as f:
    f.build_index(verify=verify)
    out = {"records": len(f), "problems": [f"{p.kind.value}@{p.offset}" for p in f.problems]}
out["seconds"] = time.perf_counter() - t
with open("/proc/self/status") as fh:  # VmHWM: this program's own peak (ru_maxrss survives exec)
    hwm = [int(line.split()[1]) for line in fh if line.startswith("VmHWM:")]
out["peak_rss_mb"] = hwm[0] / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if sys.argv[4] != "none":  # what inflating the file alone takes, here and now (the machine may be busy)
    import zlib
    t = time.perf_counter()
    d = zlib.decompressobj(47)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 16):
            while block:
                d.decompress(block, 1 << 24)
                block = d.unconsumed_tail
    out["inflate_seconds"] = time.perf_counter() - t
print(json.dumps(out))
"""


def head_records() -> bytes:
    return b"".join(encode_record(b"record %d " % k * 10) for k in range(5))


def huge_header() -> bytes:
    length = LENGTH.pack(HUGE)
    return length + CRC.pack(masked_crc(length))


def write(path: str, parts, compression: str) -> None:
    """Write the byte strings of ``parts`` (an iterable) to ``path``, compressed as asked."""
    if os.path.exists(path):
        return
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        if compression == "none":
            for part in parts:
                f.write(part)
        else:
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
            for part in parts:
                f.write(c.compress(part))
            f.write(c.flush())
    os.replace(tmp, path)


def zeros(total: int):
    block = bytes(MIB)
    for _ in range(total // MIB):
        yield block


def garbage(total: int):
    rnd = os.urandom(MIB)
    for k in range(total // MIB):
        yield rnd[k % 977:] + rnd[:k % 977]  # cheap, and no MiB repeats exactly


def run_case(path: str, verify: bool, compression: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", _CHILD, path, "1" if verify else "0", root, compression],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the zero/garbage region")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    region = int(args.gib * 1024) * MIB
    tag = f"{args.gib:g}g"
    cases = [
        ("5 records + 2^31-1 header + zeros, plain", f"hostile_huge_{tag}.tfrecord",
         lambda: chain([head_records(), huge_header()], zeros(region)), "none"),
        ("5 records + 2^31-1 header + zeros, GZIP", f"hostile_huge_{tag}.tfrecord.gz",
         lambda: chain([head_records(), huge_header()], zeros(region)), "gzip"),
        ("5 records + zeros, plain", f"hostile_zeros_{tag}.tfrecord",
         lambda: chain([head_records()], zeros(region)), "none"),
        ("5 records + zeros, GZIP", f"hostile_zeros_{tag}.tfrecord.gz",
         lambda: chain([head_records()], zeros(region)), "gzip"),
        ("5 records + random bytes + 5 records, plain", f"hostile_garbage_{tag}.tfrecord",
         lambda: chain([head_records()], garbage(region), [head_records()]), "none"),
    ]
    print(f"hostile files: damaged region {region / MIB:,.0f} MiB")
    for label, name, parts, compression in cases:
        path = data_path(name)
        write(path, parts(), compression)
        for verify in (False, True):
            r = run_case(path, verify, compression)
            what = "index + verify" if verify else "index pass"
            if "error" in r:
                print(f"  {label:48s} {what:15s} FAILED: {r['error']}")
                continue
            rate = region / MIB / r["seconds"]
            problems = ", ".join(r["problems"][:3]) + (" ..." if len(r["problems"]) > 3 else "")
            inflate = f"  (zlib alone: {r['inflate_seconds']:.2f} s)" if "inflate_seconds" in r else ""
            print(f"  {label:48s} {what:15s} {r['seconds']:7.2f} s {rate:8.0f} MB/s  "
                  f"peak RSS {r['peak_rss_mb']:6.0f} MB  {r['records']} records  [{problems}]{inflate}")
        if not args.keep:
            os.remove(path)


if __name__ == "__main__":
    main()
