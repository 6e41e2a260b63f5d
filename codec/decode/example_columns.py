"""Decode many serialized ``tf.train.Example`` records at once into numpy columns.

The statistics pass reads every value of every feature; through protobuf's
Python wrappers each feature costs a few microseconds. This decoder walks one
nesting level of a whole batch at a time with numpy (parallel cursors,
vectorised varints), so the per-record cost is a few array operations shared
by thousands of records.

It handles only the canonical layout that TensorFlow, protobuf and this
project write (see :func:`decode_examples`); for any other record ``ok`` is
False and the caller decodes that record with ``codec.decode.example_proto.Example``. For an
``ok`` record the columns hold exactly what ``Example.FromString`` gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ExampleColumns", "decode_examples", "KIND_NONE", "KIND_BYTES", "KIND_FLOAT", "KIND_INT64"]

KIND_NONE, KIND_BYTES, KIND_FLOAT, KIND_INT64 = 0, 1, 2, 3

_TAG_1 = 0x0A  # field 1, length-delimited
_TAG_2 = 0x12  # field 2, length-delimited
_TAG_3 = 0x1A  # field 3, length-delimited
_MAX_LENGTH = 2**31 - 1  # upb refuses a length of INT32_MAX or more
_HASHED_KEY_WORDS = 16  # keys up to 128 bytes are grouped by hash
_SCALAR_OWNERS = 16  # below this many cursors a Python loop beats a numpy step
_SCALAR_FIELDS = 16384  # fields walked that way per call, at most
_NUMPY_STEPS = 4096  # numpy steps through a sequence; past them only steps this wide go on:
_WIDE_STEP = 1024
_MIX = np.uint64(0x9E3779B97F4A7C15)
_BYTE_MASKS = np.array([(1 << 8 * k) - 1 for k in range(9)], dtype=np.uint64)  # the low k bytes
_J = np.arange(10, dtype=np.int64)
_SHIFTS = (_J * 7).astype(np.uint64)
_KIND_OF_TAG = np.zeros(256, dtype=np.uint8)
_KIND_OF_TAG[[_TAG_1, _TAG_2, _TAG_3]] = [KIND_BYTES, KIND_FLOAT, KIND_INT64]


@dataclass(eq=False)
class ExampleColumns:
    """The features of a batch of records, one row per map entry.

    ``ok[r]`` says record ``r`` was decoded here; its entries follow in record
    order, then wire order. The values of the entries of one kind are
    concatenated in entry order into that kind's array; ``entry_offset`` is
    where an entry's values start in it (``entry_count`` of them). A bytes
    value is ``buf[bytes_starts[i]:bytes_ends[i]]``.
    """

    ok: np.ndarray  # bool, per record
    keys: list[str]  # distinct feature names; entry_key indexes it
    entry_record: np.ndarray  # int64
    entry_key: np.ndarray  # int32
    entry_kind: np.ndarray  # uint8: KIND_NONE, KIND_BYTES, KIND_FLOAT, KIND_INT64
    entry_count: np.ndarray  # int64
    entry_offset: np.ndarray  # int64, into the value array of the entry's kind
    int_values: np.ndarray  # int64
    float_values: np.ndarray  # float32
    bytes_starts: np.ndarray  # int64
    bytes_ends: np.ndarray  # int64


def _varints(a: np.ndarray, pos: np.ndarray, limit: np.ndarray):
    """One varint at each ``pos`` that must end before ``limit``: (value uint64, next pos, ok).

    Non-minimal encodings decode like upb decodes them; more than ten bytes,
    or bits past the 64th, are refused.
    """
    top = a.size - 1
    first = a[np.minimum(pos, top)]
    ok = pos < limit
    value = (first & 0x7F).astype(np.uint64)
    nxt = pos + 1
    long = np.flatnonzero(ok & (first >= 0x80))
    if long.size:
        p = pos[long]
        window = a[np.minimum(p[:, None] + _J, top)]
        terminator = (window < 0x80) & ((limit[long] - p)[:, None] > _J)
        ends = terminator.any(axis=1)
        size = terminator.argmax(axis=1) + 1
        parts = (window & 0x7F).astype(np.uint64) << _SHIFTS
        parts[_J[None, :] >= size[:, None]] = 0
        value[long] = np.bitwise_or.reduce(parts, axis=1)
        nxt[long] = p + size
        ok[long] = ends & ~((size == 10) & (window[:, 9] > 1))
    return value, nxt, ok


def _field(a: np.ndarray, pos: np.ndarray, limit: np.ndarray, tag: int | None):
    """A length-delimited field at each ``pos`` inside ``limit``: (tag, body start, body end, ok).

    With ``tag`` given, any other tag byte is refused; a multi-byte tag always is.
    """
    ok = pos < limit
    found = a[np.minimum(pos, a.size - 1)]
    if tag is not None:
        ok &= found == tag
    length, body, sized = _varints(a, pos + 1, limit)
    room = np.maximum(limit - body, 0).astype(np.uint64)
    ok &= sized & (length <= room) & (length < _MAX_LENGTH)
    end = body + np.where(ok, length, 0).astype(np.int64)
    return found, body, end, ok


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]..ends[i]-1`` for every i, concatenated."""
    sizes = ends - starts
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    before = np.cumsum(sizes) - sizes
    return np.repeat(starts - before, sizes) + np.arange(total, dtype=np.int64)


