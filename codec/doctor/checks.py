"""The checks that look at one record alone: boxes, labels, and the image's decoding, format and size.

Each returns the problems it finds as one-line strings (empty: none); the
caller turns them into findings. Images are opened with Pillow as the app's
images module does (content decides the format, never the name), and
decoded only as far as the checks and the hashes need.
"""
from __future__ import annotations

from codec.decode.image_boxes import box_issues
from codec.decode.image_sniff import MAX_PIXELS  # larger images are not decoded (a decompression bomb is a few KB)

__all__ = ["MAX_PIXELS", "bbox_problems", "box_problems", "declared_format", "format_problem", "label_problems",
           "size_problem"]

HASH_SIDE = 256  # JPEGs are decoded at a reduced scale down to this side: hashes need no more
# A declared image/format -> the Pillow format it names.
_FORMAT_NAMES = {"jpg": "JPEG", "jpeg": "JPEG", "jpe": "JPEG", "jfif": "JPEG", "png": "PNG", "gif": "GIF",
                 "bmp": "BMP", "webp": "WEBP", "tif": "TIFF", "tiff": "TIFF", "jp2": "JPEG2000",
                 "j2k": "JPEG2000", "jpeg2000": "JPEG2000", "ppm": "PPM", "pgm": "PPM", "pnm": "PPM",
                 "qoi": "QOI", "avif": "AVIF", "raw": "RAW"}


def box_problems(boxes: list[tuple[float, float, float, float]]) -> list[str]:
    """Problems of normalised (xmin, ymin, xmax, ymax) boxes: outside [0, 1], min > max, zero area, NaN."""
    return [f"box {n}: {issue}" for n, box in enumerate(boxes) for issue in box_issues(*box)]


def bbox_problems(lists: dict[str, list | None]) -> list[str]:
    """Problems of Object Detection API boxes: ``lists`` maps each of ``image/object/bbox/{xmin,ymin,xmax,ymax}``
    (and the class lists, when present) to its values, None when the record lacks that key."""
    coords = {k: v for k, v in lists.items() if "/bbox/" in k}
    missing = [k for k, v in coords.items() if v is None]
    if missing:
        return [f"{', '.join(missing)} missing beside the other box coordinates"]
    lengths = {k: len(v) for k, v in lists.items() if v is not None}
    if len(set(lengths.values())) > 1:
        return ["lists of unequal length: " + ", ".join(f"{k.rsplit('/', 1)[-1]} {n}" for k, n in lengths.items())]
    sides = [coords[f"image/object/bbox/{s}"] for s in ("xmin", "ymin", "xmax", "ymax")]
    return box_problems(list(zip(*sides)))


def label_problems(key: str, kind: str, values: list, names) -> list[str]:
    """Ids (``kind`` "id") or names (``kind`` "text") of ``key`` that the label map ``names`` lacks."""
    if kind == "id":
        unknown = list(dict.fromkeys(v for v in values if names.name(v) is None))
        shown = ", ".join(str(v) for v in unknown)
    else:
        texts = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values]
        unknown = list(dict.fromkeys(t for t in texts if names.id_of(t) is None))
        shown = ", ".join(repr(t) for t in unknown)
    if not unknown:
        return []
    where = f" ({names.path.name})" if getattr(names, "path", None) is not None else ""
    return [f"{key}: {shown} not in the label map{where}"]


def declared_format(value: bytes | str) -> str | None:
    """The Pillow format a declared ``image/format`` names (``b"jpg"`` -> ``"JPEG"``), None if unknown."""
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
    text = text.strip().lower().lstrip(".")
    if text.startswith("image/"):
        text = text[len("image/"):]
    return _FORMAT_NAMES.get(text)


def format_problem(key: str, value: bytes, actual: str) -> str | None:
    """A declared format that differs from the bytes' (an unknown name is a problem too)."""
    named = declared_format(value)
    shown = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if named is None:
        return f"{key} {shown!r} is no known image format; the bytes are {actual}"
    if named != actual and {named, actual} != {"JPEG", "MPO"}:
        return f"{key} says {shown!r}, the bytes are {actual}"
    return None


def size_problem(declared: dict[str, int | None], width: int, height: int) -> str | None:
    """Declared width/height (either may be None: not declared) that differ from the pixels."""
    wrong = [f"{k} {v}" for k, v, actual in (("width", declared.get("width"), width),
                                             ("height", declared.get("height"), height))
             if v is not None and v != actual]
    if not wrong:
        return None
    return f"declared {', '.join(wrong)}; the image is {width}x{height}"
