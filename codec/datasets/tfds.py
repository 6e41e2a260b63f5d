"""TFDS dataset folders: ``features.json`` and ``dataset_info.json`` beside shards named
``NAME-SPLIT.tfrecord-00000-of-00004``, read without TensorFlow or tensorflow_datasets.

:class:`TfdsDataset` gives the name, version, splits (their shards and example
counts) and the feature spec; its :class:`TfdsPayload` decodes each record per
that spec (see :mod:`codec.datasets.tfds_features`): images to pixels, class ids with
their names, tensors of raw and ZLIB encodings to arrays, text to strings.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codec.datasets.tfds_features import (
    FeatureSpec,
    FeatureValue,
    Leaf,
    decode_features,
    feature_json,
    flat_values,
    parse_spec,
)
from codec.datasets.tfds_features import leaves as spec_leaves
from codec.decode.decoder import DecodedRecord, RecordKind, TreeNode, decode_record
from codec.decode.payload_defaults import PayloadDefaults
from codec.errors import SchemaError, UsageError

__all__ = ["TfdsDataset", "TfdsPayload", "TfdsSplit", "boxes", "decoded_image", "encoded_tensors", "find_tfds_dir",
           "with_decoded_tensors"]

FEATURES_FILE = "features.json"
INFO_FILE = "dataset_info.json"
_DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
_SHARD = re.compile(r"-(\d{5})-of-(\d{5})$")
MAX_METADATA_BYTES = 16 << 20  # dataset_info.json and features.json: a real one is a few KB to a few MB


def find_tfds_dir(path: str | os.PathLike) -> Path | None:
    """The dataset folder when ``path`` is a folder holding ``features.json`` or ``dataset_info.json``,
    or a file inside one; else None."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if (folder / FEATURES_FILE).is_file() or (folder / INFO_FILE).is_file():
        return folder
    return None


def dataset_title(path: str | os.PathLike) -> str | None:
    """``mnist 1.2.0`` for a TFDS dataset folder (its name and version, as :class:`TfdsDataset` says them); None
    for any other path. Reads the small ``dataset_info.json`` only (no feature spec, no listing)."""
    folder = Path(path)
    if not folder.is_dir() or find_tfds_dir(folder) != folder:
        return None
    info: Any = {}
    if (folder / INFO_FILE).is_file():
        try:
            info = _read_json(folder / INFO_FILE)
        except SchemaError:
            info = {}
    return " ".join(_name_version(folder, info if isinstance(info, dict) else {}))


def _name_version(folder: Path, info: dict) -> tuple[str, str]:
    """A dataset's name and version: its ``dataset_info.json``'s, else its folders' (``NAME/VERSION/``)."""
    return str(info.get("name") or folder.parent.name), str(info.get("version") or folder.name)


@dataclass
class TfdsSplit:
    """One split: its shard files in shard order, and what ``dataset_info.json`` says it holds."""

    name: str
    files: list[Path] = field(default_factory=list)
    num_examples: int | None = None
    num_bytes: int | None = None
    shard_lengths: list[int] = field(default_factory=list)


