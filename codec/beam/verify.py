"""``verify`` over many shards as independent tasks, the report the local command prints.

A file is one task ``{"path", "info", "use_cache"}``: its path or URL, its
listing entry, and whether the index cache is used; its result holds what the
local loop prints for that file. A plain file larger than
:data:`codec.beam.ranges.RANGE_BYTES` is cut into byte ranges instead, one task
each, and its ranges' results are stitched back into that same result (see
:mod:`codec.beam.ranges`). The command line's driver (:mod:`codec.cli.beam_runs`)
prints the results in listing order with the local command's own report function,
so ``--json`` output is the same byte for byte.
"""
from __future__ import annotations

__all__ = ["verify_task", "verify_work"]


def verify_task(task: dict) -> dict:
    """Verify one file as the local ``verify`` does (every length and data CRC): its counts and problems.

    A file that cannot be opened gives ``error``; a failure the local command
    would stop on gives ``fatal``; both carry the one-line message.
    """
    from codec.errors import TFRecordError
    from codec.ops.verify import status_counts, verify_data
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(task["path"], check_crc=True, use_cache=task["use_cache"], info=task.get("info"))
    except TFRecordError as exc:
        return {"error": str(exc)}
    try:
        with f:
            verify_data(f)
            return {"path": f.path, "compression": f.compression.value, "records": len(f),
                    "ok": status_counts(f)["ok"], "problems": list(f.problems)}
    except TFRecordError as exc:
        return {"fatal": str(exc)}


def verify_work(task: dict) -> dict:
    """One task of a Beam ``verify``: a whole file (:func:`verify_task`) or one range of a large one."""
    if "start" in task or "offsets" in task:
        from codec.beam.ranges import range_task

        return range_task(task)
    return verify_task(task)
