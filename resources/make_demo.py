"""Build ``resources/demo.tfrecord``: the dataset the app opens with ``--demo``.

24 Examples in the TF Object Detection API layout (JPEG and PNG pictures of
coloured shapes on soft backgrounds, normalised boxes and class names around
each shape, an int64 label, a caption, a float brightness), then 3
SequenceExamples (a ball bouncing across PNG frames, with its x position per
frame as an int64 feature list). Deterministic: run it again and the same
file comes out (with the same Pillow version).

    python -m resources.make_demo [OUTPUT]
"""
from __future__ import annotations

import io
import math
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFilter, ImageStat

from codec.decode.example_proto import Example, Feature, SequenceExample
from codec.storage.writer import write_records

WIDTH, HEIGHT = 320, 240
SCALE = 3  # shapes are drawn this many times larger, then scaled down: smooth edges
CLASSES = {1: "circle", 2: "square", 3: "triangle", 4: "star", 5: "hexagon"}
EXAMPLES = 24
SEQUENCES = 3
FRAMES = 10
FRAME_SIZE = 96

BACKGROUNDS = [  # (name, top colour, bottom colour)
    ("morning sky", (140, 195, 245), (232, 244, 253)),
    ("sunset", (255, 166, 110), (120, 82, 160)),
    ("mint", (196, 240, 220), (120, 200, 175)),
    ("night", (24, 32, 72), (70, 60, 120)),
    ("sand", (250, 230, 190), (222, 184, 135)),
    ("lavender", (230, 220, 250), (175, 160, 225)),
]
COLOURS = [  # (name, RGB)
    ("red", (231, 76, 60)),
    ("orange", (243, 156, 18)),
    ("yellow", (241, 196, 15)),
    ("green", (46, 174, 96)),
    ("teal", (22, 160, 153)),
    ("blue", (52, 120, 219)),
    ("purple", (142, 68, 173)),
    ("pink", (236, 112, 160)),
    ("white", (248, 248, 248)),
]


def _gradient(size: tuple[int, int], top: tuple, bottom: tuple) -> Image.Image:
    w, h = size
    column = Image.new("RGB", (1, h))
    for y in range(h):
        t = y / max(1, h - 1)
        column.putpixel((0, y), tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))
    return column.resize((w, h))


def _polygon(kind: str, cx: float, cy: float, r: float, angle: float) -> list[tuple[float, float]]:
    if kind == "square":
        corners = 4
        radii = [r] * corners
        start = angle + math.pi / 4
    elif kind == "triangle":
        corners, radii, start = 3, [r] * 3, angle - math.pi / 2
    elif kind == "hexagon":
        corners, radii, start = 6, [r] * 6, angle
    else:  # star
        corners, radii, start = 10, [r if i % 2 == 0 else r * 0.45 for i in range(10)], angle - math.pi / 2
    return [(cx + radii[i] * math.cos(start + 2 * math.pi * i / corners),
             cy + radii[i] * math.sin(start + 2 * math.pi * i / corners)) for i in range(corners)]


def _draw_shape(draw: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, angle: float,
                fill: tuple, outline: tuple | None = None) -> tuple[float, float, float, float]:
    """Draw one shape; return its bounding box (x0, y0, x1, y1) in the drawing's pixels."""
    if kind == "circle":
        box = (cx - r, cy - r, cx + r, cy + r)
        draw.ellipse(box, fill=fill, outline=outline, width=SCALE * 2 if outline else 0)
        return box
    points = _polygon(kind, cx, cy, r, angle)
    draw.polygon(points, fill=fill, outline=outline, width=SCALE * 2 if outline else 0)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def _contrast(rgb: tuple, *backgrounds: tuple) -> float:
    """The smallest RGB distance from ``rgb`` to the background colours."""
    return min(math.dist(rgb, bg) for bg in backgrounds)


def _darker(rgb: tuple, f: float = 0.72) -> tuple:
    return tuple(round(c * f) for c in rgb)


