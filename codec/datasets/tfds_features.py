"""A TFDS feature spec (``features.json``) and one record's features decoded by it, without TensorFlow.

``features.json`` is the JSON form (camelCase) of TFDS's ``Feature`` proto
(tensorflow_datasets/core/proto/feature.proto). TFDS flattens nested features
into Example keys joined by "/" (``objects/bbox``) and stores each as
tensorflow_datasets/core/example_serializer.py does: integers and bools in an
int64_list, floats (float16/32/64) in a float_list, strings and encoded data in
a bytes_list; a ``Sequence`` adds a leading length dimension and its elements'
values are concatenated. ``Audio`` is a Tensor of PCM samples with a ``sample_rate``;
``Video`` is a Sequence of encoded Image frames. Decoding follows example_parser.py
and each feature's ``decode_example``.
"""
from __future__ import annotations

import hashlib
import reprlib
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from codec.decode.png_samples import png16_colour, png_bit_depth
from codec.errors import ImageTooLargeError, SchemaError

__all__ = ["FeatureSpec", "FeatureValue", "Leaf", "decode_features", "feature_json", "flat_values",
           "leaves", "parse_spec"]

# The most bytes one encoded tensor may inflate to: a hostile zlib stream stops here.
MAX_TENSOR_BYTES = 1 << 28
# Deepest nesting of FeaturesDicts and Sequences read from features.json.
MAX_SPEC_DEPTH = 64
_CONTENT_KINDS = {"featuresDict": "dict", "tensor": "tensor", "classLabel": "class_label", "image": "image",
                  "boundingBox": "bbox", "text": "text", "sequence": "sequence", "audio": "audio",
                  "video": "video"}
_CLASS_KINDS = {"Scalar": "scalar", "BBoxFeature": "bbox", "ClassLabel": "class_label", "Text": "text",
                "Image": "image", "Tensor": "tensor", "Sequence": "sequence", "FeaturesDict": "dict"}


@dataclass
class FeatureSpec:
    """One feature of the spec. ``kind``: dict, tensor, scalar, class_label, image, bbox, text, sequence,
    audio (a tensor of samples), video (a Sequence of Image frames: ``feature``, ``length``), or unknown (a
    type this reader does not decode; ``type_name`` names it)."""

    kind: str
    type_name: str
    dtype: str = ""
    shape: tuple = ()  # None for an unknown dimension
    encoding: str = "none"  # tensors: none, bytes, zlib
    names: list[str] | None = None  # class labels
    bbox_format: str = "REL_YXYX"
    children: dict[str, FeatureSpec] = field(default_factory=dict)  # FeaturesDict
    feature: FeatureSpec | None = None  # Sequence
    length: int | None = None  # Sequence: None when it varies
    sample_rate: int | None = None  # Audio, when the spec gives it

    def describe(self) -> str:
        """``Tensor float32 [4] zlib``: the type and what decoding needs to know of it."""
        if self.kind in ("dict", "sequence", "unknown", "text", "class_label"):
            extra = f" ({len(self.names)} classes)" if self.kind == "class_label" and self.names else ""
            return self.type_name + extra
        dims = ", ".join("-1" if d is None else str(d) for d in self.shape)
        text = f"{self.type_name} {self.dtype} [{dims}]"
        if self.kind == "bbox":
            text += f" {self.bbox_format}"
        if self.kind == "video" and self.feature is not None:
            text += f" {self.feature.encoding}"
        elif self.encoding != "none":
            text += f" {self.encoding}"
        if self.sample_rate is not None:
            text += f" {self.sample_rate} Hz"
        return text


@dataclass
class Leaf:
    """A feature that holds values, with its flattened key and the Sequences around it."""

    key: str
    spec: FeatureSpec
    depth: int = 0  # how many Sequences enclose it
    length: int | None = None  # the enclosing Sequence's static length


