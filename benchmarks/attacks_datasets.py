"""Hostile datasets against the command line, as whole processes, at the issue's full scale.

A planted link in the index cache folder, a cache folder open to others or of
another user, a ``dataset_info.json`` of 3,000 splits (each its own
``filepathTemplate``, 21 shards) and one over the size cap, a folder of 100,000
one-record shards (``info`` and ``stats --workers 2``), Beam against the local
run beside a random-bytes "shard", and Ctrl-C during ``stats`` on the pool and
on Beam's direct runner. One line per attack: PASS/FAIL against the bar, exit
code, wall and CPU time, peak memory (the sum of each process's own peak, workers
included), stderr's last line.

    .venv/bin/python benchmarks/attacks_datasets.py [--quick]   (--quick: 10,000 shards, 300 splits)
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from attacks import CLI, ROOT, _hwm_mb, one_line, report, run_attacks  # noqa: E402

from codec.format.framing import encode_record  # noqa: E402
from codec.index import cache as index_cache  # noqa: E402

EXAMPLE = b"\n\x0c\n\n\n\x01x\x12\x05\x1a\x03\n\x01\x07"  # an Example: x = [7]
RECORD = encode_record(EXAMPLE)


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def run(args, timeout=600, env=None, interrupt=None):
    """The CLI as a whole process: (exit code or "hang", stdout, stderr, wall s, CPU s, peak MiB of the tree).

    ``interrupt(pid)``: once true, SIGINT goes to the process group (the process runs in its own).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(CLI + [str(a) for a in args], stdout=out, stderr=err, cwd=ROOT,
                                env=dict(os.environ, **(env or {})), start_new_session=True)
        deadline = time.monotonic() + timeout
        peaks: dict[int, float] = {}
        sent = False
        while True:
            for p in _tree(proc.pid):
                peaks[p] = max(peaks.get(p, 0.0), _hwm_mb(p))
            if interrupt is not None and not sent and interrupt(proc.pid):
                os.killpg(proc.pid, signal.SIGINT)
                sent = True
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                cpu = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                code, cpu = "hang", 0.0
                break
            time.sleep(0.02)
        secs = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read(), secs, cpu, sum(peaks.values())


def figures(code, secs, cpu, peak, line) -> str:
    return f"exit {code}, {secs:.1f} s ({cpu:.1f} s CPU), {peak:.0f} MB: {line[:90]}"


# -- the index cache -------------------------------------------------------------------
def attack_cache(tmp: str) -> None:
    data = os.path.join(tmp, "big.tfrecord")
    with open(data, "wb") as f:
        f.write(RECORD * 60_000)  # 2.4 MB: over the cache's threshold
    for case in ("link", "wide", "other"):
        folder = os.path.join(tmp, f"cache-{case}")
        os.makedirs(folder, mode=0o700)
        env = {"TFRLENS_CACHE_DIR": folder}
        os.environ["TFRLENS_CACHE_DIR"] = folder
        entry = index_cache.cache_path(data)
        del os.environ["TFRLENS_CACHE_DIR"]
        victim = os.path.join(tmp, f"victim-{case}")
        with open(victim, "wb") as f:
            f.write(b"precious")
        if case == "link":
            os.symlink(victim, entry)
        elif case == "wide":
            os.chmod(folder, 0o777)
        elif os.geteuid() == 0:
            os.chown(folder, 65534, 65534)
        else:
            report("cache folder of another user", True, "skipped: needs root to make one")
            continue
        code, _, err, secs, cpu, peak = run(["info", data], env=env)
        clean, line = one_line(err)
        with open(victim, "rb") as f:
            intact = f.read() == b"precious"
        if case == "link":
            ok = code == 0 and clean and intact and stat.S_ISREG(os.lstat(entry).st_mode)
            report("a link planted at the cache entry", ok, figures(code, secs, cpu, peak, f"target intact: {intact}"))
        elif case == "wide":
            mode = stat.S_IMODE(os.stat(folder).st_mode)
            report("a cache folder open to all (0777)", code == 0 and clean and mode == 0o700,
                   figures(code, secs, cpu, peak, f"now {mode:o}"))
        else:
            notes = err.decode(errors="replace").splitlines()
            ok = code == 0 and clean and not os.listdir(folder) and len(notes) == 1
            report("a cache folder of another user", ok, figures(code, secs, cpu, peak, line))