def _read_json(path: Path) -> Any:
    """The JSON in ``path``; SchemaError (one line) for one that is unreadable, over
    :data:`MAX_METADATA_BYTES`, or not JSON."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_METADATA_BYTES + 1)
        if len(raw) > MAX_METADATA_BYTES:
            raise SchemaError(f"{path} is larger than {MAX_METADATA_BYTES >> 20} MiB: not read "
                              "(a dataset's metadata is a few kilobytes)")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read {path}: {exc}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SchemaError(f"{path} is not JSON: {exc}") from None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class TfdsDataset:
    """A TFDS dataset folder (``~/tensorflow_datasets/NAME/VERSION/``)."""

    def __init__(self, folder: Path, info: dict, spec: FeatureSpec | None) -> None:
        self.folder = folder
        self.info = info
        self.features = spec
        self.name, self.version = _name_version(folder, info)
        self.file_format = str(info.get("fileFormat") or "tfrecord")
        self.splits: dict[str, TfdsSplit] = {}
        # A listed split's files by its own template with its name filled in; any other split's
        # by the templates with the split left open (the default one last).
        self._listed, self._open = _Patterns(), _Patterns()
        entries = [e for e in info.get("splits") or [] if isinstance(e, dict) and e.get("name")]
        for entry in entries:
            template = str(entry.get("filepathTemplate") or _DEFAULT_TEMPLATE)
            self._listed.add(self._pattern(template, str(entry["name"])))
            self._open.add(self._pattern(template))
        self._open.add(self._pattern(_DEFAULT_TEMPLATE))
        by_split = self._files_by_split(entries)
        for entry in entries:
            self._add_split(entry, by_split)
        for split in sorted(set(by_split) - set(self.splits)):
            self.splits[split] = TfdsSplit(split, files=by_split[split])
        self._leaves = spec_leaves(spec) if spec is not None else []
        for leaf in self._leaves:
            if leaf.spec.kind == "class_label" and leaf.spec.names is None:
                leaf.spec.names = self._names_file(leaf.key)

    @classmethod
    def open(cls, folder: str | os.PathLike) -> TfdsDataset:
        """Read ``folder``'s ``dataset_info.json`` and ``features.json``; SchemaError (one line) for one
        that is not JSON or not a feature spec, UsageError for a folder that is not a TFDS dataset."""
        found = find_tfds_dir(folder)
        if found is None:
            raise UsageError(f"not a TFDS dataset folder (no {FEATURES_FILE} or {INFO_FILE}): {folder}")
        info = _read_json(found / INFO_FILE) if (found / INFO_FILE).is_file() else {}
        if not isinstance(info, dict):
            raise SchemaError(f"{found / INFO_FILE} is not a JSON object")
        spec = None
        if (found / FEATURES_FILE).is_file():
            spec = parse_spec(_read_json(found / FEATURES_FILE))
            if spec.kind != "dict":
                raise SchemaError(f"{found / FEATURES_FILE}: the top level is {spec.type_name}, "
                                  "not a FeaturesDict")
        return cls(found, info, spec)

    # ------------------------------------------------------------ splits

    def _pattern(self, template: str, split: str | None = None) -> _Template:
        """``template`` as a regex over file names: of the split ``split``, or (None) of any split."""
        parts = re.split(r"(\{[A-Z_]+\})", template)
        literal = {"{DATASET}": self.name, "{FILEFORMAT}": self.file_format}
        fields = {"{SPLIT}": r"(?P<split>[^/]+?)", "{SHARD_X_OF_Y}": r"\d{5}-of-\d{5}",
                  "{SHARD_INDEX}": r"\d+", "{NUM_SHARDS}": r"\d+"}
        if split is not None:
            literal["{SPLIT}"] = split
            del fields["{SPLIT}"]
        pieces = [literal.get(p, p) if p not in fields else None for p in parts]
        prefix = "".join(_until_none(pieces))
        suffix = "".join(reversed(_until_none(reversed(pieces))))
        regex = "".join(fields[p] if p in fields else re.escape(literal.get(p, p)) for p in parts) + "$"
        return _Template(regex, prefix, suffix, split)

    def _add_split(self, entry: dict, by_split: dict[str, list[Path]]) -> None:
        name = str(entry["name"])
        lengths = [n for n in (_int(v) for v in entry.get("shardLengths") or []) if n is not None]
        examples = sum(lengths) if lengths else _int((entry.get("statistics") or {}).get("numExamples"))
        self.splits[name] = TfdsSplit(name, files=by_split.get(name, []), num_examples=examples,
                                      num_bytes=_int(entry.get("numBytes")), shard_lengths=lengths)

    def _files_by_split(self, entries: list[dict]) -> dict[str, list[Path]]:
        """Every file of the folder under the split its name gives, in shard order: one listing,
        each name looked up once (3,000 splits of 21 shards are not 3,000 listings), first among
        the names the listed splits' shards have, as TFDS names them, then by the templates."""
        with os.scandir(self.folder) as listing:
            files = [(e.name, e.is_file()) for e in listing]
        named = self._shard_names(entries, budget=2 * len(files) + 1000)
        found: dict[str, list[str]] = {}
        for name, is_file in files:
            split = named.get(name) or self._listed.split_of(name) or self._open.split_of(name)
            if split is not None and is_file:
                found.setdefault(split, []).append(name)
        folder = self.folder
        return {split: [folder / name for name in sorted(names, key=_shard_order)] for split, names in found.items()}

    def _shard_names(self, entries: list[dict], budget: int) -> dict[str, str]:
        """File name -> split for the shards of listed splits whose shard count is known, named
        from their templates as TFDS formats them (``{SHARD_X_OF_Y}``: ``00003-of-00021``); no
        more than ``budget`` names (counts are the metadata's word, not the folder's)."""
        names: dict[str, str] = {}
        for entry in entries:
            split, count = str(entry["name"]), len(entry.get("shardLengths") or [])
            budget -= count
            if budget < 0:
                break
            parts = re.split(r"(\{[A-Z_]+\})", str(entry.get("filepathTemplate") or _DEFAULT_TEMPLATE))
            values = {"{DATASET}": self.name, "{SPLIT}": split, "{FILEFORMAT}": self.file_format,
                      "{NUM_SHARDS}": f"{count:05d}", "{SHARD_X_OF_Y}": "{0:05d}-of-%05d" % count,
                      "{SHARD_INDEX}": "{0:05d}"}
            shard = {"{SHARD_X_OF_Y}", "{SHARD_INDEX}"}
            form = "".join(values[p] if p in shard else values.get(p, p).replace("{", "{{").replace("}", "}}")
                           for p in parts)
            for i in range(count):
                names.setdefault(form.format(i), split)
        return names

    def split_of(self, path: str | os.PathLike) -> str | None:
        """The split a shard belongs to, by its name (``NAME-SPLIT.tfrecord-00000-of-00004``)."""
        name = Path(path).name
        return self._listed.split_of(name) or self._open.split_of(name)

    def shard_examples(self, path: str | os.PathLike) -> int | None:
        """How many examples ``dataset_info.json`` says the shard at ``path`` holds (None if it does not say)."""
        split = self.splits.get(self.split_of(path) or "")
        index = _shard_index(Path(path))
        if split is None or index is None or index >= len(split.shard_lengths):
            return None
        return split.shard_lengths[index]

    def check_counts(self, counts: dict[str, int]) -> list[str]:
        """One line per split whose records counted in its shards differ from ``dataset_info.json``."""
        lines = []
        for name, counted in sorted(counts.items()):
            split = self.splits.get(name)
            if split is None or split.num_examples is None:
                lines.append(f"split {name!r}: {counted} records, but {INFO_FILE} does not list it")
            elif counted != split.num_examples:
                lines.append(f"split {name!r}: {counted} records in its shards, "
                             f"{INFO_FILE} says {split.num_examples}")
        return lines

    # ------------------------------------------------------------ names and text

    def _names_file(self, key: str) -> list[str] | None:
        """ClassLabel names from ``<key, / as ->.labels.txt`` (class_label_feature.py ``save_metadata``)."""
        path = self.folder / f"{key.replace('/', '-')}.labels.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return [line.strip() for line in text.split("\n") if line.strip()]

    def class_names(self, key: str) -> list[str] | None:
        """The names of class label ``key`` (a flattened key such as ``objects/label``), None if unknown."""
        for leaf in self._leaves:
            if leaf.key == key and leaf.spec.kind == "class_label":
                return list(leaf.spec.names) if leaf.spec.names is not None else None
        return None

    @property
    def supervised_keys(self) -> tuple[str, ...] | None:
        """``as_supervised`` keys from ``dataset_info.json`` (``("image", "label")``), None when absent."""
        keys = self.info.get("supervisedKeys")
        if not isinstance(keys, dict):
            return None
        items = (keys.get("tuple") or {}).get("items") if "tuple" in keys else None
        if items is not None:
            return tuple(str(i.get("featureKey", "")) for i in items if isinstance(i, dict))
        if "input" in keys and "output" in keys:
            return str(keys["input"]), str(keys["output"])
        return None

    def payload(self) -> TfdsPayload:
        """The decoder of this dataset's records."""
        return TfdsPayload(self)

    def payload_label_names(self) -> dict[str, list[str]]:
        """Class names by feature key, for every class label that has names."""
        return self.payload().label_names()

    def describe(self) -> list[str]:
        """Lines for ``tfrlens-cli info``: the dataset, its splits and its features."""
        lines = [f"tfds:        {self.name} {self.version} ({self.folder})"]
        for split in self.splits.values():
            count = "?" if split.num_examples is None else str(split.num_examples)
            shards = len(split.files)
            lines.append(f"split:       {split.name}: {count} examples in {shards} shard{'s' * (shards != 1)}")
        for leaf in self._leaves:
            where = " in a Sequence" if leaf.depth else ""
            lines.append(f"feature:     {leaf.key}: {leaf.spec.describe()}{where}")
        if self.supervised_keys:
            lines.append(f"supervised:  ({', '.join(self.supervised_keys)})")
        return lines

    @property
    def leaves(self) -> list[Leaf]:
        return list(self._leaves)