@dataclass
class FeatureValue:
    """One leaf decoded: ``array`` (tensors, images as HxWxC, class ids), ``text`` (Text), or a fallback:
    ``note`` says why, ``raw`` holds the Example's own Feature messages under their keys."""

    leaf: Leaf
    array: Any = None
    text: Any = None
    encoded: list = field(default_factory=list)  # images: the stored PNG/JPEG bytes
    note: str | None = None
    raw: dict = field(default_factory=dict)


# ---------------------------------------------------------------- the spec


def _get(obj: dict, *names: str, default: Any = None) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return default


def _shape(obj: Any, where: str) -> tuple:
    dims = _get(obj or {}, "dimensions", default=[]) if isinstance(obj, dict) else obj
    try:
        return tuple(None if int(d) < 0 else int(d) for d in dims or [])
    except (TypeError, ValueError):
        raise SchemaError(f"features.json: {where} has a shape that is not a list of integers: "
                          f"{reprlib.repr(obj)}") from None


def parse_spec(obj: Any, where: str = "features", depth: int = 0) -> FeatureSpec:
    """A ``Feature`` proto's JSON as a FeatureSpec; SchemaError (one line) for JSON that is not one."""
    if depth > MAX_SPEC_DEPTH:
        raise SchemaError(f"features.json: {where} is nested more than {MAX_SPEC_DEPTH} deep")
    if not isinstance(obj, dict):
        raise SchemaError(f"features.json: {where} is not an object")
    if "type" in obj and "content" in obj:
        obj = _from_legacy(obj, where)
    class_name = str(_get(obj, "pythonClassName", "python_class_name", default="")).rsplit(".", 1)[-1]
    content = next((k for k in _CONTENT_KINDS if k in obj), None)
    if content is None:
        content = next((k for k in obj if k not in ("pythonClassName", "python_class_name", "description",
                                                        "valueRange", "value_range")), "")
    kind = _CONTENT_KINDS.get(content) or _CONTENT_KINDS.get(_camel(content))
    body = obj.get(content) or {}
    if kind is None or not isinstance(body, dict):
        return FeatureSpec("unknown", class_name or content or "unknown")
    if kind == "tensor" and _CLASS_KINDS.get(class_name) in ("scalar", "bbox", "class_label"):
        kind = _CLASS_KINDS[class_name]
    type_name = class_name or {"dict": "FeaturesDict", "class_label": "ClassLabel", "bbox": "BBoxFeature"}.get(
        kind, kind.title())
    if kind == "dict":
        features = _get(body, "features", default={})
        if not isinstance(features, dict):
            raise SchemaError(f"features.json: {where} has features that are not an object")
        children = {name: parse_spec(child, f"{where}/{name}", depth + 1)
                    for name, child in sorted(features.items())}
        return FeatureSpec("dict", type_name, children=children)
    if kind == "sequence":
        length = _get(body, "length")
        try:
            length = None if length is None or int(length) < 0 else int(length)
        except (TypeError, ValueError):
            raise SchemaError(f"features.json: {where} has a Sequence length that is not a number") from None
        return FeatureSpec("sequence", type_name, length=length,
                           feature=parse_spec(body.get("feature"), f"{where}[]", depth + 1))
    if kind == "class_label":
        names = _get(body, "names")
        return FeatureSpec("class_label", type_name, dtype="int64",
                           names=[str(n) for n in names] if isinstance(names, list) else None)
    if kind == "text":
        return FeatureSpec("text", type_name, dtype="string")
    dtype = str(_get(body, "dtype", default="float32" if kind == "bbox" else "uint8"))
    shape = _shape(_get(body, "shape"), where)
    if kind == "image":
        shape = shape or (None, None, 3)
        return FeatureSpec("image", type_name, dtype=dtype, shape=shape,
                           encoding=str(_get(body, "encodingFormat", "encoding_format", default="") or "png"))
    if kind == "bbox":
        return FeatureSpec("bbox", type_name, dtype=dtype, shape=shape or (4,),
                           bbox_format=str(_get(body, "bboxFormat", "bbox_format", default="REL_YXYX")))
    if kind == "video":
        return _video_spec(body, type_name, dtype, shape)
    if kind == "audio":
        return _audio_spec(body, type_name, dtype, shape, where)
    encoding = str(_get(body, "encoding", default="none") or "none").lower()
    return FeatureSpec(kind, type_name, dtype=dtype, shape=shape, encoding=encoding)


