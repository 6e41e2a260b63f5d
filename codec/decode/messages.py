"""The user's own protobuf messages: load a type from a descriptor set or a .proto, decode records as it.

``load_message_type(path, "lens.demo.Frame")`` reads a ``FileDescriptorSet``
(what ``protoc --include_imports --descriptor_set_out`` writes) or compiles a
``.proto`` source with protoc from grpcio-tools, into a private descriptor
pool: a user's ``Frame`` never meets the default pool or another file's
``Frame``. :meth:`MessageType.decode` never raises for bad bytes: a record that
does not parse is RAW with a one-line note. The views of a decoded message
(JSON, flat fields, tree) live in :mod:`codec.decode.message_view`.
"""
from __future__ import annotations

import codecs
import importlib
import importlib.util
import os
import re
import stat
import sys
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, EncodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from codec.decode.decoded import DecodedRecord, RecordKind, is_text, read_varint
from codec.decode.message_view import is_repeated_field, is_required_field, message_fields, message_json, message_tree
from codec.decode.payload_defaults import PayloadDefaults
from codec.errors import SchemaError

__all__ = [
    "MessageType",
    "load_message_type",
    "message_fields",
    "message_json",
    "message_tree",
    "message_types",
]

WELL_KNOWN_PREFIX = "google/protobuf/"
PROTO_EXTRA = "pip install 'tfrecord-lens[proto]'"
MAX_LISTED_TYPES = 25  # a wrong type name lists at most this many of the file's types
MAX_SCHEMA_BYTES = 64 << 20  # descriptor sets of large APIs are a few MB
MAX_DEPTH = 100  # protobuf's own nesting limit when parsing
_CACHE_SIZE = 8
_WELL_KNOWN_MODULE = re.compile(r"[a-z_]+(/[a-z_]+)*")
_PROTOC_LOG = re.compile(r"WARNING: All log messages before|[IWEF]\d{4} \d\d:\d\d:")
_PACKAGE = re.compile(rb"^\s*package\s+([A-Za-z_][A-Za-z0-9_.]*)\s*;", re.MULTILINE)
_UPB_PREFIX = re.compile(r"^Error parsing message( with type '[^']*')?:? ?")


class MessageType(PayloadDefaults):
    """One message type from a user's schema file; decodes records as that type.

    ``name`` is the full type name, ``path`` the schema file, ``message_class``
    the generated class (in a private pool, ``pool``).
    """

    def __init__(self, descriptor: Any, path: str, pool: descriptor_pool.DescriptorPool):
        self.descriptor = descriptor
        self.name: str = descriptor.full_name
        self.path = path
        self.pool = pool
        _check_nesting(descriptor, path)
        try:
            self.message_class: type[Message] = message_factory.GetMessageClass(descriptor)
        except RecursionError:
            raise SchemaError(f"message nesting too deep in {os.path.basename(path) or path}") from None
        types = _reachable_types(descriptor)
        self._nested = {t.full_name: _message_fields_of(t) for t in types}
        self._has_required = any(is_required_field(field) for t in types for field in t.fields)
        self._utf8: frozenset[str] | None = None  # files that require UTF-8 strings, found when first needed

    def __repr__(self) -> str:
        return f"MessageType({self.name!r}, {self.path!r})"

    def describe(self) -> str:
        """One line for a status bar or ``info``: ``lens.demo.Frame from frames.desc``."""
        return f"{self.name} from {os.path.basename(self.path)}"

    def decode(self, data: bytes) -> DecodedRecord:
        """The record as this type (MESSAGE), or RAW with a note saying why not; never raises.

        A message that parses but carries unknown fields, or misses proto2
        required fields, stays MESSAGE with a note: the file may hold another type.
        """
        data = bytes(data)
        try:
            message = self.message_class.FromString(data)
            unknown = 0
            if not _has_no_unknown(message, len(data)):
                message = self.message_class.FromString(data)
                unknown = _count_unknown(message, self._nested)
        except (DecodeError, RuntimeError, ValueError, RecursionError) as exc:
            return DecodedRecord(RecordKind.RAW, data, note=f"not a {self.name}: {self._reason(exc, data)}")
        notes = []
        if unknown:
            notes.append(f"{unknown} unknown field{'s' if unknown != 1 else ''}: "
                         f"the record may not be a {self.name}")
        if self._has_required and not message.IsInitialized():
            missing = message.FindInitializationErrors()
            notes.append(f"missing required field{'s' if len(missing) != 1 else ''} {', '.join(missing)}")
        return DecodedRecord(RecordKind.MESSAGE, data, message, note="; ".join(notes) or None)

    def _reason(self, exc: Exception, data: bytes) -> str:
        """Why ``data`` does not parse, as precisely as a walk of its wire format can say."""
        if isinstance(exc, RecursionError) or "MaxDepth" in str(exc):
            return f"nested deeper than {MAX_DEPTH} levels"
        if self._utf8 is None:
            self._utf8 = _utf8_files(_reachable_types(self.descriptor))
        found = _WireCheck(data, self._utf8).problem(self.descriptor)
        if found:
            return found
        text = _UPB_PREFIX.sub("", str(exc)).strip()
        return text or "the bytes do not match the type's fields"


