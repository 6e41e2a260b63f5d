"""Regenerate ``events.desc`` from the vendored TensorBoard ``.proto`` files beside it.

Run from a checkout with grpcio-tools installed (the ``proto`` extra):
``python codec/decode/event_protos/regenerate.py``. The descriptor set is checked in
so that reading event files needs only protobuf; tests/codec/test_events.py checks it
matches these sources.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_FILE = "tensorboard/compat/proto/event.proto"
OUTPUT = os.path.join(HERE, "events.desc")


def descriptor_set_bytes() -> bytes:
    """The FileDescriptorSet protoc writes for event.proto and its imports (no source info: stable bytes)."""
    import tempfile

    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "events.desc")
        code = protoc.main(["protoc", f"--proto_path={HERE}", "--include_imports",
                            f"--descriptor_set_out={out}", os.path.join(HERE, ROOT_FILE)])
        if code != 0:
            raise SystemExit(f"protoc failed with exit code {code}")
        with open(out, "rb") as f:
            return f.read()


def main() -> int:
    data = descriptor_set_bytes()
    with open(OUTPUT, "wb") as f:
        f.write(data)
    print(f"wrote {OUTPUT} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
