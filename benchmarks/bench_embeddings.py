"""The embedding projection: 100,000 records with a 64-dim float embedding and a label, projected to 2-D.

Generates (once, cached in benchmarks/_data) a file of Examples holding
``embedding`` (64 floats, four clusters) and ``label`` (the cluster), opens
and indexes it, then times :func:`codec.stats.embeddings.project` (read,
decode with the columnar decoder, PCA). Target: 2 s on a 2-core machine.
A sample of a bigger file reads only the sampled records' byte ranges through
the offset index. Beside the wall time it prints this process's CPU time, which
other work on a shared machine does not inflate (with workers, the pool's
processes are not counted).

    python -m benchmarks.bench_embeddings
    python -m benchmarks.bench_embeddings --records 1000000   # a sample of 100,000 of them
"""
from __future__ import annotations

import argparse
import time

from benchmarks.common import ensure_file

DIMS = 64


def embedding_records(n: int, dims: int = DIMS, seed: int = 0):
    """``n`` Examples: ``embedding`` (``dims`` floats around one of four centres) and ``label`` (its centre)."""
    import numpy as np

    from codec.decode.example_proto import Example

    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, (4, dims)).astype(np.float32)
    for start in range(0, n, 10_000):
        k = min(10_000, n - start)
        labels = rng.integers(0, 4, k)
        vectors = centres[labels] + rng.normal(0, 1, (k, dims)).astype(np.float32)
        for label, vec in zip(labels.tolist(), vectors):
            ex = Example()
            ex.features.feature["embedding"].float_list.value.extend(vec.tolist())
            ex.features.feature["label"].int64_list.value.append(label)
            yield ex.SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    from codec import open_tfrecord
    from codec.stats.embeddings import project

    path = ensure_file(f"embeddings_{args.records}.tfrecord", lambda: embedding_records(args.records))
    with open_tfrecord(path) as f:
        for _ in f.index_iter():
            pass
        print(f"records: {args.records:,}  dims: {DIMS}  file: {f.file_size / 2**20:.1f} MiB")
        for workers in (1, None):
            runs, cpu = [], []
            for _ in range(5):
                t, c = time.perf_counter(), time.process_time()
                result = project(f, "embedding", workers=workers)
                runs.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            print(f"project, workers={workers or 'one per core'}: best {min(runs):.3f} s, median {sorted(runs)[2]:.3f} s"
                  f" (CPU here: best {min(cpu):.3f} s, median {sorted(cpu)[2]:.3f} s)"
                  f"  ({len(result.records):,} projected, explained {result.explained[0]:.3f}, "
                  f"{result.explained[1]:.3f}; target <= 2 s)")


if __name__ == "__main__":
    main()
