"""The doctor's audio checks: clips that do not decode, silent clips, clipped clips, and sample rates
that differ inside a dataset.

Audio is found as ``tfrlens-cli media`` finds it (:func:`codec.decode.audio.find_audio`) and decoded
in the pool's workers. Levels are measured against the full scale of the decoded samples' type
(int16 32,768; 24- and 32-bit PCM as int32 2**31; float 1.0), so a clip's depth decides what full
scale is.
"""
from __future__ import annotations

import math

import numpy as np

from codec.decode.audio import AudioDecodeError, AudioRef, AudioSamples, decode_audio, find_audio
from codec.doctor.report import WARNING, Finding, RecordRef

__all__ = ["AUDIO_CHECKS", "CLIP_LEVEL", "CLIP_SHARE", "MAX_RATE_EXAMPLES", "SILENT_DBFS", "clip_problems",
           "record_audio", "sample_rate_findings"]

AUDIO_CHECKS = frozenset({"audio_decode", "audio_silent", "audio_clipped", "audio_sample_rate"})
SILENT_DBFS = -60.0  # a clip whose peak is below this is silent (quieter than any recorded sound kept on purpose)
CLIP_LEVEL = 0.999  # a sample this close to full scale (|x| >= 0.999 of it) is at full scale
CLIP_SHARE = 0.001  # a clip with at least this share of its samples at full scale is clipped
MAX_RATE_EXAMPLES = 10  # records named per (feature, sample rate) in a sample-rate finding


def ref_text(ref: AudioRef) -> str:
    """``audio/encoded``, ``audio/encoded[1]`` (a value after the first), ``frames step 3`` (a feature list)."""
    text = ref.key + (f"[{ref.value_index}]" if ref.value_index else "")
    return text + (f" step {ref.step}" if ref.step is not None else "")


def _full_scale(samples: np.ndarray) -> float:
    if np.issubdtype(samples.dtype, np.integer):
        return float(-np.iinfo(samples.dtype).min)
    return 1.0


def clip_problems(audio: AudioSamples) -> list[tuple[str, str]]:
    """(check, detail) of one decoded clip: silent (its peak below SILENT_DBFS) or clipped (at least
    CLIP_SHARE of its samples at full scale); an empty clip is silent."""
    x = audio.samples
    if not x.size:
        return [("audio_silent", "no samples (0 frames)")]
    full = _full_scale(x)
    peak = max(abs(float(x.min())), abs(float(x.max())))
    if peak < full * 10 ** (SILENT_DBFS / 20):
        level = f"{20 * math.log10(peak / full):.1f} dBFS" if peak else "every sample 0"
        return [("audio_silent", f"silent: peak {level} (below {SILENT_DBFS:g} dBFS)")]
    limit = CLIP_LEVEL * full
    at_full = int(np.count_nonzero((x >= limit) | (x <= -limit)))
    if at_full >= CLIP_SHARE * x.size:
        return [("audio_clipped", f"clipped: {at_full:,} of {x.size:,} samples ({at_full / x.size:.2%}) at full "
                                  f"scale (|x| >= {CLIP_LEVEL:g} of it; {CLIP_SHARE:.1%} or more is clipped)")]
    return []


def record_audio(decoded, checks: frozenset[str]) -> tuple[list[tuple[str, str]], list[tuple[str, int]]]:
    """One record's audio: (check, detail) findings, and (key, sample rate) of each clip that decodes."""
    findings: list[tuple[str, str]] = []
    rates: list[tuple[str, int]] = []
    for ref in find_audio(decoded):
        try:
            audio = decode_audio(ref)
        except AudioDecodeError as exc:
            if not ref.weak:  # bare MP3 frame sync that does not decode is not audio
                findings.append(("audio_decode", f"{ref_text(ref)}: {exc}"))
            continue
        rates.append((ref.key, audio.sample_rate))
        if checks & {"audio_silent", "audio_clipped"}:
            findings += [(check, f"{ref_text(ref)}: {detail}") for check, detail in clip_problems(audio)]
    return findings, rates


def sample_rate_findings(results: list, paths: list[str]) -> list[Finding]:
    """audio_sample_rate: per audio feature whose clips have two or more sample rates, one warning naming
    every rate with its count, and the first records of each rate but the most common (``results``: the
    tasks' results, each with ``file_id`` and ``audio_rates``: (key, rate) -> [clips, [indices]])."""
    clips: dict[str, dict[int, int]] = {}
    examples: dict[tuple[str, int], list[RecordRef]] = {}
    for r in sorted(results, key=lambda r: (r.file_id, r.start)):
        for (key, rate), (n, indices) in sorted(r.audio_rates.items()):
            by_rate = clips.setdefault(key, {})
            by_rate[rate] = by_rate.get(rate, 0) + n
            listed = examples.setdefault((key, rate), [])
            listed += [RecordRef(paths[r.file_id], i) for i in indices[:MAX_RATE_EXAMPLES - len(listed)]]
    out = []
    for key in sorted(clips):
        ranked = sorted(clips[key].items(), key=lambda kv: (-kv[1], kv[0]))
        if len(ranked) < 2:
            continue
        shown = ", ".join(f"{hz:,} Hz in {count:,} clip{'s' if count != 1 else ''}" for hz, count in ranked)
        refs = sorted({ref for hz, _ in ranked[1:] for ref in examples[(key, hz)]})
        out.append(Finding("audio_sample_rate", WARNING, refs,
                           f"{key}: {len(ranked)} sample rates: {shown} (records listed: up to "
                           f"{MAX_RATE_EXAMPLES} of each rate but the most common)"))
    return out