def _video_spec(body: dict, type_name: str, dtype: str, shape: tuple) -> FeatureSpec:
    """video_feature.py: a Sequence of ``shape[0]`` Images of shape ``shape[1:]``, one encoded frame each;
    any other rank is a feature this reader does not decode."""
    shape = shape or (None, None, None, 3)
    if len(shape) != 4:
        dims = ", ".join("-1" if d is None else str(d) for d in shape)
        return FeatureSpec("unknown", f"{type_name} of shape [{dims}] (not [frames, height, width, channels])")
    frame = FeatureSpec("image", "Image", dtype=dtype, shape=shape[1:],
                        encoding=str(_get(body, "encodingFormat", "encoding_format", default="") or "png"))
    return FeatureSpec("video", type_name, dtype=dtype, shape=shape, feature=frame, length=shape[0])


def _audio_spec(body: dict, type_name: str, dtype: str, shape: tuple, where: str) -> FeatureSpec:
    """audio_feature.py: a Tensor of samples (``shape`` [n] or [n, channels]) and its ``sample_rate``; with
    ``lazy_decode`` the Example holds the audio file's bytes, which this reader does not decode."""
    rate = _get(body, "sampleRate", "sample_rate")
    try:
        rate = None if rate in (None, "", 0, "0") else int(rate)
    except (TypeError, ValueError):
        raise SchemaError(f"features.json: {where} has a sample rate that is not a number") from None
    if _get(body, "lazyDecode", "lazy_decode"):
        return FeatureSpec("unknown", f"{type_name} (lazy_decode)")
    encoding = str(_get(body, "encoding", default="none") or "none").lower()
    return FeatureSpec("audio", type_name, dtype=str(_get(body, "dtype") or "int64"),
                       shape=shape or (None,), encoding=encoding, sample_rate=rate)


_LEGACY_PROTOS = {"FeaturesDict": "featuresDict", "TensorFeature": "tensor", "ClassLabel": "classLabel",
                  "ImageFeature": "image", "BoundingBoxFeature": "boundingBox", "TextFeature": "text",
                  "Sequence": "sequence", "VideoFeature": "video", "AudioFeature": "audio"}


def _legacy_shape(shape: Any) -> dict:
    return {"dimensions": [-1 if d is None else d for d in shape or []]}


def _from_legacy(obj: dict, where: str) -> dict:
    """The older ``{"type": class, "content": ...}`` form of features.json (feature.py ``from_json``) in the
    proto form."""
    class_name, content = str(obj["type"]), obj["content"]
    out: dict = {"pythonClassName": class_name}
    proto = str(obj.get("proto_cls") or "").rsplit(".", 1)[-1]
    if proto:
        out[_LEGACY_PROTOS.get(proto, proto)] = content
        return out
    if not isinstance(content, dict):
        raise SchemaError(f"features.json: {where} has content that is not an object")
    short = class_name.rsplit(".", 1)[-1]
    if short == "FeaturesDict":
        out["featuresDict"] = {"features": content}
    elif short == "Sequence":
        out["sequence"] = {"feature": content.get("feature"), "length": content.get("length") or -1}
    elif short == "ClassLabel":
        out["classLabel"] = {"numClasses": content.get("num_classes"), "names": content.get("names")}
    elif short == "Text":
        out["text"] = {}
    elif short in ("Image", "Tensor", "Scalar", "BBoxFeature", "Audio", "Video"):
        body = {"shape": _legacy_shape(content.get("shape")), "dtype": content.get("dtype")}
        body.update({k: content[k] for k in ("encoding", "encoding_format", "sample_rate", "lazy_decode")
                     if content.get(k)})
        out[{"Image": "image", "BBoxFeature": "boundingBox", "Audio": "audio", "Video": "video"}.get(
            short, "tensor")] = body
    else:
        out[short] = content
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def leaves(spec: FeatureSpec, prefix: str = "", depth: int = 0, length: int | None = None) -> list[Leaf]:
    """The spec's value-holding features in key order, keyed as TFDS flattens them into an Example."""
    if spec.kind == "dict":
        out: list[Leaf] = []
        for name, child in spec.children.items():
            out.extend(leaves(child, f"{prefix}/{name}" if prefix else name, depth, length))
        return out
    if spec.kind == "sequence" and spec.feature is not None:
        return leaves(spec.feature, prefix, depth + 1, spec.length if depth == 0 else length)
    return [Leaf(prefix, spec, depth, length)]


