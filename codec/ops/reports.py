"""The JSON reports that ``verify``, ``stats``, ``schema``, ``check`` and ``repair`` write with
``--out PATH`` (a file or a URL), read back for browsing: a run on a cluster leaves its report in a
bucket, and the app opens it as it opens a local file.

:func:`load_report` reads the bytes (bounded), tells which command wrote them from their shape, checks
that shape, and returns a :class:`RunReport`. The shapes are the commands' own ``--json`` output:

- ``verify``: one object per file per line (JSON lines): path, compression, records, ok, problems;
- ``repair``: one object per file per line: source, output, kept, dropped, included_damaged, problems;
- ``stats``: the ``stats --json`` object (records, kinds, features or context/sequence);
- ``schema``: the ``schema --json`` object (records, raw_records, features or context/sequence);
- ``check``: the ``check --json`` object (records, findings).

Anything else raises a one-line :class:`~codec.errors.TFRecordError` naming the path and what is wrong.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from codec.errors import FileAccessError, UsageError
from codec.format.framing import Problem, ProblemKind
from codec.storage.remote import is_url

__all__ = ["JSON_NAMES", "KINDS", "MAX_REPORT_BYTES", "FileRepair", "FileVerify", "RunReport", "load_report",
           "local_path", "parse_report", "schema_python"]

KINDS = ("verify", "stats", "schema", "check", "repair")
MAX_REPORT_BYTES = 256 << 20  # a report this large is not one these commands wrote for a person to browse
JSON_NAMES = (".json", ".jsonl", ".ndjson")

_VERIFY_KEYS = ("path", "compression", "records", "ok", "problems")
_REPAIR_KEYS = ("source", "output", "kept", "dropped")


@dataclass
class FileVerify:
    """One file's line of a ``verify`` report; ``problems_total`` counts those ``--max-problems`` left out."""

    path: str
    compression: str
    records: int
    ok: int
    problems: list[Problem] = field(default_factory=list)
    problems_total: int = 0


@dataclass
class FileRepair:
    """One file's line of a ``repair`` report: records kept, and those dropped as (index, status label)."""

    source: str
    output: str
    kept: int
    dropped: list[tuple[int, str]] = field(default_factory=list)
    included_damaged: list[tuple[int, str]] = field(default_factory=list)
    problems: int = 0


@dataclass
class RunReport:
    """A report read back: ``kind`` (one of :data:`KINDS`), where it came from, and its data:
    a :class:`codec.doctor.CheckReport` (check), the JSON object (stats, schema), or a list of
    :class:`FileVerify` / :class:`FileRepair` (verify, repair)."""

    kind: str
    path: str
    data: Any
    size: int = 0

    def summary(self) -> str:
        """One line saying what the report holds."""
        if self.kind == "check":
            findings = self.data.findings
            errors = sum(1 for f in findings if f.severity == "error")
            return (f"{_n(len(findings), 'finding')} ({_n(errors, 'error')}, "
                    f"{_n(len(findings) - errors, 'warning')}) in {_n(self.data.records, 'record')}")
        if self.kind in ("stats", "schema"):
            d = self.data
            parts = [_n(d["records"], "record")]
            features = len(d.get("features", d.get("context", {}))) + len(d.get("sequence", {}))
            parts.append(_n(features, "feature"))
            if d.get("damaged_records"):
                parts.append(f"{d['damaged_records']:,} damaged left out")
            if d.get("where"):
                parts.append(f"where {d['where']}")
            return ", ".join(parts)
        if self.kind == "verify":
            records = sum(f.records for f in self.data)
            problems = sum(f.problems_total for f in self.data)
            return f"{_n(len(self.data), 'file')}, {_n(records, 'record')}, {_n(problems, 'problem')}"
        kept = sum(f.kept for f in self.data)
        dropped = sum(len(f.dropped) for f in self.data)
        return f"{_n(len(self.data), 'file')}, {kept:,} records kept, {dropped:,} dropped"


