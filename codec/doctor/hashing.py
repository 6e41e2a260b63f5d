"""Exact and perceptual hashes of records and images, and the near-duplicate search over them.

Exact: the first 16 bytes of SHA-256, of a record's bytes and of its decoded
pixels (mode, size and pixel bytes: the same picture stored as PNG and as BMP
is one image). Perceptual: ``imagehash``'s 64-bit pHash. The near-duplicate
search is multi-index hashing (Norouzi et al.): the 64 bits are cut into
``m`` bands; two hashes within ``t`` bits agree within ``t // m`` bits on at
least one band, so each band is looked up with its values flipped in up to
``t // m`` bits, in a table indexed by the band's value. It finds every pair
within the threshold, never compares all pairs, and holds 8 bytes per image.
"""
from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np

__all__ = ["DIGEST_BYTES", "digest", "near_pairs", "perceptual_hash", "pixel_digest"]

DIGEST_BYTES = 16
MAX_TABLE_BITS = 24  # a band's lookup table: 2**24 int32 entries at most (64 MB)


def digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[:DIGEST_BYTES]


def pixel_digest(image) -> bytes:
    """The digest of a Pillow image's pixels (palette and odd modes as RGB/RGBA first)."""
    if image.mode not in ("L", "RGB", "RGBA", "I;16", "I", "F"):
        image = image.convert("RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
    h = hashlib.sha256(f"{image.mode} {image.size[0]}x{image.size[1]}\n".encode())
    h.update(image.tobytes())
    return h.digest()[:DIGEST_BYTES]


def perceptual_hash(image) -> int:
    """``imagehash.phash`` of a Pillow image as a 64-bit integer."""
    import imagehash

    bits = imagehash.phash(image).hash.reshape(-1)
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


def _bands(n: int, threshold: int) -> int:
    """How many bands make the search cheapest for ``n`` hashes (probes per hash times what each finds)."""
    best, best_cost = 64, math.inf
    for m in range(math.ceil(64 / MAX_TABLE_BITS), 65):
        width = 64 // m
        r = threshold // m
        probes = sum(math.comb(width + 1, k) for k in range(r + 1))
        cost = m * probes * (1 + n / 2.0 ** width)
        if cost < best_cost:
            best, best_cost = m, cost
    return best


def _masks(width: int, r: int) -> list[int]:
    return [sum(1 << b for b in bits) for k in range(r + 1) for bits in itertools.combinations(range(width), k)]


def near_pairs(hashes: np.ndarray, threshold: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``(i, j)``, ``i < j``, of ``hashes`` (uint64) at most ``threshold`` bits apart, with the
    distance: three int64 arrays. Memory: the hashes, one band table and one probe's candidates."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    n = hashes.shape[0]
    found_i: list[np.ndarray] = []
    found_j: list[np.ndarray] = []
    if n >= 2 and threshold >= 0:
        m = _bands(n, threshold)
        r = threshold // m
        edges = [round(64 * k / m) for k in range(m + 1)]
        for lo, hi in zip(edges, edges[1:]):
            width = hi - lo
            # int32 throughout: the tables stay small enough for the cache, and gathers are what this costs
            values = ((hashes >> np.uint64(lo)) & np.uint64((1 << width) - 1)).astype(np.int32)
            order = np.argsort(values, kind="stable").astype(np.int32)
            counts = np.bincount(values, minlength=1 << width).astype(np.int32)
            starts = np.cumsum(counts, dtype=np.int32)
            starts -= counts
            for mask in _masks(width, r):
                _probe(hashes, values ^ np.int32(mask), order, counts, starts, threshold, found_i, found_j)
    if not found_i:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    keys = np.unique(np.concatenate(found_i) * n + np.concatenate(found_j))
    i, j = keys // n, keys % n
    distance = np.bitwise_count(hashes[i] ^ hashes[j]).astype(np.int64)
    return i, j, distance


def _probe(hashes, queries, order, counts, starts, threshold, found_i, found_j) -> None:
    """The pairs one flipped band value finds, kept when the whole hashes are within ``threshold``."""
    hits = counts[queries]
    who = np.flatnonzero(hits)
    if not who.size:
        return
    per = hits[who]
    if per.max() == 1:  # the usual case: at most one hash per band value
        i, j = who, order[starts[queries[who]]].astype(np.int64)
    else:
        i = np.repeat(who, per)
        first = np.repeat(starts[queries[who]].astype(np.int64), per)
        offset = np.arange(i.size) - np.repeat(np.cumsum(per) - per, per)
        j = order[first + offset].astype(np.int64)
    keep = i < j
    i, j = i[keep], j[keep]
    close = np.bitwise_count(hashes[i] ^ hashes[j]) <= threshold
    if close.any():
        found_i.append(i[close])
        found_j.append(j[close])