# ---------------------------------------------------------------- decoding


class _Bad(ValueError):
    """One feature that does not decode per its spec (the message is its note)."""


def _storage(spec: FeatureSpec) -> str:
    """The Feature list TFDS stores ``spec`` in: "int64", "float" or "bytes"."""
    if spec.kind in ("image", "text") or spec.encoding != "none" or spec.dtype == "string":
        return "bytes"
    if spec.kind == "class_label" or spec.dtype == "bool" or spec.dtype.startswith(("int", "uint")):
        return "int64"
    return "float"


def _numpy_dtype(name: str) -> np.dtype:
    if name == "string":
        return np.dtype(object)
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise _Bad(f"dtype {name!r} has no numpy form") from None
    if dtype.kind not in "biuf":
        raise _Bad(f"dtype {name!r} is not stored in a tf.train.Example by TFDS")
    return dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype


def _values(features: Any, key: str, want: str, optional: bool) -> list:
    if key not in features:
        if optional:
            return []
        raise _Bad(f"{key!r} is missing")
    feature = features[key]
    kind = feature.WhichOneof("kind")
    lists = {"int64_list": "int64", "float_list": "float", "bytes_list": "bytes"}
    if kind is None or not len(getattr(feature, kind).value):
        return []
    if lists[kind] != want:
        raise _Bad(f"{key!r} holds {lists[kind]} values, the spec stores {want}")
    return list(getattr(feature, kind).value)


def _reshape(array: np.ndarray, shape: tuple, key: str) -> np.ndarray:
    dims = tuple(-1 if d is None else d for d in shape)
    if dims.count(-1) > 1:
        raise _Bad(f"{key!r}: shape {list(dims)} has more than one unknown dimension")
    try:
        return array.reshape(dims)
    except ValueError:
        raise _Bad(f"{key!r}: {array.size} values do not fit shape {list(dims)}") from None


def _inflate(data: bytes, key: str) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_TENSOR_BYTES)
    except zlib.error as exc:
        raise _Bad(f"{key!r}: zlib data is damaged ({exc})") from None
    if inflater.unconsumed_tail:
        raise _Bad(f"{key!r}: zlib data inflates past {MAX_TENSOR_BYTES} bytes")
    return out


def _from_bytes(data: bytes, spec: FeatureSpec, shape: tuple, key: str) -> np.ndarray:
    """One encoded tensor (tensor_feature.py: ``tobytes()``, then zlib for ZLIB) back to its array."""
    if spec.encoding == "zlib":
        data = _inflate(data, key)
    elif spec.encoding != "bytes":
        raise _Bad(f"{key!r}: unknown tensor encoding {spec.encoding!r}")
    dtype = _numpy_dtype(spec.dtype)
    if len(data) % dtype.itemsize:
        raise _Bad(f"{key!r}: {len(data)} bytes are not whole {spec.dtype} values")
    return _reshape(np.frombuffer(data, dtype), shape, key).astype(dtype.newbyteorder("="))


def _stack(items: list[np.ndarray], empty_shape: tuple, dtype: np.dtype, key: str) -> np.ndarray:
    if not items:
        return np.zeros(tuple(d or 0 for d in empty_shape), dtype)
    if len({item.shape for item in items}) > 1:
        raise _Bad(f"{key!r}: the elements of the sequence differ in shape")
    return np.stack(items)


def _one(values: list, leaf: Leaf) -> Any:
    if len(values) != 1:
        raise _Bad(f"{leaf.key!r} holds {len(values)} values, expected 1")
    return values[0]