def _n(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


# -- reading ----------------------------------------------------------------------------------------------
def load_report(path: str | os.PathLike) -> RunReport:
    """Read the report at ``path`` (a local path or a URL) and parse it (see the module docstring).

    Raises FileAccessError when it cannot be read (missing, a folder, a 404) and UsageError when it is
    no run report (too large, not JSON, another shape). Blocks on the network for a URL.
    """
    path = os.fspath(path)
    data = _read_url(path) if is_url(path) else _read_local(path)
    return parse_report(data, path)


def _too_large(path: str, size: int) -> UsageError:
    return UsageError(f"{path}: {size:,} bytes is too large for a run report (the limit is "
                      f"{MAX_REPORT_BYTES >> 20} MiB)")


def _read_local(path: str) -> bytes:
    try:
        with open(os.path.expanduser(path), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_REPORT_BYTES:
                raise _too_large(path, size)
            data = f.read(MAX_REPORT_BYTES + 1)
    except FileNotFoundError:
        raise FileAccessError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise FileAccessError(f"cannot read {path}: it is a folder, not a report file") from None
    except OSError as exc:
        raise FileAccessError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_REPORT_BYTES:  # grew while it was read
        raise _too_large(path, len(data))
    return data


def _read_url(url: str) -> bytes:
    from codec.storage.remote import RemoteFile

    remote = RemoteFile.open(url)
    if remote.size > MAX_REPORT_BYTES:
        raise _too_large(url, remote.size)
    return remote.read_at(0, remote.size)


def parse_report(data: bytes, path: str = "<report>") -> RunReport:
    """The :class:`RunReport` of a report's bytes; ``path`` names it in errors."""
    if len(data) > MAX_REPORT_BYTES:
        raise _too_large(path, len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not a run report: not UTF-8 text (byte {exc.start:,})") from None
    if not text.strip():
        raise UsageError(f"{path}: not a run report: the file is empty")
    try:
        values = [_loads(text)]
        lines = [1]
    except ValueError as whole:
        numbered = [(k, line) for k, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(numbered) < 2:
            raise UsageError(f"{path}: not a run report: not JSON ({whole})") from None
        values, lines = [], []
        for k, line in numbered:
            try:
                values.append(_loads(line))
            except ValueError as exc:
                raise UsageError(f"{path}: not a run report: line {k} is not JSON ({exc})") from None
            lines.append(k)
    try:
        kind, parsed = _recognise(values, lines)
    except _Shape as exc:
        raise UsageError(f"{path}: not a run report: {exc}") from None
    return RunReport(kind, path, parsed, len(data))


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None


class _Shape(Exception):
    """JSON that is not the shape of any report."""


def _recognise(values: list, lines: list[int]) -> tuple[str, Any]:
    if len(values) == 1 and isinstance(values[0], list):  # a reformatted JSON lines report
        values = values[0]
        lines = list(range(1, len(values) + 1))
        if not values:
            raise _Shape("an empty list")
    first = values[0]
    if not isinstance(first, dict):
        raise _Shape(f"JSON {_type(first)}, not an object of verify, stats, schema, check or repair")
    if len(values) == 1:
        if "findings" in first:
            return "check", _check(first)
        if "features" in first or "context" in first:
            return ("stats" if "kinds" in first else "schema"), _features(first, "kinds" in first)
    if all(k in first for k in _VERIFY_KEYS):
        return "verify", [_verify(v, k) for v, k in zip(values, lines)]
    if all(k in first for k in _REPAIR_KEYS):
        return "repair", [_repair(v, k) for v, k in zip(values, lines)]
    keys = ", ".join(list(first)[:6]) or "none"
    raise _Shape(f"an object with keys {keys}: not the output of verify, stats, schema, check or repair")


def _type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "true/false", type(None): "null"}.get(
        type(value), "number")


def _int(obj: dict, key: str, where: str, optional: bool = False) -> int:
    value = obj.get(key)
    if value is None and optional:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Shape(f"{where}: {key!r} is {_type(value) if key in obj else 'missing'}, not a count")
    return value


def _str(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise _Shape(f"{where}: {key!r} is {_type(value) if key in obj else 'missing'}, not a string")
    return value


def _list(obj: dict, key: str, where: str, optional: bool = False) -> list:
    value = obj.get(key, [] if optional else None)
    if not isinstance(value, list):
        raise _Shape(f"{where}: {key!r} is {_type(value) if key in obj else 'missing'}, not a list")
    return value


def _check(obj: dict) -> Any:
    from codec.doctor.report import CheckReport, Finding, RecordRef

    findings = []
    for k, f in enumerate(_list(obj, "findings", "the check report")):
        where = f"finding {k + 1}"
        if not isinstance(f, dict):
            raise _Shape(f"{where} is {_type(f)}, not an object")
        refs = []
        for r in _list(f, "records", where):
            if not isinstance(r, dict):
                raise _Shape(f"{where}: a record is {_type(r)}, not an object")
            refs.append(RecordRef(_str(r, "path", where), _int(r, "index", where)))
        severity = _str(f, "severity", where)
        if severity not in ("error", "warning"):
            raise _Shape(f"{where}: severity {severity!r} is neither error nor warning")
        findings.append(Finding(_str(f, "check", where), severity, refs, _str(f, "detail", where)))
    return CheckReport(_int(obj, "records", "the check report"), findings)


def _features(obj: dict, stats: bool) -> dict:
    what = "the stats report" if stats else "the schema report"
    _int(obj, "records", what)
    for section in ("features", "context", "sequence"):
        features = obj.get(section, {})
        if not isinstance(features, dict):
            raise _Shape(f"{what}: {section!r} is {_type(features)}, not an object")
        for name, feature in features.items():
            if not isinstance(feature, dict):
                raise _Shape(f"{what}: feature {name!r} is {_type(feature)}, not an object")
            if stats:
                _int(feature, "present", f"feature {name!r}")
            else:
                _str(feature, "type", f"feature {name!r}")
                _str(feature, "dtype", f"feature {name!r}")
    if stats and not isinstance(obj.get("kinds"), dict):
        raise _Shape(f"{what}: 'kinds' is {_type(obj.get('kinds'))}, not an object")
    return obj


def _verify(obj: Any, line: int) -> FileVerify:
    where = f"line {line}"
    _entry(obj, where, _VERIFY_KEYS, "verify")
    problems = []
    for p in _list(obj, "problems", where):
        if not isinstance(p, dict):
            raise _Shape(f"{where}: a problem is {_type(p)}, not an object")
        try:
            kind = ProblemKind(p.get("problem"))
        except ValueError:
            raise _Shape(f"{where}: unknown problem {p.get('problem')!r}") from None
        index = p.get("index")
        problems.append(Problem(None if index is None else _int(p, "index", where), _int(p, "offset", where),
                                kind, _str(p, "detail", where), path=p.get("path")))
    total = _int(obj, "problems_total", where, optional=True) if "problems_total" in obj else len(problems)
    return FileVerify(_str(obj, "path", where), _str(obj, "compression", where), _int(obj, "records", where),
                      _int(obj, "ok", where), problems, total)


def _entry(obj: Any, where: str, keys: tuple[str, ...], command: str) -> None:
    """One line of a JSON lines report: an object with the keys every line of ``command``'s has."""
    if not isinstance(obj, dict):
        raise _Shape(f"{where} is {_type(obj)}, not a file's {command} report")
    if not all(k in obj for k in keys):
        raise _Shape(f"{where}: an object with keys {', '.join(list(obj)[:6]) or 'none'}, not a file's "
                     f"{command} report")


def _pairs(obj: dict, key: str, where: str) -> list[tuple[int, str]]:
    out = []
    for pair in _list(obj, key, where, optional=True):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], str)):
            raise _Shape(f"{where}: {key!r} holds {json.dumps(pair)[:40]}, not [index, status]")
        out.append((pair[0], pair[1]))
    return out


def _repair(obj: Any, line: int) -> FileRepair:
    where = f"line {line}"
    _entry(obj, where, _REPAIR_KEYS, "repair")
    return FileRepair(_str(obj, "source", where), _str(obj, "output", where), _int(obj, "kept", where),
                      _pairs(obj, "dropped", where), _pairs(obj, "included_damaged", where),
                      _int(obj, "problems", where, optional=True))


# -- using a report ---------------------------------------------------------------------------------------
def local_path(report_path: str, path: str) -> str | None:
    """Where a file a report names is on this machine: ``path`` itself (absolute, or relative to the
    working folder), else relative to the report's folder (a report written beside its data). A URL
    is returned as it is; None when the file is not here."""
    if is_url(path):
        return path
    candidates = [os.path.expanduser(path)]
    if not os.path.isabs(path) and not is_url(report_path):
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(report_path)), path))
    return next((os.path.abspath(c) for c in candidates if os.path.isfile(c)), None)