def _sequence(data: bytes, a: np.ndarray, starts: np.ndarray, ends: np.ndarray, bad: np.ndarray):
    """Step through tag-0x0A fields filling ``starts[i]..ends[i]`` for every i, all i at once.

    Returns (owner i, body start, body end) of each field, ordered by owner then
    position. An owner whose bytes are not such a sequence is set in ``bad``
    (indexed by owner) and its fields may be missing. Once few owners are
    left, their long sequences are walked one field at a time, up to a budget.
    Owners past the budget, or still many after thousands of numpy steps
    that each found few fields, are set in ``bad`` too: upb is quicker there.
    """
    owners, bodies, body_ends, steps = [], [], [], []  # steps: the field's place in its owner's sequence
    cursor = starts.copy()
    active = np.flatnonzero(cursor < ends)
    step = 0
    while active.size > _SCALAR_OWNERS and (step < _NUMPY_STEPS or active.size >= _WIDE_STEP):
        _, body, end, ok = _field(a, cursor[active], ends[active], _TAG_1)
        bad[active[~ok]] = True
        good = active[ok]
        owners.append(good)
        bodies.append(body[ok])
        body_ends.append(end[ok])
        steps.append(np.full(good.size, step, dtype=np.int64))
        step += 1
        cursor[good] = end[ok]
        active = good[cursor[good] < ends[good]]
    if active.size > _SCALAR_OWNERS:  # long and narrow: too many steps for too few fields each
        bad[active] = True
        active = active[:0]
    budget = _SCALAR_FIELDS
    for i, pos, end in zip(active.tolist(), cursor[active].tolist(), ends[active].tolist()):
        fields = _walk(data, pos, end, budget)
        if fields is None:
            bad[i] = True
            continue
        budget -= len(fields[0])
        owners.append(np.full(len(fields[0]), i, dtype=np.int64))
        bodies.append(np.array(fields[0], dtype=np.int64))
        body_ends.append(np.array(fields[1], dtype=np.int64))
        steps.append(np.arange(step, step + len(fields[0]), dtype=np.int64))
    if not owners:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    owner = np.concatenate(owners)
    sizes = np.bincount(owner, minlength=starts.size)
    place = (np.cumsum(sizes) - sizes)[owner] + np.concatenate(steps)
    out = np.empty((3, owner.size), dtype=np.int64)
    out[0, place] = owner
    out[1, place] = np.concatenate(bodies)
    out[2, place] = np.concatenate(body_ends)
    return out[0], out[1], out[2]


def _walk(data: bytes, pos: int, end: int, budget: int) -> tuple[list[int], list[int]] | None:
    """The (body starts, body ends) of the tag-0x0A fields filling ``data[pos:end]``.

    None when the bytes are not such a sequence, or it has more than ``budget`` fields.
    """
    bodies: list[int] = []
    ends: list[int] = []
    while pos < end:
        if data[pos] != _TAG_1 or len(bodies) >= budget:
            return None
        pos += 1
        length = shift = 0
        while True:
            if pos >= end or shift > 63:
                return None
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        if length > end - pos or length >= _MAX_LENGTH:
            return None
        bodies.append(pos)
        pos += length
        ends.append(pos)
    return bodies, ends