@dataclass(frozen=True)
class _Template:
    """A split's file name template as a regex, with the literal text it must start and end with;
    ``split``: the one split it names (None: the regex's ``split`` group says)."""

    regex: str
    prefix: str
    suffix: str
    split: str | None = None


def _until_none(pieces) -> list[str]:
    out = []
    for piece in pieces:
        if piece is None:
            break
        out.append(piece)
    return out


class _Patterns:
    """The splits' file name templates, tried in order: the first that matches a name gives its split.

    Each is filed under its literal prefix and suffix, so a name is matched only against the
    templates whose literal ends it has (``dataset_info.json`` may list thousands of splits,
    each with its own ``filepathTemplate``), not against all of them.
    """

    def __init__(self) -> None:
        self._order: dict[str, int] = {}
        self._by_prefix: dict[str, dict[str, list[tuple[int, str, str | None]]]] = {}
        self._compiled: dict[str, re.Pattern] = {}  # compiled when a name first needs it
        self._prefix_lengths: set[int] = set()

    def add(self, template: _Template) -> None:
        """File ``template`` after those added before; one that names no split once is left out."""
        if template.regex in self._order or template.regex.count("(?P<split>") != (template.split is None):
            return
        order = self._order[template.regex] = len(self._order)
        suffixes = self._by_prefix.setdefault(template.prefix, {})
        suffixes.setdefault(template.suffix, []).append((order, template.regex, template.split))
        self._prefix_lengths.add(len(template.prefix))

    def split_of(self, name: str) -> str | None:
        candidates: list[tuple[int, str, str | None]] = []
        for n in self._prefix_lengths:
            suffixes = self._by_prefix.get(name[:n]) if n <= len(name) else None
            if suffixes is None:
                continue
            if len(suffixes) > len(name):  # as many lookups as the name is long, at most
                for k in range(len(name) - n + 1):
                    candidates += suffixes.get(name[len(name) - k:] if k else "", ())
            else:
                for suffix, patterns in suffixes.items():
                    if name.endswith(suffix):
                        candidates += patterns
        for _, regex, split in sorted(candidates, key=lambda c: c[0]):
            pattern = self._compiled.get(regex)
            if pattern is None:
                pattern = self._compiled[regex] = re.compile(regex)
            match = pattern.match(name)
            if match:
                return split or match.group("split")
        return None


