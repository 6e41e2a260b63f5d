"""Views of a decoded user message: its JSON, its fields flattened by path, its tree.

All three show only the fields that are set (protobuf's presence rules: a
proto3 scalar at its default is absent unless it has explicit presence; a
oneof shows its chosen member). Map entries come in key order everywhere:
protobuf hands them out in hash order, which changes from run to run.
"""
from __future__ import annotations

import json
from typing import Any

from codec.decode.decoded import FlatValues, TreeNode
from codec.errors import PayloadDecodeError

__all__ = [
    "FIELD_TYPE_NAMES",
    "is_repeated_field",
    "is_required_field",
    "message_fields",
    "message_json",
    "message_tree",
]

# FieldDescriptor.TYPE_* -> the name .proto files use for it.
FIELD_TYPE_NAMES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
    9: "string", 10: "group", 11: "message", 12: "bytes", 13: "uint32", 14: "enum", 15: "sfixed32",
    16: "sfixed64", 17: "sint32", 18: "sint64",
}
_FLOAT_TYPES = {1, 2}
_TYPE_BOOL, _TYPE_STRING, _TYPE_BYTES, _TYPE_ENUM = 8, 9, 12, 14
_INT_KEY_TYPES = {3, 4, 5, 6, 7, 13, 15, 16, 17, 18}
_FLAT_SCALARS = {1: "double", 8: "bool", 14: "enum"}  # FieldDescriptor.TYPE_* -> FlatValues.scalar

_WRAPPERS = {
    "google.protobuf.DoubleValue": "double", "google.protobuf.FloatValue": "float",
    "google.protobuf.Int64Value": "int64", "google.protobuf.UInt64Value": "uint64",
    "google.protobuf.Int32Value": "int32", "google.protobuf.UInt32Value": "uint32",
    "google.protobuf.BoolValue": "bool", "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
}
_JSON_STRING_TYPES = {
    "google.protobuf.Timestamp": "timestamp", "google.protobuf.Duration": "duration",
    "google.protobuf.FieldMask": "field_mask",
}
_STRUCT_TYPES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
_ANY = "google.protobuf.Any"
# Well-known types whose JSON is not an object of their fields: inside an Any they sit under "value".
_SPECIAL_JSON = set(_WRAPPERS) | set(_JSON_STRING_TYPES) | _STRUCT_TYPES | {_ANY}


# ---------------------------------------------------------------- JSON


def message_json(message: Any) -> dict:
    """protobuf's JSON mapping of ``message`` with ``MessageToDict``'s defaults, map entries in key order.

    camelCase names, 64-bit integers as strings, enums by name, Timestamp as
    RFC 3339, default-valued fields left out: what the Example output uses.
    Raises :class:`PayloadDecodeError` for a message JSON cannot express (a
    Timestamp out of range, an Any of a type the schema does not hold).
    """
    from google.protobuf.json_format import Error, MessageToDict  # slow to import; not needed for Examples
    from google.protobuf.message import Error as ProtobufError

    pool = message.DESCRIPTOR.file.pool
    try:
        value = MessageToDict(message, descriptor_pool=pool)
    except (Error, ProtobufError, TypeError, ValueError, KeyError, RecursionError) as exc:
        raise PayloadDecodeError(
            f"{message.DESCRIPTOR.full_name} has no JSON form: {' '.join(str(exc).split())}") from None
    return _sorted_json(value, message.DESCRIPTOR, pool)


def _sorted_json(value: Any, descriptor: Any, pool: Any) -> Any:
    """``value`` (the JSON of a ``descriptor`` message) with every map's entries in key order."""
    full_name = descriptor.full_name
    if full_name in _STRUCT_TYPES:
        return _sorted_struct(value)
    if not isinstance(value, dict):
        return value
    if full_name == _ANY:
        packed = _any_descriptor(value.get("@type", ""), pool)
        if packed is None:
            return value
        if packed.full_name in _SPECIAL_JSON:
            if "value" in value:
                value["value"] = _sorted_json(value["value"], packed, pool)
            return value
        return _sorted_json(value, packed, pool)
    for field in descriptor.fields:
        key = field.json_name
        sub = field.message_type
        if sub is None or key not in value:
            continue
        if sub.GetOptions().map_entry:
            key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
            entries = sorted(value[key].items(), key=lambda item: _json_key_order(item[0], key_field))
            if value_field.message_type is not None:
                entries = [(k, _sorted_json(v, value_field.message_type, pool)) for k, v in entries]
            value[key] = dict(entries)
        elif is_repeated_field(field):
            value[key] = [_sorted_json(item, sub, pool) for item in value[key]]
        else:
            value[key] = _sorted_json(value[key], sub, pool)
    return value