def _scene(rng: random.Random, index: int) -> tuple[Image.Image, list[dict], str, str]:
    """A picture with 1-3 shapes; returns it, its objects, its background and a caption."""
    bg_name, top, bottom = BACKGROUNDS[index % len(BACKGROUNDS)]
    big = (WIDTH * SCALE, HEIGHT * SCALE)
    image = _gradient(big, top, bottom)
    if bg_name == "night":  # a few stars in the sky
        sky = ImageDraw.Draw(image)
        for _ in range(40):
            x, y, s = rng.uniform(0, big[0]), rng.uniform(0, big[1] * 0.7), rng.uniform(1.5, 4) * SCALE / 2
            sky.ellipse((x - s, y - s, x + s, y + s), fill=(255, 255, 230))
    else:  # soft hills at the bottom
        hills = Image.new("L", big, 0)
        hd = ImageDraw.Draw(hills)
        for k in range(3):
            cx = rng.uniform(0, big[0])
            hd.ellipse((cx - big[0] * 0.6, big[1] * (0.78 + 0.05 * k), cx + big[0] * 0.6, big[1] * 1.6),
                       fill=40 + 20 * k)
        image = Image.composite(Image.new("RGB", big, _darker(bottom, 0.8)), image, hills)

    objects: list[dict] = []
    placed: list[tuple[float, float, float]] = []
    for _ in range(rng.choice([1, 2, 2, 3])):
        for _attempt in range(50):
            r = rng.uniform(0.11, 0.2) * big[1]
            cx = rng.uniform(r + 12 * SCALE, big[0] - r - 12 * SCALE)
            cy = rng.uniform(r + 12 * SCALE, big[1] - r - 12 * SCALE)
            if all(math.hypot(cx - x, cy - y) > r + q + 8 * SCALE for x, y, q in placed):
                break
        else:
            continue
        placed.append((cx, cy, r))
        label = rng.choice(list(CLASSES))
        kind = CLASSES[label]
        colour_name, colour = rng.choice([c for c in COLOURS if _contrast(c[1], top, bottom) > 150])
        angle = rng.uniform(0, math.pi / 3)
        shadow = Image.new("L", big, 0)
        _draw_shape(ImageDraw.Draw(shadow), kind, cx + 5 * SCALE, cy + 7 * SCALE, r, angle, 110)
        shadow = shadow.filter(ImageFilter.GaussianBlur(6 * SCALE))
        image = Image.composite(Image.new("RGB", big, (20, 20, 40)), image, shadow)
        draw = ImageDraw.Draw(image)
        box = _draw_shape(draw, kind, cx, cy, r, angle, colour, _darker(colour))
        highlight = tuple(min(255, c + 45) for c in colour)
        _draw_shape(draw, kind, cx - r * 0.12, cy - r * 0.12, r * 0.35, angle, highlight) if kind == "circle" else None
        objects.append({"label": label, "text": kind, "colour": colour_name,
                        "box": tuple(v / SCALE for v in box), "area": (box[2] - box[0]) * (box[3] - box[1])})
    image = image.resize((WIDTH, HEIGHT), Image.LANCZOS)
    names = [f"a {o['colour']} {o['text']}" for o in objects]
    caption = (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]) + f" on a {bg_name}"
    return image, objects, bg_name, caption


def _bytes(*values: bytes) -> Feature:
    feature = Feature()
    feature.bytes_list.value.extend(values)
    return feature


def _ints(*values: int) -> Feature:
    feature = Feature()
    feature.int64_list.value.extend(values)
    return feature


def _floats(*values: float) -> Feature:
    feature = Feature()
    feature.float_list.value.extend(values)
    return feature