def _decode_tensor(features: Any, leaf: Leaf) -> np.ndarray:
    spec, key, seq = leaf.spec, leaf.key, leaf.depth == 1
    shape = spec.shape
    full = ((leaf.length,) if seq else ()) + shape
    dynamic = shape.count(None) > 1
    # example_parser.py: a leading unknown dimension is a FixedLenSequenceFeature, which may be absent
    optional = (seq and leaf.length is None) or (not seq and bool(shape) and shape[0] is None)
    if spec.encoding == "none" and not dynamic:
        values = _values(features, key, _storage(spec), optional)
        dtype = _numpy_dtype(spec.dtype)
        if dtype.kind == "O":
            array = np.empty(len(values), object)
            array[:] = [bytes(v) for v in values]
        elif dtype == np.uint64:
            array = np.array(values, np.int64).view(np.uint64)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                array = np.array(values, np.int64 if _storage(spec) == "int64" else np.float32).astype(dtype)
        return _reshape(array.astype(dtype.newbyteorder("=")), full, key)
    if dynamic:  # tensor_feature.py: {"value": bytes, "shape": int64} for more than one unknown dimension
        blobs = _values(features, f"{key}/value", "bytes", seq)
        dims = _values(features, f"{key}/shape", "int64", seq)
        if len(dims) != len(blobs) * len(shape):
            raise _Bad(f"{key!r}: {len(dims)} shape values for {len(blobs)} tensors of rank {len(shape)}")
        shapes = [tuple(dims[i * len(shape):(i + 1) * len(shape)]) for i in range(len(blobs))]
    else:
        blobs = _values(features, key, "bytes", seq and leaf.length is None)
        shapes = [shape] * len(blobs)
    arrays = [_from_bytes(bytes(b), spec, s, key) for b, s in zip(blobs, shapes)]
    if seq:
        return _stack(arrays, full, _numpy_dtype(spec.dtype).newbyteorder("="), key)
    return _one(arrays, leaf)


def decode_features(features: Any, leaf_list: list[Leaf]) -> tuple[dict[str, FeatureValue], list[str]]:
    """Every leaf of the spec read from an Example's Features map, and a note per leaf that did not decode
    (that leaf then holds the Example's own values)."""
    out: dict[str, FeatureValue] = {}
    notes: list[str] = []
    for leaf in leaf_list:
        value = FeatureValue(leaf)
        try:
            if leaf.spec.kind == "unknown":
                raise _Bad(f"{leaf.key!r}: feature type {leaf.spec.type_name} is not decoded; "
                           "showing the Example's values")
            if leaf.depth > 1:
                raise _Bad(f"{leaf.key!r}: a Sequence inside a Sequence is not decoded; "
                           "showing the Example's values")
            _decode_leaf(features, leaf, value)
        except (_Bad, SchemaError, ValueError, TypeError, OverflowError, MemoryError) as exc:
            value = FeatureValue(leaf, note=str(exc), raw=_raw(features, leaf.key))
            notes.append(str(exc))
        out[leaf.key] = value
    return out, notes


def _raw(features: Any, key: str) -> dict:
    return {k: features[k] for k in sorted(features) if k == key or k.startswith(key + "/")}


def _decode_leaf(features: Any, leaf: Leaf, value: FeatureValue) -> None:
    spec, seq = leaf.spec, leaf.depth == 1
    optional = seq and leaf.length is None
    if spec.kind == "class_label":
        ids = _values(features, leaf.key, "int64", optional)
        value.array = np.array(ids, np.int64) if seq else np.int64(_one(ids, leaf))
    elif spec.kind == "text":
        texts = [bytes(v).decode("utf-8", errors="replace")
                 for v in _values(features, leaf.key, "bytes", optional)]
        value.text = texts if seq else _one(texts, leaf)
    elif spec.kind == "image":
        value.encoded = [bytes(v) for v in _values(features, leaf.key, "bytes", optional)]
        value.array = _frames(value.encoded, spec, leaf.key) if seq \
            else _one([decode_image_bytes(b, spec, leaf.key) for b in value.encoded], leaf)
    elif spec.kind == "video" and spec.feature is not None:
        if seq:
            raise _Bad(f"{leaf.key!r}: a Video inside a Sequence is not decoded; showing the Example's values")
        value.encoded = [bytes(v) for v in _values(features, leaf.key, "bytes", spec.length is None)]
        if spec.length is not None and len(value.encoded) != spec.length:
            raise _Bad(f"{leaf.key!r} holds {len(value.encoded)} frames, the spec says {spec.length}")
        value.array = _frames(value.encoded, spec.feature, leaf.key)
    else:
        value.array = _decode_tensor(features, leaf)