def _key_ids(data: bytes, a: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """(distinct keys as str, id per key slice, ids whose bytes are not valid UTF-8).

    Short keys are grouped by a hash of their bytes and every group is then
    compared byte for byte with one member; long keys, or a hash collision,
    go through a dict of the key slices.
    """
    sizes = ends - starts
    words = -(-int(sizes.max(initial=0)) // 8)
    if 0 < words <= _HASHED_KEY_WORDS:
        source = a
        if int(starts.max()) + 8 * words > a.size:
            source = np.concatenate((a, np.zeros(8 * words, dtype=np.uint8)))
        # every 8-byte window of the buffer as a little-endian word: one gather per 8 key bytes
        windows = np.ndarray((source.size - 7,), dtype="<u8", buffer=source, strides=(1,))
        grid = np.empty((words, sizes.size), dtype=np.uint64)
        mixed = sizes.astype(np.uint64) * _MIX
        for j in range(words):
            at = np.minimum(starts + 8 * j, windows.size - 1)  # a refused entry's key may sit at the end
            grid[j] = windows[at] & _BYTE_MASKS[np.clip(sizes - 8 * j, 0, 8)]
            mixed = (mixed ^ grid[j]) * _MIX
        mixed ^= mixed >> np.uint64(29)
        distinct = np.unique(mixed[:256])  # usually all of them; searching is cheaper than sorting
        entry_key = np.searchsorted(distinct, mixed)
        missing = distinct[np.minimum(entry_key, distinct.size - 1)] != mixed
        if missing.any():
            distinct = np.union1d(distinct, mixed[missing])
            entry_key = np.searchsorted(distinct, mixed)
        first = np.empty(distinct.size, dtype=np.int64)
        first[entry_key] = np.arange(entry_key.size)  # any member of each group
        leader = first[entry_key]
        if (grid == grid[:, leader]).all() and (sizes == sizes[leader]).all():
            raw = [data[s:e] for s, e in zip(starts[first].tolist(), ends[first].tolist())]
            keys, invalid = _decoded(raw)
            return keys, entry_key.astype(np.int32), invalid
    slices = list(map(data.__getitem__, map(slice, starts.tolist(), ends.tolist())))
    ids = {key: i for i, key in enumerate(dict.fromkeys(slices))}
    keys, invalid = _decoded(list(ids))
    entry_key = np.fromiter(map(ids.__getitem__, slices), dtype=np.int32, count=len(slices))
    return keys, entry_key, invalid


def _decoded(raw: list[bytes]) -> tuple[list[str], list[int]]:
    """The keys as str ("" where invalid) and the positions of those that are not valid UTF-8."""
    keys, invalid = [], []
    for i, key in enumerate(raw):
        try:
            keys.append(key.decode("utf-8"))
        except UnicodeDecodeError:
            keys.append("")
            invalid.append(i)
    return keys, invalid


def _int64_values(a: np.ndarray, starts: np.ndarray, ends: np.ndarray, bad: np.ndarray):
    """Decode packed varint payloads ``starts[i]..ends[i]``: (values, count per payload).

    ``bad[i]`` is set for a payload that is not a whole number of valid varints.
    """
    count = np.zeros(starts.size, dtype=np.int64)
    filled = ends > starts
    bad |= filled & (a[np.maximum(ends - 1, 0)] >= 0x80)  # a varint cut at the end
    use = np.flatnonzero(filled & ~bad)
    if not use.size:
        return np.zeros(0, dtype=np.int64), count
    s, e = starts[use], ends[use]
    stream = a[_ranges(s, e)]
    last = stream < 0x80
    ends_at = np.flatnonzero(last)
    seen = np.concatenate(([0], np.cumsum(last)))
    sizes = e - s
    edge = np.cumsum(sizes)
    count[use] = seen[edge] - seen[edge - sizes]
    if ends_at.size == stream.size:
        return stream.astype(np.int64), count
    begins = np.empty_like(ends_at)
    begins[0] = 0
    begins[1:] = ends_at[:-1] + 1
    size = ends_at - begins + 1
    width = min(int(size.max()), 10)
    window = stream[np.minimum(begins[:, None] + _J[:width], stream.size - 1)]
    parts = (window & 0x7F).astype(np.uint64) << _SHIFTS[:width]
    parts[_J[None, :width] >= size[:, None]] = 0
    values = np.bitwise_or.reduce(parts, axis=1).view(np.int64)
    wrong = size > 10
    if width == 10:
        wrong |= (size == 10) & (window[:, 9] > 1)
    if wrong.any():
        owner = np.repeat(use, count[use])
        bad[owner[wrong]] = True
    return values, count


def decode_examples(buf: bytes, starts: np.ndarray, ends: np.ndarray) -> ExampleColumns:
    """Decode records ``buf[starts[r]:ends[r]]`` that have the canonical Example layout.

    Canonical: one field 1 spanning the record; in it map entries (tag 0x0A),
    each exactly a UTF-8 key (0x0A) then a value (0x12); a value holds nothing
    or exactly one list (0x0A bytes, 0x12 float, 0x1A int64) spanning it; a
    numeric list holds nothing or one packed field 1 spanning it, a bytes list
    tag-0x0A values spanning it; keys distinct within a record. Every other
    record gets ``ok`` False and contributes no entries, and so does an empty
    record (an Example with no features, which upb decodes just as quickly).
    Varints may be non-minimal; tags must be single bytes.

    A call costs a few hundred microseconds whatever its size, so batches of
    hundreds of records or more pay off. ``buf`` is bytes; other bytes-like
    objects are copied.
    """
    data = buf if isinstance(buf, bytes) else bytes(buf)
    a = np.frombuffer(data, dtype=np.uint8)
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if a.size == 0:
        a = np.zeros(1, dtype=np.uint8)  # every record is empty: nothing below reads it
    sane = (starts >= 0) & (starts <= ends) & (ends <= len(data))
    limit = np.where(sane, ends, starts)

    _, body, end, ok = _field(a, starts, limit, _TAG_1)
    ok &= sane & (end == limit)
    bad = ~ok

    # map entries: key then value, spanning the entry
    record, entry_start, entry_end = _sequence(data, a, body, np.where(ok, end, body), bad)
    _, key_start, key_end, fine = _field(a, entry_start, entry_end, _TAG_1)
    _, value_start, value_end, valued = _field(a, key_end, entry_end, _TAG_2)
    fine &= valued & (value_end == entry_end)

    # the Feature: nothing, or one list spanning it
    kind = np.zeros(record.size, dtype=np.uint8)
    tag, list_start, list_end, listed = _field(a, value_start, value_end, None)
    has = value_end > value_start
    kind[has] = _KIND_OF_TAG[tag[has]]
    fine &= ~has | (listed & (list_end == value_end) & (kind != KIND_NONE))
    kind[~fine] = KIND_NONE

    # a numeric list: nothing, or one packed field spanning it
    numeric = np.flatnonzero(fine & (kind >= KIND_FLOAT) & (list_end > list_start))
    _, pay_start, pay_end, packed = _field(a, list_start[numeric], list_end[numeric], _TAG_1)
    packed &= pay_end == list_end[numeric]
    fine[numeric[~packed]] = False
    payload_start = list_start.copy()  # an empty list: an empty payload
    payload_end = list_start.copy()
    payload_start[numeric] = pay_start
    payload_end[numeric] = pay_end

    count = np.zeros(record.size, dtype=np.int64)
    floats = np.flatnonzero(fine & (kind == KIND_FLOAT))
    float_size = payload_end[floats] - payload_start[floats]
    fine[floats[float_size % 4 != 0]] = False
    floats = floats[float_size % 4 == 0]
    count[floats] = (payload_end[floats] - payload_start[floats]) // 4
    float_values = a[_ranges(payload_start[floats], payload_end[floats])].view("<f4").astype(np.float32, copy=False)

    ints = np.flatnonzero(fine & (kind == KIND_INT64))
    int_bad = np.zeros(ints.size, dtype=bool)
    int_values, count[ints] = _int64_values(a, payload_start[ints], payload_end[ints], int_bad)
    fine[ints[int_bad]] = False

    byte_lists = np.flatnonzero(fine & (kind == KIND_BYTES))
    bytes_bad = np.zeros(byte_lists.size, dtype=bool)
    owner, bytes_starts, bytes_ends = _sequence(data, a, list_start[byte_lists], list_end[byte_lists], bytes_bad)
    count[byte_lists] = np.bincount(owner, minlength=byte_lists.size)
    fine[byte_lists[bytes_bad]] = False

    keys, entry_key, invalid = _key_ids(data, a, key_start, key_end)
    if invalid:
        fine &= ~np.isin(entry_key, invalid)
    pair = record * max(len(keys), 1) + entry_key
    pair.sort()
    bad[pair[1:][pair[1:] == pair[:-1]] // max(len(keys), 1)] = True
    bad[record[~fine]] = True
    ok = ~bad

    keep = ok[record]
    if not keep.all():
        int_values = int_values[np.repeat(keep[ints], count[ints])]
        float_values = float_values[np.repeat(keep[floats], count[floats])]
        kept_bytes = np.repeat(keep[byte_lists], count[byte_lists])
        bytes_starts, bytes_ends = bytes_starts[kept_bytes], bytes_ends[kept_bytes]
        record, entry_key, kind, count = record[keep], entry_key[keep], kind[keep], count[keep]
        used, entry_key = np.unique(entry_key, return_inverse=True)
        keys = [keys[i] for i in used.tolist()]
        entry_key = entry_key.astype(np.int32).reshape(-1)
    offset = np.zeros(record.size, dtype=np.int64)
    for k in (KIND_BYTES, KIND_FLOAT, KIND_INT64):
        of_kind = kind == k
        sizes = count[of_kind]
        offset[of_kind] = np.cumsum(sizes) - sizes
    return ExampleColumns(ok, keys, record, entry_key, kind, count, offset,
                          int_values, float_values, bytes_starts, bytes_ends)
