"""Class names for integer class ids: Object Detection API label maps, JSON maps, TFDS name lists.

A label map gives each class id a name. :func:`load_label_map` reads one of
three forms, decided by the file's suffix, else by its content:

- **pbtxt** (``.pbtxt``, ``.pbtx``, ``.prototxt``, ``.textproto``, ``.txtpb``, or
  any file whose first line that is not blank or a ``#`` comment starts with
  ``item {`` / ``item:``): a ``StringIntLabelMap`` in protobuf text format, as
  the Object Detection API writes it, read with protobuf's own ``text_format``.
  An item's name is its ``display_name`` when it has one, else its ``name``;
  both find the id when a name is looked up. Fields this module does not
  declare are skipped.
- **JSON** (``.json``, or a file not ending in ``.txt`` that starts with ``{``
  or ``[``): ``{"1": "cat", ...}`` (ids as keys), a list of names (id = index),
  or a list of ``{"id": 1, "name": "cat", "display_name": "Cat"}`` objects.
- **names list** (anything else, e.g. TFDS ``*.labels.txt`` or a TFLite
  ``labelmap.txt``): one name per line, surrounding spaces stripped, blank lines
  skipped (as TFDS reads ``names_file``); the id is the line's position among
  the names, from 0.

Ids are kept as the file gives them (0 is often "background"; nothing is
renumbered). A map that does not load raises :class:`SchemaError` with one
line naming the file, the line and what is wrong.

:class:`LabelNames` says which feature keys carry class ids and the names of
each, so an OD label map and TFDS ``ClassLabel`` names share one interface;
:func:`label_keys` is the rule that picks class-id features by key.
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence, cast

from codec.errors import SchemaError

__all__ = ["LABEL_WORDS", "LabelMap", "LabelNames", "MAX_LABEL_MAP_BYTES", "find_label_map", "is_label_key",
           "label_keys", "load_label_map", "names_text", "LABEL_KEYS", "TEXT_KEYS", "record_label_key"]

MAX_LABEL_MAP_BYTES = 64 << 20  # the largest label maps in use (21k ImageNet classes) are a few MB
PBTXT_SUFFIXES = (".pbtxt", ".pbtx", ".prototxt", ".textproto", ".txtpb")
# The last part of a feature key (after the last '/'), case-folded, that marks it as holding class ids.
LABEL_WORDS = frozenset({
    "label", "labels", "label_id", "label_ids", "class", "classes", "class_id", "class_ids", "classid",
    "category", "categories", "category_id", "category_ids",
})
_PBTXT_START = re.compile(r"item\s*[{:]")
_PARSE_POSITION = re.compile(r"^\d+:\d+ : ")
_MAX_NESTING = 32  # messages nested in a label map; a hostile file could nest thousands deep
# Class ids are int64, as the features that hold them; a longer run of digits is not parsed at all.
_ID_RANGE = (-(1 << 63), (1 << 63) - 1)
_MAX_ID_DIGITS = 20
_LONG_TOKEN = re.compile(r"\S{41,}")


@dataclass(frozen=True)
class LabelMap:
    """Class ids and their names; treat the dicts as read-only.

    ``names``: id -> the name to show (display name, else name). ``aliases``:
    every name and display name, case-folded, -> the id it finds (a shown name
    always finds its own id; when two items share a spelling, the first in the
    file wins). ``spellings``: id -> each distinct name the file gives it.
    """

    names: dict[int, str]
    aliases: dict[str, int]
    path: Path | None = None
    spellings: dict[int, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    _all_ids: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built directly from names and aliases: derive what from_entries would have.
        if not self.spellings:
            object.__setattr__(self, "spellings", {i: (n,) for i, n in self.names.items()})
        if not self._all_ids:
            object.__setattr__(self, "_all_ids", {text: (i,) for text, i in self.aliases.items()})

    @classmethod
    def from_entries(cls, entries: Iterable[tuple[int, str, str]], path: str | os.PathLike | None = None
                     ) -> LabelMap:
        """A map from ``(id, name, display_name)`` triples ("" for an absent one); ids must be unique."""
        names: dict[int, str] = {}
        spellings: dict[int, tuple[str, ...]] = {}
        for id_, name, display in entries:
            shown = display or name
            if shown:
                names[id_] = shown
                spellings[id_] = tuple(dict.fromkeys(s for s in (display, name) if s))
        aliases: dict[str, int] = {}
        all_ids: dict[str, list[int]] = {}
        for id_, shown in names.items():
            aliases.setdefault(shown.casefold(), id_)
        for id_, texts in spellings.items():
            for text in texts:
                aliases.setdefault(text.casefold(), id_)
                ids = all_ids.setdefault(text.casefold(), [])
                if id_ not in ids:
                    ids.append(id_)
        return cls(names, aliases, Path(path) if path is not None else None, spellings,
                   {k: tuple(v) for k, v in all_ids.items()})

    @classmethod
    def from_names(cls, names: Sequence[str] | Mapping[int, str], path: str | os.PathLike | None = None
                   ) -> LabelMap:
        """A map from a list of names (id = position, as TFDS ``ClassLabel``) or an id -> name mapping."""
        items = names.items() if isinstance(names, Mapping) else enumerate(names)
        return cls.from_entries(((int(i), str(n), "") for i, n in items), path)

    def __len__(self) -> int:
        return len(self.names)

    def name(self, id_: int) -> str | None:
        """The name to show for class ``id_``, or None when the map has none."""
        return self.names.get(id_)

    def id_of(self, text: str) -> int | None:
        """The id a name or display name (any case) stands for, or None."""
        return self.aliases.get(text.casefold())

    def ids_of(self, text: str) -> tuple[int, ...]:
        """Every id with this name or display name (any case), in file order; () when none has it."""
        return self._all_ids.get(text.casefold(), ())

    def describe(self, limit: int = 20) -> str:
        """The names in id order for a message: ``'Cat' (1), 'Dog' (2), ... and 88 more``."""
        shown = [f"{n!r} ({i})" for i, n in sorted(self.names.items())[:limit]]
        more = len(self.names) - limit
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


class LabelNames:
    """Feature key -> :class:`LabelMap`: which features hold class ids, and their names.

    Keys are given (TFDS class labels, per feature), or picked by the
    :func:`label_keys` rule for one map that names them all (an Object
    Detection API label map, :meth:`for_map`): then any key the rule picks
    has its names, whichever records turn out to hold it.
    """

    __slots__ = ("_maps", "_default", "source")

    def __init__(self, maps: Mapping[str, LabelMap] | None = None, default: LabelMap | None = None,
                 source: str | None = None) -> None:
        self._maps = dict(maps or {})
        self._default = default
        self.source = source  # where the names come from, for a status line

    @classmethod
    def for_map(cls, label_map: LabelMap) -> LabelNames:
        """``label_map`` for every key :func:`label_keys` picks."""
        return cls(default=label_map, source=None if label_map.path is None else str(label_map.path))

    @classmethod
    def for_keys(cls, label_map: LabelMap, keys: Iterable[str]) -> LabelNames:
        """``label_map`` for each of ``keys`` (int64 feature keys) that :func:`label_keys` picks."""
        return cls(dict.fromkeys(label_keys(keys), label_map))

    @classmethod
    def from_lists(cls, lists: Mapping[str, Sequence[str]], source: str | None = None) -> LabelNames:
        """Names per key as TFDS ``ClassLabel`` gives them: a list whose index is the id."""
        return cls({key: LabelMap.from_names(names) for key, names in lists.items()}, source=source)

    def merged(self, other: LabelNames) -> LabelNames:
        """These names and ``other``'s; ``other`` wins for a key both have."""
        return LabelNames({**self._maps, **other._maps}, other._default or self._default,
                          other.source or self.source)

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys given by name (a rule-based map names more: see :meth:`get`)."""
        return tuple(self._maps)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __bool__(self) -> bool:
        return bool(self._maps) or self._default is not None

    def __repr__(self) -> str:
        return f"LabelNames({sorted(self._maps)!r}" + (", default" if self._default is not None else "") + ")"

    def get(self, key: str) -> LabelMap | None:
        found = self._maps.get(key)
        if found is None and self._default is not None and is_label_key(key):
            return self._default
        return found

    def name(self, key: str, id_: int) -> str | None:
        """The name of class ``id_`` of feature ``key``, or None."""
        found = self.get(key)
        return found.names.get(id_) if found is not None else None

    def id_of(self, key: str, text: str) -> int | None:
        """The id a name (any case) stands for in feature ``key``, or None."""
        found = self.get(key)
        return found.id_of(text) if found is not None else None

    def ids_of(self, key: str, text: str) -> tuple[int, ...]:
        found = self.get(key)
        return found.ids_of(text) if found is not None else ()

    def describe(self) -> str:
        """One line for ``info`` and the status bar: how many classes, for which features, from where."""
        if self._default is not None:
            what = f"{_classes(len(self._default))} for label features"
        else:
            what = ", ".join(f"{key} ({_classes(len(m))})" for key, m in self._maps.items())
        return what + (f", from {self.source}" if self.source else "")


def _classes(n: int) -> str:
    return f"{n} class" if n == 1 else f"{n} classes"


def is_label_key(key: str) -> bool:
    """Does ``key`` name class ids? Its last ``/``-separated part, any case, is one of :data:`LABEL_WORDS`."""
    return key.rsplit("/", 1)[-1].casefold() in LABEL_WORDS


def label_keys(keys: Iterable[str]) -> list[str]:
    """The keys among ``keys`` (give int64 features) that hold class ids, in order, each once.

    The rule: the part after the last ``/``, any case, is ``label``, ``labels``,
    ``class``, ``classes``, ``class_id(s)``, ``classid``, ``label_id(s)``,
    ``category``, ``categories`` or ``category_id(s)``. So ``label``,
    ``image/class/label`` and the Object Detection API's
    ``image/object/class/label`` are picked; ``image/object/class/text`` and
    ``label_count`` are not.
    """
    return [key for key in dict.fromkeys(keys) if is_label_key(key)]


LABEL_KEYS = ("image/class/label", "image/object/class/label")  # image-level first: a classifier's label
TEXT_KEYS = ("image/class/text", "image/object/class/text")


def record_label_key(types: Mapping[str, str], tfds_labels: Iterable[str] = ()) -> str | None:
    """The feature that is a record's label, from its keys and dtypes (``types``); None when none is.

    Object Detection API class ids first, then a TFDS dataset's class labels
    (``tfds_labels``), then the first int64 key :func:`label_keys` picks, then
    the Object Detection API class text. The check's label order and the
    embedding projection colour by it.
    """
    keys = set(types)
    ints = [k for k in sorted(keys) if types[k] == "int64"]
    return (next((k for k in LABEL_KEYS if k in keys), None) or next((k for k in tfds_labels if k in keys), None)
            or next(iter(label_keys(ints)), None) or next((k for k in TEXT_KEYS if k in keys), None))


def names_text(ids: Iterable[int], names: LabelMap | None, sep: str = ", ") -> str:
    """``1 (Cat), 2 (Dog), 7``: each id with its name when ``names`` has one (for captions and cells)."""
    if names is None:
        return sep.join(str(i) for i in ids)
    parts = []
    for i in ids:
        name = names.name(i)
        parts.append(f"{i} ({name})" if name is not None else str(i))
    return sep.join(parts)


def find_label_map(path: str | os.PathLike) -> Path | None:
    """The label map that goes with a data file or folder, or None.

    Looks in the folder ``path`` names, or the one holding the file ``path``
    names, for ``label_map.pbtxt``, else for the first ``*label_map*.pbtxt`` by
    name (e.g. ``mscoco_label_map.pbtxt``).
    """
    where = Path(path)
    folder = where if where.is_dir() else where.parent
    exact = folder / "label_map.pbtxt"
    if exact.is_file():
        return exact
    try:
        found = sorted(p for p in folder.glob("*label_map*.pbtxt") if p.is_file())
    except OSError:
        return None
    return found[0] if found else None


def load_label_map(path: str | os.PathLike) -> LabelMap:
    """Read a label map (pbtxt, JSON or names list; see the module's notes); raise :class:`SchemaError`."""
    where = Path(path)
    text = _read_text(where)
    form = _form(where, text)
    if form == "pbtxt":
        entries = _pbtxt_entries(where, text)
    elif form == "json":
        entries = _json_entries(where, text)
    else:
        entries = [(i, name, "") for i, name in enumerate(n.strip() for n in text.split("\n") if n.strip())]
    if not entries:
        raise SchemaError(f"label map {where}: no classes in it")
    _check_unique(where, entries)
    return LabelMap.from_entries(entries, where)


def _read_text(where: Path) -> str:
    try:
        with open(where, "rb") as f:
            data = f.read(MAX_LABEL_MAP_BYTES + 1)
    except FileNotFoundError:
        raise SchemaError(f"label map {where}: no such file") from None
    except IsADirectoryError:
        raise SchemaError(f"label map {where}: is a folder, not a file") from None
    except OSError as exc:
        raise SchemaError(f"label map {where}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_LABEL_MAP_BYTES:
        raise SchemaError(f"label map {where}: larger than {MAX_LABEL_MAP_BYTES >> 20} MB, not a label map")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SchemaError(f"label map {where}, line {line}: not UTF-8 text") from None


def _form(where: Path, text: str) -> str:
    suffix = where.suffix.casefold()
    if suffix in PBTXT_SUFFIXES:
        return "pbtxt"
    if suffix == ".json":
        return "json"
    for line in text.split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if _PBTXT_START.match(line):
            return "pbtxt"
        if line[0] in "{[" and suffix != ".txt":
            return "json"
        break
    return "names"


@functools.lru_cache(maxsize=1)
def _label_map_class() -> type:
    """``object_detection.protos.StringIntLabelMap`` (as in string_int_label_map.proto), in a private pool."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from codec.decode.example_proto import FIELD, REPEATED, add_field

    package = "object_detection.protos"
    file = descriptor_pb2.FileDescriptorProto(name="object_detection/protos/string_int_label_map.proto",
                                              package=package, syntax="proto2")
    frequency = file.enum_type.add(name="LVISFrequency")
    for number, name in enumerate(("UNSPECIFIED", "FREQUENT", "COMMON", "RARE")):
        frequency.value.add(name=name, number=number)
    item = file.message_type.add(name="StringIntLabelMapItem")
    add_field(item, "name", 1, FIELD.TYPE_STRING)
    add_field(item, "id", 2, FIELD.TYPE_INT32)
    add_field(item, "display_name", 3, FIELD.TYPE_STRING)
    keypoint = item.nested_type.add(name="KeypointMap")
    add_field(keypoint, "id", 1, FIELD.TYPE_INT32)
    add_field(keypoint, "label", 2, FIELD.TYPE_STRING)
    add_field(item, "keypoints", 4, FIELD.TYPE_MESSAGE, REPEATED, f".{package}.StringIntLabelMapItem.KeypointMap")
    add_field(item, "ancestor_ids", 5, FIELD.TYPE_INT32, REPEATED)
    add_field(item, "descendant_ids", 6, FIELD.TYPE_INT32, REPEATED)
    add_field(item, "frequency", 7, FIELD.TYPE_ENUM, type_name=f".{package}.LVISFrequency")
    add_field(item, "instance_count", 8, FIELD.TYPE_INT32)
    label_map = file.message_type.add(name="StringIntLabelMap")
    add_field(label_map, "item", 1, FIELD.TYPE_MESSAGE, REPEATED, f".{package}.StringIntLabelMapItem")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.StringIntLabelMap"))


def _depth_limit(text_format) -> dict:
    """``max_recursion_depth`` where text_format takes it (protobuf 7); before that, deep
    nesting ends in a RecursionError, which is caught all the same."""
    import inspect

    return {"max_recursion_depth": _MAX_NESTING} \
        if "max_recursion_depth" in inspect.signature(text_format.Parse).parameters else {}


def _pbtxt_entries(where: Path, text: str) -> list[tuple[int, str, str]]:
    from google.protobuf import text_format

    message = _label_map_class()()
    try:
        text_format.Parse(text, message, allow_unknown_field=True, **_depth_limit(text_format))
    except text_format.ParseError as exc:
        reason = _short(_PARSE_POSITION.sub("", str(exc)).rstrip("."))
        line, column = exc.GetLine(), exc.GetColumn()
        at = f", line {line} column {column}" if line is not None else ""
        raise SchemaError(f"label map {where}{at}: {reason}") from None
    except RecursionError:
        raise SchemaError(f"label map {where}: nested too deeply") from None
    entries = []
    for n, item in enumerate(message.item, start=1):
        shown = item.display_name or item.name
        if not item.HasField("id"):
            raise SchemaError(f"label map {where}: item {n}{f' {shown!r}' if shown else ''} has no id")
        if not shown:
            raise SchemaError(f"label map {where}: item {n} (id {item.id}) has neither name nor display_name")
        entries.append((item.id, item.name, item.display_name))
    return entries


def _json_entries(where: Path, text: str) -> list[tuple[int, str, str]]:
    def unique_keys(pairs: list[tuple[str, object]]) -> dict:
        seen: dict[str, object] = {}
        for key, item in pairs:
            if key in seen:
                raise SchemaError(f"label map {where}: key {key!r} is given twice, to {seen[key]!r} and {item!r}")
            seen[key] = item
        return seen

    try:
        value = json.loads(text, object_pairs_hook=unique_keys, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"label map {where}, line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise SchemaError(f"label map {where}: nested too deeply") from None
    what = 'expected {"1": "name", ...}, a list of names, or a list of {"id": 1, "name": "..."}'
    entries: list[tuple[int, str, str]]
    if isinstance(value, dict):
        entries = []
        for key, name in value.items():
            try:
                id_ = _json_int(key.strip())
            except ValueError:
                raise SchemaError(f"label map {where}: key {_short(repr(key))} is not a class id; {what}") from None
            _check_id(where, f"key {_short(repr(key))}", id_)
            if not isinstance(name, str):
                raise SchemaError(f"label map {where}: the name of id {id_} is not a string; {what}")
            entries.append((cast(int, id_), name, ""))  # _check_id refused a _LongNumber
        return entries
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [(i, name, "") for i, name in enumerate(value)]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        entries = []
        for n, item in enumerate(value, start=1):
            id_, name, display = item.get("id"), item.get("name") or "", item.get("display_name") or ""
            if isinstance(id_, (int, _LongNumber)) and not isinstance(id_, bool):
                _check_id(where, f"item {n}", id_)
            if not isinstance(id_, int) or isinstance(id_, bool) or not isinstance(name, str) \
                    or not isinstance(display, str) or not (name or display):
                raise SchemaError(f"label map {where}: item {n} needs an integer \"id\" and a string "
                                  "\"name\" or \"display_name\"")
            entries.append((id_, name, display))
        return entries
    raise SchemaError(f"label map {where}: {what}")


class _LongNumber(str):
    """A JSON integer of more digits than any int64, kept as its text (Python refuses past 4,300 digits)."""


def _json_int(text: str) -> int | _LongNumber:
    """A JSON integer (or an id key), left as text when it is longer than any int64 could be."""
    if len(text.lstrip("+-")) > _MAX_ID_DIGITS:
        if not text.lstrip("+-").isdigit():
            raise ValueError(text)
        return _LongNumber(text)
    return int(text)


def _check_id(where: Path, entry: str, id_: int | _LongNumber) -> None:
    """Refuse an id outside int64, the range of the features that hold class ids."""
    if isinstance(id_, _LongNumber) or not _ID_RANGE[0] <= id_ <= _ID_RANGE[1]:
        digits = len(str(id_).lstrip("+-"))
        raise SchemaError(f"label map {where}: {entry}: id of {digits:,} digits is out of range "
                          "(class ids are int64)")


def _short(text: str) -> str:
    """``text`` with each run of more than 40 non-blank characters cut, so a message stays one short line."""
    return _LONG_TOKEN.sub(lambda m: f"{m.group()[:20]}… ({len(m.group()):,} characters)", text)


def _check_unique(where: Path, entries: list[tuple[int, str, str]]) -> None:
    first: dict[int, tuple[int, str]] = {}
    for n, (id_, name, display) in enumerate(entries, start=1):
        shown = display or name
        if id_ in first:
            m, other = first[id_]
            raise SchemaError(f"label map {where}: id {id_} is given twice, to item {m} {other!r} and "
                              f"item {n} {shown!r}")
        first[id_] = (n, shown)
