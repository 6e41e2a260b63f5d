"""Decoding records that are not Examples: tensors, users' own messages, schema-less protobuf.

    .venv/bin/python benchmarks/bench_payloads.py [--records 1000000]

Builds four files of N records each in benchmarks/_data (kept between runs),
all of about 60 bytes a record:

- ``payload_examples_N``: Examples with an int64 ``label``, a float ``score``,
  two float ``bbox`` values and a bytes ``name`` (the baseline);
- ``payload_tensors_N``: ``tf.io.serialize_tensor`` of float32 [8] tensors;
- ``payload_messages_N``: a ``bench.Frame`` message (string id, int64 time,
  a repeated nested box, an enum), decoded with ``--proto bench_frame.desc``
  (a descriptor set this script writes);
- the same message file read without ``--proto``: schema-less protobuf.

For each it prints microseconds per record (best of 3) of decoding
(``decode_record``), of a ``cat --json`` line (``json_line``), and of a
statistics pass (``compute_stats``), and each against the Examples' figure.
Where TensorFlow is installed (in this interpreter or $TFRLENS_TF_PYTHON) it
also times ``tf.io.parse_tensor`` and ``tf.io.decode_proto`` per record.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.bench_qa import best_of, qa_examples
from benchmarks.common import data_path, ensure_file, tensorflow
from codec import TFRecordFile
from codec.decode.decoder import decode_record
from codec.format.framing import RecordStatus
from codec.ops.export import json_line
from codec.stats.file_stats import compute_stats

FRAME_DESC = "bench_frame.desc"


def frame_descriptor_set() -> bytes:
    """A FileDescriptorSet of ``bench.Frame`` (what protoc --descriptor_set_out would write)."""
    from google.protobuf import descriptor_pb2

    T = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="bench_frame.proto", package="bench", syntax="proto3")
    box = f.message_type.add(name="Box")
    for number, name in enumerate(("xmin", "ymin", "xmax", "ymax"), 1):
        box.field.add(name=name, number=number, type=T.TYPE_FLOAT, label=T.LABEL_OPTIONAL)
    frame = f.message_type.add(name="Frame")
    split = frame.enum_type.add(name="Split")
    for number, name in enumerate(("SPLIT_UNSPECIFIED", "TRAIN", "EVAL")):
        split.value.add(name=name, number=number)
    frame.field.add(name="image_id", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    frame.field.add(name="timestamp_us", number=2, type=T.TYPE_INT64, label=T.LABEL_OPTIONAL)
    frame.field.add(name="boxes", number=3, type=T.TYPE_MESSAGE, type_name=".bench.Box", label=T.LABEL_REPEATED)
    frame.field.add(name="split", number=4, type=T.TYPE_ENUM, type_name=".bench.Frame.Split",
                    label=T.LABEL_OPTIONAL)
    return descriptor_pb2.FileDescriptorSet(file=[f]).SerializeToString()


def frame_messages(n: int):
    from codec.decode.messages import load_message_type

    frame_class = load_message_type(data_path(FRAME_DESC), "bench.Frame").message_class
    frame = frame_class()
    box = frame.boxes.add()
    for i in range(n):
        frame.image_id = f"frame-{i:08d}"
        frame.timestamp_us = 1_700_000_000_000_000 + i * 33_333
        box.xmin, box.ymin, box.xmax, box.ymax = (i % 7) / 10, (i % 5) / 10, 0.9, 0.8
        frame.split = 1 + i % 2
        yield frame.SerializeToString()


def tensors(n: int):
    import numpy as np

    from codec.decode.tensors import DATA_TYPES, TensorProto

    proto = TensorProto(dtype=DATA_TYPES["DT_FLOAT"])
    proto.tensor_shape.dim.add(size=8)
    base = np.arange(8, dtype="<f4")
    for i in range(n):
        proto.tensor_content = (base + i).tobytes()
        yield proto.SerializeToString()


def best_us(fn, count: int, runs: int) -> float:
    """Microseconds per record of the best of ``runs`` runs of ``fn`` over ``count`` records."""
    return best_of(fn, runs)[0] / count * 1e6


_TF_SCRIPT = """
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
tensors, messages, desc = sys.argv[1:4]
def best(ds):
    out = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        n = 0
        for _ in ds:
            n += 1
        out = min(out, time.perf_counter() - t)
    return out / n * 1e6
print(best(tf.data.TFRecordDataset(tensors).map(lambda s: tf.io.parse_tensor(s, tf.float32))))
fields = ["image_id", "timestamp_us", "split"]
print(best(tf.data.TFRecordDataset(messages).batch(1).map(lambda s: tuple(tf.io.decode_proto(
    s, "bench.Frame", fields, [tf.string, tf.int64, tf.int32], descriptor_source=desc).values))))
"""


def tf_figures(tensor_path: str, message_path: str) -> tuple[float, float] | None:
    python = sys.executable if tensorflow() is not None else os.environ.get("TFRLENS_TF_PYTHON")
    if not python:
        return None
    proc = subprocess.run([python, "-c", _TF_SCRIPT, tensor_path, message_path, data_path(FRAME_DESC)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print("  TensorFlow run failed:", proc.stderr.strip().splitlines()[-1:] or "")
        return None
    lines = proc.stdout.split()
    return float(lines[-2]), float(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    n = args.records
    desc = data_path(FRAME_DESC)
    if not os.path.exists(desc):
        with open(desc, "wb") as out:
            out.write(frame_descriptor_set())
    from codec.decode.messages import load_message_type

    frame_type = load_message_type(desc, "bench.Frame")
    files = {
        "Examples": (ensure_file(f"payload_examples_{n}.tfrecord", lambda: qa_examples(n)), None),
        "tensors (float32 [8])": (ensure_file(f"payload_tensors_{n}.tfrecord", lambda: tensors(n)), None),
        "messages (--proto)": (ensure_file(f"payload_messages_{n}.tfrecord", lambda: frame_messages(n)),
                               frame_type),
    }
    files["protobuf, no schema"] = (files["messages (--proto)"][0], None)
    print(f"{n:,} records per file; microseconds per record, best of {args.runs}")
    print(f"  {'':<24} {'bytes':>6} {'decode':>9} {'cat --json':>11} {'stats':>9}   vs Examples")
    baseline = None
    for label, (path, payload) in files.items():
        with TFRecordFile(path) as f:
            f.build_index()
            records = [bytes(f.read(i).data) for i in range(len(f))]
            f.payload = payload
            kind = decode_record(records[0], payload).kind.value
            decode = best_us(lambda: [decode_record(r, payload) for r in records], n, args.runs)  # noqa: B023
            ok = RecordStatus.OK
            line = best_us(lambda: [json_line(i, r, ok, payload=payload) for i, r in enumerate(records)], n,  # noqa: B023
                           args.runs)
            stats = best_us(lambda: compute_stats(f), n, args.runs)
        size = sum(map(len, records)) / n
        figures = (decode, line, stats)
        if baseline is None:
            baseline = figures
        ratios = " ".join(f"{x / b:5.2f}x" for x, b in zip(figures, baseline))
        print(f"  {label:<24} {size:6.0f} {decode:9.2f} {line:11.2f} {stats:9.2f}   {ratios}   ({kind})")
        records = None  # free them before the next file is read
    tf = tf_figures(files["tensors (float32 [8])"][0], files["messages (--proto)"][0])
    if tf is not None:
        print(f"  TensorFlow: tf.io.parse_tensor {tf[0]:.2f} us/record, tf.io.decode_proto {tf[1]:.2f} us/record "
              "(tf.data pipelines, eager iteration)")


if __name__ == "__main__":
    main()