def _shard_index(path: Path) -> int | None:
    match = _SHARD.search(path.name)
    return int(match.group(1)) if match else None


def _shard_order(name: str) -> tuple[int, str]:
    """Files of a split in shard order (``-00003-of-00021``), then by name."""
    match = _SHARD.search(name)
    return (int(match.group(1)) if match else -1, name)


class TfdsPayload(PayloadDefaults):
    """Decodes a TFDS dataset's records per its feature spec (a :class:`codec.decode.payloads.Payload`)."""

    def __init__(self, dataset: TfdsDataset) -> None:
        self.dataset = dataset
        self.name = f"TFDS {dataset.name} {dataset.version}"
        self._leaves = dataset.leaves

    def decode(self, data: bytes) -> DecodedRecord:
        """The Example, with ``value`` = its features by flattened key (:class:`FeatureValue`) and ``note``
        for features that do not decode per the spec; never raises. Not an Example: RAW with a note."""
        data = bytes(data)
        decoded = decode_record(data)
        if decoded.kind is not RecordKind.EXAMPLE:
            return DecodedRecord(RecordKind.RAW, data,
                                 note=f"not a tf.train.Example (read as {decoded.kind.value}), as TFDS writes")
        features = decoded.message.features.feature
        values, notes = decode_features(features, self._leaves)
        decoded.value = values
        decoded.note = "; ".join(notes) if notes else None
        decoded.fields = lambda: self.features_flat(decoded)
        decoded.boxes = lambda: boxes(decoded)
        if any(leaf.spec.kind == "audio" for leaf in self._leaves):
            decoded.audio = lambda: audio_refs(decoded)
        return decoded

    def line_extras(self, decoded: DecodedRecord, path: str | None) -> dict:
        """What a ``cat --json`` line of this dataset adds: the record's ``split`` (from its shard's name)
        and its ``features`` decoded per the spec."""
        split = self.dataset.split_of(path) if path is not None else None
        return {"split": split, "features": self.features_json(decoded)}

    def features_json(self, decoded: DecodedRecord) -> dict:
        """The ``"features"`` object of a ``cat --json`` line (empty for a record that is not an Example)."""
        values = decoded.value if isinstance(decoded.value, dict) else {}
        return {key: feature_json(value) for key, value in sorted(values.items())}

    def features_flat(self, decoded: DecodedRecord) -> dict[str, tuple[str, list]]:
        """key -> ("int64" | "float" | "bytes", values) for statistics, filters and CSV; class labels as
        ids, images as their stored bytes, Example keys outside the spec as they are."""
        values = decoded.value if isinstance(decoded.value, dict) else {}
        out: dict[str, tuple[str, list]] = {}
        for value in values.values():
            out.update(flat_values(value))
        if decoded.message is not None:
            from codec.decode.decoder import feature_values

            features = decoded.message.features.feature
            known = {k for v in values.values() for k in _keys_of(v)}
            for key in sorted(features):
                if key not in out and key not in known:
                    dtype, items = feature_values(features[key])
                    out[key] = (dtype or "bytes", items)
        return dict(sorted(out.items()))

    def label_names(self) -> dict[str, list[str]]:
        """Feature key -> class names, for class labels whose names are known (``objects/label``...)."""
        return {leaf.key: list(leaf.spec.names) for leaf in self._leaves
                if leaf.spec.kind == "class_label" and leaf.spec.names}

    def image_keys(self) -> list[str]:
        """Keys of Image features (in a Sequence too), in key order."""
        return [leaf.key for leaf in self._leaves if leaf.spec.kind == "image"]

    def bbox_keys(self) -> dict[str, str]:
        """Keys of BBoxFeatures and their format (``REL_YXYX``...)."""
        return {leaf.key: leaf.spec.bbox_format for leaf in self._leaves if leaf.spec.kind == "bbox"}