def _sorted_struct(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_struct(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_struct(item) for item in value]
    return value


def _json_key_order(key: str, key_field: Any) -> tuple:
    """Map keys in the order of their type: numbers by value, false before true, strings as text."""
    if key_field.type in _INT_KEY_TYPES:
        try:
            return (0, int(key), "")
        except ValueError:
            return (1, 0, key)
    return (0, 0, key)


def _any_descriptor(type_url: str, pool: Any) -> Any:
    try:
        return pool.FindMessageTypeByName(type_url.rsplit("/", 1)[-1])
    except KeyError:
        return None


# ---------------------------------------------------------------- flat fields


def message_fields(message: Any) -> dict[str, tuple[str, list]]:
    """The message's set fields flattened by dotted path, for statistics, schema, filters and CSV.

    Keys are proto field names (``boxes.xmin``, ``captured_at.seconds``, a map
    as ``scores.<key>``); values of repeated messages are concatenated. Each
    value is a :class:`codec.decode.payloads.FlatValues`, exact: dtype "int64" (every
    integer type as Python ints, uint64 up to 2**64 - 1; bools as Python
    bools, scalar "bool"), "float" (float as its float32 value, double as
    float64 with scalar "double") or "bytes" (strings as UTF-8, bytes, enums
    by name with scalar "enum" and their numbers).
    """
    out: dict[str, tuple[str, list]] = {}
    _collect(message, "", out)
    return out


def _collect(message: Any, prefix: str, out: dict[str, tuple[str, list]]) -> None:
    for field, value in _set_fields(message):
        name = prefix + _field_name(field)
        sub = field.message_type
        if sub is not None and sub.GetOptions().map_entry:
            value_field = sub.fields_by_name["value"]
            for key, item in _map_items(message, field, value):
                entry = f"{name}.{_key_text(key)}"
                if value_field.message_type is not None:
                    _collect(item, entry + ".", out)
                else:
                    _add(out, entry, value_field, [item])
        elif sub is not None:
            for item in (value if is_repeated_field(field) else [value]):
                _collect(item, name + ".", out)
        else:
            _add(out, name, field, list(value) if is_repeated_field(field) else [value])


def _add(out: dict[str, tuple[str, list]], name: str, field: Any, values: list) -> None:
    numbers = None
    if field.type in _FLOAT_TYPES:
        dtype, converted = "float", [float(v) for v in values]
    elif field.type == _TYPE_ENUM:
        dtype, converted = "bytes", [_enum_name(field, v).encode("utf-8") for v in values]
        numbers = [int(v) for v in values]
    elif field.type in (_TYPE_STRING, _TYPE_BYTES):
        dtype, converted = "bytes", [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    elif field.type == _TYPE_BOOL:
        dtype, converted = "int64", [bool(v) for v in values]
    else:
        dtype, converted = "int64", [int(v) for v in values]
    held = out.get(name)
    if held is not None:
        held[1].extend(converted)
        if numbers is not None:
            held.numbers.extend(numbers)
    else:
        out[name] = FlatValues(dtype, converted, _FLAT_SCALARS.get(field.type), numbers)


# ---------------------------------------------------------------- tree


def message_tree(message: Any) -> TreeNode:
    """The message as a tree: root role "message" named by its full type name, fields in number order.

    Scalars are "field" leaves (dtype = the proto type name, enums by name);
    messages are "message" nodes, repeated messages a "repeated" node with
    "[i]" children, maps a "map" node with children named by key in key order.
    Timestamp, Duration, FieldMask and the wrappers show as values.
    """
    descriptor = message.DESCRIPTOR
    return TreeNode(name=descriptor.full_name, role="message", dtype=descriptor.full_name,
                    children=_children(message, ()), path=())


def _children(message: Any, path: tuple) -> list[TreeNode]:
    return [_field_node(message, field, value, path + (_field_name(field),))
            for field, value in _set_fields(message)]


def _field_node(message: Any, field: Any, value: Any, path: tuple) -> TreeNode:
    name = path[-1]
    sub = field.message_type
    if sub is None:
        values = list(value) if is_repeated_field(field) else [value]
        return TreeNode(name=name, role="field", dtype=FIELD_TYPE_NAMES.get(field.type),
                        values=[_leaf_value(field, v) for v in values], path=path)
    if sub.GetOptions().map_entry:
        key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
        children = [_map_child(key, item, value_field, path + (key,))
                    for key, item in _map_items(message, field, value)]
        type_name = f"map<{FIELD_TYPE_NAMES[key_field.type]}, {_type_label(value_field)}>"
        return TreeNode(name=name, role="map", dtype=type_name, children=children, path=path)
    if not is_repeated_field(field):
        return _message_node(name, value, path)
    shown = [_well_known_value(item) for item in value]
    if shown and all(item is not None for item in shown):
        return TreeNode(name=name, role="field", dtype=shown[0][0], values=[v for _, v in shown], path=path)
    children = [_message_node(f"[{i}]", item, path + (i,)) for i, item in enumerate(value)]
    return TreeNode(name=name, role="repeated", dtype=sub.full_name, children=children, path=path)


def _map_child(key: Any, value: Any, value_field: Any, path: tuple) -> TreeNode:
    name = _key_text(key)
    if value_field.message_type is not None:
        return _message_node(name, value, path)
    return TreeNode(name=name, role="field", dtype=FIELD_TYPE_NAMES.get(value_field.type),
                    values=[_leaf_value(value_field, value)], path=path)


def _message_node(name: str, message: Any, path: tuple) -> TreeNode:
    shown = _well_known_value(message)
    if shown is not None:
        return TreeNode(name=name, role="field", dtype=shown[0], values=[shown[1]], path=path)
    descriptor = message.DESCRIPTOR
    if descriptor.full_name == _ANY:
        packed = _any_descriptor(message.type_url, descriptor.file.pool)
        if packed is not None:
            from google.protobuf import message_factory

            inner = message_factory.GetMessageClass(packed)()
            if _unpacked(message, inner):
                type_url = TreeNode(name="@type", role="field", dtype="string", values=[message.type_url],
                                    path=path + ("@type",))
                return TreeNode(name=name, role="message", dtype=packed.full_name,
                                children=[type_url, *_children(inner, path)], path=path)
    return TreeNode(name=name, role="message", dtype=descriptor.full_name,
                    children=_children(message, path), path=path)


def _unpacked(any_message: Any, inner: Any) -> bool:
    """Unpack an Any into ``inner``; False when its bytes are not that type."""
    from google.protobuf.message import DecodeError

    try:
        return any_message.Unpack(inner)
    except (DecodeError, RuntimeError, ValueError):
        return False


def _well_known_value(message: Any) -> tuple[str, Any] | None:
    """``(dtype, value)`` for a well-known type shown as one value; None otherwise (or if invalid)."""
    full_name = message.DESCRIPTOR.full_name
    if full_name in _WRAPPERS:
        return _WRAPPERS[full_name], message.value
    if full_name in _JSON_STRING_TYPES:
        try:
            return _JSON_STRING_TYPES[full_name], message.ToJsonString()
        except (ValueError, TypeError, OverflowError):
            return None
    if full_name in _STRUCT_TYPES:
        try:
            return "json", json.dumps(message_json(message), sort_keys=True, ensure_ascii=False)
        except PayloadDecodeError:
            return None
    return None


# ---------------------------------------------------------------- helpers


def _set_fields(message: Any) -> list[tuple[Any, Any]]:
    """The fields that are set, with their values, in field-number order (extensions included)."""
    return sorted(message.ListFields(), key=lambda item: item[0].number)


def _field_name(field: Any) -> str:
    return f"[{field.full_name}]" if field.is_extension else field.name


def is_repeated_field(field: Any) -> bool:
    """True for a repeated field (maps too)."""
    repeated = getattr(field, "is_repeated", None)  # protobuf < 5.29 has only ``label``
    return repeated if repeated is not None else field.label == field.LABEL_REPEATED


def is_required_field(field: Any) -> bool:
    """True for a proto2 ``required`` field."""
    required = getattr(field, "is_required", None)
    return required if required is not None else field.label == field.LABEL_REQUIRED


def _type_label(field: Any) -> str:
    return field.message_type.full_name if field.message_type is not None else FIELD_TYPE_NAMES[field.type]


def _leaf_value(field: Any, value: Any) -> Any:
    return _enum_name(field, value) if field.type == _TYPE_ENUM else value


def _enum_name(field: Any, number: int) -> str:
    """An enum value's name; the number as text for a value the schema does not name (open enums)."""
    found = field.enum_type.values_by_number.get(number)
    return found.name if found is not None else str(number)


def _map_items(message: Any, field: Any, container: Any) -> list[tuple[Any, Any]]:
    """A map's entries in key order (typed keys sort by value, so 10 comes after 9).

    proto2 keeps a string key that is not UTF-8 as bytes, which the map then
    cannot look up: such maps are read from their wire form, as entry messages.
    """
    try:
        items = list(container.items())
    except UnicodeDecodeError:
        items = _entries_from_wire(message, field)
    return sorted(items, key=lambda item: (isinstance(item[0], bytes), item[0]))


def _entries_from_wire(message: Any, field: Any) -> list[tuple[Any, Any]]:
    from google.protobuf import message_factory

    from codec.decode.decoded import read_varint

    alone = type(message)()
    alone.MergeFrom(message)
    for other, _ in alone.ListFields():
        if other is not field:
            alone.ClearField(other.name)
    alone.DiscardUnknownFields()
    data = alone.SerializePartialToString()  # only ``tag length entry`` for each entry of the map
    entry_class = message_factory.GetMessageClass(field.message_type)
    items, pos = [], 0
    while pos < len(data):
        tag = read_varint(data, pos)
        length = read_varint(data, tag[1]) if tag else None
        if length is None:
            break
        start, pos = length[1], length[1] + length[0]
        entry = entry_class.FromString(data[start:pos])
        items.append((entry.key, entry.value))
    return items


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, bytes):
        return key.decode("utf-8", "backslashreplace")
    return str(key)
