"""``tfrlens-cli stats`` as text: the statistics of :mod:`codec.stats.file_stats` (its ``to_json()`` object) for a terminal."""
from __future__ import annotations

__all__ = ["sparkline", "stats_text"]


_BARS = " ▁▂▃▄▅▆▇█"


def sparkline(counts: list[int]) -> str:
    """A histogram in one line of block characters."""
    top = max(counts) if counts else 0
    if not top:
        return ""
    return "".join(_BARS[0 if not c else max(1, round(c / top * (len(_BARS) - 1)))] for c in counts)


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.6g}"


def _feature_lines(name: str, f: dict, records: int, sequence: bool) -> list[str]:
    share = f"{f['present'] / records:.0%}" if records else "-"
    dtype = f["dtype"] or "no values"
    if f.get("mixed_types"):
        dtype += " (mixed: " + ", ".join(f"{k} {v:,}" for k, v in f["dtypes"].items()) + ")"
    lines = [f"{name}  [{dtype}]  in {f['present']:,} of {records:,} records ({share})"]
    per = f.get("values_per_step" if sequence else "values_per_record")
    if sequence:
        ln = f["length"]
        lines.append(f"    steps per record   min {_num(ln['min'])}  max {_num(ln['max'])}  mean {_num(ln['mean'])}"
                     f"   {sparkline(ln['histogram']['counts'])}")
    if per and per["min"] is not None:
        what = "values per step  " if sequence else "values per record"
        lines.append(f"    {what}  min {_num(per['min'])}  max {_num(per['max'])}  mean {_num(per['mean'])}")
    if f["dtype"] == "bool":
        lines.append(f"    values             true {f['true']:,}  false {f['false']:,}")
    elif f["dtype"] in ("int64", "float32", "float64"):
        lines.append(f"    values             min {_num(f['min'])}  max {_num(f['max'])}  mean {_num(f['mean'])}"
                     f"  std {_num(f['std'])}" + (f"  nan {f['nan']:,}" if f["nan"] else "") +
                     (f"  inf {f['inf']:,}" if f["inf"] else ""))
        hist = f["histogram"]
        if hist["counts"]:
            lines.append(f"    histogram          {sparkline(hist['counts'])}  ({_num(f['min'])} .. {_num(f['max'])})")
    elif f["dtype"] == "bytes":
        ln = f["value_bytes"]
        lines.append(f"    bytes per value    min {_num(ln['min'])}  max {_num(ln['max'])}  mean {_num(ln['mean'])}"
                     f"   text {f['text_share']:.0%}  images {f['image_share']:.0%}")
        if f.get("image_formats"):
            w, h = f["image_width"], f["image_height"]
            formats = ", ".join(f"{k} {v:,}" for k, v in f["image_formats"].items())
            lines.append(f"    images             {formats}; width {_num(w['min'])}..{_num(w['max'])}, "
                         f"height {_num(h['min'])}..{_num(h['max'])}")
    if f.get("audio"):
        lines += _audio_lines(f["audio"])
    top = f.get("top")
    if top and any(c > 1 for _, c in top):
        names = f.get("names", {})
        shown = ", ".join(f"{_short(v)}{f' ({names[str(v)]})' if str(v) in names else ''} ×{c:,}" for v, c in top)
        more = "" if f.get("top_complete", True) and f.get("distinct", len(top)) is not None else " (counts partial)"
        lines.append(f"    most common        {shown}{more}")
    return lines


def _audio_lines(a: dict) -> list[str]:
    """A feature's audio: clips by codec, durations, sample rates and channels, and those that do not decode."""
    codecs = ", ".join(f"{k} {n:,}" for k, n in a["codecs"].items())
    bad = f"; {a['undecodable']:,} do not decode" if a["undecodable"] else ""
    lines = [f"    audio              {a['count']:,} clip(s): {codecs}{bad}"]
    d = a["duration"]
    if d["min"] is not None:
        lines.append(f"    duration (s)       min {d['min']:.3f}  max {d['max']:.3f}  mean {d['mean']:.3f}"
                     f"   {sparkline(d['histogram']['counts'])}")
        rates = ", ".join(f"{r:,} Hz ×{n:,}" for r, n in a["sample_rates"])
        channels = ", ".join(f"{c} ch ×{n:,}" for c, n in a["channels"])
        lines.append(f"    sample rates       {rates};  channels {channels}")
    return lines


def _short(v) -> str:
    if isinstance(v, str):
        text = v if len(v) <= 24 else v[:23] + "…"
        return f'"{text}"'
    return _num(v)


def stats_text(stats: dict, path: str = "") -> str:
    """The human report of ``tfrlens-cli stats`` from ``FileStats.to_json()``."""
    records = stats["records"]
    kinds = ", ".join(f"{k} {n:,}" for k, n in stats["kinds"].items()) or "no records"
    head = f"{path}: " if path else ""
    where = f", where {stats['where']}" if stats.get("where") else ""
    lines = [f"{head}{records:,} records ({kinds}){where}"]
    if stats["damaged_records"]:
        lines.append(f"{stats['damaged_records']:,} damaged record(s) left out")
    sections = [("features", "", False)] if "features" in stats else \
        [("context", "context features", False), ("sequence", "feature lists", True)]
    for key, title, sequence in sections:
        if title:
            lines += ["", f"{title}:"]
        if not stats[key]:
            lines.append("  (none)")
        for name, f in stats[key].items():
            lines += [""] + ["  " + line for line in _feature_lines(name, f, records, sequence)]
    return "\n".join(lines)