def audio_refs(decoded: DecodedRecord) -> list:
    """The record's Audio features as :class:`codec.decode.audio.AudioRef` values: the samples as decoded,
    frames × channels, at the spec's sample rate (a ``problem`` when the spec gives none or the samples
    do not decode per the spec)."""
    from codec.decode.audio import MAX_RATE, AudioRef, pcm_ref

    values = decoded.value if isinstance(decoded.value, dict) else {}
    refs = []
    for key, value in sorted(values.items()):
        spec = value.leaf.spec
        if spec.kind != "audio" or value.leaf.depth:
            continue
        codec = "pcm_float" if spec.dtype.startswith(("float", "bfloat")) else "pcm_int16"
        if value.note is not None or value.array is None or value.array.ndim not in (1, 2):
            why = value.note or f"{key!r}: samples of shape {list(getattr(value.array, 'shape', []))}"
            refs.append(AudioRef(key, codec, problem=why))
            continue
        rate = spec.sample_rate
        if rate is None or not 0 < rate <= MAX_RATE:
            said = "no sample rate" if rate is None else f"sample rate {rate:,}"
            refs.append(AudioRef(key, codec, problem=f"{key}: features.json gives {said}"))
            continue
        refs.append(pcm_ref(key, value.array, rate, value.array.shape[1] if value.array.ndim == 2 else 1))
    return refs


def _keys_of(value: FeatureValue) -> list[str]:
    key = value.leaf.key
    return [key, f"{key}/value", f"{key}/shape"]


def decoded_image(decoded: DecodedRecord, key: str, index: int = 0):
    """Image ``key``'s pixels (H×W×C numpy array); element ``index`` for images in a Sequence.
    UsageError when the record has no such decoded image."""
    values = decoded.value if isinstance(decoded.value, dict) else {}
    value = values.get(key)
    if value is None or value.leaf.spec.kind != "image" or value.array is None:
        raise UsageError(f"the record has no decoded image {key!r}")
    if value.leaf.depth:
        if not 0 <= index < len(value.array):
            raise UsageError(f"image {key!r} has {len(value.array)} elements, not {index + 1}")
        return value.array[index]
    return value.array


# The most values a decoded Video puts in the Tree (each one a row's Python object); a longer video
# shows its stored frames there instead.
MAX_TREE_VIDEO_VALUES = 1 << 20


