"""The app and the command line never ask which kind of record source they hold.

No ``getattr``/``hasattr`` of a fact that a record source, a pinned record or a payload
declares (codec.sources.protocol, codec.decode.payloads.Payload), nor of what only one kind
has, and no ``isinstance`` on a source kind: what a caller needs is a declared fact, which mypy
checks on every implementation (codec.sources.conformance). Static (fast): it reads the source.
"""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

from codec.decode.payloads import Payload
from codec.editing.edited import EditedFile
from codec.sources.array_record_file import ArrayRecordFile
from codec.sources.protocol import RecordReader, RecordSource
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile

ROOT = Path(__file__).resolve().parent.parent
CALLERS = [ROOT / "app", ROOT / "codec" / "cli"]  # (what reads sources, not what implements them)
KINDS = {"ShardSet", "TFRecordFile", "ArrayRecordFile", "EditedFile", "ShardSetTab"}
# Names a source kind shares with everything (a save result's path, a generator's close): a probe only
# when asked of something named as a source or a payload.
SHARED = {"path", "close", "name"}
SOURCE_WORDS = ("source", "payload", "reader")


def _public(klass) -> set[str]:
    return {n for n, _ in inspect.getmembers(klass) if not n.startswith("_")}


def probe_names() -> set[str]:
    """What a probe would ask: the declared facts, and what only some kinds have (a set's ``shards``)."""
    declared = _public(RecordSource) | _public(RecordReader) | _public(Payload)
    for protocol in (RecordSource, RecordReader, Payload):
        for klass in protocol.__mro__:
            declared |= set(getattr(klass, "__annotations__", {}))
    kinds = set().union(*(_public(k) for k in (TFRecordFile, ShardSet, ArrayRecordFile, EditedFile)))
    instance = {"shards", "source", "document", "byte_source", "walked", "check_crc"}  # (set in __init__)
    return (declared | kinds | instance | {"dataset", "status_text", "runs", "run_of", "line_extras"}) - SHARED


def probes(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """(line, call) of each getattr/hasattr of one of ``names``, and each isinstance on a source kind."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        args = node.args
        if node.func.id in ("getattr", "hasattr") and len(args) >= 2 and isinstance(args[1], ast.Constant):
            asked = args[1].value
            of = ast.unparse(args[0])
            if asked in names or (asked in SHARED and any(word in of for word in SOURCE_WORDS)):
                found.append((node.lineno, ast.unparse(node)))
        elif node.func.id == "isinstance" and len(args) == 2:
            kinds = args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]]
            if any(isinstance(k, ast.Name) and k.id in KINDS for k in kinds):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_probe_names_cover_the_kinds_own_facts():
    names = probe_names()
    assert {"container", "shards", "info_lines", "complete_records", "runs", "run_of", "line_extras",
            "resume_iter", "dataset", "status_text", "is_set"} <= names


def test_a_probe_is_found():
    code = ('getattr(source, "container", "tfrecord"); hasattr(f, "shards"); isinstance(s, (int, ShardSet))\n'
            'getattr(result, "path", None); isinstance(x, str); getattr(gen, "close", None)\n'
            'getattr(choice.payload, "name", None) == "tensorboard.Event"')
    assert [line for line, _ in probes(ast.parse(code), probe_names())] == [1, 1, 1, 3]


def test_no_caller_probes_a_record_source():
    names = probe_names()
    found = [f"{path.relative_to(ROOT)}:{line}: {call}"
             for folder in CALLERS for path in sorted(folder.rglob("*.py"))
             for line, call in probes(ast.parse(path.read_text()), names)]
    assert found == [], "ask a declared fact instead (codec.sources.protocol):\n" + "\n".join(found)
