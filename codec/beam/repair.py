"""``repair`` over many shards as independent tasks: one clean output shard per input shard.

A task is ``{"path", "info", "target", "compression", "include_damaged",
"use_cache"}``. Each writes its whole target through
:class:`codec.storage.writer.OutputFile` (a temporary file renamed, or uploaded, on
commit), so a retried bundle replaces the same target and never leaves two
copies or half a file. A plain file larger than
:data:`codec.beam.ranges.RANGE_BYTES` repaired into a plain target is cut into
byte ranges instead: each range task writes its clean records to a hidden part
file beside the target (``.NAME.part-00003``, through the same OutputFile), and
this process joins the parts in order into the target (a temporary file renamed,
or one upload), then removes them. The output is byte for byte the local
command's, and the command line's driver (:mod:`codec.cli.beam_runs`) prints what
the local command prints.
"""
from __future__ import annotations

import os

__all__ = ["join_parts", "joinable", "part_name", "ranged_report", "remove_parts", "repair_task", "repair_work"]

PIECE = 8 << 20  # bytes copied at a time when parts are joined


def repair_task(task: dict) -> dict:
    """Repair one file into its target as the local ``repair`` does: ``{"report": RepairReport}``.

    A file that cannot be opened gives ``error``; a failure the local command
    would stop on gives ``fatal``.
    """
    from codec.errors import TFRecordError
    from codec.ops.repair import repair
    from codec.sources.tfrecord_file import TFRecordFile

    try:
        f = TFRecordFile(task["path"], check_crc=True, use_cache=task["use_cache"], info=task.get("info"))
    except TFRecordError as exc:
        return {"error": str(exc)}
    try:
        with f:
            report = repair(f, task["target"], task["compression"], task["include_damaged"])
    except TFRecordError as exc:
        return {"fatal": str(exc)}
    return {"report": report}


def repair_work(task: dict) -> dict:
    """One task of a Beam ``repair``: a whole file (:func:`repair_task`) or one range of a large one."""
    if "part" in task:
        from codec.beam.ranges import range_task

        return range_task(task)
    return repair_task(task)


def joinable(target: str, source: str) -> bool:
    """Can parts be joined into ``target``: a regular file or an object, not the source itself (the
    one-file task then says why it refuses, as the local command does)?"""
    from codec.errors import FileAccessError
    from codec.storage.writer import check_not_input, is_special_output

    try:
        check_not_input(target, [source], "the repaired copy")
    except FileAccessError:
        return False
    return not is_special_output(target)


def ranged_report(task: dict, plan, results: list[dict]) -> dict:
    """The file's report, its parts (and any gap between ranges, written here) joined into its target;
    a failed range or a missing part leaves the target unwritten (``fatal``, one line)."""
    from codec.beam.ranges import gap_part, stitch
    from codec.errors import TFRecordError
    from codec.ops.repair import RepairReport

    for result in results:
        if "fatal" in result or "error" in result:
            return result
    target = task["target"]
    report = RepairReport(task["path"], target)
    pieces: list[tuple[str, int | None]] = []  # (part, its size; None: removed, not joined)
    try:
        done = stitch(plan, results, repairing=True)
        first = 0
        for n, segment in enumerate(done.segments):
            if isinstance(segment, int):
                result, part, count = results[segment], plan.tasks[segment]["part"], results[segment]["records"]
            else:
                part = part_name(target, len(plan.tasks) + n)
                pieces.append((part, None))  # removed with the others whatever happens
                result, count = gap_part(plan, segment, part, task["include_damaged"]), len(segment.offsets)
            report.kept += result["kept"]
            report.dropped += [(first + i, label) for i, label in result["dropped"]]
            report.included_damaged += [(first + i, label) for i, label in result["included"]]
            pieces.append((part, result["part_bytes"]))
            first += count
        report.problems = len(done.problems)
        join_parts(target, [(part, size) for part, size in pieces if size is not None])
    except TFRecordError as exc:
        return {"fatal": str(exc)}
    finally:
        remove_parts([part for part, size in pieces if size is None])
    return {"report": report}


def part_name(target: str, k: int) -> str:
    """Where range ``k`` of ``target`` is written: a hidden file beside it (a folder listing skips it)."""
    from codec.storage.writer import is_url_output

    if is_url_output(target):
        folder, _, name = target.rpartition("/")
        return f"{folder}/.{name}.part-{k:05d}"
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.part-{k:05d}")


def join_parts(target: str, parts: list[tuple[str, int]]) -> None:
    """Write the ``(part, size)`` files one after another into ``target`` (a temporary file renamed, or
    one upload); FileAccessError, with ``target`` untouched, when a part is missing or not its size."""
    from codec.beam.ranges import part_size
    from codec.errors import FileAccessError
    from codec.storage.writer import OutputFile

    for part, size in parts:
        found = part_size(part)
        if found != size:
            have = "is missing" if found is None else f"has {found:,} bytes, not {size:,}"
            raise FileAccessError(f"{target} not written: its part {part} {have}")
    with OutputFile(target) as out:
        for part, _ in parts:
            with _open_part(part) as src:
                while chunk := src.read(PIECE):
                    out.write(chunk)


def remove_parts(parts: list[str]) -> None:
    """Remove the part files that exist (what is left of a failed run too); never an error."""
    from codec.storage.writer import is_url_output

    for part in parts:
        try:
            if is_url_output(part):
                from codec.storage.remote import remote_filesystem

                fs, path = remote_filesystem(part)
                if fs.exists(path):
                    fs.rm(path)
            else:
                os.unlink(part)
        except Exception:  # noqa: BLE001 - a part already gone, or a store refusing: the report is what counts
            pass


def _open_part(part: str):
    from codec.storage.writer import is_url_output

    if is_url_output(part):
        from codec.storage.remote import remote_filesystem

        fs, path = remote_filesystem(part)
        return fs.open(path, "rb")
    return open(part, "rb")
