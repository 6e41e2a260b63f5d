"""``tfrlens-cli`` as a user runs it: whole-process timings and memory, beside TensorFlow's own work.

    TFRLENS_TF_PYTHON=/tmp/tfvenv/bin/python .venv/bin/python benchmarks/bench_cli.py [--records 1000000]

Every CLI figure is a fresh process (start-up, imports, the work, exit), the best
of ``--repeat`` runs with the page cache warm and the bytecode compiled (in a
private PYTHONPYCACHEPREFIX), as for an installed package. TensorFlow's figures are timed
inside its own process after ``import tensorflow``: its own work, without its
start-up. Figures:

- ``--help``: start-up alone (bar 0.15 s), and whether numpy, protobuf or
  Pillow were imported for it (they must not be).
- ``verify`` of 1M small records (40-160 B) and of 2,000 x 100 KB records, with
  and without the index cache (bar: no slower than TensorFlow iterating them).
- ``cat --range -1:`` of the last record of a GZIP file whose index is cached
  (bar: 1/5 of TensorFlow skipping to that record), what it imports, and the
  same run as a regular (non-editable) install would make it: a plain venv with
  the project and its dependencies on PYTHONPATH, without the editable-install
  finder that ``site`` imports at every start-up of the project's own venv
  (the project's own ./dev venv has none since its packages sit at the top of
  the checkout; the line stays for other editable installs).
- ``cat`` of 100,000 Examples as text: as it runs (each Example written
  straight from its bytes) and with that path turned off (every record through
  protobuf and text_format, as before): the same output, compared.
- ``cat --json`` of 50,000 small Examples of five features (an int64 label and id,
  a file name, a float score and a box of four floats: every float a new value):
  records per second as it runs (a batch at a time: bar 50,000/s), one record at a
  time straight from its bytes, and through protobuf's ``json_format``: the same output.
- ``cat --json --range 999999:1000000`` of the GZIP file, index cached (bar: 1/5
  of TensorFlow skipping to that record).
- ``index -o``: peak anonymous memory per record (bar 10 B). Measured two ways:
  the tracemalloc peak of the command in a process that imported its modules
  first, and the process's ru_maxrss minus that of a process that only imported
  them (ru_maxrss also counts the file's pages while they are mapped).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import data_path, row  # noqa: E402

HELP_BAR = 0.15
SKIP_RATIO_BAR = 0.2
JSON_RATE_BAR = 50_000  # records/s
INDEX_BYTES_BAR = 10.0
HEAVY_MODULES = ("numpy", "google.protobuf.descriptor_pool", "PIL", "indexed_gzip", "codec.query.filter", "codec.decode.decoder")


def example_records(n: int, lo: int = 40, hi: int = 160, seed: int = 10):
    """``n`` tf.train.Example records of ``lo``..``hi`` bytes (a label and a bytes feature)."""
    from codec.decode.example_proto import Example

    rng = random.Random(seed)
    template = Example()
    template.features.feature["label"].int64_list.value.append(0)
    template.features.feature["data"].bytes_list.value.append(b"")
    base = len(template.SerializeToString()) + 6  # label varint and bytes length grow a little
    for i in range(n):
        ex = Example()
        ex.features.feature["label"].int64_list.value.append(i % 1000)
        ex.features.feature["data"].bytes_list.value.append(rng.randbytes(max(0, rng.randint(lo, hi) - base)))
        yield ex.SerializeToString()


def five_feature_records(n: int, seed: int = 12):
    """``n`` small Examples of five features: label, id, name, score and a box of four floats."""
    from codec.decode.example_proto import Example

    rng = random.Random(seed)
    for i in range(n):
        ex = Example()
        feature = ex.features.feature
        feature["label"].int64_list.value.append(i % 10)
        feature["id"].int64_list.value.append(1_000_000 + i)
        feature["name"].bytes_list.value.append(f"images/{i:08d}.jpg".encode())
        feature["score"].float_list.value.append(rng.random())
        feature["box"].float_list.value.extend(rng.random() for _ in range(4))
        yield ex.SerializeToString()


def big_records(n: int, size: int = 100_000):
    rng = random.Random(11)
    block = rng.randbytes(size + 4096)
    for i in range(n):
        start = i % 4096
        yield i.to_bytes(8, "little") + block[start:start + size - 8]


def ensure(name: str, records_fn, compression: str = "none") -> str:
    from codec import write_records

    path = data_path(name)
    if not os.path.exists(path):
        print(f"  (writing {name} ...)", flush=True)
        write_records(path, records_fn(), compression)
    return path


def cli_command() -> tuple[list[str], str]:
    """The installed console script beside this interpreter, else ``python -m codec.cli.main``."""
    script = os.path.join(os.path.dirname(sys.executable), "tfrlens-cli")
    if os.path.exists(script):
        return [script], "tfrlens-cli"
    return [sys.executable, "-m", "codec.cli.main"], "python -m codec.cli.main"


def run(cmd: list[str], env: dict, stdout=subprocess.DEVNULL) -> tuple[float, int, int, float]:
    """(wall seconds, exit code, ru_maxrss KiB, CPU seconds) of one process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace").strip()
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    return elapsed, proc.returncode, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def best(cmd: list[str], env: dict, repeat: int) -> tuple[float, float]:
    """The best wall time and the best CPU time (user + system) of ``repeat`` runs.

    On a shared machine the CPU time moves less with the load than the wall time.
    """
    runs = [run(cmd, env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[3] for r in runs)


_TF_SCRIPT = r"""
import json, os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
path, compression, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
options = compression or None

cpu = {}

def best(fn):
    out = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        out = min(out, time.perf_counter() - t)
        cpu[fn.__name__] = min(cpu.get(fn.__name__, float("inf")), time.process_time() - c)
    return out

def iterator():
    for _ in tf.compat.v1.io.tf_record_iterator(path, options=options):
        pass

def dataset():  # in batches: one Python step per record would cost far more than reading it
    for _ in tf.data.TFRecordDataset(path, compression_type=compression).batch(4096):
        pass

n = sum(1 for _ in tf.compat.v1.io.tf_record_iterator(path, options=options))

def skip_to_last():
    for _ in tf.data.TFRecordDataset(path, compression_type=compression).skip(n - 1).take(1):
        pass

out = {"records": n, "iterator": best(iterator), "dataset": best(dataset), "skip": best(skip_to_last)}
print(json.dumps(dict(out, cpu=cpu)))
"""


def tensorflow_figures(path: str, compression: str, repeat: int) -> dict | None:
    """TensorFlow's iteration and skip-to-last times (best of ``repeat``), or None without TensorFlow."""
    import json

    python = os.environ.get("TFRLENS_TF_PYTHON")
    if not python:
        return None
    proc = subprocess.run([python, "-c", _TF_SCRIPT, path, compression, str(repeat)], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"  (TensorFlow failed: {proc.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER THE BAR"


def bench_help(cli: list[str], env: dict, repeat: int) -> None:
    print("start-up")
    wall, cpu = best(cli + ["--help"], env, repeat)
    row("tfrlens-cli --help", f"{wall:.3f} s", f"CPU {cpu:.3f} s; bar {HELP_BAR} s: {verdict(wall <= HELP_BAR)}")
    wall, cpu = best([sys.executable, "-c", "pass"], env, repeat)
    row("python -c pass (the interpreter alone)", f"{wall:.3f} s", f"CPU {cpu:.3f} s")
    probe = ("import contextlib, io, sys\nfrom codec.cli.main import build_parser\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n"
             "        build_parser().parse_args(['--help'])\n    except SystemExit:\n        pass\n"
             f"print(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True).stdout.split()
    row("heavy modules imported for --help", ", ".join(out) or "none")
    for what, code in (("import codec", "import codec"), ("import codec.cli.main", "import codec.cli.main"),
                       ("what `cat` imports without the cache",
                        "import codec.sources.tfrecord_file, codec.decode.decoder, codec.sources.shard_set\n"
                        "from google.protobuf import text_format")):
        importtime_row(f"-X importtime: {what}", importtime(["-c", code], env))


def importtime_row(label: str, top: list[tuple[str, int]]) -> None:
    total = sum(us for _, us in top)
    heaviest = ", ".join(f"{name} {us / 1000:.0f} ms" for name, us in sorted(top, key=lambda t: -t[1])[:5])
    row(label, f"{total / 1000:.0f} ms", heaviest)


def importtime(args: list[str], env: dict) -> list[tuple[str, int]]:
    """(module, cumulative microseconds) of each module ``python args`` imports directly (best of 3 runs)."""
    best: dict[str, int] = {}
    for _ in range(3):
        err = subprocess.run([sys.executable, "-X", "importtime", *args], env=env, capture_output=True,
                             text=True).stderr
        for line in err.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            _, cumulative, name = line.split("|")
            if name.startswith(" ") and not name.startswith("  ") and cumulative.strip().isdigit():
                key = name.strip()
                best[key] = min(best.get(key, 1 << 62), int(cumulative))
    return list(best.items())


def bench_verify(label: str, path: str, cli: list[str], env: dict, repeat: int, tf: dict | None) -> None:
    print(f"{label}: {os.path.getsize(path) / 2**20:.1f} MiB")
    run(cli + ["verify", path], env)  # writes the cache entry
    if tf:
        tf_work = min(tf["iterator"], tf["dataset"])
        print(f"  TensorFlow's own work: {tf_work:.3f} s (tf_record_iterator {tf['iterator']:.3f} s, "
              f"CPU {tf['cpu']['iterator']:.3f} s; TFRecordDataset {tf['dataset']:.3f} s, "
              f"CPU {tf['cpu']['dataset']:.3f} s)")
    for what, extra in (("verify (index cached)", []), ("verify --no-cache", ["--no-cache"])):
        wall, cpu = best(cli + ["verify"] + extra + [path], env, repeat)
        bar = f"; {wall / tf_work:.2f}x TF: {verdict(wall <= tf_work)}" if tf else ""
        row(what, f"{wall:.3f} s", f"CPU {cpu:.3f} s{bar}")


def bench_last_gzip(path: str, cli: list[str], env: dict, repeat: int, tf: dict | None) -> None:
    print(f"last record of a GZIP file, index cached: {os.path.getsize(path) / 2**20:.1f} MiB")
    cmd = cli + ["cat", "--range=-1:", path]
    run(cmd, env)  # the record index into the cache
    run(cmd, env)  # and the zran index (built by the first cached open)
    wall, cpu = best(cmd, env, repeat)
    if tf:
        print(f"  TensorFlow skipping to the last record: {tf['skip']:.3f} s (CPU {tf['cpu']['skip_to_last']:.3f} s)")
        ratio = wall / tf["skip"]
        row("cat --range -1: (whole process)", f"{wall:.3f} s",
            f"CPU {cpu:.3f} s; {ratio:.2f}x TF, bar {SKIP_RATIO_BAR}x: {verdict(ratio <= SKIP_RATIO_BAR)}")
    else:
        row("cat --range -1: (whole process)", f"{wall:.3f} s", f"CPU {cpu:.3f} s; TF not available")
    last = tf["records"] - 1 if tf else None
    if last is not None:
        cmd = cli + ["cat", "--json", f"--range={last}:{last + 1}", path]
        wall, cpu = best(cmd, env, repeat)
        ratio = wall / tf["skip"]
        row(f"cat --json --range {last}:{last + 1} (whole process)", f"{wall:.3f} s",
            f"CPU {cpu:.3f} s; {ratio:.2f}x TF, bar {SKIP_RATIO_BAR}x: {verdict(ratio <= SKIP_RATIO_BAR)}")
    else:
        cmd = cli + ["cat", "--json", "--range=-1:", path]
        wall, cpu = best(cmd, env, repeat)
        row("cat --json --range -1: (whole process)", f"{wall:.3f} s", f"CPU {cpu:.3f} s; TF not available")
    # What the console script runs (``-m`` would add runpy's imports)
    args = ["-c", "import sys\nfrom codec.cli.main import main\nsys.exit(main())", "cat", "--range=-1:", path]
    importtime_row("-X importtime: cat --range -1:", importtime(args, env))
    probe = ("import contextlib, io, sys\nfrom codec.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
             f"print(' '.join(m for m in {HEAVY_MODULES + ('codec.sources.tfrecord_file',)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe, "cat", "--range=-1:", path], env=env, capture_output=True,
                         text=True).stdout.split()
    row("  of them heavy", ", ".join(out) or "none", "(indexed_gzip: its extension alone)")
    regular = regular_install_python(env)
    if regular is not None:
        python, renv = regular
        wall, cpu = best([python] + args, renv, repeat)
        start, _ = best([python, "-c", "pass"], renv, repeat)
        dev_start, _ = best([sys.executable, "-c", "pass"], env, repeat)
        ratio = f"; {wall / tf['skip']:.2f}x TF" if tf else ""
        row("  the same as a regular (non-editable) install", f"{wall:.3f} s",
            f"CPU {cpu:.3f} s{ratio}; interpreter start-up {start:.3f} s here, {dev_start:.3f} s in this venv")


_CAT_SCRIPT = r"""
import sys
if sys.argv[1] == "protobuf":  # every record through protobuf and text_format
    import codec.decode.example_text
    codec.decode.example_text.example_text = lambda data: None
from codec.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def bench_cat_text(path: str, env: dict, repeat: int, n: int = 100_000) -> None:
    print(f"cat of {n:,} Examples as protobuf text (whole process, output to a pipe)")
    args = ["cat", f"--range=:{n}", path]
    outputs = {}
    for how in ("direct", "protobuf"):
        cmd = [sys.executable, "-c", _CAT_SCRIPT, how, *args]
        outputs[how] = subprocess.run(cmd, env=env, capture_output=True).stdout
        wall, cpu = best(cmd, env, repeat)
        what = "straight from the bytes" if how == "direct" else "through protobuf + text_format"
        row(f"  {what}", f"{wall:.3f} s", f"CPU {cpu:.3f} s; {n / wall:,.0f} records/s")
    same = outputs["direct"] == outputs["protobuf"] and len(outputs["direct"]) > 0
    row("  the same output", "yes" if same else "NO", f"{len(outputs['direct']) / 2**20:.1f} MiB")


_JSON_SCRIPT = r"""
import sys
if sys.argv[1] != "batch":  # each record on its own (no layout templates, no batch of floats)
    import codec.decode.json_batches
    codec.decode.json_batches._match = lambda data: None
if sys.argv[1] == "protobuf":  # and through protobuf and json_format
    import codec.decode.example_text
    codec.decode.example_text.example_json_line = lambda *args: None
    import codec.decode.json_lines
    codec.decode.json_lines.example_json_line = codec.decode.example_text.example_json_line
from codec.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def bench_cat_json(path: str, n: int, env: dict, repeat: int) -> None:
    print(f"cat --json of {n:,} Examples of five features (whole process, output to a pipe)")
    outputs = {}
    for how, what in (("batch", "a batch at a time (templates, floats by numpy)"),
                      ("direct", "one record at a time, straight from the bytes"),
                      ("protobuf", "one record at a time, through protobuf + json_format")):
        cmd = [sys.executable, "-c", _JSON_SCRIPT, how, "cat", "--json", path]
        outputs[how] = subprocess.run(cmd, env=env, capture_output=True).stdout
        wall, cpu = best(cmd, env, repeat)
        bar = f"; bar {JSON_RATE_BAR:,}/s on CPU time: {verdict(n / cpu >= JSON_RATE_BAR)}" if how == "batch" else ""
        row(f"  {what}", f"{wall:.3f} s", f"CPU {cpu:.3f} s; {n / wall:,.0f} records/s ({n / cpu:,.0f}/s of CPU){bar}")
    same = len(set(outputs.values())) == 1 and len(outputs["batch"]) > 0
    row("  the same output", "yes" if same else "NO", f"{len(outputs['batch']) / 2**20:.1f} MiB")


def regular_install_python(env: dict) -> tuple[str, dict] | None:
    """A plain venv of this Python that sees the project and its dependencies on PYTHONPATH.

    The project's own venv holds an editable install, whose finder ``site`` imports at every
    start-up (pathlib, importlib.util, ...): a cost a user of a built wheel never pays.
    """
    import site
    import sysconfig

    folder = os.path.join(os.path.dirname(env["PYTHONPYCACHEPREFIX"]), "plain-venv")
    if not os.path.exists(folder):
        base = getattr(sys, "_base_executable", sys.executable)
        proc = subprocess.run([base, "-m", "venv", "--without-pip", folder], capture_output=True)
        if proc.returncode != 0:
            return None
    python = os.path.join(folder, "bin", "python")
    paths = [ROOT] + site.getsitepackages() + [sysconfig.get_path("platlib")]
    return python, dict(env, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))


_TRACE_SCRIPT = r"""
import sys, tracemalloc
from codec.cli import main as cli
from codec.index import cache as index_cache
from codec.sources import tfrecord_file as reader
from codec.storage import writer  # what `index` uses, imported before tracing
import numpy
tracemalloc.start()
code = cli.main(sys.argv[1:])
print(tracemalloc.get_traced_memory()[1])
"""

_BASELINE_SCRIPT = ("from codec.cli import main\nfrom codec.index import cache\nfrom codec.sources import tfrecord_file\n"
                    "from codec.storage import writer\nimport numpy\n")


def index_dir(cache_dir: str) -> str:
    """Where the CLI's index cache is with ``XDG_CACHE_HOME`` in ``cache_dir`` (as main() sets it)."""
    return os.path.join(cache_dir, "xdg", "tfrecord-lens", "index")


def bench_index(path: str, n: int, env: dict, cache_dir: str) -> None:
    print(f"index memory: {n:,} records")
    out = os.path.join(cache_dir, "out.idx")
    for what, extra in (("index -o (no cache entry yet)", "fresh"), ("index -o (index cached)", "cached")):
        if extra == "fresh":
            shutil.rmtree(index_dir(cache_dir), ignore_errors=True)
        proc = subprocess.run([sys.executable, "-c", _TRACE_SCRIPT, "index", path, "-o", out], env=env,
                              capture_output=True, text=True)
        peak = int(proc.stdout.strip().splitlines()[-1])
        if extra == "fresh":
            shutil.rmtree(index_dir(cache_dir), ignore_errors=True)
        rss = run([sys.executable, "-c", _TRACE_SCRIPT.replace("tracemalloc.start()", "")
                         .replace("print(tracemalloc.get_traced_memory()[1])", ""), "index", path, "-o", out], env)[2]
        base = min(run([sys.executable, "-c", _BASELINE_SCRIPT], env)[2] for _ in range(3))
        per = peak / n
        row(what, f"{per:.2f} B/record", f"tracemalloc peak {peak / 2**20:.1f} MiB; bar {INDEX_BYTES_BAR} B: "
            f"{verdict(per <= INDEX_BYTES_BAR)}; ru_maxrss - baseline {(rss - base) * 1024 / n:.1f} B/record")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=2000, help="number of 100 KB records")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli", help="the tfrlens-cli to time (default: the one beside this Python)")
    ap.add_argument("--only", choices=["help", "verify", "gzip", "cat", "json", "index"], action="append")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    only = set(args.only or ["help", "verify", "gzip", "cat", "json", "index"])
    n = args.records
    cli, cli_name = ([args.cli], args.cli) if args.cli else cli_command()
    cache_dir = tempfile.mkdtemp(prefix="bench-cli-")
    # Bytecode cached as an installed package has it (pip compiles it), even where
    # PYTHONDONTWRITEBYTECODE is set, without writing into the source tree.
    # The index cache where a user's goes (the XDG cache folder, found as the CLI finds it), in a
    # folder of this run: TFRLENS_CACHE_DIR would skip the work of finding the default folder.
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(cache_dir, "xdg"), PYTHONPATH=ROOT,
               PYTHONPYCACHEPREFIX=os.path.join(cache_dir, "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TFRLENS_CACHE_DIR", None)
    run(cli + ["--help"], env)  # compiles the CLI's own modules once
    print(f"CLI: {cli_name}; load average {os.getloadavg()[0]:.2f}; best of {args.repeat}")
    try:
        small = ensure(f"cli_examples_{n}.tfrecord", lambda: example_records(n))
        if "help" in only:
            bench_help(cli, env, args.repeat)
        if "verify" in only:
            bench_verify(f"verify {n:,} records of 40-160 B", small, cli, env, args.repeat,
                         tensorflow_figures(small, "", 3))
            big = ensure(f"cli_big_{args.big}.tfrecord", lambda: big_records(args.big))
            bench_verify(f"verify {args.big:,} records of 100 KB", big, cli, env, args.repeat,
                         tensorflow_figures(big, "", 3))
        if "gzip" in only:
            gz = ensure(f"cli_examples_{n}.tfrecord.gz", lambda: example_records(n), "gzip")
            bench_last_gzip(gz, cli, env, args.repeat, tensorflow_figures(gz, "GZIP", 3))
        if "cat" in only:
            bench_cat_text(small, env, max(1, args.repeat // 2), min(n, 100_000))
        if "json" in only:
            five = ensure("cli_five_features_50000.tfrecord", lambda: five_feature_records(50_000))
            bench_cat_json(five, 50_000, env, max(1, args.repeat // 2))
        if "index" in only:
            bench_index(small, n, env, cache_dir)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