def schema_python(schema: dict, source: str | None = None) -> str:
    """A ``schema`` report as the Python code ``tfrlens-cli schema`` prints (the notes the JSON form
    does not keep, such as why a feature is VarLen, are not in it)."""
    from codec.stats.schema import FeatureSpec

    def spec(name: str, d: dict) -> FeatureSpec:
        shape = d.get("shape")
        return FeatureSpec(name, d["type"], d["dtype"], list(shape) if isinstance(shape, list) else None,
                           bool(d.get("allow_missing")), d.get("mixed_types"))

    def code(var: str, features: dict) -> list[str]:
        if not features:
            return [f"{var} = {{}}"]
        body = [f"    {json.dumps(name)}: {spec(name, d).to_python()}," for name, d in features.items()]
        return [f"{var} = {{", *body, "}"]

    records = schema["records"]
    lines = [f"# Inferred by tfrlens from {_n(records, 'record')}" + (f" of {source}" if source else "") + "."]
    if schema.get("where"):
        lines.append(f"# Records where {schema['where']}.")
    if schema.get("raw_records"):
        lines.append(f"# {schema['raw_records']:,} raw record(s) are not Examples: no spec parses them.")
    if "sequence" in schema:
        lines.append("# tf.io.parse_single_sequence_example(serialized, context_features, sequence_features)")
        lines += code("context_features", schema.get("context", {}))
        lines += code("sequence_features", schema["sequence"])
    else:
        lines.append("# tf.io.parse_single_example(serialized, features_spec)")
        lines += code("features_spec", schema.get("features", {}))
    return "\n".join(lines) + "\n"