def load_message_type(path: str | os.PathLike, type_name: str, *,
                      include_dirs: tuple[str, ...] = ()) -> MessageType:
    """The message type ``type_name`` from a descriptor set or ``.proto`` file.

    A name without its package is accepted when only one type has it. Raises
    :class:`SchemaError` (one line) for a file that does not load or compile,
    and for a name the file does not hold (the message lists those it does).
    ``include_dirs`` are extra import roots for a ``.proto`` source.
    """
    path = os.fspath(path)
    schema = _load_schema(path, tuple(include_dirs))
    return MessageType(schema.find(type_name), path, schema.pool)


def message_types(path: str | os.PathLike, *, include_dirs: tuple[str, ...] = ()) -> list[str]:
    """Full names of the message types a schema file holds, nested ones too (for a type picker).

    Types of google/protobuf files it imports are left out unless the file holds nothing else.
    """
    return list(_load_schema(os.fspath(path), tuple(include_dirs)).names)


# ---------------------------------------------------------------- loading


class _Schema:
    """A loaded schema file: its private pool and the message types it offers."""

    def __init__(self, path: str, files: list[descriptor_pb2.FileDescriptorProto], roots: list[str]):
        self.label = os.path.basename(path) or path
        self.pool = _build_pool(files, self.label)
        self.all_names = [name for file in files for name in _file_type_names(self.pool, file.name)]
        user_files = [f.name for f in files if not f.name.startswith(WELL_KNOWN_PREFIX)]
        ordered = [name for name in roots if name in user_files] + [
            name for name in user_files if name not in roots]
        names = [name for file in ordered for name in _file_type_names(self.pool, file)]
        self.names = names or self.all_names

    def find(self, type_name: str) -> Any:
        """The descriptor of ``type_name`` (full, or unique without its package)."""
        wanted = type_name.strip().lstrip(".")
        if wanted in self.all_names:
            return self.pool.FindMessageTypeByName(wanted)
        matches = [name for name in self.all_names if name.endswith("." + wanted)]
        preferred = [name for name in matches if name in self.names]
        matches = preferred or matches
        if len(matches) == 1:
            return self.pool.FindMessageTypeByName(matches[0])
        if matches:
            raise SchemaError(
                f"message type {type_name!r} is ambiguous in {self.label}: {', '.join(matches)}")
        if not self.names:
            raise SchemaError(f"{self.label} holds no message types")
        shown = ", ".join(self.names[:MAX_LISTED_TYPES])
        more = len(self.names) - MAX_LISTED_TYPES
        if more > 0:
            shown += f", … ({more} more)"
        raise SchemaError(f"no message type {type_name!r} in {self.label}; it holds: {shown}")


_cache: dict[tuple, _Schema] = {}


