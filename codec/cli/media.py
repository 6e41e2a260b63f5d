"""``media``: one line per media value (audio, and what other extractors find), in record order."""
from __future__ import annotations

import json
import sys

from codec.cli.filtering import selected, where_filter
from codec.cli.report import EXIT_OK, EXIT_PROBLEMS
from codec.cli.report import out as _out
from codec.cli.sources import open_source as _open

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Callable

    from codec.decode.decoded import DecodedRecord

__all__ = ["cmd_media", "extractors", "media_text"]


def extractors() -> list[Callable[[int, DecodedRecord], list[dict]]]:
    """The media finders, each ``(index, decoded) -> list of media lines``, run in this order on every
    record; a line with an ``error`` is a value that does not decode (exit 1)."""
    from codec.decode.audio import audio_media
    from codec.decode.masks import EXTRACTORS
    from codec.decode.video import video_media

    return [audio_media, video_media, *EXTRACTORS]


def cmd_media(args) -> int:
    from codec.decode.decoder import decode_record
    from codec.index.scan import IndexProgress
    from codec.sources.record_pass import iter_records

    flt = where_filter(args)
    finders = extractors()
    broken = found = 0
    with _open(args, verify=not args.no_crc) as f:
        f.build_index()
        run_of = f.payload.run_of if f.payload is not None else None  # a log folder's run, as cat --json names it
        chosen = selected(f, flt, None, args) if flt is not None else range(len(f))
        for item in iter_records(f, chosen):  # a run of records at a time
            if isinstance(item, IndexProgress):
                continue
            i, data = item[0], item[1]
            decoded = decode_record(data, f.payload)
            for find in finders:
                for line in find(i, decoded):
                    run = run_of(f.location(i)[0]) if run_of is not None else None
                    if run is not None:
                        line["run"] = run
                    found += 1
                    broken += "error" in line
                    _out(json.dumps(line) if args.json else media_text(line))
        sys.stdout.flush()
        if not found:
            sys.stderr.write(f"tfrlens-cli: no media values in {len(chosen):,} record(s)\n")
        return EXIT_PROBLEMS if f.problems or broken else EXIT_OK


def media_text(line: dict) -> str:
    """One media line for people: ``record 3  audio/pcm16  audio pcm_int16  16000 Hz  1 ch  0.400 s ...``."""
    where = f"record {line['index']}  {line.get('key', '')}"
    if "step" in line:
        where += f" step {line['step']}"
    if "value" in line:
        where += f" value {line['value']}"
    if "error" in line:
        return f"{where}  {line['type']} {line.get('codec', '')}  error: {line['error']}"
    if line["type"] == "audio":
        sha = line["sha256"]
        return (f"{where}  audio {line['codec']}  {line['sample_rate']} Hz  {line['channels']} ch  "
                f"{line['frames']:,} frames  {line['duration']:.3f} s  sha256 {sha[:16] if sha else '-'}")
    if line["type"] == "keypoints":
        points = line["points"] or []
        hidden = sum(1 for p in points if not p[2])
        shown = "  ".join(f"({p[0]:.1f}, {p[1]:.1f})" + ("" if p[2] else " hidden") for p in points[:4])
        return (f"record {line['index']}  keypoints  {len(points)} points ({hidden} hidden)  {shown}"
                + ("  …" if len(points) > 4 else ""))
    rest = {k: v for k, v in line.items() if k not in ("index", "key", "type")}
    return f"{where}  {line['type']}  " + "  ".join(f"{k} {json.dumps(v)}" for k, v in rest.items())