# -- TFDS metadata ----------------------------------------------------------------------
def _tfds(folder: str, splits: int, shards: int, description: str = "") -> None:
    os.makedirs(folder)
    one = os.path.join(os.path.dirname(folder), "one.tfrecord")
    if not os.path.exists(one):
        with open(one, "wb") as f:
            f.write(RECORD)
    entries = []
    for k in range(splits):
        entries.append({"name": f"s{k}", "filepathTemplate": "{DATASET}-{SPLIT}-t%d.{FILEFORMAT}-{SHARD_X_OF_Y}" % k,
                        "shardLengths": ["1"] * shards})
        for i in range(shards):
            os.link(one, os.path.join(folder, f"ds-s{k}-t{k}.tfrecord-{i:05d}-of-{shards:05d}"))
    with open(os.path.join(folder, "dataset_info.json"), "w") as f:
        json.dump({"name": "ds", "version": "1.0.0", "splits": entries, "description": description}, f)
    x = {"pythonClassName": "tensorflow_datasets.core.features.tensor_feature.Tensor",
         "tensor": {"dtype": "int64", "encoding": "none", "shape": {"dimensions": ["1"]}}}
    with open(os.path.join(folder, "features.json"), "w") as f:
        json.dump({"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                   "featuresDict": {"features": {"x": x}}}, f)


def attack_tfds(tmp: str, splits: int) -> None:
    folder = os.path.join(tmp, "tfds", "ds")
    _tfds(folder, splits, 21)
    script = ("import sys, time; from codec.datasets.tfds import TfdsDataset; t = time.process_time(); "
              f"d = TfdsDataset.open({folder!r}); "
              "print(len(d.splits), sum(len(s.files) for s in d.splits.values()), time.process_time() - t)")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=600,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    n, files, secs = (proc.stdout.split() + [b"0", b"0", b"nan"])[:3]
    ok = proc.returncode == 0 and int(n) == splits and int(files) == splits * 21 and float(secs) < 1
    report(f"{splits:,} splits x 21 shards: files matched to splits", ok,
           f"{int(files):,} files in {int(n):,} splits, {float(secs):.2f} s CPU")
    code, _, err, secs, cpu, peak = run(["info", folder])
    clean, line = one_line(err)
    report(f"info on {splits:,} splits x 21 shards", code == 0 and clean, figures(code, secs, cpu, peak, line))
    big = os.path.join(tmp, "tfds-big", "ds")
    _tfds(big, 2, 1, description="x" * (17 << 20))
    code, _, err, secs, cpu, peak = run(["info", big])
    clean, line = one_line(err)
    report("a 17 MiB dataset_info.json", code == 2 and clean and len(err.splitlines()) == 1,
           figures(code, secs, cpu, peak, line))


# -- 100,000 one-record shards -----------------------------------------------------------
def attack_many_shards(tmp: str, n: int) -> None:
    folder = os.path.join(tmp, "many")
    os.makedirs(folder)
    for i in range(n):
        with open(os.path.join(folder, f"train-{i:06d}-of-{n:06d}.tfrecord"), "wb") as f:
            f.write(RECORD)
    env = {"TFRLENS_CACHE_DIR": os.path.join(tmp, "cache-many")}
    code, out, err, secs, cpu, peak = run(["info", folder], env=env)
    clean, line = one_line(err)
    ok = code == 0 and clean and f"records:     {n:,}".encode() in out and secs < 10 and peak < 300
    report(f"info on {n:,} one-record shards (< 10 s, < 300 MB)", ok, figures(code, secs, cpu, peak, line))
    code, out, err, secs, cpu, peak = run(["stats", "--workers", "2", folder], env=env)
    clean, line = one_line(err)
    ok = code == 0 and clean and f"{n:,} records".encode() in out and secs < 60
    report(f"stats --workers 2 on {n:,} one-record shards (< 60 s)", ok, figures(code, secs, cpu, peak, line))


# -- Beam against the local run; Ctrl-C ------------------------------------------------------
def _beam() -> bool:
    from codec.beam import beam_available

    return beam_available()


def _shards(folder: str, counts: list[int], of: int) -> None:
    """Shards ``part-K-of-OF`` of ``counts[K]`` records each, in a new ``folder``."""
    os.makedirs(folder)
    for k, n in enumerate(counts):
        with open(os.path.join(folder, f"part-{k:05d}-of-{of:05d}.tfrecord"), "wb") as f:
            f.write(RECORD * n)


def attack_beam_parity(tmp: str) -> None:
    folder = os.path.join(tmp, "mixed")
    _shards(folder, [2, 3, 4], 4)
    with open(os.path.join(folder, "part-00003-of-00004.tfrecord"), "wb") as f:
        f.write(random.Random(13).randbytes(5000))
    for command in ("stats", "schema"):
        local = run([command, folder])
        beam = run([command, "--runner", "direct", folder])
        same = local[0] == beam[0] == 1 and local[1] == beam[1] and local[1]
        clean = one_line(local[2])[0] and one_line(beam[2])[0]
        report(f"{command}: direct runner and local beside a random shard", bool(same and clean),
               f"exit {local[0]} / {beam[0]}, same report: {local[1] == beam[1]}, "
               f"{beam[3]:.1f} s on Beam: {one_line(beam[2])[1][:70]}")


def _mapped(pid: int, name: str) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return name in f.read()
    except OSError:
        return False


def attack_interrupts(tmp: str) -> None:
    folder = os.path.join(tmp, "busy")
    _shards(folder, [600_000, 600_000], 2)
    cases = [("Ctrl-C to the group during stats --workers 2", ["stats", "--workers", "2", folder],
              lambda pid: len(_tree(pid)) >= 4)]
    if _beam():
        cases.append(("Ctrl-C during stats --runner direct", ["stats", "--runner", "direct", folder],
                      lambda pid: _mapped(pid, "apache_beam/runners")))
    for name, argv, underway in cases:
        code, _, err, secs, cpu, peak = run(argv, interrupt=underway)
        text = err.decode(errors="replace")
        ok = code == 130 and text == "tfrlens-cli: interrupted\n"
        report(name, ok, figures(code, secs, cpu, peak, f"{len(text.splitlines())} stderr line(s)"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10,000 shards and 300 splits")
    args = ap.parse_args()
    def attack_all(tmp: str) -> None:
        attack_cache(tmp)
        attack_tfds(tmp, 300 if args.quick else 3000)
        attack_many_shards(tmp, 10_000 if args.quick else 100_000)
        if _beam():
            attack_beam_parity(tmp)
        else:
            report("Beam parity", True, "skipped: apache_beam is not installed")
        attack_interrupts(tmp)

    return run_attacks("tfrlens-attacks-datasets-", attack_all)


if __name__ == "__main__":
    sys.exit(main())