def _load_schema(path: str, include_dirs: tuple[str, ...]) -> _Schema:
    """The schema at ``path``, reused while the file keeps its size and modification time."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise SchemaError(f"cannot read schema {path}: not a regular file")
        if st.st_size > MAX_SCHEMA_BYTES:
            raise SchemaError(
                f"{path} is {st.st_size:,} bytes: too large for a descriptor set or .proto source")
        with open(path, "rb") as f:
            data = f.read(MAX_SCHEMA_BYTES + 1)
    except OSError as exc:
        raise SchemaError(f"cannot read schema {path}: {exc.strerror or exc}") from None
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns, include_dirs)
    if key in _cache:
        return _cache[key]
    label = os.path.basename(path) or path
    if not data:
        raise SchemaError(f"{label} is empty: not a FileDescriptorSet or .proto source")
    files = None if is_text(data.removeprefix(codecs.BOM_UTF8)) else _parse_descriptor_set(data)
    if files is None or (not files and path.lower().endswith(".proto")):
        files = _parse_descriptor_set(_compile(path, label, data, include_dirs))
        roots = [files[-1].name] if files else []  # protoc writes the file it was given last
    elif not files:
        raise SchemaError(f"{label} is not a FileDescriptorSet (protoc --include_imports "
                          f"--descriptor_set_out) or a .proto source")
    else:
        imported = {dep for file in files for dep in file.dependency}
        roots = [file.name for file in files if file.name not in imported]
    schema = _Schema(path, files, roots)
    if len(_cache) >= _CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[key] = schema
    return schema


def _parse_descriptor_set(data: bytes) -> list[descriptor_pb2.FileDescriptorProto]:
    """The files of a FileDescriptorSet; an empty list when ``data`` is not one."""
    try:
        files = list(descriptor_pb2.FileDescriptorSet.FromString(data).file)
    except (DecodeError, RuntimeError, ValueError):
        return []
    return files if all(file.name for file in files) else []


def _build_pool(files: list[descriptor_pb2.FileDescriptorProto],
                label: str) -> descriptor_pool.DescriptorPool:
    """A private pool holding ``files``, each added after the files it imports.

    An import the set lacks is taken from protobuf's own well-known types
    (google/protobuf/*.proto) when it is one of them.
    """
    pool = descriptor_pool.DescriptorPool()
    by_name = {file.name: file for file in files}
    added: set[str] = set()

    def add(name: str, importer: str | None, chain: tuple[str, ...]) -> None:
        if name in added:
            return
        if name in chain:
            raise SchemaError(f"{label}: {name} imports itself through {' -> '.join(chain)}")
        proto = by_name.get(name) or _well_known_file(name)
        if proto is None:
            raise SchemaError(f"{label} does not hold {name}, which {importer} imports "
                              f"(write the set with protoc --include_imports)")
        for dependency in proto.dependency:
            add(dependency, name, chain + (name,))
        try:
            pool.Add(proto)
        except (TypeError, ValueError, KeyError, RuntimeError) as exc:
            raise SchemaError(f"{label}: {name} does not load: {_one_line(str(exc))}") from None
        added.add(name)

    try:
        for file in files:
            add(file.name, None, ())
    except RecursionError:
        raise SchemaError(f"{label}: its imports nest too deeply") from None
    return pool


def _well_known_file(name: str) -> descriptor_pb2.FileDescriptorProto | None:
    """protobuf's own copy of a google/protobuf/*.proto file, or None."""
    stem = name[len(WELL_KNOWN_PREFIX):-len(".proto")] if name.endswith(".proto") else ""
    if not name.startswith(WELL_KNOWN_PREFIX) or not _WELL_KNOWN_MODULE.fullmatch(stem):
        return None
    try:
        importlib.import_module("google.protobuf." + stem.replace("/", ".") + "_pb2")
        found = descriptor_pool.Default().FindFileByName(name)
    except (ImportError, KeyError):
        return None
    return descriptor_pb2.FileDescriptorProto.FromString(found.serialized_pb)


def _file_type_names(pool: descriptor_pool.DescriptorPool, file_name: str) -> list[str]:
    """Full names of a file's message types, nested ones after their parent; map entries left out."""
    names: list[str] = []

    def walk(descriptor: Any) -> None:
        if descriptor.GetOptions().map_entry:
            return
        names.append(descriptor.full_name)
        for nested in descriptor.nested_types:
            walk(nested)

    for descriptor in pool.FindFileByName(file_name).message_types_by_name.values():
        walk(descriptor)
    return names


def _import_roots(source: str, text: bytes) -> list[str]:
    """Where protoc looks for the imports of ``source``: its own folder, and before it the root its folders
    name when they spell its package (``protos/lens/demo/x.proto`` in package ``lens.demo``: ``protos``)."""
    folder = os.path.dirname(source)
    found = _PACKAGE.search(text)
    if found:
        tail = os.path.join(*found.group(1).decode("ascii").split("."))
        if folder.endswith(os.sep + tail):
            return [folder[:-len(tail) - 1] or os.sep, folder]
    return [folder]


def _compile(path: str, label: str, text: bytes, include_dirs: tuple[str, ...]) -> bytes:
    """A .proto source compiled by protoc (grpcio-tools) into a FileDescriptorSet with its imports.

    protoc runs in a child process: its errors are printed by C++ code, which
    only a child's stderr captures, and importing ``grpc_tools.protoc`` would
    install import hooks in this process.
    """
    if importlib.util.find_spec("grpc_tools") is None:
        raise SchemaError(f"{label} is a .proto source: compiling it needs grpcio-tools ({PROTO_EXTRA}), or "
                          f"give a descriptor set (protoc --include_imports --descriptor_set_out=FILE.desc)")
    import subprocess
    import tempfile

    source = os.path.abspath(path)
    with tempfile.TemporaryDirectory(prefix="tfrlens-proto-") as tmp:
        out = os.path.join(tmp, "schema.desc")
        args = [sys.executable, "-m", "grpc_tools.protoc", "--include_imports", f"--descriptor_set_out={out}",
                *(f"-I{root}" for root in _import_roots(source, text)),
                *(f"-I{os.path.abspath(d)}" for d in include_dirs), source]
        try:
            done = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SchemaError(f"{label} does not compile: protoc did not run: {exc}") from None
        if done.returncode != 0:
            errors = _protoc_errors(done.stderr.decode("utf-8", "replace"))
            shown = "; ".join(errors[:3]) + (f"; … ({len(errors) - 3} more)" if len(errors) > 3 else "")
            raise SchemaError(f"{label} does not compile: {shown or f'protoc exit status {done.returncode}'}")
        with open(out, "rb") as f:
            return f.read()


def _protoc_errors(stderr: str) -> list[str]:
    """protoc's error lines (file:line:column: message), without its logging and warnings."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not _PROTOC_LOG.match(line)]
    errors = [line for line in lines if "warning:" not in line.lower()]
    return errors or lines


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- decoding


def _check_nesting(descriptor: Any, path: str) -> None:
    """Refuse a type whose message fields chain more than MAX_DEPTH types deep, before protobuf builds its
    classes: it recurses once per new type it meets, depth first (a chain of ~350 is a RecursionError)."""
    seen = {descriptor.full_name}
    stack = [iter(_linked_types(descriptor))]
    while stack:
        for sub in stack[-1]:
            if sub is not None and sub.full_name not in seen:
                seen.add(sub.full_name)
                stack.append(iter(_linked_types(sub)))
                if len(stack) > MAX_DEPTH:
                    raise SchemaError(
                        f"message nesting too deep in {os.path.basename(path) or path}: {descriptor.full_name} "
                        f"reaches {sub.full_name} in a chain of {len(stack)} message types, more than the "
                        f"{MAX_DEPTH} allowed")
                break
        else:
            stack.pop()


def _linked_types(descriptor: Any) -> list:
    """The types protobuf builds classes for with ``descriptor``'s: its message fields', then its extensions'."""
    linked = [field.message_type for field in descriptor.fields]
    for extension in descriptor.extensions:
        linked += [extension.containing_type, extension.message_type]
    return linked


def _reachable_types(descriptor: Any) -> list:
    """``descriptor`` and every message type its fields reach, each once."""
    seen: dict[str, Any] = {}
    pending = [descriptor]
    while pending:
        current = pending.pop()
        if current.full_name not in seen:
            seen[current.full_name] = current
            pending.extend(field.message_type for field in current.fields if field.message_type is not None)
    return list(seen.values())


def _message_fields_of(descriptor: Any) -> tuple:
    """``(field name, "single" | "repeated" | "map")`` for the fields of ``descriptor`` holding messages."""
    entries = []
    for field in descriptor.fields:
        sub = field.message_type
        if sub is None:
            continue
        if sub.GetOptions().map_entry:
            if sub.fields_by_name["value"].message_type is not None:
                entries.append((field.name, "map"))
        else:
            entries.append((field.name, "repeated" if is_repeated_field(field) else "single"))
    return tuple(entries)


def _has_no_unknown(message: Any, size: int) -> bool:
    """True when dropping unknown fields leaves all ``size`` bytes (cheap; counting walks the message).

    False also for an encoding protobuf does not write (unpacked repeated
    fields, ...) and for a message missing required fields: the caller counts then.
    """
    message.DiscardUnknownFields()
    try:
        return message.ByteSize() == size
    except EncodeError:
        return False


def _count_unknown(message: Any, nested: dict[str, tuple]) -> int:
    """Unknown fields in ``message`` and every message under it."""
    count = len(UnknownFieldSet(message))
    for name, shape in nested.get(message.DESCRIPTOR.full_name, ()):
        if shape == "single":
            if message.HasField(name):
                count += _count_unknown(getattr(message, name), nested)
        else:
            container = getattr(message, name)
            for sub in (container.values() if shape == "map" else container):
                count += _count_unknown(sub, nested)
    return count


_FIXED_SIZES = {1: 8, 5: 4}  # wire type -> bytes
_PACKED_WIDTHS = {1: 8, 6: 8, 16: 8, 2: 4, 7: 4, 15: 4}  # double, fixed64, sfixed64, float, fixed32, sfixed32
_PACKED_VARINTS = {3, 4, 5, 8, 13, 14, 17, 18}  # int64, uint64, int32, bool, uint32, enum, sint32, sint64
_MAX_FIELD_NUMBER = (1 << 29) - 1


class _WireCheck:
    """Finds the first thing in a record that is not a well-formed message of a type: why parsing failed.

    Walks the wire format, descending into fields the type says are messages,
    checking packed values and, in files that require it, UTF-8. Bounded by
    ``MAX_DEPTH`` and by the bytes present, so hostile input costs one pass.
    """

    def __init__(self, data: bytes, utf8_files: frozenset[str]):
        self.data = data
        self.utf8_files = utf8_files

    def problem(self, descriptor: Any) -> str | None:
        """What is wrong with the whole record as a ``descriptor``, or None if the walk finds nothing."""
        found = self.fields(descriptor, 0, len(self.data), 0, "")
        return found if isinstance(found, str) else None

    def fields(self, descriptor: Any, pos: int, end: int, depth: int, where: str,
               group: int = 0) -> str | int:
        """Walk the fields in ``data[pos:end]`` (of group ``group`` unless 0): a problem, or their end."""
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        data = self.data
        while pos < end:
            read = read_varint(data, pos)
            if read is None or read[1] > end:
                return f"truncated field tag at byte {pos}"
            tag, after = read
            number, wire_type = tag >> 3, tag & 7
            if number == 0 or number > _MAX_FIELD_NUMBER:
                return f"field number {number} at byte {pos}"
            if wire_type in (6, 7):
                return f"invalid wire type {wire_type} at byte {pos}"
            field = descriptor.fields_by_number.get(number) if descriptor is not None else None
            name = f"{where}{field.name if field is not None else number}"
            if wire_type == 0:
                read = read_varint(data, after)
                if read is None or read[1] > end:
                    return f"field {name} truncated at byte {after}"
                pos = read[1]
            elif wire_type in _FIXED_SIZES:
                pos = after + _FIXED_SIZES[wire_type]
                if pos > end:
                    return f"field {name} truncated at byte {after}"
            elif wire_type == 2:
                read = read_varint(data, after)
                if read is None or read[0] > end - read[1]:
                    return f"field {name} runs past the end of its message at byte {after}"
                start, pos = read[1], read[1] + read[0]
                problem = self.content(field, start, pos, depth, name) if field is not None else None
                if problem:
                    return problem
            elif wire_type == 3:
                inner = field.message_type if field is not None else None
                found = self.fields(inner, after, end, depth + 1, name + ".", group=number)
                if isinstance(found, str):
                    return found
                pos = found
            elif number == group:
                return after
            else:
                return f"end of group {number} that was never started, at byte {pos}"
        return f"group {where.rstrip('.')} is never closed" if group else pos

    def content(self, field: Any, start: int, end: int, depth: int, name: str) -> str | None:
        """What is wrong inside the length-delimited value of ``field``, if anything."""
        if field.type == field.TYPE_MESSAGE:
            found = self.fields(field.message_type, start, end, depth + 1, name + ".")
            return found if isinstance(found, str) else None
        if field.type == field.TYPE_STRING and field.containing_type.file.name in self.utf8_files:
            try:
                self.data[start:end].decode("utf-8")
            except UnicodeDecodeError:
                return f"field {name} is not valid UTF-8"
        if is_repeated_field(field):
            width = _PACKED_WIDTHS.get(field.type)
            if width and (end - start) % width:
                return f"field {name}: packed values cut short"
            if field.type in _PACKED_VARINTS:
                pos = start
                while pos < end:
                    read = read_varint(self.data, pos)
                    if read is None or read[1] > end:
                        return f"field {name}: packed values cut short"
                    pos = read[1]
        return None


def _utf8_files(types: list) -> frozenset[str]:
    """Files among those defining ``types`` whose strings must be UTF-8 (proto3 and editions)."""
    files = {t.file.name: t.file for t in types}
    return frozenset(name for name, file in files.items()
                     if descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb).syntax
                     in ("proto3", "editions"))