def encoded_tensors(decoded: DecodedRecord) -> dict[str, Any]:
    """Features whose stored form is not their tensor, decoded: key -> array, as ``cat --json`` reads them:
    tensors stored as bytes (ZLIB or BYTES encoding), Audio samples (stored widened to int64 or float32)
    and Video frames (stored as PNG/JPEG) up to MAX_TREE_VIDEO_VALUES; empty for a record not decoded by a
    TFDS spec."""
    values = decoded.value if isinstance(decoded.value, dict) else {}
    out = {}
    for key, value in values.items():
        if not isinstance(value, FeatureValue) or value.note is not None or value.array is None:
            continue
        kind = value.leaf.spec.kind
        if (kind == "tensor" and value.leaf.spec.encoding != "none") or kind == "audio" \
                or (kind == "video" and value.array.size <= MAX_TREE_VIDEO_VALUES):
            out[key] = value.array
    return out


def _stored_as(spec: FeatureSpec) -> str:
    """What the Tree's Type column adds after a decoded feature's ``dtype [shape]``: how it is stored."""
    if spec.kind == "video" and spec.feature is not None:
        return f"video of {spec.feature.encoding} frames"
    if spec.kind == "audio":
        rate = f" {spec.sample_rate} Hz" if spec.sample_rate is not None else ""
        return "audio" + rate + (f" {spec.encoding}" if spec.encoding != "none" else "")
    return spec.encoding


def with_decoded_tensors(decoded: DecodedRecord, tree: TreeNode) -> tuple[TreeNode, dict[int, str]]:
    """``tree`` (an Example's, from ``build_tree``) with each feature of :func:`encoded_tensors` replaced by
    its tensor (role "tensor", its array as ``detail``), and {id(node): ``uint8 [6, 6] zlib``} of them."""
    arrays = encoded_tensors(decoded)
    if not arrays or tree.role != "example":
        return tree, {}
    from codec.decode.tensor_view import tensor_label, tensor_tree

    kinds: dict[int, str] = {}
    children = []
    for child in tree.children:
        array = arrays.get(child.name)
        if array is not None:
            node = tensor_tree(np.asarray(array))
            node.name, node.path = child.name, child.path
            kinds[id(node)] = f"{tensor_label(node.detail)} {_stored_as(decoded.value[child.name].leaf.spec)}"
            child = node
        children.append(child)
    return TreeNode(tree.name, tree.role, tree.dtype, tree.values, children, tree.path, tree.detail), kinds


def _yxyx(coords: list[float], fmt: str) -> tuple[float, float, float, float]:
    """Box coordinates in ``fmt`` (bounding_boxes_utils.py's formats) as (ymin, xmin, ymax, xmax)."""
    a, b, c, d = coords
    fmt = fmt.upper()
    if fmt.endswith("XYXY"):
        return b, a, d, c
    if fmt.endswith("XYWH"):
        return b, a, b + d, a + c
    return a, b, c, d


def boxes(decoded: DecodedRecord) -> list[tuple[float, float, float, float, str | None]]:
    """Every BBoxFeature's boxes as (ymin, xmin, ymax, xmax, class name or None), the name from the
    ClassLabel beside it in the same Sequence (``objects/label`` for ``objects/bbox``)."""
    values = decoded.value if isinstance(decoded.value, dict) else {}
    out: list[tuple[float, float, float, float, str | None]] = []
    for _key, value in sorted(values.items()):
        if value.leaf.spec.kind != "bbox" or value.array is None or value.note is not None:
            continue
        rows = value.array.reshape(-1, 4).tolist()
        labels = _sibling_labels(values, value.leaf, len(rows))
        fmt = value.leaf.spec.bbox_format
        out.extend((*_yxyx(row, fmt), label) for row, label in zip(rows, labels))
    return out


def _sibling_labels(values: dict[str, FeatureValue], leaf: Leaf, count: int) -> list[str | None]:
    parent = leaf.key.rsplit("/", 1)[0] if "/" in leaf.key else ""
    siblings = [v for k, v in sorted(values.items())
                if v.leaf.spec.kind == "class_label" and v.leaf.depth == leaf.depth and v.note is None
                and (k.rsplit("/", 1)[0] if "/" in k else "") == parent]
    siblings.sort(key=lambda v: not v.leaf.key.endswith("label"))
    if not siblings:
        return [None] * count
    label = siblings[0]
    ids = label.array.reshape(-1).tolist()
    names = label.leaf.spec.names
    out: list[str | None] = []
    for n in range(count):
        i = ids[n] if n < len(ids) else None
        out.append(None if i is None else names[i] if names and 0 <= i < len(names) else str(i))
    return out