def _encode(image: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "jpeg":
        image.save(buf, "JPEG", quality=88, optimize=True)
    else:
        image.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def make_example(rng: random.Random, index: int) -> bytes:
    image, objects, _, caption = _scene(rng, index)
    fmt = "png" if index % 3 == 2 else "jpeg"
    main = max(objects, key=lambda o: o["area"])
    clamp = lambda v: min(1.0, max(0.0, v))  # noqa: E731 - shadows may poke out of the frame
    example = Example()
    f = example.features.feature
    f["image/encoded"].CopyFrom(_bytes(_encode(image, fmt)))
    f["image/format"].CopyFrom(_bytes(fmt.encode()))
    f["image/filename"].CopyFrom(_bytes(f"shapes_{index:04d}.{'jpg' if fmt == 'jpeg' else 'png'}".encode()))
    f["image/height"].CopyFrom(_ints(HEIGHT))
    f["image/width"].CopyFrom(_ints(WIDTH))
    f["image/object/bbox/xmin"].CopyFrom(_floats(*(clamp(o["box"][0] / WIDTH) for o in objects)))
    f["image/object/bbox/ymin"].CopyFrom(_floats(*(clamp(o["box"][1] / HEIGHT) for o in objects)))
    f["image/object/bbox/xmax"].CopyFrom(_floats(*(clamp(o["box"][2] / WIDTH) for o in objects)))
    f["image/object/bbox/ymax"].CopyFrom(_floats(*(clamp(o["box"][3] / HEIGHT) for o in objects)))
    f["image/object/class/text"].CopyFrom(_bytes(*(o["text"].encode() for o in objects)))
    f["image/object/class/label"].CopyFrom(_ints(*(o["label"] for o in objects)))
    f["label"].CopyFrom(_ints(main["label"]))
    f["caption"].CopyFrom(_bytes(caption.encode()))
    f["brightness"].CopyFrom(_floats(round(ImageStat.Stat(image.convert("L")).mean[0] / 255, 4)))
    return example.SerializeToString(deterministic=True)


def _frame(t: float, colour: tuple, bg: tuple) -> tuple[Image.Image, int, int]:
    """A ball bouncing left to right at time t in [0, 1]; returns the frame and the ball's centre."""
    s = FRAME_SIZE * SCALE
    image = _gradient((s, s), bg[0], bg[1])
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, s * 0.86, s, s), fill=_darker(bg[1], 0.75))
    r = s * 0.13
    x = r * 1.2 + (s - 2.4 * r) * t
    floor = s * 0.86 - r
    y = floor - abs(math.sin(t * math.pi * 2.5)) * s * 0.55
    draw.ellipse((x - r * 0.9, s * 0.86 - r * 0.18, x + r * 0.9, s * 0.86 + r * 0.18), fill=_darker(bg[1], 0.55))
    draw.ellipse((x - r, y - r, x + r, y + r), fill=colour, outline=_darker(colour), width=SCALE * 2)
    draw.ellipse((x - r * 0.45, y - r * 0.5, x - r * 0.05, y - r * 0.1), fill=tuple(min(255, c + 60) for c in colour))
    return image.resize((FRAME_SIZE, FRAME_SIZE), Image.LANCZOS), round(x / SCALE), round(y / SCALE)


def make_sequence(rng: random.Random, index: int) -> bytes:
    colour_name, colour = COLOURS[(index * 2) % 8]
    _, top, bottom = BACKGROUNDS[index % len(BACKGROUNDS)]
    seq = SequenceExample()
    ctx = seq.context.feature
    ctx["video/id"].CopyFrom(_bytes(f"bouncing_ball_{index}".encode()))
    ctx["video/length"].CopyFrom(_ints(FRAMES))
    ctx["video/height"].CopyFrom(_ints(FRAME_SIZE))
    ctx["video/width"].CopyFrom(_ints(FRAME_SIZE))
    ctx["caption"].CopyFrom(_bytes(f"a {colour_name} ball bouncing from left to right".encode()))
    lists = seq.feature_lists.feature_list
    frames, xs, ys = lists["frames"], lists["ball/x"], lists["ball/y"]
    for k in range(FRAMES):
        image, x, y = _frame(k / (FRAMES - 1), colour, (top, bottom))
        frames.feature.add().bytes_list.value.append(_encode(image, "png"))
        xs.feature.add().int64_list.value.append(x)
        ys.feature.add().int64_list.value.append(y)
    return seq.SerializeToString(deterministic=True)


def build(path: str) -> int:
    rng = random.Random(20240611)
    records = [make_example(rng, i) for i in range(EXAMPLES)]
    records += [make_sequence(rng, i) for i in range(SEQUENCES)]
    return write_records(path, records)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from resources import demo_path

    path = argv[0] if argv else demo_path()
    n = build(path)
    print(f"wrote {n} records, {os.path.getsize(path):,} bytes to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