# ---------------------------------------------------------------- images


def _frames(encoded: list[bytes], spec: FeatureSpec, key: str) -> np.ndarray:
    """A Sequence of Images (a Video's frames too) decoded and stacked: [n, H, W, C]."""
    pixels = [decode_image_bytes(b, spec, key) for b in encoded]
    return _stack(pixels, (0,) + spec.shape, _numpy_dtype(spec.dtype), key)


def decode_image_bytes(data: bytes, spec: FeatureSpec, key: str = "image") -> np.ndarray:
    """PNG/JPEG bytes as HxWxC pixels of the spec's dtype and channels, as ``tf.image.decode_image`` gives
    them (image_feature.py); float32 images are 4-channel uint8 PNGs bitcast to one float channel."""
    channels = spec.shape[-1] if spec.shape else None
    want = spec.dtype
    if want == "float32":
        channels, want = 4, "uint8"
    try:
        pixels = png16_colour(data) if png_bit_depth(data) == 16 else None
        if pixels is None:
            pixels = _pillow_pixels(data)
    except ImageTooLargeError as exc:
        raise _Bad(f"{key!r}: {exc}; showing the Example's values") from None
    except Exception as exc:  # noqa: BLE001 — Pillow raises OSError, SyntaxError, ValueError... on bad bytes
        raise _Bad(f"{key!r}: the image does not decode ({exc})") from None
    pixels = _convert(_set_channels(pixels, channels, key), want, key)
    if spec.dtype == "float32":
        pixels = np.ascontiguousarray(pixels).view("<f4").astype(np.float32)
    return np.ascontiguousarray(pixels)


def _pillow_pixels(data: bytes) -> np.ndarray:
    from codec.decode.image_sniff import candidate_formats, check_pixels, open_image

    with open_image(data, candidate_formats(data) or None) as image:
        check_pixels(*image.size)
        if image.mode in ("P", "PA"):
            image = image.convert("RGBA" if "transparency" in image.info or image.mode == "PA" else "RGB")
        elif image.mode == "1":
            image = image.convert("L")
        elif image.mode == "CMYK":
            image = image.convert("RGB")
        pixels = np.asarray(image)
    if pixels.dtype.kind in "iu" and pixels.dtype.itemsize > 1:  # I;16 and friends, 16-bit greyscale
        pixels = pixels.astype(np.uint16)
    return pixels[:, :, None] if pixels.ndim == 2 else pixels


def _set_channels(pixels: np.ndarray, want: int | None, key: str) -> np.ndarray:
    have = pixels.shape[2]
    if not want or want == have:
        return pixels
    top = np.iinfo(pixels.dtype).max
    colour, alpha = (pixels[..., :-1], pixels[..., -1:]) if have in (2, 4) else (pixels, None)
    if want in (1, 2):
        if colour.shape[2] == 3:
            colour = _grey(colour)
    elif want in (3, 4):
        colour = np.repeat(colour, 3, axis=2) if colour.shape[2] == 1 else colour
    else:
        raise _Bad(f"{key!r}: cannot give {have}-channel pixels {want} channels")
    if want in (2, 4):
        alpha = alpha if alpha is not None else np.full(colour.shape[:2] + (1,), top, pixels.dtype)
        return np.concatenate([colour, alpha], axis=2)
    return colour


_GREY_WEIGHTS = np.array([0.299, 0.587, 0.114])
_GREY_BAND = 1 << 18  # pixels converted at a time: a float64 copy of the whole image would be 24 bytes a pixel


def _grey(colour: np.ndarray) -> np.ndarray:
    """RGB pixels as one grey channel of their own dtype (ITU-R 601 luma, rounded), a band of rows at a time."""
    height, width = colour.shape[:2]
    grey = np.empty((height, width, 1), colour.dtype)
    rows = max(1, _GREY_BAND // max(1, width))
    for top in range(0, height, rows):
        band = colour[top:top + rows].astype(np.float64) @ _GREY_WEIGHTS
        grey[top:top + rows, :, 0] = np.rint(band)
    return grey


def _convert(pixels: np.ndarray, want: str, key: str) -> np.ndarray:
    if want == pixels.dtype.name:
        return pixels
    if want == "uint16" and pixels.dtype == np.uint8:
        return pixels.astype(np.uint16) * 257
    if want == "uint8" and pixels.dtype == np.uint16:
        return (pixels >> 8).astype(np.uint8)
    raise _Bad(f"{key!r}: {pixels.dtype.name} pixels for a {want} image")


# ---------------------------------------------------------------- views


def _image_like(array: np.ndarray) -> bool:
    """Pixels-shaped uint8/uint16 data (H×W or H×W×1/3/4), summarised by a hash as images are."""
    return (array.dtype in (np.uint8, np.uint16)
            and (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (1, 3, 4))))


def _digest_json(array: np.ndarray) -> dict:
    little = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return {"dtype": array.dtype.name, "shape": [int(n) for n in array.shape],
            # An ndarray is a buffer; numpy's stubs say so only from Python 3.12 (this checks 3.10).
            "sha256": hashlib.sha256(little.reshape(-1).view(np.uint8)).hexdigest()}  # type: ignore[arg-type]


def feature_json(value: FeatureValue) -> Any:
    """One leaf for ``cat --json``: ``{"value", "name"}`` for class labels, a string for text, images, videos
    (and image-like tensors) as ``{"dtype", "shape", "sha256"}``, audio as that and ``"sample_rate"``,
    tensors as ``{"dtype", "shape", "values"}``;
    a fallback as ``{"note", "example"}`` with the Example's own features in protobuf's JSON mapping."""
    spec = value.leaf.spec
    if value.note is not None:
        from google.protobuf.json_format import MessageToDict

        return {"note": value.note, "example": {k: MessageToDict(f) for k, f in value.raw.items()}}
    if spec.kind == "class_label":
        ids = value.array.tolist()
        names = [_name(spec, i) for i in ids] if isinstance(ids, list) else _name(spec, ids)
        return {"value": ids, "name": names}
    if spec.kind == "text":
        return value.text
    if spec.kind == "audio":
        return {**_digest_json(value.array), "sample_rate": spec.sample_rate}
    if spec.kind in ("image", "video") or _image_like(value.array):
        return _digest_json(value.array)
    from codec.decode.tensors import tensor_json

    out = tensor_json(value.array)
    out.pop("sha256", None)
    return out


def _name(spec: FeatureSpec, index: int) -> str | None:
    """ClassLabel.int2str: the name, or the number itself when the spec gives only ``num_classes``."""
    if spec.names is None:
        return str(index)
    return spec.names[index] if 0 <= index < len(spec.names) else None


def flat_values(value: FeatureValue) -> dict[str, tuple[str, list]]:
    """One leaf as flat features (key -> ("int64" | "float" | "bytes", values)); a fallback gives the
    Example's own features."""
    spec = value.leaf.spec
    if value.note is not None:
        from codec.decode.decoder import feature_values

        return {k: (dtype or "bytes", values) for k, f in value.raw.items()
                for dtype, values in [feature_values(f)]}
    key = value.leaf.key
    if spec.kind == "text":
        texts = value.text if isinstance(value.text, list) else [value.text]
        return {key: ("bytes", [t.encode("utf-8") for t in texts])}
    if spec.kind in ("image", "video"):
        return {key: ("bytes", list(value.encoded))}
    from codec.decode.payloads import array_values

    return {key: array_values(value.array.reshape(-1))}
